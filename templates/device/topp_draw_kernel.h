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
// Candidates: the first round whose interval starts above code 0 copies
// every entry at or above its lo to the workspace as fp32, in order; every
// later round of both searches reads only those (both crossings lie at or
// above it).
// Rows are cut into `pieces` pieces (several cores per row when the batch is
// small); a core takes `items_per_core` consecutive pieces.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ub_io.h"

namespace ascend_scan {
namespace toppdraw {

constexpr uint32_t kTile = 4096;      // elements per tile (a multiple of 64)
constexpr uint32_t kMaxWays = 16;     // thresholds per round
// A piece's slot: kMaxWays fp32 masses, then kMaxWays + 1 counts as fp32
// (exact: rows have at most 2^24 entries), so that one vector Add sums slots.
constexpr uint32_t kCountsAt = kMaxWays;
constexpr uint32_t kSlotWords = 40;       // (160 bytes)
constexpr uint32_t kMaxItems = 256;   // pieces per core
constexpr uint32_t kMaxPieces = 64;   // pieces per row
constexpr uint32_t kStateWords = 16;  // per piece (64 bytes)

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
    kCand,       // the piece's candidates (written by its first round with lo > 0), or kNone
    kTies,       // the entries equal to the crossing's code
    kUniform,    // fp32 bits: the row's uniform
};

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

template <typename TProb>
class Draw {
public:
    __aicore__ inline void Run(GM_ADDR probs, GM_ADDR uniforms, GM_ADDR tokens, GM_ADDR kept, GM_ADDR check,
                               GM_ADDR workspace, const TopPDrawTiling& t) {
        t_ = t;
        core_ = static_cast<uint32_t>(GetBlockIdx());
        const uint64_t items = t.rows * t.pieces;
        first_ = static_cast<uint64_t>(core_) * t.items_per_core;
        last_ = first_ + t.items_per_core < items ? first_ + t.items_per_core : items;
        if (first_ > last_) first_ = last_;
        gx_.SetGlobalBuffer(reinterpret_cast<__gm__ TProb*>(probs), t.rows * t.n);
        gu_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(uniforms), t.rows);
        gTok_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(tokens), t.rows);
        gKept_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(kept), t.rows);
        gCheck_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(check), t.check_slots * 8);
        const uint64_t slotWords = 2 * t.rounds * items * kSlotWords;
        gWork_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace), slotWords);
        gCand_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace) + slotWords, t.rows * t.n);
        Init();
        // Phase 0: the last kept entry (target p).
        for (uint32_t r = 0; r < t.rounds; ++r) {
            Round(r);
            Exchange(r);
        }
        for (uint64_t g = first_; g < last_; ++g) StartDraw(g);
        // Phase 1: the drawn entry (target u * kept, among the kept entries).
        for (uint32_t r = 0; r < t.rounds; ++r) {
            Round(t.rounds + r);
            Exchange(t.rounds + r);
        }
        for (uint64_t g = first_; g < last_; ++g) Locate(g);
        WriteCheck();
    }

private:
    // UB arena (bytes): masks, ReduceSum results and scratch, slots, state.
    static constexpr uint32_t kMasksAt = 0;
    static constexpr uint32_t kSumsAt = kMasksAt + (kMaxWays + 1) * kTile / 8;
    static constexpr uint32_t kReduceTmpAt = kSumsAt + kMaxWays * 32;
    static constexpr uint32_t kOwnAt = kReduceTmpAt + kTile / 64 * 4 + 32;
    static constexpr uint32_t kSlotsAt = kOwnAt + kSlotWords * 4;
    static constexpr uint32_t kStateAt = kSlotsAt + kMaxPieces * kSlotWords * 4;
    static constexpr uint32_t kUniformsAt = kStateAt + kMaxItems * kStateWords * 4;
    static constexpr uint32_t kArenaBytes = kUniformsAt + (kMaxItems + 16) * 4;

    __aicore__ inline void Init() {
        pipe_.InitBuffer(qRaw_, 2, kTile * sizeof(TProb));
        pipe_.InitBuffer(qCand_, 2, kTile * sizeof(float));
        pipe_.InitBuffer(qCandOut_, 2, kTile * sizeof(float));
        pipe_.InitBuffer(bufX_, kTile * sizeof(float));
        pipe_.InitBuffer(bufS_, 2 * kTile * sizeof(float));
        ub_.Init(pipe_, kArenaBytes);
        state_ = ub_.At<uint32_t>(kStateAt, kMaxItems * kStateWords);
        // The rows' uniforms (the pieces of a core span consecutive rows).
        if (first_ < last_) {
            uint64_t r0 = first_ / t_.pieces, r1 = (last_ - 1) / t_.pieces;
            LocalTensor<float> u = ub_.At<float>(kUniformsAt, kMaxItems + 16);
            LoadAny(u, gu_[r0], static_cast<uint32_t>(r1 - r0 + 1));
            PipeSync<HardEvent::MTE2_S>();
            for (uint64_t g = first_; g < last_; ++g) {
                Search(g, 0, t_.p, kNone);
                Set(g, kAll, 0);
                Set(g, kTotal, 0);
                Set(g, kKept, 0);
                Set(g, kCand, kNone);
                Set(g, kUniform, AsBits(u.GetValue(static_cast<uint32_t>(g / t_.pieces - r0))));
            }
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
    }

    __aicore__ inline uint32_t Get(uint64_t g, uint32_t w) {
        return state_.GetValue(static_cast<uint32_t>((g - first_) * kStateWords + w));
    }
    __aicore__ inline void Set(uint64_t g, uint32_t w, uint32_t v) {
        state_.SetValue(static_cast<uint32_t>((g - first_) * kStateWords + w), v);
    }

    // The thresholds of piece g's interval: count and width.
    __aicore__ inline uint32_t Thresholds(uint64_t g, uint32_t& lo, uint32_t& hi, uint32_t& w) {
        lo = Get(g, kLo);
        hi = Get(g, kHi);
        w = (hi - lo + t_.ways - 1) / t_.ways;
        return (hi - lo + w - 1) / w;
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

    // Loads a tile: of the probabilities (`fromCand` false) or of the
    // candidates (fp32, zero up to whole 64-lane repeats).
    __aicore__ inline void Load(uint64_t off, uint32_t count, bool fromCand) {
        if (fromCand) {
            LocalTensor<float> c = qCand_.AllocTensor<float>();
            uint32_t padded = (count + 63) / 64 * 64;
            if (count < padded) ZeroBeforeLoad(c, padded);
            LoadAny(c, gCand_[off], count);
            qCand_.EnQue(c);
            return;
        }
        LocalTensor<TProb> raw = qRaw_.AllocTensor<TProb>();
        LoadAny(raw, gx_[off], count);
        qRaw_.EnQue(raw);
    }

    // The loaded tile as fp32: the candidates' queue tensor (freed by
    // Release), or the probabilities cast into bufX_, zero past `count` up
    // to whole 64-lane repeats.
    __aicore__ inline LocalTensor<float> Take(uint32_t count, uint32_t padded, bool fromCand) {
        if (fromCand) return qCand_.DeQue<float>();
        LocalTensor<TProb> raw = qRaw_.DeQue<TProb>();
        LocalTensor<float> x = bufX_.Get<float>();
        if (count < padded) {
            Duplicate(x, 0.0f, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
        }
        Cast(x, raw, RoundMode::CAST_NONE, count);  // exact
        PipeBarrier<PIPE_V>();
        qRaw_.FreeTensor(raw);
        return x;
    }
    __aicore__ inline void Release(LocalTensor<float>& x, bool fromCand) {
        if (fromCand) qCand_.FreeTensor(x);
    }

    // Round `set`: every piece's masses at its thresholds (and, when its
    // interval is at most `ways` codes, its counts at them and at hi), into
    // its slot of the set. Over the probabilities until the first round
    // whose interval starts above 0, which also writes the candidates (the
    // entries at or above its lo); over the candidates after it.
    __aicore__ inline void Round(uint32_t set) {
        LocalTensor<uint8_t> masks = ub_.At<uint8_t>(kMasksAt, (kMaxWays + 1) * kTile / 8);
        LocalTensor<float> sums = ub_.At<float>(kSumsAt, kMaxWays * 8);
        LocalTensor<float> tmp = ub_.At<float>(kReduceTmpAt, kTile / 64 + 8);
        LocalTensor<float> s = bufS_.Get<float>();
        const GatherMaskParams once(1, 1, 8, 0);
        for (uint64_t g = first_; g < last_; ++g) {
            float mass[kMaxWays];
            uint64_t counts[kMaxWays + 1];
            for (uint32_t j = 0; j < kMaxWays; ++j) mass[j] = 0.0f;
            for (uint32_t j = 0; j <= kMaxWays; ++j) counts[j] = 0;
            uint32_t lo, hi, w;
            const uint32_t nt = Thresholds(g, lo, hi, w);
            const bool fromCand = Get(g, kCand) != kNone, compact = !fromCand && lo > 0;
            // A row whose mass is within p has no nucleus crossing to find.
            const bool idle = set < t_.rounds && Get(g, kAll) != 0;
            const bool counting = hi - lo <= t_.ways;
            const bool total = set == 0;  // S(0): the row's mass
            float tv[kMaxWays + 1];
            for (uint32_t j = 0; j < nt; ++j) tv[j] = Codes<TProb>::Value(lo + j * w);
            tv[nt] = Codes<TProb>::Value(hi);
            uint64_t begin, end;
            Range(g, begin, end);
            if (fromCand) end = begin + Get(g, kCand);
            if (idle) end = begin;
            uint64_t kept = 0;
            if (begin < end) Load(begin, static_cast<uint32_t>(end - begin < kTile ? end - begin : kTile), fromCand);
            for (uint64_t off = begin; off < end; off += kTile) {
                uint32_t count = static_cast<uint32_t>(end - off < kTile ? end - off : kTile);
                uint32_t padded = (count + 63) / 64 * 64;  // CompareScalar on float takes whole 256-byte repeats
                if (off + kTile < end) {
                    uint64_t next = off + kTile;
                    Load(next, static_cast<uint32_t>(end - next < kTile ? end - next : kTile), fromCand);
                }
                LocalTensor<float> x = Take(count, padded, fromCand);
                if (total) bad_ += count - InRange(x, masks, count, padded);
                if (compact) {
                    LocalTensor<uint8_t> keep = masks[kMaxWays * (kTile / 8)];
                    CompareScalar(keep, x, tv[0], CMPMODE::GE, padded);
                    PipeBarrier<PIPE_V>();
                    LocalTensor<float> out = qCandOut_.AllocTensor<float>();
                    uint64_t got = 0;
                    GatherMask(out, x, keep.ReinterpretCast<uint32_t>(), true, count, once, got);
                    ResetMask();
                    PipeBarrier<PIPE_V>();
                    StoreQueued(qCandOut_, out, gCand_[begin + kept], static_cast<uint32_t>(got));
                    kept += got;
                }
                // Masks: threshold j at slot j (j = 1..nt-1; with counts also
                // 0 and nt, the interval's hi).
                const uint32_t from = counting ? 0 : 1, to = counting ? nt : nt - 1;
                for (uint32_t j = from; j <= to && j <= kMaxWays; ++j) {
                    CompareScalar(masks[j * (kTile / 8)], x, tv[j], CMPMODE::GE, padded);
                }
                PipeBarrier<PIPE_V>();
                if (total) {
                    ReduceSum(sums, x, tmp, static_cast<int32_t>(count));
                    PipeBarrier<PIPE_V>();
                }
                // Select j and ReduceSum j - 1 use different halves of bufS_.
                for (uint32_t j = 1; j <= nt; ++j) {
                    if (j < nt) {
                        Select(s[(j % 2) * kTile], masks[j * (kTile / 8)], x, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE,
                               padded);
                    }
                    if (j > 1) ReduceSum(sums[(j - 1) * 8], s[((j - 1) % 2) * kTile], tmp, static_cast<int32_t>(count));
                    PipeBarrier<PIPE_V>();
                }
                if (counting) {
                    for (uint32_t j = 0; j <= nt; ++j) {
                        uint64_t got = 0;
                        // The count only: every gather writes the same scratch.
                        GatherMask(s, x, masks[j * (kTile / 8)].ReinterpretCast<uint32_t>(), true, count, once, got);
                        counts[j] += got;
                    }
                    ResetMask();
                    PipeBarrier<PIPE_V>();
                }
                Release(x, fromCand);
                PipeSync<HardEvent::V_S>();
                if (total) mass[0] += sums.GetValue(0);
                for (uint32_t j = 1; j < nt; ++j) mass[j] += sums.GetValue(j * 8);
                ScalarReadsDone();
            }
            if (compact) {
                Set(g, kCand, static_cast<uint32_t>(kept));
                // Later rounds read the candidates back (with whole rows per
                // core no SyncAll orders them).
                PipeSync<HardEvent::MTE3_MTE2>();
            }
            if (t_.pieces == 1) {
                Narrow(g, set, mass, counts);
                continue;
            }
            LocalTensor<float> own = ub_.At<float>(kOwnAt, kSlotWords);
            for (uint32_t j = 0; j < kMaxWays; ++j) own.SetValue(j, mass[j]);
            for (uint32_t j = 0; j <= kMaxWays; ++j) own.SetValue(kCountsAt + j, static_cast<float>(counts[j]));
            for (uint32_t j = kCountsAt + kMaxWays + 1; j < kSlotWords; ++j) own.SetValue(j, 0.0f);
            StoreSlot(gWork_[(set * t_.rows * t_.pieces + g) * kSlotWords], own, kSlotWords);
        }
    }

    // Count of the tile's values in [0, 1] (a NaN fails both compares).
    __aicore__ inline uint64_t InRange(const LocalTensor<float>& x, const LocalTensor<uint8_t>& masks, uint32_t count,
                                       uint32_t padded) {
        LocalTensor<uint8_t> lo = masks, hi = masks[kTile / 8];
        CompareScalar(lo, x, 0.0f, CMPMODE::GE, padded);
        CompareScalar(hi, x, 1.0f, CMPMODE::LE, padded);
        PipeBarrier<PIPE_V>();
        And(lo.ReinterpretCast<uint16_t>(), lo.ReinterpretCast<uint16_t>(), hi.ReinterpretCast<uint16_t>(),
            static_cast<int32_t>(padded / 16));
        PipeBarrier<PIPE_V>();
        uint64_t valid = 0;
        GatherMask(bufS_.Get<float>(), x, lo.ReinterpretCast<uint32_t>(), true, count, GatherMaskParams(1, 1, 8, 0),
                   valid);  // the count only
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
        if (set < t_.rounds && Get(g, kAll) != 0) return;
        LocalTensor<float> slots = RowSlots(g, set);
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
        uint32_t lo, hi, w;
        const uint32_t nt = Thresholds(g, lo, hi, w);
        for (uint32_t j = 0; j <= nt; ++j) {
            if (j < nt) mass[j] = slots.GetValue(j);
            counts[j] = static_cast<uint64_t>(slots.GetValue(kCountsAt + j));
        }
        ScalarReadsDone();
        Narrow(g, set, mass, counts);
    }

    // After round `set`: narrow piece g's interval to the sub-interval of
    // the crossing (the same on every core of the row), from the row's
    // masses and counts at the round's thresholds.
    __aicore__ inline void Narrow(uint64_t g, uint32_t set, const float* mass, const uint64_t* counts) {
        if (set < t_.rounds && Get(g, kAll) != 0) return;
        uint32_t lo, hi, w;
        const uint32_t nt = Thresholds(g, lo, hi, w);
        const float above = AsFloat(Get(g, kAbove)), target = AsFloat(Get(g, kTarget));
        if (set == 0) {
            Set(g, kTotal, AsBits(mass[0]));
            if (mass[0] <= target) {
                Set(g, kAll, 1);  // the whole row's mass is within p
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
        const float newAbove = b + 1 < nt ? mass[b + 1] : above;
        const uint32_t newLo = lo + b * w, newHi = b + 1 < nt ? lo + (b + 1) * w : hi;
        Set(g, kLo, newLo);
        Set(g, kHi, newHi);
        Set(g, kAbove, AsBits(newAbove));
        if (newHi - newLo != 1) return;
        // One code left (this round counted): the crossing is its tie j, the
        // first with above + (j + 1) * v > target.
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
    }

    // Between the phases: the kept mass and the draw's search.
    __aicore__ inline void StartDraw(uint64_t g) {
        float keptMass;
        uint32_t lo = 0, limit = kNone;
        if (Get(g, kAll) != 0) {
            keptMass = AsFloat(Get(g, kTotal));
        } else {
            lo = Get(g, kLo);
            limit = Get(g, kTie);
            keptMass = AsFloat(Get(g, kAbove)) + static_cast<float>(limit + 1) * Codes<TProb>::Value(lo);
        }
        Set(g, kKept, AsBits(keptMass));
        Search(g, lo, AsFloat(Get(g, kUniform)) * keptMass, limit);
    }

    // The token: the piece holding the crossing's tie finds its index.
    __aicore__ inline void Locate(uint64_t g) {
        const uint64_t row = g / t_.pieces, piece = g % t_.pieces;
        const uint32_t set = 2 * t_.rounds - 1, b = Get(g, kBucket);
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
        for (uint64_t off = begin; off < end; off += kTile) {
            uint32_t count = static_cast<uint32_t>(end - off < kTile ? end - off : kTile);
            uint32_t padded = (count + 63) / 64 * 64;
            Load(off, count, false);
            LocalTensor<float> x = Take(count, padded, false);
            CompareScalar(mask, x, v, CMPMODE::EQ, padded);
            CreateVecIndex(iota, static_cast<int32_t>(off - rowStart), padded);
            PipeBarrier<PIPE_V>();
            uint64_t got = 0;
            GatherMask(hits, iota, mask.ReinterpretCast<uint32_t>(), true, count, once, got);
            ResetMask();
            PipeSync<HardEvent::V_S>();
            if (seen + got > need) {
                int32_t index = hits.GetValue(static_cast<uint32_t>(need - seen));
                ScalarReadsDone();
                return index;
            }
            seen += got;
            ScalarReadsDone();
        }
        return static_cast<int32_t>(begin - rowStart);  // not reached on consistent counts
    }

    // This core's count of probabilities outside [0, 1] into its check
    // slot: written (core 0 also zeroes the slots of cores that do not
    // run), or added to it after an earlier launch of the batch.
    __aicore__ inline void WriteCheck() {
        LocalTensor<int32_t> slot = ub_.At<int32_t>(kOwnAt, 8);
        uint64_t total = bad_;
        if (t_.accumulate != 0) {
            PipeSync<HardEvent::S_MTE2>();
            DataCopy(slot, gCheck_[core_ * 8], 8);
            PipeSync<HardEvent::MTE2_S>();
            total += static_cast<uint64_t>(slot.GetValue(0));
        }
        slot.SetValue(0, static_cast<int32_t>(total < 0x7FFFFFFF ? total : 0x7FFFFFFF));
        for (uint32_t i = 1; i < 8; ++i) slot.SetValue(i, 0);
        StoreSlot(gCheck_[core_ * 8], slot, 8);
        if (t_.accumulate != 0 || core_ != 0) return;
        slot.SetValue(0, 0);
        for (uint32_t c = static_cast<uint32_t>(GetBlockNum()); c < t_.check_slots; ++c) StoreSlot(gCheck_[c * 8], slot, 8);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> qRaw_, qCand_;
    TQue<TPosition::VECOUT, 2> qCandOut_;
    TBuf<TPosition::VECCALC> bufX_, bufS_;
    UbArena ub_;
    LocalTensor<uint32_t> state_;
    GlobalTensor<TProb> gx_;
    GlobalTensor<float> gu_, gKept_, gWork_, gCand_;
    GlobalTensor<int32_t> gTok_, gCheck_;
    TopPDrawTiling t_;
    uint32_t core_ = 0;
    uint64_t first_ = 0, last_ = 0, bad_ = 0;
};

}  // namespace toppdraw

template <typename TProb>
__aicore__ inline void TopPDraw(GM_ADDR probs, GM_ADDR uniforms, GM_ADDR tokens, GM_ADDR kept, GM_ADDR check,
                                GM_ADDR workspace, const TopPDrawTiling& t) {
    toppdraw::Draw<TProb> draw;
    draw.Run(probs, uniforms, tokens, kept, check, workspace, t);
}

}  // namespace ascend_scan
