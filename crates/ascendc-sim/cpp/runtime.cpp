// runtime.cpp: the simulator runtime. Devices and GM allocations (ACL host
// subset), kernel launches with one thread per simulated core under a
// cooperative scheduler (deterministic; a deadlock is detected exactly), the
// inter-core synchronisation primitives, the GM race rule (vector clocks per
// core, last-writer shadow per 32-byte block), the scalar data cache, and the
// per-core trace.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "acl/acl.h"
#include "ascendc_sim/launch.h"
#include "hazard_state.h"
#include "kernel_operator.h"

namespace ascsim {
namespace {

constexpr uint64_t kBlock = 32;   // GM race granule (DMA block)
constexpr uint64_t kLine = 64;    // DCache line
constexpr int kFlagIds = 16;      // 4-bit flag ids
constexpr int kFlagMax = 15;      // 4-bit counters

// ---------------------------------------------------------------- GM shadow

// One access of some bytes of a 32-byte block: instruction `epoch` of clock
// component `thread` (core * kPipeSlots + pipe), API `op`.
struct GmAccess {
    uint32_t launch = 0;  // launch serial the entry belongs to (stale otherwise)
    uint32_t mask = 0;    // bytes of the block
    uint32_t epoch = 0;
    uint16_t thread = 0;  // top bit: an atomic write
    uint16_t op = 0;
    uint32_t pipe_thread() const { return thread & 0x7fffu; }
    bool atomic() const { return (thread & 0x8000u) != 0; }
};

// Last writers and readers of a block, byte-exact: DataCopyPad writes exactly
// the bytes it is asked for, so two cores may each own part of a block (rows
// of a batch meeting inside a block). Two slots of each cover that; a third
// concurrent access evicts one (the check stays sound for what is tracked).
struct Shadow {
    GmAccess w[2];
    GmAccess r[2];
};

// Stream order (the host-side race rule): the host and every stream are
// agents with vector clocks. A launch on a stream is ordered after what the
// host did before enqueuing it; an event carries its stream's clock to the
// streams that wait for it; a synchronisation carries a stream's clock to
// the host. Per allocation, each agent's latest read and write are kept
// (times of that agent's clock); an access is a race when another agent's
// conflicting access is not in the accessor's clock.
struct AgentAccess {
    uint64_t read = 0, write = 0;  // agent-clock times (0: none)
    std::string reader, writer;    // what did it (for the message)
};

struct Allocation {
    uint8_t* base = nullptr;
    uint64_t size = 0;      // usable bytes (requested size rounded up to 32 + 32)
    uint64_t requested = 0;
    int32_t device = 0;
    uint64_t dev_addr = 0;  // where it lies in its device's address space (traces use it)
    std::vector<Shadow> shadow;  // lazily sized on first kernel access
    std::map<uint32_t, AgentAccess> order;  // by agent (0 = the host)
};

struct Device {
    ascsim_soc soc{};
    bool configured = false;
    uint64_t allocated = 0;
    uint64_t mallocs = 0;      // successful aclrtMalloc calls
    // The device address space: start -> size of each live allocation. Traces
    // give GM addresses in it, not host addresses, so that the cost model's L2
    // sets do not depend on where the host heap put a buffer (which varies
    // from run to run): the same allocations give the same addresses.
    std::map<uint64_t, uint64_t> dev_ranges;
    std::string pending_race;  // a race found by aclrtFree, reported at the next synchronisation
};

using Clock = std::vector<uint64_t>;  // by agent id

void join_into(Clock& into, const Clock& from) {
    if (into.size() < from.size()) into.resize(from.size(), 0);
    for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

uint64_t clock_at(const Clock& c, uint32_t agent) { return agent < c.size() ? c[agent] : 0; }

uint64_t tick(Clock& c, uint32_t agent) {
    if (c.size() <= agent) c.resize(agent + 1, 0);
    return ++c[agent];
}

struct LaunchRecord {
    ascsim_launch_info info{};
    std::string error;
    std::vector<std::vector<ascsim_event>> traces;
    std::vector<uint32_t> kinds;
    std::vector<uint32_t> block_idx;
};

struct Stream {
    int32_t device = 0;
    uint32_t agent = 0;  // stream-order agent id (> 0)
    Clock clock;
    std::vector<LaunchRecord> launches;
    size_t synced = 0;  // launches already reported by aclrtSynchronizeStream
};

std::mutex g_mu;  // guards everything below
std::map<int32_t, Device> g_devices;
std::map<uintptr_t, Allocation> g_allocs;
std::vector<std::unique_ptr<Stream>> g_streams;
Stream* g_default_stream[64] = {};
bool g_initialized = false;
std::atomic<uint32_t> g_launch_serial{0};
std::deque<std::string> g_op_names;
uint32_t g_next_agent = 0;  // agent ids handed out (0 is the host)
Clock g_host_clock;         // the host's clock (all host threads are one agent)

struct Event {
    bool recorded = false;
    int32_t device = 0;
    Clock clock;  // its stream's clock at the last aclrtRecordEvent
};
std::vector<std::unique_ptr<Event>> g_events;

thread_local int32_t t_device = -1;
thread_local std::string t_err;

Allocation* find_alloc_locked(uintptr_t addr, uint64_t bytes) {
    auto it = g_allocs.upper_bound(addr);
    if (it == g_allocs.begin()) return nullptr;
    --it;
    Allocation& a = it->second;
    uintptr_t base = reinterpret_cast<uintptr_t>(a.base);
    // Without `addr + bytes`, which wraps for huge counts.
    if (addr >= base && bytes <= a.size && addr - base <= a.size - bytes) return &a;
    return nullptr;
}

// The lowest free range of `bytes` in the device's address space (512-byte
// aligned, like the host memory behind it); marks it used.
uint64_t place_on_device(Device& d, uint64_t bytes) {
    constexpr uint64_t kBase = uint64_t{1} << 32, kAlign = 512;
    uint64_t at = kBase;
    for (const auto& r : d.dev_ranges) {
        if (at + bytes <= r.first) break;
        at = std::max(at, (r.first + r.second + kAlign - 1) / kAlign * kAlign);
    }
    d.dev_ranges[at] = bytes;
    return at;
}

// The device address of host address `addr` inside allocation `a`.
uint64_t device_address(const Allocation& a, uintptr_t addr) {
    return a.dev_addr + (addr - reinterpret_cast<uintptr_t>(a.base));
}

// Rewrites the GM addresses of a launch's traces from host to device
// addresses (Allocation::dev_addr).
void trace_device_addresses_locked(std::vector<std::vector<ascsim_event>>& traces) {
    const Allocation* last = nullptr;
    for (auto& trace : traces)
        for (ascsim_event& e : trace) {
            if (e.gm_addr == 0) continue;
            uintptr_t addr = static_cast<uintptr_t>(e.gm_addr);
            const uintptr_t base = last ? reinterpret_cast<uintptr_t>(last->base) : 0;
            if (!last || addr < base || addr - base >= last->size) {
                last = find_alloc_locked(addr, 0);
                if (!last) continue;
            }
            e.gm_addr = device_address(*last, addr);
        }
}

// ---------------------------------------------------------------- leak report

// Whether live allocations are reported at aclrtResetDevice and at process
// exit: ASCSIM_LEAK_REPORT=1 turns it on, =0 off; without the variable it
// is on in builds with ASCSIM_LEAK_REPORT_DEFAULT (the ascendc-sim build
// script defines it when Cargo builds with debug assertions).
bool leak_report_enabled() {
    const char* v = std::getenv("ASCSIM_LEAK_REPORT");
    if (v && *v) return std::strcmp(v, "0") != 0;
#ifdef ASCSIM_LEAK_REPORT_DEFAULT
    return true;
#else
    return false;
#endif
}

// Prints the live allocations of `device` (all devices for -1) to stderr:
// count, bytes and the requested size of each (at most 16 listed).
void report_live_locked(int32_t device, const char* when) {
    uint64_t count = 0, bytes = 0;
    std::string sizes;
    for (const auto& kv : g_allocs) {
        const Allocation& a = kv.second;
        if (device >= 0 && a.device != device) continue;
        ++count;
        bytes += a.size;
        if (count <= 16) {
            sizes += fmt("%s%llu (device %d)", count > 1 ? ", " : "", (unsigned long long)a.requested,
                         a.device);
        }
    }
    if (count == 0) return;
    std::fprintf(stderr, "ascsim: %llu live device allocation%s (%llu bytes) %s: requested sizes %s%s\n",
                 (unsigned long long)count, count == 1 ? "" : "s", (unsigned long long)bytes, when,
                 sizes.c_str(), count > 16 ? ", ..." : "");
}

// Reports what is still allocated when the process exits (destroyed before
// g_allocs, which is defined earlier in this file).
struct ExitReport {
    ~ExitReport() {
        if (!leak_report_enabled()) return;
        std::lock_guard<std::mutex> g(g_mu);
        report_live_locked(-1, "at process exit");
    }
} g_exit_report;

const char* kind_name(CoreKind k) { return k == CoreKind::AIC ? "AIC" : "AIV"; }

// ---------------------------------------------------------------- launch state

enum class CoreState : uint8_t { NotStarted, Runnable, Blocked, Done };

struct Aborted {};  // unwinds a core after another core failed

struct CoreSlot {
    CoreCtx ctx;
    HzCore hz;
    CoreState state = CoreState::NotStarted;
    std::function<bool()> ready;  // when blocked: can it continue?
    std::string waiting_on;       // when blocked: the call, for deadlock reports
    std::thread thread;
};

}  // namespace

struct Pending {
    std::vector<uint32_t> clock;
    int32_t peer;
    uint32_t seq;
};

struct Launch {
    std::string kernel;
    KernelMetaType type = KERNEL_TYPE_AIV_ONLY;
    uint32_t block_dim = 0;
    uint32_t serial = 0;
    const ascsim_soc* soc = nullptr;
    uint32_t n_aic = 0, n_aiv = 0;
    std::vector<std::unique_ptr<CoreSlot>> cores;
    const std::function<void()>* body = nullptr;

    std::mutex mu;
    std::condition_variable cv;
    int running = -1;
    bool failed = false;
    bool finished = false;
    std::string error;
    std::chrono::steady_clock::time_point start;

    // Cross-core flags: per core, per flag id, the pending sets (clock, origin).
    std::vector<std::array<std::deque<Pending>, kFlagIds>> flags;
    // Group rounds for modes 0/1 and the AIV->AIC direction of mode 2:
    // key (group key, flag) -> per member pending set counts.
    std::map<std::pair<uint64_t, uint16_t>, std::map<uint32_t, std::deque<Pending>>> rounds;
    // The sequence numbers of the open rounds of each key, oldest first: every
    // member's set of a round is traced with its round's number, so the cost
    // model can join all of them (not the one that came last on the host).
    std::map<std::pair<uint64_t, uint16_t>, std::deque<uint32_t>> round_seqs;
    uint32_t cross_seq = 0;
    // Hardware SyncAll barrier.
    uint32_t barrier_arrived = 0;
    uint32_t barrier_round = 0;
    std::map<uint32_t, std::vector<uint32_t>> barrier_clock;  // per round
    // The hazard checker (ASCSIM_HAZARDS=0 turns it off for benchmarking).
    bool hazards = true;
    // ASCSIM_SCHEDULE_SEED: the scheduler picks the next core at random and
    // preempts cores at random at their GM writes, loads and CrossCore sets
    // (a kernel's answer must not depend on the order its cores run in).
    bool shuffle = false;
    std::mt19937_64 rng;
    // Allocations the kernel touched (base address; 1 read, 2 written), for
    // the host-side race rule. Guarded by g_mu.
    std::vector<std::pair<uintptr_t, uint8_t>> touched;
};

namespace {

thread_local CoreCtx* t_core = nullptr;
thread_local CoreSlot* t_slot = nullptr;

void join_clock(std::vector<uint32_t>& dst, const std::vector<uint32_t>& src) {
    for (size_t i = 0; i < dst.size() && i < src.size(); ++i) dst[i] = std::max(dst[i], src[i]);
}

std::string core_label(const CoreCtx& c) {
    char buf[96];
    if (c.kind == CoreKind::AIV && c.sub_block_num > 1) {
        std::snprintf(buf, sizeof buf, "AIV %lld (AI core %u, sub-block %lld)", (long long)c.block_idx, c.group,
                      (long long)c.sub_block_idx);
    } else {
        std::snprintf(buf, sizeof buf, "%s %lld", kind_name(c.kind), (long long)c.block_idx);
    }
    return buf;
}

// ---- cooperative scheduler (call with l->mu held) ----

void start_thread_locked(Launch* l, uint32_t i);

// Whether core slot `s` could run now.
bool can_run_locked(const Launch* l, const CoreSlot& s) {
    switch (s.state) {
        case CoreState::NotStarted: return !l->failed;
        case CoreState::Runnable: return true;
        case CoreState::Blocked: return l->failed || s.ready();
        case CoreState::Done: return false;
    }
    return false;
}

// Picks the next core to run after `from` (which is blocked, done or
// yielding): the next one round the ring that can run, or with a schedule
// seed any of them at random. Returns false when nothing can run.
bool schedule_next_locked(Launch* l, uint32_t from, bool include_from) {
    uint32_t n = static_cast<uint32_t>(l->cores.size());
    std::vector<uint32_t> ready;
    for (uint32_t k = 1; k <= n; ++k) {
        uint32_t i = (from + k) % n;
        if (i == from && !include_from) continue;
        if (!can_run_locked(l, *l->cores[i])) continue;
        ready.push_back(i);
        if (!l->shuffle) break;
    }
    if (ready.empty()) return false;
    uint32_t i = ready[l->shuffle ? l->rng() % ready.size() : 0];
    CoreSlot& s = *l->cores[i];
    if (s.state == CoreState::NotStarted) {
        s.state = CoreState::Runnable;
        l->running = static_cast<int>(i);
        start_thread_locked(l, i);
    } else {
        if (s.state == CoreState::Blocked) s.state = CoreState::Runnable;
        l->running = static_cast<int>(i);
    }
    l->cv.notify_all();
    return true;
}

void deadlock_locked(Launch* l) {
    std::string msg = "kernel " + l->kernel + ": rule: deadlock: every unfinished core is waiting:";
    for (auto& s : l->cores) {
        if (s->state == CoreState::Blocked) msg += "\n  " + core_label(s->ctx) + " in " + s->waiting_on;
    }
    l->failed = true;
    l->error = msg;
}

// Called by a finished core (normally or by failure), with l->mu held.
void core_done_locked(Launch* l, uint32_t me) {
    l->cores[me]->state = CoreState::Done;
    if (schedule_next_locked(l, me, false)) return;
    bool all_done = true;
    for (auto& s : l->cores)
        if (s->state != CoreState::Done && !(l->failed && s->state == CoreState::NotStarted)) all_done = false;
    if (!all_done) {
        deadlock_locked(l);
        if (schedule_next_locked(l, me, false)) return;
    }
    l->finished = true;
    l->running = -1;
    l->cv.notify_all();
}

void wait_my_turn(Launch* l, std::unique_lock<std::mutex>& lk, uint32_t me) {
    l->cv.wait(lk, [&] { return l->running == static_cast<int>(me); });
}

// Blocks the calling core until `ready()` holds (evaluated with l->mu held).
void block_until(const std::function<bool()>& ready, const std::string& what) {
    CoreCtx& c = core();
    Launch* l = c.launch;
    std::unique_lock<std::mutex> lk(l->mu);
    if (l->failed) throw Aborted{};
    if (ready()) return;
    CoreSlot& slot = *l->cores[c.core_id];
    slot.state = CoreState::Blocked;
    slot.ready = ready;
    slot.waiting_on = what;
    if (!schedule_next_locked(l, c.core_id, false)) {
        // Nobody else can run and we cannot either.
        deadlock_locked(l);
        if (!schedule_next_locked(l, c.core_id, true)) throw Aborted{};
    }
    wait_my_turn(l, lk, c.core_id);
    slot.ready = nullptr;
    if (l->failed) throw Aborted{};
}

// Lets other runnable cores progress (spin-wait loops on GM).
void yield_core() {
    CoreCtx& c = core();
    Launch* l = c.launch;
    std::unique_lock<std::mutex> lk(l->mu);
    if (l->failed) throw Aborted{};
    if (schedule_next_locked(l, c.core_id, false)) wait_my_turn(l, lk, c.core_id);
    else l->running = static_cast<int>(c.core_id);
    if (l->failed) throw Aborted{};
}

// With a schedule seed, yields to another core one time in `one_in`.
void maybe_preempt(uint32_t one_in) {
    Launch* l = core().launch;
    if (!l->shuffle) return;
    {
        std::lock_guard<std::mutex> g(l->mu);
        if (l->rng() % one_in != 0) return;
    }
    yield_core();
}

uint64_t mem_capacity(const ascsim_soc& soc, Mem m) {
    switch (m) {
        case Mem::UB: return soc.ub_bytes;
        case Mem::L1: return soc.l1_bytes;
        case Mem::L0A: return soc.l0a_bytes;
        case Mem::L0B: return soc.l0b_bytes;
        case Mem::L0C: return soc.l0c_bytes;
        case Mem::BT: return 1024;  // BiasTable 1 KB (asc-devkit 2201 spec)
        case Mem::FB: return 2048;  // Fixpipe buffer 2 KB (asc-devkit 2201 spec)
        default: return 0;
    }
}

bool core_has(CoreKind k, Mem m) { return k == CoreKind::AIV ? m == Mem::UB : m != Mem::UB; }

void core_main(Launch* l, uint32_t me) {
    CoreSlot& slot = *l->cores[me];
    t_core = &slot.ctx;
    t_slot = &slot;
    {
        std::unique_lock<std::mutex> lk(l->mu);
        wait_my_turn(l, lk, me);
    }
    std::string failure;
    bool aborted = false;
    try {
        if (!l->failed) {
            // Local memories hold garbage at start, as on hardware: poison, so
            // that a kernel reading what it never wrote computes with NaN.
            for (int m = 0; m < static_cast<int>(Mem::COUNT); ++m) {
                if (!core_has(slot.ctx.kind, static_cast<Mem>(m))) continue;
                auto& v = slot.ctx.mem[m];
                v.resize(mem_capacity(*l->soc, static_cast<Mem>(m)));
                poison(v.data(), v.size());
            }
            slot.ctx.hz = &slot.hz;
            hz_init(slot.ctx, static_cast<uint32_t>(l->cores.size()), l->hazards);
            (*l->body)();
            hz_end_of_kernel();
            for (auto& line : slot.ctx.dcache) {
                if (line.second.dirty_mask != 0) {
                    fail("scalar GM write not flushed",
                         fmt("GlobalTensor::SetValue data at GM 0x%llx is still in the data cache at kernel end "
                             "(call DataCacheCleanAndInvalid)",
                             (unsigned long long)line.first));
                }
            }
        }
    } catch (const Violation& v) {
        failure = v.message;
    } catch (const Aborted&) {
        aborted = true;
    }
    std::unique_lock<std::mutex> lk(l->mu);
    if (!failure.empty() && !l->failed) {
        l->failed = true;
        l->error = failure;
    }
    (void)aborted;
    core_done_locked(l, me);
    t_core = nullptr;
    t_slot = nullptr;
}

void start_thread_locked(Launch* l, uint32_t i) { l->cores[i]->thread = std::thread(core_main, l, i); }


// ASCSIM_HAZARDS=0 turns the hazard checker (in-core and GM races) off, for
// benchmarking only: such launches are marked unchecked in their reports.
bool hazards_on() {
    const char* v = std::getenv("ASCSIM_HAZARDS");
    return !(v && std::strcmp(v, "0") == 0);
}

// At the end of a launch every CrossCore flag set must have been waited: the
// 4-bit counters would carry into the next kernel on those cores.
void check_cross_flags_drained(Launch* l) {
    for (size_t t = 0; t < l->flags.size(); ++t)
        for (int f = 0; f < kFlagIds; ++f)
            if (!l->flags[t][f].empty()) {
                l->failed = true;
                l->error = fmt("kernel %s: core %s: rule: CrossCore flag never waited: flag %d holds %zu set(s) at "
                               "the end of the launch (a CrossCoreSetFlag without its CrossCoreWaitFlag)",
                               l->kernel.c_str(), core_label(l->cores[t]->ctx).c_str(), f, l->flags[t][f].size());
                return;
            }
    for (auto& r : l->rounds)
        for (auto& member : r.second)
            if (!member.second.empty()) {
                l->failed = true;
                l->error = fmt("kernel %s: core %s: rule: CrossCore flag never waited: its set of group flag %u "
                               "never completed (the other members of the group did not set it)",
                               l->kernel.c_str(), core_label(l->cores[member.first]->ctx).c_str(),
                               static_cast<unsigned>(r.first.second));
                return;
            }
}

Stream* resolve_stream_locked(void* stream) {
    if (stream) return static_cast<Stream*>(stream);
    int32_t d = t_device < 0 ? 0 : t_device;
    if (!g_default_stream[d]) {
        g_streams.push_back(std::make_unique<Stream>());
        g_streams.back()->device = d;
        g_streams.back()->agent = ++g_next_agent;
        g_default_stream[d] = g_streams.back().get();
    }
    return g_default_stream[d];
}

// The host-side race rule for one access to allocation `a` by `agent`, whose
// clock `clock` already counts this access: a read conflicts with another
// agent's write, a write with another agent's read or write, unless the
// clock has it (an event, a synchronisation or host program order in
// between). Stamps the access; returns the first conflict's diagnostic.
std::string order_access(Allocation& a, uint32_t agent, const Clock& clock, bool reads, bool writes,
                         const std::string& what) {
    std::string race;
    for (const auto& kv : a.order) {
        if (kv.first == agent || !race.empty()) continue;
        const AgentAccess& o = kv.second;
        const uint64_t known = clock_at(clock, kv.first);
        const bool after_write = o.write > known;
        if (!after_write && !(writes && o.read > known)) continue;
        const char* fix = agent == 0
                              ? "synchronise first (aclrtSynchronizeStream, or aclrtSynchronizeEvent on an event "
                                "recorded after that work)"
                              : "record an event on the other stream after its work (aclrtRecordEvent) and make this "
                                "stream wait for it (aclrtStreamWaitEvent) before this launch";
        race = fmt("host-side race: %s %s the device allocation at 0x%llx (%llu bytes), which %s %s with nothing "
                   "ordering the two; missing: %s",
                   what.c_str(), writes ? "writes" : "reads",
                   (unsigned long long)reinterpret_cast<uintptr_t>(a.base), (unsigned long long)a.requested,
                   (after_write ? o.writer : o.reader).c_str(), after_write ? "wrote" : "read", fix);
    }
    AgentAccess& mine = a.order[agent];
    const uint64_t now = clock_at(clock, agent);
    if (reads) {
        mine.read = now;
        mine.reader = what;
    }
    if (writes) {
        mine.write = now;
        mine.writer = what;
    }
    return race;
}

// A host access (aclrtMemcpy, aclrtMemset, aclrtFree) to the allocation
// holding `addr`: one tick of the host's clock.
std::string host_access_locked(const void* addr, bool reads, bool writes, const char* what) {
    Allocation* a = find_alloc_locked(reinterpret_cast<uintptr_t>(addr), 1);
    if (!a) return "";
    tick(g_host_clock, 0);
    return order_access(*a, 0, g_host_clock, reads, writes, fmt("%s on the host", what));
}

// The host waits for `st`: the first failure among its launches not yet
// reported, its clock, and a race aclrtFree found on the device.
aclError host_waits_locked(Stream& st) {
    aclError rc = ACL_SUCCESS;
    for (size_t i = st.synced; i < st.launches.size(); ++i) {
        if (st.launches[i].info.status != 0 && rc == ACL_SUCCESS) {
            rc = st.launches[i].info.status;
            t_err = st.launches[i].error;
        }
    }
    st.synced = st.launches.size();
    join_into(g_host_clock, st.clock);
    if (rc != ACL_SUCCESS) return rc;
    Device& d = g_devices[st.device];
    if (d.pending_race.empty()) return ACL_SUCCESS;
    t_err = d.pending_race;
    d.pending_race.clear();
    return ACL_ERROR_FAILURE;
}

bool is_mix(KernelMetaType t) {
    return t == KERNEL_TYPE_MIX_AIV_1_0 || t == KERNEL_TYPE_MIX_AIC_1_0 || t == KERNEL_TYPE_MIX_AIC_1_1 ||
           t == KERNEL_TYPE_MIX_AIC_1_2;
}

const char* type_label(KernelMetaType t) {
    switch (t) {
        case KERNEL_TYPE_AIV_ONLY: return "KERNEL_TYPE_AIV_ONLY";
        case KERNEL_TYPE_AIC_ONLY: return "KERNEL_TYPE_AIC_ONLY";
        case KERNEL_TYPE_MIX_AIV_1_0: return "KERNEL_TYPE_MIX_AIV_1_0";
        case KERNEL_TYPE_MIX_AIC_1_0: return "KERNEL_TYPE_MIX_AIC_1_0";
        case KERNEL_TYPE_MIX_AIC_1_1: return "KERNEL_TYPE_MIX_AIC_1_1";
        case KERNEL_TYPE_MIX_AIC_1_2: return "KERNEL_TYPE_MIX_AIC_1_2";
        default: return "unsupported kernel type";
    }
}

// Inter-core sync needs every core resident at once.
void require_resident(const char* what) {
    CoreCtx& c = core();
    Launch* l = c.launch;
    uint32_t phys = physical_cores(l->type == KERNEL_TYPE_AIV_ONLY || l->type == KERNEL_TYPE_MIX_AIV_1_0 ? CoreKind::AIV
                                                                                                       : CoreKind::AIC);
    if (l->block_dim > phys) {
        fail("blockDim above core count with inter-core sync",
             fmt("%s with blockDim %u but only %u physical cores: multi-round scheduling deadlocks", what,
                 l->block_dim, phys));
    }
}

}  // namespace

// ================================================================ core API

CoreCtx& core() {
    if (!t_core) {
        std::fprintf(stderr, "ascendc-sim: AscendC device API called outside a kernel launch\n");
        std::abort();
    }
    return *t_core;
}

bool in_kernel() { return t_core != nullptr; }

const char* mem_name(Mem m) {
    switch (m) {
        case Mem::UB: return "UB";
        case Mem::L1: return "L1";
        case Mem::L0A: return "L0A";
        case Mem::L0B: return "L0B";
        case Mem::L0C: return "L0C";
        case Mem::BT: return "BiasTable";
        case Mem::FB: return "FixpipeBuffer";
        default: return "?";
    }
}

std::string fmt(const char* f, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

void fail(const char* rule, const std::string& detail) {
    std::string msg;
    if (t_core) {
        const CoreCtx& c = *t_core;
        msg = "kernel " + c.launch->kernel + ": core " + core_label(c) + ": call " +
              (c.api && *c.api ? c.api : "?") + ": rule: " + rule + ": " + detail;
    } else {
        msg = std::string("rule: ") + rule + ": " + detail;
    }
    throw Violation{msg};
}

uint16_t intern_op(const char* name) {
    std::lock_guard<std::mutex> g(g_mu);
    for (size_t i = 0; i < g_op_names.size(); ++i)
        if (g_op_names[i] == name) return static_cast<uint16_t>(i);
    g_op_names.emplace_back(name);
    return static_cast<uint16_t>(g_op_names.size() - 1);
}

namespace {
constexpr uint64_t kTimeoutCheckEvery = 1u << 14;
double launch_timeout_s() {
    const char* e = std::getenv("ASCSIM_TIMEOUT_S");
    return e ? std::atof(e) : 600.0;
}
void check_timeout(CoreCtx& c) {
    if (c.trace.size() % kTimeoutCheckEvery != 0) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.launch->start).count();
    if (s > launch_timeout_s()) {
        fail("launch timeout", fmt("the launch ran %.0f s of wall time (limit ASCSIM_TIMEOUT_S=%.0f): a core "
                                   "is probably spinning forever",
                                   s, launch_timeout_s()));
    }
}
}  // namespace

void record(uint16_t op, uint8_t pipe, uint32_t repeats, uint64_t bytes, uint64_t gm_addr, uint64_t gm_bytes,
            bool gm_write, uint8_t attr) {
    CoreCtx& c = core();
    // A run of the same scalar instruction on UB (GetValue, SetValue: a
    // descent, a staging loop) is one event with a count in `repeats`: the
    // cost model charges each, and the trace of a scalar-heavy kernel stays
    // small.
    if (pipe == ASCSIM_PIPE_S && repeats == 1 && gm_bytes == 0 && !c.trace.empty()) {
        ascsim_event& last = c.trace.back();
        if (last.kind == ASCSIM_EV_INSTR && last.pipe == pipe && last.op == op && last.gm_bytes == 0 &&
            last.attr == attr && last.repeats < UINT32_MAX) {
            ++last.repeats;
            last.bytes += bytes;
            check_timeout(c);
            return;
        }
    }
    ascsim_event e{};
    e.kind = ASCSIM_EV_INSTR;
    e.pipe = pipe;
    e.op = op;
    e.repeats = repeats;
    e.bytes = bytes;
    e.gm_addr = gm_addr;
    e.gm_bytes = gm_bytes;
    e.gm_write = gm_write ? 1 : 0;
    e.attr = attr;
    e.peer = -1;
    c.trace.push_back(e);
    check_timeout(c);
}

void record_sync(uint8_t kind, uint8_t pipe, int32_t a, int32_t b, int32_t peer, uint32_t seq) {
    CoreCtx& c = core();
    ascsim_event e{};
    e.kind = kind;
    e.pipe = pipe;
    e.a = a;
    e.b = b;
    e.peer = peer;
    e.seq = seq;
    c.trace.push_back(e);
    check_timeout(c);
}

uint8_t* local_base(Mem m) {
    CoreCtx& c = core();
    if (!core_has(c.kind, m)) {
        fail("memory not on this core type",
             fmt("%s does not exist on an %s core (AIC has L1/L0A/L0B/L0C; AIV has UB)", mem_name(m), kind_name(c.kind)));
    }
    return c.mem[static_cast<int>(m)].data();
}

uint64_t local_size(Mem m) { return mem_capacity(*core().launch->soc, m); }

// ---- GM ----------------------------------------------------------------------

namespace {

[[noreturn]] void gm_race(const GmAccess& other, bool other_write, bool write, uintptr_t base, uint64_t b) {
    CoreCtx& c = core();
    const uint32_t ocore = other.pipe_thread() / kPipeSlots, opipe = other.pipe_thread() % kPipeSlots;
    const uint32_t mine = hz_thread() % kPipeSlots;
    const std::string where = fmt("GM 0x%llx (32-byte block %llu of the allocation at 0x%llx)",
                                  (unsigned long long)(base + b * kBlock), (unsigned long long)b,
                                  (unsigned long long)base);
    if (ocore == c.core_id) {
        fail("in-core race",
             fmt("%s %s %s %s, which this core's %s %s (%s instruction %u) %s before, and nothing orders the two; "
                 "missing: %s",
                 pipe_name(mine), c.api, write ? "writes" : "reads", where.c_str(), pipe_name(opipe),
                 ascsim_op_name(other.op), pipe_name(opipe), other.epoch, other_write ? "wrote" : "read",
                 hz_missing_edge(opipe, mine).c_str()));
    }
    fail("GM data race",
         fmt("%s %s of %s conflicts with a %s by core %s (pipe %s, %s) that no synchronisation orders before it; "
             "missing: after the %s, a CrossCoreSetFlag on PIPE_%s (or on a pipe that waited for it) whose "
             "CrossCoreWaitFlag comes before this access, or a SyncAll between them",
             c.api, write ? "write" : "read", where.c_str(), other_write ? "write" : "read",
             core_label(c.launch->cores[ocore]->ctx).c_str(), pipe_name(opipe), ascsim_op_name(other.op),
             other_write ? "write" : "read", pipe_name(opipe)));
}

// Race rule on [addr, addr+bytes): a read must be ordered after the writes
// of its bytes, a write after the earlier reads and writes (both atomic
// writes excepted), by the edges of the hazard checker's clocks (per core
// and pipe).
void check_and_stamp(Allocation& a, uintptr_t addr, uint64_t bytes, bool write, bool atomic) {
    if (!hz_enabled()) return;
    CoreCtx& c = core();
    uint32_t serial = c.launch->serial;
    if (a.shadow.empty()) a.shadow.resize((a.size + kBlock - 1) / kBlock);
    uintptr_t base = reinterpret_cast<uintptr_t>(a.base);
    uint64_t first = (addr - base) / kBlock;
    uint64_t last = (addr + bytes - 1 - base) / kBlock;
    const uint32_t me = hz_thread();
    const uint32_t epoch = hz_epoch();
    const uint16_t op = op_id(c.api);
    auto live = [serial](const GmAccess& x, uint32_t m) { return x.launch == serial && (x.mask & m) != 0; };
    for (uint64_t b = first; b <= last; ++b) {
        // Bytes of this block inside the access.
        uint64_t lo = b == first ? (addr - base) % kBlock : 0;
        uint64_t hi = b == last ? (addr + bytes - 1 - base) % kBlock : kBlock - 1;
        uint32_t mask = static_cast<uint32_t>(((uint64_t(1) << (hi + 1)) - 1) & ~((uint64_t(1) << lo) - 1));
        Shadow& s = a.shadow[b];
        for (const GmAccess& w : s.w)
            if (live(w, mask) && !hz_ordered(w.pipe_thread(), w.epoch) && !(atomic && w.atomic()))
                gm_race(w, true, write, base, b);
        if (!write) {
            // Record the read: the same pipe's slot, a free one, or one
            // ordered before this read (a writer after this read is then
            // after it too).
            GmAccess* slot = nullptr;
            for (GmAccess& r : s.r)
                if (r.launch == serial && r.pipe_thread() == me && r.mask) slot = &r;
            for (GmAccess& r : s.r)
                if (!slot && (r.launch != serial || r.mask == 0)) slot = &r;
            for (GmAccess& r : s.r)
                if (!slot && hz_ordered(r.pipe_thread(), r.epoch)) slot = &r;
            if (!slot) slot = &s.r[0];  // both unordered: the first is forgotten
            if (slot->launch != serial || slot->pipe_thread() != me) slot->mask = 0;
            *slot = GmAccess{serial, slot->mask | mask, epoch, static_cast<uint16_t>(me), op};
            continue;
        }
        for (GmAccess& r : s.r) {
            if (!live(r, mask)) continue;
            if (!hz_ordered(r.pipe_thread(), r.epoch)) gm_race(r, false, true, base, b);
            r.mask &= ~mask;  // ordered before this write: later ones follow it
        }
        GmAccess* mine = nullptr;
        GmAccess* ordered_mine = nullptr;
        for (GmAccess& w : s.w) {
            if (w.launch != serial) w.mask = 0;
            // Earlier writers of these bytes are ordered before this write
            // (or both atomic: then they stay, a reader must follow both).
            if (w.launch == serial && w.pipe_thread() != me && !(atomic && w.atomic())) w.mask &= ~mask;
            if (w.launch == serial && w.pipe_thread() == me && w.mask != 0) {
                if (hz_ordered(w.pipe_thread(), w.epoch)) {
                    // This pipe's earlier write, ordered before this one (a
                    // PipeBarrier): its other bytes keep their own epoch, so
                    // a later write of them is not charged to this one.
                    w.mask &= ~mask;
                    if (w.mask != 0) ordered_mine = &w;
                } else {
                    mine = &w;  // not ordered: merged under the later epoch (stricter)
                }
            }
        }
        if (!mine) {
            for (GmAccess& w : s.w)
                if (w.mask == 0) {
                    mine = &w;
                    break;
                }
        }
        if (!mine) mine = ordered_mine;
        if (!mine) {
            // Both slots hold other cores' live bytes: keep the one not
            // ordered before this write.
            mine = hz_ordered(s.w[0].pipe_thread(), s.w[0].epoch) ? &s.w[0] : &s.w[1];
            mine->mask = 0;
        }
        mine->launch = serial;
        mine->thread = static_cast<uint16_t>(me | (atomic ? 0x8000u : 0u));
        mine->op = op;
        mine->epoch = epoch;
        mine->mask |= mask;
    }
}

Allocation& gm_checked(const void* addr, uint64_t bytes, const char* what, bool write) {
    std::lock_guard<std::mutex> g(g_mu);
    Allocation* a = find_alloc_locked(reinterpret_cast<uintptr_t>(addr), bytes);
    if (!a) {
        fail("GM access outside allocations",
             fmt("%s of %llu bytes at GM 0x%llx is not inside one device allocation", what, (unsigned long long)bytes,
                 (unsigned long long)reinterpret_cast<uintptr_t>(addr)));
    }
    auto& touched = core().launch->touched;
    const uintptr_t base = reinterpret_cast<uintptr_t>(a->base);
    const uint8_t how = write ? 2 : 1;
    auto it = std::find_if(touched.begin(), touched.end(), [base](const auto& t) { return t.first == base; });
    if (it == touched.end()) touched.emplace_back(base, how);
    else it->second |= how;
    return *a;
}

template <typename T>
void add_elems(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
    for (uint64_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) {
        T a, b;
        std::memcpy(&a, dst + i, sizeof(T));
        std::memcpy(&b, src + i, sizeof(T));
        T r;
        if constexpr (std::is_same_v<T, bfloat16_t>) r = bfloat16_t(float(a) + float(b));
        else if constexpr (std::is_integral_v<T>)
            r = static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
        else r = static_cast<T>(a + b);
        std::memcpy(dst + i, &r, sizeof(T));
    }
}

}  // namespace

uint64_t trace_address(const void* p) {
    std::lock_guard<std::mutex> g(g_mu);
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    const Allocation* a = find_alloc_locked(addr, 0);
    return a ? device_address(*a, addr) : 0;
}

void gm_dma_load(void* dst, const void* gm_addr, uint64_t bytes) {
    if (bytes == 0) return;
    Allocation& a = gm_checked(gm_addr, bytes, "DMA read", false);
    check_and_stamp(a, reinterpret_cast<uintptr_t>(gm_addr), bytes, false, false);
    std::memcpy(dst, gm_addr, bytes);
    core().gm_read += bytes;
    maybe_preempt(16);
}

void gm_dma_store(void* gm_addr, const void* src, uint64_t bytes) {
    if (bytes == 0) return;
    CoreCtx& c = core();
    Allocation& a = gm_checked(gm_addr, bytes, "DMA write", true);
    bool atomic = c.atomic_dtype != 0;
    check_and_stamp(a, reinterpret_cast<uintptr_t>(gm_addr), bytes, true, atomic);
    auto* d = static_cast<uint8_t*>(gm_addr);
    auto* s = static_cast<const uint8_t*>(src);
    switch (c.atomic_dtype) {
        case 0: std::memcpy(d, s, bytes); break;
        case 1: add_elems<int8_t>(d, s, bytes); break;
        case 2: add_elems<int16_t>(d, s, bytes); break;
        case 3: add_elems<half>(d, s, bytes); break;
        case 4: add_elems<bfloat16_t>(d, s, bytes); break;
        case 5: add_elems<int32_t>(d, s, bytes); break;
        default: add_elems<float>(d, s, bytes); break;
    }
    c.gm_written += bytes;
    if (atomic) c.gm_read += bytes;  // read-modify-write in L2
    maybe_preempt(8);
}

namespace {
DCacheLine& dcache_line(uint64_t line_addr, bool& missed) {
    CoreCtx& c = core();
    for (auto& l : c.dcache)
        if (l.first == line_addr) {
            missed = false;
            return l.second;
        }
    missed = true;
    c.dcache.emplace_back(line_addr, DCacheLine{});
    DCacheLine& line = c.dcache.back().second;
    // Fill the whole line from GM (bytes outside allocations stay zero).
    {
        std::lock_guard<std::mutex> g(g_mu);
        for (uint64_t i = 0; i < kLine; ++i) {
            if (find_alloc_locked(line_addr + i, 1)) line.data[i] = *reinterpret_cast<uint8_t*>(line_addr + i);
        }
    }
    line.dirty_mask = 0;
    c.gm_read += kLine;
    return line;
}
uint32_t g_scalar_reads_between_yields = 64;
}  // namespace

void gm_scalar_read(const void* addr, void* out, uint32_t bytes) {
    CoreCtx& c = core();
    uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (a % bytes != 0) fail("misaligned address", fmt("scalar GM read at 0x%llx", (unsigned long long)a));
    Allocation& al = gm_checked(addr, bytes, "scalar read", false);
    check_and_stamp(al, a, bytes, false, false);
    bool missed;
    DCacheLine& line = dcache_line(a & ~(kLine - 1), missed);
    std::memcpy(out, line.data + (a & (kLine - 1)), bytes);
    ASCSIM_RECORD("GlobalTensor::GetValue", ASCSIM_PIPE_S, 1, bytes, missed ? (a & ~(kLine - 1)) : 0,
                  missed ? kLine : 0, false);
    // Spin-wait loops on GM must let the other cores run.
    static thread_local uint32_t reads = 0;
    if (++reads % g_scalar_reads_between_yields == 0) yield_core();
    (void)c;
}

void gm_scalar_write(void* addr, const void* in, uint32_t bytes) {
    uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    if (a % bytes != 0) fail("misaligned address", fmt("scalar GM write at 0x%llx", (unsigned long long)a));
    Allocation& al = gm_checked(addr, bytes, "scalar write", true);
    check_and_stamp(al, a, bytes, true, false);
    bool missed;
    DCacheLine& line = dcache_line(a & ~(kLine - 1), missed);
    uint64_t off = a & (kLine - 1);
    std::memcpy(line.data + off, in, bytes);
    for (uint64_t i = 0; i < bytes; ++i) line.dirty_mask |= 1ull << (off + i);
    ASCSIM_RECORD("GlobalTensor::SetValue", ASCSIM_PIPE_S, 1, bytes);
}

void dcache_clean_invalidate(const void* addr, bool write_back) {
    CoreCtx& c = core();
    uint64_t target = addr ? (reinterpret_cast<uintptr_t>(addr) & ~(kLine - 1)) : 0;
    for (auto it = c.dcache.begin(); it != c.dcache.end();) {
        if (addr && it->first != target) {
            ++it;
            continue;
        }
        DCacheLine& line = it->second;
        if (write_back && line.dirty_mask) {
            std::lock_guard<std::mutex> g(g_mu);
            for (uint64_t i = 0; i < kLine; ++i) {
                if (line.dirty_mask & (1ull << i)) *reinterpret_cast<uint8_t*>(it->first + i) = line.data[i];
            }
            c.gm_written += static_cast<uint64_t>(__builtin_popcountll(line.dirty_mask));
        }
        it = c.dcache.erase(it);
    }
}

// ---- kernel type, identity ------------------------------------------------------

void declare_kernel_type(KernelMetaType t) {
    CoreCtx& c = core();
    ASCSIM_API("KERNEL_TASK_TYPE_DEFAULT");
    if (t != c.launch->type) {
        fail("kernel type mismatch", fmt("the kernel declares %s but was launched as %s", type_label(t),
                                         type_label(c.launch->type)));
    }
    c.kernel_type_declared = true;
}

KernelMetaType launch_kernel_type() { return core().launch->type; }
const std::string& launch_kernel_name() { return core().launch->kernel; }

uint32_t physical_cores(CoreKind k) {
    const ascsim_soc& soc = *core().launch->soc;
    return k == CoreKind::AIC ? soc.cube_cores : soc.vector_cores;
}

// ---- inter-core synchronisation ----------------------------------------------------

namespace {

void require_mix(const char* what) {
    KernelMetaType t = core().launch->type;
    if (!is_mix(t)) {
        fail(std::string(what) == "SyncAll" ? "SyncAll in a non-mix kernel" : "CrossCore flag in a non-mix kernel",
             fmt("%s needs a MIX kernel type (e.g. KERNEL_TYPE_MIX_AIV_1_0 for pure vector kernels); this launch is "
                 "%s, where the sync hardware is off and the call hangs",
                 what, type_label(t)));
    }
}

// Deliver one set to `target` core's flag counter.
void deliver_locked(Launch* l, uint32_t target, uint16_t flag, Pending p) {
    auto& q = l->flags[target][flag];
    if (q.size() >= static_cast<size_t>(kFlagMax)) {
        fail("CrossCore flag overflow",
             fmt("flag %u of core %s would exceed 15 pending sets (4-bit counter): the producer must wait on a "
                 "reverse flag",
                 flag, core_label(l->cores[target]->ctx).c_str()));
    }
    q.push_back(std::move(p));
}

// Group round: when every member has a pending set, each receiver gets one
// set whose clock joins all members' clocks. A member's k-th pending set
// belongs to the k-th open round; returns that round's sequence number.
uint32_t group_set_locked(Launch* l, uint64_t key, uint16_t flag, const std::vector<uint32_t>& members,
                          const std::vector<uint32_t>& receivers, Pending mine) {
    auto& round = l->rounds[{key, flag}];
    auto& seqs = l->round_seqs[{key, flag}];
    auto& queue = round[core().core_id];
    if (queue.size() == seqs.size()) seqs.push_back(l->cross_seq++);
    const uint32_t seq = seqs[queue.size()];
    queue.push_back(std::move(mine));
    for (uint32_t m : members)
        if (round[m].empty()) return seq;
    Pending joined{std::vector<uint32_t>(l->cores.size() * kPipeSlots, 0), static_cast<int32_t>(core().core_id),
                   seqs.front()};
    seqs.pop_front();
    for (uint32_t m : members) {
        join_clock(joined.clock, round[m].front().clock);
        round[m].pop_front();
    }
    for (uint32_t r : receivers) deliver_locked(l, r, flag, joined);
    return seq;
}

std::vector<uint32_t> cores_of_kind(Launch* l, CoreKind k) {
    std::vector<uint32_t> v;
    for (auto& s : l->cores)
        if (s->ctx.kind == k) v.push_back(s->ctx.core_id);
    return v;
}

std::vector<uint32_t> aivs_of_group(Launch* l, uint32_t group) {
    std::vector<uint32_t> v;
    for (auto& s : l->cores)
        if (s->ctx.kind == CoreKind::AIV && s->ctx.group == group) v.push_back(s->ctx.core_id);
    return v;
}

uint32_t aic_of_group(uint32_t group) { return group; }  // AICs come first, core id = group

// Flag ids are 4-bit counters; 11..14 belong to the hardware SyncAll. The
// CANN 8.5 documentation allows 0..10 on A2 (9.x also 15): the kernels must
// run on both, so 15 is refused too.
void check_flag_id(uint16_t flag_id) {
    if (flag_id >= 11 && flag_id <= 14)
        fail("flag id reserved", fmt("flag ids 11..14 belong to the hardware SyncAll (got %u)", flag_id));
    if (flag_id > 10)
        fail("invalid flag id", fmt("flag id %u outside 0..10 (the range CANN 8.5 documents for A2)", flag_id));
}

}  // namespace

void cross_core_set(uint8_t mode, uint16_t flag_id, uint8_t pipe) {
    CoreCtx& c = core();
    Launch* l = c.launch;
    require_mix("CrossCoreSetFlag");
    require_resident("CrossCoreSetFlag");
    check_flag_id(flag_id);
    if (pipe == ASCSIM_PIPE_S || pipe == ASCSIM_PIPE_NONE)
        fail("invalid pipe", "CrossCoreSetFlag's pipe must be V, M, MTE1, MTE2, MTE3 or FIX");
    bool has_pairs = l->type == KERNEL_TYPE_MIX_AIC_1_1 || l->type == KERNEL_TYPE_MIX_AIC_1_2;
    if ((mode == 1 || mode == 2) && !has_pairs)
        fail("CrossCore mode needs AIC+AIV kernel", fmt("mode %u needs KERNEL_TYPE_MIX_AIC_1_1 or 1_2", mode));
    if (mode == 1 && l->type != KERNEL_TYPE_MIX_AIC_1_2)
        fail("CrossCore mode needs AIC+AIV kernel", "mode 1 (the two AIVs of an AI core) needs KERNEL_TYPE_MIX_AIC_1_2");
    if (mode == 1 && c.kind != CoreKind::AIV) fail("invalid cross-core mode", "mode 1 is for AIV cores");
    if (mode > 2) fail("invalid cross-core mode", fmt("mode %u is not available on Atlas A2 (modes 0, 1, 2)", mode));

    std::unique_lock<std::mutex> lk(l->mu);
    // The set fires once every earlier instruction of `pipe` is done.
    Pending mine{hz_snapshot(pipe), static_cast<int32_t>(c.core_id), 0};
    uint32_t seq;
    if (mode == 0) {
        auto members = cores_of_kind(l, c.kind);
        seq = group_set_locked(l, 0x100 + static_cast<uint64_t>(c.kind), flag_id, members, members, mine);
    } else if (mode == 1) {
        auto members = aivs_of_group(l, c.group);
        seq = group_set_locked(l, 0x200 + c.group, flag_id, members, members, mine);
    } else if (c.kind == CoreKind::AIC) {
        seq = mine.seq = l->cross_seq++;
        for (uint32_t v : aivs_of_group(l, c.group)) deliver_locked(l, v, flag_id, mine);
    } else {
        auto members = aivs_of_group(l, c.group);
        seq = group_set_locked(l, 0x300 + c.group, flag_id, members, {aic_of_group(c.group)}, mine);
    }
    lk.unlock();
    record_sync(ASCSIM_EV_CROSS_SET, pipe, flag_id, mode, -1, seq);
    maybe_preempt(2);
}

void cross_core_wait(uint16_t flag_id) {
    CoreCtx& c = core();
    Launch* l = c.launch;
    require_mix("CrossCoreWaitFlag");
    require_resident("CrossCoreWaitFlag");
    check_flag_id(flag_id);
    auto& q = l->flags[c.core_id][flag_id];
    block_until([&q] { return !q.empty(); }, fmt("CrossCoreWaitFlag(%u)", flag_id));
    Pending p;
    {
        std::lock_guard<std::mutex> g(l->mu);
        p = std::move(q.front());
        q.pop_front();
    }
    // On A2 the wait holds every pipe of the core.
    hz_join_wait(p.clock);
    record_sync(ASCSIM_EV_CROSS_WAIT, ASCSIM_PIPE_NONE, flag_id, 0, p.peer, p.seq);
}

namespace {
// All `members` arrive; everyone leaves with the join of their clocks.
void barrier(Launch* l, uint32_t members, const char* what) {
    uint32_t round;
    {
        std::lock_guard<std::mutex> g(l->mu);
        round = l->barrier_round;
        auto& clock = l->barrier_clock[round];
        if (clock.size() != l->cores.size() * kPipeSlots) clock.assign(l->cores.size() * kPipeSlots, 0);
        // SyncAll starts with PipeBarrier<PIPE_ALL>: all the core has issued.
        join_clock(clock, hz_full_snapshot());
        if (++l->barrier_arrived == members) {
            l->barrier_arrived = 0;
            l->barrier_round++;
        }
    }
    block_until([l, round] { return l->barrier_round != round; }, what);
    std::vector<uint32_t> all;
    {
        std::lock_guard<std::mutex> g(l->mu);
        all = l->barrier_clock[round];
    }
    hz_join_barrier(all);
    record_sync(ASCSIM_EV_SYNC_ALL, ASCSIM_PIPE_NONE, 0, 0, -1, round);
}
}  // namespace

void sync_all_hw(bool aiv_only) {
    CoreCtx& c = core();
    Launch* l = c.launch;
    require_mix("SyncAll");
    require_resident("SyncAll");
    if (aiv_only) {
        if (c.kind == CoreKind::AIC) return;  // the AIV barrier; a no-op on the cube side
        barrier(l, l->n_aiv, "SyncAll<true>()");
    } else {
        barrier(l, l->n_aic + l->n_aiv, "SyncAll<false>()");
    }
}

void sync_all_soft(uint64_t gm_addr, int32_t used_cores) {
    CoreCtx& c = core();
    Launch* l = c.launch;
    if (c.kind != CoreKind::AIV) fail("soft SyncAll on AIC", "the soft SyncAll is for vector cores only");
    require_resident("SyncAll(soft)");
    uint32_t n = used_cores > 0 ? static_cast<uint32_t>(used_cores) : l->n_aiv;
    auto* slots = reinterpret_cast<int32_t*>(gm_addr);
    gm_checked(slots, static_cast<uint64_t>(n) * 32, "soft SyncAll workspace", true);
    // Each core bumps its own 32-byte slot, then waits until every slot has
    // reached its value (a workspace that was not zeroed misbehaves, as on
    // hardware).
    int32_t* mine = slots + 8 * c.block_idx;
    int32_t target;
    // The real soft SyncAll starts with PipeBarrier<PIPE_ALL>.
    hz_pipe_barrier(ASCSIM_PIPE_NONE);
    uint32_t round;
    {
        std::lock_guard<std::mutex> g(l->mu);
        c.hz->published = hz_full_snapshot();
        target = ++*mine;
        round = l->barrier_round++;
    }
    block_until(
        [slots, n, target] {
            for (uint32_t i = 0; i < n; ++i)
                if (slots[8 * i] < target) return false;
            return true;
        },
        "SyncAll(soft)");
    std::vector<uint32_t> all(l->cores.size() * kPipeSlots, 0);
    {
        std::lock_guard<std::mutex> g(l->mu);
        for (auto& s : l->cores)
            if (s->ctx.kind == CoreKind::AIV && s->ctx.block_idx < static_cast<int64_t>(n))
                join_clock(all, s->hz.published);
    }
    hz_join_barrier(all);
    // One round per core: the cost model does not join cores on it.
    record_sync(ASCSIM_EV_SYNC_ALL, ASCSIM_PIPE_NONE, 0, 0, -1, round);
}

// ================================================================ launch

uint32_t launch(const char* kernel, KernelMetaType type, uint32_t block_dim, void* stream,
                const std::function<void()>& body) {
    Stream* st;
    const ascsim_soc* soc;
    uint64_t stream_launches;
    {
        std::lock_guard<std::mutex> g(g_mu);
        st = resolve_stream_locked(stream);
        stream_launches = st->launches.size();
        Device& d = g_devices[st->device];
        soc = &d.soc;
        // Enqueued after what the host did so far.
        join_into(st->clock, g_host_clock);
        tick(st->clock, st->agent);
    }
    LaunchRecord rec;
    std::snprintf(rec.info.kernel, sizeof rec.info.kernel, "%s", kernel);
    rec.info.block_dim = block_dim;
    rec.info.kernel_type = type;

    auto l = std::make_unique<Launch>();
    l->kernel = kernel;
    l->type = type;
    l->hazards = hazards_on();
    l->block_dim = block_dim;
    l->serial = ++g_launch_serial;
    if (const char* seed = std::getenv("ASCSIM_SCHEDULE_SEED"); seed && *seed) {
        // Per stream launch, not per process launch: a test on its own
        // stream sees the same schedules whatever runs beside it.
        l->shuffle = true;
        l->rng.seed(std::strtoull(seed, nullptr, 0) ^ (0x9E3779B97F4A7C15ull * (stream_launches + 1)) ^
                    std::hash<std::string>{}(kernel));
    }
    l->soc = soc;
    l->body = &body;
    l->start = std::chrono::steady_clock::now();

    std::string early;
    bool configured;
    {
        std::lock_guard<std::mutex> g(g_mu);
        configured = g_devices[st->device].configured;
    }
    if (!configured) early = "rule: device not configured: call ascsim_configure_device first";
    if (block_dim < 1 || block_dim > 65535)
        early = fmt("kernel %s: rule: invalid blockDim: %u outside [1, 65535]", kernel, block_dim);
    if (!(type == KERNEL_TYPE_AIV_ONLY || type == KERNEL_TYPE_AIC_ONLY || is_mix(type)))
        early = fmt("kernel %s: rule: unsupported kernel type: %d is not available on Atlas A2", kernel, (int)type);
    if (early.empty()) {
        bool has_aic = type == KERNEL_TYPE_AIC_ONLY || type == KERNEL_TYPE_MIX_AIC_1_0 ||
                       type == KERNEL_TYPE_MIX_AIC_1_1 || type == KERNEL_TYPE_MIX_AIC_1_2;
        uint32_t aiv_per = type == KERNEL_TYPE_MIX_AIC_1_2 ? 2
                           : (type == KERNEL_TYPE_MIX_AIC_1_1 || type == KERNEL_TYPE_AIV_ONLY ||
                              type == KERNEL_TYPE_MIX_AIV_1_0)
                               ? 1
                               : 0;
        l->n_aic = has_aic ? block_dim : 0;
        l->n_aiv = aiv_per * block_dim;
        uint32_t total = l->n_aic + l->n_aiv;
        for (uint32_t i = 0; i < total; ++i) {
            auto s = std::make_unique<CoreSlot>();
            CoreCtx& c = s->ctx;
            c.launch = l.get();
            c.core_id = i;
            c.block_num = block_dim;
            if (i < l->n_aic) {
                c.kind = CoreKind::AIC;
                c.block_idx = i;
                c.group = i;
            } else {
                uint32_t v = i - l->n_aic;
                c.kind = CoreKind::AIV;
                c.group = aiv_per ? v / aiv_per : 0;
                c.sub_block_idx = aiv_per ? v % aiv_per : 0;
                c.sub_block_num = aiv_per == 2 ? 2 : 1;
                c.task_ratio = aiv_per == 2 ? 2 : 1;
                c.block_idx = v;  // = block*2 + sub in MIX_AIC_1_2
            }
            l->cores.push_back(std::move(s));
        }
        l->flags.resize(total);
        // Run: core 0 first; the scheduler hands over on blocking or finishing.
        {
            std::unique_lock<std::mutex> lk(l->mu);
            if (total > 0) {
                const uint32_t first = l->shuffle ? static_cast<uint32_t>(l->rng() % total) : 0;
                l->cores[first]->state = CoreState::Runnable;
                l->running = static_cast<int>(first);
                start_thread_locked(l.get(), first);
                l->cv.wait(lk, [&] { return l->finished; });
            }
        }
        for (auto& s : l->cores)
            if (s->thread.joinable()) s->thread.join();
        if (!l->failed) check_cross_flags_drained(l.get());
        rec.info.cores = total;
        rec.info.hazards_checked = l->hazards ? 1 : 0;
        for (auto& s : l->cores) {
            rec.info.gm_read_bytes += s->ctx.gm_read;
            rec.info.gm_write_bytes += s->ctx.gm_written;
            rec.info.events += s->ctx.trace.size();
            rec.traces.push_back(std::move(s->ctx.trace));
            rec.kinds.push_back(static_cast<uint32_t>(s->ctx.kind));
            rec.block_idx.push_back(static_cast<uint32_t>(s->ctx.block_idx));
        }
        if (l->failed) {
            rec.error = l->error;
            rec.info.status = ACL_ERROR_RT_AICORE_EXCEPTION;
        }
    } else {
        rec.error = early;
        rec.info.status = ACL_ERROR_RT_PARAM_INVALID;
    }
    std::lock_guard<std::mutex> g(g_mu);
    trace_device_addresses_locked(rec.traces);
    const std::string who = fmt("kernel %s on stream %p", kernel, static_cast<void*>(st));
    for (const auto& t : l->touched) {
        auto it = g_allocs.find(t.first);
        if (it == g_allocs.end()) continue;
        std::string race = order_access(it->second, st->agent, st->clock, t.second & 1, t.second & 2, who);
        if (!race.empty() && rec.info.status == 0) {
            rec.error = race;
            rec.info.status = ACL_ERROR_RT_AICORE_EXCEPTION;
        }
    }
    st->launches.push_back(std::move(rec));
    return 0;
}

}  // namespace ascsim

// ================================================================ TPipe (non-template parts)

namespace AscendC {
namespace {
thread_local TPipe* t_pipe = nullptr;

const char* position_name(TPosition p) {
    switch (p) {
        case TPosition::GM: return "GM";
        case TPosition::A1: return "A1";
        case TPosition::A2: return "A2";
        case TPosition::B1: return "B1";
        case TPosition::B2: return "B2";
        case TPosition::C1: return "C1";
        case TPosition::C2: return "C2";
        case TPosition::CO1: return "CO1";
        case TPosition::CO2: return "CO2";
        case TPosition::VECIN: return "VECIN";
        case TPosition::VECOUT: return "VECOUT";
        case TPosition::VECCALC: return "VECCALC";
        case TPosition::TSCM: return "TSCM";
        default: return "?";
    }
}
}

// On an AIC the real TPipe reserves the M_MTE1 ids 0..2 (for the Matmul API)
// and sets them at construction; its destruction waits them.
constexpr int kMte1Reserved = 3;

TPipe::TPipe() {
    ASCSIM_API("TPipe::TPipe");
    if (t_pipe) ascsim::fail("one TPipe per kernel", "a second TPipe was created while one exists");
    t_pipe = this;
    ascsim::core().tpipe = this;
    if (ascsim::core().kind == ascsim::CoreKind::AIC) {
        for (int id = 0; id < kMte1Reserved; ++id) {
            ascsim::hz_event_alloc(static_cast<int>(HardEvent::M_MTE1), ascsim::EventOrigin::Pipe);
            ascsim::hz_set_flag(static_cast<int>(HardEvent::M_MTE1), id, ascsim::EventOrigin::Pipe);
        }
    }
}
TPipe::~TPipe() {
    // Not while a failure unwinds the kernel (its state is no longer sound).
    if (t_pipe == this && std::uncaught_exceptions() == 0) Destroy();
    if (t_pipe == this) {
        t_pipe = nullptr;
        ascsim::core().tpipe = nullptr;
    }
}
void TPipe::wait_free_events() {
    for (auto& b : bufs_) {
        if (b->free_event_id < 0) continue;
        ascsim::hz_wait_flag(b->free_event, b->free_event_id, ascsim::EventOrigin::Queue);
        ascsim::hz_event_release(b->free_event, b->free_event_id, ascsim::EventOrigin::Queue);
        b->free_event_id = -1;
    }
}
void TPipe::Reset() {
    ASCSIM_API("TPipe::Reset");
    wait_free_events();
    for (auto& u : used_) u = 0;
    for (auto& p : per_pos_) p = 0;
    total_buffers_ = 0;
}
void TPipe::Destroy() {
    if (destroyed_) return;
    Reset();
    ASCSIM_API("TPipe::Destroy");
    if (ascsim::core().kind == ascsim::CoreKind::AIC) {
        for (int id = 0; id < kMte1Reserved; ++id) {
            ascsim::hz_wait_flag(static_cast<int>(HardEvent::M_MTE1), id, ascsim::EventOrigin::Pipe);
            ascsim::hz_event_release(static_cast<int>(HardEvent::M_MTE1), id, ascsim::EventOrigin::Pipe);
        }
    }
    ascsim::hz_pipe_barrier(ASCSIM_PIPE_NONE);
    ascsim::record_sync(ASCSIM_EV_PIPE_BARRIER, ASCSIM_PIPE_NONE, 0, 0);
    destroyed_ = true;
}

TPipe* GetTPipePtr() { return t_pipe; }

uint32_t TPipe::sim_alloc(TPosition pos, uint32_t len, uint32_t count) {
    ascsim::Mem m = mem_of(pos);
    uint64_t bytes = static_cast<uint64_t>(len) * count;
    uint64_t cap = ascsim::local_size(m);
    if (used_[static_cast<int>(m)] + bytes > cap) {
        ascsim::fail("buffer beyond capacity",
                     ascsim::fmt("InitBuffer of %u x %u bytes in %s: %llu of %llu bytes already used", count, len,
                                 ascsim::mem_name(m), (unsigned long long)used_[static_cast<int>(m)],
                                 (unsigned long long)cap));
    }
    per_pos_[static_cast<int>(pos)] += count;
    if (per_pos_[static_cast<int>(pos)] > 8) {
        ascsim::fail("more than 8 buffers per position",
                     ascsim::fmt("%u buffers at one TPosition (at most 8 on Atlas A2: each owns a hardware event)",
                                 per_pos_[static_cast<int>(pos)]));
    }
    total_buffers_ += count;
    if (total_buffers_ > 64) ascsim::fail("more than 64 buffers per TPipe", "a TPipe manages at most 64 buffers");
    uint32_t addr = static_cast<uint32_t>(used_[static_cast<int>(m)]);
    used_[static_cast<int>(m)] += bytes;
    return addr;
}

bool TPipe::init_queue(sim_detail::QueueBase& q, uint8_t num, uint32_t len) {
    if (!q.bufs.empty()) ascsim::fail("queue misuse", "InitBuffer called twice for one queue");
    if (num == 0) ascsim::fail("queue misuse", "InitBuffer with 0 buffers");
    uint32_t rounded = (len + 31u) / 32u * 32u;
    uint32_t base = sim_alloc(q.alloc_pos, rounded, num);
    q.id = next_queue_id_++;
    q.len = rounded;
    for (uint32_t i = 0; i < num; ++i) {
        q.addrs.push_back(base + i * rounded);
        auto st = std::make_shared<ascsim::BufState>();
        st->id = i;
        st->phase = ascsim::BufPhase::Free;
        st->queue_id = q.id;
        q.bufs.push_back(st);
        bufs_.push_back(st);
        ascsim::hz_name_region(mem_of(q.alloc_pos), base + i * rounded, rounded,
                               ascsim::fmt("buffer %u of TQue #%d (%s -> %s)", i, q.id, position_name(q.src_pos),
                                           position_name(q.dst_pos)));
    }
    return true;
}

namespace sim_detail {
namespace {
// Physical memory of a position on A2 (CO2 is GM).
enum class Phys { GM, UB, L1, L0A, L0B, L0C, BT, Other };
Phys phys(TPosition p) {
    switch (p) {
        case TPosition::GM:
        case TPosition::CO2: return Phys::GM;
        case TPosition::VECIN:
        case TPosition::VECOUT:
        case TPosition::VECCALC: return Phys::UB;
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1:
        case TPosition::TSCM: return Phys::L1;
        case TPosition::A2: return Phys::L0A;
        case TPosition::B2: return Phys::L0B;
        case TPosition::CO1: return Phys::L0C;
        case TPosition::C2: return Phys::BT;
        default: return Phys::Other;
    }
}
// The real GetQueEvt: the event from the producer (forward) or back from
// the consumer, by source and destination memory.
HardEvent queue_event(TPosition src, TPosition dst, bool forward) {
    Phys s = phys(src), d = phys(dst);
    auto pick = [forward](HardEvent f, HardEvent b) { return forward ? f : b; };
    if (s == Phys::GM && d == Phys::UB) return pick(HardEvent::MTE2_V, HardEvent::V_MTE2);
    if (s == Phys::GM && d == Phys::L1) return pick(HardEvent::MTE2_MTE1, HardEvent::MTE1_MTE2);
    if (s == Phys::GM && (d == Phys::L0A || d == Phys::L0B)) return pick(HardEvent::MTE2_M, HardEvent::M_MTE2);
    if (s == Phys::UB && d == Phys::GM) return pick(HardEvent::V_MTE3, HardEvent::MTE3_V);
    if (s == Phys::UB && d == Phys::L1) return pick(HardEvent::MTE3_MTE1, HardEvent::MTE1_MTE3);
    if (s == Phys::UB && d == Phys::UB) return pick(HardEvent::MTE2_MTE3, HardEvent::MTE3_MTE2);
    if (s == Phys::L1 && (d == Phys::L0A || d == Phys::L0B || d == Phys::BT))
        return pick(HardEvent::MTE1_M, HardEvent::M_MTE1);
    if (s == Phys::L1 && d == Phys::UB) return pick(HardEvent::MTE1_V, HardEvent::V_MTE1);
    if (s == Phys::L0C && d == Phys::GM) return pick(HardEvent::M_FIX, HardEvent::FIX_M);
    ascsim::fail("queue misuse", ascsim::fmt("no TQue moves data from %s to %s on Atlas A2", position_name(src),
                                             position_name(dst)));
}
}  // namespace

HardEvent QueueBase::enque_event() const { return queue_event(src_pos, dst_pos, true); }
HardEvent QueueBase::free_event() const { return queue_event(src_pos, dst_pos, false); }
uint8_t QueueBase::producer_pipe() const {
    uint8_t s, d;
    event_pipes(enque_event(), s, d);
    return s;
}
uint8_t QueueBase::consumer_pipe() const {
    uint8_t s, d;
    event_pipes(enque_event(), s, d);
    return d;
}

void event_pipes(HardEvent e, uint8_t& src, uint8_t& dst) {
    static const uint8_t table[][2] = {
        {ASCSIM_PIPE_MTE2, ASCSIM_PIPE_MTE1}, {ASCSIM_PIPE_MTE1, ASCSIM_PIPE_MTE2}, {ASCSIM_PIPE_MTE1, ASCSIM_PIPE_M},
        {ASCSIM_PIPE_M, ASCSIM_PIPE_MTE1},    {ASCSIM_PIPE_MTE2, ASCSIM_PIPE_V},    {ASCSIM_PIPE_V, ASCSIM_PIPE_MTE2},
        {ASCSIM_PIPE_MTE3, ASCSIM_PIPE_V},    {ASCSIM_PIPE_V, ASCSIM_PIPE_MTE3},    {ASCSIM_PIPE_M, ASCSIM_PIPE_V},
        {ASCSIM_PIPE_V, ASCSIM_PIPE_M},       {ASCSIM_PIPE_V, ASCSIM_PIPE_V},       {ASCSIM_PIPE_MTE3, ASCSIM_PIPE_MTE1},
        {ASCSIM_PIPE_MTE1, ASCSIM_PIPE_MTE3}, {ASCSIM_PIPE_MTE1, ASCSIM_PIPE_V},    {ASCSIM_PIPE_MTE2, ASCSIM_PIPE_M},
        {ASCSIM_PIPE_M, ASCSIM_PIPE_MTE2},    {ASCSIM_PIPE_V, ASCSIM_PIPE_MTE1},    {ASCSIM_PIPE_M, ASCSIM_PIPE_FIX},
        {ASCSIM_PIPE_FIX, ASCSIM_PIPE_M},     {ASCSIM_PIPE_MTE3, ASCSIM_PIPE_MTE2}, {ASCSIM_PIPE_MTE2, ASCSIM_PIPE_MTE3},
        {ASCSIM_PIPE_S, ASCSIM_PIPE_V},       {ASCSIM_PIPE_V, ASCSIM_PIPE_S},       {ASCSIM_PIPE_S, ASCSIM_PIPE_MTE2},
        {ASCSIM_PIPE_MTE2, ASCSIM_PIPE_S},    {ASCSIM_PIPE_S, ASCSIM_PIPE_MTE3},    {ASCSIM_PIPE_MTE3, ASCSIM_PIPE_S},
        {ASCSIM_PIPE_MTE2, ASCSIM_PIPE_FIX},  {ASCSIM_PIPE_FIX, ASCSIM_PIPE_MTE2},  {ASCSIM_PIPE_FIX, ASCSIM_PIPE_S},
        {ASCSIM_PIPE_M, ASCSIM_PIPE_S},       {ASCSIM_PIPE_FIX, ASCSIM_PIPE_MTE3},  {ASCSIM_PIPE_MTE1, ASCSIM_PIPE_FIX},
        {ASCSIM_PIPE_FIX, ASCSIM_PIPE_MTE1},  {ASCSIM_PIPE_FIX, ASCSIM_PIPE_FIX},
    };
    size_t i = static_cast<size_t>(e);
    if (i >= sizeof table / sizeof table[0]) ascsim::fail("invalid event", "unknown HardEvent");
    src = table[i][0];
    dst = table[i][1];
}
}  // namespace sim_detail
}  // namespace AscendC

// ================================================================ ACL host subset

using namespace ascsim;

namespace {
aclError set_err(aclError code, const std::string& msg) {
    t_err = msg;
    return code;
}

// Removes the object behind handle `h` from `owned`; false for an unknown handle.
template <typename T>
bool erase_handle(std::vector<std::unique_ptr<T>>& owned, const void* h) {
    auto it = std::find_if(owned.begin(), owned.end(), [h](const auto& p) { return p.get() == h; });
    if (it == owned.end()) return false;
    owned.erase(it);
    return true;
}

// The common part of the asynchronous copies and memset: the ranges
// ([dst, dst + dspan) written, [src, src + sspan) read when src is given)
// must lie in device allocations, and the work, ordered on `stream` after
// what the host did so far, must pass the host-side race rule.
// The stream records the task (its kind and the `moved` bytes it writes, and
// for a copy reads) for the cost model.
aclError stream_op_locked(const char* call, uint32_t task, uint64_t moved, aclrtStream stream, void* dst,
                          uint64_t dspan, const void* src, uint64_t sspan) {
    Allocation* d = find_alloc_locked(reinterpret_cast<uintptr_t>(dst), dspan);
    Allocation* sa = src ? find_alloc_locked(reinterpret_cast<uintptr_t>(src), sspan) : nullptr;
    if (!d || (src && !sa))
        return set_err(ACL_ERROR_INVALID_PARAM, fmt("%s: a range is not inside a device allocation", call));
    Stream* st = resolve_stream_locked(stream);
    join_into(st->clock, g_host_clock);
    tick(st->clock, st->agent);
    const std::string who = fmt("%s on stream %p", call, static_cast<void*>(st));
    std::string race = sa ? order_access(*sa, st->agent, st->clock, true, false, who) : "";
    std::string r = order_access(*d, st->agent, st->clock, false, true, who);
    if (race.empty()) race = r;
    if (!race.empty()) return set_err(ACL_ERROR_FAILURE, race);
    LaunchRecord rec;
    std::snprintf(rec.info.kernel, sizeof rec.info.kernel, "%s", call);
    rec.info.task = task;
    // No core runs it, so there is no in-core hazard to watch; the race rule
    // above checked it (it is on whatever ASCSIM_HAZARDS says).
    rec.info.hazards_checked = 1;
    rec.info.gm_read_bytes = task == ASCSIM_TASK_COPY ? moved : 0;
    rec.info.gm_write_bytes = moved;
    st->launches.push_back(std::move(rec));
    return ACL_SUCCESS;
}
}  // namespace

extern "C" {

aclError aclInit(const char*) {
    std::lock_guard<std::mutex> g(g_mu);
    if (g_initialized) return set_err(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialised");
    g_initialized = true;
    return ACL_SUCCESS;
}

aclError aclFinalize(void) {
    std::lock_guard<std::mutex> g(g_mu);
    if (!g_initialized) return set_err(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: not initialised");
    g_initialized = false;
    return ACL_SUCCESS;
}

int32_t ascsim_configure_device(int32_t device_id, const ascsim_soc* soc) {
    if (device_id < 0 || device_id >= 64 || !soc) return ACL_ERROR_INVALID_PARAM;
    std::lock_guard<std::mutex> g(g_mu);
    Device& d = g_devices[device_id];
    d.soc = *soc;
    d.configured = true;
    return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId) {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_devices.find(deviceId);
    if (it == g_devices.end() || !it->second.configured)
        return set_err(ACL_ERROR_RT_INVALID_DEVICEID, fmt("aclrtSetDevice: no simulated device %d", deviceId));
    t_device = deviceId;
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
    std::lock_guard<std::mutex> g(g_mu);
    if (!g_devices.count(deviceId)) return set_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice: no such device");
    if (t_device == deviceId) t_device = -1;
    if (leak_report_enabled()) report_live_locked(deviceId, fmt("at aclrtResetDevice(%d)", deviceId).c_str());
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
    if (!count) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
    std::lock_guard<std::mutex> g(g_mu);
    uint32_t n = 0;
    for (auto& d : g_devices) n += d.second.configured ? 1 : 0;
    *count = n;
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
    if (!stream) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
    std::lock_guard<std::mutex> g(g_mu);
    if (t_device < 0) return set_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtCreateStream: no device set on this thread");
    g_streams.push_back(std::make_unique<Stream>());
    g_streams.back()->device = t_device;
    g_streams.back()->agent = ++g_next_agent;
    *stream = g_streams.back().get();
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream) {
    std::lock_guard<std::mutex> g(g_mu);
    if (erase_handle(g_streams, stream)) return ACL_SUCCESS;
    return set_err(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: unknown stream");
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
    std::lock_guard<std::mutex> g(g_mu);
    Stream* st = resolve_stream_locked(stream);
    return host_waits_locked(*st);
}

aclError aclrtSynchronizeDevice(void) {
    std::lock_guard<std::mutex> g(g_mu);
    if (t_device < 0) return set_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSynchronizeDevice: no device set on this thread");
    aclError rc = ACL_SUCCESS;
    for (auto& st : g_streams) {
        if (st->device != t_device) continue;
        aclError waited = host_waits_locked(*st);
        if (rc == ACL_SUCCESS) rc = waited;
    }
    return rc;
}

aclError aclrtCreateEvent(aclrtEvent* event) {
    if (!event) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent: event is NULL");
    std::lock_guard<std::mutex> g(g_mu);
    if (t_device < 0) return set_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtCreateEvent: no device set on this thread");
    g_events.push_back(std::make_unique<Event>());
    g_events.back()->device = t_device;
    *event = g_events.back().get();
    return ACL_SUCCESS;
}

namespace {
Event* find_event_locked(aclrtEvent event) {
    for (auto& e : g_events)
        if (e.get() == event) return e.get();
    return nullptr;
}
}  // namespace

aclError aclrtDestroyEvent(aclrtEvent event) {
    std::lock_guard<std::mutex> g(g_mu);
    if (erase_handle(g_events, event)) return ACL_SUCCESS;
    return set_err(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: unknown event");
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    std::lock_guard<std::mutex> g(g_mu);
    Event* e = find_event_locked(event);
    if (!e) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: unknown event");
    Stream* st = resolve_stream_locked(stream);
    if (st->device != e->device)
        return set_err(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: the event and the stream are on different devices");
    // Enqueued after what the host did so far; captures the stream's work.
    join_into(st->clock, g_host_clock);
    e->clock = st->clock;
    e->recorded = true;
    return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    std::lock_guard<std::mutex> g(g_mu);
    Event* e = find_event_locked(event);
    if (!e) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEvent: unknown event");
    Stream* st = resolve_stream_locked(stream);
    join_into(st->clock, g_host_clock);
    // Waiting for an event never recorded does not wait.
    if (e->recorded) join_into(st->clock, e->clock);
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
    std::lock_guard<std::mutex> g(g_mu);
    Event* e = find_event_locked(event);
    if (!e) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeEvent: unknown event");
    if (e->recorded) join_into(g_host_clock, e->clock);
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy) {
    if (!devPtr) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is NULL");
    if (size == 0) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size is 0");
    std::lock_guard<std::mutex> g(g_mu);
    if (t_device < 0) return set_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtMalloc: no device set on this thread");
    Device& d = g_devices[t_device];
    // ACL rounds the size up to 32 bytes plus 32 more; the start is 64-byte
    // aligned. Compared with the free HBM before rounding, so that sizes near
    // SIZE_MAX cannot wrap into a small allocation.
    uint64_t free_bytes = d.soc.hbm_bytes > d.allocated ? d.soc.hbm_bytes - d.allocated : 0;
    uint64_t usable = static_cast<uint64_t>(size) > free_bytes ? 0 : (static_cast<uint64_t>(size) + 31) / 32 * 32 + 32;
    if (usable == 0 || usable > free_bytes) {
        return set_err(ACL_ERROR_RT_MEMORY_ALLOCATION,
                       fmt("aclrtMalloc: %zu bytes exceed the free HBM of the simulated %s (%llu of %llu bytes in use)",
                           size, d.soc.name, (unsigned long long)d.allocated, (unsigned long long)d.soc.hbm_bytes));
    }
    void* p = nullptr;
    if (posix_memalign(&p, 512, usable) != 0 || !p)
        return set_err(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: host memory exhausted");
    // aclrtMalloc does not initialise the memory: poisoned like local memory,
    // so that reading device memory nobody wrote gives a visibly wrong answer
    // (instead of the zeros a fresh host page would give).
    // (The same bytes as ascsim::poison, a word at a time: p is 512-aligned
    // and usable a multiple of 32.)
    std::fill_n(static_cast<uint32_t*>(p), usable / 4, poison_word());
    Allocation a;
    a.base = static_cast<uint8_t*>(p);
    a.size = usable;
    a.requested = size;
    a.device = t_device;
    a.dev_addr = place_on_device(d, usable);
    g_allocs[reinterpret_cast<uintptr_t>(p)] = std::move(a);
    d.allocated += usable;
    ++d.mallocs;
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_allocs.find(reinterpret_cast<uintptr_t>(devPtr));
    if (it == g_allocs.end()) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtFree: not a device allocation");
    // Freed anyway (the caller cannot keep it); the race is reported by the
    // device's next synchronisation.
    std::string race = host_access_locked(devPtr, false, true, "aclrtFree");
    Device& owner = g_devices[it->second.device];
    if (!race.empty() && owner.pending_race.empty()) owner.pending_race = race;
    owner.allocated -= it->second.size;
    owner.dev_ranges.erase(it->second.dev_addr);
    std::free(it->second.base);
    g_allocs.erase(it);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
    if (count == 0) return ACL_SUCCESS;
    if (!dst || !src) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: NULL pointer");
    if (count > destMax) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: count exceeds destMax");
    std::lock_guard<std::mutex> g(g_mu);
    bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    if (dst_dev && !find_alloc_locked(reinterpret_cast<uintptr_t>(dst), count))
        return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: destination range is not inside a device allocation");
    if (src_dev && !find_alloc_locked(reinterpret_cast<uintptr_t>(src), count))
        return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: source range is not inside a device allocation");
    std::string race;
    if (src_dev) race = host_access_locked(src, true, false, "aclrtMemcpy (reading the source)");
    if (dst_dev) {
        std::string r = host_access_locked(dst, false, true, "aclrtMemcpy (writing the destination)");
        if (race.empty()) race = r;
    }
    if (!race.empty()) return set_err(ACL_ERROR_FAILURE, race);
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    if (count > maxCount) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemset: count exceeds maxCount");
    std::lock_guard<std::mutex> g(g_mu);
    if (count && !find_alloc_locked(reinterpret_cast<uintptr_t>(devPtr), count))
        return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemset: range is not inside a device allocation");
    if (count) {
        std::string race = host_access_locked(devPtr, false, true, "aclrtMemset");
        if (!race.empty()) return set_err(ACL_ERROR_FAILURE, race);
    }
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}

// The asynchronous forms run at once (as every launch does) and are ordered
// as work of their stream: after what the host did before, before what the
// host does after only once the stream is synchronised. Only device memory
// is accepted (a host buffer of a real asynchronous copy must outlive it,
// which nothing here could check).
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
    if (count == 0) return ACL_SUCCESS;
    if (!dst || !src) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync: NULL pointer");
    if (count > destMax) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync: count exceeds destMax");
    if (kind != ACL_MEMCPY_DEVICE_TO_DEVICE)
        return set_err(ACL_ERROR_INVALID_PARAM,
                       "aclrtMemcpyAsync: the simulator takes device-to-device copies only (a host buffer must "
                       "outlive an asynchronous copy)");
    // CANN 7.0 to 8.0 state it for every product (aclrtMemcpyAsync, constraints):
    // source and destination must both be 64-byte aligned.
    if (reinterpret_cast<uintptr_t>(dst) % 64 != 0 || reinterpret_cast<uintptr_t>(src) % 64 != 0)
        return set_err(ACL_ERROR_INVALID_PARAM,
                       fmt("aclrtMemcpyAsync: rule: source %p and destination %p must both be 64-byte aligned", src,
                           dst));
    std::lock_guard<std::mutex> g(g_mu);
    aclError rc = stream_op_locked("aclrtMemcpyAsync", ASCSIM_TASK_COPY, count, stream, dst, count, src, count);
    if (rc != ACL_SUCCESS) return rc;
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}

// `height` rows of `width` bytes, `spitch` apart in the source and `dpitch`
// in the destination (device to device only, as aclrtMemcpyAsync here).
aclError aclrtMemcpy2dAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            aclrtMemcpyKind kind, aclrtStream stream) {
    if (width == 0 || height == 0) return ACL_SUCCESS;
    if (!dst || !src) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy2dAsync: NULL pointer");
    if (width > dpitch || width > spitch)
        return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy2dAsync: width exceeds a pitch");
    if (height > 5u * 1024 * 1024)
        return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy2dAsync: height exceeds 5242880");
    if (kind != ACL_MEMCPY_DEVICE_TO_DEVICE)
        return set_err(ACL_ERROR_INVALID_PARAM,
                       "aclrtMemcpy2dAsync: the simulator takes device-to-device copies only");
    std::lock_guard<std::mutex> g(g_mu);
    const uint64_t dspan = (height - 1) * static_cast<uint64_t>(dpitch) + width;
    const uint64_t sspan = (height - 1) * static_cast<uint64_t>(spitch) + width;
    aclError rc = stream_op_locked("aclrtMemcpy2dAsync", ASCSIM_TASK_COPY, static_cast<uint64_t>(width) * height,
                                   stream, dst, dspan, src, sspan);
    if (rc != ACL_SUCCESS) return rc;
    for (size_t i = 0; i < height; ++i)
        std::memmove(static_cast<uint8_t*>(dst) + i * dpitch, static_cast<const uint8_t*>(src) + i * spitch, width);
    return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
    if (count > maxCount) return set_err(ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync: count exceeds maxCount");
    if (count == 0) return ACL_SUCCESS;
    std::lock_guard<std::mutex> g(g_mu);
    aclError rc = stream_op_locked("aclrtMemsetAsync", ASCSIM_TASK_MEMSET, count, stream, devPtr, count, nullptr, 0);
    if (rc != ACL_SUCCESS) return rc;
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}

const char* aclrtGetSocName(void) {
    std::lock_guard<std::mutex> g(g_mu);
    if (t_device < 0 || !g_devices.count(t_device)) return nullptr;
    return g_devices[t_device].soc.name;
}

const char* aclGetRecentErrMsg(void) { return t_err.c_str(); }

aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t* value) {
    if (!value) return set_err(ACL_ERROR_INVALID_PARAM, "aclGetDeviceCapability: value is NULL");
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_devices.find(static_cast<int32_t>(deviceId));
    if (it == g_devices.end()) return set_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclGetDeviceCapability: no such device");
    const ascsim_soc& s = it->second.soc;
    switch (deviceInfo) {
        case ACL_DEVICE_INFO_AI_CORE_NUM: *value = s.cube_cores; break;
        case ACL_DEVICE_INFO_VECTOR_CORE_NUM: *value = s.vector_cores; break;
        case ACL_DEVICE_INFO_L2_SIZE: *value = static_cast<int64_t>(s.l2_bytes); break;
        default: return set_err(ACL_ERROR_INVALID_PARAM, "aclGetDeviceCapability: unknown attribute");
    }
    return ACL_SUCCESS;
}

// ---- simulator reports ----

uint32_t ascsim_launch_count(void* stream) {
    std::lock_guard<std::mutex> g(g_mu);
    return static_cast<uint32_t>(resolve_stream_locked(stream)->launches.size());
}

int32_t ascsim_launch_info_get(void* stream, uint32_t launch, ascsim_launch_info* info) {
    std::lock_guard<std::mutex> g(g_mu);
    Stream* st = resolve_stream_locked(stream);
    if (launch >= st->launches.size() || !info) return ACL_ERROR_INVALID_PARAM;
    *info = st->launches[launch].info;
    return ACL_SUCCESS;
}

size_t ascsim_launch_error(void* stream, uint32_t launch, char* buf, size_t len) {
    std::lock_guard<std::mutex> g(g_mu);
    Stream* st = resolve_stream_locked(stream);
    if (launch >= st->launches.size()) return 0;
    const std::string& e = st->launches[launch].error;
    if (buf && len) std::snprintf(buf, len, "%s", e.c_str());
    return e.size();
}

int32_t ascsim_core_trace(void* stream, uint32_t launch, uint32_t core, const ascsim_event** events, size_t* count,
                          uint32_t* core_kind, uint32_t* block_idx) {
    std::lock_guard<std::mutex> g(g_mu);
    Stream* st = resolve_stream_locked(stream);
    if (launch >= st->launches.size()) return ACL_ERROR_INVALID_PARAM;
    LaunchRecord& r = st->launches[launch];
    if (core >= r.traces.size()) return ACL_ERROR_INVALID_PARAM;
    if (events) *events = r.traces[core].data();
    if (count) *count = r.traces[core].size();
    if (core_kind) *core_kind = r.kinds[core];
    if (block_idx) *block_idx = r.block_idx[core];
    return ACL_SUCCESS;
}

void ascsim_clear_launches(void* stream) {
    std::lock_guard<std::mutex> g(g_mu);
    Stream* st = resolve_stream_locked(stream);
    st->launches.clear();
    st->synced = 0;
}

const char* ascsim_op_name(uint16_t op) {
    std::lock_guard<std::mutex> g(g_mu);
    return op < g_op_names.size() ? g_op_names[op].c_str() : "?";
}

uint64_t ascsim_malloc_count(int32_t device_id) {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_devices.find(device_id);
    return it == g_devices.end() ? 0 : it->second.mallocs;
}

uint64_t ascsim_allocated_bytes(int32_t device_id) {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = g_devices.find(device_id);
    return it == g_devices.end() ? 0 : it->second.allocated;
}

}  // extern "C"
