// RadixSort (docs/algorithms.md, RadixSort). One pass of the LSD radix
// sort: a stable counting sort of every row by one digit of the keys' sort
// code, carrying the i32 indices (or any 4-byte values) along (the first
// pass may make them: 0..n-1 per row). The last pass of an argsort writes
// the indices only.
//
// Sort code (an integer as wide as the key lanes, int16 for 8- and 16-bit
// keys, int32 for 32-bit keys, whose order is the key order; descending
// takes its bitwise NOT, which reverses the order and keeps equal codes
// equal, so the sort stays stable): the key itself for integer keys (signed
// or unsigned); sign ? -m : m for the magnitude bits m of a float key, NaN
// (m above the bits of inf) as the largest positive lane value.
// The code is recomputed from the raw keys in every pass (a few integer
// vector ops), so the keys move as their own bit patterns: NaN payloads and
// -0.0 come back unchanged.
//
// Digit: `digit_bits` bits of the code at `shift` (1 bit: the published
// split sort, one pass per bit; 4 bits: 16 digit values, 4 passes for a
// 16-bit key, 8 for a 32-bit key). The digit goes on as int16 whatever the
// key width. Rows are cut into tiles of kTile keys; the vector cores own
// equal ranges of whole tiles.
// 1. Each core counts the digits of its tiles (CompareScalar per digit value
//    -> bit mask, counter-mode GatherMask's count). The counts of a row the
//    core owns whole go to the row's 64-byte slot; the counts of a row it
//    shares with other cores go to its first-row / last-row slot. SyncAll.
// 2. Each core turns the counts into the output offset of every digit in
//    each of its row pieces (exclusive scan over the digit values of the
//    row totals, plus the counts of the earlier cores in the row), then per
//    tile gathers the keys and indices of each digit value into their own
//    32-element-aligned group (GatherMask with the digit's compare mask:
//    stable) and writes every group at its running offset (DataCopyPad,
//    byte-exact, so cores may share 32-byte blocks of the outputs); with
//    4-bit digits each high-bits group's four digit groups are written as
//    soon as they are made, while the vector unit splits the next group.
// The next tile loads while the current one is sorted.
//
// Rows mode (rows_per_tile > 0, rows of at most a tile): the whole sort in
// one launch, each tile of whole rows on one core, every pass on chip (see
// SortRows).
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_reduce.h"

namespace ascend_scan {
namespace radix {

// The sort code of a key type: 0 = the key as unsigned, 1 = the key as
// signed, 2 = float (whose magnitude bits above kNanAbove are NaN).
template <typename TKey>
struct SortCode;
template <>
struct SortCode<uint8_t> {
    static constexpr uint32_t kCode = 0;
    static constexpr int32_t kNanAbove = 0;
};
template <>
struct SortCode<uint16_t> : SortCode<uint8_t> {};
template <>
struct SortCode<uint32_t> : SortCode<uint8_t> {};
template <>
struct SortCode<int8_t> {
    static constexpr uint32_t kCode = 1;
    static constexpr int32_t kNanAbove = 0;
};
template <>
struct SortCode<int16_t> : SortCode<int8_t> {};
template <>
struct SortCode<int32_t> : SortCode<int8_t> {};
template <>
struct SortCode<half> {
    static constexpr uint32_t kCode = 2;
    static constexpr int32_t kNanAbove = 0x7C00;
};
template <>
struct SortCode<bfloat16_t> {
    static constexpr uint32_t kCode = 2;
    static constexpr int32_t kNanAbove = 0x7F80;
};
template <>
struct SortCode<float> {
    static constexpr uint32_t kCode = 2;
    static constexpr int32_t kNanAbove = 0x7F800000;
};

// The integer lanes that hold keys and codes in UB: int16 (8-bit keys are
// widened, GatherMask moves 16- and 32-bit data) or int32.
template <typename TKey>
struct Lanes {
    using Signed = int16_t;
    using Unsigned = uint16_t;
};
template <>
struct Lanes<uint32_t> {
    using Signed = int32_t;
    using Unsigned = uint32_t;
};
template <>
struct Lanes<int32_t> : Lanes<uint32_t> {};
template <>
struct Lanes<float> : Lanes<uint32_t> {};

constexpr uint32_t kMaxDigits = 16;  // digit values of a 4-bit digit
constexpr uint32_t kAlign = 32;      // group starts: 32 elements (32-byte aligned for every width)
constexpr uint32_t kMaxCores = 64;
// Bit masks in bufMask_: one per digit value of a split level.
constexpr uint32_t kMasks = 4;
constexpr uint32_t kSlotInts = 16;  // one digit count per value, 64 bytes
// Small buffer: this core's counts, then every core's two slots.
constexpr uint32_t kOwnAt = 0;
constexpr uint32_t kSlotsAt = 64;
constexpr uint32_t kSmallBytes = kSlotsAt + kMaxCores * 2 * kSlotInts * 4;

// Bitwise NOT of `len` lanes (Not takes 16-bit data: a 32-bit lane is two
// of them).
template <typename TLane>
__aicore__ inline void BitNot(const LocalTensor<TLane>& dst, const LocalTensor<TLane>& src, int32_t len) {
    constexpr int32_t kHalves = sizeof(TLane) / sizeof(int16_t);
    Not(dst.template ReinterpretCast<int16_t>(), src.template ReinterpretCast<int16_t>(), len * kHalves);
}

// The sort code of `len` keys of type TKey held as lanes (8-bit keys
// widened): into `code` (scratch `tmp`, `tmp2`), or `keys` itself when the
// code is the key. Vector unit; the caller orders the keys' load before it.
template <typename TKey, typename TLane>
__aicore__ inline LocalTensor<TLane> SortCodeOf(const LocalTensor<TLane>& keys, const LocalTensor<TLane>& code,
                                               const LocalTensor<TLane>& tmp, const LocalTensor<TLane>& tmp2,
                                               int32_t len, bool descending) {
    using TULane = typename Lanes<TKey>::Unsigned;
    constexpr uint32_t kCode = SortCode<TKey>::kCode;
    constexpr TLane kNanAbove = static_cast<TLane>(SortCode<TKey>::kNanAbove);
    constexpr int32_t kLaneBits = 8 * sizeof(TLane);
    constexpr TLane kLaneMax = static_cast<TLane>(static_cast<TULane>(~TULane(0)) >> 1);
    LocalTensor<TULane> ucode = code.template ReinterpretCast<TULane>();
    if constexpr (kCode == 2) {
        // Float: magnitude m, NaN -> kLaneMax, negative -> -m, so -0.0
        // and +0.0 meet at 0 and every NaN sorts after +inf.
        ShiftLeft(code, keys, static_cast<TLane>(1), len);
        PipeBarrier<PIPE_V>();
        ShiftRight(ucode, ucode, static_cast<TULane>(1), len);
        PipeBarrier<PIPE_V>();
        Adds(tmp, code, static_cast<TLane>(-kNanAbove), len);  // > 0 exactly for NaN
        PipeBarrier<PIPE_V>();
        Maxs(tmp, tmp, static_cast<TLane>(0), len);
        PipeBarrier<PIPE_V>();
        Mins(tmp, tmp, static_cast<TLane>(1), len);  // 1 for NaN, else 0
        PipeBarrier<PIPE_V>();
        Muls(tmp2, tmp, kLaneMax, len);
        PipeBarrier<PIPE_V>();
        Max(code, code, tmp2, len);  // NaN magnitude -> kLaneMax
        PipeBarrier<PIPE_V>();       // tmp2 is rewritten next
        ShiftRight(tmp2, keys, static_cast<TLane>(kLaneBits - 1), len);  // 0 or -1 (sign)
        Muls(tmp, tmp, static_cast<TLane>(2), len);
        PipeBarrier<PIPE_V>();
        Muls(tmp2, tmp2, static_cast<TLane>(2), len);
        Adds(tmp, tmp, static_cast<TLane>(-1), len);  // NaN: 1, else -1
        PipeBarrier<PIPE_V>();
        Adds(tmp2, tmp2, static_cast<TLane>(1), len);  // sign factor 1 or -1
        PipeBarrier<PIPE_V>();
        Max(tmp2, tmp2, tmp, len);  // NaN: +1
        PipeBarrier<PIPE_V>();
        Mul(code, code, tmp2, len);
        PipeBarrier<PIPE_V>();
        if (descending) {
            BitNot(code, code, len);
            PipeBarrier<PIPE_V>();
        }
        return code;
    } else {
        if (!descending) return keys;
        BitNot(code, keys, len);
        PipeBarrier<PIPE_V>();
        if (sizeof(TKey) == 1 && kCode == 0) {
            // Unsigned 8-bit keys: keep the code in 8 bits.
            ShiftLeft(code, code, static_cast<TLane>(8), len);
            PipeBarrier<PIPE_V>();
            ShiftRight(ucode, ucode, static_cast<TULane>(8), len);
            PipeBarrier<PIPE_V>();
        }
        return code;
    }
}

// kTile: keys per tile (a multiple of 128). TVal: what moves with the
// keys, int32 (the indices, or any 4-byte values) or int16 (2-byte values;
// such a sort never makes indices).
template <typename TKey, uint32_t kTile, typename TVal>
class Pass {
public:
    // 8-bit keys are widened to int16 in UB (GatherMask moves 16- and 32-bit data).
    static constexpr bool kNarrow = sizeof(TKey) == 1;
    static constexpr bool kWide = sizeof(TKey) == 4;
    using TLane = typename Lanes<TKey>::Signed;
    using TULane = typename Lanes<TKey>::Unsigned;
    static constexpr int32_t kLaneBits = 8 * sizeof(TLane);
    static constexpr uint32_t kCode = SortCode<TKey>::kCode;
    using TUVal = typename Lanes<TVal>::Unsigned;
    static constexpr bool kValsAreIndices = sizeof(TVal) == 4;  // a pass may make them
    static constexpr uint32_t kGroups = kTile + kMaxDigits * kAlign;  // 16 aligned groups, elements
    // Staging of the two-level split (4 aligned groups, and the reads of a
    // CompareScalar padded to 128 past the last one).
    static constexpr uint32_t kStage = kTile + 8 * kAlign;

    __aicore__ inline void Run(GM_ADDR keysIn, GM_ADDR idxIn, GM_ADDR keysOut, GM_ADDR idxOut, GM_ADDR workspace,
                               const RadixTiling& t) {
        t_ = t;
        core_ = static_cast<uint32_t>(GetBlockIdx());
        cores_ = static_cast<uint32_t>(GetBlockNum());
        digits_ = 1u << t.digit_bits;
        const uint64_t total = t.rows * t.n;
        gKeysIn_.SetGlobalBuffer(reinterpret_cast<__gm__ TKey*>(keysIn), total);
        gIdxIn_.SetGlobalBuffer(reinterpret_cast<__gm__ TVal*>(idxIn), t.first_pass ? 0 : total);
        gKeysOut_.SetGlobalBuffer(reinterpret_cast<__gm__ TKey*>(keysOut), t.store_keys ? total : 0);
        gIdxOut_.SetGlobalBuffer(reinterpret_cast<__gm__ TVal*>(idxOut), total);
        gWork_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace), t.set_bytes / 4);
        const uint64_t tiles = t.rows_per_tile ? (t.rows + t.rows_per_tile - 1) / t.rows_per_tile
                                               : t.rows * t.tiles_per_row;
        begin_ = static_cast<uint64_t>(core_) * t.per_core;
        end_ = begin_ + t.per_core < tiles ? begin_ + t.per_core : tiles;
        if (begin_ > end_) begin_ = end_;
        if (t.rows_per_tile) {
            // Rows that fit a tile: the whole sort on chip, one launch.
            gScratchKeys_.SetGlobalBuffer(reinterpret_cast<__gm__ TKey*>(workspace),
                                          static_cast<uint64_t>(cores_) * kTile);
            gScratchVals_.SetGlobalBuffer(reinterpret_cast<__gm__ TVal*>(workspace + t.scratch_vals_offset),
                                          static_cast<uint64_t>(cores_) * kTile);
            Init(1, true, true);
            SortRows();
            return;
        }
        Init(2, !t.first_pass, t.first_pass != 0);
        Count();
        SyncAll();
        Scatter();
    }

private:
    // Queues of `depth` buffers; the values' input queue when `withVals`,
    // the positions buffer when `withIota`.
    __aicore__ inline void Init(int32_t depth, bool withVals, bool withIota) {
        pipe_.InitBuffer(qKeys_, depth, kTile * sizeof(TLane));
        if (withVals) pipe_.InitBuffer(qIdx_, depth, kTile * sizeof(TVal));
        // Keys out: the lane groups, then (8-bit keys) the narrowed groups.
        pipe_.InitBuffer(qKeysOut_, depth, kGroups * (sizeof(TLane) + (kNarrow ? 1 : 0)));
        pipe_.InitBuffer(qIdxOut_, depth, kGroups * sizeof(TVal));
        // The code; then the low digit bits of the staged groups.
        pipe_.InitBuffer(bufCode_, kStage * sizeof(TLane));
        pipe_.InitBuffer(bufTmp_, 2 * kGroups * sizeof(TLane));
        pipe_.InitBuffer(bufDigit_, kTile * sizeof(half));
        if (t_.digit_bits == 4) pipe_.InitBuffer(bufStage_, kStage * (sizeof(TLane) + sizeof(TVal)));
        pipe_.InitBuffer(bufMask_, kMasks * kTile / 8);
        if (kValsAreIndices && withIota) pipe_.InitBuffer(bufIota_, kTile * sizeof(int32_t));
        pipe_.InitBuffer(bufSmall_, kSmallBytes);
    }

    // Tile `k` (global tile number): its row, its first element in the
    // row, and its key count.
    __aicore__ inline uint64_t RowOf(uint64_t k) { return k / t_.tiles_per_row; }
    __aicore__ inline uint64_t ColOf(uint64_t k) { return (k % t_.tiles_per_row) * kTile; }
    __aicore__ inline uint32_t CountOf(uint64_t k) {
        uint64_t col = ColOf(k);
        return static_cast<uint32_t>(t_.n - col < kTile ? t_.n - col : kTile);
    }
    __aicore__ inline uint64_t OffsetOf(uint64_t k) { return RowOf(k) * t_.n + ColOf(k); }
    // CompareScalar on half takes whole 256-byte repeats.
    __aicore__ inline uint32_t Padded(uint32_t count) { return (count + 127) / 128 * 128; }
    // First and last row of core `c`'s tile range.
    __aicore__ inline uint64_t FirstRow(uint32_t c) { return static_cast<uint64_t>(c) * t_.per_core / t_.tiles_per_row; }
    __aicore__ inline uint64_t LastRow(uint32_t c) {
        uint64_t tiles = t_.rows * t_.tiles_per_row;
        uint64_t e = (static_cast<uint64_t>(c) + 1) * t_.per_core;
        return ((e < tiles ? e : tiles) - 1) / t_.tiles_per_row;
    }
    // Whether this core owns every tile of row `r`.
    __aicore__ inline bool OwnsRow(uint64_t r) {
        return r * t_.tiles_per_row >= begin_ && (r + 1) * t_.tiles_per_row <= end_;
    }

    // Raw keys of tile `k` (as lanes; 8-bit keys are widened on dequeue)
    // and, after the first pass, its indices. A partial tile is zero up to
    // the next multiple of 128 keys.
    __aicore__ inline void Load(uint64_t k, bool withIdx) {
        LoadKeys(gKeysIn_[OffsetOf(k)], CountOf(k));
        if (withIdx && !t_.first_pass) LoadVals(gIdxIn_[OffsetOf(k)], CountOf(k));
    }

    // `count` keys from `src` into qKeys_ (zero up to the next multiple of
    // 128 keys).
    __aicore__ inline void LoadKeys(const GlobalTensor<TKey>& src, uint32_t count) {
        LocalTensor<TLane> keys = qKeys_.AllocTensor<TLane>();
        if (count % 128 != 0) ZeroBeforeLoad(keys, kTile);
        if constexpr (kNarrow) {
            LoadAny(keys.template ReinterpretCast<TKey>()[kTile], src, count);
        } else {
            LoadAny(keys.template ReinterpretCast<TKey>(), src, count);
        }
        qKeys_.EnQue(keys);
    }

    __aicore__ inline void LoadVals(const GlobalTensor<TVal>& src, uint32_t count) {
        LocalTensor<TVal> idx = qIdx_.AllocTensor<TVal>();
        LoadAny(idx, src, count);
        qIdx_.EnQue(idx);
    }

    // Dequeues the next tile's keys and computes their sort code (code_)
    // over `padded` lanes.
    // Without `withCode` only the dequeue and the widening (the row pass
    // sorts by position, not by key).
    __aicore__ inline LocalTensor<TLane> Code(uint32_t padded, bool withCode = true) {
        LocalTensor<TLane> keys = qKeys_.DeQue<TLane>();
        LocalTensor<TLane> tmp = bufTmp_.Get<TLane>();
        LocalTensor<TLane> tmp2 = tmp[kGroups];
        const int32_t len = static_cast<int32_t>(padded);
        if constexpr (kNarrow) {
            // 8-bit keys sit in the upper half of the buffer: widen (exact).
            LocalTensor<half> h = tmp.template ReinterpretCast<half>();
            Cast(h, keys.template ReinterpretCast<TKey>()[kTile], RoundMode::CAST_NONE, padded);
            PipeBarrier<PIPE_V>();
            Cast(keys, h, RoundMode::CAST_RINT, padded);
            PipeBarrier<PIPE_V>();
        }
        if (!withCode) return keys;
        code_ = SortCodeOf<TKey>(keys, bufCode_.Get<TLane>(), tmp, tmp2, len, t_.descending != 0);
        return keys;
    }

    // Dequeues the next tile's keys, computes their code and the digit at
    // `shift` of every key: as halves in bufDigit_ (1-bit digits), or the
    // high 2 bits as halves in bufDigit_ and the low 2 bits as int16 in the
    // second half of bufTmp_'s int16 view (4-bit digits).
    __aicore__ inline LocalTensor<TLane> Digits(uint32_t padded, uint32_t shift) {
        LocalTensor<TLane> keys = Code(padded);
        LocalTensor<TLane> code = code_;
        LocalTensor<int16_t> tmp = bufTmp_.Get<int16_t>();
        const int32_t len = static_cast<int32_t>(padded);
        // The digit in the lanes of the code: for int32 lanes in the upper
        // half of bufTmp_ (clear of tmp and tmp2), then narrowed into tmp.
        LocalTensor<TLane> digit = bufTmp_.Get<TLane>()[kWide ? kGroups : 0];
        // The digit: the top digit of a signed code by an arithmetic shift
        // plus half the digit range, any other by shifting its bits to the
        // top and back down (logical).
        const bool top = shift + t_.digit_bits >= t_.key_bits;
        if (kCode != 0 && top) {
            ShiftRight(digit, code, static_cast<TLane>(shift), len);
            PipeBarrier<PIPE_V>();
            Adds(digit, digit, static_cast<TLane>(1 << (t_.digit_bits - 1)), len);
        } else {
            LocalTensor<TULane> u = digit.template ReinterpretCast<TULane>();
            ShiftLeft(u, code.template ReinterpretCast<TULane>(),
                      static_cast<TULane>(kLaneBits - shift - t_.digit_bits), len);
            PipeBarrier<PIPE_V>();
            ShiftRight(u, u, static_cast<TULane>(kLaneBits - t_.digit_bits), len);
        }
        PipeBarrier<PIPE_V>();
        if constexpr (kWide) {
            Cast(tmp, digit, RoundMode::CAST_NONE, padded);  // 0..15: exact
            PipeBarrier<PIPE_V>();
        }
        SplitDigit(padded);
        return keys;
    }

    // The row of every position (int32 lanes of `idx`, `count` of them) in
    // a tile of whole rows, as the digit of the row pass: floor((p + 0.5) /
    // n) in f32 is exact (p < 2^12, and (p + 0.5) / n is at least 0.5 / n
    // from an integer, far above the rounding error).
    __aicore__ inline void RowDigits(const LocalTensor<TVal>& idx, uint32_t count) {
        LocalTensor<float> f = bufStage_.Get<float>();  // the staging is free until the split
        const int32_t len = static_cast<int32_t>(count);
        Cast(f, idx, RoundMode::CAST_NONE, count);
        PipeBarrier<PIPE_V>();
        Adds(f, f, 0.5f, len);
        PipeBarrier<PIPE_V>();
        Muls(f, f, 1.0f / static_cast<float>(t_.n), len);
        PipeBarrier<PIPE_V>();
        Cast(bufTmp_.Get<int16_t>(), f, RoundMode::CAST_FLOOR, count);
        PipeBarrier<PIPE_V>();
        SplitDigit(count);
    }

    // The digit (int16 in the first lanes of bufTmp_) as the splits take it.
    __aicore__ inline void SplitDigit(uint32_t padded) {
        LocalTensor<int16_t> tmp = bufTmp_.Get<int16_t>();
        LocalTensor<int16_t> tmp2 = tmp[kGroups];
        const int32_t len = static_cast<int32_t>(padded);
        if (t_.digit_bits == 4) {
            // Two-level split: the high 2 bits as halves (level 1), the low
            // 2 bits as int16 in tmp2 (moved along, compared in level 2).
            ShiftRight(tmp2, tmp, static_cast<int16_t>(2), len);
            PipeBarrier<PIPE_V>();
            Cast(bufDigit_.Get<half>(), tmp2, RoundMode::CAST_NONE, padded);
            PipeBarrier<PIPE_V>();  // tmp2 is rewritten next
            ShiftLeft(tmp2, tmp, static_cast<int16_t>(14), len);
            PipeBarrier<PIPE_V>();
            ShiftRight(tmp2.template ReinterpretCast<uint16_t>(), tmp2.template ReinterpretCast<uint16_t>(), static_cast<uint16_t>(14), len);
        } else {
            Cast(bufDigit_.Get<half>(), tmp, RoundMode::CAST_NONE, padded);
        }
        PipeBarrier<PIPE_V>();
    }

    // Bit masks of the lanes of bufDigit_ equal to 0, 1, .., values - 1
    // (over `padded` lanes), one after the other: the gathers that use
    // them then run without a barrier between values.
    __aicore__ inline LocalTensor<uint8_t> MasksOf(uint32_t values, uint32_t padded) {
        LocalTensor<uint8_t> masks = bufMask_.Get<uint8_t>();
        for (uint32_t v = 0; v < values; ++v) {
            CompareScalar(masks[v * (kTile / 8)], bufDigit_.Get<half>(), static_cast<half>(static_cast<float>(v)),
                          CMPMODE::EQ, padded);
        }
        PipeBarrier<PIPE_V>();
        return masks;
    }

    // The low digit bits of a staged group (at `at`, `count` of them) as
    // halves in bufDigit_ for level 2.
    __aicore__ inline void StagedLowBits(uint32_t at, uint32_t count) {
        Cast(bufDigit_.Get<half>(), bufCode_.Get<int16_t>()[at], RoundMode::CAST_NONE, Padded(count));
        PipeBarrier<PIPE_V>();
    }

    // Writes the 16 counts of `counts` into GM slot `dst` (64 bytes).
    __aicore__ inline void StoreCounts(const GlobalTensor<int32_t>& dst, const uint64_t* counts) {
        LocalTensor<int32_t> own = bufSmall_.GetWithOffset<int32_t>(kSlotInts, kOwnAt);
        for (uint32_t d = 0; d < kSlotInts; ++d) own.SetValue(d, static_cast<int32_t>(counts[d]));
        StoreSlot(dst, own, kSlotInts);
    }

    // Phase 1: digit counts per row piece of this core's tiles.
    __aicore__ inline void Count() {
        uint64_t counts[kMaxDigits] = {};
        if (begin_ < end_) Load(begin_, false);
        for (uint64_t k = begin_; k < end_; ++k) {
            if (k + 1 < end_) Load(k + 1, false);
            uint32_t count = CountOf(k);
            LocalTensor<TLane> keys = Digits(Padded(count), t_.shift);
            qKeys_.FreeTensor(keys);
            if (t_.digit_bits == 4) {
                // Level 1 stages the low bits of each high-bits group,
                // level 2 counts the low bits of each group.
                uint32_t at[4], got[4];
                SplitLevel(4, count, bufTmp_.Get<int16_t>()[kGroups], bufCode_.Get<int16_t>(), at, got);
                for (uint32_t g = 0; g < 4; ++g) {
                    if (got[g] == 0) continue;
                    StagedLowBits(at[g], got[g]);
                    CountLevel(4, got[g], counts + 4 * g);
                }
            } else {
                CountLevel(2, count, counts);
            }
            if (k + 1 == end_ || RowOf(k + 1) != RowOf(k)) StorePiece(RowOf(k), counts);
        }
    }

    // Adds to counts[0..values) the number of lanes of bufDigit_[0..count)
    // equal to each value (counter-mode GatherMask's count; the last value
    // is the rest).
    __aicore__ inline void CountLevel(uint32_t values, uint32_t count, uint64_t* counts) {
        LocalTensor<half> scratch = bufTmp_.Get<half>();
        const GatherMaskParams once(1, 1, 8, 0);
        uint64_t rest = count;
        LocalTensor<uint8_t> masks = MasksOf(values - 1, Padded(count));
        for (uint32_t v = 0; v + 1 < values; ++v) {
            uint64_t kept = 0;
            // The counts only: every gather writes the same scratch.
            GatherMask(scratch, bufDigit_.Get<half>(), masks[v * (kTile / 8)].template ReinterpretCast<uint16_t>(), true,
                       count, once, kept);
            counts[v] += kept;
            rest -= kept;
        }
        ResetMask();
        PipeBarrier<PIPE_V>();
        counts[values - 1] += rest;
    }

    // Stable split of `count` lanes by the value (0..values) of bufDigit_:
    // the lanes of value v of `src` go to dst[at[v]..at[v] + got[v]), each
    // group starting 32-element aligned.
    template <typename T>
    __aicore__ inline void SplitLevel(uint32_t values, uint32_t count, const LocalTensor<T>& src,
                                      const LocalTensor<T>& dst, uint32_t* at, uint32_t* got) {
        const GatherMaskParams once(1, 1, 8, 0);
        uint32_t next = 0;
        LocalTensor<uint8_t> masks = MasksOf(values, Padded(count));
        for (uint32_t v = 0; v < values; ++v) {
            uint64_t kept = 0;
            GatherMask(dst[next], src, masks[v * (kTile / 8)].template ReinterpretCast<uint16_t>(), true, count, once, kept);
            at[v] = next;
            got[v] = static_cast<uint32_t>(kept);
            next += (got[v] + kAlign - 1) / kAlign * kAlign;
        }
        ResetMask();
        PipeBarrier<PIPE_V>();
    }

    // As SplitLevel, moving keys and indices together (same masks).
    __aicore__ inline uint32_t SplitPairs(uint32_t values, uint32_t count, const LocalTensor<TLane>& keys,
                                          const LocalTensor<TVal>& idx, const LocalTensor<TLane>& dstKeys,
                                          const LocalTensor<TVal>& dstIdx, uint32_t next, uint32_t* at,
                                          uint32_t* got, const LocalTensor<int16_t>* low = nullptr,
                                          const LocalTensor<int16_t>* dstLow = nullptr) {
        const GatherMaskParams once(1, 1, 8, 0);
        LocalTensor<uint8_t> masks = MasksOf(values, Padded(count));
        for (uint32_t v = 0; v < values; ++v) {
            LocalTensor<uint8_t> mask = masks[v * (kTile / 8)];
            uint64_t nk = 0, ni = 0, nl = 0;
            GatherMask(dstKeys[next], keys, mask.template ReinterpretCast<TULane>(), true, count, once, nk);
            GatherMask(dstIdx[next], idx, mask.template ReinterpretCast<TUVal>(), true, count, once, ni);
            if (low != nullptr) GatherMask((*dstLow)[next], *low, mask.template ReinterpretCast<uint16_t>(), true, count, once, nl);
            at[v] = next;
            got[v] = static_cast<uint32_t>(nk);
            next += (got[v] + kAlign - 1) / kAlign * kAlign;
        }
        ResetMask();
        PipeBarrier<PIPE_V>();
        return next;
    }

    // End of a row piece: its counts go to the row's slot if this core owns
    // the row whole, else to this core's first-row / last-row slot; then
    // the counts restart.
    __aicore__ inline void StorePiece(uint64_t r, uint64_t* counts) {
        if (OwnsRow(r)) {
            StoreCounts(gWork_[t_.row_totals_offset / 4 + r * kSlotInts], counts);
        } else {
            if (r == FirstRow(core_)) StoreCounts(gWork_[(core_ * 2) * kSlotInts], counts);
            if (r == LastRow(core_)) StoreCounts(gWork_[(core_ * 2 + 1) * kSlotInts], counts);
        }
        for (uint32_t d = 0; d < kMaxDigits; ++d) counts[d] = 0;
    }

    // Counts for row `r`: the row's total per value (the first `values` of
    // them: each costs the scalar unit up to three UB reads), and the part
    // of it in row pieces of earlier cores.
    __aicore__ inline void RowCounts(uint32_t values, uint64_t r, uint64_t* before, uint64_t* total) {
        for (uint32_t d = 0; d < kMaxDigits; ++d) before[d] = total[d] = 0;
        if (OwnsRow(r)) {
            LocalTensor<int32_t> own = bufSmall_.GetWithOffset<int32_t>(kSlotInts, kOwnAt);
            PipeSync<HardEvent::S_MTE2>();
            DataCopy(own, gWork_[t_.row_totals_offset / 4 + r * kSlotInts], kSlotInts);
            PipeSync<HardEvent::MTE2_S>();
            for (uint32_t d = 0; d < values; ++d) total[d] = static_cast<uint64_t>(own.GetValue(d));
            return;
        }
        // The cores sharing the row, lo..hi: earlier ones end in it (their
        // last-row slot), later ones start in it (their first-row slot).
        // Every core after lo starts in the row (FirstRow is monotone, and
        // this core has a piece of it); lo's slot is whichever it wrote.
        LocalTensor<int32_t> slots = bufSmall_.GetWithOffset<int32_t>(cores_ * 2 * kSlotInts, kSlotsAt);
        PipeSync<HardEvent::S_MTE2>();
        DataCopy(slots, gWork_[0], cores_ * 2 * kSlotInts);
        PipeSync<HardEvent::MTE2_V>();
        uint32_t lo = core_, hi = core_;
        while (lo > 0 && LastRow(lo - 1) == r) --lo;
        while (hi + 1 < cores_ && FirstRow(hi + 1) == r) ++hi;
        // The first-row slots of cores lo+1 .. core_-1 (before this core)
        // and of the rest up to hi, each summed into its range's first core
        // on the vector unit (one scalar read per value, not per core).
        const uint32_t mid = core_ > lo ? core_ : lo + 1;
        FoldRecords(slots, lo + 1, mid - (lo + 1), 2 * kSlotInts);
        FoldRecords(slots, mid, hi + 1 - mid, 2 * kSlotInts);
        PipeSync<HardEvent::V_S>();
        const uint32_t loSlot = lo * 2 + (r == FirstRow(lo) ? 0 : 1);
        for (uint32_t d = 0; d < values; ++d) {
            const uint64_t first = static_cast<uint64_t>(slots.GetValue(loSlot * kSlotInts + d));
            const uint64_t between =
                mid > lo + 1 ? static_cast<uint64_t>(slots.GetValue((lo + 1) * 2 * kSlotInts + d)) : 0;
            const uint64_t after = hi >= mid ? static_cast<uint64_t>(slots.GetValue(mid * 2 * kSlotInts + d)) : 0;
            if (lo < core_) before[d] = first + between;
            total[d] = first + between + after;
        }
        ScalarReadsDone();
    }

    // Output offsets of each digit value for this core's piece of row `r`.
    __aicore__ inline void Bases(uint64_t r, uint64_t* base) {
        uint64_t before[kMaxDigits], total[kMaxDigits];
        RowCounts(digits_, r, before, total);
        uint64_t at = r * t_.n;
        for (uint32_t d = 0; d < digits_; ++d) {
            base[d] = at + before[d];
            at += total[d];
        }
    }

    // The stable split of a tile's `count` keys and values by the digit of
    // bufDigit_ (and the low bits in bufTmp_): the lanes of digit value d go
    // to out[at[d]..at[d] + got[d]), each group 32-element aligned. Returns
    // the lanes used.
    __aicore__ inline uint32_t SplitTile(uint32_t count, const LocalTensor<TLane>& keys, const LocalTensor<TVal>& idx,
                                         const LocalTensor<TLane>& outKeys, const LocalTensor<TVal>& outIdx,
                                         uint32_t* at, uint32_t* got) {
        if (t_.digit_bits != 4) return SplitPairs(2, count, keys, idx, outKeys, outIdx, 0, at, got);
        Staged staged;
        SplitHigh(count, keys, idx, staged);
        uint32_t next = 0;
        for (uint32_t g = 0; g < 4; ++g) next = SplitLow(g, staged, outKeys, outIdx, next, at, got);
        return next;
    }

    // The four high-bits groups of a 4-bit split, staged: group g at
    // lanes at[g].., got[g] of them.
    struct Staged {
        uint32_t at[4], got[4];
    };

    // Level 1 of the 4-bit split: by the high 2 bits (bufDigit_) into the
    // staging buffers, the low bits moving along.
    __aicore__ inline void SplitHigh(uint32_t count, const LocalTensor<TLane>& keys, const LocalTensor<TVal>& idx,
                                     Staged& staged) {
        LocalTensor<int16_t> low = bufTmp_.Get<int16_t>()[kGroups];
        LocalTensor<int16_t> stageLow = bufCode_.Get<int16_t>();
        SplitPairs(4, count, keys, idx, bufStage_.Get<TLane>(), StagedVals(), 0, staged.at, staged.got, &low, &stageLow);
    }

    // Level 2 for staged group g: by its low 2 bits into the output groups
    // 4g..4g+3 from lane `next`. Returns the next free lane.
    __aicore__ inline uint32_t SplitLow(uint32_t g, const Staged& staged, const LocalTensor<TLane>& outKeys,
                                        const LocalTensor<TVal>& outIdx, uint32_t next, uint32_t* at, uint32_t* got) {
        if (staged.got[g] == 0) {
            for (uint32_t l = 0; l < 4; ++l) at[4 * g + l] = next, got[4 * g + l] = 0;
            return next;
        }
        StagedLowBits(staged.at[g], staged.got[g]);
        return SplitPairs(4, staged.got[g], bufStage_.Get<TLane>()[staged.at[g]], StagedVals()[staged.at[g]], outKeys,
                          outIdx, next, at + 4 * g, got + 4 * g);
    }

    // The staged values (after the staged keys in bufStage_).
    __aicore__ inline LocalTensor<TVal> StagedVals() {
        return bufStage_.GetWithOffset<TVal>(kStage, kStage * sizeof(TLane));
    }

    // Rows of at most a tile, rows_per_tile of them per tile: every pass
    // on chip. Each key pass splits the tile (the rows mixed) and puts the
    // groups back in order through this core's GM scratch (L2); then a pass
    // by the row of each position (its digit from the position: rows_per_tile
    // <= 16) parts the rows again, stable, each group one output row.
    __aicore__ inline void SortRows() {
        if constexpr (!kValsAreIndices) return;  // such sorts make their indices
        const uint32_t keyPasses = t_.key_bits / t_.digit_bits;
        const uint64_t area = static_cast<uint64_t>(core_) * kTile;
        for (uint64_t k = begin_; k < end_; ++k) {
            const uint64_t row0 = k * t_.rows_per_tile;
            const uint64_t rowsLeft = t_.rows - row0;
            const uint32_t rowsHere = static_cast<uint32_t>(rowsLeft < t_.rows_per_tile ? rowsLeft : t_.rows_per_tile);
            const uint32_t count = rowsHere * static_cast<uint32_t>(t_.n);
            const uint32_t padded = Padded(count);
            const uint32_t passes = keyPasses + (rowsHere > 1 ? 1 : 0);
            LoadKeys(gKeysIn_[row0 * t_.n], count);
            for (uint32_t pass = 0; pass < passes; ++pass) {
                const bool rowPass = pass == keyPasses;
                const bool last = pass + 1 == passes;
                LocalTensor<TVal> idx;
                if (pass == 0) {
                    idx = bufIota_.Get<TVal>();
                    CreateVecIndex(idx, static_cast<TVal>(0), count);
                    PipeBarrier<PIPE_V>();
                } else {
                    idx = qIdx_.DeQue<TVal>();
                }
                LocalTensor<TLane> keys;
                if (rowPass) {
                    keys = Code(padded, false);  // 8-bit keys widened, no code
                    RowDigits(idx, count);
                } else {
                    keys = Digits(padded, pass * t_.digit_bits);
                }
                LocalTensor<TLane> outKeys = qKeysOut_.AllocTensor<TLane>();
                LocalTensor<TVal> outIdx = qIdxOut_.AllocTensor<TVal>();
                uint32_t at[kMaxDigits], got[kMaxDigits];
                uint32_t next = SplitTile(count, keys, idx, outKeys, outIdx, at, got);
                qKeys_.FreeTensor(keys);
                if (pass > 0) qIdx_.FreeTensor(idx);
                if (rowPass) {
                    // Positions in the tile -> positions in the row.
                    for (uint32_t d = 1; d < rowsHere; ++d) {
                        Adds(outIdx[at[d]], outIdx[at[d]], static_cast<TVal>(-static_cast<int32_t>(d * t_.n)),
                             static_cast<int32_t>(got[d]));
                    }
                    PipeBarrier<PIPE_V>();
                }
                LocalTensor<TKey> keysOut =
                    HandoffKeys<TKey>(qKeysOut_, outKeys, next, 2 * kGroups, bufTmp_.Get<half>());
                outIdx = Handoff(qIdxOut_, outIdx);
                // The groups in order: the sorted row (one row a tile), the
                // rows (after the row pass), else the tile for the next pass
                // (over the scratch the last pass wrote: MTE3 in order).
                PipeBarrier<PIPE_MTE3>();
                uint64_t off = 0;
                for (uint32_t d = 0; d < digits_; ++d) {
                    if (got[d] == 0) continue;
                    if (last) {
                        const uint64_t dst = rowPass ? (row0 + d) * t_.n : row0 * t_.n + off;
                        if (t_.store_keys) StoreAny(gKeysOut_[dst], keysOut[at[d]], got[d]);
                        StoreAny(gIdxOut_[dst], outIdx[at[d]], got[d]);
                    } else {
                        StoreAny(gScratchKeys_[area + off], keysOut[at[d]], got[d]);
                        StoreAny(gScratchVals_[area + off], outIdx[at[d]], got[d]);
                    }
                    off += got[d];
                }
                qKeysOut_.FreeTensor(outKeys);
                qIdxOut_.FreeTensor(outIdx);
                if (!last) {
                    PipeSync<HardEvent::MTE3_MTE2>();  // the scratch is read back
                    LoadKeys(gScratchKeys_[area], count);
                    LoadVals(gScratchVals_[area], count);
                }
            }
        }
    }

    // Phase 2: the counting sort of every tile into its digit groups.
    __aicore__ inline void Scatter() {
        if (begin_ >= end_) return;
        uint64_t base[kMaxDigits] = {};
        Load(begin_, true);
        for (uint64_t k = begin_; k < end_; ++k) {
            if (k == begin_ || ColOf(k) == 0) Bases(RowOf(k), base);
            if (k + 1 < end_) Load(k + 1, true);
            uint32_t count = CountOf(k);
            uint32_t padded = Padded(count);
            LocalTensor<TLane> keys = Digits(padded, t_.shift);
            LocalTensor<TVal> idx;
            if constexpr (kValsAreIndices) {
                if (t_.first_pass) {
                    idx = bufIota_.Get<TVal>();
                    CreateVecIndex(idx, static_cast<TVal>(ColOf(k)), count);
                    PipeBarrier<PIPE_V>();
                }
            }
            if (!t_.first_pass) idx = qIdx_.DeQue<TVal>();
            LocalTensor<TLane> outKeys = qKeysOut_.AllocTensor<TLane>();
            LocalTensor<TVal> outIdx = qIdxOut_.AllocTensor<TVal>();
            uint32_t at[kMaxDigits], got[kMaxDigits];
            // The digit groups from `queued` on (lanes from at[queued]) go
            // through the queue.
            const uint32_t queued = t_.digit_bits == 4 ? 12 : 0;
            uint32_t next = 0;
            if (t_.digit_bits == 4) {
                // Each high-bits group's four digit groups are stored as soon
                // as level 2 has made them (MTE3 writes while the vector unit
                // splits the next group); the last four go through the queue.
                Staged staged;
                SplitHigh(count, keys, idx, staged);
                FreeInputs(keys, idx);
                for (uint32_t g = 0; g < 4; ++g) {
                    next = SplitLow(g, staged, outKeys, outIdx, next, at, got);
                    if (4 * g == queued) break;
                    NarrowKeys<TKey>(outKeys, at[4 * g], next, 2 * kGroups, bufTmp_.Get<half>());
                    PipeSync<HardEvent::V_MTE3>();
                    StoreGroups(4 * g, 4 * g + 4, StoredKeys<TKey>(outKeys, 2 * kGroups), outIdx, at, got, base);
                }
            } else {
                next = SplitTile(count, keys, idx, outKeys, outIdx, at, got);
                FreeInputs(keys, idx);
            }
            LocalTensor<TKey> keysOut =
                HandoffKeys<TKey>(qKeysOut_, outKeys, next, 2 * kGroups, bufTmp_.Get<half>(), at[queued]);
            outIdx = Handoff(qIdxOut_, outIdx);
            StoreGroups(queued, digits_, keysOut, outIdx, at, got, base);
            qKeysOut_.FreeTensor(outKeys);
            qIdxOut_.FreeTensor(outIdx);
        }
    }

    // The tile's input keys and (after the first pass) indices, once split.
    __aicore__ inline void FreeInputs(LocalTensor<TLane>& keys, LocalTensor<TVal>& idx) {
        qKeys_.FreeTensor(keys);
        if (!t_.first_pass) qIdx_.FreeTensor(idx);
    }

    // Writes digit groups [d0, d1) of a split tile at their running offsets.
    __aicore__ inline void StoreGroups(uint32_t d0, uint32_t d1, const LocalTensor<TKey>& keysOut,
                                       const LocalTensor<TVal>& outIdx, const uint32_t* at, const uint32_t* got,
                                       uint64_t* base) {
        for (uint32_t d = d0; d < d1; ++d) {
            if (t_.store_keys) StoreAny(gKeysOut_[base[d]], keysOut[at[d]], got[d]);
            StoreAny(gIdxOut_[base[d]], outIdx[at[d]], got[d]);
            base[d] += got[d];
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> qKeys_, qIdx_;  // the next tile loads while this one sorts
    TQue<TPosition::VECOUT, 2> qKeysOut_, qIdxOut_;
    TBuf<TPosition::VECCALC> bufCode_, bufTmp_, bufDigit_, bufMask_, bufIota_, bufSmall_, bufStage_;
    GlobalTensor<TKey> gKeysIn_, gKeysOut_, gScratchKeys_;
    GlobalTensor<TVal> gIdxIn_, gIdxOut_, gScratchVals_;
    GlobalTensor<int32_t> gWork_;
    LocalTensor<TLane> code_;  // the sort code of the current tile
    RadixTiling t_;
    uint32_t core_ = 0, cores_ = 0, digits_ = 2;
    uint64_t begin_ = 0, end_ = 0;
};

// Rows of at most 2^kMaxBits 16-bit keys, the whole sort on chip by a
// bitonic network (RowNetwork; rows mode with `network` set). Every key
// becomes one int32 whose order is (code, index in the row): the code's
// upper 15 bits (shifted, arithmetic for signed codes, logical for
// unsigned ones) in the high half, its lowest bit at bit 15 and the index
// in bits 0..14. The keys of a row are then distinct, so the network, not
// stable by itself, gives the stable order, and Min/Max on int32 compare
// them. Rows are padded to Lp = 2^row_bits with 0x7FFFF800 + index (above
// every key). A tile holds rows_per_tile rows (a multiple of 8, at least
// 64 lanes, padded with whole dummy rows) laid out 8 rows to a 32-byte
// block: lane (row i, column c) sits at ((i / 8 * Lp + c) * 8 + i % 8), so
// the column pairs of every stage are pairs of whole blocks.
// Merge k (k = 2..Lp) is a bitonic merge with no data movement: every
// half-cleaner pairs column c with c XOR j (j = k/2..1; the partner block
// is j blocks on) and the lower column takes the min, the upper one the
// max: a Min and a Max over the lower and upper blocks in block-strided
// repeats, no Select, no Gather. The descending runs a bitonic merge needs
// are held complemented (~x reverses the int32 order), so every run is
// sorted ascending in what it holds: after merge k, run m of k columns
// holds ~x when m is odd (x at the last merge). Merge k first flips (Not)
// the runs of k/2 at positions 1 and 2 mod 4, which turns the two halves
// of every run of k into one ascending and one descending sequence in the
// run's own sense. The tables that spread the codes into the block layout
// and back depend on the launch only and are built once per core. The
// sorted values give the indices (their low 15 bits) and the keys (a
// Gather of the raw keys by index).
template <typename TKey>
class RowNetwork {
public:
    static_assert(sizeof(TKey) == 2, "16-bit keys: code and index share an int32");
    using TLane = int16_t;
    static constexpr uint32_t kLanes = 4096;  // int32 lanes of a tile (NETWORK_LANES)
    static constexpr uint32_t kMaxBits = 9;   // rows of up to 512 keys (NETWORK_MAX_ROW)
    static constexpr uint32_t kVec = kLanes * sizeof(int32_t);
    static constexpr uint32_t kBlock = 8;  // int32 lanes per 32-byte block: 8 rows side by side
    static_assert((kLanes >> kMaxBits) == kBlock, "a tile holds 8 rows of the longest row");
    // Arena (bytes). A, B: the values (the network's ping-pong; scratch
    // before it); G: the code's two halves as int16, then the pad words at
    // kPadAt; Mn: scratch.
    static constexpr uint32_t kA = 0, kB = kVec, kG = 2 * kVec, kPadAt = 3 * kVec, kMn = kPadAt + 32;
    static constexpr uint32_t kBuild = kMn + kVec;                 // 2 * kLanes uint32
    static constexpr uint32_t kCompact = kBuild + 2 * kVec;        // kLanes uint32
    static constexpr uint32_t kRowBase = kCompact + kVec;          // kLanes int32
    static constexpr uint32_t kCol = kRowBase + kVec;              // kLanes int32
    static constexpr uint32_t kIdxOut = kCol + kVec;               // kLanes int32
    static constexpr uint32_t kKeysOut = kIdxOut + kVec;           // kLanes 16-bit
    static constexpr uint32_t kBytes = kKeysOut + kLanes * sizeof(TLane);
    static constexpr int32_t kPadLow = static_cast<int32_t>(0x7FFFF800);  // + index: above every key

    __aicore__ inline void Run(GM_ADDR keysIn, GM_ADDR keysOut, GM_ADDR idxOut, const RadixTiling& t) {
        t_ = t;
        n_ = static_cast<uint32_t>(t.n);
        bits_ = t.row_bits;
        rowLanes_ = 1u << bits_;
        rowsPerTile_ = static_cast<uint32_t>(t.rows_per_tile);
        lanes_ = rowsPerTile_ * rowLanes_ < 64 ? 64 : rowsPerTile_ * rowLanes_;
        contig_ = lanes_ / rowLanes_ * n_;  // keys of the tile's rows, dummy rows included
        const uint64_t total = t.rows * t.n;
        gKeysIn_.SetGlobalBuffer(reinterpret_cast<__gm__ TKey*>(keysIn), total);
        gKeysOut_.SetGlobalBuffer(reinterpret_cast<__gm__ TKey*>(keysOut), t.store_keys ? total : 0);
        gIdxOut_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(idxOut), total);
        const uint64_t tiles = (t.rows + t.rows_per_tile - 1) / t.rows_per_tile;
        const uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
        const uint64_t end = MinU64(begin + t.per_core, tiles);
        pipe_.InitBuffer(qKeys_, 2, kLanes * sizeof(TLane));
        ub_.Init(pipe_, kBytes);
        if (begin >= end) return;
        Load(begin);
        Tables();
        for (uint64_t k = begin; k < end; ++k) {
            if (k + 1 < end) Load(k + 1);
            Sort(k);
        }
    }

private:
    __aicore__ inline uint32_t RowsOf(uint64_t k) {
        return static_cast<uint32_t>(MinU64(t_.rows - k * rowsPerTile_, rowsPerTile_));
    }

    __aicore__ inline void Load(uint64_t k) {
        LocalTensor<TKey> keys = qKeys_.AllocTensor<TKey>();
        LoadAny(keys, gKeysIn_[k * rowsPerTile_ * n_], RowsOf(k) * n_);
        qKeys_.EnQue(keys);
    }

    // The barrier after each step of the tables (built once per core:
    // plain order over overlap).
    __aicore__ inline void V() { PipeBarrier<PIPE_V>(); }

    // Row i and column c of the lanes `lane` (count of them; `lane` is
    // overwritten): block b = lane >> 3, r = lane & 7, group g = b >> bits, c = b -
    // (g << bits), i = 8g + r.
    __aicore__ inline void RowCol(const LocalTensor<int32_t>& lane, const LocalTensor<int32_t>& row,
                                  const LocalTensor<int32_t>& col, int32_t count) {
        ShiftRight(col, lane, static_cast<int32_t>(3), count);  // block
        V();
        ShiftLeft(row, col, static_cast<int32_t>(3), count);
        V();
        Sub(row, lane, row, count);  // r
        V();
        ShiftRight(lane, col, static_cast<int32_t>(bits_), count);  // g
        V();
        ShiftLeft(lane, lane, static_cast<int32_t>(bits_), count);
        V();
        Sub(col, col, lane, count);  // c
        V();
        ShiftRight(lane, lane, static_cast<int32_t>(bits_), count);
        V();
        ShiftLeft(lane, lane, static_cast<int32_t>(3), count);  // 8g
        V();
        Add(row, row, lane, count);  // i
        V();
    }

    // The launch's tables: the column of every lane, the build table that
    // spreads the code halves into the block layout (2 * lanes_ int16
    // lanes), and for the output the lane (compact table) and the row start
    // (row base, in bytes of the keys) of every key of the tile.
    __aicore__ inline void Tables() {
        LocalTensor<int32_t> lane = ub_.At<int32_t>(kA, kLanes), row = ub_.At<int32_t>(kB, kLanes);
        LocalTensor<int32_t> col = ub_.At<int32_t>(kCol, kLanes);
        CreateVecIndex(lane, static_cast<int32_t>(0), lanes_);
        V();
        RowCol(lane, row, col, static_cast<int32_t>(lanes_));
        BuildTable();
        OutputTables();
    }

    // Lane q of the int16 view of the values (2 * lanes_ of them) takes:
    // for lane p = q >> 1 (row i, column c), when c < n, the low code half
    // (q even, int16 lane i*n + c of G) or the high one (q odd, lane kLanes
    // + i*n + c); else the pad word (kPadAt's low or high half). Byte
    // offsets from G.
    __aicore__ inline void BuildTable() {
        const int32_t count = static_cast<int32_t>(2 * lanes_);
        LocalTensor<int32_t> x = ub_.At<int32_t>(kBuild, 2 * kLanes);
        LocalTensor<int32_t> y = ub_.At<int32_t>(kA, 2 * kLanes);        // A and B
        LocalTensor<int32_t> z = ub_.At<int32_t>(kCompact, 2 * kLanes);  // compact and row base
        LocalTensor<int32_t> w = ub_.At<int32_t>(kG, 2 * kLanes);        // G, the pad words and Mn
        LocalTensor<uint8_t> valid = ub_.At<uint8_t>(kIdxOut, 2 * kLanes / 8);
        CreateVecIndex(x, static_cast<int32_t>(0), 2 * lanes_);
        V();
        ShiftRight(w, x, static_cast<int32_t>(1), count);  // p
        V();
        Muls(z, w, static_cast<int32_t>(-2), count);
        V();
        Add(z, z, x, count);  // h = q - 2p: 0 low half, 1 high half
        V();
        RowCol(w, x, y, count);  // x = i, y = c
        Muls(x, x, static_cast<int32_t>(n_), count);
        V();
        Add(x, x, y, count);  // i * n + c
        V();
        Cast(w.ReinterpretCast<float>(), y, RoundMode::CAST_NONE, count);
        Muls(x, x, static_cast<int32_t>(sizeof(TLane)), count);
        V();
        CompareScalar(valid, w.ReinterpretCast<float>(), static_cast<float>(n_), CMPMODE::LT, count);
        V();
        Muls(y, z, static_cast<int32_t>(kLanes * sizeof(TLane)), count);
        Muls(z, z, static_cast<int32_t>(sizeof(TLane)), count);
        V();
        Add(x, x, y, count);
        Adds(z, z, static_cast<int32_t>(kPadAt - kG), count);
        V();
        Select(x.ReinterpretCast<float>(), valid, x.ReinterpretCast<float>(), z.ReinterpretCast<float>(),
               SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
        // The pad words, past G (used as scratch above).
        Duplicate(ub_.At<int32_t>(kPadAt, 8), kPadLow, 8);
        V();
    }

    // For key q of the tile (row i = floor(q / n), column c): the compact
    // table, 4 * lane of (i, c), and the row base, 2 * i * n.
    __aicore__ inline void OutputTables() {
        const int32_t count = static_cast<int32_t>(lanes_);
        LocalTensor<int32_t> q = ub_.At<int32_t>(kA, kLanes), row = ub_.At<int32_t>(kB, kLanes);
        LocalTensor<int32_t> g = ub_.At<int32_t>(kG, kLanes);
        LocalTensor<float> f = ub_.At<float>(kMn, kLanes);
        LocalTensor<int32_t> compact = ub_.At<int32_t>(kCompact, kLanes), base = ub_.At<int32_t>(kRowBase, kLanes);
        CreateVecIndex(q, static_cast<int32_t>(0), lanes_);
        V();
        Cast(f, q, RoundMode::CAST_NONE, count);
        V();
        // floor((q + 0.5) / n): exact, the 0.5 keeps it off the rounding edge.
        Adds(f, f, 0.5f, count);
        V();
        Muls(f, f, 1.0f / static_cast<float>(n_), count);
        V();
        Cast(row, f, RoundMode::CAST_FLOOR, count);
        V();
        Muls(base, row, static_cast<int32_t>(n_), count);  // i * n
        ShiftRight(g, row, static_cast<int32_t>(3), count);  // group
        V();
        Sub(q, q, base, count);  // c
        ShiftLeft(compact, g, static_cast<int32_t>(bits_), count);
        V();
        Muls(base, base, static_cast<int32_t>(sizeof(TLane)), count);
        Add(compact, compact, q, count);  // block
        ShiftLeft(g, g, static_cast<int32_t>(3), count);
        V();
        Sub(row, row, g, count);  // i % 8
        ShiftLeft(compact, compact, static_cast<int32_t>(3), count);
        V();
        Add(compact, compact, row, count);
        V();
        Muls(compact, compact, static_cast<int32_t>(sizeof(int32_t)), count);
        V();
    }

    // The lower blocks of pattern j (runs of j blocks every 2j, j a power
    // of two, over lanes_ / 8 blocks) as `calls` calls, the o-th from lane
    // o * step: `repeats` repeats of `blocks` blocks, block stride blk,
    // repeat stride rep (in blocks). Block-strided repeats of 8 blocks; the
    // calls are j (j < 8), or one per 8 runs (a repeat takes block r of 8
    // runs at block stride 2j, which must fit its 8 bits), or the fewer of
    // the runs and the repeats per run.
    struct Strides {
        uint32_t calls, step, blocks;
        uint8_t repeats, blk, rep;
    };
    __aicore__ inline Strides PatternOf(uint32_t j) const {
        const uint32_t blocks = lanes_ / kBlock;
        if (j < 8) {
            const uint32_t perCall = blocks / (2 * j);
            return Strides{j, kBlock, perCall >= 8 ? 8 : perCall, static_cast<uint8_t>(perCall >= 8 ? perCall / 8 : 1),
                           static_cast<uint8_t>(2 * j), static_cast<uint8_t>(16 * j)};
        }
        const uint32_t runs = blocks / (2 * j), perRun = j / 8;
        const uint32_t fewest = runs < perRun ? runs : perRun;
        if (runs % 8 == 0 && runs / 8 < fewest && 2 * j <= 255) {
            return Strides{runs / 8, 16 * j * kBlock, 8, static_cast<uint8_t>(j), static_cast<uint8_t>(2 * j), 1};
        }
        if (runs <= perRun) return Strides{runs, 2 * j * kBlock, 8, static_cast<uint8_t>(perRun), 1, 8};
        return Strides{perRun, 8 * kBlock, 8, static_cast<uint8_t>(runs), 1, static_cast<uint8_t>(2 * j)};
    }

    // op over the lower blocks of pattern j: dst, src0, src1 start at the
    // first lower block (src1 may be the partner run j blocks on).
    template <bool kMin>
    __aicore__ inline void Pairs(const LocalTensor<int32_t>& dst, const LocalTensor<int32_t>& src0,
                                 const LocalTensor<int32_t>& src1, uint32_t j) {
        const Strides s = PatternOf(j);
        const BinaryRepeatParams p(s.blk, s.blk, s.blk, s.rep, s.rep, s.rep);
        for (uint32_t o = 0; o < s.calls; ++o) {
            const uint32_t at = o * s.step;
            Op<kMin>(dst[at], src0[at], src1[at], s.blocks * kBlock, s.repeats, p);
        }
    }

    // Complements (in place) the blocks of pattern j from block `first` on.
    __aicore__ inline void Flip(const LocalTensor<int32_t>& values, uint32_t j, uint32_t first) {
        const Strides s = PatternOf(j);
        const UnaryRepeatParams p(s.blk, s.blk, s.rep, s.rep);
        for (uint32_t o = 0; o < s.calls; ++o) {
            LocalTensor<TLane> v = values[first * kBlock + o * s.step].template ReinterpretCast<TLane>();
            Not(v, v, s.blocks * 2 * kBlock, s.repeats, p);
        }
    }

    // Before merge 2^kb: the runs of 2^(kb-1) at positions 1 and 2 mod 4
    // (held as ~x after the last merge when odd, to be ~x after this one
    // when their run of 2^kb is odd) flip. Merge 2 starts from x everywhere,
    // so there it flips the odd runs of 2 (columns 2 and 3 mod 4), and the
    // last merge flips the upper half of every row, unless that is column 1
    // (Lp = 2: a column of one key is in both senses).
    __aicore__ inline void FlipFor(const LocalTensor<int32_t>& values, uint32_t kb) {
        if (kb == bits_) {
            if (kb > 1) Flip(values, rowLanes_ / 2, rowLanes_ / 2);
        } else if (kb == 1) {
            Flip(values, 2, 2);
        } else {
            Flip(values, 1u << kb, 1u << (kb - 1));
        }
    }

    template <bool kMin>
    __aicore__ inline void Op(const LocalTensor<int32_t>& dst, const LocalTensor<int32_t>& src0,
                              const LocalTensor<int32_t>& src1, uint64_t mask, uint8_t repeats,
                              const BinaryRepeatParams& p) {
        if constexpr (kMin) {
            Min(dst, src0, src1, mask, repeats, p);
        } else {
            Max(dst, src0, src1, mask, repeats, p);
        }
    }

    // Sorts tile k (its keys queued) and writes its indices and keys.
    __aicore__ inline void Sort(uint64_t k) {
        const uint32_t rows = RowsOf(k), count = rows * n_;
        const int32_t lanes = static_cast<int32_t>(lanes_);
        LocalTensor<TLane> keys = qKeys_.DeQue<TLane>();
        LocalTensor<TLane> halves = ub_.At<TLane>(kG, 2 * kLanes);
        LocalTensor<TLane> code = ub_.At<TLane>(kB, kLanes), tmp = ub_.At<TLane>(kB + kLanes * sizeof(TLane), kLanes);
        LocalTensor<TLane> tmp2 = ub_.At<TLane>(kMn, kLanes);
        PipeBarrier<PIPE_V>();  // the previous tile's vector reads of B, G and Mn
        if (count < contig_) {
            // Dummy rows (whole rows, never mixed with real ones): defined values.
            Duplicate(halves, static_cast<TLane>(-1), static_cast<int32_t>(2 * kLanes));
            PipeBarrier<PIPE_V>();
        }
        LocalTensor<TLane> c = SortCodeOf<TKey>(keys, code, tmp, tmp2, static_cast<int32_t>(count), t_.descending != 0);
        // The upper 15 bits of the code (high half), its lowest bit at bit
        // 15 (low half).
        if constexpr (SortCode<TKey>::kCode == 0) {
            ShiftRight(halves[kLanes].ReinterpretCast<uint16_t>(), c.ReinterpretCast<uint16_t>(),
                       static_cast<uint16_t>(1), static_cast<int32_t>(count));
        } else {
            ShiftRight(halves[kLanes], c, static_cast<TLane>(1), static_cast<int32_t>(count));
        }
        ShiftLeft(halves, c, static_cast<TLane>(15), static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> cur = ub_.At<int32_t>(kA, kLanes), nxt = ub_.At<int32_t>(kB, kLanes);
        Gather(cur.ReinterpretCast<TLane>(), ub_.At<TLane>(kG, 2 * kLanes + 16),
               ub_.At<uint32_t>(kBuild, 2 * kLanes), 0, 2 * lanes_);
        PipeBarrier<PIPE_V>();
        Add(cur, cur, ub_.At<int32_t>(kCol, kLanes), lanes);
        PipeBarrier<PIPE_V>();
        for (uint32_t kb = 1; kb <= bits_; ++kb) {
            FlipFor(cur, kb);
            PipeBarrier<PIPE_V>();
            for (uint32_t jb = kb; jb-- > 0;) {
                const uint32_t j = 1u << jb, on = j * kBlock;
                Pairs<true>(nxt, cur, cur[on], j);
                Pairs<false>(nxt[on], cur, cur[on], j);
                PipeBarrier<PIPE_V>();
                SwapTensors(cur, nxt);
            }
        }
        // The keys in row order (the compact table reads the block layout).
        Gather(nxt, cur, ub_.At<uint32_t>(kCompact, kLanes), 0, count);
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> idx = ub_.At<int32_t>(kIdxOut, kLanes);
        LocalTensor<TLane> keysOut = ub_.At<TLane>(kKeysOut, kLanes);
        PipeSync<HardEvent::MTE3_V>();  // the previous tile's outputs are written
        ShiftLeft(idx, nxt, static_cast<int32_t>(17), static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        ShiftRight(idx.ReinterpretCast<uint32_t>(), idx.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(17),
                   static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        if (t_.store_keys) {
            LocalTensor<int32_t> at = ub_.At<int32_t>(kMn, kLanes);
            Muls(at, idx, static_cast<int32_t>(sizeof(TLane)), static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Add(at, at, ub_.At<int32_t>(kRowBase, kLanes), static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Gather(keysOut, keys, at.ReinterpretCast<uint32_t>(), 0, count);
        }
        PipeSync<HardEvent::V_MTE3>();
        const uint64_t at = k * rowsPerTile_ * n_;
        StoreAny(gIdxOut_[at], idx, count);
        if (t_.store_keys) StoreAny(gKeysOut_[at], keysOut.ReinterpretCast<TKey>(), count);
        qKeys_.FreeTensor(keys);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> qKeys_;  // the next tile loads while this one sorts
    UbArena ub_;
    GlobalTensor<TKey> gKeysIn_, gKeysOut_;
    GlobalTensor<int32_t> gIdxOut_;
    RadixTiling t_;
    uint32_t n_ = 0, bits_ = 0, rowLanes_ = 1, rowsPerTile_ = 8, lanes_ = 64, contig_ = 0;
};

}  // namespace radix

template <typename TKey, uint32_t kTile, typename TVal>
__aicore__ inline void RadixSortPass(GM_ADDR keys_in, GM_ADDR idx_in, GM_ADDR keys_out, GM_ADDR idx_out,
                                     GM_ADDR workspace, const RadixTiling& t) {
    if constexpr (sizeof(TKey) == 2 && sizeof(TVal) == 4) {
        if (t.network) {
            radix::RowNetwork<TKey> network;
            network.Run(keys_in, keys_out, idx_out, t);
            return;
        }
    }
    radix::Pass<TKey, kTile, TVal> pass;
    pass.Run(keys_in, idx_in, keys_out, idx_out, workspace, t);
}

}  // namespace ascend_scan
