// Hazard suite, event rules: a SetFlag never waited, user event ids in a
// kernel with a TPipe (from the pipe, not colliding with its queues or the
// AIC's reserved M_MTE1 ids), ReleaseEventID of an id never reserved,
// literal ids without a TPipe, events whose pipes the core lacks, and the
// CrossCore flag ids.
#include "hazard_util.h"

using namespace AscendC;

namespace {

constexpr uint32_t kN = 64;

// Where the MTE2 -> V event id of the kernel below comes from.
enum class Id {
    Literal6,   // the literal 6 (in a kernel with a TPipe: not from the pipe)
    Fetch,      // GetTPipePtr()->FetchEventID
    Alloc,      // AllocEventID, ReleaseEventID after the wait
};

// y = x + 1 through a TBuf, the MTE2 -> V edge with an id from `id`.
void add_one(const hz::Io& io, Id id) {
    vt::Ub ub;
    auto a = ub.at<float>(0, kN), b = ub.at<float>(1024, kN);
    DataCopy(a, io.gx(), kN);
    TEventID e = 6;
    if (id == Id::Fetch) e = GetTPipePtr()->FetchEventID<HardEvent::MTE2_V>();
    if (id == Id::Alloc) e = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
    SetFlag<HardEvent::MTE2_V>(e);
    WaitFlag<HardEvent::MTE2_V>(e);
    if (id == Id::Alloc) GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(e);
    Adds(b, a, 1.0f, kN);
    simtest::fence<HardEvent::V_MTE3>();
    DataCopy(io.gy(), b, kN);
}

void add_one_ok(const char* name, Id id) {
    hz::Io io;
    hz::aiv_ok(name, [&] { add_one(io, id); });
    io.expect(kN, [&](uint32_t i) { return io.in[i] + 1.0f; });
}

// A VECIN buffer read by V and freed: its FreeTensor sets V_MTE2 id 0 (the
// lowest free), which stays in flight until the buffer's next AllocTensor.
// V also read c (a TBuf) that MTE2 then refills: kernel code orders the
// refill with its own V_MTE2 pair, id 0 or one from FetchEventID (`fetch`).
// y = [c refilled with x[0..kN), b = x[0..kN) + x[kN..2kN)].
void free_then_flag(const hz::Io& io, bool fetch) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qin;
    TBuf<TPosition::VECCALC> tb;
    pipe.InitBuffer(qin, 1, kN * 4);
    pipe.InitBuffer(tb, 2 * kN * 4);
    auto c = tb.GetWithOffset<float>(kN, 0), b = tb.GetWithOffset<float>(kN, kN * 4);
    auto a = qin.AllocTensor<float>();
    DataCopy(a, io.gx(), kN);
    qin.EnQue(a);
    DataCopy(c, io.gx()[kN], kN);
    simtest::fence<HardEvent::MTE2_V>();
    a = qin.DeQue<float>();
    Add(b, a, c, kN);
    qin.FreeTensor(a);
    TEventID e = fetch ? GetTPipePtr()->FetchEventID<HardEvent::V_MTE2>() : 0;
    SetFlag<HardEvent::V_MTE2>(e);
    WaitFlag<HardEvent::V_MTE2>(e);
    DataCopy(c, io.gx(), kN);
    simtest::fence<HardEvent::MTE2_MTE3>();
    simtest::fence<HardEvent::V_MTE3>();
    DataCopy(io.gy(), tb.Get<float>(), 2 * kN);
}

// An AIC with a TPipe: the pipe holds M_MTE1 ids 0..2 (set at construction,
// waited at destruction). Kernel code's own M_MTE1 edge uses `id`, or an
// id from AllocEventID when id < 0. Returns the id used.
int aic_m_mte1(int id) {
    TPipe pipe;
    TEventID e = id >= 0 ? static_cast<TEventID>(id) : pipe.AllocEventID<HardEvent::M_MTE1>();
    SetFlag<HardEvent::M_MTE1>(e);
    WaitFlag<HardEvent::M_MTE1>(e);
    if (id < 0) pipe.ReleaseEventID<HardEvent::M_MTE1>(e);
    return e;
}

// Static tensors, no TPipe: kernel code owns the event ids.
void add_one_static(const hz::Io& io, int id) {
    LocalTensor<float> a(TPosition::VECCALC, 0, kN), b(TPosition::VECCALC, 1024, kN);
    DataCopy(a, io.gx(), kN);
    SetFlag<HardEvent::MTE2_V>(id);
    WaitFlag<HardEvent::MTE2_V>(id);
    Adds(b, a, 1.0f, kN);
    SetFlag<HardEvent::V_MTE3>(id);
    WaitFlag<HardEvent::V_MTE3>(id);
    DataCopy(io.gy(), b, kN);
}

template <HardEvent E>
void set_wait() {
    SetFlag<E>(EVENT_ID0);
    WaitFlag<E>(EVENT_ID0);
}

void mix_ok(const char* name, const std::function<void()>& body) {
    simtest::run_ok(name, KERNEL_TYPE_MIX_AIC_1_1, 1, body);
}

}  // namespace

// ---------------------------------------------------------------- SetFlag never waited

SIMTEST(hz_set_flag_never_waited) {
    hz::aiv_bad("hz_set_flag_never_waited", "SetFlag never waited",
                {"AIV 0", nullptr, {"SetFlag<HardEvent::MTE2_V>(0) by kernel code", "has no WaitFlag"}},
                [] { SetFlag<HardEvent::MTE2_V>(0); });
}

// The end-of-kernel check names where it runs and the SetFlag it found.
SIMTEST(hz_set_flag_never_waited_names_call) {
    hz::aiv_bad("hz_set_flag_never_waited_names_call", "SetFlag never waited",
                {"AIV 0", "kernel end", {"SetFlag<HardEvent::MTE2_V>(0) by kernel code (SetFlag)"}},
                [] { SetFlag<HardEvent::MTE2_V>(0); });
}

SIMTEST(hz_set_flag_waited_legal) {
    hz::aiv_ok("hz_set_flag_waited_legal", [] { set_wait<HardEvent::MTE2_V>(); });
}

// ---------------------------------------------------------------- ids in a kernel with a TPipe

SIMTEST(hz_user_id_not_from_pipe) {
    hz::Io io;
    hz::aiv_bad("hz_user_id_not_from_pipe", "event id not from the pipe",
                {"AIV 0", "SetFlag", {"SetFlag<HardEvent::MTE2_V>(6)", "FetchEventID / AllocEventID"}},
                [&] { add_one(io, Id::Literal6); });
}

SIMTEST(hz_fetch_event_id_legal) { add_one_ok("hz_fetch_event_id_legal", Id::Fetch); }

SIMTEST(hz_alloc_release_event_id_legal) { add_one_ok("hz_alloc_release_event_id_legal", Id::Alloc); }

// SetFlag<V_MTE2>(0) right after FreeTensor of a VECIN buffer: the queue's
// event holds id 0.
SIMTEST(hz_id_collides_with_tque_event) {
    hz::Io io;
    hz::aiv_bad("hz_id_collides_with_tque_event", "event id collides with the pipe",
                {"AIV 0", "SetFlag", {"SetFlag<HardEvent::V_MTE2>(0)", "the TPipe holds that id"}},
                [&] { free_then_flag(io, false); });
}

SIMTEST(hz_id_fetched_after_free_legal) {
    hz::Io io;
    hz::aiv_ok("hz_id_fetched_after_free_legal", [&] { free_then_flag(io, true); });
    io.expect(2 * kN, [&](uint32_t i) { return i < kN ? io.in[i] : io.in[i - kN] + io.in[i]; });
}

SIMTEST(hz_aic_reserved_m_mte1_id) {
    simtest::expect_violation("event id collides with the pipe",
                              {"AIC 0", "SetFlag", {"SetFlag<HardEvent::M_MTE1>(0)", "reserved M_MTE1 ids 0..2"}},
                              "hz_aic_reserved_m_mte1_id", KERNEL_TYPE_AIC_ONLY, 1, [] { (void)aic_m_mte1(0); });
}

SIMTEST(hz_aic_alloc_m_mte1_id_legal) {
    int id = -1;
    simtest::run_ok("hz_aic_alloc_m_mte1_id_legal", KERNEL_TYPE_AIC_ONLY, 1, [&] { id = aic_m_mte1(-1); });
    CHECK_EQ(id, 3);  // the lowest id the TPipe does not hold
}

SIMTEST(hz_release_never_reserved) {
    hz::aiv_bad("hz_release_never_reserved", "invalid event release",
                {"AIV 0", "TPipe::ReleaseEventID", {"ReleaseEventID<HardEvent::V_S>(2)", "did not reserve"}}, [] {
                    TPipe pipe;
                    pipe.ReleaseEventID<HardEvent::V_S>(2);
                });
    // A fetched id is not reserved either.
    hz::aiv_bad("hz_release_fetched", "invalid event release",
                {"AIV 0", "TPipe::ReleaseEventID", {"ReleaseEventID<HardEvent::V_S>(0)", "did not reserve"}}, [] {
                    TPipe pipe;
                    pipe.ReleaseEventID<HardEvent::V_S>(pipe.FetchEventID<HardEvent::V_S>());
                });
}

// Without a TPipe kernel code owns the ids (the docs recommend 0..5).
SIMTEST(hz_literal_ids_without_tpipe_legal) {
    for (int id : {0, 5}) {
        hz::Io io;
        hz::aiv_ok(simtest::format("hz_literal_id_%d", id).c_str(), [&] { add_one_static(io, id); });
        io.expect(kN, [&](uint32_t i) { return io.in[i] + 1.0f; });
    }
}

// Eight ids per event: a ninth AllocEventID has none left.
SIMTEST(hz_event_ids_exhausted) {
    hz::aiv_bad("hz_event_ids_exhausted", "event ids exhausted",
                {"AIV 0", "TPipe::AllocEventID", {"all 8 ids of HardEvent::S_V are held"}}, [] {
                    TPipe pipe;
                    for (int i = 0; i < 9; ++i) (void)pipe.AllocEventID<HardEvent::S_V>();
                });
}

SIMTEST(hz_event_ids_eight_legal) {
    simtest::run_ok("hz_event_ids_eight_legal", KERNEL_TYPE_AIV_ONLY, 1, [] {
        TPipe pipe;
        for (int i = 0; i < 8; ++i) CHECK_EQ(pipe.AllocEventID<HardEvent::S_V>(), i);
        for (int i = 0; i < 8; ++i) pipe.ReleaseEventID<HardEvent::S_V>(i);
    });
}

// A SetFlag set twice before its wait, a WaitFlag without a set.
SIMTEST(hz_unpaired_flags) {
    hz::aiv_bad("hz_unpaired_set_flag", "unpaired SetFlag",
                {"AIV 0", "SetFlag", {"SetFlag<HardEvent::V_MTE3>(2) by kernel code", "set twice"}}, [] {
                    SetFlag<HardEvent::V_MTE3>(2);
                    SetFlag<HardEvent::V_MTE3>(2);
                });
    hz::aiv_bad("hz_unpaired_wait_flag", "unpaired WaitFlag",
                {"AIV 0", "WaitFlag", {"WaitFlag<HardEvent::V_MTE3>(2) by kernel code without a preceding SetFlag"}},
                [] { WaitFlag<HardEvent::V_MTE3>(2); });
}

// ---------------------------------------------------------------- events of the core's pipes

SIMTEST(hz_event_v_s_on_aic) {
    simtest::expect_violation("invalid event for core", {"AIC 0", "SetFlag", {"HardEvent::V_S", "AIC core"}},
                              "hz_event_v_s_on_aic", KERNEL_TYPE_AIC_ONLY, 1, [] { set_wait<HardEvent::V_S>(); });
}

SIMTEST(hz_event_m_fix_on_aiv) {
    hz::aiv_bad("hz_event_m_fix_on_aiv", "invalid event for core",
                {"AIV 0", "SetFlag", {"HardEvent::M_FIX", "AIV core"}}, [] { set_wait<HardEvent::M_FIX>(); });
}

SIMTEST(hz_event_for_core_legal) {
    simtest::run_ok("hz_event_m_fix_on_aic", KERNEL_TYPE_AIC_ONLY, 1, [] { set_wait<HardEvent::M_FIX>(); });
    hz::aiv_ok("hz_event_v_s_on_aiv", [] { set_wait<HardEvent::V_S>(); });
}

// ---------------------------------------------------------------- CrossCore flag ids

// Ids are 4 bits; 11..14 belong to the hardware SyncAll; CANN 8.5 documents
// 0..10 on A2 (9.x adds 15), so 15 and above are refused.
SIMTEST(hz_cross_flag_15_and_16_invalid) {
    for (uint16_t id : {15, 16})
        simtest::expect_violation(
            "invalid flag id", {"AIC 0", "CrossCoreSetFlag", {simtest::format("flag id %u outside 0..10", id)}},
            simtest::format("hz_cross_flag_%u_invalid", id).c_str(), KERNEL_TYPE_MIX_AIC_1_1, 1, [id] {
                if ASCEND_IS_AIC { CrossCoreSetFlag<2, PIPE_FIX>(id); }
            });
    simtest::expect_violation("invalid flag id", {"AIV 0", "CrossCoreWaitFlag", {"flag id 15 outside 0..10"}},
                              "hz_cross_wait_15_invalid", KERNEL_TYPE_MIX_AIC_1_1, 1, [] {
                                  if ASCEND_IS_AIV { CrossCoreWaitFlag(15); }
                              });
}

SIMTEST(hz_cross_flag_11_to_14_reserved) {
    for (uint16_t id = 11; id <= 14; ++id)
        simtest::expect_violation(
            "flag id reserved",
            {"AIC 0", "CrossCoreSetFlag", {simtest::format("belong to the hardware SyncAll (got %u)", id)}},
            simtest::format("hz_cross_flag_%u_reserved", id).c_str(), KERNEL_TYPE_MIX_AIC_1_1, 1, [id] {
                if ASCEND_IS_AIC { CrossCoreSetFlag<2, PIPE_FIX>(id); }
            });
}

SIMTEST(hz_cross_flag_never_waited) {
    // Named on the core whose counter holds the set: the AIV that never waits.
    const simtest::Diag d{"AIV 0", nullptr, {"flag 3 holds 1 set(s)", "CrossCoreSetFlag without its CrossCoreWait"}};
    simtest::expect_violation("CrossCore flag never waited", d,
                              "hz_cross_flag_never_waited", KERNEL_TYPE_MIX_AIC_1_1, 1, [] {
                                  if ASCEND_IS_AIC { CrossCoreSetFlag<2, PIPE_FIX>(3); }
                              });
}

// Flags 0..10, each set and waited.
SIMTEST(hz_cross_flag_ids_legal) {
    mix_ok("hz_cross_flag_ids_legal", [] {
        for (uint16_t id = 0; id <= 10; ++id) {
            if ASCEND_IS_AIC {
                CrossCoreSetFlag<2, PIPE_FIX>(id);
            } else {
                CrossCoreWaitFlag(id);
            }
        }
    });
}
