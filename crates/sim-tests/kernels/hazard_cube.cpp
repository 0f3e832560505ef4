// Hazard suite, cube core: the chain DataCopy(Nd2Nz) -> LoadData -> Mmad ->
// Fixpipe with one hop left out (MTE2->MTE1, MTE1->M, M->FIX), buffer reuse
// across two tiles (L0A reloaded while Mmad reads it: M->MTE1; L0C
// rewritten while Fixpipe reads it: FIX->M), accumulating Mmads
// (PipeBarrier<PIPE_M> below (m/16)*(n/16) = 10), and GM handed between an
// AIV and its AIC by CrossCore flags.
#include "hazard_util.h"

using namespace AscendC;
using hz::Edge;

namespace {

constexpr uint32_t kT = 256;  // elements of a 16x16 tile

// Small integers: every product and sum is exact in float.
std::vector<half> ints(uint32_t n, uint32_t mul, uint32_t mod, int off) {
    std::vector<half> v(n);
    for (uint32_t i = 0; i < n; ++i)
        v[i] = static_cast<half>(static_cast<float>(static_cast<int>(i * mul % mod) - off));
    return v;
}

// The TPipe of a cube kernel with one TBuf per cube memory: A (and B)
// `a_rows` (`b_rows`) rows of 16 half in L1 and in L0, `c_elems` floats in
// L0C, each as one tensor.
struct CubeBufs {
    TPipe pipe;
    TBuf<TPosition::A1> ba1;
    TBuf<TPosition::B1> bb1;
    TBuf<TPosition::A2> ba2;
    TBuf<TPosition::B2> bb2;
    TBuf<TPosition::CO1> bc;
    LocalTensor<half> a1, b1, a2, b2;
    LocalTensor<float> c;
    CubeBufs(uint32_t a_rows, uint32_t b_rows, uint32_t c_elems) {
        pipe.InitBuffer(ba1, a_rows * 32);
        pipe.InitBuffer(bb1, b_rows * 32);
        pipe.InitBuffer(ba2, a_rows * 32);
        pipe.InitBuffer(bb2, b_rows * 32);
        pipe.InitBuffer(bc, c_elems * 4);
        a1 = ba1.Get<half>();
        b1 = bb1.Get<half>();
        a2 = ba2.Get<half>();
        b2 = bb2.Get<half>();
        c = bc.Get<float>();
    }
};

// Host side of C_t = A_t x B for `tiles` row blocks A_t (m x 16, row-major)
// and B given as its transpose bt (n x 16, row-major).
struct CubeIo {
    uint32_t m, n, tiles;
    std::vector<half> a, bt;
    simtest::DevBuf<half> ga, gb;
    simtest::DevBuf<float> gc;
    CubeIo(uint32_t m_, uint32_t n_, uint32_t tiles_ = 1)
        : m(m_), n(n_), tiles(tiles_), a(ints(tiles_ * m_ * 16, 7, 11, 5)), bt(ints(n_ * 16, 5, 9, 4)), ga(a),
          gb(bt), gc(tiles_ * m_ * n_) {}
    // Throws unless C holds `times` x the product + `plus`.
    void expect(float times = 1.0f, float plus = 0.0f) const {
        auto c = gc.download();
        for (uint32_t t = 0; t < tiles; ++t)
            for (uint32_t i = 0; i < m; ++i)
                for (uint32_t j = 0; j < n; ++j) {
                    float s = 0;
                    for (uint32_t k = 0; k < 16; ++k)
                        s += static_cast<float>(a[(t * m + i) * 16 + k]) * static_cast<float>(bt[j * 16 + k]);
                    CHECK_EQ(c[(t * m + i) * n + j], s * times + plus);
                }
    }
};

// The edges of the chain; reuse edges apply from the second tile on.
struct Chain {
    Edge mte2_mte1 = Edge::Direct, mte1_m = Edge::Direct, m_fix = Edge::Direct;
    bool share_l0a = false, share_l0c = false;  // tiles reuse one L0A / L0C buffer
    Edge m_mte1 = Edge::Direct, fix_m = Edge::Direct;
    // PipeBarrier<PIPE_MTE1> / <PIPE_M> before the reuse, ordering it after
    // the earlier write of its own pipe only.
    Edge same_pipe = Edge::Missing;
};

// 16x16 tiles on TBufs: A tiles and B to L1 (MTE2, Nd2Nz), B and each A
// tile to L0 (MTE1), Mmad (M), Fixpipe to GM (FIX).
void chain(const CubeIo& io, const Chain& c) {
    const uint32_t tiles = io.tiles;
    CubeBufs k(tiles * 16, 16, tiles * kT);
    auto ga = simtest::global(io.ga);
    auto gc = simtest::global(io.gc);
    const Nd2NzParams nz(1, 16, 16, 0, 16, 16, 1, 0);
    const LoadData2DParams one(0, 1, 1, 0, 0, false, 0);
    for (uint32_t t = 0; t < tiles; ++t) DataCopy(k.a1[t * kT], ga[t * kT], nz);
    DataCopy(k.b1, simtest::global(io.gb), nz);
    hz::edge<HardEvent::MTE2_MTE1>(c.mte2_mte1);
    LoadData(k.b2, k.b1, one);
    for (uint32_t t = 0; t < tiles; ++t) {
        auto l0a = k.a2[c.share_l0a ? 0 : t * kT];
        auto l0c = k.c[c.share_l0c ? 0 : t * kT];
        if (t > 0 && c.share_l0a) {
            hz::edge<HardEvent::M_MTE1>(c.m_mte1);
            hz::barrier<PIPE_MTE1>(c.same_pipe);
        }
        LoadData(l0a, k.a1[t * kT], one);
        hz::edge<HardEvent::MTE1_M>(c.mte1_m);
        if (t > 0 && c.share_l0c) {
            hz::edge<HardEvent::FIX_M>(c.fix_m);
            hz::barrier<PIPE_M>(c.same_pipe);
        }
        Mmad(l0c, l0a, k.b2, MmadParams(16, 16, 16, 0, false, true));
        hz::edge<HardEvent::M_FIX>(c.m_fix);
        Fixpipe(gc[t * kT], l0c, FixpipeParamsV220(16, 16, 16, 16, false));
    }
}

// The same with queues: one buffer each, the hand-offs and the reuse of
// every buffer ordered by EnQue/DeQue and FreeTensor/AllocTensor.
void chain_queued(const CubeIo& io) {
    TPipe pipe;
    TQue<TPosition::A1, 1> qa1;
    TQue<TPosition::B1, 1> qb1;
    TQue<TPosition::A2, 1> qa2;
    TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc;
    pipe.InitBuffer(qa1, 1, kT * 2);
    pipe.InitBuffer(qb1, 1, kT * 2);
    pipe.InitBuffer(qa2, 1, kT * 2);
    pipe.InitBuffer(qb2, 1, kT * 2);
    pipe.InitBuffer(qc, 1, kT * 4);
    auto ga = simtest::global(io.ga);
    auto gc = simtest::global(io.gc);
    const Nd2NzParams nz(1, 16, 16, 0, 16, 16, 1, 0);
    const LoadData2DParams one(0, 1, 1, 0, 0, false, 0);
    auto b1 = qb1.AllocTensor<half>();
    DataCopy(b1, simtest::global(io.gb), nz);
    qb1.EnQue(b1);
    b1 = qb1.DeQue<half>();
    auto b2 = qb2.AllocTensor<half>();
    LoadData(b2, b1, one);
    qb2.EnQue(b2);
    qb1.FreeTensor(b1);
    b2 = qb2.DeQue<half>();
    for (uint32_t t = 0; t < io.tiles; ++t) {
        auto a1 = qa1.AllocTensor<half>();
        DataCopy(a1, ga[t * kT], nz);
        qa1.EnQue(a1);
        a1 = qa1.DeQue<half>();
        auto a2 = qa2.AllocTensor<half>();
        LoadData(a2, a1, one);
        qa2.EnQue(a2);
        qa1.FreeTensor(a1);
        a2 = qa2.DeQue<half>();
        auto c1 = qc.AllocTensor<float>();
        Mmad(c1, a2, b2, MmadParams(16, 16, 16, 0, false, true));
        qc.EnQue(c1);
        qa2.FreeTensor(a2);
        c1 = qc.DeQue<float>();
        Fixpipe(gc[t * kT], c1, FixpipeParamsV220(16, 16, 16, 16, false));
        qc.FreeTensor(c1);
    }
    qb2.FreeTensor(b2);
}

// C = 2 A B for A m x 16, B 16 x n: two Mmads accumulating into one L0C.
void mmad_twice(const CubeIo& io, Edge m_m) {
    const uint32_t m1 = io.m / 16, n1 = io.n / 16;
    CubeBufs k(io.m, io.n, io.m * io.n);
    DataCopy(k.a1, simtest::global(io.ga), Nd2NzParams(1, io.m, 16, 0, 16, io.m, 1, 0));
    DataCopy(k.b1, simtest::global(io.gb), Nd2NzParams(1, io.n, 16, 0, 16, io.n, 1, 0));
    simtest::fence<HardEvent::MTE2_MTE1>();
    LoadData(k.a2, k.a1, LoadData2DParams(0, m1, 1, 0, 0, false, 0));
    LoadData(k.b2, k.b1, LoadData2DParams(0, n1, 1, 0, 0, false, 0));
    simtest::fence<HardEvent::MTE1_M>();
    auto c = k.c;
    Mmad(c, k.a2, k.b2, MmadParams(io.m, io.n, 16, 0, false, true));
    hz::barrier<PIPE_M>(m_m);
    Mmad(c, k.a2, k.b2, MmadParams(io.m, io.n, 16, 0, false, false));
    simtest::fence<HardEvent::M_FIX>();
    Fixpipe(simtest::global(io.gc), c, FixpipeParamsV220(io.n, io.m, io.m, io.n, false));
}

void aic_ok(const char* name, const std::function<void()>& body) {
    simtest::run_ok(name, KERNEL_TYPE_AIC_ONLY, 1, body);
}
void aic_race(const char* name, const hz::Race& r, const std::function<void()>& body) {
    simtest::expect_violation("in-core race", hz::race("AIC 0", r), name, KERNEL_TYPE_AIC_ONLY, 1, body);
}

void chain_ok(const char* name, const Chain& c, uint32_t tiles = 1) {
    CubeIo io(16, 16, tiles);
    aic_ok(name, [&] { chain(io, c); });
    io.expect();
}
void chain_race(const char* name, const Chain& c, const hz::Race& r, uint32_t tiles = 1) {
    CubeIo io(16, 16, tiles);
    aic_race(name, r, [&] { chain(io, c); });
}

Chain missing_hop(Edge Chain::*hop) {
    Chain c;
    c.*hop = Edge::Missing;
    return c;
}
Chain all_edges(Edge e) {
    Chain c;
    c.mte2_mte1 = c.mte1_m = c.m_fix = c.m_mte1 = c.fix_m = e;
    c.share_l0a = c.share_l0c = true;
    return c;
}
// Two tiles through one L0A (M->MTE1 before the reload) or one L0C (FIX->M
// before the rewrite).
enum class Reuse { L0A, L0C };
Chain reuse(Reuse r, Edge e, Edge same_pipe) {
    Chain c;
    (r == Reuse::L0A ? c.share_l0a : c.share_l0c) = true;
    (r == Reuse::L0A ? c.m_mte1 : c.fix_m) = e;
    c.same_pipe = same_pipe;
    return c;
}

void mmad_twice_ok(const char* name, uint32_t m, uint32_t n, Edge m_m) {
    CubeIo io(m, n);
    aic_ok(name, [&] { mmad_twice(io, m_m); });
    io.expect(2.0f);
}

// MIX_AIC_1_1, one AI core. The AIV copies X (16x16 half, `src`) to A in
// GM (MTE3) and signals the AIC with a CrossCoreSetFlag on `pipe` (it must
// be MTE3 to cover the write); the AIC waits, runs the chain on A (its MTE2
// reads A), reads A[5] (S) and signals back on PIPE_FIX; the AIV waits, and
// its MTE2 and S read C and its MTE3 rewrites C as C + 1. `seen` gets the
// two scalar reads: A[5] on the AIC, C[7] on the AIV.
void handoff(const simtest::DevBuf<half>& src, const CubeIo& io, pipe_t pipe, float seen[2]) {
    auto ga = simtest::global(io.ga);
    auto gc = simtest::global(io.gc);
    constexpr auto kLine = CacheLine::SINGLE_CACHE_LINE;
    constexpr auto kOut = DcciDst::CACHELINE_OUT;
    if ASCEND_IS_AIC {
        CrossCoreWaitFlag(1);
        chain(io, Chain{});
        DataCacheCleanAndInvalid<half, kLine, kOut>(ga[5]);
        seen[0] = static_cast<float>(ga.GetValue(5));
        CrossCoreSetFlag<2, PIPE_FIX>(2);
        return;
    }
    vt::Ub ub;
    auto x = ub.at<half>(0, kT);
    auto c = ub.at<float>(1024, kT), c1 = ub.at<float>(2048, kT);
    DataCopy(x, simtest::global(src), kT);
    simtest::fence<HardEvent::MTE2_MTE3>();
    DataCopy(ga, x, kT);
    if (pipe == PIPE_MTE3) CrossCoreSetFlag<2, PIPE_MTE3>(1);
    else CrossCoreSetFlag<2, PIPE_MTE2>(1);
    CrossCoreWaitFlag(2);
    DataCopy(c, gc, kT);
    DataCacheCleanAndInvalid<float, kLine, kOut>(gc[7]);
    seen[1] = gc.GetValue(7);
    simtest::fence<HardEvent::MTE2_V>();
    Adds(c1, c, 1.0f, kT);
    simtest::fence<HardEvent::V_MTE3>();
    simtest::fence<HardEvent::S_MTE3>();  // the scalar read of C is done before C is rewritten
    DataCopy(gc, c1, kT);
}

// The host side of handoff: X in `src`, A zeroed until the AIV writes it.
struct Handoff {
    CubeIo io{16, 16};
    simtest::DevBuf<half> src{io.a};
    float seen[2] = {0, 0};
    Handoff() { io.ga.upload(std::vector<half>(io.a.size())); }
    std::function<void()> body(pipe_t pipe) {
        return [this, pipe] { handoff(src, io, pipe, seen); };
    }
};

}  // namespace

// ---------------------------------------------------------------- one hop missing

SIMTEST(hz_cube_mte2_to_mte1_missing) {
    chain_race("hz_cube_mte2_to_mte1_missing", missing_hop(&Chain::mte2_mte1),
               {"MTE1", "LoadData", "reads", "L1", "MTE2", "DataCopy(Nd2Nz)", "SetFlag<HardEvent::MTE2_MTE1>"});
}

SIMTEST(hz_cube_mte1_to_m_missing) {
    chain_race("hz_cube_mte1_to_m_missing", missing_hop(&Chain::mte1_m),
               {"M", "Mmad", "reads", "L0A", "MTE1", "LoadData", "SetFlag<HardEvent::MTE1_M>"});
}

SIMTEST(hz_cube_m_to_fix_missing) {
    chain_race("hz_cube_m_to_fix_missing", missing_hop(&Chain::m_fix),
               {"FIX", "Fixpipe", "reads", "L0C", "M", "Mmad", "SetFlag<HardEvent::M_FIX>"});
}

SIMTEST(hz_cube_fences_legal) { chain_ok("hz_cube_fences_legal", Chain{}); }

// ---------------------------------------------------------------- reuse across two tiles

// L0A reloaded while the first tile's Mmad reads it. M->MTE1 orders the
// reload after both that read and the first LoadData (which the read
// followed).
SIMTEST(hz_cube_l0a_reload_m_to_mte1_missing) {
    chain_race("hz_cube_l0a_reload_m_to_mte1_missing", reuse(Reuse::L0A, Edge::Missing, Edge::Missing),
               {"MTE1", "LoadData", "writes", "L0A", "M", "Mmad", "SetFlag<HardEvent::M_MTE1>"}, 2);
}

SIMTEST(hz_cube_l0a_reload_m_to_mte1_missing_after_mte1_barrier) {
    chain_race("hz_cube_l0a_reload_m_to_mte1_missing_after_mte1_barrier",
               reuse(Reuse::L0A, Edge::Missing, Edge::Direct),
               {"MTE1", "LoadData", "writes", "L0A", "M", "Mmad", "SetFlag<HardEvent::M_MTE1>"}, 2);
}

SIMTEST(hz_cube_l0a_reload_legal) {
    chain_ok("hz_cube_l0a_reload_legal", reuse(Reuse::L0A, Edge::Direct, Edge::Missing), 2);
}

// L0C rewritten by the second tile's Mmad while Fixpipe reads the first.
SIMTEST(hz_cube_l0c_rewrite_fix_to_m_missing) {
    chain_race("hz_cube_l0c_rewrite_fix_to_m_missing", reuse(Reuse::L0C, Edge::Missing, Edge::Missing),
               {"M", "Mmad", "writes", "L0C", "FIX", "Fixpipe", "SetFlag<HardEvent::FIX_M>"}, 2);
}

SIMTEST(hz_cube_l0c_rewrite_fix_to_m_missing_after_m_barrier) {
    chain_race("hz_cube_l0c_rewrite_fix_to_m_missing_after_m_barrier",
               reuse(Reuse::L0C, Edge::Missing, Edge::Direct),
               {"M", "Mmad", "writes", "L0C", "FIX", "Fixpipe", "SetFlag<HardEvent::FIX_M>"}, 2);
}

SIMTEST(hz_cube_l0c_rewrite_legal) {
    chain_ok("hz_cube_l0c_rewrite_legal", reuse(Reuse::L0C, Edge::Direct, Edge::Missing), 2);
}

// Both buffers reused, every edge by the queues (TQue A1/B1/A2/B2/CO1).
SIMTEST(hz_cube_queues_legal) {
    CubeIo io(16, 16, 2);
    aic_ok("hz_cube_queues_legal", [&] { chain_queued(io); });
    io.expect();
}

// PipeBarrier<PIPE_ALL> in place of every hop and reuse edge.
SIMTEST(hz_cube_pipe_all_legal) {
    chain_ok("hz_cube_pipe_all_legal", all_edges(Edge::All), 2);
}

// ---------------------------------------------------------------- accumulating Mmads

// (m/16)*(n/16) = 1 and 9: the second Mmad needs PipeBarrier<PIPE_M>.
SIMTEST(hz_mmad_accumulate_small_missing) {
    for (uint32_t mn : {16u, 48u}) {
        CubeIo io(mn, mn);
        aic_race(simtest::format("hz_mmad_accumulate_%ux%u", mn, mn).c_str(),
                 {"M", "Mmad", "reads", "L0C", "M", "Mmad", "PipeBarrier<PIPE_M>() between them (an accumulating Mmad"},
                 [&] { mmad_twice(io, Edge::Missing); });
    }
}

SIMTEST(hz_mmad_accumulate_small_legal) {
    mmad_twice_ok("hz_mmad_accumulate_16x16_barrier", 16, 16, Edge::Direct);
    mmad_twice_ok("hz_mmad_accumulate_48x48_barrier", 48, 48, Edge::Direct);
}

// (m/16)*(n/16) = 10: the hardware orders the two (the Mmad docs).
SIMTEST(hz_mmad_accumulate_large_legal) {
    mmad_twice_ok("hz_mmad_accumulate_32x80", 32, 80, Edge::Missing);
    mmad_twice_ok("hz_mmad_accumulate_160x16", 160, 16, Edge::Missing);
}

// ---------------------------------------------------------------- GM across cores

// The AIV signals on PIPE_MTE2 while its write to A is on MTE3: the AIC's
// read of A after the wait is not ordered after that write.
SIMTEST(hz_cross_core_set_on_wrong_pipe) {
    Handoff h;
    simtest::expect_violation("GM data race",
                              {"AIC 0", "DataCopy(Nd2Nz)", {"read of GM", "write by core AIV 0 (pipe MTE3, DataCopy)"}},
                              "hz_cross_core_set_on_wrong_pipe", KERNEL_TYPE_MIX_AIC_1_1, 1, h.body(PIPE_MTE2));
}

// The same: the message names the missing edge.
SIMTEST(hz_cross_core_set_on_wrong_pipe_names_edge) {
    Handoff h;
    simtest::expect_violation("GM data race", {"AIC 0", "DataCopy(Nd2Nz)", {"CrossCoreSetFlag", "PIPE_MTE3"}},
                              "hz_cross_core_set_on_wrong_pipe_names_edge", KERNEL_TYPE_MIX_AIC_1_1, 1,
                              h.body(PIPE_MTE2));
}

// With the set on PIPE_MTE3 the hand-off runs; each CrossCoreWaitFlag
// orders every pipe of the waiting core after the other core's work (AIC:
// MTE2 and S read A; AIV: MTE2 and S read C, MTE3 rewrites it).
SIMTEST(hz_cross_core_wait_orders_every_pipe) {
    Handoff h;
    simtest::run_ok("hz_cross_core_wait_orders_every_pipe", KERNEL_TYPE_MIX_AIC_1_1, 1, h.body(PIPE_MTE3));
    h.io.expect(1.0f, 1.0f);  // C = X B by the AIC, rewritten as C + 1 by the AIV
    CHECK_EQ(h.seen[0], static_cast<float>(h.io.a[5]));
    CHECK_EQ(h.seen[1] + 1.0f, h.io.gc.download()[7]);
}
