// hazard_state.h: the per-core state of the in-core hazard checker, shared
// by hazard.cpp (the checks) and runtime.cpp (inter-core edges, GM races).
// Internal to the simulator runtime.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernel_operator.h"

namespace ascsim {

// Clock components per core: one per pipe (ascsim_pipe S..FIX = 0..6).
constexpr uint32_t kPipeSlots = 8;
constexpr uint32_t kPipes = 7;
constexpr int kEvents = static_cast<int>(AscendC::HardEvent::MAX);

// Last accesses of one 32-byte granule of a local memory: the last write and,
// per pipe, the last read since that write (timestamps are per-pipe
// instruction numbers, 0 = none).
// The accesses of one 32-byte granule of a local memory, byte-exact (bit i
// of a mask = byte i of the granule; timestamps are per-pipe instruction
// numbers). Each byte's last write, and its reads since, live in the slots
// (one access of one pipe each; a later access of a byte takes it out of the
// earlier slot of its kind), so every check compares with the exact access.
struct Slot {
    uint32_t ts = 0;
    uint32_t mask = 0;  // 0: the slot is free
    uint16_t op = 0;
    uint8_t pipe = 0;
    uint8_t write = 0;
};
struct Granule {
    static constexpr int kSlots = 6;
    Slot s[kSlots];
    // An earlier write that a later one (pipe x_pipe2, op x_op2) was not
    // ordered after: its bytes (x.mask) hold either value, so reading them is
    // a race until a write ordered after the earlier one rewrites them.
    Slot x;
    uint16_t x_op2 = 0;
    uint8_t x_pipe2 = 0;
};

// Granules of one local memory, allocated in pages on first touch.
struct Shadow {
    static constexpr uint32_t kPage = 128;  // granules per page (4 KB of memory)
    std::vector<std::unique_ptr<Granule[]>> pages;
    Granule& at(uint32_t g) {
        auto& p = pages[g / kPage];
        if (!p) p.reset(new Granule[kPage]());
        return p[g % kPage];
    }
};

// One (HardEvent, id) flag of the core.
struct FlagSlot {
    bool pending = false;
    EventOrigin who = EventOrigin::User;
    uint16_t set_op = 0;
    std::vector<uint32_t> snap;  // what the SetFlag's source pipe knew
};

struct Region {
    Mem m;
    uint64_t lo, hi;
    std::string name;
};

// Vector clocks: know[p][c * kPipeSlots + q] = the number of instructions of
// pipe q of core c known finished before pipe p's next instruction starts.
struct HzCore {
    bool on = true;         // access tracking and clocks (ASCSIM_HAZARDS)
    uint32_t self = 0;      // core index in the launch
    uint32_t width = 0;     // clock width: cores * kPipeSlots
    uint32_t issued[kPipeSlots] = {};
    std::vector<uint32_t> know[kPipeSlots];
    // The scalar unit issues every instruction: what it has waited for
    // reaches each pipe's next instruction (joined lazily by version).
    uint64_t s_version = 1;
    uint64_t joined[kPipeSlots] = {};
    Shadow shadow[static_cast<int>(Mem::COUNT)];
    FlagSlot flags[kEvents][8];
    uint8_t occupied[kEvents] = {};    // ids held by the TPipe (queues, AllocEventID, reserved)
    uint8_t user_owned[kEvents] = {};  // ids the kernel reserved with AllocEventID
    uint8_t fetched[kEvents] = {};     // ids FetchEventID handed out that are still free
    std::vector<Region> regions;
    // The current instruction.
    int cur_pipe = -1;
    uint32_t cur_ts = 0;
    uint16_t cur_op = 0;
    bool cur_hw_same = false;
    uint32_t races = 0;  // reported and passed over (ASCSIM_HAZARDS=all)
    // The full clock this core published at its last soft SyncAll arrival.
    std::vector<uint32_t> published;

    uint32_t own(uint32_t pipe) const { return self * kPipeSlots + pipe; }
};

// Sets up the state of a core of a launch of `cores` cores.
void hz_init(CoreCtx& c, uint32_t cores, bool on);
// What an edge leaving `pipe` now carries: everything that pipe knows plus
// all its issued instructions (its SetFlag fires after them).
std::vector<uint32_t> hz_snapshot(uint8_t pipe);
// PIPE_ALL: everything every pipe of the core knows or has issued.
std::vector<uint32_t> hz_full_snapshot();
// A wait that holds every later instruction of the core (CrossCoreWaitFlag).
void hz_join_wait(const std::vector<uint32_t>& v);
// A barrier after which every pipe knows `v` (SyncAll).
void hz_join_barrier(const std::vector<uint32_t>& v);
// The kernel body returned: no SetFlag may be left pending.
void hz_end_of_kernel();
// GM: the writer identity of the current instruction and whether an earlier
// access by `thread` (core * kPipeSlots + pipe) at `epoch` is ordered before it.
uint32_t hz_thread();
uint32_t hz_epoch();
bool hz_ordered(uint32_t thread, uint32_t epoch);
// Why (thread, epoch) is not ordered before the current instruction, for
// a diagnostic: the missing edge between the two pipes of one core.
std::string hz_missing_edge(uint32_t earlier_pipe, uint32_t later_pipe);
const char* pipe_name(uint32_t pipe);
// The name of the running launch's kernel.
const std::string& launch_kernel_name();

}  // namespace ascsim
