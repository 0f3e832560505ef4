// Hazard suite, vector core: each case leaves one edge out of a small AIV
// kernel (the checker must stop it with the rule and a message naming the
// missing edge); its legal twin puts the edge in and computes the right
// values. Edges: MTE2->V, V->MTE3, V->MTE2, MTE3->MTE2, the queue hand-offs,
// S<->V, MTE2->S, PipeBarrier<PIPE_V>/<PIPE_MTE2>, GM MTE3->MTE2, and
// PipeBarrier<PIPE_ALL> in place of any of them.
#include "hazard_util.h"

using namespace AscendC;
using hz::Edge;

namespace {

constexpr uint32_t kN = 64;  // floats of one tile: one 256-byte repeat

// GM x -> UB a (MTE2) -> b = a + 1 (V) -> GM y (MTE3), on a TBuf.
void add_one(const hz::Io& io, Edge mte2_v, Edge v_mte3) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN);
    DataCopy(a, io.gx(), kN);
    hz::edge<HardEvent::MTE2_V>(mte2_v);
    Adds(b, a, 1.0f, kN);
    hz::edge<HardEvent::V_MTE3>(v_mte3);
    DataCopy(io.gy(), b, kN);
}

// Two tiles through one buffer pair: a <- x[t] (MTE2), b = a + 1 (V),
// y[t] <- b (MTE3). Tile 1 refills a after V read it (V->MTE2, which also
// orders it after tile 0's MTE2 write; `mte2` adds PipeBarrier<PIPE_MTE2>
// for that write alone) and rewrites b after MTE3 read it (MTE3->V).
void add_one_loop(const hz::Io& io, Edge v_mte2, Edge mte2 = Edge::Missing) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN);
    for (uint32_t t = 0; t < 2; ++t) {
        if (t > 0) hz::edge<HardEvent::V_MTE2>(v_mte2);
        if (t > 0) hz::barrier<PIPE_MTE2>(mte2);
        DataCopy(a, io.gx()[t * kN], kN);
        simtest::fence<HardEvent::MTE2_V>();
        if (t > 0) simtest::fence<HardEvent::MTE3_V>();
        Adds(b, a, 1.0f, kN);
        simtest::fence<HardEvent::V_MTE3>();
        DataCopy(io.gy()[t * kN], b, kN);
    }
}

// Two tiles copied GM -> UB -> GM through one buffer: tile 1 refills it
// after MTE3 read it (MTE3->MTE2; `mte2` as in add_one_loop).
void copy_loop(const hz::Io& io, Edge mte3_mte2, Edge mte2 = Edge::Missing) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN);
    for (uint32_t t = 0; t < 2; ++t) {
        if (t > 0) hz::edge<HardEvent::MTE3_MTE2>(mte3_mte2);
        if (t > 0) hz::barrier<PIPE_MTE2>(mte2);
        DataCopy(a, io.gx()[t * kN], kN);
        simtest::fence<HardEvent::MTE2_MTE3>();
        DataCopy(io.gy()[t * kN], a, kN);
    }
}

// The canonical queue flow, with (queued) or without EnQue/DeQue on the
// VECIN side: Alloc -> DataCopy -> Adds directly.
void tque_add_one(const hz::Io& io, bool queued) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qin;
    TQue<TPosition::VECOUT, 1> qout;
    pipe.InitBuffer(qin, 1, kN * 4);
    pipe.InitBuffer(qout, 1, kN * 4);
    auto a = qin.AllocTensor<float>();
    DataCopy(a, io.gx(), kN);
    if (queued) {
        qin.EnQue(a);
        a = qin.DeQue<float>();
    }
    auto b = qout.AllocTensor<float>();
    Adds(b, a, 1.0f, kN);
    qout.EnQue(b);
    qin.FreeTensor(a);
    b = qout.DeQue<float>();
    DataCopy(io.gy(), b, kN);
    qout.FreeTensor(b);
}

// Scalar read of what the vector unit wrote (V->S).
float scalar_get_after_v(Edge v_s) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN);
    Duplicate(a, 2.5f, kN);
    hz::edge<HardEvent::V_S>(v_s);
    return a.GetValue(5);
}

// Scalar writes that the vector unit reads (S->V), then y = a + 1.
void scalar_set_before_v(const hz::Io& io, Edge s_v) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN);
    for (uint32_t i = 0; i < kN; ++i) a.SetValue(i, static_cast<float>(i) * 2.0f);
    hz::edge<HardEvent::S_V>(s_v);
    Adds(b, a, 1.0f, kN);
    simtest::fence<HardEvent::V_MTE3>();
    DataCopy(io.gy(), b, kN);
}

// Scalar read of a VECIN tensor after its DeQue: DeQue orders MTE2->V, the
// scalar unit needs MTE2->S of its own.
float scalar_get_after_deque(const hz::Io& io, Edge mte2_s) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qin;
    pipe.InitBuffer(qin, 1, kN * 4);
    auto a = qin.AllocTensor<float>();
    DataCopy(a, io.gx(), kN);
    qin.EnQue(a);
    a = qin.DeQue<float>();
    hz::edge<HardEvent::MTE2_S>(mte2_s);
    float v = a.GetValue(3);
    qin.FreeTensor(a);
    return v;
}

// V reads what V just wrote: b = a + 1, c = b * 2.
void v_read_after_write(const hz::Io& io, Edge v_v) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN), c = ub.at<float>(2048, kN);
    DataCopy(a, io.gx(), kN);
    simtest::fence<HardEvent::MTE2_V>();
    Adds(b, a, 1.0f, kN);
    hz::barrier<PIPE_V>(v_v);
    Muls(c, b, 2.0f, kN);
    simtest::fence<HardEvent::V_MTE3>();
    DataCopy(io.gy(), c, kN);
}

// Two MTE2 copies into the same UB: the second (x[kN..]) must land last
// before anything reads the bytes (unordered, either may).
void mte2_write_after_write(const hz::Io& io, Edge mte2_mte2) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN);
    DataCopy(a, io.gx(), kN);
    hz::barrier<PIPE_MTE2>(mte2_mte2);
    DataCopy(a, io.gx()[kN], kN);
    simtest::fence<HardEvent::MTE2_MTE3>();
    DataCopy(io.gy(), a, kN);
}

// GM inside one core: y[0..kN) <- x (MTE3), then read back (MTE2) and
// copied on to y[kN..2kN).
void gm_write_then_read(const hz::Io& io, Edge mte3_mte2) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN);
    DataCopy(a, io.gx(), kN);
    simtest::fence<HardEvent::MTE2_MTE3>();
    DataCopy(io.gy(), a, kN);
    hz::edge<HardEvent::MTE3_MTE2>(mte3_mte2);
    DataCopy(b, io.gy(), kN);
    simtest::fence<HardEvent::MTE2_MTE3>();
    DataCopy(io.gy()[kN], b, kN);
}

// GM inside one core, write after read: a <- x (MTE2), then x <- 7 (MTE3)
// must wait for the read (MTE2->MTE3); y <- a shows what the read saw.
void gm_read_then_write(const hz::Io& io, Edge mte2_mte3) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN);
    DataCopy(a, io.gx(), kN);
    Duplicate(b, 7.0f, kN);
    simtest::fence<HardEvent::V_MTE3>();
    hz::edge<HardEvent::MTE2_MTE3>(mte2_mte3);
    DataCopy(io.gx(), b, kN);
    simtest::fence<HardEvent::MTE2_MTE3>();
    DataCopy(io.gy(), a, kN);
}

// GM inside one core, scalar read after MTE3: y <- x (MTE3), then y[3] by
// GlobalTensor::GetValue (S) after the data cache line is dropped.
float gm_scalar_after_mte3(const hz::Io& io, Edge mte3_s) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN);
    DataCopy(a, io.gx(), kN);
    simtest::fence<HardEvent::MTE2_MTE3>();
    DataCopy(io.gy(), a, kN);
    hz::edge<HardEvent::MTE3_S>(mte3_s);
    DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(io.gy()[3]);
    return io.gy().GetValue(3);
}

// A flag pair that does not cover the write (SetFlag<MTE2_V> issued before
// the DataCopy), or a barrier of the wrong pipe in place of MTE2->V.
enum class Misplaced { FlagBeforeWrite, BarrierOfMte2, BarrierOfV };
void add_one_misplaced(const hz::Io& io, Misplaced m) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN);
    TEventID e = GetTPipePtr()->FetchEventID<HardEvent::MTE2_V>();
    if (m == Misplaced::FlagBeforeWrite) SetFlag<HardEvent::MTE2_V>(e);
    DataCopy(a, io.gx(), kN);
    if (m == Misplaced::FlagBeforeWrite) WaitFlag<HardEvent::MTE2_V>(e);
    if (m == Misplaced::BarrierOfMte2) PipeBarrier<PIPE_MTE2>();
    if (m == Misplaced::BarrierOfV) PipeBarrier<PIPE_V>();
    Adds(b, a, 1.0f, kN);
}

float plus_one(const hz::Io& io, uint32_t i) { return io.in[i] + 1.0f; }

// The legal runs: each kernel with its edges in place (Direct or All) runs
// and computes the right values.
void add_one_ok(const char* name, Edge e) {
    hz::Io io;
    hz::aiv_ok(name, [&] { add_one(io, e, e); });
    io.expect(kN, [&](uint32_t i) { return plus_one(io, i); });
}
void add_one_loop_ok(const char* name, Edge e) {
    hz::Io io;
    hz::aiv_ok(name, [&] { add_one_loop(io, e); });
    io.expect(2 * kN, [&](uint32_t i) { return plus_one(io, i); });
}
void copy_loop_ok(const char* name, Edge e) {
    hz::Io io;
    hz::aiv_ok(name, [&] { copy_loop(io, e); });
    io.expect(2 * kN, [&](uint32_t i) { return io.in[i]; });
}
void scalar_get_after_v_ok(const char* name, Edge e) {
    float v = 0;
    hz::aiv_ok(name, [&] { v = scalar_get_after_v(e); });
    CHECK_EQ(v, 2.5f);
}
void scalar_set_before_v_ok(const char* name, Edge e) {
    hz::Io io;
    hz::aiv_ok(name, [&] { scalar_set_before_v(io, e); });
    io.expect(kN, [](uint32_t i) { return static_cast<float>(i) * 2.0f + 1.0f; });
}
void scalar_get_after_deque_ok(const char* name, Edge e) {
    hz::Io io;
    float v = 0;
    hz::aiv_ok(name, [&] { v = scalar_get_after_deque(io, e); });
    CHECK_EQ(v, io.in[3]);
}
void v_read_after_write_ok(const char* name, Edge e) {
    hz::Io io;
    hz::aiv_ok(name, [&] { v_read_after_write(io, e); });
    io.expect(kN, [&](uint32_t i) { return plus_one(io, i) * 2.0f; });
}
void mte2_write_after_write_ok(const char* name, Edge e) {
    hz::Io io;
    hz::aiv_ok(name, [&] { mte2_write_after_write(io, e); });
    io.expect(kN, [&](uint32_t i) { return io.in[kN + i]; });
}
void gm_write_then_read_ok(const char* name, Edge e) {
    hz::Io io;
    hz::aiv_ok(name, [&] { gm_write_then_read(io, e); });
    io.expect(2 * kN, [&](uint32_t i) { return io.in[i % kN]; });
}

}  // namespace

// ---------------------------------------------------------------- MTE2 -> V, V -> MTE3

SIMTEST(hz_tbuf_mte2_to_v_missing) {
    hz::Io io;
    hz::aiv_bad("hz_tbuf_mte2_to_v_missing", "in-core race",
                hz::race("AIV 0", {"V", "Adds", "reads", "UB", "MTE2", "DataCopy", "SetFlag<HardEvent::MTE2_V>"}),
                [&] { add_one(io, Edge::Missing, Edge::Direct); });
}

SIMTEST(hz_tbuf_mte2_to_v_legal) { add_one_ok("hz_tbuf_mte2_to_v_legal", Edge::Direct); }

SIMTEST(hz_tbuf_v_to_mte3_missing) {
    hz::Io io;
    hz::aiv_bad("hz_tbuf_v_to_mte3_missing", "in-core race",
                hz::race("AIV 0", {"MTE3", "DataCopy", "reads", "UB", "V", "Adds", "SetFlag<HardEvent::V_MTE3>"}),
                [&] { add_one(io, Edge::Direct, Edge::Missing); });
}

SIMTEST(hz_tbuf_v_to_mte3_legal) { add_one_ok("hz_tbuf_v_to_mte3_legal", Edge::Direct); }

// ---------------------------------------------------------------- buffer reuse in a loop

// The refill lacks V->MTE2, which alone orders it after both the V read
// and the earlier MTE2 write (the read was ordered after that write).
SIMTEST(hz_loop_v_to_mte2_missing) {
    hz::Io io;
    hz::aiv_bad("hz_loop_v_to_mte2_missing", "in-core race",
                hz::race("AIV 0", {"MTE2", "DataCopy", "writes", "UB", "V", "Adds", "SetFlag<HardEvent::V_MTE2>"}),
                [&] { add_one_loop(io, Edge::Missing); });
}

// The same with the earlier MTE2 write ordered by PipeBarrier<PIPE_MTE2>:
// only the V read is left unordered.
SIMTEST(hz_loop_v_to_mte2_missing_after_mte2_barrier) {
    hz::Io io;
    hz::aiv_bad("hz_loop_v_to_mte2_missing_after_mte2_barrier", "in-core race",
                hz::race("AIV 0", {"MTE2", "DataCopy", "writes", "UB", "V", "Adds", "SetFlag<HardEvent::V_MTE2>"}),
                [&] { add_one_loop(io, Edge::Missing, Edge::Direct); });
}

SIMTEST(hz_loop_v_to_mte2_legal) { add_one_loop_ok("hz_loop_v_to_mte2_legal", Edge::Direct); }

SIMTEST(hz_loop_mte3_to_mte2_missing) {
    hz::Io io;
    hz::aiv_bad("hz_loop_mte3_to_mte2_missing", "in-core race",
                hz::race("AIV 0",
                         {"MTE2", "DataCopy", "writes", "UB", "MTE3", "DataCopy", "SetFlag<HardEvent::MTE3_MTE2>"}),
                [&] { copy_loop(io, Edge::Missing); });
}

SIMTEST(hz_loop_mte3_to_mte2_missing_after_mte2_barrier) {
    hz::Io io;
    hz::aiv_bad("hz_loop_mte3_to_mte2_missing_after_mte2_barrier", "in-core race",
                hz::race("AIV 0",
                         {"MTE2", "DataCopy", "writes", "UB", "MTE3", "DataCopy", "SetFlag<HardEvent::MTE3_MTE2>"}),
                [&] { copy_loop(io, Edge::Missing, Edge::Direct); });
}

SIMTEST(hz_loop_mte3_to_mte2_legal) { copy_loop_ok("hz_loop_mte3_to_mte2_legal", Edge::Direct); }

// ---------------------------------------------------------------- queues

SIMTEST(hz_tque_without_enque_deque) {
    hz::Io io;
    hz::aiv_bad("hz_tque_without_enque_deque", "in-core race",
                hz::race("AIV 0", {"V", "Adds", "reads", "UB", "MTE2", "DataCopy", "SetFlag<HardEvent::MTE2_V>"}),
                [&] { tque_add_one(io, false); });
}

SIMTEST(hz_tque_enque_deque_legal) {
    hz::Io io;
    hz::aiv_ok("hz_tque_enque_deque_legal", [&] { tque_add_one(io, true); });
    io.expect(kN, [&](uint32_t i) { return plus_one(io, i); });
}

// ---------------------------------------------------------------- scalar unit

SIMTEST(hz_scalar_get_after_v_missing) {
    hz::aiv_bad("hz_scalar_get_after_v_missing", "in-core race",
                hz::race("AIV 0", {"S", "LocalTensor::GetValue", "reads", "UB", "V", "Duplicate",
                                   "SetFlag<HardEvent::V_S>"}),
                [&] { (void)scalar_get_after_v(Edge::Missing); });
}

SIMTEST(hz_scalar_get_after_v_legal) { scalar_get_after_v_ok("hz_scalar_get_after_v_legal", Edge::Direct); }

SIMTEST(hz_scalar_set_before_v_missing) {
    hz::Io io;
    hz::aiv_bad("hz_scalar_set_before_v_missing", "in-core race",
                hz::race("AIV 0", {"V", "Adds", "reads", "UB", "S", "LocalTensor::SetValue",
                                   "SetFlag<HardEvent::S_V>"}),
                [&] { scalar_set_before_v(io, Edge::Missing); });
}

SIMTEST(hz_scalar_set_before_v_legal) { scalar_set_before_v_ok("hz_scalar_set_before_v_legal", Edge::Direct); }

SIMTEST(hz_scalar_get_after_deque_missing) {
    hz::Io io;
    hz::aiv_bad("hz_scalar_get_after_deque_missing", "in-core race",
                hz::race("AIV 0", {"S", "LocalTensor::GetValue", "reads", "UB", "MTE2", "DataCopy",
                                   "SetFlag<HardEvent::MTE2_S>"}),
                [&] { (void)scalar_get_after_deque(io, Edge::Missing); });
}

SIMTEST(hz_scalar_get_after_deque_legal) { scalar_get_after_deque_ok("hz_scalar_get_after_deque_legal", Edge::Direct); }

// ---------------------------------------------------------------- one pipe

SIMTEST(hz_v_read_after_write_missing) {
    hz::Io io;
    hz::aiv_bad("hz_v_read_after_write_missing", "in-core race",
                hz::race("AIV 0", {"V", "Muls", "reads", "UB", "V", "Adds", "PipeBarrier<PIPE_V>"}),
                [&] { v_read_after_write(io, Edge::Missing); });
}

SIMTEST(hz_v_read_after_write_legal) { v_read_after_write_ok("hz_v_read_after_write_legal", Edge::Direct); }

SIMTEST(hz_mte2_write_after_write_missing) {
    hz::Io io;
    hz::aiv_bad("hz_mte2_write_after_write_missing", "in-core race",
                {"AIV 0",
                 "DataCopy",
                 {"MTE3 DataCopy reads UB bytes", "which both MTE2 DataCopy (MTE2 instruction",
                  "and a later MTE2 DataCopy wrote", "either may land last", "missing: PipeBarrier<PIPE_MTE2>"}},
                [&] { mte2_write_after_write(io, Edge::Missing); });
}

SIMTEST(hz_mte2_write_after_write_legal) { mte2_write_after_write_ok("hz_mte2_write_after_write_legal", Edge::Direct); }

// ---------------------------------------------------------------- GM inside one core

SIMTEST(hz_gm_mte3_to_mte2_missing) {
    hz::Io io;
    hz::aiv_bad("hz_gm_mte3_to_mte2_missing", "in-core race",
                hz::gm_race("AIV 0", {"MTE2", "DataCopy", "reads", "GM", "MTE3", "DataCopy",
                                      "SetFlag<HardEvent::MTE3_MTE2>"}),
                [&] { gm_write_then_read(io, Edge::Missing); });
}

SIMTEST(hz_gm_mte3_to_mte2_legal) { gm_write_then_read_ok("hz_gm_mte3_to_mte2_legal", Edge::Direct); }

SIMTEST(hz_gm_mte3_to_mte2_names_both_calls) {
    hz::Io io;
    hz::aiv_bad("hz_gm_mte3_to_mte2_names_both_calls", "in-core race",
                {"AIV 0",
                 "DataCopy",
                 {"MTE2 DataCopy reads GM 0x", "which this core's MTE3 DataCopy",
                  "missing: SetFlag<HardEvent::MTE3_MTE2>"}},
                [&] { gm_write_then_read(io, Edge::Missing); });
}

SIMTEST(hz_gm_scalar_read_after_mte3_missing) {
    hz::Io io;
    hz::aiv_bad("hz_gm_scalar_read_after_mte3_missing", "in-core race",
                hz::gm_race("AIV 0", {"S", "GlobalTensor::GetValue", "reads", "GM", "MTE3", "DataCopy",
                                      "SetFlag<HardEvent::MTE3_S>"}),
                [&] { (void)gm_scalar_after_mte3(io, Edge::Missing); });
}

SIMTEST(hz_gm_scalar_read_after_mte3_legal) {
    hz::Io io;
    float v = 0;
    hz::aiv_ok("hz_gm_scalar_read_after_mte3_legal", [&] { v = gm_scalar_after_mte3(io, Edge::Direct); });
    CHECK_EQ(v, io.in[3]);
}

// ---------------------------------------------------------------- edges that do not order the pair

SIMTEST(hz_flag_set_before_the_write) {
    hz::Io io;
    for (auto [m, name] : {std::pair{Misplaced::FlagBeforeWrite, "hz_flag_set_before_the_write"},
                           std::pair{Misplaced::BarrierOfMte2, "hz_barrier_of_mte2_for_mte2_to_v"},
                           std::pair{Misplaced::BarrierOfV, "hz_barrier_of_v_for_mte2_to_v"}})
        hz::aiv_bad(name, "in-core race",
                    hz::race("AIV 0", {"V", "Adds", "reads", "UB", "MTE2", "DataCopy", "SetFlag<HardEvent::MTE2_V>"}),
                    [&, m = m] { add_one_misplaced(io, m); });
}

// ---------------------------------------------------------------- PipeBarrier<PIPE_ALL>

// PIPE_ALL orders every pair of pipes: each case above with it in place of
// the missing edge runs and computes the same values.
SIMTEST(hz_pipe_all_orders_every_vector_pair) {
    add_one_ok("hz_pipe_all_mte2_v_v_mte3", Edge::All);
    add_one_loop_ok("hz_pipe_all_v_mte2", Edge::All);
    copy_loop_ok("hz_pipe_all_mte3_mte2", Edge::All);
    scalar_get_after_v_ok("hz_pipe_all_v_s", Edge::All);
    scalar_set_before_v_ok("hz_pipe_all_s_v", Edge::All);
    scalar_get_after_deque_ok("hz_pipe_all_mte2_s", Edge::All);
    v_read_after_write_ok("hz_pipe_all_v_v", Edge::All);
    mte2_write_after_write_ok("hz_pipe_all_mte2_mte2", Edge::All);
    gm_write_then_read_ok("hz_pipe_all_gm_mte3_mte2", Edge::All);
}

// ---------------------------------------------------------------- GM write after read

SIMTEST(hz_gm_write_after_read_in_core_missing) {
    hz::Io io;
    hz::aiv_bad("hz_gm_write_after_read_in_core_missing", "in-core race",
                hz::gm_race("AIV 0", {"MTE3", "DataCopy", "writes", "GM", "MTE2", "DataCopy",
                                      "SetFlag<HardEvent::MTE2_MTE3>"}),
                [&] { gm_read_then_write(io, Edge::Missing); });
}

SIMTEST(hz_gm_write_after_read_in_core_legal) {
    hz::Io io;
    hz::aiv_ok("hz_gm_write_after_read_in_core_legal", [&] { gm_read_then_write(io, Edge::Direct); });
    io.expect(kN, [&](uint32_t i) { return io.in[i]; });
    auto x = io.x.download();
    for (uint32_t i = 0; i < kN; ++i) CHECK_EQ(x[i], 7.0f);
}

// Across cores: core 0 reads x, core 1 overwrites it, nothing between them.
// (The simulator runs core 0 up to its first wait, here to its end, before
// core 1: the read comes first.)
SIMTEST(hz_gm_write_after_read_across_cores) {
    hz::Io io;
    simtest::expect_violation("GM data race", {"AIV 1", "DataCopy", {"write of GM", "AIV 0"}},
                              "hz_gm_write_after_read_across_cores", KERNEL_TYPE_AIV_ONLY, 2, [&] {
                                  vt::Ub ub;
                                  auto a = ub.at<float>(0, kN);
                                  if (GetBlockIdx() == 0) {
                                      DataCopy(a, io.gx(), kN);
                                  } else {
                                      Duplicate(a, 7.0f, kN);
                                      simtest::fence<HardEvent::V_MTE3>();
                                      DataCopy(io.gx(), a, kN);
                                  }
                              });
}

// A producer AIV and a consumer AIC with no CrossCore flag at all: the AIC
// (core 0) runs first and reads y before the AIV writes it.
SIMTEST(hz_gm_missing_flag_consumer_runs_first) {
    hz::Io io;
    simtest::expect_violation("GM data race", {"AIV 0", "DataCopy", {"write of GM", "AIC 0"}},
                              "hz_gm_missing_flag_consumer_runs_first", KERNEL_TYPE_MIX_AIC_1_1, 1, [&] {
                                  if ASCEND_IS_AIC {
                                      (void)io.gy().GetValue(0);
                                      return;
                                  }
                                  vt::Ub ub;
                                  auto a = ub.at<float>(0, kN);
                                  Duplicate(a, 7.0f, kN);
                                  simtest::fence<HardEvent::V_MTE3>();
                                  DataCopy(io.gy(), a, kN);
                              });
}

// ---------------------------------------------------------------- a useful diagnostic

// The whole message of a race: kernel, core, the stopped call and rule, the
// later access (pipe, call, read, memory, bytes, buffer), the earlier one
// (pipe, call, its number on its pipe, write), and the missing edge.
SIMTEST(hz_diagnostic_names_everything) {
    hz::Io io;
    std::string msg = simtest::expect_violation(
        "in-core race",
        {"AIV 0",
         "Adds",
         {"V Adds reads UB bytes [0x0, 0x20) (buffer 0 of TQue #0 (GM -> VECIN)), ",
          "which MTE2 DataCopy (MTE2 instruction 1) wrote before, and nothing orders the two; ",
          "missing: SetFlag<HardEvent::MTE2_V>/WaitFlag<HardEvent::MTE2_V> from the first to the second ",
          "(or the queue hand-off that inserts it)"}},
        "hz_diagnostic_names_everything", KERNEL_TYPE_AIV_ONLY, 1, [&] { tque_add_one(io, false); });
    const char* head = "kernel hz_diagnostic_names_everything: core AIV 0: call Adds: rule: in-core race: V Adds";
    CHECK(msg.rfind(head, 0) == 0);
}
