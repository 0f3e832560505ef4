// Semantics tests of DataCopy / DataCopyPad / Nd2Nz. Expected values come
// from the documented index formulas (ascendc-api.md 3.1-3.4), written out
// independently here.
#include "harness.h"

using namespace AscendC;

namespace {

template <typename T>
std::vector<T> iota_vec(size_t n, float scale = 1.0f, float offset = 0.0f) {
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<float>(i) * scale + offset);
    return v;
}

template <typename T>
GlobalTensor<T> gtensor(const simtest::DevBuf<T>& b) {
    GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b.gm()), b.n);
    return g;
}

// Raw view of a local tensor's storage (test-side inspection only).
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

// Count form: GM -> UB -> GM through a VECIN/VECOUT queue pair.
SIMTEST(dc_count_roundtrip) {
    auto in = iota_vec<float>(256, 0.5f, -3.0f);
    simtest::DevBuf<float> src(in), dst(256);
    simtest::run_ok("dc_count_roundtrip", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> qin;
        TQue<TPosition::VECOUT, 1> qout;
        pipe.InitBuffer(qin, 1, 1024);
        pipe.InitBuffer(qout, 1, 1024);
        auto gs = gtensor(src);
        auto gd = gtensor(dst);
        auto x = qin.AllocTensor<float>();
        DataCopy(x, gs, 256);
        qin.EnQue(x);
        x = qin.DeQue<float>();
        auto y = qout.AllocTensor<float>();
        DataCopy(y, x, 256);  // UB -> UB
        qout.EnQue(y);
        qin.FreeTensor(x);
        y = qout.DeQue<float>();
        DataCopy(gd, y, 256);
        qout.FreeTensor(y);
    });
    auto out = dst.download();
    for (size_t i = 0; i < 256; ++i) CHECK_EQ(out[i], in[i]);
}

// DataCopyParams: blockLen and end-to-start gaps in 32 B blocks on both sides.
SIMTEST(dc_params_gaps) {
    // 3 blocks of 2 x 32 B (16 floats); GM->UB srcGap 1, dstGap 2; UB->GM srcGap 2, dstGap 3.
    const int count = 3, len = 16, blk = 8;
    auto in = iota_vec<float>(count * (len + 1 * blk), 1.0f, 1.0f);
    simtest::DevBuf<float> src(in), dst(count * (len + 3 * blk)), ubdump(count * (len + 2 * blk));
    simtest::run_ok("dc_params_gaps", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        auto ub = buf.Get<float>();
        DataCopy(ub, gtensor(src), DataCopyParams(count, 2, 1, 2));
        simtest::fence<HardEvent::MTE2_MTE3>();
        DataCopy(gtensor(dst), ub, DataCopyParams(count, 2, 2, 3));
        DataCopy(gtensor(ubdump), ub, count * (len + 2 * blk));
    });
    auto out = dst.download();
    auto ubv = ubdump.download();
    for (int i = 0; i < count; ++i) {
        for (int e = 0; e < len; ++e) {
            float expect = in[i * (len + 1 * blk) + e];
            CHECK_EQ(ubv[i * (len + 2 * blk) + e], expect);
            CHECK_EQ(out[i * (len + 3 * blk) + e], expect);
        }
        for (int e = len; e < len + 3 * blk; ++e) CHECK_EQ(out[i * (len + 3 * blk) + e], 0.0f);  // GM gap untouched
    }
}

// UB -> UB with gaps.
SIMTEST(dc_ub_to_ub_gaps) {
    auto in = iota_vec<int32_t>(64, 1.0f, 7.0f);
    simtest::DevBuf<int32_t> src(in), dst(64);
    simtest::run_ok("dc_ub_to_ub_gaps", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a, b;
        pipe.InitBuffer(a, 256);
        pipe.InitBuffer(b, 256);
        auto ua = a.Get<int32_t>();
        auto ubb = b.Get<int32_t>();
        DataCopy(ua, gtensor(src), 64);
        simtest::fence<HardEvent::MTE2_V>();
        DataCopy(ubb, ua, 64);                          // whole copy first
        PipeBarrier<PIPE_V>();
        DataCopy(ubb, ua, DataCopyParams(2, 1, 2, 1));  // blocks 0,3 of a -> blocks 0,2 of b
        simtest::fence<HardEvent::V_MTE3>();
        DataCopy(gtensor(dst), ubb, 64);
    });
    auto out = dst.download();
    for (int e = 0; e < 8; ++e) {
        CHECK_EQ(out[0 * 8 + e], in[0 * 8 + e]);
        CHECK_EQ(out[1 * 8 + e], in[1 * 8 + e]);  // untouched block keeps the first copy
        CHECK_EQ(out[2 * 8 + e], in[3 * 8 + e]);
    }
}

// DataCopyPad GM -> UB: byte lengths, GM gaps in bytes, UB gaps in blocks,
// padding with a value (which also fills the dummy bytes up to 32), and
// without padding the dummy fill repeating the block's first element.
SIMTEST(dc_pad_gm_to_ub) {
    // half: 3 blocks of 10 elements (20 B), 3-element (6 B) GM gaps; left 2 / right 3 pads of 7; UB gap 1 block.
    auto in = iota_vec<half>(3 * 13, 1.0f, 1.0f);
    simtest::DevBuf<half> src(in), dump(3 * 32);
    // float: 2 blocks of 3 elements, no pad -> slot of 8 filled with the block's first element.
    auto inf = iota_vec<float>(8, 1.5f, 2.0f);
    simtest::DevBuf<float> srcf(inf), dumpf(16);
    simtest::run_ok("dc_pad_gm_to_ub", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf, buff;
        pipe.InitBuffer(buf, 3 * 64);
        pipe.InitBuffer(buff, 64);
        auto ub = buf.Get<half>();
        DataCopyPad(ub, gtensor(src), DataCopyExtParams(3, 20, 6, 1, 0),
                    DataCopyPadExtParams<half>(true, 2, 3, static_cast<half>(7.0f)));
        simtest::fence<HardEvent::MTE2_MTE3>();
        DataCopy(gtensor(dump), ub, 3 * 32);
        auto ubf = buff.Get<float>();
        DataCopyPad(ubf, gtensor(srcf), DataCopyParams(2, 12, 4, 0), DataCopyPadParams(false, 0, 0, 0));
        simtest::fence<HardEvent::MTE2_MTE3>();
        DataCopy(gtensor(dumpf), ubf, 16);
    });
    auto d = dump.download();
    for (int i = 0; i < 3; ++i) {
        const half* s = d.data() + i * 32;  // slot 32 B (16 halfs) + 1 gap block
        CHECK_EQ(s[0], (half)7.0f);
        CHECK_EQ(s[1], (half)7.0f);
        for (int e = 0; e < 10; ++e) CHECK_EQ(s[2 + e], in[i * 13 + e]);
        for (int e = 12; e < 15; ++e) CHECK_EQ(s[e], (half)7.0f);
        CHECK_EQ(s[15], (half)7.0f);  // with padding asked, the dummy fill is paddingValue too
    }
    auto f = dumpf.download();
    for (int i = 0; i < 2; ++i) {
        for (int e = 0; e < 3; ++e) CHECK_EQ(f[i * 8 + e], inf[i * 4 + e]);  // GM gap 4 B = 1 float
        for (int e = 3; e < 8; ++e) CHECK_EQ(f[i * 8 + e], inf[i * 4]);
    }
}

// DataCopyPad UB -> GM writes only blockLen bytes per block.
SIMTEST(dc_pad_ub_to_gm) {
    auto in = iota_vec<float>(48, 1.0f, 10.0f);
    std::vector<float> pre(3 * 7, -1.0f);
    simtest::DevBuf<float> src(in), dst(pre);
    simtest::run_ok("dc_pad_ub_to_gm", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 48 * 4);
        auto ub = buf.Get<float>();
        DataCopy(ub, gtensor(src), 48);
        simtest::fence<HardEvent::MTE2_MTE3>();
        // 3 blocks of 5 floats (20 B): UB slot 32 B + 1 gap block, GM gap 8 B.
        DataCopyPad(gtensor(dst), ub, DataCopyExtParams(3, 20, 1, 8, 0));
    });
    auto out = dst.download();
    for (int i = 0; i < 3; ++i) {
        for (int e = 0; e < 5; ++e) CHECK_EQ(out[i * 7 + e], in[i * 16 + e]);
        CHECK_EQ(out[i * 7 + 5], -1.0f);
        CHECK_EQ(out[i * 7 + 6], -1.0f);
    }
}

// SetAtomicAdd<float> makes DataCopy UB -> GM accumulate; SetAtomicNone restores overwrite.
SIMTEST(dc_atomic_add) {
    auto in = iota_vec<float>(64, 0.25f, 1.0f);
    auto pre = iota_vec<float>(128, -2.0f, 100.0f);
    simtest::DevBuf<float> src(in), dst(pre);
    simtest::run_ok("dc_atomic_add", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256);
        auto ub = buf.Get<float>();
        DataCopy(ub, gtensor(src), 64);
        simtest::fence<HardEvent::MTE2_MTE3>();
        SetAtomicAdd<float>();
        DataCopy(gtensor(dst), ub, 64);
        SetAtomicNone();
        DataCopy(gtensor(dst)[64], ub, 64);
    });
    auto out = dst.download();
    for (int i = 0; i < 64; ++i) {
        CHECK_EQ(out[i], pre[i] + in[i]);
        CHECK_EQ(out[64 + i], in[i]);
    }
}

// Nd2Nz GM -> L1 for half (C0 = 16) with two matrices, a wider source row
// pitch, zero padding of the last column block and untouched padding rows.
SIMTEST(dc_nd2nz_half) {
    const int nd = 2, rows = 20, cols = 40, pitch = 48, c0 = 16, rowsPad = 32, cblk = 3;
    const int matStride = rows * pitch, dstMat = cblk * rowsPad * c0;
    auto in = iota_vec<half>(nd * matStride, 1.0f, 1.0f);
    simtest::DevBuf<half> src(in);
    std::vector<half> l1;
    simtest::run_ok("dc_nd2nz_half", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::A1> buf;
        pipe.InitBuffer(buf, nd * dstMat * 2);
        auto t = buf.Get<half>();
        half* raw = t.GetPhyAddr();
        for (int i = 0; i < nd * dstMat; ++i) raw[i] = static_cast<half>(-1.0f);  // sentinel
        DataCopy(t, gtensor(src), Nd2NzParams(nd, rows, cols, matStride, pitch, rowsPad, 1, dstMat));
        l1 = snapshot(t, nd * dstMat);
    });
    for (int i = 0; i < nd; ++i)
        for (int r = 0; r < rowsPad; ++r)
            for (int c = 0; c < cblk * c0; ++c) {
                half got = l1[i * dstMat + (c / c0) * rowsPad * c0 + r * c0 + c % c0];
                if (r >= rows) CHECK_EQ(got, (half)-1.0f);                     // rows past nValue not written
                else if (c >= cols) CHECK_EQ(got, (half)0.0f);                 // last column block zero padded
                else CHECK_EQ(got, in[i * matStride + r * pitch + c]);
            }
}

// Nd2Nz for int8 (C0 = 32) with dstNzNStride 2 (rows interleaved).
SIMTEST(dc_nd2nz_int8) {
    const int rows = 5, cols = 40, c0 = 32, c0Stride = 12, nStride = 2;
    std::vector<int8_t> in(rows * cols);
    for (int i = 0; i < rows * cols; ++i) in[i] = static_cast<int8_t>(i * 7 - 100);
    simtest::DevBuf<int8_t> src(in);
    std::vector<int8_t> l1;
    const int total = 2 * c0Stride * c0;
    simtest::run_ok("dc_nd2nz_int8", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::B1> buf;
        pipe.InitBuffer(buf, total);
        auto t = buf.Get<int8_t>();
        std::memset(t.GetPhyAddr(), 0x55, total);
        DataCopy(t, gtensor(src), Nd2NzParams(1, rows, cols, 0, cols, c0Stride, nStride, 0));
        l1 = snapshot(t, total);
    });
    std::vector<int8_t> expect(total, 0x55);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < 64; ++c)
            expect[(c / c0) * c0Stride * c0 + r * nStride * c0 + c % c0] = c < cols ? in[r * cols + c] : 0;
    for (int i = 0; i < total; ++i) CHECK_EQ(l1[i], expect[i]);
}

// One trace event per DataCopy call: pipe, bursts, GM first byte and span.
SIMTEST(dc_trace_events) {
    simtest::DevBuf<float> src(256), dst(256);
    const ascsim_event* ev = nullptr;
    size_t count = 0;
    uint32_t kind = 0, blk = 0;
    aclrtStream s = private_launch("dc_trace_events", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 2048);
        auto ub = buf.Get<float>();
        DataCopy(ub, gtensor(src)[8], DataCopyParams(3, 2, 1, 0));              // 3 bursts of 64 B, pitch 96 B
        simtest::fence<HardEvent::MTE2_MTE3>();
        DataCopyPad(gtensor(dst)[1], ub, DataCopyExtParams(2, 12, 0, 4, 0));   // 2 x 12 B, pitch 16 B
    });
    CHECK_EQ(ascsim_core_trace(s, 0, 0, &ev, &count, &kind, &blk), 0);
    std::vector<const ascsim_event*> instr;
    for (size_t i = 0; i < count; ++i)
        if (ev[i].kind == ASCSIM_EV_INSTR) instr.push_back(&ev[i]);
    CHECK_EQ(instr.size(), 2u);
    CHECK_EQ(instr[0]->pipe, ASCSIM_PIPE_MTE2);
    CHECK_EQ(instr[0]->repeats, 3u);
    CHECK_EQ(instr[0]->gm_addr, ascsim::trace_address(src.gm()) + 32);
    CHECK_EQ(instr[0]->gm_bytes, 2 * 96ull + 64);
    CHECK_EQ(instr[0]->gm_write, 0);
    CHECK_EQ(instr[1]->pipe, ASCSIM_PIPE_MTE3);
    CHECK_EQ(instr[1]->repeats, 2u);
    CHECK_EQ(instr[1]->gm_addr, ascsim::trace_address(dst.gm()) + 4);
    CHECK_EQ(instr[1]->gm_bytes, 16ull + 12);
    CHECK_EQ(instr[1]->gm_write, 1);
    aclrtDestroyStream(s);
}
