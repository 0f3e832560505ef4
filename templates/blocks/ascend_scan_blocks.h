// Device-side building blocks shared by the ascend-scan kernels: tile loads
// into the cube's fractal layouts, the cube tile scan, the AIC->AIV hand-off
// through a GM ring with CrossCore flags, and carry propagation on the vector
// unit. Written against the AscendC API of CANN 8.x/9.x (Atlas A2).
#pragma once

#include "kernel_operator.h"

namespace ascend_scan {

using namespace AscendC;

// Cross-core flag ids (0..10 are free for kernels; 11..14 belong to SyncAll).
constexpr uint16_t kFlagTileReady = 1;  // AIC -> AIV: a ring slot holds a tile
constexpr uint16_t kFlagSlotFree = 2;   // AIV -> AIC: a ring slot may be reused

template <typename T>
struct CubeTraits;
template <>
struct CubeTraits<half> {
    using Acc = float;
    static constexpr uint32_t kC0 = 16;  // elements per 32-byte fractal row
};
template <>
struct CubeTraits<bfloat16_t> {
    using Acc = float;
    static constexpr uint32_t kC0 = 16;
};
template <>
struct CubeTraits<int8_t> {
    using Acc = int32_t;
    static constexpr uint32_t kC0 = 32;
};
template <>
struct CubeTraits<float> {
    using Acc = float;
    static constexpr uint32_t kC0 = 8;
};

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// Orders everything the source pipe of E has issued before whatever its
// destination pipe issues next: a SetFlag/WaitFlag pair on an id the TPipe
// hands out (its queues take ids of the same events from the same eight).
template <HardEvent E>
__aicore__ inline void PipeSync() {
    event_t id = static_cast<event_t>(GetTPipePtr()->FetchEventID(E));
    SetFlag<E>(id);
    WaitFlag<E>(id);
}

// After scalar reads of UB scratch: the vector unit and MTE2 may overwrite it.
__aicore__ inline void ScalarReadsDone() {
    PipeSync<HardEvent::S_V>();
    PipeSync<HardEvent::S_MTE2>();
}
constexpr uint32_t CeilDivConst(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// Loads the first `count` elements of a row-major s x s tile from GM into L1
// in Nz layout ([s/C0][s rows][C0]). Rows past the data are left as they are
// (their results are never stored); the columns of a partial last row past
// the data are zeroed from `zeros` (s zero elements in GM), so that garbage
// (possibly NaN) cannot reach valid outputs through the zeros of U.
template <typename T>
__aicore__ inline void LoadTileNz(const LocalTensor<T>& a1, const GlobalTensor<T>& src, const GlobalTensor<T>& zeros,
                                  uint32_t s, uint32_t count) {
    constexpr uint32_t c0 = CubeTraits<T>::kC0;
    uint32_t fullRows = count / s;
    uint32_t tail = count % s;
    if (fullRows > 0) {
        Nd2NzParams p(1, static_cast<uint16_t>(fullRows), static_cast<uint16_t>(s), 0, static_cast<uint16_t>(s),
                      static_cast<uint16_t>(s), 1, 0);
        DataCopy(a1, src, p);
    }
    if (tail > 0) {
        Nd2NzParams p(1, 1, static_cast<uint16_t>(tail), 0, static_cast<uint16_t>(tail), static_cast<uint16_t>(s), 1, 0);
        DataCopy(a1[fullRows * c0], src[static_cast<uint64_t>(fullRows) * s], p);
        uint32_t padded = CeilDiv(tail, c0) * c0;  // Nd2Nz zero-fills up to here
        if (padded < s) {
            Nd2NzParams z(1, 1, static_cast<uint16_t>(s - padded), 0, static_cast<uint16_t>(s - padded),
                          static_cast<uint16_t>(s), 1, 0);
            DataCopy(a1[(padded / c0) * s * c0 + fullRows * c0], zeros, z);
        }
    }
}

// L1 Nz (s rows per column block) -> L0A Zz for the first m1 fractal rows.
template <typename T>
__aicore__ inline void LoadL0A(const LocalTensor<T>& a2, const LocalTensor<T>& a1, uint32_t s, uint32_t m1) {
    constexpr uint32_t frac = 512 / sizeof(T);
    uint32_t k1 = CeilDiv(s, CubeTraits<T>::kC0);
    for (uint32_t i = 0; i < m1; ++i) {
        LoadData2DParams p(0, static_cast<uint8_t>(k1), static_cast<uint16_t>(s / 16), 0, 0, false, 0);
        LoadData(a2[i * k1 * frac], a1[i * frac], p);
    }
}

// A K x N matrix B given transposed (N x K row-major in GM) lands in L1 Nz,
// from where one contiguous LoadData yields the Zn layout L0B needs (works for
// int8 and float too, where LoadData cannot transpose).
template <typename T>
__aicore__ inline void LoadL0BTransposed(const LocalTensor<T>& b2, const LocalTensor<T>& b1, uint32_t k, uint32_t n) {
    uint32_t fractals = CeilDiv(k, CubeTraits<T>::kC0) * CeilDiv(n, 16);
    LoadData2DParams p(0, static_cast<uint8_t>(fractals), 1, 0, 0, false, 0);
    LoadData(b2, b1, p);
}

// Loads a constant K x N matrix B, stored transposed (N x K row-major) in GM,
// into L0B through the L1 staging buffer b1. Waits for both copies.
template <typename T>
__aicore__ inline void LoadConstantB(const LocalTensor<T>& b2, const LocalTensor<T>& b1, const GlobalTensor<T>& src,
                                     uint32_t k, uint32_t n) {
    Nd2NzParams p(1, static_cast<uint16_t>(n), static_cast<uint16_t>(k), 0, static_cast<uint16_t>(k),
                  static_cast<uint16_t>(n), 1, 0);
    DataCopy(b1, src, p);
    PipeSync<HardEvent::MTE2_MTE1>();
    LoadL0BTransposed(b2, b1, k, n);
    PipeSync<HardEvent::MTE1_M>();
}

// C = A @ B for an (m1*16) x s by s x s product (overwrite L0C).
template <typename Acc, typename T>
__aicore__ inline void TileMatmul(const LocalTensor<Acc>& c1, const LocalTensor<T>& a2, const LocalTensor<T>& b2,
                                  uint32_t s, uint32_t m1) {
    MmadParams p;
    p.m = static_cast<uint16_t>(m1 * 16);  // whole fractal rows: never the m == 1 GEMV layout
    p.n = static_cast<uint16_t>(s);
    p.k = static_cast<uint16_t>(s);
    p.cmatrixInitVal = true;
    Mmad(c1, a2, b2, p);
}

// L0C (Nz) -> GM row-major rows x s.
template <typename Acc>
__aicore__ inline void StoreTile(const GlobalTensor<Acc>& dst, const LocalTensor<Acc>& c1, uint32_t s, uint32_t rows,
                                 uint32_t m1) {
    FixpipeParamsV220 p;
    p.nSize = static_cast<uint16_t>(s);
    p.mSize = static_cast<uint16_t>(rows);
    p.srcStride = static_cast<uint16_t>(m1 * 16);
    p.dstStride = s;
    p.quantPre = QuantMode_t::NoQuant;
    Fixpipe<Acc, Acc, CFG_ROW_MAJOR>(dst, c1, p);
}

// Stores the first `count` results of a tile (rows of s) from L0C to GM
// without writing past element `count` (the partial last row is stored alone).
template <typename Acc>
__aicore__ inline void StoreTileRows(const GlobalTensor<Acc>& dst, const LocalTensor<Acc>& c1, uint32_t s,
                                     uint32_t count, uint32_t m1) {
    uint32_t fullRows = count / s;
    uint32_t tail = count % s;
    if (fullRows > 0) StoreTile(dst, c1, s, fullRows, m1);
    if (tail > 0) {
        FixpipeParamsV220 p;
        p.nSize = static_cast<uint16_t>(tail);
        p.mSize = 1;
        p.srcStride = static_cast<uint16_t>(m1 * 16);
        p.dstStride = s;
        p.quantPre = QuantMode_t::NoQuant;
        // Row r of the Nz result starts at element r*16 of the first column fractal.
        Fixpipe<Acc, Acc, CFG_ROW_MAJOR>(dst[static_cast<uint64_t>(fullRows) * s], c1[fullRows * 16], p);
    }
}

// Loads `count` elements from GM into UB; the rest of the last 32-byte block
// is zero (unrequested pad bytes would repeat the block's first element).
template <typename T>
__aicore__ inline void LoadAny(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
    uint32_t tailBytes = (count * static_cast<uint32_t>(sizeof(T))) % 32;
    uint8_t rightPad = static_cast<uint8_t>(tailBytes ? (32 - tailBytes) / sizeof(T) : 0);
    DataCopyExtParams p(1, count * static_cast<uint32_t>(sizeof(T)), 0, 0, 0);
    DataCopyPadExtParams<T> pad(rightPad != 0, 0, rightPad, static_cast<T>(0));
    DataCopyPad(dst, src, p, pad);
}

// Converts scan inputs to the accumulator type: half and bf16 -> float
// directly, int8 -> int32 through half (A2 has no direct int8 -> int32 cast;
// all exact), float -> float a copy.
template <typename TAcc, typename TIn>
__aicore__ inline void CastToAcc(const LocalTensor<TAcc>& dst, const LocalTensor<TIn>& src,
                                 const LocalTensor<half>& tmp, uint32_t count) {
    if constexpr (std::is_same<TIn, int8_t>::value) {
        Cast(tmp, src, RoundMode::CAST_NONE, count);
        PipeBarrier<PIPE_V>();
        Cast(dst, tmp, RoundMode::CAST_RINT, count);
    } else if constexpr (std::is_same<TIn, TAcc>::value) {
        (void)tmp;
        Adds(dst, src, static_cast<TAcc>(0), static_cast<int32_t>(count));
    } else {
        (void)tmp;
        Cast(dst, src, RoundMode::CAST_NONE, count);
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
        if (count < chunk) {
            // Zero the chunk first: only `count` elements arrive.
            Duplicate(x.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0),
                      static_cast<int32_t>(chunk * sizeof(TIn) / 2));
            PipeSync<HardEvent::V_MTE2>();
        }
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
    for (uint32_t w = chunk / 2; w >= kBlockLanes; w /= 2) {
        Add(acc, acc, acc[w], static_cast<int32_t>(w));
        PipeBarrier<PIPE_V>();
    }
    PipeSync<HardEvent::V_S>();
    TAcc sum = 0;
    for (uint32_t i = 0; i < kBlockLanes; ++i) sum = static_cast<TAcc>(sum + acc.GetValue(i));
    ScalarReadsDone();
    return sum;
}

// The tiles [first, last) of `block` in wave `wave` of a multi-core scan
// (waves of perWave tiles, each split into blocks of perBlock tiles).
__aicore__ inline void WaveBlockTiles(uint64_t tiles, uint64_t perWave, uint64_t perBlock, uint32_t wave,
                                      uint32_t block, uint64_t& first, uint64_t& last) {
    uint64_t waveFirst = static_cast<uint64_t>(wave) * perWave;
    uint64_t waveEnd = waveFirst + perWave < tiles ? waveFirst + perWave : tiles;
    first = waveFirst + static_cast<uint64_t>(block) * perBlock;
    if (first > waveEnd) first = waveEnd;
    last = first + perBlock < waveEnd ? first + perBlock : waveEnd;
}

// Per-vector-core partial sums live in 32-byte GM slots (one DMA block each,
// so no two cores write the same block).
template <typename TAcc>
constexpr uint32_t kSumSlot = 32 / sizeof(TAcc);

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

// Writes `count` elements from UB to GM (any count, any element offset).
template <typename T>
__aicore__ inline void StoreAny(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    if (count == 0) return;
    DataCopyExtParams p(1, count * static_cast<uint32_t>(sizeof(T)), 0, 0, 0);
    DataCopyPad(dst, src, p);
}

// Writes a slot of `words` int32 (filled by scalar writes) from UB to GM and
// waits for it, so the slot may be refilled at once.
__aicore__ inline void StoreSlot(const GlobalTensor<int32_t>& dst, const LocalTensor<int32_t>& own, uint32_t words) {
    PipeSync<HardEvent::S_MTE3>();
    DataCopy(dst, own, words);
    PipeSync<HardEvent::MTE3_S>();
}

// The smallest and largest flag from lane-wise minima `lo` and maxima `hi`
// (len halves each, len a power of two >= 16; both are folded in place):
// halving on the vector unit down to one 32-byte block, then the scalar unit.
__aicore__ inline void FoldFlagRange(const LocalTensor<half>& lo, const LocalTensor<half>& hi, uint32_t len,
                                     int32_t& fmin, int32_t& fmax) {
    PipeBarrier<PIPE_V>();
    for (uint32_t w = len / 2; w >= 16; w /= 2) {
        Min(lo, lo, lo[w], static_cast<int32_t>(w));
        Max(hi, hi, hi[w], static_cast<int32_t>(w));
        PipeBarrier<PIPE_V>();
    }
    PipeSync<HardEvent::V_S>();
    float a = 0.0f, b = 0.0f;
    for (uint32_t i = 0; i < 16; ++i) {
        float l = static_cast<float>(lo.GetValue(i));
        float h = static_cast<float>(hi.GetValue(i));
        a = l < a ? l : a;
        b = h > b ? h : b;
    }
    fmin = static_cast<int32_t>(a);
    fmax = static_cast<int32_t>(b);
    ScalarReadsDone();
}

// Hands a tensor from its producer to its consumer through queue `q`
// (EnQue then DeQue: the queue inserts the pipe sync between them).
template <typename Que, typename T>
__aicore__ inline LocalTensor<T> Handoff(Que& q, const LocalTensor<T>& t) {
    q.EnQue(t);
    return q.template DeQue<T>();
}

// Writes one scalar to GM through UB (scalar write, then MTE3).
template <typename T>
__aicore__ inline void StoreScalar(const GlobalTensor<T>& dst, const LocalTensor<T>& scratch, T value) {
    scratch.SetValue(0, value);
    PipeSync<HardEvent::S_MTE3>();
    StoreAny(dst, scratch, 1);
    PipeSync<HardEvent::MTE3_S>();
}

// A chunk [first, first + count) of an exclusive scan from the same chunk of
// the inclusive one: element i is the inclusive element i - 1, so the chunk
// is stored one element later and its first element is `before` (the value
// before the chunk). Nothing is written outside the chunk, so y may hold the
// inputs of the next chunk. (The inclusive value minus x[i] instead would lose
// a small prefix next to a large x[i]: f32 cancellation.)
template <typename T>
__aicore__ inline void ExclusiveStore(const GlobalTensor<T>& y, const LocalTensor<T>& inclusive, uint64_t first,
                                      uint32_t count, T before, const LocalTensor<T>& scratch) {
    StoreAny(y[first + 1], inclusive, count - 1);
    StoreScalar(y[first], scratch, before);
}

// ---- Operators of the vector-unit scans (sum, max, min) -------------------

// A binary operator of the scans and reductions: the element-wise vector op
// (count form and row form), a copy, the scalar op and the identity of each
// type the kernels use (inputs half / bfloat16_t / int8_t / float,
// accumulators float / int32_t).
struct OpSum {
    template <typename T>
    __aicore__ static inline void Vec(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                      uint32_t count) {
        Add(dst, a, b, static_cast<int32_t>(count));
    }
    template <typename T>
    __aicore__ static inline void Rows(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                       uint64_t mask, uint8_t repeats, const BinaryRepeatParams& p) {
        Add(dst, a, b, mask, repeats, p);
    }
    template <typename T>
    __aicore__ static inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
        Adds(dst, src, static_cast<T>(0), static_cast<int32_t>(count));
    }
    template <typename T>
    __aicore__ static inline T Scalar(T a, T b) {
        return static_cast<T>(a + b);
    }
    template <typename T>
    __aicore__ static inline T Identity() {
        return static_cast<T>(0);
    }
    static constexpr int16_t kInt8Pair = 0;
};

struct OpMax {
    template <typename T>
    __aicore__ static inline void Vec(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                      uint32_t count) {
        Max(dst, a, b, static_cast<int32_t>(count));
    }
    template <typename T>
    __aicore__ static inline void Rows(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                       uint64_t mask, uint8_t repeats, const BinaryRepeatParams& p) {
        Max(dst, a, b, mask, repeats, p);
    }
    template <typename T>
    __aicore__ static inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
        Max(dst, src, src, static_cast<int32_t>(count));  // op(v, v) = v
    }
    template <typename T>
    __aicore__ static inline T Scalar(T a, T b) {
        return a > b ? a : b;
    }
    template <typename T>
    __aicore__ static inline T Identity() {
        if constexpr (std::is_same<T, float>::value) return -__builtin_huge_valf();
        else if constexpr (std::is_same<T, half>::value) return static_cast<half>(-__builtin_huge_valf());
        else if constexpr (std::is_same<T, int32_t>::value) return static_cast<int32_t>(-2147483647 - 1);
        else return static_cast<T>(-128);  // int8_t
    }
    // Two int8 identities as one int16 (to fill int8 buffers with Duplicate).
    static constexpr int16_t kInt8Pair = static_cast<int16_t>(-32640);  // 0x8080
};

struct OpMin {
    template <typename T>
    __aicore__ static inline void Vec(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                      uint32_t count) {
        Min(dst, a, b, static_cast<int32_t>(count));
    }
    template <typename T>
    __aicore__ static inline void Rows(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                       uint64_t mask, uint8_t repeats, const BinaryRepeatParams& p) {
        Min(dst, a, b, mask, repeats, p);
    }
    template <typename T>
    __aicore__ static inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
        Min(dst, src, src, static_cast<int32_t>(count));  // op(v, v) = v
    }
    template <typename T>
    __aicore__ static inline T Scalar(T a, T b) {
        return a < b ? a : b;
    }
    template <typename T>
    __aicore__ static inline T Identity() {
        if constexpr (std::is_same<T, float>::value) return __builtin_huge_valf();
        else if constexpr (std::is_same<T, half>::value) return static_cast<half>(__builtin_huge_valf());
        else if constexpr (std::is_same<T, int32_t>::value) return static_cast<int32_t>(2147483647);
        else return static_cast<T>(127);  // int8_t
    }
    static constexpr int16_t kInt8Pair = static_cast<int16_t>(0x7f7f);
};

// Fills the first `count` elements (a multiple of 2 for int8) of an input
// buffer with the operator's identity.
template <typename Op, typename TIn>
__aicore__ inline void FillIdentity(const LocalTensor<TIn>& dst, uint32_t count) {
    if constexpr (std::is_same<TIn, int8_t>::value) {
        Duplicate(dst.template ReinterpretCast<int16_t>(), Op::kInt8Pair, static_cast<int32_t>(count / 2));
    } else {
        Duplicate(dst, Op::template Identity<TIn>(), static_cast<int32_t>(count));
    }
}

// Loads `count` elements from GM into UB; the rest of the last 32-byte block
// is `pad` (LoadAny pads with zeros, which is wrong for max/min).
template <typename T>
__aicore__ inline void LoadPadded(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count, T pad) {
    uint32_t tailBytes = (count * static_cast<uint32_t>(sizeof(T))) % 32;
    uint8_t rightPad = static_cast<uint8_t>(tailBytes ? (32 - tailBytes) / sizeof(T) : 0);
    DataCopyExtParams p(1, count * static_cast<uint32_t>(sizeof(T)), 0, 0, 0);
    DataCopyPadExtParams<T> padding(rightPad != 0, 0, rightPad, pad);
    DataCopyPad(dst, src, p, padding);
}

// NaN detection for half inputs (max/min refuse NaN: the reference leaves the
// NaN behaviour of vector Max/Min undocumented). Keeps the lane-wise largest
// (bits & 0x7fff) seen; a value above 0x7c00 (the bits of inf) is a NaN.
// Publish() folds the lanes and writes 16 int16 (one 32-byte GM slot).
class HalfNanCheck {
public:
    static constexpr int16_t kInfBits = 0x7c00;

    // acc and mask: `lanes` int16 each (lanes a power of two >= 16).
    __aicore__ inline void Init(const LocalTensor<int16_t>& acc, const LocalTensor<int16_t>& mask, uint32_t lanes) {
        acc_ = acc;
        mask_ = mask;
        lanes_ = lanes;
        Duplicate(acc_, static_cast<int16_t>(0), static_cast<int32_t>(lanes));
        Duplicate(mask_, static_cast<int16_t>(0x7fff), static_cast<int32_t>(lanes));
        PipeBarrier<PIPE_V>();
    }

    // Takes `count` (<= lanes) halves; `tmp`: count int16 of scratch. (A
    // template only so that callers may name it in discarded branches.)
    template <typename T>
    __aicore__ inline void Add(const LocalTensor<T>& x, const LocalTensor<int16_t>& tmp, uint32_t count) {
        static_assert(sizeof(T) == 2, "HalfNanCheck takes 16-bit inputs");
        And(tmp, x.template ReinterpretCast<int16_t>(), mask_, static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        Max(acc_, acc_, tmp, static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
    }

    // Add() in two halves without barriers, for callers that interleave them
    // with independent work: Mask() then (after a PIPE_V barrier) Merge().
    template <typename T>
    __aicore__ inline void Mask(const LocalTensor<T>& x, const LocalTensor<int16_t>& tmp, uint32_t count) {
        static_assert(sizeof(T) == 2, "HalfNanCheck takes 16-bit inputs");
        And(tmp, x.template ReinterpretCast<int16_t>(), mask_, static_cast<int32_t>(count));
    }
    __aicore__ inline void Merge(const LocalTensor<int16_t>& tmp, uint32_t count) {
        Max(acc_, acc_, tmp, static_cast<int32_t>(count));
    }

    __aicore__ inline void Publish(const GlobalTensor<int16_t>& slot) {
        for (uint32_t w = lanes_ / 2; w >= 16; w /= 2) {
            Max(acc_, acc_, acc_[w], static_cast<int32_t>(w));
            PipeBarrier<PIPE_V>();
        }
        PipeSync<HardEvent::V_MTE3>();
        DataCopy(slot, acc_, 16);
        PipeSync<HardEvent::MTE3_V>();
    }

private:
    LocalTensor<int16_t> acc_, mask_;
    uint32_t lanes_ = 0;
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
// (half inputs, may be null) sees every input.
template <typename Op, typename TIn, typename TAcc, typename Que>
__aicore__ inline TAcc OpRange(const GlobalTensor<TIn>& gx, uint64_t begin, uint64_t end, uint32_t chunk, Que& in,
                               const LocalTensor<TAcc>& acc, const LocalTensor<TAcc>& xa, const LocalTensor<half>& tmp,
                               HalfNanCheck* nan) {
    Duplicate(acc, Op::template Identity<TAcc>(), static_cast<int32_t>(chunk));
    PipeBarrier<PIPE_V>();
    if (begin < end) OpLoadChunk<Op>(gx, begin, end, chunk, in);
    for (uint64_t off = begin; off < end; off += chunk) {
        if (end - off > chunk) OpLoadChunk<Op>(gx, off + chunk, end, chunk, in);
        LocalTensor<TIn> x = in.template DeQue<TIn>();
        if constexpr (std::is_same<TIn, half>::value) {
            if (nan != nullptr) nan->Add(x, tmp.template ReinterpretCast<int16_t>(), chunk);
        } else {
            (void)nan;
        }
        CastToAcc(xa, x, tmp, chunk);
        in.FreeTensor(x);
        PipeBarrier<PIPE_V>();
        Op::Vec(acc, acc, xa, chunk);
        PipeBarrier<PIPE_V>();
    }
    constexpr uint32_t kBlockLanes = 32 / sizeof(TAcc);
    for (uint32_t w = chunk / 2; w >= kBlockLanes; w /= 2) {
        Op::Vec(acc, acc, acc[w], w);
        PipeBarrier<PIPE_V>();
    }
    PipeSync<HardEvent::V_S>();
    TAcc r = acc.GetValue(0);
    for (uint32_t i = 1; i < kBlockLanes; ++i) r = Op::Scalar(r, acc.GetValue(i));
    ScalarReadsDone();
    return r;
}

// Adds a running carry to each s-wide row of `in` (rows of per-row inclusive
// scans), writing `out`; the carry becomes the row's last entry. Row ends are
// read on the scalar pipe first so the vector adds run back to back.
template <typename Acc>
__aicore__ inline Acc PropagateRows(const LocalTensor<Acc>& out, const LocalTensor<Acc>& in, uint32_t s, uint32_t rows,
                                    Acc carry) {
    for (uint32_t r = 0; r < rows; ++r) {
        Acc rowEnd = in.GetValue(r * s + s - 1);
        Adds(out[r * s], in[r * s], carry, static_cast<int32_t>(s));
        carry = static_cast<Acc>(carry + rowEnd);
    }
    ScalarReadsDone();
    return carry;
}

// Carries of the s-rows of a tile of row scans, on the vector unit without a
// scalar loop: the row ends (last column) are loaded one per 32-byte block
// after a leading zero block, scanned over the rows with log2(rows) aligned
// block-wise adds (Hillis-Steele, ping-pong), gathered into one compact
// vector of exclusive prefixes, offset by the running carry and broadcast to
// one block per row (Brcb), so that adding them to every row is one repeated
// Add per 64 columns (src1 block stride 0).
template <typename TAcc, uint32_t kS, uint32_t kMaxRows>
class RowCarries {
public:
    static constexpr uint32_t kLanes = 32 / sizeof(TAcc);
    static constexpr uint32_t kBlocks = kMaxRows + 1;  // leading zero block + one per row
    static constexpr uint32_t kRows8 = CeilDivConst(kMaxRows, 8) * 8;
    // One buffer (a TPosition holds at most 8), carved in 32-byte multiples:
    // compact rows, offsets, broadcast, then ends, ping, pong (kBlocks blocks
    // each; last, so that a Gather source never spans the compact rows).
    static constexpr uint32_t kCompact = 0, kOffsets = kRows8 * 4, kBroadcast = 2 * kRows8 * 4;
    static constexpr uint32_t kEnds = kBroadcast + kRows8 * 32, kPing = kEnds + kBlocks * 32;
    static constexpr uint32_t kPong = kPing + kBlocks * 32, kBytes = kPong + kBlocks * 32;

    __aicore__ inline void Init(TPipe& pipe) {
        pipe.InitBuffer(buf_, kBytes);
        // Gather offsets: row i's block is i * 32 bytes after the base.
        LocalTensor<int32_t> off = at<int32_t>(kOffsets);
        CreateVecIndex(off, static_cast<int32_t>(0), kRows8);
        PipeBarrier<PIPE_V>();
        Muls(off, off, static_cast<int32_t>(32), static_cast<int32_t>(kRows8));
        PipeBarrier<PIPE_V>();
    }

    // Loads the row ends of the `rows` rows of `tile` (row pitch s) and
    // prepares the carries of rows [first, last): carry + the sum of the row
    // ends before each. Vector work only: nothing waits for it here.
    __aicore__ inline void Prepare(const GlobalTensor<TAcc>& tile, uint32_t rows, uint32_t first, uint32_t last,
                                   TAcc carry) {
        PipeSync<HardEvent::S_V>();  // the scalar unit has read the last total and carries
        LocalTensor<TAcc> ends = at<TAcc>(kEnds);
        Duplicate(ends, static_cast<TAcc>(0), static_cast<int32_t>(kLanes));
        PipeSync<HardEvent::V_MTE2>();
        DataCopyExtParams pe(static_cast<uint16_t>(rows), sizeof(TAcc), (kS - 1) * sizeof(TAcc), 0, 0);
        DataCopyPadExtParams<TAcc> noPad(false, 0, 0, 0);
        DataCopyPad(ends[kLanes], tile[kS - 1], pe, noPad);
        PipeSync<HardEvent::MTE2_V>();
        ScanEnds(rows, first, last, carry, 0);
    }

    // Prepare from row scans already in UB (`rows` rows of s at `tile`): the
    // last 32 bytes of each row are copied into the ends blocks by one
    // strided vector copy, with the row end in the last lane.
    __aicore__ inline void PrepareLocal(const LocalTensor<TAcc>& tile, uint32_t rows, uint32_t first, uint32_t last,
                                        TAcc carry) {
        static_assert(kS * sizeof(TAcc) / 32 <= 255, "row pitch in blocks fits a repeat stride");
        PipeSync<HardEvent::S_V>();  // the scalar unit has read the last total and carries
        LocalTensor<TAcc> ends = at<TAcc>(kEnds);
        Duplicate(ends, static_cast<TAcc>(0), static_cast<int32_t>(kLanes));
        Adds(ends[kLanes], tile[kS - kLanes], static_cast<TAcc>(0), static_cast<uint64_t>(kLanes),
             static_cast<uint8_t>(rows), UnaryRepeatParams(1, 1, 1, static_cast<uint8_t>(kS * sizeof(TAcc) / 32)));
        PipeBarrier<PIPE_V>();
        ScanEnds(rows, first, last, carry, (kLanes - 1) * sizeof(TAcc));
    }

    // The sum of all row ends of the last Prepare (waits for the vector unit).
    __aicore__ inline TAcc Total() {
        PipeSync<HardEvent::V_S>();
        return total_.GetValue(0);
    }

    // The carry of prepared row `row` (0 = the `first` of Prepare); read
    // after Total(), which waits for the vector unit.
    __aicore__ inline TAcc Carry(uint32_t row) { return at<TAcc>(kCompact).GetValue(row); }

    // out = in + the carry of each row, for `count` rows of s starting at
    // prepared row `row` (0 = the `first` of Prepare).
    __aicore__ inline void AddTo(const LocalTensor<TAcc>& out, const LocalTensor<TAcc>& in, uint32_t row,
                                 uint32_t count) {
        constexpr uint32_t kPerRepeat = 256 / sizeof(TAcc);
        constexpr uint32_t kCols = kS < kPerRepeat ? kS : kPerRepeat;  // columns per repeat
        constexpr uint8_t kRowBlocks = static_cast<uint8_t>(kS * sizeof(TAcc) / 32);
        LocalTensor<TAcc> carries = at<TAcc>(kBroadcast)[row * kLanes];
        for (uint32_t c = 0; c < kS; c += kCols) {
            Add(out[c], in[c], carries, static_cast<uint64_t>(kCols), static_cast<uint8_t>(count),
                BinaryRepeatParams(1, 1, 0, kRowBlocks, kRowBlocks, 1));
        }
    }

private:
    // Inclusive scan over blocks 0..rows of the ends (block 0 is zero): block
    // r ends as the sum of the first r row ends, the exclusive prefix of row
    // r; `lane` (bytes) is where a block holds its row end.
    __aicore__ inline void ScanEnds(uint32_t rows, uint32_t first, uint32_t last, TAcc carry, uint32_t lane) {
        LocalTensor<TAcc> cur = at<TAcc>(kEnds);
        LocalTensor<TAcc> bufs[2] = {at<TAcc>(kPing), at<TAcc>(kPong)};
        uint32_t blocks = rows + 1;
        for (uint32_t d = 1, i = 0; d < blocks; d *= 2, i ^= 1) {
            LocalTensor<TAcc> nxt = bufs[i];
            Adds(nxt, cur, static_cast<TAcc>(0), static_cast<int32_t>(d * kLanes));
            Add(nxt[d * kLanes], cur[d * kLanes], cur, static_cast<int32_t>((blocks - d) * kLanes));
            PipeBarrier<PIPE_V>();
            cur = nxt;
        }
        LocalTensor<TAcc> compact = at<TAcc>(kCompact);
        uint32_t mine = last - first;
        if (mine > 0) {
            Gather(compact, cur, at<uint32_t>(kOffsets), first * 32 + lane, mine);
            PipeBarrier<PIPE_V>();
            Adds(compact, compact, carry, static_cast<int32_t>(mine));
            PipeBarrier<PIPE_V>();
            Brcb(at<TAcc>(kBroadcast), compact, static_cast<uint8_t>(CeilDiv(mine, 8)), BrcbRepeatParams(1, 8));
            PipeBarrier<PIPE_V>();
        }
        total_ = cur[rows * kLanes + lane / sizeof(TAcc)];
    }

    template <typename T>
    __aicore__ inline LocalTensor<T> at(uint32_t byteOffset) {
        return buf_.template Get<T>()[byteOffset / sizeof(T)];
    }
    TBuf<TPosition::VECCALC> buf_;
    LocalTensor<TAcc> total_;
};

// The cube side of the scans: U resident in L0B, and per tile the pipeline
// GM -> L1 (Nz) -> L0A (Zz) -> Mmad -> L0C, double buffered through queues.
// Compute() returns the tile's row scans in L0C; the caller stores them and
// calls Release().
template <typename TIn, uint32_t kS>
class CubeTileScan {
public:
    using TAcc = typename CubeTraits<TIn>::Acc;
    static constexpr uint32_t kTile = kS * kS;
    // Cube operands pad K to whole fractal rows (C0 = 32 int8 / 16 half).
    static constexpr uint32_t kKPad = CeilDivConst(kS, CubeTraits<TIn>::kC0) * CubeTraits<TIn>::kC0;
    static constexpr uint32_t kOperand = kS * kKPad;

    // `workspace` starts with U transposed (s x s, input type); the s zeros
    // follow at `zerosOffset` bytes.
    __aicore__ inline void Init(TPipe& pipe, GM_ADDR workspace, uint32_t zerosOffset) {
        pipe.InitBuffer(qA1_, 2, kOperand * sizeof(TIn));
        pipe.InitBuffer(qA2_, 2, kOperand * sizeof(TIn));
        pipe.InitBuffer(qC_, 2, kTile * sizeof(TAcc));
        pipe.InitBuffer(b1_, kOperand * sizeof(TIn));
        pipe.InitBuffer(b2_, kOperand * sizeof(TIn));
        GlobalTensor<TIn> gUt;
        gUt.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(workspace), kTile);
        zeros_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(workspace + zerosOffset), kS);
        LoadConstantB(b2_.Get<TIn>(), b1_.Get<TIn>(), gUt, kS, kS);
    }

    // Row scans of the first `count` elements at `src` (count <= s*s); m1 =
    // fractal rows computed.
    __aicore__ inline LocalTensor<TAcc> Compute(const GlobalTensor<TIn>& src, uint32_t count, uint32_t& m1) {
        Load(src, count);
        return ComputeLoaded(count, m1);
    }

    // Starts the GM -> L1 load of a tile (at most two loaded tiles wait for
    // ComputeLoaded), so that the next tile's load overlaps this one's matmul.
    __aicore__ inline void Load(const GlobalTensor<TIn>& src, uint32_t count) {
        LocalTensor<TIn> a1 = qA1_.template AllocTensor<TIn>();
        LoadTileNz(a1, src, zeros_, kS, count);
        qA1_.EnQue(a1);
    }

    // Row scans of the oldest loaded tile (of `count` elements).
    __aicore__ inline LocalTensor<TAcc> ComputeLoaded(uint32_t count, uint32_t& m1) {
        m1 = CeilDiv(CeilDiv(count, kS), 16);
        LocalTensor<TIn> a1 = qA1_.template DeQue<TIn>();
        LocalTensor<TIn> a2 = qA2_.template AllocTensor<TIn>();
        LoadL0A(a2, a1, kS, m1);
        qA2_.EnQue(a2);
        qA1_.FreeTensor(a1);
        a2 = qA2_.template DeQue<TIn>();
        LocalTensor<TAcc> c1 = qC_.template AllocTensor<TAcc>();
        TileMatmul(c1, a2, b2_.Get<TIn>(), kS, m1);
        qC_.EnQue(c1);
        qA2_.FreeTensor(a2);
        return qC_.template DeQue<TAcc>();
    }

    __aicore__ inline void Release(LocalTensor<TAcc>& c1) { qC_.FreeTensor(c1); }

private:
    TQue<TPosition::A1, 2> qA1_;  // depth 2: a tile may load while the previous one waits
    TQue<TPosition::A2, 1> qA2_;
    TQue<TPosition::CO1, 1> qC_;
    TBuf<TPosition::B1> b1_;
    TBuf<TPosition::B2> b2_;
    GlobalTensor<TIn> zeros_;
};

// The vector side of the ring hand-off: waits for the next tile of row scans
// in the ring, takes half of its s-rows (sub-block 0 the first half, 1 the
// second), adds the carries (the value before the tile, plus the row ends of
// the earlier rows of the tile, read from the ring: RowCarries), writes y and
// releases the slot. Returns the tile's sum. Exclusive: ExclusiveStore.
template <typename TIn, uint32_t kS, uint32_t kChunk>
class RingTileFinisher {
public:
    using TAcc = typename CubeTraits<TIn>::Acc;

    __aicore__ inline void Init(TPipe& pipe) {
        pipe.InitBuffer(qIn_, 2, kChunk * sizeof(TAcc));
        pipe.InitBuffer(qX_, 2, kChunk * sizeof(TIn));
        pipe.InitBuffer(qOut_, 2, kChunk * sizeof(TAcc));
        pipe.InitBuffer(acc_, kChunk * sizeof(TAcc));
        pipe.InitBuffer(xa_, kChunk * sizeof(TAcc));
        pipe.InitBuffer(half_, kChunk * sizeof(half));
        pipe.InitBuffer(one_, 32);
        carries_.Init(pipe);
    }

    // `slot`: the tile's row scans; y: the tile's first element; count:
    // valid elements of the tile.
    __aicore__ inline TAcc Finish(const GlobalTensor<TAcc>& slot, const GlobalTensor<TAcc>& y, uint32_t count,
                                  uint32_t sub, TAcc carry, bool exclusive) {
        uint32_t rows = CeilDiv(count, kS);
        uint32_t myFirst = sub ? rows / 2 : 0;
        uint32_t myLast = sub ? rows : rows / 2;
        CrossCoreWaitFlag(kFlagTileReady);
        carries_.Prepare(slot, rows, myFirst, myLast, carry);
        TAcc tileSum = carries_.Total();
        uint32_t end = myLast * kS < count ? myLast * kS : count;
        for (uint32_t r0 = myFirst; r0 < myLast; r0 += kChunk / kS) {
            uint32_t chunkRows = myLast - r0 < kChunk / kS ? myLast - r0 : kChunk / kS;
            uint32_t first = r0 * kS;
            uint32_t valid = end - first < chunkRows * kS ? end - first : chunkRows * kS;
            LocalTensor<TAcc> in = qIn_.template AllocTensor<TAcc>();
            DataCopy(in, slot[first], chunkRows * kS);
            qIn_.EnQue(in);
            in = qIn_.template DeQue<TAcc>();
            LocalTensor<TAcc> out = qOut_.template AllocTensor<TAcc>();
            carries_.AddTo(out, in, r0 - myFirst, chunkRows);
            qIn_.FreeTensor(in);
            qOut_.EnQue(out);
            out = qOut_.template DeQue<TAcc>();
            if (exclusive) {
                ExclusiveStore(y, out, first, valid, carries_.Carry(r0 - myFirst), one());
            } else {
                StoreAny(y[first], out, valid);
            }
            qOut_.FreeTensor(out);
        }
        // Both AIVs are done with this slot once their loads completed.
        CrossCoreSetFlag<2, PIPE_MTE2>(kFlagSlotFree);
        return tileSum;
    }

    // Scratch for other phases of the kernel (SumRange, SumSlots, StoreScalar).
    __aicore__ inline TQue<TPosition::VECIN, 1>& inputs() { return qX_; }
    __aicore__ inline LocalTensor<TAcc> acc() { return acc_.template Get<TAcc>(); }
    __aicore__ inline LocalTensor<TAcc> xa() { return xa_.template Get<TAcc>(); }
    __aicore__ inline LocalTensor<half> halves() { return half_.template Get<half>(); }
    __aicore__ inline LocalTensor<TAcc> one() { return one_.template Get<TAcc>(); }

private:
    TQue<TPosition::VECIN, 1> qIn_, qX_;
    TQue<TPosition::VECOUT, 1> qOut_;
    TBuf<TPosition::VECCALC> acc_, xa_, half_, one_;
    RowCarries<TAcc, kS, kS> carries_;
};

// ---- Pair-sum trees (weighted sampling) -----------------------------------

// Values pushed one at a time from the scalar unit into a UB buffer of kCap
// elements and stored to consecutive GM elements (byte-exact DataCopyPad,
// so neighbouring cores may share 32-byte blocks) whenever it fills, and by
// Flush() at the end.
template <typename T, uint32_t kCap>
class ScalarStager {
public:
    static constexpr uint32_t kBytes = kCap * sizeof(T);

    __aicore__ inline void Init(const LocalTensor<T>& buf) { buf_ = buf; }
    // Pushes go to dst[0], dst[1], ...
    __aicore__ inline void Start(const GlobalTensor<T>& dst) {
        dst_ = dst;
        n_ = 0;
        done_ = 0;
    }
    __aicore__ inline void Push(T value) {
        if (n_ == kCap) Flush();
        buf_.SetValue(n_++, value);
    }
    __aicore__ inline void Flush() {
        if (n_ == 0) return;
        PipeSync<HardEvent::S_MTE3>();
        StoreAny(dst_[done_], buf_, n_);
        // The next Push may overwrite the buffer only once it is stored.
        PipeSync<HardEvent::MTE3_S>();
        done_ += n_;
        n_ = 0;
    }

private:
    LocalTensor<T> buf_;
    GlobalTensor<T> dst_;
    uint32_t n_ = 0;
    uint64_t done_ = 0;
};

// Smallest power of two >= count (count >= 1).
__aicore__ inline uint32_t Pow2Ceil(uint32_t count) {
    uint32_t p = 1;
    while (p < count) p *= 2;
    return p;
}

constexpr uint32_t Log2Const(uint32_t p) { return p <= 1 ? 0 : 1 + Log2Const(p / 2); }
// Floats of a PairTree<kMax>: every level rounded up to 32.
constexpr uint32_t PairTreeFloats(uint32_t kMax) { return (kMax > 32 ? kMax : 32) + (kMax > 1 ? PairTreeFloats(kMax / 2) : 0); }

// A pair-sum tree over up to kMax (a power of two) f32 leaves in UB: level 0
// holds the leaves, every node of level l+1 is the fp32 sum of its two
// children of level l (PairReduceSum: one rounding per node), the root is the
// single node of the top level. Padding leaves with zeros (up to a power of
// two) leaves every sum unchanged. Descend() walks from the root to a leaf of
// positive weight (see crates/algos/src/sample.rs for the argument):
// with children sums L and R and running prefix P, go left if R == 0 or
// (L > 0 and v < fl(P + L)), else go right with P = fl(P + L).
template <uint32_t kMax>
class PairTree {
public:
    static_assert(kMax >= 1 && (kMax & (kMax - 1)) == 0, "kMax is a power of two");
    static constexpr uint32_t kLevels = Log2Const(kMax);
    // Level l (size kMax >> l) starts at a multiple of 32 floats (128 B: one
    // PairReduceSum repeat writes 32 results) and takes at least 32.
    static constexpr uint32_t kFloats = PairTreeFloats(kMax);
    static constexpr uint32_t kBytes = kFloats * sizeof(float);

    __aicore__ inline void Init(TPipe& pipe) { pipe.InitBuffer(buf_, kBytes); }

    // The leaves (kMax floats): fill [0, size) before Build(size).
    __aicore__ inline LocalTensor<float> Leaves() { return buf_.template Get<float>(); }

    // Builds the levels over `size` leaves (a power of two <= kMax), then
    // waits for the vector unit (the scalar unit reads the tree next).
    __aicore__ inline void Build(uint32_t size) {
        Levels(size);
        PipeSync<HardEvent::V_S>();
    }

    // Issues the vector work of Build() without waiting: the caller syncs
    // V -> S before it reads the tree.
    __aicore__ inline void Levels(uint32_t size) {
        LocalTensor<float> t = Leaves();
        levels_ = 0;
        offs_[0] = 0;
        PipeBarrier<PIPE_V>();
        for (uint32_t s = size; s > 1; s /= 2) {
            uint32_t at = offs_[levels_] + (s > 32 ? s : 32);
            // 64 children (32 sums) per repeat; a smaller level masks its children.
            PairReduceSum<float>(t[at], t[offs_[levels_]], static_cast<int32_t>((s + 63) / 64),
                                 static_cast<int32_t>(s < 64 ? s : 64), 1, 1, 8);
            PipeBarrier<PIPE_V>();
            offs_[++levels_] = at;
        }
    }

    // The sum of all leaves (after Build).
    __aicore__ inline float Root() { return Leaves().GetValue(offs_[levels_]); }

    // The leaf the descent for target v reaches; `prefix` (the fp32 sum of
    // everything left of the tree, along the descent's chain) becomes the
    // chain's sum left of that leaf.
    __aicore__ inline uint32_t Descend(float v, float& prefix) {
        LocalTensor<float> t = Leaves();
        uint32_t idx = 0;
        for (uint32_t l = levels_; l > 0; --l) {
            float left = t.GetValue(offs_[l - 1] + 2 * idx);
            float right = t.GetValue(offs_[l - 1] + 2 * idx + 1);
            float c = prefix + left;
            if (right == 0.0f || (left > 0.0f && v < c)) {
                idx = 2 * idx;
            } else {
                prefix = c;
                idx = 2 * idx + 1;
            }
        }
        return idx;
    }

private:
    TBuf<TPosition::VECCALC> buf_;
    uint32_t offs_[kLevels + 1] = {};
    uint32_t levels_ = 0;
};
}  // namespace ascend_scan

// ===========================================================================
// ---- Windowed gather from GM (SpMV; appended section, spmv branch) --------
// ===========================================================================

namespace ascend_scan {

// Reads `count` int32 entries of `idx` (in UB, after the caller's MTE2 -> V
// sync) and returns their smallest and largest value. Folds lane-wise on the
// vector unit (Min/Max take int32; A2 has no int32 reductions) into the
// scratch tensors a and b (at least `count` entries each), then the scalar
// unit reads the last <= 8 lanes. Only valid entries are folded, so padding
// never widens the range.
__aicore__ inline void IndexRange(const LocalTensor<int32_t>& idx, uint32_t count, const LocalTensor<int32_t>& a,
                                  const LocalTensor<int32_t>& b, int32_t& lo, int32_t& hi) {
    uint32_t len = count;
    if (len <= 8) {
        Adds(a, idx, static_cast<int32_t>(0), static_cast<int32_t>(len));
        Adds(b, idx, static_cast<int32_t>(0), static_cast<int32_t>(len));
    }
    bool first = true;
    while (len > 8) {
        // Fold [h, len) onto [0, len - h): h >= len - h, so no operand overlaps.
        uint32_t h = ((len + 1) / 2 + 7) / 8 * 8;
        const LocalTensor<int32_t>& sa = first ? idx : a;
        const LocalTensor<int32_t>& sb = first ? idx : b;
        if (first && h < len) {
            // The untouched part [len - h, h) must be in a and b as well.
            Adds(a, idx, static_cast<int32_t>(0), static_cast<int32_t>(h));
            Adds(b, idx, static_cast<int32_t>(0), static_cast<int32_t>(h));
            PipeBarrier<PIPE_V>();
        }
        Min(a, sa, sa[h], static_cast<int32_t>(len - h));
        Max(b, sb, sb[h], static_cast<int32_t>(len - h));
        PipeBarrier<PIPE_V>();
        first = false;
        len = h;
    }
    PipeSync<HardEvent::V_S>();
    lo = a.GetValue(0);
    hi = b.GetValue(0);
    for (uint32_t i = 1; i < len; ++i) {
        int32_t x = a.GetValue(i), y = b.GetValue(i);
        lo = x < lo ? x : lo;
        hi = y > hi ? y : hi;
    }
    ScalarReadsDone();
}

// dst[i] = float(src[idx[i]]) for the first `padded` entries of idx (a
// multiple of 64) whose index lies in [lo, hi] (clipped to [0, srcLen)); all
// other entries of dst are 0 (so an index of -1, or any index out of range,
// reads as 0). The source lives in GM and may be far larger than UB: it is
// streamed through one UB window of kWindow elements per step over [lo, hi]
// (DataCopyPad of the window's elements only); per window the in-window
// indices become byte offsets (clamped into the window, so every Gather
// address stays inside it), Gather reads them from the UB window, and Select
// keeps them where (clamped == unclamped), a mask from the int32 EQ compare
// that A2 supports. The next window loads while the vector unit builds the
// offsets. Cost per window: 7 vector passes over the chunk plus the window
// load, so a chunk whose indices span many windows pays for every window
// of the span. T: half or float (Gather takes both); the result is float
// (half converted exactly).
template <typename T, uint32_t kChunk, uint32_t kWindow>
class WindowGather {
public:
    static_assert(kChunk % 64 == 0, "whole 256-byte int32 compare repeats");
    static_assert(kWindow * sizeof(T) % 32 == 0, "whole 32-byte blocks");

    // One UB buffer: the window, then per chunk entry the clamped and
    // unclamped offsets, the gathered values (and their float copy for
    // half), and the mask bits.
    static constexpr uint32_t kE = kWindow * sizeof(T);
    static constexpr uint32_t kC = kE + kChunk * sizeof(int32_t);
    static constexpr uint32_t kG = kC + kChunk * sizeof(int32_t);
    static constexpr uint32_t kGf = kG + kChunk * sizeof(T);
    static constexpr uint32_t kMask = kGf + (std::is_same<T, float>::value ? 0 : kChunk * sizeof(float));
    static constexpr uint32_t kBytes = kMask + kChunk / 8;

    __aicore__ inline void Init(TPipe& pipe) { pipe.InitBuffer(buf_, kBytes); }

    // Scratch of kChunk int32 entries each, free between calls of Run
    // (IndexRange's a and b).
    __aicore__ inline LocalTensor<int32_t> ScratchA() { return at<int32_t>(kE, kChunk); }
    __aicore__ inline LocalTensor<int32_t> ScratchB() { return at<int32_t>(kC, kChunk); }

    __aicore__ inline void Run(const LocalTensor<float>& dst, const LocalTensor<int32_t>& idx, uint32_t padded,
                               int64_t lo, int64_t hi, const GlobalTensor<T>& src, uint64_t srcLen) {
        Duplicate(dst, 0.0f, static_cast<int32_t>(padded));
        PipeBarrier<PIPE_V>();
        if (lo < 0) lo = 0;
        if (hi > static_cast<int64_t>(srcLen) - 1) hi = static_cast<int64_t>(srcLen) - 1;
        LocalTensor<T> win = at<T>(0, kWindow);
        LocalTensor<int32_t> e = ScratchA(), c = ScratchB();
        LocalTensor<uint8_t> mask = at<uint8_t>(kMask, kChunk / 8);
        LocalTensor<T> g = at<T>(kG, kChunk);
        for (int64_t wlo = lo; wlo <= hi; wlo += kWindow) {
            uint32_t wn = static_cast<uint32_t>(hi + 1 - wlo < kWindow ? hi + 1 - wlo : kWindow);
            // The previous window's Gather is done before the window is overwritten.
            PipeSync<HardEvent::V_MTE2>();
            LoadAny(win, src[static_cast<uint64_t>(wlo)], wn);
            Adds(e, idx, static_cast<int32_t>(-wlo), static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            Maxs(c, e, static_cast<int32_t>(0), static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            Mins(c, c, static_cast<int32_t>(wn - 1), static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            Compare(mask, c, e, CMPMODE::EQ, padded);
            PipeBarrier<PIPE_V>();
            Muls(c, c, static_cast<int32_t>(sizeof(T)), static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            PipeSync<HardEvent::MTE2_V>();
            Gather(g, win, c.ReinterpretCast<uint32_t>(), 0, padded);
            PipeBarrier<PIPE_V>();
            if constexpr (std::is_same<T, float>::value) {
                Select(dst, mask, g, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, padded);
            } else {
                LocalTensor<float> gf = at<float>(kGf, kChunk);
                Cast(gf, g, RoundMode::CAST_NONE, padded);
                PipeBarrier<PIPE_V>();
                Select(dst, mask, gf, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, padded);
            }
            PipeBarrier<PIPE_V>();
        }
    }

private:
    template <typename U>
    __aicore__ inline LocalTensor<U> at(uint32_t byteOffset, uint32_t count) {
        return buf_.template GetWithOffset<U>(count, byteOffset);
    }
    TBuf<TPosition::VECCALC> buf_;
};

}  // namespace ascend_scan
