// Semantics tests of the cube pipeline: Nd2Nz -> LoadData -> Mmad -> Fixpipe
// with non-square, padded shapes for every A2 dtype combination. Expected
// results come from a plain triple loop and explicit layout formulas.
#include "harness.h"

using namespace AscendC;

namespace {

template <typename T>
GlobalTensor<T> gt(const simtest::DevBuf<T>& b) {
    GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b.gm()), b.n);
    return g;
}

uint32_t cdiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

template <typename TAcc, typename TIn>
TAcc widen(TIn v) {
    if constexpr (std::is_same_v<TAcc, int32_t>) return static_cast<TAcc>(v);
    else return static_cast<TAcc>(static_cast<float>(v));
}

// C = A (MxK row-major) x B (KxN row-major), accumulated in k order.
template <typename TAcc, typename TIn>
std::vector<TAcc> ref_matmul(const std::vector<TIn>& a, const std::vector<TIn>& b, uint32_t M, uint32_t K,
                             uint32_t N) {
    std::vector<TAcc> c(M * N);
    for (uint32_t m = 0; m < M; ++m)
        for (uint32_t n = 0; n < N; ++n) {
            TAcc acc = 0;
            for (uint32_t k = 0; k < K; ++k) acc += widen<TAcc>(a[m * K + k]) * widen<TAcc>(b[k * N + n]);
            c[m * N + n] = acc;
        }
    return c;
}

template <typename T>
std::vector<T> transpose(const std::vector<T>& b, uint32_t K, uint32_t N) {
    std::vector<T> t(K * N);
    for (uint32_t k = 0; k < K; ++k)
        for (uint32_t n = 0; n < N; ++n) t[n * K + k] = b[k * N + n];
    return t;
}

// Small integers: every product and sum is exact in the accumulator type.
template <typename T>
std::vector<T> pattern(uint32_t n, int mul, int mod, int off) {
    std::vector<T> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<float>(static_cast<int>((i * mul) % mod) - off));
    return v;
}

// Full AIC pipeline. B in GM is KxN row-major (bT = false, LoadData with
// ifTranspose, 16-bit only) or NxK row-major (bT = true, plain LoadData).
// mmads = 2 accumulates the same product twice (cmatrixInitVal = false).
template <typename TIn, typename TAcc>
void cube_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t M, uint32_t K, uint32_t N, bool bT, int mmads) {
    TPipe pipe;
    constexpr uint32_t C0 = 32 / sizeof(TIn);
    const uint32_t M1 = cdiv(M, 16), K1 = cdiv(K, C0), N1 = cdiv(N, 16);
    TQue<TPosition::A1, 1> qa1;
    TQue<TPosition::B1, 1> qb1;
    TQue<TPosition::A2, 1> qa2;
    TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa1, 1, M1 * K1 * 512);
    pipe.InitBuffer(qb1, 1, K1 * N1 * 512);
    pipe.InitBuffer(qa2, 1, M1 * K1 * 512);
    pipe.InitBuffer(qb2, 1, K1 * N1 * 512);
    pipe.InitBuffer(qc, 1, M1 * N1 * 256 * sizeof(TAcc));
    GlobalTensor<TIn> ga, gb;
    GlobalTensor<TAcc> gc;
    ga.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(a), M * K);
    gb.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(b), K * N);
    gc.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(c), M * N);

    auto a1 = qa1.AllocTensor<TIn>();
    DataCopy(a1, ga, Nd2NzParams(1, M, K, 0, K, M1 * 16, 1, 0));
    qa1.EnQue(a1);
    auto b1 = qb1.AllocTensor<TIn>();
    if (bT) DataCopy(b1, gb, Nd2NzParams(1, N, K, 0, K, N1 * 16, 1, 0));
    else DataCopy(b1, gb, Nd2NzParams(1, K, N, 0, N, K1 * 16, 1, 0));
    qb1.EnQue(b1);

    a1 = qa1.DeQue<TIn>();
    auto a2 = qa2.AllocTensor<TIn>();
    for (uint32_t m1 = 0; m1 < M1; ++m1)
        LoadData(a2[m1 * K1 * 16 * C0], a1[m1 * 16 * C0], LoadData2DParams(0, K1, M1, 0, 0, false, 0));
    qa2.EnQue(a2);
    qa1.FreeTensor(a1);

    b1 = qb1.DeQue<TIn>();
    auto b2 = qb2.AllocTensor<TIn>();
    if (bT) {
        LoadData(b2, b1, LoadData2DParams(0, K1 * N1, 1, 0, 0, false, 0));
    } else {
        for (uint32_t k1 = 0; k1 < K1; ++k1)
            LoadData(b2[k1 * N1 * 256], b1[k1 * 256], LoadData2DParams(0, N1, K1, 0, 0, true, 0));
    }
    qb2.EnQue(b2);
    qb1.FreeTensor(b1);

    a2 = qa2.DeQue<TIn>();
    b2 = qb2.DeQue<TIn>();
    auto c1 = qc.AllocTensor<TAcc>();
    Mmad(c1, a2, b2, MmadParams(M, N, K, 0, false, true));
    for (int i = 1; i < mmads; ++i) {
        // Accumulating into L0C: the docs' rule for back-to-back Mmads.
        if ((M / 16) * (N / 16) < 10) PipeBarrier<PIPE_M>();
        Mmad(c1, a2, b2, MmadParams(M, N, K, 0, false, false));
    }
    qc.EnQue(c1);
    qa2.FreeTensor(a2);
    qb2.FreeTensor(b2);
    c1 = qc.DeQue<TAcc>();
    Fixpipe(gc, c1, FixpipeParamsV220(N, M, M1 * 16, N, false));
    qc.FreeTensor(c1);
}

template <typename TIn, typename TAcc>
void run_matmul(const char* name, uint32_t M, uint32_t K, uint32_t N, bool bT, int mmads) {
    auto a = pattern<TIn>(M * K, 7, 11, 5);
    auto b = pattern<TIn>(K * N, 5, 9, 4);
    simtest::DevBuf<TIn> da(a), db(bT ? transpose(b, K, N) : b);
    simtest::DevBuf<TAcc> dc(M * N);
    simtest::run_ok(name, KERNEL_TYPE_AIC_ONLY, 1,
                    [&] { cube_kernel<TIn, TAcc>(da.gm(), db.gm(), dc.gm(), M, K, N, bT, mmads); });
    auto expect = ref_matmul<TAcc>(a, b, M, K, N);
    auto out = dc.download();
    for (uint32_t i = 0; i < M * N; ++i) CHECK_EQ(out[i], expect[i] * static_cast<TAcc>(mmads));
}

template <typename T>
std::vector<T> snapshot(const LocalTensor<T>& t, size_t n) {
    const T* p = t.GetPhyAddr();
    return std::vector<T>(p, p + n);
}

// Runs a kernel on a private stream (its trace is not cleared by other tests).
inline aclrtStream private_launch(const char* name, KernelMetaType type, uint32_t blockDim,
                                  const std::function<void()>& body) {
    simtest::stream();  // device set up on this thread
    aclrtStream s = nullptr;
    aclrtCreateStream(&s);
    ascsim::launch(name, type, blockDim, s, body);
    if (aclrtSynchronizeStream(s) != ACL_SUCCESS) throw simtest::Failure{std::string(name) + ": launch failed"};
    return s;
}

}  // namespace

SIMTEST(cube_half_20x40x24) { run_matmul<half, float>("cube_half_20x40x24", 20, 40, 24, false, 1); }
SIMTEST(cube_half_bt_33x50x17) { run_matmul<half, float>("cube_half_bt_33x50x17", 33, 50, 17, true, 1); }
SIMTEST(cube_bf16_20x40x24) { run_matmul<bfloat16_t, float>("cube_bf16_20x40x24", 20, 40, 24, false, 1); }
SIMTEST(cube_float_20x20x24) { run_matmul<float, float>("cube_float_20x20x24", 20, 20, 24, true, 1); }
SIMTEST(cube_int8_20x72x24) { run_matmul<int8_t, int32_t>("cube_int8_20x72x24", 20, 72, 24, true, 1); }
SIMTEST(cube_accumulate_half) { run_matmul<half, float>("cube_accumulate_half", 20, 40, 24, false, 2); }
SIMTEST(cube_accumulate_int8) { run_matmul<int8_t, int32_t>("cube_accumulate_int8", 17, 40, 30, true, 2); }

// LoadData: start index, start-to-start source stride, end-to-start dst gap,
// and the per-fractal 16x16 transpose.
SIMTEST(cube_loaddata_transpose) {
    std::vector<half> l0b;
    std::vector<half> l1;
    simtest::run_ok("cube_loaddata_transpose", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::B2> b2;
        pipe.InitBuffer(b1, 6 * 512);
        pipe.InitBuffer(b2, 4 * 512);
        auto s = b1.Get<half>();
        auto d = b2.Get<half>();
        half* sp = s.GetPhyAddr();
        for (int i = 0; i < 6 * 256; ++i) sp[i] = static_cast<half>(static_cast<float>(i % 2000));
        std::memset(d.GetPhyAddr(), 0, 4 * 512);
        // fractals 1 and 3 -> positions 0 and 2, transposed.
        LoadData(d, s, LoadData2DParams(1, 2, 2, 0, 1, true, 0));
        l0b = snapshot(d, 4 * 256);
        l1 = snapshot(s, 6 * 256);
    });
    for (int i = 0; i < 2; ++i) {
        const int src = 1 + 2 * i, dst = 2 * i;
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 16; ++c) CHECK_EQ(l0b[dst * 256 + r * 16 + c], l1[src * 256 + c * 16 + r]);
        for (int e = 0; e < 256; ++e) CHECK_EQ(l0b[(dst + 1) * 256 + e], (half)0.0f);  // gap fractal untouched
    }
}

// LoadData without transpose on int8 (16x32 fractals), repeatTimes 0 = NOP.
SIMTEST(cube_loaddata_int8) {
    std::vector<int8_t> l0a, l1;
    simtest::run_ok("cube_loaddata_int8", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::A2> a2;
        pipe.InitBuffer(a1, 4 * 512);
        pipe.InitBuffer(a2, 3 * 512);
        auto s = a1.Get<int8_t>();
        auto d = a2.Get<int8_t>();
        for (int i = 0; i < 4 * 512; ++i) s.GetPhyAddr()[i] = static_cast<int8_t>(i * 13);
        std::memset(d.GetPhyAddr(), 0, 3 * 512);
        LoadData(d, s, LoadData2DParams(3, 3, 0, 0, 0, false, 0));   // srcStride 0: fractal 3 three times
        LoadData(d, s, LoadData2DParams(0, 0, 1, 0, 0, false, 0));   // NOP
        l0a = snapshot(d, 3 * 512);
        l1 = snapshot(s, 4 * 512);
    });
    for (int i = 0; i < 3; ++i)
        for (int e = 0; e < 512; ++e) CHECK_EQ(l0a[i * 512 + e], l1[3 * 512 + e]);
}

// m == 1 (GEMV): L0A holds A as plain ND. Loading A in the Zz layout
// instead gives a wrong result, as on hardware.
SIMTEST(cube_gemv_m1) {
    const uint32_t K = 40, N = 20, K1 = 3, N1 = 2;
    auto a = pattern<half>(64, 3, 7, 3);
    for (uint32_t k = K; k < 64; ++k) a[k] = static_cast<half>(0.0f);
    auto b = pattern<half>(K * N, 5, 9, 4);
    auto bt = transpose(b, K, N);
    simtest::DevBuf<half> da(a), db(bt);
    simtest::DevBuf<float> good(N), bad(N);
    auto kernel = [&](bool nd) {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> c1;
        pipe.InitBuffer(a1, K1 * 512);
        pipe.InitBuffer(b1, K1 * N1 * 512);
        pipe.InitBuffer(a2, K1 * 512);
        pipe.InitBuffer(b2, K1 * N1 * 512);
        pipe.InitBuffer(c1, N1 * 256 * 4);
        auto ta1 = a1.Get<half>();
        for (uint32_t i = 0; i < K1 * 256; ++i) ta1.GetPhyAddr()[i] = static_cast<half>(100.0f);
        if (nd) DataCopy(ta1, gt(da), 64);  // A row as plain ND
        else DataCopy(ta1, gt(da), Nd2NzParams(1, 1, K, 0, K, 16, 1, 0));  // Zz-style (wrong for m == 1)
        auto tb1 = b1.Get<half>();
        DataCopy(tb1, gt(db), Nd2NzParams(1, N, K, 0, K, N1 * 16, 1, 0));
        simtest::fence<HardEvent::MTE2_MTE1>();
        auto ta2 = a2.Get<half>();
        LoadData(ta2, ta1, LoadData2DParams(0, K1, 1, 0, 0, false, 0));
        auto tb2 = b2.Get<half>();
        LoadData(tb2, tb1, LoadData2DParams(0, K1 * N1, 1, 0, 0, false, 0));
        simtest::fence<HardEvent::MTE1_M>();
        auto tc = c1.Get<float>();
        Mmad(tc, ta2, tb2, MmadParams(1, N, K, 0, false, true));
        simtest::fence<HardEvent::M_FIX>();
        Fixpipe(gt(nd ? good : bad), tc, FixpipeParamsV220(N, 1, 16, N, false));
    };
    simtest::run_ok("cube_gemv_m1", KERNEL_TYPE_AIC_ONLY, 1, [&] { kernel(true); });
    simtest::run_ok("cube_gemv_m1_zz", KERNEL_TYPE_AIC_ONLY, 1, [&] { kernel(false); });
    auto expect = ref_matmul<float>(a, b, 1, K, N);
    auto g = good.download();
    auto w = bad.download();
    bool differs = false;
    for (uint32_t n = 0; n < N; ++n) {
        CHECK_EQ(g[n], expect[n]);
        differs |= w[n] != expect[n];
    }
    CHECK(differs);
}

// Fixpipe on its own: L0C filled directly, F322F16 with relu, row pitch > N,
// ndNum = 2 (srcNdStride in 16x16 fractals, dstNdStride in elements).
SIMTEST(cube_fixpipe_f16_relu_nd2) {
    const uint32_t nSize = 20, mSize = 18, srcStride = 32, dstStride = 24, srcNd = 4, dstNd = 500;
    const uint32_t l0cElems = 2 * srcNd * 256 + 256 * 4;
    std::vector<float> l0c(l0cElems);
    for (uint32_t i = 0; i < l0cElems; ++i) l0c[i] = static_cast<float>(i) * 0.37f - 300.0f;
    simtest::DevBuf<half> out(dstNd + mSize * dstStride);
    simtest::run_ok("cube_fixpipe_f16_relu_nd2", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::CO1> c1;
        pipe.InitBuffer(c1, l0cElems * 4);
        auto t = c1.Get<float>();
        std::memcpy(t.GetPhyAddr(), l0c.data(), l0cElems * 4);
        Fixpipe(gt(out), t,
                FixpipeParamsV220(nSize, mSize, srcStride, dstStride, true, QuantMode_t::F322F16, 0, 2, srcNd, dstNd,
                                  0));
    });
    auto o = out.download();
    std::vector<half> expect(o.size(), static_cast<half>(0.0f));
    for (uint32_t j = 0; j < 2; ++j)
        for (uint32_t m = 0; m < mSize; ++m)
            for (uint32_t n = 0; n < nSize; ++n) {
                float v = l0c[j * srcNd * 256 + (n / 16) * srcStride * 16 + m * 16 + n % 16];
                expect[j * dstNd + m * dstStride + n] = static_cast<half>(v < 0 ? 0.0f : v);
            }
    for (size_t i = 0; i < o.size(); ++i) CHECK_EQ(o[i], expect[i]);
}

// Fixpipe with CFG_NZ keeps the Nz layout; dstStride in 32 B blocks.
SIMTEST(cube_fixpipe_nz) {
    const uint32_t nSize = 32, mSize = 20, srcStride = 32, dstStride = 24;
    std::vector<float> l0c(2 * 32 * 16);
    for (size_t i = 0; i < l0c.size(); ++i) l0c[i] = static_cast<float>(i) - 17.5f;
    simtest::DevBuf<half> out(2 * dstStride * 16);
    simtest::run_ok("cube_fixpipe_nz", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::CO1> c1;
        pipe.InitBuffer(c1, l0c.size() * 4);
        auto t = c1.Get<float>();
        std::memcpy(t.GetPhyAddr(), l0c.data(), l0c.size() * 4);
        FixpipeParamsV220 p(nSize, mSize, srcStride, dstStride, false);
        p.quantPre = QuantMode_t::F322F16;
        Fixpipe<half, float, CFG_NZ>(gt(out), t, p);
    });
    auto o = out.download();
    for (uint32_t n1 = 0; n1 < 2; ++n1)
        for (uint32_t m = 0; m < dstStride; ++m)
            for (uint32_t c = 0; c < 16; ++c) {
                half want = m < mSize ? static_cast<half>(l0c[n1 * srcStride * 16 + m * 16 + c]) : static_cast<half>(0.0f);
                CHECK_EQ(o[n1 * dstStride * 16 + m * 16 + c], want);
            }
}

// SetAtomicAdd<float> makes Fixpipe accumulate into GM.
SIMTEST(cube_fixpipe_atomic_add) {
    const uint32_t M = 20, K = 40, N = 24;
    auto a = pattern<half>(M * K, 7, 11, 5);
    auto b = pattern<half>(K * N, 5, 9, 4);
    std::vector<float> pre(M * N);
    for (uint32_t i = 0; i < M * N; ++i) pre[i] = static_cast<float>(i % 13) - 6.0f;
    simtest::DevBuf<half> da(a), db(b);
    simtest::DevBuf<float> dc(pre);
    simtest::run_ok("cube_fixpipe_atomic_add", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        SetAtomicAdd<float>();
        cube_kernel<half, float>(da.gm(), db.gm(), dc.gm(), M, K, N, false, 1);
        SetAtomicNone();
    });
    auto expect = ref_matmul<float>(a, b, M, K, N);
    auto out = dc.download();
    for (uint32_t i = 0; i < M * N; ++i) CHECK_EQ(out[i], pre[i] + expect[i]);
}

// Two cube cores accumulate into the same GM output with atomic Fixpipe.
SIMTEST(cube_fixpipe_atomic_two_cores) {
    const uint32_t M = 20, K = 40, N = 24;
    auto a = pattern<half>(M * K, 7, 11, 5);
    auto b = pattern<half>(K * N, 5, 9, 4);
    std::vector<float> pre(M * N, 1.5f);
    simtest::DevBuf<half> da(a), db(b);
    simtest::DevBuf<float> dc(pre);
    simtest::run_ok("cube_fixpipe_atomic_two_cores", KERNEL_TYPE_AIC_ONLY, 2, [&] {
        SetAtomicAdd<float>();
        cube_kernel<half, float>(da.gm(), db.gm(), dc.gm(), M, K, N, false, 1);
        SetAtomicNone();
    });
    auto expect = ref_matmul<float>(a, b, M, K, N);
    auto out = dc.download();
    for (uint32_t i = 0; i < M * N; ++i) CHECK_EQ(out[i], 1.5f + 2.0f * expect[i]);
}

// One trace event per API call with the documented pipes and counts.
SIMTEST(cube_trace_events) {
    const uint32_t M = 20, K = 40, N = 24;
    simtest::DevBuf<half> da(M * K), db(K * N);
    simtest::DevBuf<float> dc(M * N);
    const ascsim_event* ev = nullptr;
    size_t count = 0;
    uint32_t kind = 0, blk = 0;
    aclrtStream s = private_launch("cube_trace_events", KERNEL_TYPE_AIC_ONLY, 1,
                    [&] { cube_kernel<half, float>(da.gm(), db.gm(), dc.gm(), M, K, N, false, 1); });
    CHECK_EQ(ascsim_core_trace(s, 0, 0, &ev, &count, &kind, &blk), 0);
    int nd2nz = 0, load = 0, load_b = 0, mmad = 0, fix = 0;
    for (size_t i = 0; i < count; ++i) {
        if (ev[i].kind != ASCSIM_EV_INSTR) continue;
        std::string op = ascsim_op_name(ev[i].op);
        if (op == "DataCopy(Nd2Nz)") {
            ++nd2nz;
            CHECK_EQ(ev[i].pipe, ASCSIM_PIPE_MTE2);
            CHECK_EQ(ev[i].gm_addr, ascsim::trace_address(nd2nz == 1 ? da.gm() : db.gm()));
            CHECK_EQ(ev[i].gm_bytes, nd2nz == 1 ? M * K * 2ull : K * N * 2ull);
        } else if (op == "LoadData") {
            ++load;
            CHECK_EQ(ev[i].pipe, ASCSIM_PIPE_MTE1);
            // The cost model charges L1 -> L0B at half the L0A rate: the trace names the target.
            CHECK(ev[i].attr == ASCSIM_ATTR_L0A || ev[i].attr == ASCSIM_ATTR_L0B);
            if (ev[i].attr == ASCSIM_ATTR_L0B) ++load_b;
        } else if (op == "Mmad") {
            ++mmad;
            CHECK_EQ(ev[i].pipe, ASCSIM_PIPE_M);
            CHECK_EQ(ev[i].repeats, 2u * 2u * 3u);  // M1 * N1 * K1
            CHECK_EQ(ev[i].attr, 2);                // half inputs: the cube rate of 2-byte elements
        } else if (op == "Fixpipe") {
            ++fix;
            CHECK_EQ(ev[i].pipe, ASCSIM_PIPE_FIX);
            CHECK_EQ(ev[i].gm_addr, ascsim::trace_address(dc.gm()));
            CHECK_EQ(ev[i].gm_bytes, M * N * 4ull);
            CHECK_EQ(ev[i].gm_write, 1);
        }
    }
    CHECK_EQ(nd2nz, 2);
    CHECK_EQ(load, 2 + 3);  // M1 LoadData for A, K1 for B
    CHECK_EQ(load_b, 3);
    CHECK_EQ(mmad, 1);
    CHECK_EQ(fix, 1);
    aclrtDestroyStream(s);
}

// LoadData straight from GM: fractal walk with srcStride and dstGap, and the
// backwards walk of addrMode 1.
SIMTEST(cube_loaddata_from_gm) {
    std::vector<half> in(6 * 256);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<half>(static_cast<float>(i % 1500) - 700.0f);
    simtest::DevBuf<half> src(in);
    std::vector<half> l0a, l1;
    simtest::run_ok("cube_loaddata_from_gm", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::A1> a1;
        pipe.InitBuffer(a2, 6 * 512);
        pipe.InitBuffer(a1, 3 * 512);
        auto d = a2.Get<half>();
        std::memset(d.GetPhyAddr(), 0, 6 * 512);
        LoadData(d, gt(src), LoadData2DParams(1, 3, 2, 0, 1, false, 0));  // fractals 1,3,5 -> 0,2,4
        auto l = a1.Get<half>();
        LoadData(l, gt(src), LoadData2DParams(5, 3, 1, 0, 0, false, 1));  // fractals 5,4,3 -> 0,1,2
        l0a = snapshot(d, 6 * 256);
        l1 = snapshot(l, 3 * 256);
    });
    for (int i = 0; i < 3; ++i)
        for (int e = 0; e < 256; ++e) {
            CHECK_EQ(l0a[(2 * i) * 256 + e], in[(1 + 2 * i) * 256 + e]);
            CHECK_EQ(l0a[(2 * i + 1) * 256 + e], (half)0.0f);
            CHECK_EQ(l1[i * 256 + e], in[(5 - i) * 256 + e]);
        }
}

// int8 B given as KxN row-major: Nd2Nz to L1 (32-wide column blocks), then
// LoadDataWithTranspose turns each 32x32 square into two Zn fractals. N = 40
// leaves an odd N1 = 3: the spill of each k1 row into the next one is
// overwritten by the following call, as on hardware.
SIMTEST(cube_int8_transpose_load) {
    const uint32_t M = 20, K = 64, N = 40, M1 = 2, K1 = 2, N1 = 3, J = 2;
    auto a = pattern<int8_t>(M * K, 13, 23, 11);
    auto b = pattern<int8_t>(K * N, 7, 19, 9);
    simtest::DevBuf<int8_t> da(a), db(b);
    simtest::DevBuf<int32_t> dc(M * N);
    simtest::run_ok("cube_int8_transpose_load", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> c1;
        pipe.InitBuffer(a1, M1 * K1 * 512);
        pipe.InitBuffer(b1, J * K1 * 1024);
        pipe.InitBuffer(a2, M1 * K1 * 512);
        pipe.InitBuffer(b2, (K1 * N1 + 1) * 512);
        pipe.InitBuffer(c1, M1 * N1 * 1024);
        auto ta1 = a1.Get<int8_t>();
        auto tb1 = b1.Get<int8_t>();
        auto ta2 = a2.Get<int8_t>();
        auto tb2 = b2.Get<int8_t>();
        DataCopy(ta1, gt(da), Nd2NzParams(1, M, K, 0, K, M1 * 16, 1, 0));
        DataCopy(tb1, gt(db), Nd2NzParams(1, K, N, 0, N, K1 * 32, 1, 0));
        simtest::fence<HardEvent::MTE2_MTE1>();
        for (uint32_t m1 = 0; m1 < M1; ++m1)
            LoadData(ta2[m1 * K1 * 512], ta1[m1 * 512], LoadData2DParams(0, K1, M1, 0, 0, false, 0));
        for (uint32_t k1 = 0; k1 < K1; ++k1) {
            // The spill of row k1 - 1 is overwritten: same-pipe writes to the
            // same bytes need a barrier to land in order.
            if (k1 > 0) PipeBarrier<PIPE_MTE1>();
            LoadDataWithTranspose(tb2[k1 * N1 * 512], tb1, LoadData2dTransposeParams(k1, J, K1, 1, 0));
        }
        simtest::fence<HardEvent::MTE1_M>();
        auto tc = c1.Get<int32_t>();
        Mmad(tc, ta2, tb2, MmadParams(M, N, K, 0, false, true));
        simtest::fence<HardEvent::M_FIX>();
        Fixpipe(gt(dc), tc, FixpipeParamsV220(N, M, M1 * 16, N, false));
    });
    auto expect = ref_matmul<int32_t>(a, b, M, K, N);
    auto out = dc.download();
    for (uint32_t i = 0; i < M * N; ++i) CHECK_EQ(out[i], expect[i]);
}

// Bias: GM -> L1 (C1) -> BiasTable (C2, 64 B units), then the bias form of
// Mmad adds bias[n] to every row.
SIMTEST(cube_mmad_bias) {
    const uint32_t M = 20, K = 40, N = 32, M1 = 2, K1 = 3, N1 = 2;
    auto a = pattern<half>(M * K, 7, 11, 5);
    auto b = pattern<half>(K * N, 5, 9, 4);
    std::vector<float> bias(N);
    for (uint32_t n = 0; n < N; ++n) bias[n] = static_cast<float>(n) * 0.5f - 3.0f;
    simtest::DevBuf<half> da(a), db(transpose(b, K, N));
    simtest::DevBuf<float> dbias(bias), dc(M * N);
    simtest::run_ok("cube_mmad_bias", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B1> b1;
        TBuf<TPosition::C1> c1buf;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::C2> bt;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(a1, M1 * K1 * 512);
        pipe.InitBuffer(b1, K1 * N1 * 512);
        pipe.InitBuffer(c1buf, N * 4);
        pipe.InitBuffer(a2, M1 * K1 * 512);
        pipe.InitBuffer(b2, K1 * N1 * 512);
        pipe.InitBuffer(bt, N * 4);
        pipe.InitBuffer(co1, M1 * N1 * 1024);
        auto ta1 = a1.Get<half>();
        auto tb1 = b1.Get<half>();
        auto ta2 = a2.Get<half>();
        auto tb2 = b2.Get<half>();
        DataCopy(ta1, gt(da), Nd2NzParams(1, M, K, 0, K, M1 * 16, 1, 0));
        DataCopy(tb1, gt(db), Nd2NzParams(1, N, K, 0, K, N1 * 16, 1, 0));
        auto l1bias = c1buf.Get<float>();
        DataCopy(l1bias, gt(dbias), N);
        simtest::fence<HardEvent::MTE2_MTE1>();
        for (uint32_t m1 = 0; m1 < M1; ++m1)
            LoadData(ta2[m1 * K1 * 256], ta1[m1 * 256], LoadData2DParams(0, K1, M1, 0, 0, false, 0));
        LoadData(tb2, tb1, LoadData2DParams(0, K1 * N1, 1, 0, 0, false, 0));
        auto tbias = bt.Get<float>();
        DataCopy(tbias, l1bias, DataCopyParams(1, N * 4 / 64, 0, 0));
        simtest::fence<HardEvent::MTE1_M>();
        auto tc = co1.Get<float>();
        Mmad(tc, ta2, tb2, tbias, MmadParams(M, N, K, 0, false, true));
        simtest::fence<HardEvent::M_FIX>();
        Fixpipe(gt(dc), tc, FixpipeParamsV220(N, M, M1 * 16, N, false));
    });
    auto expect = ref_matmul<float>(a, b, M, K, N);
    auto out = dc.download();
    for (uint32_t m = 0; m < M; ++m)
        for (uint32_t n = 0; n < N; ++n) CHECK_EQ(out[m * N + n], bias[n] + expect[m * N + n]);
}

// InitConstValue: blocks of 32 B in L1 and 512 B in L0B, gaps end-to-start.
SIMTEST(cube_init_const_value) {
    std::vector<float> l1;
    std::vector<half> l0b;
    simtest::run_ok("cube_init_const_value", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::B2> b2;
        pipe.InitBuffer(a1, 12 * 32);
        pipe.InitBuffer(b2, 5 * 512);
        auto t1 = a1.Get<float>();
        auto t2 = b2.Get<half>();
        std::memset(t1.GetPhyAddr(), 0, 12 * 32);
        std::memset(t2.GetPhyAddr(), 0, 5 * 512);
        InitConstValue(t1, InitConstValueParams<float>(3, 2, 2, 1.25f));  // blocks 0-1, 4-5, 8-9
        InitConstValue(t2, InitConstValueParams<half>(2, 1, 3, static_cast<half>(-2.0f)));  // fractals 0, 4
        l1 = snapshot(t1, 12 * 8);
        l0b = snapshot(t2, 5 * 256);
    });
    for (int b = 0; b < 12; ++b)
        for (int e = 0; e < 8; ++e) CHECK_EQ(l1[b * 8 + e], (b % 4) < 2 ? 1.25f : 0.0f);
    for (int f = 0; f < 5; ++f)
        for (int e = 0; e < 256; ++e) CHECK_EQ(l0b[f * 256 + e], (half)(f % 4 == 0 ? -2.0f : 0.0f));
}
