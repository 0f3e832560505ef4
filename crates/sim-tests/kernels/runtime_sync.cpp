// Simulator runtime: core identities, inter-core flags and barriers, the GM
// race rule, the data cache, deadlock detection, queue and pipe rules.
#include "harness.h"

using namespace AscendC;

namespace {
constexpr CacheLine kAll = CacheLine::ENTIRE_DATA_CACHE;
constexpr DcciDst kOut = DcciDst::CACHELINE_OUT;

// Each core writes one int32 into its own 64-byte line and publishes it:
// the data cache written back, and the scalar unit's work finished before
// any pipe signals another core (PipeBarrier<PIPE_ALL>).
void publish(GlobalTensor<int32_t>& g, uint64_t slot, int32_t v) {
    g.SetValue(slot * 16, v);
    DataCacheCleanAndInvalid<int32_t, kAll, kOut>(g);
    PipeBarrier<PIPE_ALL>();
}
}  // namespace

SIMTEST(identity_mix_1_2) {
    // 3 AI cores: 3 AIC + 6 AIV; slot layout: 6 values per core.
    simtest::DevBuf<int32_t> out(9 * 6 * 16);
    simtest::run_ok("identity", KERNEL_TYPE_MIX_AIC_1_2, 3, [&] {
        KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out.gm()));
        int64_t core = ASCEND_IS_AIC ? GetBlockIdx() : 3 + GetBlockIdx();
        int32_t vals[6] = {ASCEND_IS_AIC ? 0 : 1, (int32_t)GetBlockIdx(), (int32_t)GetBlockNum(),
                           (int32_t)GetSubBlockIdx(), (int32_t)GetSubBlockNum(), (int32_t)GetTaskRatio()};
        for (int i = 0; i < 6; ++i) g.SetValue((core * 6 + i) * 16, vals[i]);
        DataCacheCleanAndInvalid<int32_t, kAll, kOut>(g);
    });
    auto v = out.download();
    for (int c = 0; c < 9; ++c) {
        auto at = [&](int i) { return v[(c * 6 + i) * 16]; };
        bool aic = c < 3;
        int idx = aic ? c : c - 3;
        CHECK_EQ(at(0), aic ? 0 : 1);
        CHECK_EQ(at(1), idx);           // AIV: block*2 + sub in [0, 6)
        CHECK_EQ(at(2), 3);             // GetBlockNum = number of AI cores
        CHECK_EQ(at(3), aic ? 0 : idx % 2);
        CHECK_EQ(at(4), aic ? 1 : 2);
        CHECK_EQ(at(5), aic ? 1 : 2);
    }
}

SIMTEST(identity_aiv_only) {
    simtest::DevBuf<int32_t> out(4 * 16);
    simtest::run_ok("identity_aiv", KERNEL_TYPE_AIV_ONLY, 4, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out.gm()));
        publish(g, GetBlockIdx(), (int32_t)(GetBlockIdx() * 100 + GetBlockNum() * 10 + GetSubBlockNum()));
    });
    auto v = out.download();
    for (int c = 0; c < 4; ++c) CHECK_EQ(v[c * 16], c * 100 + 41);
}

SIMTEST(cross_core_mode2_handoff) {
    // AIC produces, both AIVs of its AI core consume after the flag; then the
    // AIVs answer and the AIC reads their results (reverse flag).
    simtest::DevBuf<int32_t> buf(64);
    simtest::run_ok("handoff", KERNEL_TYPE_MIX_AIC_1_2, 1, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        if ASCEND_IS_AIC {
            publish(g, 0, 42);
            CrossCoreSetFlag<2, PIPE_FIX>(3);
            CrossCoreWaitFlag(4);
            DataCacheCleanAndInvalid<int32_t, kAll, kOut>(g);
            int32_t a = g.GetValue(16), b = g.GetValue(32);
            publish(g, 3, a + b);
        } else {
            CrossCoreWaitFlag(3);
            DataCacheCleanAndInvalid<int32_t, kAll, kOut>(g);
            int32_t x = g.GetValue(0);
            publish(g, 1 + GetSubBlockIdx(), x + (int32_t)GetSubBlockIdx());
            CrossCoreSetFlag<2, PIPE_MTE3>(4);
        }
    });
    auto v = buf.download();
    CHECK_EQ(v[16], 42);
    CHECK_EQ(v[32], 43);
    CHECK_EQ(v[48], 85);
}

SIMTEST(race_without_flag) {
    simtest::DevBuf<int32_t> buf(64);
    simtest::expect_violation("GM data race", "race", KERNEL_TYPE_MIX_AIC_1_2, 1, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        if ASCEND_IS_AIC {
            publish(g, 0, 42);
        } else {
            // No flag: the read is not ordered after the AIC's write.
            (void)g.GetValue(0);
        }
    });
}

// Each AIV writes `count` int32 at element `first` with DataCopyPad (byte-exact).
static void write_ints(GM_ADDR raw, uint32_t first, uint32_t count, int32_t value) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 64);
    LocalTensor<int32_t> t = b.Get<int32_t>();
    Duplicate(t, value, 16);
    simtest::fence<HardEvent::V_MTE3>();
    GlobalTensor<int32_t> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(raw) + first);
    DataCopyExtParams p(1, count * 4, 0, 0, 0);
    DataCopyPad(g, t, p);
}

SIMTEST(disjoint_bytes_of_one_block_are_no_race) {
    simtest::DevBuf<int32_t> buf(16);
    simtest::run_ok("disjoint", KERNEL_TYPE_MIX_AIV_1_0, 2, [&] {
        // Core 0 writes elements 0..2, core 1 elements 3..7: one 32-byte block.
        if (GetBlockIdx() == 0) write_ints(buf.gm(), 0, 3, 7);
        else write_ints(buf.gm(), 3, 5, 9);
    });
    auto v = buf.download();
    CHECK_EQ(v[2], 7);
    CHECK_EQ(v[3], 9);
    CHECK_EQ(v[7], 9);
}

SIMTEST(overlapping_bytes_of_one_block_race) {
    simtest::DevBuf<int32_t> buf(16);
    simtest::expect_violation("GM data race", "overlap", KERNEL_TYPE_MIX_AIV_1_0, 2, [&] {
        if (GetBlockIdx() == 0) write_ints(buf.gm(), 0, 4, 7);
        else write_ints(buf.gm(), 3, 5, 9);
    });
}

SIMTEST(reading_a_neighbours_bytes_races) {
    simtest::DevBuf<int32_t> buf(16);
    simtest::expect_violation("GM data race", "neighbour_read", KERNEL_TYPE_MIX_AIV_1_0, 2, [&] {
        if (GetBlockIdx() == 0) {
            write_ints(buf.gm(), 0, 3, 7);
        } else {
            write_ints(buf.gm(), 3, 5, 9);
            GlobalTensor<int32_t> g;
            g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
            (void)g.GetValue(0);  // core 0's bytes, no synchronisation
        }
    });
}

SIMTEST(deadlock_is_reported) {
    std::string err = simtest::run("deadlock", KERNEL_TYPE_MIX_AIC_1_2, 2, [&] {
        if ASCEND_IS_AIV { CrossCoreWaitFlag(5); }
    });
    CHECK(err.find("rule: deadlock") != std::string::npos);
    CHECK(err.find("CrossCoreWaitFlag(5)") != std::string::npos);
}

SIMTEST(sync_all_needs_mix) {
    simtest::expect_violation("SyncAll in a non-mix kernel", "syncall_aiv_only", KERNEL_TYPE_AIV_ONLY, 2,
                              [&] { SyncAll(); });
}

SIMTEST(cross_core_flag_overflow) {
    simtest::expect_violation("CrossCore flag overflow", "overflow", KERNEL_TYPE_MIX_AIC_1_2, 1, [&] {
        if ASCEND_IS_AIC {
            for (int i = 0; i < 16; ++i) CrossCoreSetFlag<2, PIPE_FIX>(1);
        }
    });
}

SIMTEST(cross_core_flag_reserved_ids) {
    simtest::expect_violation("flag id reserved", "reserved", KERNEL_TYPE_MIX_AIC_1_2, 1, [&] {
        if ASCEND_IS_AIC { CrossCoreSetFlag<2, PIPE_FIX>(12); }
    });
}

SIMTEST(block_dim_above_cores_with_sync) {
    // The simulated 910B4 has 40 vector cores.
    simtest::expect_violation("blockDim above core count with inter-core sync", "too_many", KERNEL_TYPE_MIX_AIV_1_0,
                              41, [&] { SyncAll(); });
}

SIMTEST(sync_all_orders_gm) {
    // Every AIV writes its slot, SyncAll, then reads all slots.
    constexpr int n = 8;
    simtest::DevBuf<int32_t> buf(n * 16 + n * 16);
    simtest::run_ok("syncall", KERNEL_TYPE_MIX_AIV_1_0, n, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        publish(g, GetBlockIdx(), (int32_t)GetBlockIdx() + 1);
        SyncAll();
        int32_t sum = 0;
        for (int i = 0; i < n; ++i) sum += g.GetValue(i * 16);
        publish(g, n + GetBlockIdx(), sum);
    });
    auto v = buf.download();
    for (int i = 0; i < n; ++i) CHECK_EQ(v[(n + i) * 16], n * (n + 1) / 2);
}

SIMTEST(sync_all_missing_is_a_race) {
    constexpr int n = 4;
    simtest::DevBuf<int32_t> buf(n * 16);
    simtest::expect_violation("GM data race", "no_syncall", KERNEL_TYPE_MIX_AIV_1_0, n, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        publish(g, GetBlockIdx(), 1);
        for (int i = 0; i < n; ++i) (void)g.GetValue(i * 16);
    });
}

SIMTEST(soft_sync_all) {
    constexpr int n = 6;
    simtest::DevBuf<int32_t> ws(n * 8);
    simtest::DevBuf<int32_t> buf(n * 16);
    simtest::run_ok("soft_syncall", KERNEL_TYPE_AIV_ONLY, n, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> tmp;
        pipe.InitBuffer(tmp, n * 32);
        GlobalTensor<int32_t> g, w;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        w.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(ws.gm()));
        publish(g, GetBlockIdx(), 7);
        SyncAll(w, tmp.Get<int32_t>());
        int32_t sum = 0;
        for (int i = 0; i < n; ++i) sum += g.GetValue(i * 16);
        CHECK_EQ(sum, 7 * n);
    });
}

SIMTEST(mode0_barrier_among_aivs) {
    constexpr int n = 3;
    simtest::DevBuf<int32_t> buf(2 * n * 16 * 2);
    simtest::run_ok("mode0", KERNEL_TYPE_MIX_AIC_1_2, n, [&] {
        if ASCEND_IS_AIV {
            GlobalTensor<int32_t> g;
            g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
            publish(g, GetBlockIdx(), 1);
            CrossCoreSetFlag<0, PIPE_MTE3>(8);
            CrossCoreWaitFlag(8);
            int32_t s = 0;
            for (int i = 0; i < 2 * n; ++i) s += g.GetValue(i * 16);
            publish(g, 2 * n + GetBlockIdx(), s);
        }
    });
    auto v = buf.download();
    for (int i = 0; i < 2 * n; ++i) CHECK_EQ(v[(2 * n + i) * 16], 2 * n);
}

SIMTEST(dcache_write_needs_flush) {
    simtest::DevBuf<int32_t> buf(16);
    simtest::expect_violation("scalar GM write not flushed", "dirty", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        g.SetValue(0, 5);
    });
}

SIMTEST(dcache_reads_stale_line_until_invalidated) {
    // A core caches a line, another core updates GM after a barrier: the
    // first core sees the stale value until it invalidates its cache.
    simtest::DevBuf<int32_t> buf(32);
    simtest::DevBuf<int32_t> out(64);
    simtest::run_ok("stale", KERNEL_TYPE_MIX_AIV_1_0, 2, [&] {
        GlobalTensor<int32_t> g, o;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        o.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out.gm()));
        if (GetBlockIdx() == 0) (void)g.GetValue(0);
        SyncAll();
        if (GetBlockIdx() == 1) publish(g, 0, 9);
        SyncAll();
        if (GetBlockIdx() == 0) {
            int32_t stale = g.GetValue(0);
            DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, kOut>(g);
            int32_t fresh = g.GetValue(0);
            o.SetValue(0, stale);
            o.SetValue(1, fresh);
            DataCacheCleanAndInvalid<int32_t, kAll, kOut>(o);
        }
    });
    auto v = out.download();
    CHECK_EQ(v[0], 0);
    CHECK_EQ(v[1], 9);
}

SIMTEST(gm_outside_allocation) {
    simtest::DevBuf<int32_t> buf(8);
    simtest::expect_violation("GM access outside allocations", "oob", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(buf.gm()));
        (void)g.GetValue(1 << 20);
    });
}

SIMTEST(kernel_type_mismatch) {
    simtest::expect_violation("kernel type mismatch", "type", KERNEL_TYPE_AIV_ONLY, 1,
                              [&] { KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2); });
}

SIMTEST(deque_of_empty_queue) {
    simtest::expect_violation("queue misuse", "deque_empty", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        (void)q.DeQue<half>();
    });
}

SIMTEST(use_after_free_tensor) {
    simtest::expect_violation("use after FreeTensor", "uaf", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<half> t = q.AllocTensor<half>();
        q.FreeTensor(t);
        t.SetValue(0, (half)1);
    });
}

SIMTEST(tensor_used_before_deque) {
    simtest::expect_violation("queue tensor used before DeQue", "before_deque", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 256);
        LocalTensor<half> t = q.AllocTensor<half>();
        q.EnQue(t);
        (void)t.GetValue(0);
    });
}

SIMTEST(queue_roundtrip_ok) {
    simtest::run_ok("queue_ok", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 2, 256);
        for (int i = 0; i < 4; ++i) {
            LocalTensor<int16_t> t = q.AllocTensor<int16_t>();
            t.SetValue(3, (int16_t)i);
            q.EnQue(t);
            LocalTensor<int16_t> u = q.DeQue<int16_t>();
            CHECK_EQ(u.GetValue(3), i);
            q.FreeTensor(u);
        }
    });
}

SIMTEST(more_than_8_buffers_per_position) {
    simtest::expect_violation("more than 8 buffers per position", "nine", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> a, b;
        pipe.InitBuffer(a, 5, 256);
        pipe.InitBuffer(b, 4, 256);
    });
}

SIMTEST(ub_capacity) {
    simtest::expect_violation("buffer beyond capacity", "ub_full", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a;
        pipe.InitBuffer(a, 192 * 1024 + 32);
    });
}

SIMTEST(ub_not_on_aic) {
    simtest::expect_violation("memory not on this core type", "ub_aic", KERNEL_TYPE_AIC_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a;
        pipe.InitBuffer(a, 256);
        a.Get<half>().SetValue(0, (half)1);
    });
}

SIMTEST(unpaired_wait_flag) {
    simtest::expect_violation("unpaired WaitFlag", "wait", KERNEL_TYPE_AIV_ONLY, 1,
                              [&] { WaitFlag<HardEvent::MTE2_V>(0); });
}

SIMTEST(set_flag_twice) {
    simtest::expect_violation("unpaired SetFlag", "set2", KERNEL_TYPE_AIV_ONLY, 1, [&] {
        SetFlag<HardEvent::MTE2_V>(1);
        SetFlag<HardEvent::MTE2_V>(1);
    });
}
