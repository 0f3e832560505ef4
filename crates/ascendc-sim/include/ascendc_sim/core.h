// ascendc_sim/core.h: base types, macros, enums and the per-core context of
// the ascend-scan CPU simulator of the AscendC programming model (Atlas A2,
// NPU arch 2201). Facts: docs/simulator.md, docs/ascendc-identifiers.md. Written from the
// documented semantics; no vendor code.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ascsim/sim.h"

#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
#ifndef __CCE_AICORE__
#define __CCE_AICORE__ 220
#endif

// In CPU builds the address-space and entry qualifiers are empty.
#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR uint8_t*

// ---------------------------------------------------------------- scalars

using half = _Float16;

// bfloat16: 1 sign, 8 exponent, 7 mantissa bits; conversion from float rounds
// to nearest even (NaN stays NaN).
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    bfloat16_t(float f) {  // NOLINT: implicit like the device type
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) {
            bits = static_cast<uint16_t>((u >> 16) | 0x40u);
        } else {
            uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
            bits = static_cast<uint16_t>((u + rounding) >> 16);
        }
    }
    operator float() const {
        uint32_t u = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    static bfloat16_t from_bits(uint16_t b) {
        bfloat16_t r;
        r.bits = b;
        return r;
    }
};

// ---------------------------------------------------------------- kernel types

enum KernelMetaType : uint8_t {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
    KERNEL_TYPE_MAX
};

// Global pipe and event enums, as the CCE compiler declares them.
enum pipe_t : uint8_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX = 10 };
enum event_t : uint8_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

// ---------------------------------------------------------------- simulator core

namespace ascsim {

enum class CoreKind : uint8_t { AIC = 0, AIV = 1 };

// Physical on-chip memories of a core.
enum class Mem : uint8_t { UB = 0, L1, L0A, L0B, L0C, BT, FB, COUNT };
const char* mem_name(Mem m);

struct Launch;
struct BufState;

// Raised (as a C++ exception) when a kernel breaks a rule; the launcher turns
// it into a failed launch with the message.
struct Violation {
    std::string message;
};

// Per-queue-buffer state for the queue checks (DeQue of empty queue, use
// after FreeTensor, access while enqueued).
enum class BufPhase : uint8_t { Free, Allocated, Enqueued, Dequeued, Scratch };
struct BufState {
    uint32_t id = 0;
    uint32_t generation = 0;
    BufPhase phase = BufPhase::Scratch;
    int32_t queue_id = -1;
    // The buffer's hardware events while they are in flight, as the real
    // TQue keeps them: the EnQue set (waited by DeQue) and the FreeTensor
    // set (waited by the next AllocTensor or by the TPipe's destruction);
    // -1 when none is pending.
    int8_t enque_event_id = -1;
    int8_t free_event_id = -1;
    uint8_t enque_event = 0;  // HardEvent of the EnQue -> DeQue edge
    uint8_t free_event = 0;   // HardEvent of the FreeTensor -> AllocTensor edge
};

struct DCacheLine {
    uint8_t data[64];
    uint64_t dirty_mask;  // one bit per byte
};

struct CoreCtx {
    Launch* launch = nullptr;
    uint32_t core_id = 0;  // index in the launch: AICs first, then AIVs
    CoreKind kind = CoreKind::AIV;
    int64_t block_idx = 0;      // GetBlockIdx
    int64_t block_num = 1;      // GetBlockNum
    int64_t sub_block_idx = 0;  // GetSubBlockIdx
    int64_t sub_block_num = 1;  // GetSubBlockNum
    int64_t task_ratio = 1;     // GetTaskRatio
    uint32_t group = 0;         // AI core (AIC + its AIVs) index
    std::vector<uint8_t> mem[static_cast<int>(Mem::COUNT)];
    // Vector mask register (Normal mode: 128 bits; Counter mode: count in lo).
    bool mask_counter = false;
    uint64_t mask_hi = ~0ull;
    uint64_t mask_lo = ~0ull;
    // DMA atomic mode (SetAtomicAdd<T>): 0 = none, else sizeof-tag of T.
    int atomic_dtype = 0;
    // Data cache of scalar GM accesses: line address -> line.
    std::vector<std::pair<uint64_t, DCacheLine>> dcache;
    // In-core hazard checker state (cpp/hazard.cpp); null when it is off.
    struct HzCore* hz = nullptr;
    void* tpipe = nullptr;
    bool kernel_type_declared = false;
    std::vector<ascsim_event> trace;
    uint64_t gm_read = 0;
    uint64_t gm_written = 0;
    const char* api = "";  // the API call being executed (for diagnostics)
};

// The context of the calling (simulated) core; aborts if called outside a launch.
CoreCtx& core();
bool in_kernel();

// Stop the launch: rule name and details. Never returns.
[[noreturn]] void fail(const char* rule, const std::string& detail);
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

// Sets the API name used in diagnostics for the current scope.
struct ApiScope {
    const char* prev;
    explicit ApiScope(const char* name) : prev(core().api) { core().api = name; }
    ~ApiScope() { core().api = prev; }
    ApiScope(const ApiScope&) = delete;
    ApiScope& operator=(const ApiScope&) = delete;
};
#define ASCSIM_API(name) ::ascsim::ApiScope ascsim_api_scope_(name)

// Trace recording. op names are interned once per call site.
uint16_t intern_op(const char* name);
void record(uint16_t op, uint8_t pipe, uint32_t repeats, uint64_t bytes, uint64_t gm_addr = 0,
            uint64_t gm_bytes = 0, bool gm_write = false, uint8_t attr = ASCSIM_ATTR_NONE);
void record_sync(uint8_t kind, uint8_t pipe, int32_t a, int32_t b, int32_t peer = -1, uint32_t seq = 0);
#define ASCSIM_RECORD(name, pipe, repeats, bytes, ...)                    \
    do {                                                                  \
        static const uint16_t ascsim_op_id_ = ::ascsim::intern_op(name); \
        ::ascsim::record(ascsim_op_id_, pipe, repeats, bytes, ##__VA_ARGS__); \
    } while (0)

// GM access by DMA: checks the range lies in a device allocation, applies the
// GM race rule, counts traffic. Stores honour the DMA atomic mode
// (SetAtomicAdd<T>: element-wise add of T instead of overwrite). They do not
// record trace events: the calling API records one event for the whole call.
void gm_dma_load(void* dst, const void* gm_addr, uint64_t bytes);
// The device address traces give for host pointer `p` into a device
// allocation (the launch's traces are rewritten to these when it ends);
// 0 if `p` is in no allocation.
uint64_t trace_address(const void* p);
void gm_dma_store(void* gm_addr, const void* src, uint64_t bytes);
// Scalar GM access through the core's data cache (GlobalTensor Get/SetValue).
void gm_scalar_read(const void* addr, void* out, uint32_t bytes);
void gm_scalar_write(void* addr, const void* in, uint32_t bytes);
// DataCacheCleanAndInvalid: one 64-byte line (addr) or all lines (addr null).
void dcache_clean_invalidate(const void* addr, bool write_back);

// Local memory of the current core: base pointer and size; fails when the
// memory does not exist on this core type.
uint8_t* local_base(Mem m);
uint64_t local_size(Mem m);

// Inter-core synchronisation primitives (runtime.cpp).
void cross_core_set(uint8_t mode, uint16_t flag_id, uint8_t pipe);
void cross_core_wait(uint16_t flag_id);
void sync_all_hw(bool aiv_only);
void sync_all_soft(uint64_t gm_addr, int32_t used_cores);
void declare_kernel_type(KernelMetaType t);
KernelMetaType launch_kernel_type();
uint32_t physical_cores(CoreKind k);

// Element type tags used in diagnostics and checks.
template <typename T>
constexpr const char* type_name() {
    if constexpr (std::is_same_v<T, half>) return "half";
    else if constexpr (std::is_same_v<T, bfloat16_t>) return "bfloat16_t";
    else if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
    else if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
    else if constexpr (std::is_same_v<T, int16_t>) return "int16_t";
    else if constexpr (std::is_same_v<T, uint16_t>) return "uint16_t";
    else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
    else if constexpr (std::is_same_v<T, uint32_t>) return "uint32_t";
    else if constexpr (std::is_same_v<T, int64_t>) return "int64_t";
    else if constexpr (std::is_same_v<T, uint64_t>) return "uint64_t";
    else return "?";
}

// Unsupported dtype for an op on A2.
template <typename T>
[[noreturn]] void unsupported_dtype(const char* op) {
    fail("unsupported dtype on A2", fmt("%s does not accept %s on Atlas A2", op, type_name<T>()));
}

template <typename T, typename... Ts>
constexpr bool one_of_v = (std::is_same_v<T, Ts> || ...);

// ---------------------------------------------------------------- hazard checker
//
// The pipes of one core (S, V, M, MTE1, MTE2, MTE3, FIX) run asynchronously
// on hardware. Every API call that does work is one instruction on one pipe
// (ASCSIM_INSTR); its accesses to local memory (by 32-byte granule) and to GM
// are checked against the earlier accesses of the core: two accesses to the
// same bytes, at least one a write, must be ordered by an edge the hardware
// has (SetFlag/WaitFlag, PipeBarrier, the queue's EnQue/DeQue and
// FreeTensor/AllocTensor, CrossCore flags and SyncAll); else the launch stops
// with rule "in-core race". See docs/simulator.md.

// How an instruction touches a range.
enum class Acc : uint8_t { None, Read, Write, ReadWrite };

// Who sets or waits an event: kernel code, a TQue, or the TPipe itself.
enum class EventOrigin : uint8_t { User, Queue, Pipe };

// The instruction of the current API call on `pipe` (ASCSIM_PIPE_*). Nested
// scopes (an API implemented through another) join the outermost one.
// `hw_orders_same_pipe`: the hardware itself orders this instruction after
// the earlier ones of its pipe (documented for large accumulating Mmads).
class Instr {
public:
    explicit Instr(uint8_t pipe, bool hw_orders_same_pipe = false);
    ~Instr();
    Instr(const Instr&) = delete;
    Instr& operator=(const Instr&) = delete;

private:
    bool outer_;
};
#define ASCSIM_INSTR(...) ::ascsim::Instr ascsim_instr_(__VA_ARGS__)

// Accesses of the current instruction: bytes [addr, addr + bytes) of local
// memory m, or bytes of 32-byte granules of it (masks[i]: bit j = byte j of
// granules[i]; null: whole granules).
void hz_range(Mem m, uint64_t addr, uint64_t bytes, Acc a);
void hz_granules(Mem m, const uint32_t* granules, const uint32_t* masks, size_t count, Acc a);

// Intra-core sync edges. `event` is a HardEvent.
void hz_set_flag(int event, int id, EventOrigin who);
void hz_wait_flag(int event, int id, EventOrigin who);
void hz_pipe_barrier(uint8_t pipe);  // ASCSIM_PIPE_NONE: PIPE_ALL
// The event ids of the TPipe (AllocEventID / ReleaseEventID / FetchEventID).
int hz_event_alloc(int event, EventOrigin who);
void hz_event_release(int event, int id, EventOrigin who);
int hz_event_fetch(int event);
// Buffers of the TPipe, named in diagnostics.
void hz_name_region(Mem m, uint64_t addr, uint64_t bytes, const std::string& name);
// The 32-bit word that poisons memory the docs leave undefined, little-endian
// by address: ASCSIM_POISON (hex), by default 7FFFFFFF (bytes FF FF FF 7F, so
// that every aligned float, half and bfloat16 is a NaN and every int32 is
// INT32_MAX or -1). CI also runs the kernel tests under a finite poison: a
// NaN can hide a read of garbage behind a kernel's non-finite fallback, a
// finite one cannot (docs/simulator.md).
inline uint32_t poison_word() {
    static const uint32_t word = [] {
        const char* v = std::getenv("ASCSIM_POISON");
        if (v == nullptr || *v == '\0') return 0x7fffffffu;
        char* end = nullptr;
        const unsigned long long w = std::strtoull(v, &end, 16);
        if (*end != '\0' || w > 0xffffffffull) {
            std::fprintf(stderr, "ASCSIM_POISON=%s: expected a 32-bit hex word such as 3C003C00\n", v);
            std::abort();
        }
        return static_cast<uint32_t>(w);
    }();
    return word;
}
// Poisons memory the docs leave undefined (fresh local and device memory,
// unrequested DataCopyPad filler) with poison_word().
inline void poison(void* p, size_t bytes) {
    const uint32_t word = poison_word();
    auto* b = static_cast<uint8_t*>(p);
    for (size_t i = 0; i < bytes; ++i)
        b[i] = static_cast<uint8_t>(word >> (8 * (reinterpret_cast<uintptr_t>(b + i) & 3)));
}
// Whether the checker runs in this launch (ASCSIM_HAZARDS=0 turns it off).
bool hz_enabled();

// The interned name of an API (a string literal), cached per thread:
// intern_op takes a global lock, the cache keeps the cores from contending.
inline uint16_t op_id(const char* name) {
    thread_local std::vector<std::pair<const char*, uint16_t>> cache;
    for (auto& p : cache)
        if (p.first == name) return p.second;
    uint16_t id = intern_op(name);
    cache.emplace_back(name, id);
    return id;
}

}  // namespace ascsim

// ---------------------------------------------------------------- AscendC basics

namespace AscendC {

enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX
};
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX
};

enum CoreType : uint8_t { AIC = 0, AIV = 1, MIX = 2 };

inline ascsim::Mem mem_of(TPosition p) {
    switch (p) {
        case TPosition::VECIN:
        case TPosition::VECOUT:
        case TPosition::VECCALC:
            return ascsim::Mem::UB;
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1:
        case TPosition::TSCM:
            return ascsim::Mem::L1;
        case TPosition::A2:
            return ascsim::Mem::L0A;
        case TPosition::B2:
            return ascsim::Mem::L0B;
        case TPosition::CO1:
            return ascsim::Mem::L0C;
        case TPosition::C2:
            return ascsim::Mem::BT;
        case TPosition::C2PIPE2GM:
            return ascsim::Mem::FB;
        default:
            ascsim::fail("invalid position", "TPosition has no on-chip memory on Atlas A2 (CO2 and GM are global memory)");
    }
}

// Identity of the running core (documented ranges, ascendc-api.md 1.2).
inline int64_t GetBlockIdx() { return ascsim::core().block_idx; }
inline int64_t GetBlockNum() { return ascsim::core().block_num; }
inline int64_t GetSubBlockIdx() { return ascsim::core().sub_block_idx; }
inline int64_t GetSubBlockNum() { return ascsim::core().sub_block_num; }
inline int64_t GetTaskRatio() { return ascsim::core().task_ratio; }

inline bool sim_core_is_aic() { return ascsim::core().kind == ascsim::CoreKind::AIC; }

}  // namespace AscendC

// In CPU builds ASCEND_IS_AIC/AIV are runtime predicates so that
// `if ASCEND_IS_AIC { ... }` parses.
#define ASCEND_IS_AIC (::AscendC::sim_core_is_aic())
#define ASCEND_IS_AIV (!::AscendC::sim_core_is_aic())
#define ASCEND_IS_NOT_AIC (!::AscendC::sim_core_is_aic())
#define ASCEND_IS_NOT_AIV (::AscendC::sim_core_is_aic())

#define KERNEL_TASK_TYPE_DEFAULT(value) ::ascsim::declare_kernel_type(value)
