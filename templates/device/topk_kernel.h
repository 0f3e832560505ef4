// Top-k by a bounded radix select (docs/algorithms.md, "Top-k"): the k
// largest (or smallest) keys of every row and their indices, in one launch
// that reads each row once, then only the chunks that can hold the k.
//
// Order values: every key maps to an fp32 whose order is the key order of
// the sort (NaN above +inf, -0.0 equal to +0.0): 16-bit floats are cast,
// +inf becomes FLT_MAX and NaN +inf; integers are cast exactly; f32 keys
// are their own order values with NaN as +inf (fp32 has nothing above
// +inf), so NaN and +inf tie there and the write tells them apart by their
// bits (the top group, Finish); the k smallest negate them. Codes are the
// integers [Lo, Hi] with a monotone map Value() to order values, so a radix
// select narrows over codes and compares order values.
// 1. Bound: one read of the row takes the maximum of every chunk of
//    kChunk keys (WholeReduceMax; the k smallest: the minimum): on the f16
//    keys themselves with NaN first replaced by +inf (so the maximum is
//    exact whatever the hardware's max does with NaN, and NaN ties +inf for
//    this step only), on 8-bit keys widened to f16, else on the order
//    values. At least k keys lie at or above the k-th largest chunk maximum
//    T (each of k chunks holds one), so every key of the k is >= T, and only
//    chunks whose maximum is >= T can hold one. T comes from a radix select
//    over the chunk maxima.
// 2. Compaction: those chunks alone are read again (a DMA per chunk, a
//    batch of them per tile) and their keys with order value >= T copied to
//    the workspace (order value, index, bits), in index order.
// 3. Selection over the candidates: the code interval [lo, hi) narrows
//    round by round (CompareScalar, counting GatherMask) to the k-th key's
//    code v; `above` keys lie beyond it, and the first k - above of its ties
//    (in index order) complete the k.
// 4. Write: the keys beyond v in index order, then those ties.
// Every core owns the same number of whole rows; the rows left over (all of
// them when the batch has fewer rows than vector cores) are cut into
// pieces, one per core: the pieces' chunk maxima go to GM, SyncAll, every
// piece selects T over its row's maxima, compacts, writes its candidate
// count to a slot, SyncAll, and the row's first piece selects and writes.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ub_io.h"

namespace ascend_scan {
namespace topk {

constexpr uint32_t kTile = 4096;             // keys per tile (a multiple of 128)
constexpr uint32_t kWays = 16;               // thresholds of a streamed narrowing round
constexpr uint32_t kMaxPieces = 64;          // pieces per row
constexpr uint32_t kSlotInts = 8;            // a piece's count slot (32 bytes)
constexpr uint32_t kGroupAlign = 32;         // elements: 32-byte aligned groups for every width
constexpr uint32_t kResAlign = 16;           // elements: 32-byte aligned segments for 16- and 32-bit data
constexpr uint32_t kOutCap = kTile + 64;     // two gathered groups, the second aligned
// Candidates per piece in the pieces' one-DMA hand-off (Selector::Finish):
// a piece writes NaN after its candidates up to this many, so the row's
// first piece loads every piece's slot with one strided DMA per array.
constexpr uint32_t kPieceSlot = 64;
static_assert(kPieceSlot * kMaxPieces <= kTile, "every piece's slot fits the resident candidates");
constexpr float kMaxFloat = 3.40282347e38f;  // FLT_MAX

// Key traits: the code range [kLo, kHi] of the k largest, the order value
// of a code, the bit patterns of the lowest and the highest key (the pads
// of a partial tile), and whether the chunk maxima are taken on f16 (chunks
// of 128 keys) or on the order values (chunks of 64).
template <typename TKey>
struct Keys;
template <typename TKey, int32_t kInf, uint16_t kMin, uint16_t kMax, bool kHalf>
struct FloatKeys {
    // -inf, the finite values by their magnitude bits, FLT_MAX (+inf), +inf (NaN).
    static constexpr int32_t kLo = -kInf, kHi = kInf + 1;
    static constexpr uint32_t kMinBits = kMin, kMaxBits = kMax;
    static constexpr bool kFloat = true, kHalfMax = kHalf;
    __aicore__ static inline float Value(int32_t c) {
        if (c > kInf) return AsFloat(0x7F800000u);
        if (c == kInf) return kMaxFloat;
        if (c <= -kInf) return AsFloat(0xFF800000u);
        if (c < 0) return -Float16Value<TKey>(static_cast<uint32_t>(-c));
        return Float16Value<TKey>(static_cast<uint32_t>(c));
    }
};
template <>
struct Keys<half> : FloatKeys<half, 0x7C00, 0xFC00, 0x7E00, true> {};
template <>
struct Keys<bfloat16_t> : FloatKeys<bfloat16_t, 0x7F80, 0xFF80, 0x7FC0, false> {};
// f32: -inf, the finite values by their magnitude bits, +inf (+inf and NaN).
template <>
struct Keys<float> {
    static constexpr int32_t kInf = 0x7F800000;
    static constexpr int32_t kLo = -kInf, kHi = kInf;
    static constexpr uint32_t kMinBits = 0xFF800000u, kMaxBits = 0x7FC00000u;
    static constexpr bool kFloat = true, kHalfMax = false;
    __aicore__ static inline float Value(int32_t c) {
        if (c > kInf) c = kInf;  // the code past the last (never a threshold)
        if (c < -kInf) c = -kInf;
        return c < 0 ? -AsFloat(static_cast<uint32_t>(-c)) : AsFloat(static_cast<uint32_t>(c));
    }
};
template <int32_t kL, int32_t kH, uint16_t kMin, uint16_t kMax>
struct IntKeys {
    static constexpr int32_t kLo = kL, kHi = kH;
    static constexpr uint32_t kMinBits = kMin, kMaxBits = kMax;
    static constexpr bool kFloat = false, kHalfMax = kH <= 255;  // 8-bit keys are exact in f16
    __aicore__ static inline float Value(int32_t c) { return static_cast<float>(c); }
};
template <>
struct Keys<int16_t> : IntKeys<-32768, 32767, 0x8000, 0x7FFF> {};
template <>
struct Keys<uint16_t> : IntKeys<0, 65535, 0x0000, 0xFFFF> {};
template <>
struct Keys<int8_t> : IntKeys<-128, 127, 0x80, 0x7F> {};
template <>
struct Keys<uint8_t> : IntKeys<0, 255, 0x00, 0xFF> {};

// The k-th key of a candidate set: its code and the count of keys beyond it.
struct Pick {
    int32_t v;
    uint64_t above;
};

template <typename TKey>
class Selector {
public:
    static constexpr bool kNarrow = sizeof(TKey) == 1;  // 8-bit keys move widened to int16
    static constexpr bool kWide = sizeof(TKey) == 4;    // f32 keys
    using TBits = typename std::conditional<kNarrow, int8_t,
                                            typename std::conditional<kWide, int32_t, int16_t>::type>::type;
    // The bits the candidates and the write carry (8-bit keys widened), and
    // the GatherMask pattern word of their width.
    using TCand = typename std::conditional<kWide, int32_t, int16_t>::type;
    using TPattern = typename std::conditional<kWide, uint32_t, uint16_t>::type;
    static constexpr bool kHalfMax = Keys<TKey>::kHalfMax;
    static constexpr uint32_t kChunk = kHalfMax ? 128 : 64;  // keys per chunk maximum (one repeat)
    static constexpr uint32_t kChunksPerTile = kTile / kChunk;
    // Keys per tile of the first read: twice kTile on f16 (16 KB either way).
    static constexpr uint32_t kScanTile = kHalfMax ? 2 * kTile : kTile;
    static constexpr uint32_t kChunksPerScan = kScanTile / kChunk;
    // The bound's search over the chunk maxima stops once the k-th largest
    // maximum is known to within this many codes and takes the low end (a
    // lower bound all the same, so the selection stays exact): 2^12 f32
    // codes are 2^-11 relative, which lets in at most a few more chunks but
    // saves about 12 of f32's 24 binary rounds (f32 [96, 128256] 188.20 ->
    // 174.69 us modeled). 16-bit keys search exactly (about 10 rounds): a
    // slack of 8 f16 codes let in more chunks than its 3 rounds saved
    // (117.55 -> 120.88 us).
    static constexpr int64_t kBoundSlack = kWide ? (int64_t(1) << 12) : 1;

    __aicore__ inline void Run(GM_ADDR keys, GM_ADDR values, GM_ADDR indices, GM_ADDR workspace,
                               const TopKTiling& t) {
        t_ = t;
        core_ = static_cast<uint32_t>(GetBlockIdx());
        chunks_ = (t.n + kChunk - 1) / kChunk;
        gBits_.SetGlobalBuffer(reinterpret_cast<__gm__ TBits*>(keys), t.rows * t.n);
        gVal_.SetGlobalBuffer(reinterpret_cast<__gm__ TBits*>(values), t.rows * t.k);
        gIdx_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), t.rows * t.k);
        // Workspace parts (each a multiple of 512 bytes; crates/algos/src/topk.rs).
        __gm__ uint8_t* w = reinterpret_cast<__gm__ uint8_t*>(workspace);
        const uint64_t slots = Up512(t.rows * t.pieces * kSlotInts * 4), maxima = Up512(t.rows * ((t.n + 63) / 64) * 4);
        const uint64_t candV = Up512(t.rows * t.n * 4), candI = candV;
        gSlots_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(w), t.rows * t.pieces * kSlotInts);
        gMax_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w + slots), t.rows * chunks_);
        gCandV_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w + slots + maxima), t.rows * t.n);
        gCandI_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(w + slots + maxima + candV), t.rows * t.n);
        gCandR_.SetGlobalBuffer(reinterpret_cast<__gm__ TCand*>(w + slots + maxima + candV + candI), t.rows * t.n);
        Init();
        const uint64_t r0 = core_ * t.rows_per_core;
        const uint64_t r1 = r0 + t.rows_per_core < t.shared_from ? r0 + t.rows_per_core : t.shared_from;
        for (uint64_t r = r0; r < r1; ++r) WholeRow(r, r > r0, r + 1 < r1);
        if (t.pieces > 1) {
            const uint64_t r = t.shared_from + core_ / t.pieces;
            if (r < t.rows) {
                SharedRow(r, core_ % t.pieces);
            } else {
                // No piece left for this core: it still joins both rounds.
                SyncAll();
                SyncAll();
            }
        }
    }

private:
    __aicore__ static inline uint64_t Up512(uint64_t b) { return (b + 511) / 512 * 512; }
    __aicore__ static inline uint32_t Padded(uint32_t count) { return (count + 63) / 64 * 64; }
    // Lanes a segment of `count` takes in a resident load (LoadResident).
    __aicore__ static inline uint64_t ResidentLanes(uint64_t count) {
        return (count + kResAlign - 1) / kResAlign * kResAlign;
    }

    // UB arena (bytes): compare masks, then the count slots of a row's pieces.
    static constexpr uint32_t kMaskBytes = kTile / 8;
    static constexpr uint32_t kSlotsAt = (kWays + 2) * kMaskBytes;  // the NaN test's mask takes two slots
    static constexpr uint32_t kOwnAt = kSlotsAt + kMaxPieces * kSlotInts * 4;
    static constexpr uint32_t kNanAt = kOwnAt + kSlotInts * 4;  // kPieceSlot NaN order values
    static constexpr uint32_t kArenaBytes = kNanAt + kPieceSlot * 4;
    // Mask slots: 0 and 1 the compaction's and the write's compares, 1..15
    // the narrowing's thresholds, 16 (and 17) the NaN test; kChunkMask the chunks to
    // read again (kept while the compaction's tiles use 0 and 16).
    static constexpr uint32_t kChunkMask = 2;
    // The chunks whose maximum exceeds the bound (Compact's tie rule).
    static constexpr uint32_t kChunkAboveMask = 3;

    __aicore__ inline void Init() {
        // Keys, or the candidates' bits (16 KB either way).
        pipe_.InitBuffer(qRaw_, 2, kScanTile * (kWide ? sizeof(int32_t) : sizeof(int16_t)));
        pipe_.InitBuffer(qCandV_, 1, kTile * sizeof(float));
        pipe_.InitBuffer(qCandI_, 1, kTile * sizeof(int32_t));
        pipe_.InitBuffer(qOutV_, 1, kOutCap * sizeof(float));
        pipe_.InitBuffer(qOutI_, 1, kOutCap * sizeof(int32_t));
        // The bits as TCand, then (8-bit keys) the narrowed bits.
        pipe_.InitBuffer(qOutR_, 1, kOutCap * (kWide ? sizeof(int32_t) : sizeof(int16_t) + 1));
        pipe_.InitBuffer(bufV_, kTile * sizeof(float));
        pipe_.InitBuffer(bufTmp_, kTile * sizeof(float));
        pipe_.InitBuffer(bufRes_, kTile * sizeof(float));
        pipe_.InitBuffer(bufIota_, kTile * sizeof(int32_t));
        ub_.Init(pipe_, kArenaBytes);
        Duplicate(ub_.At<float>(kNanAt, kPieceSlot), AsFloat(0x7FC00000u), static_cast<int32_t>(kPieceSlot));
    }

    __aicore__ inline LocalTensor<uint8_t> Mask(uint32_t j) { return ub_.At<uint8_t>(j * kMaskBytes, kMaskBytes); }
    // The NaN test's mask: room for a first-read tile.
    __aicore__ inline LocalTensor<uint8_t> NanMask() { return ub_.At<uint8_t>(kWays * kMaskBytes, 2 * kMaskBytes); }

    // The code range and order values of this launch's selection (the k
    // smallest negate the order: code c stands for the key code -c).
    __aicore__ inline int32_t Lo() { return t_.largest ? Keys<TKey>::kLo : -Keys<TKey>::kHi; }
    __aicore__ inline int32_t Hi() { return t_.largest ? Keys<TKey>::kHi : -Keys<TKey>::kLo; }
    __aicore__ inline float Value(int32_t c) { return t_.largest ? Keys<TKey>::Value(c) : -Keys<TKey>::Value(-c); }

    // ---- rows ----

    // Row r on this core alone; its first tile of keys already loaded
    // (`preloaded`), and the next row's loaded while this one's selection
    // runs (`more`): the selection barely uses MTE2.
    __aicore__ inline void WholeRow(uint64_t r, bool preloaded, bool more) {
        const uint64_t begin = r * t_.n;
        const bool stay = chunks_ <= kTile;  // the chunk maxima stay in UB
        Bound(begin, t_.n, r * chunks_, stay, preloaded);
        if (!stay) PipeSync<HardEvent::MTE3_MTE2>();  // the maxima's read-back
        const Pick bound = BoundPick(r, stay);
        InUb ub;
        const uint64_t count =
            Compact(begin, begin, t_.n, r * chunks_, stay, Value(bound.v), TieChunks(bound), stay ? &ub : nullptr);
        if (!ub.on) PipeSync<HardEvent::MTE3_MTE2>();  // the candidates' read-back
        // Queued only after Finish: its own tiles of qRaw_ dequeue in order.
        LocalTensor<TBits> next;
        if (more) next = StartKeys(begin + t_.n, ScanKeys(t_.n));
        Finish(r, bound.v, &count, 1, &ub);
        if (more) qRaw_.EnQue(next);
    }
    // Keys in the first-read tile that starts with `left` keys to go.
    __aicore__ static inline uint32_t ScanKeys(uint64_t left) {
        return static_cast<uint32_t>(left < kScanTile ? left : kScanTile);
    }

    __aicore__ inline void SharedRow(uint64_t r, uint64_t q) {
        const uint64_t a = q * t_.piece_len;
        const uint64_t len = a + t_.piece_len < t_.n ? t_.piece_len : t_.n - a;
        const uint64_t begin = r * t_.n + a;
        const uint64_t at = r * chunks_ + a / kChunk;  // piece_len is a multiple of 128
        Bound(begin, len, at, false, false);
        SyncAll();
        const Pick bound = BoundPick(r, false);
        const uint64_t count = Compact(begin, r * t_.n, len, at, false, Value(bound.v), kAllChunks);
        if (count < kPieceSlot && len >= kPieceSlot) {
            // NaN (no compare passes it) after the candidates up to a slot.
            PipeSync<HardEvent::V_MTE3>();
            StoreAny(gCandV_[begin + count], ub_.At<float>(kNanAt, kPieceSlot), static_cast<uint32_t>(kPieceSlot - count));
        }
        LocalTensor<int32_t> own = ub_.At<int32_t>(kOwnAt, kSlotInts);
        own.SetValue(0, static_cast<int32_t>(count));
        for (uint32_t i = 1; i < kSlotInts; ++i) own.SetValue(i, 0);
        StoreSlot(gSlots_[(r * t_.pieces + q) * kSlotInts], own, kSlotInts);
        SyncAll();
        if (q != 0) return;
        LocalTensor<int32_t> slots = ub_.At<int32_t>(kSlotsAt, kMaxPieces * kSlotInts);
        PipeSync<HardEvent::S_MTE2>();
        DataCopy(slots, gSlots_[r * t_.pieces * kSlotInts], static_cast<uint32_t>(t_.pieces * kSlotInts));
        PipeSync<HardEvent::MTE2_S>();
        uint64_t counts[kMaxPieces];
        for (uint64_t p = 0; p < t_.pieces; ++p) counts[p] = static_cast<uint64_t>(slots.GetValue(p * kSlotInts));
        ScalarReadsDone();
        Finish(r, bound.v, counts, static_cast<uint32_t>(t_.pieces));
    }

    // The bound of row r: the k-th largest chunk maximum (its code), from
    // bufRes_ (`inUb`) or GM; Lo() when the row has fewer than k chunks.
    // Sets topHi_, the code above the row's largest key, which bounds the
    // selection among the candidates too.
    __aicore__ inline Pick BoundPick(uint64_t r, bool inUb) {
        topHi_ = Hi() + 1;
        if (chunks_ < t_.k) return Pick{Lo(), 0};
        const uint64_t at[1] = {r * chunks_};
        const uint64_t len[1] = {chunks_};
        if (!inUb && ResidentLanes(chunks_) > kTile) {
            return NarrowSegs(gMax_, at, len, 1, Lo(), topHi_, kBoundSlack);
        }
        if (!inUb) LoadResident(gMax_, at, len, 1, nullptr, nullptr);
        return NarrowBracketed(static_cast<uint32_t>(chunks_));
    }

    // How many of a whole row's chunks whose maximum equals the bound T
    // Compact must read (the first ones in index order). With T exactly the
    // k-th largest chunk maximum, A = bound.above < k chunks lie above it.
    // The k-th key v is at least T: if v > T no chunk at T holds one of the
    // k; if v = T the k are the keys above T and the first k - (keys above
    // T) <= k - A ties, and every chunk at T holds a tie, so the first
    // k - A chunks at T hold those ties or ties before them. On rows of
    // many equal maxima (f16 near its top) this halves the reads. Only where
    // a chunk's maximum is the order value of its best key: T exact (16- and
    // 8-bit keys), at least k chunks, and T finite below FLT_MAX (f16 chunks
    // holding NaN or +inf share FLT_MAX; +inf chunks of the k smallest sit
    // at -inf).
    static constexpr uint64_t kAllChunks = ~0ull;
    __aicore__ inline uint64_t TieChunks(const Pick& bound) {
        const float v = Value(bound.v);
        if (kBoundSlack != 1 || chunks_ < t_.k || !(v < kMaxFloat && v > -kMaxFloat)) return kAllChunks;
        return t_.k - bound.above;
    }

    // The k-th largest code among the first `lanes` order values of bufRes_
    // (all of them defined), narrowed from [the code of their minimum, the
    // code above their maximum) instead of the whole code range: one min and
    // one max reduction save the binary rounds outside it (about half of
    // them on rows of similar chunk maxima). Sets topHi_.
    __aicore__ inline Pick NarrowBracketed(uint32_t lanes) {
        LocalTensor<float> res = bufRes_.Get<float>(), tmp = bufTmp_.Get<float>();
        ReduceMax(tmp, res, tmp[64], static_cast<int32_t>(lanes));
        ReduceMin(tmp[8], res, tmp[64], static_cast<int32_t>(lanes));
        PipeSync<HardEvent::V_S>();
        const float top = tmp.GetValue(0), bottom = tmp.GetValue(8);
        ScalarReadsDone();
        // The chunk maxima of float keys on f16 see NaN as +inf (FLT_MAX as
        // an order value), below a NaN key's order value: no bound there.
        // For the k smallest a chunk of +inf keys is bounded at -inf, below
        // them (HalfMaximaToOrder): no bound there either.
        if (top < kMaxFloat && top > AsFloat(0xFF800000u)) topHi_ = CodeAbove(top);
        // The highest code at or below the minimum (codes are consecutive).
        const int32_t lo = CodeAbove(bottom) - 1;
        return Narrow(lanes, lo > Lo() ? lo : Lo(), topHi_, kBoundSlack);
    }

    // The lowest code whose order value exceeds v (Hi() + 1 if none);
    // Value() strictly increases with the code.
    __aicore__ inline int32_t CodeAbove(float v) {
        int32_t a = Lo(), b = Hi() + 1;
        while (a < b) {
            // f32's codes span more than int32 differences hold.
            const int32_t m = static_cast<int32_t>(a + (static_cast<int64_t>(b) - a) / 2);
            if (Value(m) > v) {
                b = m;
            } else {
                a = m + 1;
            }
        }
        return a;
    }

    // ---- the keys ----

    // Fills the first `count` keys of `dst` (an even byte count) with the key
    // of the lowest order value (the pad of partial chunks), before a load
    // into it.
    __aicore__ inline void PadKeys(const LocalTensor<TBits>& dst, uint32_t count) {
        if constexpr (kWide) {
            Duplicate(dst.template ReinterpretCast<int32_t>(), static_cast<int32_t>(Pad()),
                      static_cast<int32_t>(count));
        } else {
            const int16_t word = static_cast<int16_t>(kNarrow ? (Pad() << 8) | Pad() : Pad());
            Duplicate(dst.template ReinterpretCast<int16_t>(), word,
                      static_cast<int32_t>(count * sizeof(TBits) / sizeof(int16_t)));
        }
        PipeSync<HardEvent::V_MTE2>();
    }
    __aicore__ inline uint32_t Pad() { return t_.largest ? Keys<TKey>::kMinBits : Keys<TKey>::kMaxBits; }
    // Loads `count` keys at `off` into a new tile of qRaw_, padded to whole
    // chunks; the caller queues it.
    __aicore__ inline LocalTensor<TBits> StartKeys(uint64_t off, uint32_t count) {
        LocalTensor<TBits> raw = qRaw_.AllocTensor<TBits>();
        if (count % kChunk != 0) PadKeys(raw, kScanTile);
        LoadPadded(raw, gBits_[off], count, static_cast<TBits>(Pad()));
        return raw;
    }
    __aicore__ inline void LoadKeys(uint64_t off, uint32_t count) { qRaw_.EnQue(StartKeys(off, count)); }

    // The dequeued tile's order values into bufV_ and its bits as TCand
    // (the tile itself, or 8-bit keys widened into bufTmp_), over `padded`
    // lanes. The caller frees `raw` once done with the bits.
    __aicore__ inline LocalTensor<float> Order(LocalTensor<TBits>& raw, LocalTensor<TCand>& bits, uint32_t padded) {
        raw = qRaw_.DeQue<TBits>();
        LocalTensor<float> v = bufV_.Get<float>();
        if constexpr (kNarrow) {
            LocalTensor<half> h = bufTmp_.Get<half>();
            bits = h[kTile].template ReinterpretCast<int16_t>();
            Cast(h, raw.template ReinterpretCast<TKey>(), RoundMode::CAST_NONE, padded);  // exact
            PipeBarrier<PIPE_V>();
            Cast(v, h, RoundMode::CAST_NONE, padded);
            Cast(bits, h, RoundMode::CAST_RINT, padded);  // exact
        } else if constexpr (kWide) {
            bits = raw.template ReinterpretCast<int32_t>();
            LocalTensor<float> x = raw.template ReinterpretCast<float>();
            LocalTensor<uint8_t> same = NanMask();
            Compare(same, x, x, CMPMODE::EQ, padded);  // false only for NaN
            PipeBarrier<PIPE_V>();
            Select(v, same, x, AsFloat(0x7F800000u), SELMODE::VSEL_TENSOR_SCALAR_MODE, padded);  // NaN -> +inf
        } else if constexpr (Keys<TKey>::kFloat) {
            bits = raw.template ReinterpretCast<int16_t>();
            Cast(v, raw.template ReinterpretCast<TKey>(), RoundMode::CAST_NONE, padded);  // exact
            PipeBarrier<PIPE_V>();
            LocalTensor<uint8_t> same = NanMask();
            Compare(same, v, v, CMPMODE::EQ, padded);  // false only for NaN
            PipeBarrier<PIPE_V>();
            Mins(v, v, kMaxFloat, static_cast<int32_t>(padded));  // +inf -> FLT_MAX
            PipeBarrier<PIPE_V>();
            Select(v, same, v, AsFloat(0x7F800000u), SELMODE::VSEL_TENSOR_SCALAR_MODE, padded);  // NaN -> +inf
        } else {
            bits = raw.template ReinterpretCast<int16_t>();
            Cast(v, bits, RoundMode::CAST_NONE, padded);  // exact
            if constexpr (Keys<TKey>::kLo == 0) {
                // uint16: the bit patterns read as int16 are 65536 too low from 0x8000 up.
                PipeBarrier<PIPE_V>();
                LocalTensor<uint8_t> low = NanMask();
                LocalTensor<float> up = bufTmp_.Get<float>();
                CompareScalar(low, v, 0.0f, CMPMODE::LT, padded);
                Adds(up, v, 65536.0f, static_cast<int32_t>(padded));
                PipeBarrier<PIPE_V>();
                Select(v, low, up, v, SELMODE::VSEL_TENSOR_TENSOR_MODE, padded);
            }
        }
        PipeBarrier<PIPE_V>();
        if (!t_.largest) {
            Muls(v, v, -1.0f, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
        }
        return v;
    }

    // The chunk maxima of the dequeued tile (`padded` lanes, whole chunks)
    // into `dst`: on f16 (the keys with NaN -> +inf, or 8-bit keys widened;
    // the k smallest take minima) into a half tensor, or on the order values.
    __aicore__ inline void TileMaxima(uint32_t padded, const LocalTensor<half>& halfDst, const LocalTensor<float>& dst) {
        const int32_t repeats = static_cast<int32_t>(padded / kChunk);
        if constexpr (kHalfMax) {
            LocalTensor<TBits> raw = qRaw_.DeQue<TBits>();
            LocalTensor<half> h = bufV_.Get<half>();
            if constexpr (kNarrow) {
                Cast(h, raw.template ReinterpretCast<TKey>(), RoundMode::CAST_NONE, padded);  // exact
            } else {
                LocalTensor<half> x = raw.template ReinterpretCast<half>();
                LocalTensor<uint8_t> same = NanMask();
                Compare(same, x, x, CMPMODE::EQ, padded);  // false only for NaN
                PipeBarrier<PIPE_V>();
                Select(h, same, x, static_cast<half>(AsFloat(0x7F800000u)), SELMODE::VSEL_TENSOR_SCALAR_MODE, padded);
            }
            PipeBarrier<PIPE_V>();
            if (t_.largest) {
                WholeReduceMax(halfDst, h, static_cast<int32_t>(kChunk), repeats, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
            } else {
                WholeReduceMin(halfDst, h, static_cast<int32_t>(kChunk), repeats, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
            }
            PipeBarrier<PIPE_V>();
            qRaw_.FreeTensor(raw);
        } else {
            LocalTensor<TBits> raw;
            LocalTensor<TCand> bits;
            LocalTensor<float> v = Order(raw, bits, padded);
            WholeReduceMax(dst, v, static_cast<int32_t>(kChunk), repeats, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
            PipeBarrier<PIPE_V>();
            qRaw_.FreeTensor(raw);
        }
    }

    // f16 chunk maxima (`count`) into order values in `dst`, the k smallest
    // negated. A chunk bound may sit below its best key, never above it.
    // Largest: +inf (NaN or +inf keys) -> FLT_MAX, +inf's order value, below
    // NaN's. Smallest: the chunk minimum +inf stays +inf, so -inf once
    // negated: exact for a chunk of NaNs only (NaN's order value +inf), below
    // -FLT_MAX for one with +inf keys.
    __aicore__ inline void HalfMaximaToOrder(const LocalTensor<float>& dst, const LocalTensor<half>& src, uint32_t count) {
        const uint32_t padded = Padded(count);
        Cast(dst, src, RoundMode::CAST_NONE, padded);  // exact
        PipeBarrier<PIPE_V>();
        if (Keys<TKey>::kFloat && t_.largest) {
            Mins(dst, dst, kMaxFloat, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
        }
        if (!t_.largest) {
            Muls(dst, dst, -1.0f, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
        }
    }

    // Read 1: the chunk maxima (order values) of `len` keys at `begin` into
    // GM at gMax_[at], or kept in bufRes_ (`stay`, at most kTile chunks).
    // Lanes of bufRes_ past the maxima are -inf. The first tile may be
    // queued already (`preloaded`).
    __aicore__ inline void Bound(uint64_t begin, uint64_t len, uint64_t at, bool stay, bool preloaded) {
        LocalTensor<float> res = bufRes_.Get<float>();
        // f16 maxima of up to kTile chunks: the second half of bufIota_.
        LocalTensor<half> halves = bufIota_.Get<half>()[kTile];
        constexpr uint32_t kTilesPerWindow = kTile / kChunksPerScan;  // tiles whose maxima fill bufRes_
        Duplicate(res, AsFloat(0xFF800000u), static_cast<int32_t>(kTile));
        if constexpr (kHalfMax) {
            // Past the last maximum: the lowest order value once converted.
            const float lowest = AsFloat(t_.largest ? 0xFF800000u : 0x7F800000u);
            Duplicate(halves, static_cast<half>(lowest), static_cast<int32_t>(kTile));
        }
        PipeBarrier<PIPE_V>();
        uint64_t flushed = 0;  // chunks already in GM
        uint32_t tile = 0;
        if (len > 0 && !preloaded) LoadKeys(begin, ScanKeys(len));
        for (uint64_t off = 0; off < len; off += kScanTile, ++tile) {
            const uint32_t count = ScanKeys(len - off);
            if (off + kScanTile < len) {
                const uint64_t next = off + kScanTile;
                LoadKeys(begin + next, ScanKeys(len - next));
            }
            const uint32_t slot = (tile % kTilesPerWindow) * kChunksPerScan;
            TileMaxima((count + kChunk - 1) / kChunk * kChunk, halves[slot], res[slot]);
            const uint64_t done = (off + count + kChunk - 1) / kChunk;  // chunks so far
            const bool last = off + kScanTile >= len;
            if (!last && tile % kTilesPerWindow != kTilesPerWindow - 1) continue;
            const uint32_t inWindow = static_cast<uint32_t>(done - flushed);
            if constexpr (kHalfMax) HalfMaximaToOrder(res, halves, inWindow);
            if (!stay) {
                PipeSync<HardEvent::V_MTE3>();
                StoreAny(gMax_[at + flushed], res, inWindow);
                PipeSync<HardEvent::MTE3_V>();
            }
            flushed = done;
        }
    }

    // A whole row's candidates kept in UB while they fit a tile (no GM
    // write and read-back before Finish): order values in bufRes_, indices
    // and bits in tiles of qCandI_ and qCandV_, each batch's at
    // kResAlign-aligned lanes, NaN order values between and after them (a
    // NaN passes no compare). `on` until they outgrow the tile, when they
    // go to GM, gaps and all.
    struct InUb {
        bool on = false;
        uint32_t lanes = 0;
        LocalTensor<int32_t> idx;
        LocalTensor<TCand> bits;
    };

    // Read 2: the chunks of the `len` keys at `begin` (their maxima at
    // gMax_[at], or in bufRes_ when `inUb`) whose maximum is at least
    // `bound` are read again, a batch of up to a tile at a time, and their
    // keys with order value >= `bound` copied to the candidates at `begin`
    // (order value, index in the row (row start `rowStart`), int16 bits).
    // A full batch is compacted only once the next one's reads are issued,
    // so those reads overlap its vector work. Given `ub` (maxima in UB), the
    // candidates stay in UB while they fit (InUb). Of the chunks whose
    // maximum equals `bound`, only the first `tieChunks` are read
    // (TieChunks). Returns the candidates' count in GM.
    __aicore__ inline uint64_t Compact(uint64_t begin, uint64_t rowStart, uint64_t len, uint64_t at, bool inUb,
                                       float bound, uint64_t tieChunks, InUb* ub = nullptr) {
        const uint64_t chunks = (len + kChunk - 1) / kChunk;
        LocalTensor<float> res = bufRes_.Get<float>();
        LocalTensor<uint32_t> hot = Mask(kChunkMask).template ReinterpretCast<uint32_t>();
        LocalTensor<uint32_t> above = Mask(kChunkAboveMask).template ReinterpretCast<uint32_t>();
        const bool limited = tieChunks != kAllChunks;
        Batches b;
        b.ub = ub;
        for (uint64_t w0 = 0; w0 < chunks; w0 += kTile) {
            const uint32_t inWindow = static_cast<uint32_t>(chunks - w0 < kTile ? chunks - w0 : kTile);
            if (!inUb) {
                Duplicate(res, AsFloat(0xFF800000u), static_cast<int32_t>(kTile));
                PipeSync<HardEvent::V_MTE2>();
                LoadPadded(res, gMax_[at + w0], inWindow, AsFloat(0xFF800000u));
                PipeSync<HardEvent::MTE2_V>();
            }
            CompareScalar(Mask(kChunkMask), res, bound, CMPMODE::GE, Padded(inWindow));
            if (limited) CompareScalar(Mask(kChunkAboveMask), res, bound, CMPMODE::GT, Padded(inWindow));
            if (ub != nullptr) StartInUb(*ub);  // one window: the maxima are done with
            PipeSync<HardEvent::V_S>();
            for (uint32_t word = 0; word < (inWindow + 31) / 32; ++word) {
                uint32_t bits = hot.GetValue(word);
                uint32_t over = limited ? above.GetValue(word) : ~0u;
                for (uint32_t bit = 0; bits != 0 && bit < 32; ++bit, bits >>= 1, over >>= 1) {
                    const uint64_t c = w0 + word * 32 + bit;
                    if ((bits & 1u) == 0 || c >= chunks) continue;
                    if ((over & 1u) == 0) {  // a chunk at the bound
                        if (tieChunks == 0) continue;
                        --tieChunks;
                    }
                    if (b.staged == 0) b.tile[b.cur] = qRaw_.AllocTensor<TBits>();
                    const uint64_t first = c * kChunk;
                    const uint32_t count = static_cast<uint32_t>(len - first < kChunk ? len - first : kChunk);
                    LocalTensor<TBits> slot = b.tile[b.cur][b.staged * kChunk];
                    if (count < kChunk) PadKeys(slot, kChunk);  // its lanes past the keys
                    LoadPadded(slot, gBits_[begin + first], count, static_cast<TBits>(Pad()));
                    b.starts[b.cur][b.staged] = static_cast<int32_t>(begin + first - rowStart);
                    ++b.staged;
                    // Only the piece's last chunk can be short: it ends the batch.
                    if (b.staged == kChunksPerTile || count < kChunk) {
                        CloseBatch(b, (b.staged - 1) * kChunk + count, begin, bound);
                    }
                }
            }
            ScalarReadsDone();
        }
        if (b.staged > 0) CloseBatch(b, b.staged * kChunk, begin, bound);
        if (b.pending) b.kept = CompactBatch(b, 1 - b.cur, begin, bound);
        return b.kept;
    }

    // The compaction's batches: two tiles of qRaw_, one being filled
    // (`cur`) while the other (`pending`) waits for its vector work.
    struct Batches {
        LocalTensor<TBits> tile[2];
        int32_t starts[2][kChunksPerTile];  // row index of each chunk
        uint32_t chunks[2] = {0, 0}, lanes[2] = {0, 0};
        uint32_t cur = 0, staged = 0;
        bool pending = false;
        uint64_t kept = 0;
        InUb* ub = nullptr;
    };

    __aicore__ inline void StartInUb(InUb& ub) {
        ub.on = true;
        ub.lanes = 0;
        ub.idx = qCandI_.AllocTensor<int32_t>();
        ub.bits = qCandV_.AllocTensor<TCand>();
        PipeBarrier<PIPE_V>();  // the maxima's compare reads bufRes_
        Duplicate(bufRes_.Get<float>(), AsFloat(0x7FC00000u), static_cast<int32_t>(kTile));
        Duplicate(ub.idx, 0, static_cast<int32_t>(kTile));
        Duplicate(ub.bits, static_cast<TCand>(0), static_cast<int32_t>(kTile));
        PipeBarrier<PIPE_V>();
    }
    // Appends a batch's `got` gathered candidates (exact copies: GatherMask
    // with the every-lane pattern 7 and a count of `got`), if they fit.
    __aicore__ inline bool AppendInUb(InUb& ub, const LocalTensor<float>& v, const LocalTensor<int32_t>& idx,
                                      const LocalTensor<TCand>& bits, uint32_t got) {
        if (ub.lanes + ResidentLanes(got) > kTile) return false;
        if (got > 0) {
            const GatherMaskParams once(1, 1, 8, 0);
            uint64_t n = 0;
            GatherMask(bufRes_.Get<float>()[ub.lanes], v, static_cast<uint8_t>(7), true, got, once, n);
            GatherMask(ub.idx[ub.lanes], idx, static_cast<uint8_t>(7), true, got, once, n);
            GatherMask(ub.bits[ub.lanes], bits, static_cast<uint8_t>(7), true, got, once, n);
            ResetMask();
            PipeBarrier<PIPE_V>();  // before the staging tiles' next gathers
            ub.lanes += static_cast<uint32_t>(ResidentLanes(got));
        }
        return true;
    }
    // The candidates so far to GM at `begin` (ub.lanes of them, gaps too).
    __aicore__ inline void SpillUb(InUb& ub, uint64_t begin) {
        PipeSync<HardEvent::V_MTE3>();
        StoreAny(gCandV_[begin], bufRes_.Get<float>(), ub.lanes);
        StoreAny(gCandI_[begin], ub.idx, ub.lanes);
        StoreAny(gCandR_[begin], ub.bits, ub.lanes);
        PipeSync<HardEvent::MTE3_V>();  // before the buffers' next vector writes
        qCandI_.FreeTensor(ub.idx);
        qCandV_.FreeTensor(ub.bits);
        ub.on = false;
    }

    // Closes the batch being filled (`lanes` keys) and compacts the one
    // before it, whose reads were issued first.
    __aicore__ inline void CloseBatch(Batches& b, uint32_t lanes, uint64_t begin, float bound) {
        qRaw_.EnQue(b.tile[b.cur]);
        b.chunks[b.cur] = b.staged;
        b.lanes[b.cur] = lanes;
        if (b.pending) b.kept = CompactBatch(b, 1 - b.cur, begin, bound);
        b.pending = true;
        b.cur = 1 - b.cur;
        b.staged = 0;
    }

    // Compacts batch `j` (its tile the oldest in qRaw_) into the candidates
    // at begin + b.kept; returns the new count.
    __aicore__ inline uint64_t CompactBatch(Batches& b, uint32_t j, uint64_t begin, float bound) {
        const GatherMaskParams once(1, 1, 8, 0);
        const uint32_t lanes = b.lanes[j], padded = Padded(lanes);
        LocalTensor<int32_t> iota = bufIota_.Get<int32_t>();
        for (uint32_t c = 0; c < b.chunks[j]; ++c) CreateVecIndex(iota[c * kChunk], b.starts[j][c], kChunk);
        LocalTensor<TBits> raw;
        LocalTensor<TCand> bits;
        LocalTensor<float> v = Order(raw, bits, padded);
        LocalTensor<uint8_t> keep = Mask(0);
        CompareScalar(keep, v, bound, CMPMODE::GE, padded);
        PipeBarrier<PIPE_V>();
        LocalTensor<float> outV = qOutV_.AllocTensor<float>();
        LocalTensor<int32_t> outI = qOutI_.AllocTensor<int32_t>();
        LocalTensor<TCand> outR = qOutR_.AllocTensor<TCand>();
        uint64_t got = 0, gotI = 0, gotR = 0;
        GatherMask(outV, v, keep.ReinterpretCast<uint32_t>(), true, lanes, once, got);
        GatherMask(outI, iota, keep.ReinterpretCast<uint32_t>(), true, lanes, once, gotI);
        GatherMask(outR, bits, keep.ReinterpretCast<TPattern>(), true, lanes, once, gotR);
        ResetMask();
        PipeBarrier<PIPE_V>();
        qRaw_.FreeTensor(raw);
        if (b.ub != nullptr && b.ub->on) {
            if (AppendInUb(*b.ub, outV, outI, outR, static_cast<uint32_t>(got))) {
                qOutV_.FreeTensor(outV);
                qOutI_.FreeTensor(outI);
                qOutR_.FreeTensor(outR);
                return b.kept;
            }
            SpillUb(*b.ub, begin);
            b.kept = b.ub->lanes;
        }
        StoreQueued(qOutV_, outV, gCandV_[begin + b.kept], static_cast<uint32_t>(got));
        StoreQueued(qOutI_, outI, gCandI_[begin + b.kept], static_cast<uint32_t>(got));
        StoreQueued(qOutR_, outR, gCandR_[begin + b.kept], static_cast<uint32_t>(got));
        return b.kept + got;
    }

    // ---- the radix select ----

    // Counts, for thresholds tv[1..nt-1], the order values at or above each
    // among the first `lanes` of `x` (its lanes up to the next 64 defined).
    __aicore__ inline void CountTile(const LocalTensor<float>& x, uint32_t lanes, const float* tv, uint32_t nt,
                                     uint64_t* counts) {
        const uint32_t padded = Padded(lanes);
        for (uint32_t j = 1; j < nt; ++j) CompareScalar(Mask(j), x, tv[j], CMPMODE::GE, padded);
        PipeBarrier<PIPE_V>();
        LocalTensor<float> scratch = bufTmp_.Get<float>();
        const GatherMaskParams once(1, 1, 8, 0);
        for (uint32_t j = 1; j < nt; ++j) {
            uint64_t got = 0;
            LocalTensor<uint8_t> mask = Mask(j);
            GatherMask(scratch, x, mask.ReinterpretCast<uint32_t>(), true, lanes, once, got);  // the count only
            counts[j] += got;
        }
        ResetMask();
        PipeBarrier<PIPE_V>();
    }

    // The k-th largest code among candidates whose order values are the
    // first `lanes` of bufRes_ (-inf or NaN up to the next 64), between code
    // `lo` (at least k of them at or above it) and `hi` (none at or above it).
    __aicore__ inline Pick Narrow(uint32_t lanes, int32_t lo, int32_t hi, int64_t slack = 1) {
        // Binary rounds: a threshold costs a pass over the values, a round
        // only a vector-to-scalar sync.
        return NarrowWith(2, lo, hi, slack, [&](const float* tv, uint32_t nt, uint64_t* counts) {
            CountTile(bufRes_.Get<float>(), lanes, tv, nt, counts);
        });
    }

    // The same over order values in GM: `segs` segments of `len[i]`
    // values at `at[i]` of `src`, loaded once into bufRes_ when they fit
    // (LoadResident), else streamed every round (wide rounds: each reads
    // them all again).
    __aicore__ inline Pick NarrowSegs(const GlobalTensor<float>& src, const uint64_t* at, const uint64_t* len,
                                      uint32_t segs, int32_t lo, int32_t hi, int64_t slack = 1) {
        uint64_t room = 0;
        for (uint32_t s = 0; s < segs; ++s) room += ResidentLanes(len[s]);
        if (room <= kTile) return Narrow(LoadResident(src, at, len, segs, nullptr, nullptr), lo, hi, slack);
        return NarrowWith(kWays, lo, hi, slack, [&](const float* tv, uint32_t nt, uint64_t* counts) {
            for (uint32_t s = 0; s < segs; ++s) {
                for (uint64_t off = 0; off < len[s]; off += kTile) {
                    const uint32_t count = static_cast<uint32_t>(len[s] - off < kTile ? len[s] - off : kTile);
                    LocalTensor<float> x = LoadValues(src[at[s] + off], count);
                    CountTile(x, count, tv, nt, counts);
                    qCandV_.FreeTensor(x);
                }
            }
        });
    }

    // Loads the segments' order values into bufRes_ (and, given `idx` and
    // `bits`, the candidates' indices and bits into them at the same
    // lanes), each segment kResAlign-aligned, NaN between and after them
    // (a NaN passes no compare); returns the lanes used.
    __aicore__ inline uint32_t LoadResident(const GlobalTensor<float>& src, const uint64_t* at, const uint64_t* len,
                                            uint32_t segs, LocalTensor<int32_t>* idx, LocalTensor<TCand>* bits) {
        LocalTensor<float> res = bufRes_.Get<float>();
        const float gap = AsFloat(0x7FC00000u);
        Duplicate(res, gap, static_cast<int32_t>(kTile));
        if (idx != nullptr) {
            Duplicate(*idx, 0, static_cast<int32_t>(kTile));
            Duplicate(*bits, static_cast<TCand>(0), static_cast<int32_t>(kTile));
        }
        PipeSync<HardEvent::V_MTE2>();
        uint32_t off = 0;
        for (uint32_t s = 0; s < segs; ++s) {
            if (len[s] == 0) continue;
            off += LoadSegment(res, idx, bits, off, src[at[s]], at[s], static_cast<uint32_t>(len[s]));
        }
        PipeSync<HardEvent::MTE2_V>();
        return off;
    }

    // One segment of `n` candidates at `at` into lane `off` of `v` (its
    // order values from `src`, NaN up to the next 32 bytes) and, given
    // `idx` and `bits`, of those; returns the lanes it takes.
    __aicore__ inline uint32_t LoadSegment(const LocalTensor<float>& v, LocalTensor<int32_t>* idx,
                                           LocalTensor<TCand>* bits, uint32_t off, const GlobalTensor<float>& src,
                                           uint64_t at, uint32_t n) {
        LoadPadded(v[off], src, n, AsFloat(0x7FC00000u));
        if (idx != nullptr) {
            LoadAny((*idx)[off], gCandI_[at], n);
            LoadAny((*bits)[off], gCandR_[at], n);
        }
        return static_cast<uint32_t>(ResidentLanes(n));
    }

    // The pieces whose slots one DMA per array loads (Finish): all of them,
    // or all but a last piece shorter than a slot, when each of those holds
    // at most kPieceSlot candidates (then NaN after them up to the slot,
    // SharedRow); 0 when they do not, or for one segment.
    __aicore__ inline uint32_t SlotRuns(const uint64_t* counts, uint32_t segs) {
        if (segs < 2 || t_.piece_len < kPieceSlot) return 0;
        const uint64_t lastLen = t_.n - (segs - 1) * t_.piece_len;
        const uint32_t runs = lastLen >= kPieceSlot ? segs : segs - 1;
        for (uint32_t s = 0; s < runs; ++s) {
            if (counts[s] > kPieceSlot) return 0;
        }
        if (runs < segs && runs * kPieceSlot + ResidentLanes(counts[runs]) > kTile) return 0;
        return runs;
    }

    // The candidates of `runs` pieces' slots (kPieceSlot lanes each, NaN
    // order values after a piece's candidates) and those of a short last
    // piece, loaded into bufV_, bufIota_ and bufTmp_ (one DMA per array for
    // the slots), then compacted (GatherMask of the non-NaN order values)
    // into bufRes_, `idx` and `bits` in piece order, NaN after them, so the
    // narrowing counts only the candidates. Returns their count.
    __aicore__ inline uint32_t LoadSlots(const uint64_t* at, const uint64_t* counts, uint32_t segs, uint32_t runs,
                                         LocalTensor<int32_t>& idx, LocalTensor<TCand>& bits) {
        LocalTensor<float> res = bufRes_.Get<float>(), sv = bufV_.Get<float>();
        LocalTensor<int32_t> si = bufIota_.Get<int32_t>();
        LocalTensor<TCand> sb = bufTmp_.Get<TCand>();
        const bool tail = runs < segs && counts[runs] > 0;
        const uint32_t slotLanes = runs * kPieceSlot;
        // Lanes loaded; the compaction and the narrowing read up to the next 64.
        const uint32_t lanes = slotLanes + (tail ? static_cast<uint32_t>(ResidentLanes(counts[runs])) : 0);
        const int32_t padded = static_cast<int32_t>(Padded(lanes));
        const float gap = AsFloat(0x7FC00000u);
        PipeBarrier<PIPE_V>();  // the row's last vector uses of these buffers
        Duplicate(res, gap, padded);
        Duplicate(sv, gap, padded);
        Duplicate(idx, 0, padded);
        Duplicate(bits, static_cast<TCand>(0), padded);
        PipeSync<HardEvent::V_MTE2>();
        LoadRuns(sv, gCandV_[at[0]], runs, kPieceSlot, t_.piece_len);
        LoadRuns(si, gCandI_[at[0]], runs, kPieceSlot, t_.piece_len);
        LoadRuns(sb, gCandR_[at[0]], runs, kPieceSlot, t_.piece_len);
        if (tail) LoadSegment(sv, &si, &sb, slotLanes, gCandV_[at[runs]], at[runs], static_cast<uint32_t>(counts[runs]));
        PipeSync<HardEvent::MTE2_V>();
        LocalTensor<uint8_t> keep = Mask(0);
        Compare(keep, sv, sv, CMPMODE::EQ, Padded(lanes));  // false only for the NaN gaps
        PipeBarrier<PIPE_V>();
        const GatherMaskParams once(1, 1, 8, 0);
        uint64_t got = 0, dummy = 0;
        GatherMask(res, sv, keep.ReinterpretCast<uint32_t>(), true, lanes, once, got);
        GatherMask(idx, si, keep.ReinterpretCast<uint32_t>(), true, lanes, once, dummy);
        GatherMask(bits, sb, keep.ReinterpretCast<TPattern>(), true, lanes, once, dummy);
        ResetMask();
        PipeBarrier<PIPE_V>();
        return static_cast<uint32_t>(got);
    }

    // `count` fp32 order values from GM as a tile of qCandV_, -inf up to
    // the next 64 lanes.
    __aicore__ inline LocalTensor<float> LoadValues(const GlobalTensor<float>& src, uint32_t count) {
        LocalTensor<float> x = qCandV_.AllocTensor<float>();
        const float negInf = AsFloat(0xFF800000u);
        if (count % 64 != 0) {
            Duplicate(x, negInf, static_cast<int32_t>(Padded(count)));
            PipeSync<HardEvent::V_MTE2>();
        }
        LoadPadded(x, src, count, negInf);
        qCandV_.EnQue(x);
        return qCandV_.DeQue<float>();
    }

    // The narrowing rounds: the interval [lo, hi) of codes holds the k-th
    // largest (C(lo) >= k > C(hi) = 0, C(c) the count of order values >=
    // Value(c)); each round counts at `ways` - 1 thresholds inside it and
    // keeps the highest sub-interval whose start still has k. Thresholds lie
    // above Lo(), so their order values exceed -inf (the pads; NaN gaps pass
    // no compare).
    template <typename CountFn>
    __aicore__ inline Pick NarrowWith(uint32_t ways, int32_t lo, int32_t hi, int64_t slack, CountFn count) {
        uint64_t chi = 0;
        const uint64_t k = t_.k;
        // Widths in int64: f32's codes span more than int32 differences hold.
        while (static_cast<int64_t>(hi) - lo > slack) {
            const int64_t codes = static_cast<int64_t>(hi) - lo;
            const int64_t w = (codes + ways - 1) / ways;
            const uint32_t nt = static_cast<uint32_t>((codes + w - 1) / w);
            float tv[kWays];
            uint64_t counts[kWays];
            for (uint32_t j = 0; j < nt; ++j) {
                tv[j] = Value(static_cast<int32_t>(lo + j * w));
                counts[j] = 0;
            }
            count(tv, nt, counts);
            uint32_t b = 0;
            for (uint32_t j = nt; j-- > 1;) {
                if (counts[j] >= k) {
                    b = j;
                    break;
                }
            }
            if (b + 1 < nt) {
                hi = static_cast<int32_t>(lo + (b + 1) * w);
                chi = counts[b + 1];
            }
            lo = static_cast<int32_t>(lo + b * w);
        }
        return Pick{lo, chi};
    }

    // ---- the result ----

    // Selects the k-th key of row r among its candidates (`segs` pieces
    // with `counts[i]` each in GM, or in UB when `ub` is on; at or above
    // code `lo`) and writes the k keys.
    __aicore__ inline void Finish(uint64_t r, int32_t lo, const uint64_t* counts, uint32_t segs,
                                  const InUb* ub = nullptr) {
        Cands c;
        c.segs = segs;
        c.counts = counts;
        for (uint32_t s = 0; s < segs; ++s) {
            c.at[s] = r * t_.n + s * t_.piece_len;
            c.room += ResidentLanes(counts[s]);
        }
        // Candidates that fit a tile go into UB at once (one load per piece
        // and array, or one for all the pieces' slots; one compare and
        // gather pass); else tile by tile.
        const bool inUb = ub != nullptr && ub->on;
        const uint32_t runs = inUb ? 0 : SlotRuns(counts, segs);
        c.resident = inUb || runs > 0 || c.room <= kTile;
        if (inUb) {
            c.idx = ub->idx;
            c.bits = ub->bits;
            c.lanes = ub->lanes;
        } else if (c.resident) {
            c.idx = qCandI_.AllocTensor<int32_t>();
            c.bits = qCandV_.AllocTensor<TCand>();
            c.lanes = runs > 0 ? LoadSlots(c.at, counts, segs, runs, c.idx, c.bits)
                               : LoadResident(gCandV_, c.at, counts, segs, &c.idx, &c.bits);
        }
        const Pick pick = c.resident ? Narrow(c.lanes, lo, topHi_) : NarrowSegs(gCandV_, c.at, counts, segs, lo, topHi_);
        Split split{Value(pick.v), kAllTies};
        uint64_t above = pick.above;
        if constexpr (kWide) {
            // The top group (f32 +inf and NaN, one order value): the k-th
            // key is in its first class (NaN for the largest, +inf for the
            // smallest) if that class has enough keys; else the whole first
            // class lies beyond the k-th.
            if (split.v == (t_.largest ? AsFloat(0x7F800000u) : AsFloat(0xFF800000u))) {
                uint64_t first = 0;
                EachTile(c, [&](const LocalTensor<float>& x, const LocalTensor<int32_t>&, const LocalTensor<TCand>& b,
                                uint32_t lanes) { first += CountFirstClass(x, b, lanes, split.v); });
                if (first >= t_.k - above) {
                    split.mode = kFirstClassTies;
                } else {
                    split.mode = kSecondClassTies;
                    above += first;
                }
            }
        }
        Out out{r * t_.k, r * t_.k + above, t_.k - above, 0};
        // Resident candidates are written in one pass: the keys beyond the
        // k-th stay in UB for their ordering instead of a GM round trip.
        const bool keep = t_.sorted != 0 && above > 1 && c.resident && !kNarrow;
        EachTile(c, [&](const LocalTensor<float>& x, const LocalTensor<int32_t>& idx, const LocalTensor<TCand>& b,
                        uint32_t lanes) { WriteTile(x, idx, b, lanes, split, out, keep); });
        if (c.resident) {
            qCandI_.FreeTensor(c.idx);
            qCandV_.FreeTensor(c.bits);
        }
        if (t_.sorted != 0 && above > 1) SortBeyond(r, static_cast<uint32_t>(above), keep);
    }

    // A row's candidates: `segs` pieces of `counts[i]` at `at[i]`, in UB
    // (`resident`: `lanes` order values in bufRes_, indices and bits in
    // `idx` and `bits`) or in GM.
    struct Cands {
        uint64_t at[kMaxPieces];
        const uint64_t* counts = nullptr;
        uint32_t segs = 0;
        uint64_t room = 0;
        bool resident = false;
        uint32_t lanes = 0;
        LocalTensor<int32_t> idx;
        LocalTensor<TCand> bits;
    };

    // fn(order values, indices, bits, lanes) for the resident candidates,
    // or for each tile of them in GM (lanes past `lanes` defined up to the
    // next 64).
    template <typename Fn>
    __aicore__ inline void EachTile(Cands& c, Fn fn) {
        if (c.resident) {
            fn(bufRes_.Get<float>(), c.idx, c.bits, c.lanes);
            return;
        }
        for (uint32_t s = 0; s < c.segs; ++s) {
            for (uint64_t off = 0; off < c.counts[s]; off += kTile) {
                const uint32_t count = static_cast<uint32_t>(c.counts[s] - off < kTile ? c.counts[s] - off : kTile);
                LocalTensor<int32_t> idx = qCandI_.AllocTensor<int32_t>();
                LoadAny(idx, gCandI_[c.at[s] + off], count);
                qCandI_.EnQue(idx);
                LocalTensor<TCand> bits = qRaw_.AllocTensor<TCand>();
                if (kWide && count % 64 != 0) {
                    // The top group's class test reads the bits' whole repeats.
                    Duplicate(bits, static_cast<TCand>(0), static_cast<int32_t>(Padded(count)));
                    PipeSync<HardEvent::V_MTE2>();
                }
                LoadAny(bits, gCandR_[c.at[s] + off], count);
                qRaw_.EnQue(bits);
                LocalTensor<float> x = LoadValues(gCandV_[c.at[s] + off], count);
                idx = qCandI_.DeQue<int32_t>();
                bits = qRaw_.DeQue<TCand>();
                fn(x, idx, bits, count);
                qCandV_.FreeTensor(x);
                qCandI_.FreeTensor(idx);
                qRaw_.FreeTensor(bits);
            }
        }
    }

    // Where a row's output goes: keys beyond the k-th from `beyondAt`, its
    // ties from `tieAt`, `need` of them in all, `taken` so far.
    struct Out {
        uint64_t beyondAt, tieAt, need, taken;
    };
    // How the write splits the candidates at the k-th order value v: ties
    // are the keys equal to v (kAllTies); in f32's top group, those of the
    // group's first class (kFirstClassTies: the k-th is one of them), or of
    // its second class with the first class counted beyond (kSecondClassTies).
    enum SplitMode : uint32_t { kAllTies = 0, kFirstClassTies, kSecondClassTies };
    struct Split {
        float v;
        uint32_t mode;
    };

    // The first class of f32's top group among the first `padded` lanes
    // into mask `dst`: NaN keys for the largest, the others (+inf) for the
    // smallest.
    __aicore__ inline void FirstClass(const LocalTensor<uint8_t>& dst, const LocalTensor<TCand>& bits, uint32_t padded) {
        LocalTensor<float> keys = bits.template ReinterpretCast<float>();
        Compare(dst, keys, keys, CMPMODE::EQ, padded);  // false only for NaN
        if (t_.largest) {
            PipeBarrier<PIPE_V>();
            LocalTensor<uint16_t> words = dst.template ReinterpretCast<uint16_t>();
            Not(words, words, static_cast<int32_t>(padded / 16));
        }
    }
    // The candidates among the first `lanes` of x equal to v (the top
    // group) and in its first class.
    __aicore__ inline uint64_t CountFirstClass(const LocalTensor<float>& x, const LocalTensor<TCand>& bits,
                                               uint32_t lanes, float v) {
        const uint32_t padded = Padded(lanes);
        LocalTensor<uint8_t> eq = Mask(1), first = Mask(2);
        CompareScalar(eq, x, v, CMPMODE::EQ, padded);
        FirstClass(first, bits, padded);
        PipeBarrier<PIPE_V>();
        And(eq.ReinterpretCast<uint16_t>(), eq.ReinterpretCast<uint16_t>(), first.ReinterpretCast<uint16_t>(),
            static_cast<int32_t>(padded / 16));
        PipeBarrier<PIPE_V>();
        const GatherMaskParams once(1, 1, 8, 0);
        uint64_t got = 0;
        GatherMask(bufTmp_.Get<float>(), x, eq.ReinterpretCast<uint32_t>(), true, lanes, once, got);  // the count only
        ResetMask();
        PipeBarrier<PIPE_V>();
        return got;
    }

    // Writes the candidates among the first `lanes` of x (order values;
    // lanes past them defined) beyond the k-th key, and its ties while
    // `out` needs them, with their indices and bits.
    __aicore__ inline void WriteTile(const LocalTensor<float>& x, const LocalTensor<int32_t>& idx,
                                     const LocalTensor<TCand>& bits, uint32_t lanes, const Split& split, Out& out,
                                     bool keep) {
        const GatherMaskParams once(1, 1, 8, 0);
        const uint32_t padded = Padded(lanes);
        LocalTensor<uint8_t> gt = Mask(0), eq = Mask(1);
        CompareScalar(gt, x, split.v, CMPMODE::GT, padded);
        CompareScalar(eq, x, split.v, CMPMODE::EQ, padded);
        if (split.mode != kAllTies) {
            LocalTensor<uint8_t> first = Mask(2);
            LocalTensor<uint16_t> gtW = gt.ReinterpretCast<uint16_t>(), eqW = eq.ReinterpretCast<uint16_t>(),
                                  firstW = first.ReinterpretCast<uint16_t>(), tmpW = Mask(3).template ReinterpretCast<uint16_t>();
            const int32_t words = static_cast<int32_t>(padded / 16);
            FirstClass(first, bits, padded);
            PipeBarrier<PIPE_V>();
            if (split.mode == kFirstClassTies) {
                And(eqW, eqW, firstW, words);  // ties: the first class
            } else {
                And(tmpW, eqW, firstW, words);  // the first class goes beyond
                PipeBarrier<PIPE_V>();
                Not(firstW, firstW, words);
                PipeBarrier<PIPE_V>();
                Or(gtW, gtW, tmpW, words);
                And(eqW, eqW, firstW, words);  // ties: the second class
            }
        }
        PipeBarrier<PIPE_V>();
        if (keep) KeepBeyond(x, idx, bits, gt, lanes);
        LocalTensor<int32_t> outI = qOutI_.AllocTensor<int32_t>();
        LocalTensor<TCand> outR = qOutR_.AllocTensor<TCand>();
        uint64_t nGt = 0, nEq = 0, dummy = 0;
        GatherMask(outR, bits, gt.ReinterpretCast<TPattern>(), true, lanes, once, nGt);
        GatherMask(outI, idx, gt.ReinterpretCast<uint32_t>(), true, lanes, once, dummy);
        const uint32_t second = static_cast<uint32_t>((nGt + kGroupAlign - 1) / kGroupAlign * kGroupAlign);
        GatherMask(outR[second], bits, eq.ReinterpretCast<TPattern>(), true, lanes, once, nEq);
        GatherMask(outI[second], idx, eq.ReinterpretCast<uint32_t>(), true, lanes, once, dummy);
        ResetMask();
        PipeBarrier<PIPE_V>();
        const uint64_t left = out.need - out.taken;
        const uint32_t ties = static_cast<uint32_t>(nEq < left ? nEq : left);
        LocalTensor<TBits> keysOut =
            HandoffKeys<TKey>(qOutR_, outR, second + ties, 2 * kOutCap, bufTmp_.Get<half>()).template ReinterpretCast<TBits>();
        outI = Handoff(qOutI_, outI);
        if (!keep) {  // else SortBeyond writes them in order
            StoreAny(gVal_[out.beyondAt], keysOut, static_cast<uint32_t>(nGt));
            StoreAny(gIdx_[out.beyondAt], outI, static_cast<uint32_t>(nGt));
        }
        StoreAny(gVal_[out.tieAt + out.taken], keysOut[second], ties);
        StoreAny(gIdx_[out.tieAt + out.taken], outI[second], ties);
        out.beyondAt += nGt;
        out.taken += ties;
        qOutR_.FreeTensor(outR);
        qOutI_.FreeTensor(outI);
    }

    // The keys beyond the k-th kept in UB for SortBeyond (at most
    // kMaxSortedLanes of them): order values in bufV_, indices and bits in
    // bufIota_; past them -inf, 0 and the pad key.
    static constexpr uint32_t kMaxSortedLanes = 128;
    __aicore__ inline LocalTensor<float> BeyondValues() { return bufV_.Get<float>(); }
    __aicore__ inline LocalTensor<int32_t> BeyondIdx() { return bufIota_.Get<int32_t>(); }
    __aicore__ inline LocalTensor<TBits> BeyondBits() {
        return bufIota_.Get<int32_t>()[kMaxSortedLanes].template ReinterpretCast<TBits>();
    }
    __aicore__ inline void KeepBeyond(const LocalTensor<float>& x, const LocalTensor<int32_t>& idx,
                                      const LocalTensor<TCand>& bits, const LocalTensor<uint8_t>& gt, uint32_t lanes) {
        if constexpr (!kNarrow) {  // 8-bit keys are not kept (no 8-bit gather; Finish)
            const GatherMaskParams once(1, 1, 8, 0);
            LocalTensor<float> v = BeyondValues();
            LocalTensor<int32_t> i = BeyondIdx();
            LocalTensor<TBits> b = BeyondBits();
            Duplicate(v, AsFloat(0xFF800000u), static_cast<int32_t>(kMaxSortedLanes));
            Duplicate(i, 0, static_cast<int32_t>(kMaxSortedLanes));
            Duplicate(b, static_cast<TBits>(Pad()), static_cast<int32_t>(kMaxSortedLanes));
            PipeBarrier<PIPE_V>();
            uint64_t got = 0;
            GatherMask(v, x, gt.ReinterpretCast<uint32_t>(), true, lanes, once, got);
            GatherMask(i, idx, gt.ReinterpretCast<uint32_t>(), true, lanes, once, got);
            GatherMask(b, bits, gt.ReinterpretCast<TPattern>(), true, lanes, once, got);
            ResetMask();
            PipeBarrier<PIPE_V>();
        } else {
            (void)x;
            (void)idx;
            (void)bits;
            (void)gt;
            (void)lanes;
        }
    }

    __aicore__ static inline bool IsNan(TBits b) { return (static_cast<uint32_t>(b) & 0x7FFFFFFFu) > 0x7F800000u; }

    // Orders the `above` keys beyond the k-th of row r (written in index
    // order at the start of its output) largest first, equal keys in index
    // order: each key's rank is the count of keys beyond it plus that of
    // the equal keys before it (two compares and two counts per key, so
    // only for k up to TopK::MAX_SORTED_K, crates/algos/src/topk.rs); the ties of the k-th key already
    // follow in index order. f32's top group (+inf and NaN tie as order
    // values) takes ranks 0.. in index order that way; its NaN keys go
    // first.
    __aicore__ inline void SortBeyond(uint64_t r, uint32_t above, bool kept) {
        const uint32_t padded = Padded(above);
        LocalTensor<TBits> raw;
        LocalTensor<int32_t> idx;
        LocalTensor<TCand> bits;
        LocalTensor<float> v;
        if (kept) {
            // From UB (KeepBeyond): order values, indices and bits.
            raw = BeyondBits();
            idx = BeyondIdx();
            v = BeyondValues();
        } else {
            PipeSync<HardEvent::MTE3_MTE2>();  // the row's output read back
            raw = qRaw_.AllocTensor<TBits>();
            PadKeys(raw, kScanTile);
            LoadPadded(raw, gVal_[r * t_.k], above, static_cast<TBits>(Pad()));
            qRaw_.EnQue(raw);
            idx = qCandI_.AllocTensor<int32_t>();
            LoadAny(idx, gIdx_[r * t_.k], above);
            qCandI_.EnQue(idx);
            v = Order(raw, bits, padded);
            idx = qCandI_.DeQue<int32_t>();
        }
        // The order goes to qOutV_ (free since the compaction), not to
        // qOutI_/qOutR_, whose ties may still be on their way to GM.
        static_assert(kOutCap >= 2 * kMaxSortedLanes, "room for the order");
        LocalTensor<float> order = qOutV_.AllocTensor<float>();
        LocalTensor<int32_t> outI = order.template ReinterpretCast<int32_t>();
        LocalTensor<TBits> outR = order[kMaxSortedLanes].template ReinterpretCast<TBits>();
        uint32_t nans = 0;
        if constexpr (kWide) {
            if (t_.largest) {
                if (kept) {
                    PipeSync<HardEvent::V_S>();
                } else {
                    PipeSync<HardEvent::MTE2_S>();
                }
                for (uint32_t i = 0; i < above; ++i) nans += IsNan(raw.GetValue(i)) ? 1 : 0;
                ScalarReadsDone();
            }
        }
        // 8-bit keys (no 8-bit Gather) and f32 rows with NaNs (NaN and +inf
        // share an order value; their ranks come from the NaN count) take
        // the scalar ranking.
        const bool byMatrix = !kNarrow && nans == 0;
        if (byMatrix) {
            RankByMatrix(v, raw, idx, outR, outI, above, padded);
            PipeSync<HardEvent::V_MTE3>();
        } else {
            RankOneByOne(v, raw, idx, outR, outI, above, padded, nans);
            ScalarReadsDone();
            PipeSync<HardEvent::S_MTE3>();
        }
        if (!kept) {
            qRaw_.FreeTensor(raw);
            qCandI_.FreeTensor(idx);
        }
        StoreAny(gVal_[r * t_.k], outR, above);
        StoreAny(gIdx_[r * t_.k], outI, above);
        PipeSync<HardEvent::MTE3_S>();
        qOutV_.FreeTensor(order);
    }

    // The order of the `above` keys beyond the k-th (order values `v`, over
    // `padded` <= 128 lanes) on the vector unit, without a scalar wait per
    // key: key i's rank is the number of keys j with v_j > v_i, or v_j = v_i
    // and j < i. Rows of a compare matrix are keys i (v_i broadcast from its
    // own 32-byte block, Brcb), lanes are keys j (v read with repeat stride
    // 0); the rank is the row sum of the selected ones. The inverse
    // permutation is a second matrix (rank_i = row r, row sum of i), and two
    // Gathers place keys and indices. Masks 0..2 and bufTmp_/bufRes_ are
    // free at this point of a row.
    __aicore__ inline void RankByMatrix(const LocalTensor<float>& v, const LocalTensor<TBits>& raw,
                                        const LocalTensor<int32_t>& idx, const LocalTensor<TBits>& outR,
                                        const LocalTensor<int32_t>& outI, uint32_t above, uint32_t padded) {
        LocalTensor<float> tmp = bufTmp_.Get<float>();
        LocalTensor<float> lane = tmp, ones = tmp[128], zeros = tmp[136], bv = tmp[256], bi = tmp[1280];
        LocalTensor<float> cnt = tmp[2304], rank = tmp[2560], inv = tmp[2816];
        LocalTensor<int32_t> offR = tmp[3072].template ReinterpretCast<int32_t>();
        LocalTensor<int32_t> offI = tmp[3328].template ReinterpretCast<int32_t>();
        LocalTensor<float> mat = bufRes_.Get<float>();
        LocalTensor<uint8_t> gt = Mask(0), eq = Mask(1), low = Mask(2);
        const uint8_t blocks = static_cast<uint8_t>((above + 7) / 8);  // Brcb repeats: 8 keys each
        PipeBarrier<PIPE_V>();  // after Order's last reads of bufTmp_ and the row's uses of bufRes_
        CreateVecIndex(lane, 0.0f, 128);
        Duplicate(ones, 1.0f, 8);
        Duplicate(zeros, 0.0f, 8);
        Duplicate(rank, -1.0f, 128);  // lanes past `above` match no rank
        Duplicate(cnt, 0.0f, 256);
        PipeBarrier<PIPE_V>();
        const BrcbRepeatParams brcb(1, 8);
        Brcb(bv, v, blocks, brcb);  // block i: v_i
        Brcb(bi, lane, blocks, brcb);  // block i: i
        PipeBarrier<PIPE_V>();
        // Row r of a block of rows against lanes [64h, 64h + 64): src0 the
        // lanes (repeat stride 0), src1 row r's block (block stride 0).
        const BinaryRepeatParams rowVsLanes(1, 1, 0, 8, 0, 1);
        const BinaryRepeatParams pick(1, 0, 0, 8, 0, 0);  // both sources one constant block
        const BinaryRepeatParams pickLane(1, 1, 0, 8, 0, 0);  // src0 the lanes, src1 a block
        // rank[i]: the keys beyond key i and the equal ones before it.
        RowSums(rank, cnt, mat, above, padded, [&](uint32_t r0, uint8_t rows, uint32_t h) {
            Compare(gt, v[64 * h], bv[8 * r0], CMPMODE::GT, static_cast<uint64_t>(64), rows, rowVsLanes);
            Compare(eq, v[64 * h], bv[8 * r0], CMPMODE::EQ, static_cast<uint64_t>(64), rows, rowVsLanes);
            Compare(low, lane[64 * h], bi[8 * r0], CMPMODE::LT, static_cast<uint64_t>(64), rows, rowVsLanes);
            PipeBarrier<PIPE_V>();
            const int32_t words = static_cast<int32_t>(rows) * 4;  // 64 bits a row
            And(eq.ReinterpretCast<uint16_t>(), eq.ReinterpretCast<uint16_t>(), low.ReinterpretCast<uint16_t>(), words);
            PipeBarrier<PIPE_V>();
            Or(gt.ReinterpretCast<uint16_t>(), gt.ReinterpretCast<uint16_t>(), eq.ReinterpretCast<uint16_t>(), words);
            PipeBarrier<PIPE_V>();
            Select(mat, gt, ones, zeros, SELMODE::VSEL_TENSOR_TENSOR_MODE, static_cast<uint64_t>(64), rows, pick);
        });
        // inv[r]: the key whose rank is r.
        RowSums(inv, cnt, mat, above, padded, [&](uint32_t r0, uint8_t rows, uint32_t h) {
            Compare(eq, rank[64 * h], bi[8 * r0], CMPMODE::EQ, static_cast<uint64_t>(64), rows, rowVsLanes);
            PipeBarrier<PIPE_V>();
            Select(mat, eq, lane[64 * h], zeros, SELMODE::VSEL_TENSOR_TENSOR_MODE, static_cast<uint64_t>(64), rows,
                   pickLane);
        });
        Cast(offI, inv, RoundMode::CAST_RINT, above);  // exact small integers
        PipeBarrier<PIPE_V>();
        Muls(offR, offI, static_cast<int32_t>(sizeof(TBits)), static_cast<int32_t>(above));
        Muls(offI, offI, static_cast<int32_t>(sizeof(int32_t)), static_cast<int32_t>(above));
        PipeBarrier<PIPE_V>();
        Gather(outR, raw, offR.ReinterpretCast<uint32_t>(), 0, above);
        Gather(outI, idx, offI.ReinterpretCast<uint32_t>(), 0, above);
    }

    // sums[r] (r < rows) = the sum of row r of a 0/1 matrix that `fill(r0,
    // n, h)` selects into `mat` for rows [r0, r0 + n) (n <= 64) and lanes
    // [64h, 64h + 64): a WholeReduceSum per block and half into `cnt`
    // (halves 128 apart; the second half stays 0 when `padded` is 64), then
    // the halves added.
    template <typename Fill>
    __aicore__ inline void RowSums(const LocalTensor<float>& sums, const LocalTensor<float>& cnt,
                                   const LocalTensor<float>& mat, uint32_t rows, uint32_t padded, Fill fill) {
        for (uint32_t r0 = 0; r0 < rows; r0 += 64) {
            const uint8_t n = static_cast<uint8_t>(rows - r0 < 64 ? rows - r0 : 64);
            for (uint32_t h = 0; h * 64 < padded; ++h) {
                fill(r0, n, h);
                PipeBarrier<PIPE_V>();
                WholeReduceSum(cnt[128 * h + r0], mat, 64, n, 1, 1, 8);
                PipeBarrier<PIPE_V>();
            }
        }
        Add(sums, cnt, cnt[128], static_cast<int32_t>(rows));
        PipeBarrier<PIPE_V>();
    }

    // The same order one key at a time: counts by GatherMask (a scalar wait
    // each), ranks and placement on the scalar unit.
    __aicore__ inline void RankOneByOne(const LocalTensor<float>& v, const LocalTensor<TBits>& raw,
                                        const LocalTensor<int32_t>& idx, const LocalTensor<TBits>& outR,
                                        const LocalTensor<int32_t>& outI, uint32_t above, uint32_t padded,
                                        uint32_t nans) {
        PipeSync<HardEvent::MTE2_S>();
        PipeSync<HardEvent::V_S>();
        LocalTensor<float> scratch = bufTmp_.Get<float>()[kTile / 2];
        const GatherMaskParams once(1, 1, 8, 0);
        uint32_t nansSeen = 0, infsSeen = 0;
        // Eight keys at a time (masks 2j and 2j + 1), so that the pipe
        // drains twice per eight keys rather than twice per key.
        constexpr uint32_t kGroup = 8;
        for (uint32_t i0 = 0; i0 < above; i0 += kGroup) {
            const uint32_t group = above - i0 < kGroup ? above - i0 : kGroup;
            for (uint32_t j = 0; j < group; ++j) {
                const float x = v.GetValue(i0 + j);
                CompareScalar(Mask(2 * j), v, x, CMPMODE::GT, padded);
                CompareScalar(Mask(2 * j + 1), v, x, CMPMODE::EQ, padded);
            }
            PipeBarrier<PIPE_V>();
            for (uint32_t j = 0; j < group; ++j) {
                const uint32_t i = i0 + j;
                LocalTensor<uint8_t> gt = Mask(2 * j), eq = Mask(2 * j + 1);
                uint64_t beyond = 0, before = 0;
                GatherMask(scratch, v, gt.ReinterpretCast<uint32_t>(), true, above, once, beyond);
                if (i > 0) GatherMask(scratch, v, eq.ReinterpretCast<uint32_t>(), true, i, once, before);
                uint32_t rank = static_cast<uint32_t>(beyond + before);
                if (nans > 0 && beyond == 0) rank = IsNan(raw.GetValue(i)) ? nansSeen++ : nans + infsSeen++;
                outI.SetValue(rank, idx.GetValue(i));
                outR.SetValue(rank, raw.GetValue(i));
            }
            ResetMask();
            PipeBarrier<PIPE_V>();
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> qRaw_;
    TQue<TPosition::VECIN, 1> qCandV_, qCandI_;
    TQue<TPosition::VECOUT, 1> qOutV_, qOutI_, qOutR_;
    TBuf<TPosition::VECCALC> bufV_, bufTmp_, bufRes_, bufIota_;
    UbArena ub_;
    GlobalTensor<TBits> gBits_, gVal_;
    GlobalTensor<int32_t> gIdx_, gSlots_, gCandI_;
    GlobalTensor<float> gMax_, gCandV_;
    GlobalTensor<TCand> gCandR_;
    TopKTiling t_;
    uint32_t core_ = 0;
    uint64_t chunks_ = 0;  // chunks per row
    int32_t topHi_ = 0;    // the code above the row's largest key (BoundPick)
};

}  // namespace topk

template <typename TKey>
__aicore__ inline void TopK(GM_ADDR keys, GM_ADDR values, GM_ADDR indices, GM_ADDR workspace, const TopKTiling& t) {
    topk::Selector<TKey> select;
    select.Run(keys, values, indices, workspace, t);
}

}  // namespace ascend_scan
