// hazard.cpp: the in-core hazard checker (a racecheck for the pipes of one
// core) and the event-id rules of the TPipe. Each API call that does work is
// an instruction on one pipe with a per-pipe number; each pipe keeps a vector
// clock of what it knows to be finished. Edges: SetFlag (the source pipe's
// clock, with all its issued instructions) -> WaitFlag (joined into the
// destination pipe); PipeBarrier<p> (p's own instructions); PipeBarrier
// <PIPE_ALL>, SyncAll (everything); the scalar unit issues every instruction,
// so what it has waited for reaches every later instruction; a scalar access
// itself reaches another pipe only through an S_* flag. Two accesses to one
// 32-byte granule of local memory (or to the same GM bytes, see runtime.cpp),
// at least one a write, from different pipes or from one non-scalar pipe,
// must be ordered, else the launch stops with rule "in-core race".
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "hazard_state.h"

namespace ascsim {

namespace {

const char* const kEventNames[] = {
    "MTE2_MTE1", "MTE1_MTE2", "MTE1_M",   "M_MTE1",    "MTE2_V",    "V_MTE2",   "MTE3_V",    "V_MTE3",    "M_V",
    "V_M",       "V_V",       "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",   "MTE2_M",   "M_MTE2",    "V_MTE1",    "M_FIX",
    "FIX_M",     "MTE3_MTE2", "MTE2_MTE3", "S_V",       "V_S",      "S_MTE2",   "MTE2_S",    "S_MTE3",    "MTE3_S",
    "MTE2_FIX",  "FIX_MTE2",  "FIX_S",     "M_S",       "FIX_MTE3", "MTE1_FIX", "FIX_MTE1",  "FIX_FIX",
};
static_assert(sizeof(kEventNames) / sizeof(kEventNames[0]) == static_cast<size_t>(kEvents), "one name per HardEvent");

const char* event_name(int ev) { return ev >= 0 && ev < kEvents ? kEventNames[ev] : "?"; }

void event_pipes(int ev, uint8_t& src, uint8_t& dst) {
    AscendC::sim_detail::event_pipes(static_cast<AscendC::HardEvent>(ev), src, dst);
}

// The pipes a core type has for SetFlag/WaitFlag (the legal in-core
// combinations of NPU arch 2201): AIV S, V, MTE2, MTE3; AIC M, MTE1, MTE2,
// MTE3, FIX (the cube's scalar unit has no flag events).
bool core_has_pipe(CoreKind k, uint8_t p) {
    if (k == CoreKind::AIV) return p == ASCSIM_PIPE_S || p == ASCSIM_PIPE_V || p == ASCSIM_PIPE_MTE2 || p == ASCSIM_PIPE_MTE3;
    return p == ASCSIM_PIPE_M || p == ASCSIM_PIPE_MTE1 || p == ASCSIM_PIPE_MTE2 || p == ASCSIM_PIPE_MTE3 ||
           p == ASCSIM_PIPE_FIX;
}

HzCore& H() { return *core().hz; }

void join_into(std::vector<uint32_t>& dst, const std::vector<uint32_t>& src) {
    const size_t n = std::min(dst.size(), src.size());
    for (size_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
}

// The scalar unit's knowledge reaches pipe p's next instruction (not the
// scalar unit's own accesses: those need an S_* flag).
void issue_join(HzCore& h, uint32_t p) {
    if (p == ASCSIM_PIPE_S || h.joined[p] == h.s_version) return;
    auto& k = h.know[p];
    const auto& s = h.know[ASCSIM_PIPE_S];
    const uint32_t own_s = h.own(ASCSIM_PIPE_S);
    for (uint32_t i = 0; i < h.width; ++i)
        if (i != own_s) k[i] = std::max(k[i], s[i]);
    h.joined[p] = h.s_version;
}

const char* origin_label(EventOrigin who) {
    switch (who) {
        case EventOrigin::Queue: return "a TQue (EnQue or FreeTensor)";
        case EventOrigin::Pipe: return "the TPipe (its reserved M_MTE1 events)";
        default: return "kernel code";
    }
}

std::string region_name(const HzCore& h, Mem m, uint64_t byte) {
    for (const Region& r : h.regions)
        if (r.m == m && byte >= r.lo && byte < r.hi) return r.name;
    return "no TPipe buffer";
}

// ASCSIM_HAZARDS=all: report every distinct race on stderr and go on (for
// fixing kernels: one run lists them all); the launch still fails at its end.
bool report_all() {
    static const bool all = [] {
        const char* v = std::getenv("ASCSIM_HAZARDS");
        return v && std::strcmp(v, "all") == 0;
    }();
    return all;
}

// Stops the launch (or, with ASCSIM_HAZARDS=all, reports each kind of race
// once and goes on).
void report(HzCore& h, const std::string& msg, const char* other_op, uint32_t other_pipe, bool write,
            bool other_write) {
    if (!report_all()) fail("in-core race", msg);
    static std::mutex mu;
    static std::set<std::string> seen;
    std::string key = launch_kernel_name() + "|" + ascsim_op_name(h.cur_op) + "|" + other_op + "|" +
                      pipe_name(static_cast<uint32_t>(h.cur_pipe)) + pipe_name(other_pipe) + (write ? "w" : "r") +
                      (other_write ? "w" : "r");
    h.races++;
    std::lock_guard<std::mutex> lock(mu);
    if (seen.insert(key).second)
        std::fprintf(stderr, "ascsim: kernel %s: in-core race: %s\n", launch_kernel_name().c_str(), msg.c_str());
}

void race(HzCore& h, Mem m, uint32_t g, bool write, uint32_t q, uint16_t q_op, uint32_t q_ts, bool q_write) {
    const uint32_t p = static_cast<uint32_t>(h.cur_pipe);
    std::string msg =
        fmt("%s %s %s %s bytes [0x%x, 0x%x) (%s), which %s %s (%s instruction %u) %s before, and nothing orders the "
            "two; missing: %s",
            pipe_name(p), ascsim_op_name(h.cur_op), write ? "writes" : "reads", mem_name(m), g * 32u, g * 32u + 32u,
            region_name(h, m, g * 32ull).c_str(), pipe_name(q), ascsim_op_name(q_op), pipe_name(q), q_ts,
            q_write ? "wrote" : "read", hz_missing_edge(q, p).c_str());
    report(h, msg, ascsim_op_name(q_op), q, write, q_write);
}

// A read of bytes two unordered writes both wrote: either may land last.
void ambiguous(HzCore& h, Mem m, uint32_t g, const Granule& G) {
    const uint32_t p = static_cast<uint32_t>(h.cur_pipe);
    std::string msg = fmt(
        "%s %s reads %s bytes [0x%x, 0x%x) (%s), which both %s %s (%s instruction %u) and a later %s %s wrote, and "
        "nothing orders the two writes, so either may land last; missing: %s",
        pipe_name(p), ascsim_op_name(h.cur_op), mem_name(m), g * 32u, g * 32u + 32u,
        region_name(h, m, g * 32ull).c_str(), pipe_name(G.x.pipe), ascsim_op_name(G.x.op), pipe_name(G.x.pipe),
        G.x.ts, pipe_name(G.x_pipe2), ascsim_op_name(G.x_op2), hz_missing_edge(G.x.pipe, G.x_pipe2).c_str());
    report(h, msg, ascsim_op_name(G.x.op), G.x.pipe, true, true);
}

bool ordered_local(const HzCore& h, uint32_t q, uint32_t t) {
    const uint32_t p = static_cast<uint32_t>(h.cur_pipe);
    if (q == p && (p == ASCSIM_PIPE_S || t == h.cur_ts || h.cur_hw_same)) return true;
    return t <= h.know[p][h.own(q)];
}

// A free slot of G for a new access. When all are live, the two of one pipe
// and kind closest in time merge (the later timestamp stands for both: a check
// against it is at least as strict, and between neighbours rarely stricter
// than the truth), else the oldest read is forgotten.
Slot& free_slot(Granule& G) {
    for (Slot& x : G.s)
        if (!x.mask) return x;
    Slot *keep = nullptr, *gone = nullptr;
    for (int i = 0; i < Granule::kSlots; ++i)
        for (int j = i + 1; j < Granule::kSlots; ++j) {
            Slot &a = G.s[i], &b = G.s[j];
            if (a.pipe != b.pipe || a.write != b.write) continue;
            Slot* later = a.ts >= b.ts ? &a : &b;
            Slot* earlier = later == &a ? &b : &a;
            if (!keep || later->ts - earlier->ts < keep->ts - gone->ts) keep = later, gone = earlier;
        }
    if (keep) {
        keep->mask |= gone->mask;
        *gone = Slot{};
        return *gone;
    }
    Slot* oldest = nullptr;
    for (Slot& x : G.s)
        if (!x.write && (!oldest || x.ts < oldest->ts)) oldest = &x;
    if (!oldest) oldest = &G.s[0];
    *oldest = Slot{};
    return *oldest;
}

void access(HzCore& h, Mem m, uint32_t g, uint32_t bytes, Acc a) {
    auto& sh = h.shadow[static_cast<int>(m)];
    if (g / Shadow::kPage >= sh.pages.size()) return;  // out of range: span() has failed already
    Granule& G = sh.at(g);
    const uint32_t p = static_cast<uint32_t>(h.cur_pipe);
    const bool reads = a == Acc::Read || a == Acc::ReadWrite, writes = a == Acc::Write || a == Acc::ReadWrite;
    if (reads) {
        for (const Slot& w : G.s)
            if (w.write && (w.mask & bytes) && !ordered_local(h, w.pipe, w.ts))
                race(h, m, g, false, w.pipe, w.op, w.ts, true);
        if (G.x.mask & bytes) ambiguous(h, m, g, G);
    }
    if (writes) {
        for (Slot& x : G.s) {
            if (!(x.mask & bytes)) continue;
            if (!ordered_local(h, x.pipe, x.ts)) {
                if (!x.write) race(h, m, g, true, x.pipe, x.op, x.ts, false);
                // Two unordered writes: the bytes hold either (a race only
                // for a later reader; kept while no other ambiguity is open).
                if (!G.x.mask) {
                    G.x = Slot{x.ts, x.mask & bytes, x.op, x.pipe, 1};
                    G.x_op2 = h.cur_op;
                    G.x_pipe2 = static_cast<uint8_t>(p);
                }
            }
            // Ordered before this write (or recorded above): later accesses
            // of these bytes need only follow this write.
            x.mask &= ~bytes;
        }
        // A write ordered after the earlier of two unordered writes settles
        // the bytes it rewrites (the later one is a slot, checked above).
        if (G.x.mask && ordered_local(h, G.x.pipe, G.x.ts)) G.x.mask &= ~bytes;
        Slot& w = free_slot(G);
        w = Slot{h.cur_ts, bytes, h.cur_op, static_cast<uint8_t>(p), 1};
    } else if (reads) {
        // The pipe's earlier read of these bytes is superseded by this one.
        for (Slot& x : G.s)
            if (!x.write && x.pipe == p) x.mask &= ~bytes;
        Slot& r = free_slot(G);
        r = Slot{h.cur_ts, bytes, h.cur_op, static_cast<uint8_t>(p), 0};
    }
}

void require_instr(const HzCore& h) {
    if (h.cur_pipe < 0)
        fail("simulator error", fmt("%s touches local memory outside an instruction (the simulator API lacks "
                                    "ASCSIM_INSTR)",
                                    core().api));
}

}  // namespace

const char* pipe_name(uint32_t pipe) {
    static const char* const names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL"};
    return pipe < 8 ? names[pipe] : "?";
}

std::string hz_missing_edge(uint32_t q, uint32_t p) {
    if (q == p) {
        std::string s = fmt("PipeBarrier<PIPE_%s>() between them", pipe_name(p));
        if (p == ASCSIM_PIPE_M) s += " (an accumulating Mmad is ordered by the hardware only when (m/16)*(n/16) >= 10)";
        return s;
    }
    for (int ev = 0; ev < kEvents; ++ev) {
        uint8_t s, d;
        event_pipes(ev, s, d);
        if (s == q && d == p)
            return fmt("SetFlag<HardEvent::%s>/WaitFlag<HardEvent::%s> from the first to the second (or the queue "
                       "hand-off that inserts it)",
                       event_name(ev), event_name(ev));
    }
    return fmt("an edge from PIPE_%s to PIPE_%s (there is no direct event: go through PipeBarrier<PIPE_ALL>)",
               pipe_name(q), pipe_name(p));
}

// ---------------------------------------------------------------- state

void hz_init(CoreCtx& c, uint32_t cores, bool on) {
    HzCore& h = *c.hz;
    h.on = on;
    h.self = c.core_id;
    h.width = cores * kPipeSlots;
    if (!on) return;
    for (auto& k : h.know) k.assign(h.width, 0);
    for (int m = 0; m < static_cast<int>(Mem::COUNT); ++m)
        if (!c.mem[m].empty()) h.shadow[m].pages.resize((c.mem[m].size() / 32 + Shadow::kPage - 1) / Shadow::kPage);
}

bool hz_enabled() {
    HzCore* h = core().hz;
    return h && h->on;
}

Instr::Instr(uint8_t pipe, bool hw_orders_same_pipe) {
    CoreCtx& c = core();
    HzCore* h = c.hz;
    outer_ = h && h->cur_pipe < 0;
    if (!outer_) return;
    h->cur_pipe = pipe;
    h->cur_ts = ++h->issued[pipe];
    h->cur_op = op_id(c.api);
    h->cur_hw_same = hw_orders_same_pipe;
    if (h->on) issue_join(*h, pipe);
}

Instr::~Instr() {
    if (outer_) core().hz->cur_pipe = -1;
}

void hz_range(Mem m, uint64_t addr, uint64_t bytes, Acc a) {
    HzCore& h = H();
    if (!h.on || bytes == 0 || a == Acc::None) return;
    require_instr(h);
    const uint64_t end = addr + bytes;
    for (uint64_t g = addr / 32; g <= (end - 1) / 32; ++g) {
        const uint64_t lo = std::max(addr, g * 32) - g * 32, hi = std::min(end, g * 32 + 32) - g * 32;
        const uint32_t mask = static_cast<uint32_t>(((hi == 32 ? 0ull : 1ull << hi) - 1) & ~((1ull << lo) - 1));
        access(h, m, static_cast<uint32_t>(g), hi == 32 && lo == 0 ? ~0u : mask, a);
    }
}

void hz_granules(Mem m, const uint32_t* granules, const uint32_t* masks, size_t count, Acc a) {
    HzCore& h = H();
    if (!h.on || a == Acc::None) return;
    require_instr(h);
    for (size_t i = 0; i < count; ++i) access(h, m, granules[i], masks ? masks[i] : ~0u, a);
}

void hz_name_region(Mem m, uint64_t addr, uint64_t bytes, const std::string& name) {
    H().regions.push_back(Region{m, addr, addr + bytes, name});
}

std::vector<uint32_t> hz_snapshot(uint8_t pipe) {
    HzCore& h = H();
    if (!h.on) return {};
    std::vector<uint32_t> s = h.know[pipe];
    s[h.own(pipe)] = std::max(s[h.own(pipe)], h.issued[pipe]);
    return s;
}

std::vector<uint32_t> hz_full_snapshot() {
    HzCore& h = H();
    if (!h.on) return {};
    std::vector<uint32_t> s(h.width, 0);
    for (uint32_t p = 0; p < kPipes; ++p) {
        join_into(s, h.know[p]);
        s[h.own(p)] = std::max(s[h.own(p)], h.issued[p]);
    }
    return s;
}

void hz_join_wait(const std::vector<uint32_t>& v) {
    HzCore& h = H();
    if (!h.on) return;
    join_into(h.know[ASCSIM_PIPE_S], v);
    h.s_version++;
}

void hz_join_barrier(const std::vector<uint32_t>& v) {
    HzCore& h = H();
    if (!h.on) return;
    std::vector<uint32_t> all = hz_full_snapshot();
    join_into(all, v);
    for (uint32_t p = 0; p < kPipes; ++p) h.know[p] = all;
    h.s_version++;
}

void hz_pipe_barrier(uint8_t pipe) {
    HzCore& h = H();
    if (!h.on) return;
    if (pipe == ASCSIM_PIPE_NONE) {
        hz_join_barrier({});
    } else {
        uint32_t& k = h.know[pipe][h.own(pipe)];
        k = std::max(k, h.issued[pipe]);
    }
}

uint32_t hz_thread() {
    HzCore& h = H();
    return h.own(h.cur_pipe < 0 ? static_cast<uint32_t>(ASCSIM_PIPE_S) : static_cast<uint32_t>(h.cur_pipe));
}

uint32_t hz_epoch() { return H().cur_ts; }

bool hz_ordered(uint32_t thread, uint32_t epoch) {
    HzCore& h = H();
    if (!h.on) return true;
    const uint32_t p = h.cur_pipe < 0 ? static_cast<uint32_t>(ASCSIM_PIPE_S) : static_cast<uint32_t>(h.cur_pipe);
    if (thread == h.own(p) && (p == ASCSIM_PIPE_S || epoch == h.cur_ts)) return true;
    return thread < h.width && epoch <= h.know[p][thread];
}

// ---------------------------------------------------------------- events

namespace {

void check_event_on_core(int ev) {
    uint8_t s, d;
    event_pipes(ev, s, d);
    CoreKind k = core().kind;
    if (s == d || !core_has_pipe(k, s) || !core_has_pipe(k, d))
        fail("invalid event for core",
             fmt("HardEvent::%s is not an in-core sync of an %s core (AIV: S, V, MTE2, MTE3; AIC: M, MTE1, MTE2, "
                 "MTE3, FIX; one pipe to itself is PipeBarrier)",
                 event_name(ev), k == CoreKind::AIC ? "AIC" : "AIV"));
}

// In a kernel with a TPipe, user SetFlag/WaitFlag ids come from the pipe:
// its queues take ids of the same events from the same 8.
void check_user_id(HzCore& h, int ev, int id, const char* call) {
    const uint8_t bit = static_cast<uint8_t>(1u << id);
    if (h.user_owned[ev] & bit) return;
    if (h.occupied[ev] & bit)
        fail("event id collides with the pipe",
             fmt("%s<HardEvent::%s>(%d): the TPipe holds that id (an in-flight TQue event, or the AIC's reserved "
                 "M_MTE1 ids 0..2); take ids from AllocEventID / FetchEventID",
                 call, event_name(ev), id));
    if (h.fetched[ev] & bit) return;
    fail("event id not from the pipe",
         fmt("%s<HardEvent::%s>(%d) in a kernel with a TPipe uses an id the pipe did not hand out: take it from "
             "GetTPipePtr()->FetchEventID / AllocEventID (the TQues allocate ids of the same event)",
             call, event_name(ev), id));
}

}  // namespace

void hz_set_flag(int ev, int id, EventOrigin who) {
    CoreCtx& c = core();
    HzCore& h = *c.hz;
    if (who == EventOrigin::User) {
        check_event_on_core(ev);
        if (c.tpipe) check_user_id(h, ev, id, "SetFlag");
    }
    FlagSlot& f = h.flags[ev][id];
    if (f.pending)
        fail("unpaired SetFlag",
             fmt("SetFlag<HardEvent::%s>(%d) by %s while the set by %s (%s) is not yet waited: set twice before its "
                 "WaitFlag (hangs on hardware)",
                 event_name(ev), id, origin_label(who), origin_label(f.who), ascsim_op_name(f.set_op)));
    f.pending = true;
    f.who = who;
    f.set_op = op_id(c.api);
    if (h.on) {
        uint8_t s, d;
        event_pipes(ev, s, d);
        f.snap = hz_snapshot(s);
    }
}

void hz_wait_flag(int ev, int id, EventOrigin who) {
    CoreCtx& c = core();
    HzCore& h = *c.hz;
    if (who == EventOrigin::User) {
        check_event_on_core(ev);
        if (c.tpipe) check_user_id(h, ev, id, "WaitFlag");
    }
    FlagSlot& f = h.flags[ev][id];
    if (!f.pending)
        fail("unpaired WaitFlag", fmt("WaitFlag<HardEvent::%s>(%d) by %s without a preceding SetFlag (hangs on "
                                      "hardware)",
                                      event_name(ev), id, origin_label(who)));
    f.pending = false;
    if (h.on) {
        uint8_t s, d;
        event_pipes(ev, s, d);
        join_into(h.know[d], f.snap);
        if (d == ASCSIM_PIPE_S) h.s_version++;
    }
}

int hz_event_alloc(int ev, EventOrigin who) {
    HzCore& h = H();
    for (int id = 0; id < 8; ++id) {
        const uint8_t bit = static_cast<uint8_t>(1u << id);
        if (h.occupied[ev] & bit) continue;
        h.occupied[ev] |= bit;
        h.fetched[ev] &= static_cast<uint8_t>(~bit);
        if (who == EventOrigin::User) h.user_owned[ev] |= bit;
        return id;
    }
    fail("event ids exhausted", fmt("all 8 ids of HardEvent::%s are held (%s asked for one): too many buffers in "
                                    "flight or AllocEventID without ReleaseEventID",
                                    event_name(ev), origin_label(who)));
}

void hz_event_release(int ev, int id, EventOrigin who) {
    HzCore& h = H();
    const uint8_t bit = static_cast<uint8_t>(1u << (id & 7));
    if (id < 0 || id > 7 || !(h.occupied[ev] & bit) ||
        (who == EventOrigin::User && !(h.user_owned[ev] & bit)))
        fail("invalid event release", fmt("ReleaseEventID<HardEvent::%s>(%d) of an id that %s did not reserve",
                                          event_name(ev), id, origin_label(who)));
    h.occupied[ev] &= static_cast<uint8_t>(~bit);
    h.user_owned[ev] &= static_cast<uint8_t>(~bit);
}

int hz_event_fetch(int ev) {
    HzCore& h = H();
    for (int id = 0; id < 8; ++id) {
        const uint8_t bit = static_cast<uint8_t>(1u << id);
        if (h.occupied[ev] & bit) continue;
        h.fetched[ev] |= bit;
        return id;
    }
    fail("event ids exhausted", fmt("FetchEventID<HardEvent::%s>: all 8 ids are held", event_name(ev)));
}

void hz_end_of_kernel() {
    ASCSIM_API("kernel end");
    HzCore& h = H();
    if (h.races)
        fail("in-core race", fmt("%u races, each kind reported once on stderr (ASCSIM_HAZARDS=all)", h.races));
    for (int ev = 0; ev < kEvents; ++ev)
        for (int id = 0; id < 8; ++id) {
            const FlagSlot& f = h.flags[ev][id];
            if (f.pending)
                fail("SetFlag never waited",
                     fmt("SetFlag<HardEvent::%s>(%d) by %s (%s) has no WaitFlag before the kernel ends (the flag "
                         "stays set into the next kernel on this core)",
                         event_name(ev), id, origin_label(f.who), ascsim_op_name(f.set_op)));
        }
}

}  // namespace ascsim
