// Reductions on the vector cores: the sum or the max/min of a range of GM
// (chunks cast to the accumulator type and combined lane-wise, lanes folded at
// the end), the partial sums of the cores in their GM slots, the range of a
// flag array, and the NaN check of half inputs.
#pragma once

#include "blocks_ops.h"
#include "blocks_ub_io.h"

namespace ascend_scan {

// Combines records [first, first + count) of `recs` (each `width` lanes, a
// multiple of 32 bytes) lane-wise into record `first` with Op (OpSum,
// OpMax, OpMin, OpOr), in place, by halving (one Op::Vec per level); the
// other records of the range are overwritten.
template <typename Op = OpSum, typename T>
__aicore__ inline void FoldRecords(const LocalTensor<T>& recs, uint32_t first, uint32_t count, uint32_t width) {
    while (count > 1) {
        const uint32_t keep = count - count / 2;  // the last count / 2 records fold onto the first
        Op::Vec(recs[first * width], recs[first * width], recs[(first + keep) * width], (count - keep) * width);
        PipeBarrier<PIPE_V>();
        count = keep;
    }
}

// Sum of x[begin, end) on a vector core, in the accumulator type: chunks of
// `chunk` (a power of two) elements are cast and added into a vector
// accumulator, folded at the end (A2 has no integer reductions). `in` is a VECIN
// queue of chunk inputs; acc, xa (chunk accumulators) and tmp (chunk halves)
// are scratch.
template <typename TIn, typename TAcc, typename Que>
__aicore__ inline TAcc SumRange(const GlobalTensor<TIn>& gx, uint64_t begin, uint64_t end, uint32_t chunk, Que& in,
                                const LocalTensor<TAcc>& acc, const LocalTensor<TAcc>& xa,
                                const LocalTensor<half>& tmp) {
    Duplicate(acc, static_cast<TAcc>(0), static_cast<int32_t>(chunk));
    PipeBarrier<PIPE_V>();
    for (uint64_t off = begin; off < end; off += chunk) {
        uint32_t count = static_cast<uint32_t>(end - off < chunk ? end - off : chunk);
        LocalTensor<TIn> x = in.template AllocTensor<TIn>();
        if (count < chunk) ZeroBeforeLoad(x, chunk);  // only `count` elements arrive
        LoadAny(x, gx[off], count);
        in.EnQue(x);
        x = in.template DeQue<TIn>();
        CastToAcc(xa, x, tmp, chunk);
        in.FreeTensor(x);
        PipeBarrier<PIPE_V>();
        Add(acc, acc, xa, static_cast<int32_t>(chunk));
        PipeBarrier<PIPE_V>();
    }
    // Fold the lanes on the vector unit down to one 32-byte block (exact for
    // int32, a pairwise tree for float), then add the last 8 on the scalar unit.
    constexpr uint32_t kBlockLanes = 32 / sizeof(TAcc);
    FoldRecords(acc, 0, chunk / kBlockLanes, kBlockLanes);
    PipeSync<HardEvent::V_S>();
    TAcc sum = 0;
    for (uint32_t i = 0; i < kBlockLanes; ++i) sum = static_cast<TAcc>(sum + acc.GetValue(i));
    ScalarReadsDone();
    return sum;
}

// Loads the `count` slots of `sums` and returns the sum of the first `upto`.
template <typename TAcc>
__aicore__ inline TAcc SumSlots(const GlobalTensor<TAcc>& sums, const LocalTensor<TAcc>& scratch, uint32_t count,
                                uint32_t upto) {
    DataCopy(scratch, sums, count * kSumSlot<TAcc>);
    PipeSync<HardEvent::MTE2_S>();
    TAcc sum = 0;
    for (uint32_t i = 0; i < upto; ++i) sum = static_cast<TAcc>(sum + scratch.GetValue(i * kSumSlot<TAcc>));
    ScalarReadsDone();
    return sum;
}

// int8 flags as halves for their checks: each byte read as uint8, so that
// a negative flag becomes 128..255 and one lane-wise Max per tile (no Min)
// finds a flag outside 0/1 at either end (FoldFlagMax).
__aicore__ inline void FlagBytesAsHalf(const LocalTensor<half>& h, const LocalTensor<int8_t>& flags, uint32_t count) {
    Cast(h, flags.ReinterpretCast<uint8_t>(), RoundMode::CAST_NONE, count);
}

// Dequeues the oldest loaded flags from `q` into `h` as halves
// (FlagBytesAsHalf over `count` lanes) and frees their buffer; `h` is ready
// for vector reads.
template <typename Queue>
__aicore__ inline LocalTensor<half> DeQueFlagsAsHalf(Queue& q, const LocalTensor<half>& h, uint32_t count) {
    LocalTensor<int8_t> f = q.template DeQue<int8_t>();
    PipeBarrier<PIPE_V>();  // vector reads of h's last contents
    FlagBytesAsHalf(h, f, count);
    PipeBarrier<PIPE_V>();
    q.FreeTensor(f);
    return h;
}

// Phase 1 of SEGSUM and SPLIT walks the tiles of [begin, end) last to first
// (k = tiles..1, tile k at begin + (k - 1) * tile), each tile's flags loaded
// kFlagsAhead tiles before its turn: one load at a time was latency-bound.
// The flags' queue holds kFlagsAhead + 1 buffers.
constexpr uint32_t kFlagsAhead = 3;

// The flag loads due before tile k of that walk into `q` (the first tile
// also loads the ones before it).
template <typename Queue>
__aicore__ inline void LoadFlagsAhead(Queue& q, const GlobalTensor<int8_t>& gf, uint64_t begin, uint64_t end,
                                      uint32_t tile, uint64_t k) {
    const uint64_t tiles = (end - begin + tile - 1) / tile;
    // Tiles lowest..k at the first tile, then only `lowest` (if it exists).
    const uint64_t lowest = k > kFlagsAhead ? k - kFlagsAhead : 1;
    const uint64_t highest = k == tiles ? k : (k > kFlagsAhead ? lowest : 0);
    for (uint64_t j = highest; j >= lowest; --j) {
        const uint64_t off = begin + (j - 1) * tile;
        EnqueueFlags(q, gf[off], static_cast<uint32_t>(end - off < tile ? end - off : tile), tile);
    }
}

// Counting 0/1 flags lane-wise: one Add of a tile's halves into `ones` per
// tile (a half lane counts exactly up to 2048), folded by FoldLaneCounts at
// least every kLaneCountFlush tiles.
constexpr uint32_t kLaneCountFlush = 1024;

// Whether the lane counts are due for a fold after tile k of the backward
// walk over `tiles` tiles: every kLaneCountFlush tiles and after the last.
__aicore__ inline bool LaneCountsDue(uint64_t tiles, uint64_t k) {
    return k == 1 || (tiles - k + 1) % kLaneCountFlush == 0;
}

// The lane counts in `ones` (len halves, each <= kLaneCountFlush) summed
// exactly in f32 (len * kLaneCountFlush <= 2^24), and the lanes zeroed.
// `wide`: len floats; `red`: 8 floats; `work`: ReduceSum's scratch (len / 64
// floats). Flags outside 0/1 (refused by the host) can overflow a lane to
// inf, which has no integer value: the count is then 0.
__aicore__ inline uint64_t FoldLaneCounts(const LocalTensor<half>& ones, const LocalTensor<float>& wide,
                                          const LocalTensor<float>& red, const LocalTensor<float>& work, uint32_t len) {
    PipeBarrier<PIPE_V>();
    Cast(wide, ones, RoundMode::CAST_NONE, len);
    PipeBarrier<PIPE_V>();
    Duplicate(ones, static_cast<half>(0.0f), static_cast<int32_t>(len));
    ReduceSum(red, wide, work, static_cast<int32_t>(len));
    PipeSync<HardEvent::V_S>();
    const float v = red.GetValue(0);
    ScalarReadsDone();
    PipeBarrier<PIPE_V>();
    return v <= 16777216.0f ? static_cast<uint64_t>(v) : 0;
}

// The flag range from `hi`, the lane-wise maxima of FlagBytesAsHalf (len
// halves, len a power of two >= 16; folded in place: halving on the vector
// unit down to one 32-byte block, then the scalar unit). The largest byte
// b: b >= 128 is a negative flag, given as fmin = b - 256 (fmax 0); else
// fmin is 0 and fmax = b.
__aicore__ inline void FoldFlagMax(const LocalTensor<half>& hi, uint32_t len, int32_t& fmin, int32_t& fmax) {
    PipeBarrier<PIPE_V>();
    FoldRecords<OpMax>(hi, 0, len / 16, 16);
    PipeSync<HardEvent::V_S>();
    float b = 0.0f;
    for (uint32_t i = 0; i < 16; ++i) {
        const float h = static_cast<float>(hi.GetValue(i));
        b = h > b ? h : b;
    }
    const int32_t top = static_cast<int32_t>(b);
    fmin = top >= 128 ? top - 256 : 0;
    fmax = top >= 128 ? 0 : top;
    ScalarReadsDone();
}

// What the NaN checks share: Publish() folds the lanes and writes 16 int16
// (one 32-byte GM slot), Seen() folds them and tells on the scalar unit.
// Check (CRTP) has Mask() and Merge() (the callers', the marks of inputs and
// their merge into folded_), Fold() (down to 16 lanes) and LaneNan(lane).
template <typename Check>
class NanLanes {
public:
    __aicore__ inline void Publish(const GlobalTensor<int16_t>& slot) {
        static_cast<Check*>(this)->Fold();
        PipeSync<HardEvent::V_MTE3>();
        DataCopy(slot, folded_, 16);
        PipeSync<HardEvent::MTE3_V>();
    }

    // Whether any input seen so far is a NaN (later Merge calls go on
    // accumulating into the folded lanes).
    __aicore__ inline bool Seen() {
        static_cast<Check*>(this)->Fold();
        PipeSync<HardEvent::V_S>();
        bool nan = false;
        for (uint32_t i = 0; i < 16; ++i) {
            if (Check::LaneNan(folded_.GetValue(i))) nan = true;
        }
        ScalarReadsDone();
        return nan;
    }

protected:
    LocalTensor<int16_t> folded_;  // the check's accumulator, as int16 lanes
};

// NaN detection for 16-bit float inputs (the reference leaves the NaN
// behaviour of vector Max/Min undocumented, so max/min never rely on it).
// Keeps the lane-wise largest (bits & 0x7fff) seen; a value above kInf (the
// bits of +inf: 0x7c00 half, 0x7f80 bfloat16) is a NaN.
template <int16_t kInf>
class NanCheck16 : public NanLanes<NanCheck16<kInf>> {
public:
    static constexpr int16_t kInfBits = kInf;

    // acc and mask: `lanes` int16 each (lanes a power of two >= 16).
    __aicore__ inline void Init(const LocalTensor<int16_t>& acc, const LocalTensor<int16_t>& mask, uint32_t lanes) {
        this->folded_ = acc;
        mask_ = mask;
        lanes_ = lanes;
        Duplicate(acc, static_cast<int16_t>(0), static_cast<int32_t>(lanes));
        Duplicate(mask_, static_cast<int16_t>(0x7fff), static_cast<int32_t>(lanes));
        PipeBarrier<PIPE_V>();
    }

    // Mask() then (after a PIPE_V barrier) Merge() take `count` (<= lanes)
    // inputs; `tmp`: count int16 of scratch. (Templates only so that callers
    // may name them in discarded branches.)
    template <typename T>
    __aicore__ inline void Mask(const LocalTensor<T>& x, const LocalTensor<int16_t>& tmp, uint32_t count) {
        static_assert(sizeof(T) == 2, "NanCheck16 takes 16-bit inputs");
        And(tmp, x.template ReinterpretCast<int16_t>(), mask_, static_cast<int32_t>(count));
    }
    __aicore__ inline void Merge(const LocalTensor<int16_t>& tmp, uint32_t count) {
        Max(this->folded_, this->folded_, tmp, static_cast<int32_t>(count));
    }

    // Whether the 16-bit float with these bits is a NaN (also: a folded lane).
    __aicore__ static inline bool IsNan(int16_t bits) { return (bits & 0x7fff) > kInfBits; }
    __aicore__ static inline bool LaneNan(int16_t lane) { return lane > kInfBits; }

    __aicore__ inline void Fold() {
        FoldRecords<OpMax>(this->folded_, 0, lanes_ / 16, 16);
    }

private:
    LocalTensor<int16_t> mask_;
    uint32_t lanes_ = 0;
};
using HalfNanCheck = NanCheck16<0x7c00>;
using Bf16NanCheck = NanCheck16<0x7f80>;

// NaN detection for fp32 inputs: Compare(x, x, NE) marks the NaNs, and the
// marks are OR-ed into lanes of 16 bits (a nonzero lane: a NaN). Same calls
// as NanCheck16; Mask() compares whole 256-byte repeats (count a multiple of
// 64) and writes count / 8 bytes of tmp.
class FloatNanCheck : public NanLanes<FloatNanCheck> {
public:
    // acc: `lanes` int16 (lanes a power of two >= 256); mask: unused.
    __aicore__ inline void Init(const LocalTensor<int16_t>& acc, const LocalTensor<int16_t>& mask, uint32_t lanes) {
        (void)mask;
        folded_ = acc;
        words_ = lanes / 16;
        Duplicate(acc, static_cast<int16_t>(0), static_cast<int32_t>(words_));
        PipeBarrier<PIPE_V>();
    }
    template <typename T>
    __aicore__ inline void Mask(const LocalTensor<T>& x, const LocalTensor<int16_t>& tmp, uint32_t count) {
        static_assert(std::is_same<T, float>::value, "FloatNanCheck takes fp32 inputs");
        Compare(tmp.ReinterpretCast<uint8_t>(), x, x, CMPMODE::NE, count);
    }
    __aicore__ inline void Merge(const LocalTensor<int16_t>& tmp, uint32_t count) {
        Or(Words(), Words(), tmp.ReinterpretCast<uint16_t>(), static_cast<int32_t>(count / 16));
    }

    // Whether the fp32 with these bits is a NaN.
    __aicore__ static inline bool IsNan(int32_t bits) { return (bits & 0x7fffffff) > 0x7f800000; }
    __aicore__ static inline bool LaneNan(int16_t lane) { return lane != 0; }

    __aicore__ inline void Fold() {
        FoldRecords<OpOr>(Words(), 0, words_ / 16, 16);
    }

private:
    __aicore__ inline LocalTensor<uint16_t> Words() { return folded_.ReinterpretCast<uint16_t>(); }
    uint32_t words_ = 0;
};

// The NaN check of an input type (void: integers have no NaN).
template <typename T>
struct NanCheckOf {
    using type = void;
};
template <>
struct NanCheckOf<half> {
    using type = HalfNanCheck;
};
template <>
struct NanCheckOf<bfloat16_t> {
    using type = Bf16NanCheck;
};
template <>
struct NanCheckOf<float> {
    using type = FloatNanCheck;
};

// Loads the chunk of x at `off` (at most `chunk` elements before `end`) into
// a new tensor of the queue `in`, padded with the identity of Op.
template <typename Op, typename TIn, typename Que>
__aicore__ inline void OpLoadChunk(const GlobalTensor<TIn>& gx, uint64_t off, uint64_t end, uint32_t chunk, Que& in) {
    uint32_t count = static_cast<uint32_t>(end - off < chunk ? end - off : chunk);
    LocalTensor<TIn> x = in.template AllocTensor<TIn>();
    if (count < chunk) {
        FillIdentity<Op>(x, chunk);
        PipeSync<HardEvent::V_MTE2>();
    }
    LoadPadded(x, gx[off], count, Op::template Identity<TIn>());
    in.EnQue(x);
}

// The operator Op over x[begin, end) on a vector core, in the accumulator
// type (exact: max/min never round). Like SumRange: chunks of `chunk` (a power
// of two) inputs are padded with the identity, cast and combined into a vector
// accumulator, whose lanes are folded at the end; the next chunk loads while
// the current one is combined (`in` needs two buffers and depth 2). `nan`
// (may be null; used only when it is NanCheckOf<TIn>) sees every input.
template <typename Op, typename TIn, typename TAcc, typename Que, typename Nan>
__aicore__ inline TAcc OpRange(const GlobalTensor<TIn>& gx, uint64_t begin, uint64_t end, uint32_t chunk, Que& in,
                               const LocalTensor<TAcc>& acc, const LocalTensor<TAcc>& xa, const LocalTensor<half>& tmp,
                               Nan* nan) {
    Duplicate(acc, Op::template Identity<TAcc>(), static_cast<int32_t>(chunk));
    PipeBarrier<PIPE_V>();
    if (begin < end) OpLoadChunk<Op>(gx, begin, end, chunk, in);
    for (uint64_t off = begin; off < end; off += chunk) {
        if (end - off > chunk) OpLoadChunk<Op>(gx, off + chunk, end, chunk, in);
        LocalTensor<TIn> x = in.template DeQue<TIn>();
        // The NaN mask (into tmp, unused by the half cast) shares the barriers.
        constexpr bool kChecks = std::is_same<Nan, typename NanCheckOf<TIn>::type>::value;
        bool check = false;
        if constexpr (kChecks) {
            check = nan != nullptr;
            if (check) nan->Mask(x, tmp.template ReinterpretCast<int16_t>(), chunk);
        } else {
            (void)nan;
            (void)check;
        }
        CastToAcc(xa, x, tmp, chunk);
        in.FreeTensor(x);
        PipeBarrier<PIPE_V>();
        Op::Vec(acc, acc, xa, chunk);
        if constexpr (kChecks) {
            if (check) nan->Merge(tmp.template ReinterpretCast<int16_t>(), chunk);
        }
        PipeBarrier<PIPE_V>();
    }
    constexpr uint32_t kBlockLanes = 32 / sizeof(TAcc);
    FoldRecords<Op>(acc, 0, chunk / kBlockLanes, kBlockLanes);
    PipeSync<HardEvent::V_S>();
    TAcc r = acc.GetValue(0);
    for (uint32_t i = 1; i < kBlockLanes; ++i) r = Op::Scalar(r, acc.GetValue(i));
    ScalarReadsDone();
    return r;
}

}  // namespace ascend_scan
