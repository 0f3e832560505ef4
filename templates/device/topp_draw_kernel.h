// Top-p sampling without a sort (docs/algorithms.md, "Top-p by radix
// select"): one launch finds, per row, the entry where the descending
// cumulative mass crosses p (the last kept one), then the entry where the
// kept mass crosses u * kept (the drawn one), each by a radix select on the
// probabilities' bit patterns (their order is the value order: they are
// non-negative) with mass histograms instead of counts.
//
// A crossing narrows a code interval [lo, hi) round by round: the interval
// is cut at `ways` thresholds t_j = lo + j * w (w = ceil((hi - lo) / ways)),
// every row piece sums the mass S(t_j) of its entries at or above t_j (one
// compare, one select, one ReduceSum per threshold, fp32), the pieces' sums
// go to GM slots, SyncAll, and every core owning a piece of the row adds the
// row's slots by a fixed tree of vector Adds (so all of them agree bit for
// bit) and keeps the highest sub-interval [t_j, t_j+1) with S(t_j) >
// target; S(t_j+1) is then the mass above it. A core that owns whole rows
// narrows them as each round ends, with no slots and no SyncAll. Once the interval is one code v, the crossing is
// the j-th entry equal to v in index order (ties keep the input order, as
// the stable sort does), j = the first with above + (j + 1) * v > target.
// The round that narrows to one code also counts the entries at or above
// each threshold, which the draw's locate step uses: the piece holding the
// j-th tie of the drawn code finds its index and writes the token.
// Candidates: a round over the row whose interval starts above code 0 (or
// round 0, at a guessed code that round 0's total then validates) copies
// every entry at or above that code to candidate set A (in the row's type, in order);
// later rounds read A, and once the interval has narrowed, copy the entries
// inside it to set B (in place over B after the first time), so each round
// reads only what can still hold the crossing. The draw restarts from A.
// A bound starts both searches high: fewer than n entries lie below t, so if
// n * t < mass - target, the crossing is at or above t. Whole rows also
// start below their maximum and place their thresholds by interpolation
// (Grid), so that the crossing's sub-interval, and the next set, is small.
// With count_kept, the draw's first round also counts each row's kept
// entries with mass: the ties the nucleus keeps of its last code, plus the
// entries above that code (a row kept whole: its entries above 0 and at or
// above min_p's floor).
// Rows are cut into `pieces` pieces (several cores per row when the batch is
// small); a core takes `items_per_core` consecutive pieces.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_random.h"
#include "blocks_ub_io.h"

namespace ascend_scan {
namespace toppdraw {

constexpr uint32_t kTile = 4096;      // elements per tile (a multiple of 64)
constexpr uint32_t kMaxWays = 16;     // thresholds per round
constexpr uint32_t kAccLanes = kTile / 4;  // lanes of round 0's running sum, maximum and minimum
// Tiles whose per-threshold sums wait in UB for one scalar read (each read
// drains the vector pipe).
constexpr uint32_t kSumTiles = 8;
// A piece's slot: kMaxWays fp32 masses, then kMaxWays + 1 counts as fp32
// (exact: rows have at most 2^24 entries), so that one vector Add sums slots.
constexpr uint32_t kCountsAt = kMaxWays;
constexpr uint32_t kSlotWords = 40;       // (160 bytes)
constexpr uint32_t kMaxItems = 256;   // pieces per core
constexpr uint32_t kMaxPieces = 64;   // pieces per row
constexpr uint32_t kStateWords = 29;  // per piece (116 bytes; UB holds little more)
// Slot word of a piece's largest value (round 0; read before the slots are added).
constexpr uint32_t kLargestAt = kCountsAt + kMaxWays + 1;
// Slot word of a piece's kept count (the draw's first round, with count_kept).
constexpr uint32_t kKeptCountAt = kLargestAt + 1;
static_assert(kKeptCountAt < kSlotWords, "a piece's slot words overlap the next piece's");

// State words of a piece (its row's crossing search, the same on every core
// that owns a piece of the row).
constexpr uint32_t kNone = 0xFFFFFFFFu;
enum StateWord : uint32_t {
    kLo = 0,     // the interval [lo, hi) of codes
    kHi,         //
    kAbove,      // fp32 bits: mass of the kept entries with code >= hi
    kTarget,     // fp32 bits: the crossing's target mass
    kLimit,      // the last tie of code kLimitCode that is kept, or kNone (all are)
    kLimitCode,  //
    kAll,        // 1: the row's mass is <= p, every entry is kept
    kTotal,      // fp32 bits: the row's mass (round 0)
    kKept,       // fp32 bits: the kept mass
    kTie,        // the crossing: the index of its tie among the entries equal to the code
    kBucket,     // the threshold slot of the crossing's code in the last round
    kCand,       // the piece's entries in candidate set A, or kNone (no valid A)
    kCandLo,     // A holds the piece's entries at or above this code
    kTies,       // the entries equal to the crossing's code
    kUniform,    // fp32 bits: the row's uniform
    kSettled,    // 1: the interval is one code and its tie is known
    kSrc,        // what the next round reads: kFromRow, kFromA or kFromB
    kSrcCount,   // the piece's entries in that set (A or B)
    kSrcLo,      // the set holds the entries with codes in [src lo, src hi)
    kSrcHi,      //
    kBase,       // fp32 bits: mass of the kept entries at or above src hi
    kReadBase,   // kBase of the set the last round read (its masses lack it)
    kTopCode,    // the row's largest code + 1 (whole rows: where both searches start)
    kMassLo,     // fp32 bits: (about) the mass at or above lo (whole rows' interpolation)
    kInterp,     // 1: the next round may place its thresholds by interpolation
    kShrink,     // 1: no round of this search has rewritten A yet
    kFloor,      // until round 0 ends: the row's min_p (fp32 bits); then its floor, the lowest code
                 // kept (0: none), | kOpen while the next round must test it
    kKeptCode,   // with count_kept, from StartDraw: the lowest code of which every entry is kept
    kKeptCount,  // with count_kept: the row's kept entries (the ties first, then those at or above kKeptCode)
    kStateCount,
};
static_assert(kStateCount <= kStateWords, "a piece's state words overlap the next piece's");
enum Source : uint32_t { kFromRow = 0, kFromA, kFromB };
// kFloor's flag: the next round also sums the mass at lo (the floor).
constexpr uint32_t kOpen = 0x80000000u;

// The value of a non-negative code (bit pattern) as fp32, exactly.
template <typename TProb>
struct Codes;
template <>
struct Codes<half> {
    static constexpr uint32_t kOne = 0x3C00;
    __aicore__ static inline float Value(uint32_t c) { return Float16Value<half>(c); }
};
template <>
struct Codes<bfloat16_t> {
    static constexpr uint32_t kOne = 0x3F80;
    __aicore__ static inline float Value(uint32_t c) { return Float16Value<bfloat16_t>(c); }
};
template <>
struct Codes<float> {
    static constexpr uint32_t kOne = 0x3F800000;
    __aicore__ static inline float Value(uint32_t c) { return AsFloat(c); }
};
// f32 rows are compared and summed as they are loaded (no cast, no bufX_).
template <typename TProb>
constexpr bool kIsF32 = std::is_same<TProb, float>::value;

template <typename TProb>
class Draw {
public:
    __aicore__ inline void Run(GM_ADDR probs, GM_ADDR uniforms, GM_ADDR top_p, GM_ADDR min_p, GM_ADDR tokens,
                               GM_ADDR kept, GM_ADDR kept_count, GM_ADDR check, GM_ADDR workspace,
                               const TopPDrawTiling& t) {
        t_ = t;
        core_ = static_cast<uint32_t>(GetBlockIdx());
        const uint64_t items = t.rows * t.pieces;
        first_ = static_cast<uint64_t>(core_) * t.items_per_core;
        last_ = first_ + t.items_per_core < items ? first_ + t.items_per_core : items;
        if (first_ > last_) first_ = last_;
        held_ = last_ - first_ <= kHeldItems;
        gx_.SetGlobalBuffer(reinterpret_cast<__gm__ TProb*>(probs), t.rows * t.n);
        gu_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(uniforms), t.rows);
        if (t.row_p != 0) gp_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(top_p), t.rows);
        if (t.row_min_p != 0) gMinP_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(min_p), t.rows);
        minP_ = t.min_p > 0.0f || t.row_min_p != 0;
        gTok_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(tokens), t.rows);
        gKept_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(kept), t.rows);
        countKept_ = t.count_kept != 0;
        if (countKept_) gKeptCount_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(kept_count), t.rows);
        gCheck_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(check), t.check_slots * 8);
        // Whole rows per core spend round 0 on the row's total alone (its
        // bound then starts the search), so their first search takes one
        // round more.
        // Whole rows may spend a round on an interpolation that only halves
        // the interval, or on one followed by an even cut, so they get the
        // rounds the host counted for that (a settled row skips the rest).
        rounds1_ = t.pieces == 1 ? t.whole_rounds : t.rounds;
        rounds0_ = t.pieces == 1 ? rounds1_ + 1 : t.rounds;
        const uint64_t slotWords = 2 * t.rounds * items * kSlotWords;
        gWork_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace), slotWords);
        // The candidate sets hold entries in the row's type, each set's
        // start on a 32-byte block (TopPDraw::plan sizes them so).
        __gm__ TProb* sets = reinterpret_cast<__gm__ TProb*>(reinterpret_cast<__gm__ float*>(workspace) + slotWords);
        const uint64_t setLen = (t.rows * t.n + kBlock - 1) / kBlock * kBlock;
        gCandA_.SetGlobalBuffer(sets, t.rows * t.n);
        gCandB_.SetGlobalBuffer(sets + setLen, t.rows * t.n);
        Init();
        // Phase 0: the last kept entry (target p).
        for (uint32_t r = 0; r < rounds0_; ++r) {
            Round(r);
            Exchange(r);
        }
        for (uint64_t g = first_; g < last_; ++g) StartDraw(g);
        // Phase 1: the drawn entry (target u * kept, among the kept entries).
        for (uint32_t r = 0; r < rounds1_; ++r) {
            Round(rounds0_ + r);
            Exchange(rounds0_ + r);
        }
        for (uint64_t g = first_; g < last_; ++g) Locate(g);
        WriteCheck();
    }

private:
    // UB arena (bytes): masks, ReduceSum results and scratch, slots, state.
    static constexpr uint32_t kMasksAt = 0;
    static constexpr uint32_t kSumsAt = kMasksAt + (kMaxWays + 1) * kTile / 8;
    // Init's per-row p and min_p wait in the masks (p first, then min_p).
    static constexpr uint32_t kRowMinPAt = (kMaxItems + 16) * 4;
    static_assert(2 * kRowMinPAt <= kSumsAt - kMasksAt, "per-row p and min_p overflow the masks");
    static constexpr uint32_t kReduceTmpAt = kSumsAt + kSumTiles * kMaxWays * 32;
    static constexpr uint32_t kOwnAt = kReduceTmpAt + kTile / 64 * 4 + 32;
    static constexpr uint32_t kSlotsAt = kOwnAt + kSlotWords * 4;
    static constexpr uint32_t kStateAt = kSlotsAt + kMaxPieces * kSlotWords * 4;
    static constexpr uint32_t kUniformsAt = kStateAt + kMaxItems * kStateWords * 4;
    static constexpr uint32_t kArenaBytes = kUniformsAt + (kMaxItems + 16) * 4;

    __aicore__ inline void Init() {
        pipe_.InitBuffer(qRaw_, 2, kTile * sizeof(TProb));
        pipe_.InitBuffer(qCandOut_, 2, kTile * sizeof(TProb));
        if constexpr (!kIsF32<TProb>) pipe_.InitBuffer(bufX_, kTile * sizeof(float));
        pipe_.InitBuffer(bufS_, 2 * kTile * sizeof(float));
        pipe_.InitBuffer(bufAcc_, 3 * kAccLanes * sizeof(float));
        ub_.Init(pipe_, kArenaBytes);
        state_ = ub_.At<uint32_t>(kStateAt, kMaxItems * kStateWords);
        if (t_.pieces > 1) {
            // A round writes only the slot words its readers use (Round).
            Duplicate(ub_.At<float>(kOwnAt, kSlotWords), 0.0f, static_cast<int32_t>(kSlotWords));
            PipeSync<HardEvent::V_S>();
        }
        bool bad = false;
        guess_ = GuessFor(CheckedP(t_.p, bad));
        // The rows' uniforms (seeded: computed here, as the host's
        // `uniform(seed, row, 0)`), and p and min_p of each row when given
        // per row (into the masks, unused until round 0). The pieces of a core
        // span consecutive rows.
        if (first_ < last_) {
            uint64_t r0 = first_ / t_.pieces, r1 = (last_ - 1) / t_.pieces;
            const uint32_t rowsHere = static_cast<uint32_t>(r1 - r0 + 1);
            LocalTensor<float> u = ub_.At<float>(kUniformsAt, kMaxItems + 16);
            LocalTensor<float> ps = ub_.At<float>(kMasksAt, kMaxItems + 16);
            LocalTensor<float> ms = ub_.At<float>(kMasksAt + kRowMinPAt, kMaxItems + 16);
            if (t_.seeded == 0) LoadAny(u, gu_[r0], rowsHere);
            if (t_.row_p != 0) LoadAny(ps, gp_[r0], rowsHere);
            if (t_.row_min_p != 0) LoadAny(ms, gMinP_[r0], rowsHere);
            PipeSync<HardEvent::MTE2_S>();
            for (uint64_t g = first_; g < last_; ++g) {
                const uint32_t i = static_cast<uint32_t>(g / t_.pieces - r0);
                // A p outside (0, 1] or a min_p outside [0, 1] (NaN
                // included) is counted once per row (the host refuses the
                // batch) and taken as 1 or 0.
                const bool head = g % t_.pieces == 0;
                const float p = CheckedP(t_.row_p != 0 ? ps.GetValue(i) : t_.p, bad);
                if (bad && head && t_.row_p != 0) ++badP_;
                const float minP = CheckedMinP(t_.row_min_p != 0 ? ms.GetValue(i) : t_.min_p, bad);
                if (bad && head && t_.row_min_p != 0) ++badMinP_;
                Search(g, 0, p >= 1.0f && t_.one_keeps_all != 0 ? 2.0f : p, kNone);
                Set(g, kAll, 0);
                Set(g, kTotal, 0);
                Set(g, kKept, 0);
                Set(g, kCand, kNone);
                Set(g, kCandLo, kNone);
                Set(g, kTopCode, Codes<TProb>::kOne + 1);
                Set(g, kFloor, AsBits(minP));
                FromRow(g);
                const uint64_t row = g / t_.pieces;
                const float uniform = t_.seeded != 0 ? rng::Uniform(t_.seed, t_.first_row + row, 0)
                                                     : u.GetValue(static_cast<uint32_t>(row - r0));
                Set(g, kUniform, AsBits(uniform));
            }
            ScalarReadsDone();  // the rounds' compares write the masks
        }
    }

    // Starts piece g's search for `target` over [lo, code(1.0) + 1), taking
    // at most `limit` + 1 entries equal to code lo (kNone: all).
    __aicore__ inline void Search(uint64_t g, uint32_t lo, float target, uint32_t limit) {
        Set(g, kLo, lo);
        Set(g, kHi, Codes<TProb>::kOne + 1);
        Set(g, kAbove, 0);
        Set(g, kTarget, AsBits(target));
        Set(g, kLimit, limit);
        Set(g, kLimitCode, lo);
        Set(g, kTie, 0);
        Set(g, kBucket, 0);
        Set(g, kTies, 0);
        Set(g, kSettled, 0);
        Set(g, kMassLo, AsBits(target));
        Set(g, kInterp, 1);
        Set(g, kShrink, 1);
    }

    // The next round of piece g reads its part of the row.
    __aicore__ inline void FromRow(uint64_t g) {
        Set(g, kSrc, kFromRow);
        Set(g, kSrcLo, 0);
        Set(g, kSrcHi, Codes<TProb>::kOne + 1);
        Set(g, kBase, 0);
    }
    // The next round of piece g reads `count` entries of set `src`, those
    // with codes in [lo, hi); `base` is the mass at or above hi.
    __aicore__ inline void FromSet(uint64_t g, uint32_t src, uint32_t count, uint32_t lo, uint32_t hi, float base) {
        Set(g, kSrc, src);
        Set(g, kSrcCount, count);
        Set(g, kSrcLo, lo);
        Set(g, kSrcHi, hi);
        Set(g, kBase, AsBits(base));
    }

    // The largest code whose value is at most t (t >= 0).
    __aicore__ inline uint32_t FloorCode(float t) {
        uint32_t lo = 0, hi = Codes<TProb>::kOne + 1;  // Value(lo) <= t (or lo = 0), Value(hi) > t
        if (!(t < 1.0f)) return Codes<TProb>::kOne;
        if (!(t > 0.0f)) return 0;
        // A non-negative fp32 value is its own code.
        if constexpr (kIsF32<TProb>) return AsBits(t);
        while (hi - lo > 1) {
            const uint32_t mid = (lo + hi) / 2;
            if (Codes<TProb>::Value(mid) <= t) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    // Round 0 copies piece g's entries at or above this code to A: the
    // bound of a row whose mass is at least (1 + p) / 2 is at or above it
    // (the search's target is still the row's p then).
    __aicore__ inline uint32_t Guess(uint64_t g) {
        if (t_.row_p == 0) return guess_;  // the same p for every row: worked out once
        return GuessFor(AsFloat(Get(g, kTarget)));
    }
    __aicore__ inline uint32_t GuessFor(float p) { return FloorCode((1.0f - p) / (4.0f * static_cast<float>(t_.n))); }

    // p if in (0, 1], else 1 with `bad` set (NaN is bad).
    __aicore__ static inline float CheckedP(float p, bool& bad) {
        bad = !(p > 0.0f && p <= 1.0f);
        return bad ? 1.0f : p;
    }
    // min_p if in [0, 1], else 0 with `bad` set (NaN is bad).
    __aicore__ static inline float CheckedMinP(float m, bool& bad) {
        bad = !(m >= 0.0f && m <= 1.0f);
        return bad ? 0.0f : m;
    }

    // min_p's floor for piece g at the end of round 0 (kFloor still holds
    // min_p): the lowest code whose value is at least min_p times the
    // row's largest (kTopCode - 1), or 0.
    __aicore__ inline uint32_t MinPFloor(uint64_t g) {
        const float t = AsFloat(Get(g, kFloor)) * Codes<TProb>::Value(Get(g, kTopCode) - 1);
        if (!(t > 0.0f)) return 0;
        const uint32_t c = FloorCode(t);
        return Codes<TProb>::Value(c) < t ? c + 1 : c;
    }

    // The lowest code a crossing of `target` in entries of total `mass` can
    // have: fewer than n entries lie below t, so if n * t < mass - target,
    // the mass at or above t exceeds the target. Half of that gap is used,
    // and only when it is clear of the fp32 sums' rounding (under 2^-12 of
    // the mass for rows of up to 2^24 entries): else 0.
    __aicore__ inline uint32_t BoundCode(float mass, float target) {
        const float gap = (mass - target) * 0.5f;
        if (!(gap > mass * (1.0f / 1024.0f))) return 0;
        return FloorCode(gap / static_cast<float>(t_.n));
    }

    // Whether a round over thresholds `codes` (Grid) also counts the
    // entries at each: its interval is at most `ways` codes. Round and
    // Advance agree on it, so the slots carry counts only then.
    __aicore__ inline bool Counting(const uint32_t* codes, uint32_t nt) const { return codes[nt] - codes[0] <= t_.ways; }

    // A core of at most kHeldItems pieces keeps their state words in the
    // kernel object (the scalar unit's own memory), not in UB, where every
    // scalar access is a cost of its own (one row in pieces read and wrote
    // them about 100 times a round).
    __aicore__ inline uint32_t Get(uint64_t g, uint32_t w) {
        const uint32_t at = static_cast<uint32_t>((g - first_) * kStateWords + w);
        return held_ ? heldState_[at] : state_.GetValue(at);
    }
    __aicore__ inline void Set(uint64_t g, uint32_t w, uint32_t v) {
        const uint32_t at = static_cast<uint32_t>((g - first_) * kStateWords + w);
        if (held_) {
            heldState_[at] = v;
        } else {
            state_.SetValue(at, v);
        }
    }

    // The threshold codes of piece g's interval [lo, hi) in round `set`:
    // codes[0] = lo < codes[1] < ... < codes[nt] = hi; returns nt. Round 0
    // of whole rows has only lo (it sums the row); later rounds of whole
    // rows interpolate when they may (`interp`), else (and for pieces) the
    // interval is cut into `ways` equal parts.
    __aicore__ inline uint32_t Grid(uint64_t g, uint32_t set, uint32_t* codes, bool& interp) {
        const uint32_t lo = Get(g, kLo), hi = Get(g, kHi);
        codes[0] = lo;
        uint32_t nt = 0;
        interp = false;
        if (set == 0 && t_.pieces == 1) {
            nt = 1;
        } else if (t_.pieces == 1 && hi - lo > t_.ways && Get(g, kInterp) != 0) {
            nt = Interpolate(g, lo, hi, codes);
            interp = nt > 0;
        }
        if (nt == 0) {
            const uint32_t w = (hi - lo + t_.ways - 1) / t_.ways;
            nt = (hi - lo + w - 1) / w;
            for (uint32_t j = 1; j < nt; ++j) codes[j] = lo + j * w;
        }
        codes[nt] = hi;
        return nt;
    }

    // Thresholds around the value where the mass at or above it would meet
    // the target if it fell linearly in the value between lo and hi (as it
    // does for a softmax of evenly spread logits): at 0.8 and 1.25 times it,
    // or 1/16 of the interval's codes from it if that is closer. codes[1..]
    // of those inside (lo, hi); their count + 1, or 0 if none is.
    __aicore__ inline uint32_t Interpolate(uint64_t g, uint32_t lo, uint32_t hi, uint32_t* codes) {
        const float sLo = AsFloat(Get(g, kMassLo)), sHi = AsFloat(Get(g, kAbove)), target = AsFloat(Get(g, kTarget));
        float f = sLo > sHi ? (sLo - target) / (sLo - sHi) : 0.5f;
        if (!(f > 0.0f)) f = 0.0f;
        if (f > 1.0f) f = 1.0f;
        const float vLo = Codes<TProb>::Value(lo), vHi = Codes<TProb>::Value(hi);
        const float est = vLo + f * (vHi - vLo);
        const uint32_t c = FloorCode(est), d = (hi - lo) / 16 > 1 ? (hi - lo) / 16 : 1;
        uint32_t c1 = FloorCode(est * 0.8f), c2 = FloorCode(est * 1.25f) + 1;
        if (c > d && c - d > c1) c1 = c - d;
        if (c + d + 1 < c2) c2 = c + d + 1;
        uint32_t nt = 1;
        if (c1 > lo && c1 < hi) codes[nt++] = c1;
        if (c2 > codes[nt - 1] && c2 < hi) codes[nt++] = c2;
        return nt > 1 ? nt : 0;
    }

    // Piece g's elements [begin, end) in the row-major input.
    __aicore__ inline void Range(uint64_t g, uint64_t& begin, uint64_t& end) {
        uint64_t row = g / t_.pieces, piece = g % t_.pieces;
        uint64_t a = piece * t_.piece_len, b = a + t_.piece_len;
        if (a > t_.n) a = t_.n;
        if (b > t_.n) b = t_.n;
        begin = row * t_.n + a;
        end = row * t_.n + b;
    }

    // Loads a tile of the probabilities or of candidate set A or B (in the
    // row's type), zero up to whole 128-lane repeats (f16 compares).
    __aicore__ inline void Load(uint64_t off, uint32_t count, uint32_t src) {
        LocalTensor<TProb> raw = qRaw_.AllocTensor<TProb>();
        if (count % 128 != 0) ZeroBeforeLoad(raw, (count + 127) / 128 * 128);
        LoadAny(raw, src == kFromRow ? gx_[off] : src == kFromA ? gCandA_[off] : gCandB_[off], count);
        qRaw_.EnQue(raw);
    }

    // A read of [begin, end) of one source; `next` is its first tile not
    // loaded yet (each tile is loaded while the one before it is worked on:
    // the queues have two buffers).
    struct Tiles {
        uint64_t begin, next, end;
        uint32_t src;
    };
    // A row whose mass is within p has no nucleus crossing to find (in
    // pieces it reads nothing; whole rows skip it, as those whose crossing
    // is settled).
    __aicore__ inline bool Idle(uint64_t g, uint32_t set) { return set < rounds0_ && Get(g, kAll) != 0; }
    // What piece g reads in round `set` (nothing loaded); false when it
    // takes no part (a whole row that is idle or settled). Depends on g's
    // state alone, so the next piece's read is known while the one before
    // it is worked on.
    __aicore__ inline bool PlanRead(uint64_t g, uint32_t set, Tiles& read) {
        const bool idle = Idle(g, set);
        if (t_.pieces == 1 && (idle || Get(g, kSettled) != 0)) return false;
        read.src = Get(g, kSrc);
        Range(g, read.begin, read.end);
        if (read.src != kFromRow) read.end = read.begin + Get(g, kSrcCount);
        if (idle) read.end = read.begin;
        read.next = read.begin;
        return true;
    }
    // The first piece from g on that reads in round `set` (last_ if none).
    __aicore__ inline uint64_t NextReader(uint64_t g, uint32_t set, Tiles& read) {
        while (g < last_ && !PlanRead(g, set, read)) ++g;
        return g;
    }
    // Starts reading [begin, end) of `src`: loads the first tile.
    __aicore__ inline Tiles Prefetch(uint64_t begin, uint64_t end, uint32_t src) {
        Tiles tiles{begin, begin, end, src};
        LoadNext(tiles);
        return tiles;
    }
    // Loads the next tile, if any (its buffer is free once the tile before
    // the one about to be taken was released).
    __aicore__ inline void LoadNext(Tiles& tiles) {
        if (tiles.next >= tiles.end) return;
        const uint64_t left = tiles.end - tiles.next;
        Load(tiles.next, static_cast<uint32_t>(left < kTile ? left : kTile), tiles.src);
        tiles.next += kTile;
    }
    // Takes and frees the row tiles loaded past `used` (an early end); they
    // are loaded again if the read goes on.
    __aicore__ inline void DropLoaded(Tiles& tiles, uint64_t used) {
        for (uint64_t off = used; off < tiles.next; off += kTile) {
            LocalTensor<TProb> raw = qRaw_.DeQue<TProb>();
            qRaw_.FreeTensor(raw);
        }
        if (used < tiles.next) tiles.next = used;
    }

    // The loaded tile (of the row or of a candidate set) as fp32, zero past
    // `count` up to whole 64-lane repeats: f32 tiles as they are, others
    // cast into bufX_ (the tile itself stays in raw_ for CompareTile and
    // GatherKept; a caller that only compares passes `cast` = false and
    // gets bufX_ as it was). Release frees the tile.
    __aicore__ inline LocalTensor<float> Take(uint32_t count, uint32_t padded, bool cast = true) {
        raw_ = qRaw_.DeQue<TProb>();
        rawLanes_ = (count + 127) / 128 * 128;
        // f32 tiles are fp32 already (Load zeroed them past count).
        if constexpr (kIsF32<TProb>) return raw_.template ReinterpretCast<float>();
        LocalTensor<float> x = bufX_.Get<float>();
        if (!cast) return x;
        if (count < padded) {
            Duplicate(x, 0.0f, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
        }
        Cast(x, raw_, RoundMode::CAST_NONE, count);  // exact
        PipeBarrier<PIPE_V>();
        return x;
    }
    __aicore__ inline void Release() { qRaw_.FreeTensor(raw_); }

    // Lanes the compares of a tile cover (their masks' bits): f16 tiles
    // are compared as they are, in whole 128-lane repeats.
    __aicore__ inline uint32_t CompareLanes(uint32_t padded) {
        return std::is_same<TProb, half>::value ? rawLanes_ : padded;
    }
    // mask = (value `mode` v) for the tile's lanes: on the f16 tile itself
    // (half the repeats of fp32; v is a code's value, exact in f16), else
    // on its fp32 values x.
    __aicore__ inline void CompareTile(const LocalTensor<uint8_t>& mask, const LocalTensor<float>& x, float v,
                                       CMPMODE mode, uint32_t padded) {
        if constexpr (std::is_same<TProb, half>::value) {
            CompareScalar(mask, raw_, static_cast<half>(v), mode, rawLanes_);
        } else {
            CompareScalar(mask, x, v, mode, padded);
        }
    }
    // Those of the tile's first `count` entries whose `mask` bits are set,
    // into `out` in order and in the row's type (16-bit ones gathered as
    // half lanes: the bits are moved, not converted); returns their count.
    // The caller resets the mask.
    __aicore__ inline uint64_t GatherTile(const LocalTensor<TProb>& out, const LocalTensor<uint8_t>& mask,
                                          uint32_t count) {
        const GatherMaskParams once(1, 1, 8, 0);
        uint64_t got = 0;
        if constexpr (sizeof(TProb) == 2) {
            GatherMask(out.template ReinterpretCast<half>(), raw_.template ReinterpretCast<half>(),
                       mask.ReinterpretCast<uint16_t>(), true, count, once, got);
        } else {
            GatherMask(out, raw_, mask.ReinterpretCast<uint32_t>(), true, count, once, got);
        }
        return got;
    }
    // GatherTile for a candidate set's next entries (`out` then goes to MTE3).
    __aicore__ inline uint64_t GatherKept(const LocalTensor<TProb>& out, const LocalTensor<uint8_t>& mask,
                                          uint32_t count) {
        const uint64_t got = GatherTile(out, mask, count);
        ResetMask();
        PipeBarrier<PIPE_V>();
        return got;
    }

    // Round 0's extrema of f16 rows are taken on the f16 tiles.
    static constexpr bool kHalfExtrema = std::is_same<TProb, half>::value;

    // Round `set`: every piece's masses at its thresholds (and, when its
    // interval is at most `ways` codes, its counts at them and at hi) over
    // the set it reads (without that set's base), into its slot of the set.
    // The round also writes the set the next one reads: A from the row (its
    // entries at or above lo once lo is above 0, or at or above the guess in
    // round 0), B from A or B once the interval is narrower than that set.
    __aicore__ inline void Round(uint32_t set) {
        LocalTensor<uint8_t> masks = ub_.At<uint8_t>(kMasksAt, (kMaxWays + 1) * kTile / 8);
        LocalTensor<float> sums = ub_.At<float>(kSumsAt, kSumTiles * kMaxWays * 8);
        LocalTensor<float> tmp = ub_.At<float>(kReduceTmpAt, kTile / 64 + 8);
        LocalTensor<float> s = bufS_.Get<float>();
        const uint32_t top = Codes<TProb>::kOne + 1;
        // The next piece's first tile is loaded during this piece's last one
        // (it need not wait for this piece's decision); after the round's
        // last piece, the next round's first, if that one is already decided
        // (an earlier piece of a whole row, in the same search).
        Tiles tiles = carry_.tiles;
        bool loaded = carry_.loaded;
        uint64_t g = loaded ? carry_.g : NextReader(first_, set, tiles);
        carry_.loaded = false;
        const bool sameSearch = set + 1 < rounds0_ || (set >= rounds0_ && set + 1 < rounds0_ + rounds1_);
        while (g < last_) {
            Tiles nextTiles{0, 0, 0, kFromRow};
            uint64_t next = NextReader(g + 1, set, nextTiles);
            bool nextRound = false;
            if (next == last_ && t_.pieces == 1 && sameSearch) {
                next = NextReader(first_, set + 1, nextTiles);
                nextRound = next < g;
                if (!nextRound) next = last_;
            }
            bool nextLoaded = false;
            float mass[kMaxWays];
            uint64_t counts[kMaxWays + 1];
            for (uint32_t j = 0; j < kMaxWays; ++j) mass[j] = 0.0f;
            for (uint32_t j = 0; j <= kMaxWays; ++j) counts[j] = 0;
            uint32_t codes[kMaxWays + 1];
            bool interp = false;
            const uint32_t nt = Grid(g, set, codes, interp);
            const uint32_t lo = codes[0], hi = codes[nt];
            const bool idle = Idle(g, set);
            const uint32_t src = tiles.src, srcLo = Get(g, kSrcLo), srcHi = Get(g, kSrcHi);
            const bool fromCand = src != kFromRow;
            Set(g, kReadBase, Get(g, kBase));
            const uint32_t cutA = fromCand ? 0 : lo > 0 ? lo : set == 0 ? Guess(g) : 0;
            const bool toA = !idle && cutA > 0;
            const bool total = set == 0;  // S(0): the row's mass
            // S(lo) too when lo is min_p's floor, not yet tested.
            const uint32_t j0 = !total && minP_ && (Get(g, kFloor) & kOpen) != 0 ? 0 : 1;
            // A whole row's first interpolated round over A in a search
            // rewrites A in place with its entries at or above the lowest
            // threshold it tests (for the draw after it; min_p's floor when
            // the round tests it, so that A holds the survivors): kept if
            // the crossing lies there (as the interpolation expects), else
            // dropped (the row is read again).
            const bool shrinkA = !idle && src == kFromA && interp && codes[j0] > srcLo && Get(g, kShrink) != 0;
            if (shrinkA) Set(g, kShrink, 0);
            const bool toB = !idle && fromCand && !shrinkA && (lo > srcLo || hi < srcHi);
            const bool keepAbove = toA || (toB && lo > srcLo), keepBelow = toB && hi < srcHi;
            const bool counting = Counting(codes, nt);
            float largest = 0.0f;  // round 0: the piece's largest value
            float tv[kMaxWays + 1];
            for (uint32_t j = 0; j <= nt; ++j) tv[j] = Codes<TProb>::Value(codes[j]);
            const float cut = Codes<TProb>::Value(toA ? cutA : lo);
            const uint64_t begin = tiles.begin, end = tiles.end;
            uint64_t regionBegin, regionEnd;  // the piece's region of each set
            Range(g, regionBegin, regionEnd);
            uint64_t kept = 0;
            // The draw's first round also counts the piece's kept entries:
            // those at or above kKeptCode (never 0: zero entries are not counted).
            const bool countNow = countKept_ && set == rounds0_;
            const uint32_t keptCode = countNow ? Get(g, kKeptCode) : 0;
            const float keptFrom = Codes<TProb>::Value(keptCode);
            uint64_t keptCount = 0;
            // Round 0: the row's running sum, maximum and minimum, lane-wise.
            LocalTensor<float> accSum = bufAcc_.Get<float>(), accMax = accSum[kAccLanes], accMin = accSum[2 * kAccLanes];
            if (total) {
                Duplicate(accSum, 0.0f, static_cast<int32_t>(3 * kAccLanes));
                PipeBarrier<PIPE_V>();
            }
            if (!loaded) LoadNext(tiles);
            uint32_t pending = 0;  // tiles whose sums wait in UB
            for (uint64_t off = begin; off < end; off += kTile) {
                uint32_t count = static_cast<uint32_t>(end - off < kTile ? end - off : kTile);
                uint32_t padded = (count + 63) / 64 * 64;  // CompareScalar on float takes whole 256-byte repeats
                if (tiles.next < tiles.end) {
                    LoadNext(tiles);
                } else if (!nextLoaded && next < last_) {
                    LoadNext(nextTiles);
                    nextLoaded = true;
                }
                LocalTensor<float> x = Take(count, padded);
                const uint32_t lanes = CompareLanes(padded);
                if (countNow) {
                    CompareTile(masks, x, keptFrom, CMPMODE::GE, padded);
                    PipeBarrier<PIPE_V>();
                    keptCount += GatherTile(s.template ReinterpretCast<TProb>(), masks, count);
                    ResetMask();
                    PipeBarrier<PIPE_V>();
                }
                if (total) {
                    // Zero lanes past count add nothing and are no maximum
                    // (valid values are >= 0) and no negative minimum.
                    for (uint32_t h = 0; h < padded; h += kAccLanes) {
                        const uint32_t part = padded - h < kAccLanes ? padded - h : kAccLanes;
                        Add(accSum, accSum, x[h], static_cast<int32_t>(part));
                        if constexpr (!kHalfExtrema) {
                            Max(accMax, accMax, x[h], static_cast<int32_t>(part));
                            Min(accMin, accMin, x[h], static_cast<int32_t>(part));
                        }
                        PipeBarrier<PIPE_V>();
                    }
                    if constexpr (kHalfExtrema) {
                        // f16 extrema on the row tile itself (exact; half the
                        // repeats), its zero lanes up to whole 128-lane repeats.
                        LocalTensor<half> hMax = accMax.ReinterpretCast<half>(), hMin = accMin.ReinterpretCast<half>();
                        for (uint32_t h = 0; h < rawLanes_; h += 2 * kAccLanes) {
                            const uint32_t part = rawLanes_ - h < 2 * kAccLanes ? rawLanes_ - h : 2 * kAccLanes;
                            Max(hMax, hMax, raw_[h], static_cast<int32_t>(part));
                            Min(hMin, hMin, raw_[h], static_cast<int32_t>(part));
                            PipeBarrier<PIPE_V>();
                        }
                    }
                }
                if (toA || toB) {
                    // The entries the next set holds: at or above the cut, below hi.
                    LocalTensor<uint8_t> keep = masks[kMaxWays * (kTile / 8)], below = keepAbove ? masks : keep;
                    if (keepAbove) CompareTile(keep, x, cut, CMPMODE::GE, padded);
                    if (keepBelow) CompareTile(below, x, tv[nt], CMPMODE::LT, padded);
                    PipeBarrier<PIPE_V>();
                    if (keepAbove && keepBelow) {
                        And(keep.ReinterpretCast<uint16_t>(), keep.ReinterpretCast<uint16_t>(),
                            below.ReinterpretCast<uint16_t>(), static_cast<int32_t>(lanes / 16));
                        PipeBarrier<PIPE_V>();
                    }
                    LocalTensor<TProb> out = qCandOut_.AllocTensor<TProb>();
                    const uint64_t got = GatherKept(out, keep, count);
                    kept = StoreCandidates(out, toA ? gCandA_ : gCandB_, begin, regionEnd, kept, got, src == kFromB);
                }
                // Masks: threshold j at slot j (j = 1..nt-1; with counts also
                // 0 and nt, the interval's hi).
                const uint32_t from = counting ? 0 : j0, to = counting ? nt : nt - 1;
                for (uint32_t j = from; j <= to && j <= kMaxWays; ++j) {
                    CompareTile(masks[j * (kTile / 8)], x, tv[j], CMPMODE::GE, padded);
                }
                PipeBarrier<PIPE_V>();
                if (shrinkA) {
                    LocalTensor<TProb> out = qCandOut_.AllocTensor<TProb>();
                    const uint64_t got = GatherKept(out, masks[j0 * (kTile / 8)], count);
                    kept = StoreCandidates(out, gCandA_, begin, regionEnd, kept, got, true);
                }
                // Select j and ReduceSum j - 1 use different halves of bufS_.
                for (uint32_t j = j0; j <= nt; ++j) {
                    if (j < nt) {
                        Select(s[(j % 2) * kTile], masks[j * (kTile / 8)], x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE,
                               padded);
                    }
                    if (j > j0) {
                        ReduceSum(sums[(pending * kMaxWays + j - 1) * 8], s[((j - 1) % 2) * kTile], tmp,
                                  static_cast<int32_t>(count));
                    }
                    PipeBarrier<PIPE_V>();
                }
                if (counting) {
                    // The counts only: every gather writes the same scratch.
                    LocalTensor<TProb> scratch = s.template ReinterpretCast<TProb>();
                    for (uint32_t j = 0; j <= nt; ++j) counts[j] += GatherTile(scratch, masks[j * (kTile / 8)], count);
                    ResetMask();
                    PipeBarrier<PIPE_V>();
                }
                Release();
                // The sums in tile order, so the masses are the same fp32
                // sums as with a read per tile.
                if (++pending == kSumTiles || off + kTile >= end) {
                    PipeSync<HardEvent::V_S>();
                    for (uint32_t q = 0; q < pending; ++q) {
                        for (uint32_t j = j0; j < nt; ++j) mass[j] += sums.GetValue((q * kMaxWays + j) * 8);
                    }
                    ScalarReadsDone();
                    pending = 0;
                }
            }
            if (total) {
                // The row's mass S(0), its largest and its smallest value.
                ReduceSum(sums, accSum, tmp, static_cast<int32_t>(kAccLanes));
                float smallest = 0.0f;
                if constexpr (kHalfExtrema) {
                    LocalTensor<half> hs = sums.ReinterpretCast<half>(), ht = tmp.ReinterpretCast<half>();
                    ReduceMax(hs[16], accMax.ReinterpretCast<half>(), ht[kTile / 32], static_cast<int32_t>(2 * kAccLanes), false);
                    ReduceMin(hs[32], accMin.ReinterpretCast<half>(), ht[kTile / 64], static_cast<int32_t>(2 * kAccLanes), false);
                    PipeSync<HardEvent::V_S>();
                    largest = static_cast<float>(hs.GetValue(16));
                    smallest = static_cast<float>(hs.GetValue(32));
                } else {
                    ReduceMax(sums[8], accMax, tmp[kTile / 64], static_cast<int32_t>(kAccLanes), false);
                    ReduceMin(sums[16], accMin, tmp[kTile / 128], static_cast<int32_t>(kAccLanes), false);
                    PipeSync<HardEvent::V_S>();
                    largest = sums.GetValue(8);
                    smallest = sums.GetValue(16);
                }
                mass[0] = sums.GetValue(0);
                Set(g, kTopCode, FloorCode(largest) + 1);
                ScalarReadsDone();
                // Every entry in [0, 1] unless the sum is NaN (a NaN entry, or
                // both infinities), the maximum above 1 or the minimum below
                // 0; only then are the bad entries counted, by reading the
                // piece again.
                if (!(mass[0] == mass[0]) || largest > 1.0f || smallest < 0.0f) {
                    // OutOfRange streams the row through the tile queue: the
                    // next piece's tile loaded there is dropped (read again).
                    if (nextLoaded) {
                        DropLoaded(nextTiles, nextTiles.begin);
                        nextLoaded = false;
                    }
                    bad_ += OutOfRange(begin, end);
                }
            }
            if (toA || toB || shrinkA) {
                // Later rounds read the set back (with whole rows per core no
                // SyncAll orders them).
                PipeSync<HardEvent::MTE3_MTE2>();
            }
            if (toA || toB) {
                if (toA) {
                    Set(g, kCand, static_cast<uint32_t>(kept));
                    Set(g, kCandLo, cutA);
                    FromSet(g, kFromA, static_cast<uint32_t>(kept), cutA, top, 0.0f);
                } else {
                    FromSet(g, kFromB, static_cast<uint32_t>(kept), lo, hi, AsFloat(Get(g, kAbove)));
                }
            }
            if (t_.pieces == 1) {
                if (countNow) Set(g, kKeptCount, Get(g, kKeptCount) + static_cast<uint32_t>(keptCount));
                Narrow(g, set, codes, nt, interp, mass, counts);
                if (shrinkA && Get(g, kLo) >= codes[j0]) {
                    Set(g, kCand, static_cast<uint32_t>(kept));
                    Set(g, kCandLo, codes[j0]);
                    FromSet(g, kFromA, static_cast<uint32_t>(kept), codes[j0], top, 0.0f);
                } else if (shrinkA) {
                    Set(g, kCand, kNone);
                    Set(g, kCandLo, kNone);
                    FromRow(g);
                }
            } else {
                // Only the words Advance reads this round (the masses at
                // the round's thresholds; the counts when it counts; the
                // largest value in round 0): each scalar write costs a UB
                // access, and the other words keep older values no one reads.
                LocalTensor<float> own = ub_.At<float>(kOwnAt, kSlotWords);
                for (uint32_t j = 0; j < nt && j < kMaxWays; ++j) own.SetValue(j, mass[j]);
                if (counting) {
                    for (uint32_t j = 0; j <= nt; ++j) own.SetValue(kCountsAt + j, static_cast<float>(counts[j]));
                }
                if (total) own.SetValue(kLargestAt, largest);
                if (countNow) own.SetValue(kKeptCountAt, static_cast<float>(keptCount));
                StoreSlot(gWork_[(set * t_.rows * t_.pieces + g) * kSlotWords], own, kSlotWords);
            }
            if (nextRound) {
                carry_ = Carry{next, nextTiles, nextLoaded};
                break;
            }
            g = next;
            tiles = nextTiles;
            loaded = nextLoaded;
        }
    }

    // Appends `got` gathered candidates to a set at begin + kept (the piece's
    // region of the set ends at regionEnd); returns the new count. The last
    // store may have ended inside the 32-byte block this one starts in; a set
    // rewritten in place (`inPlace`) may share its last block with the tile
    // prefetched after the one read here; a region that starts or ends inside
    // a block shares it with the neighbouring piece's region, which this core
    // may have read (rows shorter than a block, or not a multiple of one).
    __aicore__ inline uint64_t StoreCandidates(LocalTensor<TProb>& out, const GlobalTensor<TProb>& set, uint64_t begin,
                                               uint64_t regionEnd, uint64_t kept, uint64_t got, bool inPlace) {
        if ((begin + kept) % kBlock != 0) PipeBarrier<PIPE_MTE3>();
        const bool sharedHead = kept == 0 && begin % kBlock != 0;
        const bool sharedTail = regionEnd % kBlock != 0 && begin + kept + got > regionEnd / kBlock * kBlock;
        if (inPlace || sharedHead || sharedTail) PipeSync<HardEvent::MTE2_MTE3>();
        StoreQueued(qCandOut_, out, set[begin + kept], static_cast<uint32_t>(got));
        return kept + got;
    }

    // Count of the entries of [begin, end) of the row outside [0, 1].
    __aicore__ inline uint64_t OutOfRange(uint64_t begin, uint64_t end) {
        LocalTensor<uint8_t> masks = ub_.At<uint8_t>(kMasksAt, 2 * kTile / 8);
        uint64_t bad = 0;
        Tiles tiles = Prefetch(begin, end, kFromRow);
        for (uint64_t off = begin; off < end; off += kTile) {
            const uint32_t count = static_cast<uint32_t>(end - off < kTile ? end - off : kTile);
            const uint32_t padded = (count + 63) / 64 * 64;
            LoadNext(tiles);
            LocalTensor<float> x = Take(count, padded);
            bad += count - InRange(x, masks, count, padded);
            Release();
        }
        return bad;
    }

    // Count of the tile's values in [0, 1] (a NaN fails both compares).
    __aicore__ inline uint64_t InRange(const LocalTensor<float>& x, const LocalTensor<uint8_t>& masks, uint32_t count,
                                       uint32_t padded) {
        LocalTensor<uint8_t> lo = masks, hi = masks[kTile / 8];
        CompareTile(lo, x, 0.0f, CMPMODE::GE, padded);
        CompareTile(hi, x, 1.0f, CMPMODE::LE, padded);
        PipeBarrier<PIPE_V>();
        const uint32_t lanes = CompareLanes(padded);
        And(lo.ReinterpretCast<uint16_t>(), lo.ReinterpretCast<uint16_t>(), hi.ReinterpretCast<uint16_t>(),
            static_cast<int32_t>(lanes / 16));
        PipeBarrier<PIPE_V>();
        uint64_t valid = 0;
        // The count only; 16-bit lanes take half the repeats of fp32 ones.
        GatherMask(bufS_.Get<int16_t>(), raw_.template ReinterpretCast<int16_t>(), lo.ReinterpretCast<uint16_t>(), true,
                   count, GatherMaskParams(1, 1, 8, 0), valid);
        ResetMask();
        PipeBarrier<PIPE_V>();
        return valid;
    }

    // The row's slots of `set` (all its pieces) into UB, for scalar reads.
    __aicore__ inline LocalTensor<float> RowSlots(uint64_t g, uint32_t set) {
        LocalTensor<float> slots = ub_.At<float>(kSlotsAt, kMaxPieces * kSlotWords);
        uint64_t row = g / t_.pieces;
        PipeSync<HardEvent::S_MTE2>();
        DataCopy(slots, gWork_[(set * t_.rows + row) * t_.pieces * kSlotWords],
                 static_cast<uint32_t>(t_.pieces * kSlotWords));
        PipeSync<HardEvent::MTE2_S>();
        return slots;
    }

    // After round `set` with rows in pieces: SyncAll, then every piece
    // narrows its row's search from the row's slots. (Whole rows per core
    // narrow as each round ends, with no slots and no SyncAll.)
    __aicore__ inline void Exchange(uint32_t set) {
        if (t_.pieces == 1) return;
        SyncAll();
        for (uint64_t g = first_; g < last_; ++g) Advance(g, set);
    }

    // Narrows piece g's search from its row's slots of round `set`.
    __aicore__ inline void Advance(uint64_t g, uint32_t set) {
        if (Idle(g, set)) return;
        LocalTensor<float> slots = RowSlots(g, set);
        if (set == 0 && minP_ && Get(g, kFloor) != 0) {
            // The row's largest value (min_p's floor is relative to it).
            float largest = 0.0f;
            for (uint64_t q = 0; q < t_.pieces; ++q) {
                const float v = slots.GetValue(static_cast<uint32_t>(q * kSlotWords + kLargestAt));
                if (v > largest) largest = v;
            }
            ScalarReadsDone();
            Set(g, kTopCode, FloorCode(largest) + 1);
        }
        // The row's sums: the pieces' slots added by a fixed tree of vector
        // Adds (the same order on every core).
        PipeSync<HardEvent::MTE2_V>();
        for (uint32_t m = static_cast<uint32_t>(t_.pieces); m > 1;) {
            const uint32_t h = m / 2;
            Add(slots, slots, slots[(m - h) * kSlotWords], static_cast<int32_t>(h * kSlotWords));
            PipeBarrier<PIPE_V>();
            m -= h;
        }
        PipeSync<HardEvent::V_S>();
        float mass[kMaxWays];
        uint64_t counts[kMaxWays + 1];
        uint32_t codes[kMaxWays + 1];
        bool interp = false;
        const uint32_t nt = Grid(g, set, codes, interp);
        // The counts only when the round counted (Narrow reads them only then).
        const bool counting = Counting(codes, nt);
        for (uint32_t j = 0; j <= nt; ++j) {
            if (j < nt) mass[j] = slots.GetValue(j);
            counts[j] = counting ? static_cast<uint64_t>(slots.GetValue(kCountsAt + j)) : 0;
        }
        if (countKept_ && set == rounds0_) {
            // The row's kept entries at or above kKeptCode (an exact fp32 sum: rows hold at most 2^24).
            const uint32_t above = static_cast<uint32_t>(slots.GetValue(kKeptCountAt));
            Set(g, kKeptCount, Get(g, kKeptCount) + above);
        }
        ScalarReadsDone();
        Narrow(g, set, codes, nt, interp, mass, counts);
    }

    // After round `set`: narrow piece g's interval to the sub-interval of
    // the crossing (the same on every core of the row), from the row's
    // masses (over the set the round read: its base added here) and counts
    // at the round's thresholds (`codes`, `nt` and `interp` as Grid gave them).
    __aicore__ inline void Narrow(uint64_t g, uint32_t set, const uint32_t* codes, uint32_t nt, bool interp,
                                  const float* setMass, const uint64_t* counts) {
        if (Idle(g, set)) return;
        const uint32_t lo = codes[0], hi = codes[nt];
        const float above = AsFloat(Get(g, kAbove)), target = AsFloat(Get(g, kTarget));
        const float base = AsFloat(Get(g, kReadBase));
        float mass[kMaxWays];
        for (uint32_t j = 0; j < nt && j < kMaxWays; ++j) mass[j] = setMass[j] + base;
        const uint32_t floor = !minP_ ? 0 : set == 0 ? MinPFloor(g) : Get(g, kFloor);
        if (set == 0) {
            if (minP_) Set(g, kFloor, floor);
            Set(g, kTotal, AsBits(mass[0]));
            if (mass[0] <= target && floor == 0) {
                Set(g, kAll, 1);  // the whole row's mass is within p
                return;
            }
        } else if ((floor & kOpen) != 0) {
            // This round summed S(floor): if the entries min_p keeps are all
            // within p, they are the kept ones (the draw starts at the floor).
            Set(g, kFloor, floor & ~kOpen);
            if (mass[0] <= target) {
                Set(g, kAll, 1);
                Set(g, kTotal, AsBits(mass[0]));
                return;
            }
        }
        // The highest threshold whose mass at or above it exceeds the target
        // (the interval's lo did, by the rounds before).
        uint32_t b = 0;
        for (uint32_t j = nt; j-- > 1;) {
            if (mass[j] > target) {
                b = j;
                break;
            }
        }
        float newAbove = b + 1 < nt ? mass[b + 1] : above;
        uint32_t newHi = codes[b + 1], newLo = codes[b];
        // The mass at or above the new lo (exact when this round summed
        // it: a threshold above lo, or min_p's floor; else about, as round
        // 0's is the row's).
        const bool floorSummed = set > 0 && (floor & kOpen) != 0;
        float massLo = b > 0 || floorSummed ? mass[b] : AsFloat(Get(g, kMassLo));
        if (set == 0) {
            // Whole rows start below their largest value (round 0 found it),
            // and both searches at the bound.
            if (t_.pieces == 1 && Get(g, kTopCode) > newLo) newHi = Get(g, kTopCode);
            const uint32_t bound = BoundCode(mass[0], target);
            if (bound > newLo && bound < newHi) newLo = bound;
            massLo = mass[0];
            // min_p keeps the codes at or above its floor: a crossing below
            // it is cut there, so the search goes on above it, and the next
            // round tests whether S(floor) is still over the target.
            if (floor > newLo) {
                if (floor >= newHi) {
                    newHi = t_.pieces == 1 ? Get(g, kTopCode) : Codes<TProb>::kOne + 1;
                    newAbove = 0.0f;
                }
                newLo = floor;
                Set(g, kFloor, floor | kOpen);
            }
            // A holds the entries at or above the guess: of no use if that
            // is above the search's lo (a row of mass under (1 + p) / 2).
            if (Get(g, kSrc) == kFromA && Get(g, kCandLo) > newLo) {
                Set(g, kCand, kNone);
                Set(g, kCandLo, kNone);
                FromRow(g);
            }
        }
        Set(g, kLo, newLo);
        Set(g, kHi, newHi);
        Set(g, kAbove, AsBits(newAbove));
        Set(g, kMassLo, AsBits(massLo));
        // An interpolation that did not halve the interval is followed by
        // an even cut (so the width halves at least every other round).
        Set(g, kInterp, interp && 2 * (newHi - newLo) > hi - lo ? 0 : 1);
        // One code left, and this round counted (else a later round will):
        // the crossing is its tie j, the first with above + (j + 1) * v > target.
        if (newHi - newLo != 1 || !Counting(codes, nt)) return;
        const uint64_t ties = counts[b] - counts[b + 1];
        const float v = Codes<TProb>::Value(newLo);
        uint64_t j = 0;
        if (v > 0.0f && target > newAbove) {
            float est = (target - newAbove) / v;
            j = est < 4.0e9f ? static_cast<uint64_t>(est) : 4000000000ull;
            for (uint32_t k = 0; k < 4 && j > 0 && newAbove + static_cast<float>(j) * v > target; ++k) --j;
            for (uint32_t k = 0; k < 4 && newAbove + static_cast<float>(j + 1) * v <= target; ++k) ++j;
        }
        if (ties > 0 && j >= ties) j = ties - 1;
        const uint32_t limit = Get(g, kLimit);
        if (limit != kNone && newLo == Get(g, kLimitCode) && j > limit) j = limit;
        Set(g, kTie, static_cast<uint32_t>(j));
        Set(g, kBucket, b);
        Set(g, kTies, static_cast<uint32_t>(ties));
        Set(g, kSettled, 1);
    }

    // Between the phases: the kept mass and the draw's search.
    __aicore__ inline void StartDraw(uint64_t g) {
        float keptMass;
        uint32_t lo = 0, limit = kNone;
        if (Get(g, kAll) != 0) {
            keptMass = AsFloat(Get(g, kTotal));
            lo = Get(g, kFloor);  // min_p's floor (0: none)
            // The kept entries (those with mass): at or above the floor and above 0.
            Set(g, kKeptCode, lo > 0 ? lo : 1);
            Set(g, kKeptCount, 0);
        } else {
            lo = Get(g, kLo);
            limit = Get(g, kTie);
            keptMass = AsFloat(Get(g, kAbove)) + static_cast<float>(limit + 1) * Codes<TProb>::Value(lo);
            // The kept entries: the first limit + 1 ties of code lo (above 0:
            // the crossing's mass exceeds the mass above it), and those above it.
            Set(g, kKeptCode, lo + 1);
            Set(g, kKeptCount, limit + 1);
        }
        Set(g, kKept, AsBits(keptMass));
        const float target = AsFloat(Get(g, kUniform)) * keptMass;
        const uint32_t bound = BoundCode(keptMass, target);
        if (bound > lo) {
            lo = bound;  // above the nucleus' last code: its ties are all past the crossing
            limit = kNone;
        }
        Search(g, lo, target, limit);
        Set(g, kMassLo, AsBits(keptMass));
        if (t_.pieces == 1 && Get(g, kTopCode) > lo) Set(g, kHi, Get(g, kTopCode));
        // The draw's first round reads A only if A holds every entry the
        // search and the kept count need (it counts the entries at or above
        // kKeptCode).
        const uint32_t candLo = Get(g, kCandLo);
        if (Get(g, kCand) != kNone && candLo <= lo && (!countKept_ || candLo <= Get(g, kKeptCode))) {
            FromSet(g, kFromA, Get(g, kCand), candLo, Codes<TProb>::kOne + 1, 0.0f);
        } else {
            FromRow(g);
        }
    }

    // The token: the piece holding the crossing's tie finds its index.
    __aicore__ inline void Locate(uint64_t g) {
        const uint64_t row = g / t_.pieces, piece = g % t_.pieces;
        const uint32_t set = rounds0_ + rounds1_ - 1, b = Get(g, kBucket);
        // The interval is one code now.
        const uint32_t lo = Get(g, kLo);
        uint64_t before = 0, mine = 0, all = 0;
        if (t_.pieces == 1) {
            mine = all = Get(g, kTies);
        } else {
            // The last round's thresholds were those of the interval it
            // narrowed (or this one code already).
            LocalTensor<float> slots = RowSlots(g, set);
            for (uint64_t q = 0; q < t_.pieces; ++q) {
                // The code's own count: the count at its threshold less the next one's.
                uint32_t at = static_cast<uint32_t>(q * kSlotWords + kCountsAt + b);
                uint64_t c = static_cast<uint64_t>(slots.GetValue(at)) - static_cast<uint64_t>(slots.GetValue(at + 1));
                if (q < piece) before += c;
                if (q == piece) mine = c;
                all += c;
            }
            ScalarReadsDone();
        }
        LocalTensor<int32_t> one = ub_.At<int32_t>(kOwnAt, 8);
        if (piece == 0) StoreScalar(gKept_[row], ub_.At<float>(kOwnAt, 8), AsFloat(Get(g, kKept)));
        if (piece == 0 && countKept_) StoreScalar(gKeptCount_[row], one, static_cast<int32_t>(Get(g, kKeptCount)));
        const uint64_t tie = Get(g, kTie);
        if (all == 0) {
            if (piece == 0) StoreScalar(gTok_[row], one, 0);  // no entry has the code (invalid input)
            return;
        }
        if (tie < before || tie >= before + mine) return;
        StoreScalar(gTok_[row], one, FindTie(g, Codes<TProb>::Value(lo), tie - before));
    }

    // The row index of the `need`-th (0-based) entry of piece g equal to v.
    __aicore__ inline int32_t FindTie(uint64_t g, float v, uint64_t need) {
        uint64_t begin, end;
        Range(g, begin, end);
        const uint64_t rowStart = (g / t_.pieces) * t_.n;
        LocalTensor<uint8_t> mask = ub_.At<uint8_t>(kMasksAt, kTile / 8);
        LocalTensor<int32_t> iota = bufS_.Get<int32_t>(), hits = iota[kTile];
        const GatherMaskParams once(1, 1, 8, 0);
        uint64_t seen = 0;
        // A 16-bit piece of several tiles counts a tile's hits on its own
        // lanes (half the repeats of the int32 indices) and gathers the
        // indices only in the tile that holds the tie.
        const bool countFirst = sizeof(TProb) == 2 && end - begin > kTile;
        CreateVecIndex(iota, 0, kTile);  // lanes; the tile's offset is added to the one read
        Tiles tiles = Prefetch(begin, end, kFromRow);
        for (uint64_t off = begin; off < end; off += kTile) {
            uint32_t count = static_cast<uint32_t>(end - off < kTile ? end - off : kTile);
            uint32_t padded = (count + 63) / 64 * 64;
            LoadNext(tiles);
            LocalTensor<float> x = Take(count, padded, !std::is_same<TProb, half>::value);
            CompareTile(mask, x, v, CMPMODE::EQ, padded);
            PipeBarrier<PIPE_V>();
            uint64_t got = 0;
            if (countFirst) {
                got = GatherTile(hits.template ReinterpretCast<TProb>(), mask, count);
            } else {
                GatherMask(hits, iota, mask.ReinterpretCast<uint32_t>(), true, count, once, got);
            }
            ResetMask();
            Release();
            PipeSync<HardEvent::V_S>();
            if (seen + got > need) {
                if (countFirst) {
                    uint64_t again = 0;
                    GatherMask(hits, iota, mask.ReinterpretCast<uint32_t>(), true, count, once, again);
                    ResetMask();
                    PipeSync<HardEvent::V_S>();
                }
                const int32_t index = hits.GetValue(static_cast<uint32_t>(need - seen)) + static_cast<int32_t>(off - rowStart);
                ScalarReadsDone();
                DropLoaded(tiles, off + kTile);
                return index;
            }
            seen += got;
            ScalarReadsDone();
        }
        return static_cast<int32_t>(begin - rowStart);  // not reached on consistent counts
    }

    // This core's counts of probabilities outside [0, 1], of rows whose p
    // is outside (0, 1] and of rows whose min_p is outside [0, 1] into its
    // check slot (words 0, 1 and 2): written
    // (core 0 also zeroes the slots of cores that do not run), or added to
    // it after an earlier launch of the batch.
    __aicore__ inline void WriteCheck() {
        // The slot's counts: bad probabilities, p and min_p (TopPCheck, src/ops/topp.rs).
        uint64_t counts[3] = {bad_, badP_, badMinP_};
        WriteCheckSlot(ub_.At<int32_t>(kOwnAt, 8), gCheck_, counts, 3, t_.accumulate != 0, t_.check_slots);
    }

    static constexpr uint32_t kBlock = 32 / sizeof(TProb);  // entries per 32-byte block
    TPipe pipe_;
    TQue<TPosition::VECIN, 2> qRaw_;
    TQue<TPosition::VECOUT, 2> qCandOut_;
    TBuf<TPosition::VECCALC> bufX_, bufS_, bufAcc_;
    LocalTensor<TProb> raw_;  // the row tile Take cast (until Release)
    uint32_t rawLanes_ = 0;
    UbArena ub_;
    LocalTensor<uint32_t> state_;
    static constexpr uint32_t kHeldItems = 8;
    bool held_ = false;
    uint32_t heldState_[kHeldItems * kStateWords] = {};
    GlobalTensor<TProb> gx_;
    GlobalTensor<float> gu_, gp_, gMinP_, gKept_, gWork_;
    GlobalTensor<TProb> gCandA_, gCandB_;
    GlobalTensor<int32_t> gTok_, gCheck_, gKeptCount_;
    TopPDrawTiling t_;
    uint32_t core_ = 0, rounds0_ = 0, rounds1_ = 0, guess_ = 0;
    uint64_t first_ = 0, last_ = 0, bad_ = 0, badP_ = 0, badMinP_ = 0;
    bool minP_ = false;  // min_p is on for some row (shared, or per row)
    bool countKept_ = false;  // the rows' kept counts are asked for (tiling count_kept)
    // The next round's first piece, when its first tile was loaded in the
    // round before.
    struct Carry {
        uint64_t g;
        Tiles tiles;
        bool loaded;
    } carry_{0, {0, 0, 0, kFromRow}, false};
};

}  // namespace toppdraw

template <typename TProb>
__aicore__ inline void TopPDraw(GM_ADDR probs, GM_ADDR uniforms, GM_ADDR top_p, GM_ADDR min_p, GM_ADDR tokens, GM_ADDR kept,
                                GM_ADDR kept_count, GM_ADDR check, GM_ADDR workspace, const TopPDrawTiling& t) {
    toppdraw::Draw<TProb> draw;
    draw.Run(probs, uniforms, top_p, min_p, tokens, kept, kept_count, check, workspace, t);
}

}  // namespace ascend_scan
