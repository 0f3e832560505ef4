// ascendc_sim/sync.h: intra-core pipe synchronisation, inter-core flags and
// barriers, DMA atomics and data-cache maintenance (ascendc-api.md section 6).
#pragma once

#include "ascendc_sim/tensor.h"

namespace AscendC {

namespace sim_detail {
inline uint8_t trace_pipe(pipe_t p) {
    switch (p) {
        case PIPE_S: return ASCSIM_PIPE_S;
        case PIPE_V: return ASCSIM_PIPE_V;
        case PIPE_M: return ASCSIM_PIPE_M;
        case PIPE_MTE1: return ASCSIM_PIPE_MTE1;
        case PIPE_MTE2: return ASCSIM_PIPE_MTE2;
        case PIPE_MTE3: return ASCSIM_PIPE_MTE3;
        case PIPE_FIX: return ASCSIM_PIPE_FIX;
        default: return ASCSIM_PIPE_NONE;
    }
}
}  // namespace sim_detail

// Orders the instructions of one pipe (PIPE_ALL: of every pipe, and the
// scalar unit waits for them): later instructions start once the earlier
// ones have finished all their reads and writes.
template <pipe_t pipe>
__aicore__ inline void PipeBarrier() {
    ASCSIM_API("PipeBarrier");
    if (pipe == PIPE_S) ascsim::fail("invalid pipe", "PipeBarrier<PIPE_S> is not allowed");
    uint8_t p = sim_detail::trace_pipe(pipe);
    ascsim::hz_pipe_barrier(p);
    ascsim::record_sync(ASCSIM_EV_PIPE_BARRIER, p, 0, 0);
}

// SetFlag fires once every earlier instruction of the source pipe is done;
// WaitFlag holds the destination pipe until then. In a kernel with a TPipe
// the id must come from the pipe (AllocEventID / FetchEventID): its queues
// take their ids from the same 8 per event.
template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID) {
    ASCSIM_API("SetFlag");
    if (eventID < 0 || eventID > 7) ascsim::fail("invalid event id", ascsim::fmt("event id %d outside 0..7", eventID));
    ascsim::hz_set_flag(static_cast<int>(event), eventID, ascsim::EventOrigin::User);
    uint8_t src, dst;
    sim_detail::event_pipes(event, src, dst);
    ascsim::record_sync(ASCSIM_EV_SET_FLAG, src, static_cast<int32_t>(event), eventID);
}

template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID) {
    ASCSIM_API("WaitFlag");
    if (eventID < 0 || eventID > 7) ascsim::fail("invalid event id", ascsim::fmt("event id %d outside 0..7", eventID));
    ascsim::hz_wait_flag(static_cast<int>(event), eventID, ascsim::EventOrigin::User);
    uint8_t src, dst;
    sim_detail::event_pipes(event, src, dst);
    ascsim::record_sync(ASCSIM_EV_WAIT_FLAG, dst, static_cast<int32_t>(event), eventID);
}

// ---- inter-core ------------------------------------------------------------

template <uint8_t modeId, pipe_t pipe>
__aicore__ inline void CrossCoreSetFlag(uint16_t flagId) {
    ASCSIM_API("CrossCoreSetFlag");
    ascsim::cross_core_set(modeId, flagId, sim_detail::trace_pipe(pipe));
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
__aicore__ inline void CrossCoreWaitFlag(uint16_t flagId) {
    ASCSIM_API("CrossCoreWaitFlag");
    ascsim::cross_core_wait(flagId);
}

// Hardware barrier; needs a MIX kernel type.
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll() {
    ASCSIM_API("SyncAll");
    ascsim::sync_all_hw(isAIVOnly);
}

// Software barrier through a zero-initialised GM workspace (vector only).
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                               const int32_t usedCores = 0) {
    ASCSIM_API("SyncAll(soft)");
    if (GetTPipePtr() == nullptr) ascsim::fail("soft SyncAll without TPipe", "the soft SyncAll requires a TPipe");
    {
        ASCSIM_INSTR(ASCSIM_PIPE_MTE2);
        (void)ubWorkspace.span(0, 8, ascsim::Acc::Write);
    }
    ascsim::sync_all_soft(reinterpret_cast<uint64_t>(gmWorkspace.GetPhyAddr()), usedCores);
}

// Sets the FFTS base address on kernel-direct mix launches; the simulator
// needs none but accepts the call.
__aicore__ inline void SetSyncBaseAddr(uint64_t) {}

// ---- DMA atomics -------------------------------------------------------------

template <typename T>
__aicore__ inline void SetAtomicAdd() {
    ASCSIM_API("SetAtomicAdd");
    if constexpr (!ascsim::one_of_v<T, int8_t, int16_t, half, bfloat16_t, int32_t, float>) {
        ascsim::unsupported_dtype<T>("SetAtomicAdd");
    } else if constexpr (std::is_same_v<T, int8_t>) {
        ascsim::core().atomic_dtype = 1;
    } else if constexpr (std::is_same_v<T, int16_t>) {
        ascsim::core().atomic_dtype = 2;
    } else if constexpr (std::is_same_v<T, half>) {
        ascsim::core().atomic_dtype = 3;
    } else if constexpr (std::is_same_v<T, bfloat16_t>) {
        ascsim::core().atomic_dtype = 4;
    } else if constexpr (std::is_same_v<T, int32_t>) {
        ascsim::core().atomic_dtype = 5;
    } else {
        ascsim::core().atomic_dtype = 6;
    }
}
__aicore__ inline void SetAtomicNone() { ascsim::core().atomic_dtype = 0; }
__aicore__ inline void DisableDmaAtomic() { SetAtomicNone(); }

// ---- data cache -------------------------------------------------------------

enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    ASCSIM_API("DataCacheCleanAndInvalid");
    ASCSIM_INSTR(ASCSIM_PIPE_S);
    const void* line = entireType == CacheLine::SINGLE_CACHE_LINE ? static_cast<const void*>(dst.GetPhyAddr()) : nullptr;
    ascsim::dcache_clean_invalidate(line, dcciDst != DcciDst::CACHELINE_UB);
    ASCSIM_RECORD("DataCacheCleanAndInvalid", ASCSIM_PIPE_S, 1, 64);
}
template <typename T, CacheLine entireType>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    DataCacheCleanAndInvalid<T, entireType, DcciDst::CACHELINE_OUT>(dst);
}

}  // namespace AscendC
