// SegScan (docs/algorithms.md, SegScan): the segmented scan in one launch on
// every AI core. Flags are int8, 1 at the first element of a
// segment; position 0 always starts one (a 0 there changes nothing). Any
// non-zero flag starts a segment here, and every vector core reports its
// flag range (FoldFlagMax), so the host refuses flags other than 0/1.
//
// The shape is RTScan's (reduce-then-scan with an L2-resident AIC -> AIV
// ring), with the segmented operator in place of the sum:
// Phase I: each AIV owns half of its AI core's tiles (the first ceil(T/2),
//   or the rest) and publishes the aggregate of its range: whether a segment
//   starts in it, and the sum after its last start. It looks for the last
//   start from the end of the range, so it reads little past it at any
//   density above zero. SyncAll; each AIV folds the aggregates of the ranges
//   before its own into its carry.
// Phase II: the AIC computes the speculative (unsegmented) s-wide row scans
//   of the values and (vector REVSPEC only) of the flags (C = X @ U,
//   FB = F @ U) of both halves' tiles, alternately, into one GM ring per AIV and signals each AIV with
//   its own flag. The AIV completes a tile (REVSPEC):
//     X = C + row carries        (the tile's unsegmented inclusive scan)
//     F = FB + row carries       (starts so far in the tile, 0 before the first)
//     E = X - x                  (exclusive)
//     S = [-carry, E at the 1st start, E at the 2nd start, ...]
//     y_exclusive = E - S[F]     (y_inclusive = y_exclusive + x)
//   so every element subtracts the unsegmented prefix before its segment's
//   start, or adds the carry when its segment began before the tile.
//   Simple variant: S[F] is filled in one masked Duplicate per segment of the
//   tile (start positions compacted by GatherMask, then read on the scalar
//   unit): O(segment length) vector work and a few scalar reads per segment.
//   Vector variant: S is compacted by GatherMask and S[F] gathered in one
//   Gather: the same work at any density. A tile without a start is a plain
//   scan plus the carry (REVSPEC's mu = 0 case).
// The AIV completes a tile in chunks of 4096 elements (whole rows), each as
// above with row carries and prefixes local to the chunk: |error| is bounded
// by the f32 rounding of chunk-local prefixes, not of the whole array. Exact
// for int8 -> int32. (The simple REVSPEC runs at s = 128: a tile of 16384
// elements per cube matmul and ring hand-off; the vector one needs two cube
// scans per tile, which fit L0A/L0C only at s <= 64.)
// Inputs larger than half the L2 go in waves, as RTScan does.
// Non-finite inputs (docs/algorithms.md, "Non-finite inputs"): a chunk whose
// own sum is inf or NaN is rescanned in sequential order, segment by segment
// (SequentialSegments); the carries are segmented, so nothing crosses a start.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ring.h"

namespace ascend_scan {
namespace segscan {

constexpr uint16_t kFlagTileReady1 = 3;  // AIC -> AIV 1 (kFlagTileReady: AIV 0)
constexpr uint32_t kChunk = 4096;        // elements per vector chunk
constexpr uint32_t kSlotWords = 8;       // 32 bytes per vector core: aggregate, or flag range
constexpr uint32_t kMaxVectors = 64;
constexpr uint32_t kListAt = 8;          // S[kListAt - 1] = -carry, S[kListAt + k] = E at start k
constexpr uint32_t kBitsBytes = kChunk / 8;
constexpr uint32_t kIndexAt = kBitsBytes + (1 + kMaxVectors) * kSlotWords * 4;  // bytes into misc_

// The segmented scan's operator on (sum since the last start, a start seen).
template <typename TAcc>
struct SegAgg {
    TAcc tail;
    bool has;
};
// `a` followed by `b`.
template <typename TAcc>
__aicore__ inline SegAgg<TAcc> Then(SegAgg<TAcc> a, SegAgg<TAcc> b) {
    if (b.has) return b;
    return SegAgg<TAcc>{static_cast<TAcc>(a.tail + b.tail), a.has};
}

// The tiles [first, last) of vector core `sub` of `block` in `wave`.
__aicore__ inline void HalfTiles(const SegScanTiling& t, uint32_t wave, uint32_t block, uint32_t sub,
                                 uint64_t& first, uint64_t& last) {
    uint64_t b0, b1;
    WaveBlockTiles(t.tiles, t.tiles_per_wave, t.tiles_per_block, wave, block, b0, b1);
    uint64_t mid = b0 + (b1 - b0 + 1) / 2;
    first = sub ? mid : b0;
    last = sub ? b1 : mid;
}

// kSimple: the simple REVSPEC (else the vector one); kSlotScans: row scans
// per ring slot. The AIC runs the static Cube(), each AIV an object's Vector().
template <typename TIn, typename TAcc, uint32_t kS, bool kSimple, uint32_t kSlotScans>
class Sides {
public:
    static constexpr uint32_t kTile = kS * kS;
    // The vector side works on chunks of kChunk elements (kChunkRows whole
    // rows of a tile): its UB holds about ten chunk-sized buffers.
    static constexpr uint32_t kChunkRows = kChunk / kS;
    // Tiles of several chunks double-buffer the chunk loads: the next chunk's
    // loads are issued before this chunk's scalar waits.
    static constexpr uint32_t kBuffers = kChunk < kTile ? 2 : 1;
    static constexpr uint32_t kLanes = 32 / sizeof(TAcc);
    static_assert(sizeof(TAcc) == 4, "accumulators are f32 or i32");
    static_assert(kSlotScans == (kSimple ? 1 : 2), "a ring slot: the values' row scans, then (vector) the flags'");
    using Agg = SegAgg<TAcc>;

    // Ring slot `slot` of vector core `sub` of AI core `block`: the row scans of
    // the values, then (vector REVSPEC) those of the flags (both 4-byte types).
    __aicore__ static inline GM_ADDR RingSlot(GM_ADDR workspace, const SegScanTiling& t, uint32_t block, uint32_t sub,
                                              uint64_t slot) {
        uint64_t ring = static_cast<uint64_t>(block) * 2 + sub;
        return workspace + t.ring_offset + ((ring * t.ring_slots + slot) * kSlotScans * kTile) * 4;
    }

    // Elements of the chunk at element `first` of a tile of `count` elements.
    __aicore__ static inline uint32_t ChunkSize(uint32_t count, uint32_t first) {
        return count - first < kChunk ? count - first : kChunk;
    }

    // Starts the cube's loads of tile `tile` (values, and flags for the vector REVSPEC).
    __aicore__ static inline void LoadTile(CubeTileScan<TIn, kS>& cubeX, CubeTileScan<int8_t, kS>& cubeF,
                                           const GlobalTensor<TIn>& gx, const GlobalTensor<int8_t>& gf, uint64_t n,
                                           uint64_t tile) {
        cubeX.Load(gx[tile * kTile], TileElems(n, tile, kTile));
        if constexpr (!kSimple) cubeF.Load(gf[tile * kTile], TileElems(n, tile, kTile));
    }

    // The row scans of the loaded tile `tile`, values then flags, into the ring slot at `dst`.
    __aicore__ static inline void ScanTile(CubeTileScan<TIn, kS>& cubeX, CubeTileScan<int8_t, kS>& cubeF, uint64_t n,
                                           uint64_t tile, GM_ADDR dst) {
        uint32_t count = TileElems(n, tile, kTile);
        uint32_t rows = CeilDiv(count, kS);
        GlobalTensor<TAcc> gC;
        gC.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(dst), kTile);
        uint32_t m1;
        LocalTensor<TAcc> c = cubeX.ComputeLoaded(count, m1);
        StoreTile(gC, c, kS, rows, m1);
        cubeX.Release(c);
        if constexpr (!kSimple) {  // the simple REVSPEC needs no start counts
            GlobalTensor<int32_t> gFb;
            gFb.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(dst) + kTile, kTile);
            LocalTensor<int32_t> fb = cubeF.ComputeLoaded(count, m1);
            StoreTile(gFb, fb, kS, rows, m1);
            cubeF.Release(fb);
        }
    }

    __aicore__ static inline void Cube(GM_ADDR x, GM_ADDR flags, GM_ADDR constants, GM_ADDR workspace,
                                       const SegScanTiling& t) {
        TPipe pipe;
        CubeTileScan<TIn, kS> cubeX;
        CubeTileScan<int8_t, kS> cubeF;
        cubeX.Init(pipe, constants, t.zeros_offset);
        if constexpr (!kSimple) cubeF.Init(pipe, constants + t.flag_constants_offset, t.flag_zeros_offset);
        GlobalTensor<TIn> gx;
        GlobalTensor<int8_t> gf;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        gf.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(flags), t.n);
        const uint32_t block = static_cast<uint32_t>(GetBlockIdx());
        RingProducer ring(t.ring_slots);  // one slot index for both AIVs' rings
        for (uint32_t wave = 0; wave < t.waves; ++wave) {
            uint64_t first0, last0, first1, last1;
            HalfTiles(t, wave, block, 0, first0, last0);
            HalfTiles(t, wave, block, 1, first1, last1);
            ring.StartWave();
            // Round r scans tile first0 + r, then first1 + r if AIV 1 has one;
            // each tile's loads start before the previous tile's matmul.
            const uint64_t rounds = last0 - first0;
            if (rounds > 0) LoadTile(cubeX, cubeF, gx, gf, t.n, first0);
            for (uint64_t r = 0; r < rounds; ++r) {
                const bool second = first1 + r < last1;
                if (second) LoadTile(cubeX, cubeF, gx, gf, t.n, first1 + r);
                else if (r + 1 < rounds) LoadTile(cubeX, cubeF, gx, gf, t.n, first0 + r + 1);
                uint64_t slot = ring.AcquireInWave(r);
                ScanTile(cubeX, cubeF, t.n, first0 + r, RingSlot(workspace, t, block, 0, slot));
                ring.Publish(kFlagTileReady);
                if (second) {
                    if (r + 1 < rounds) LoadTile(cubeX, cubeF, gx, gf, t.n, first0 + r + 1);
                    ScanTile(cubeX, cubeF, t.n, first1 + r, RingSlot(workspace, t, block, 1, slot));
                    ring.Publish(kFlagTileReady1);
                }
            }
            ring.EndWave();
        }
        ring.Drain();
    }

    __aicore__ inline void Vector(GM_ADDR x, GM_ADDR flags, GM_ADDR y, GM_ADDR checks, GM_ADDR workspace,
                               const SegScanTiling& t) {
        t_ = t;
        workspace_ = workspace;
        v_ = static_cast<uint32_t>(GetBlockIdx());
        sub_ = static_cast<uint32_t>(GetSubBlockIdx());
        block_ = v_ / 2;
        vectors_ = static_cast<uint32_t>(GetBlockNum() * GetTaskRatio());
        gx_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        gf_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(flags), t.n);
        gy_.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
        gChecks_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(checks), vectors_ * kSlotWords);
        gSlots_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace),
                                static_cast<uint64_t>(t.waves) * vectors_ * kSlotWords);
        Init();

        TAcc before = 0;  // the value at the end of the earlier waves
        uint64_t step = 0;
        for (uint32_t wave = 0; wave < t.waves; ++wave) {
            uint64_t first, last, first0, last0, first1, last1;
            HalfTiles(t, wave, block_, sub_, first, last);
            HalfTiles(t, wave, block_, 0, first0, last0);
            HalfTiles(t, wave, block_, 1, first1, last1);
            uint64_t wordsBefore = static_cast<uint64_t>(wave) * vectors_ * kSlotWords;
            Publish(gSlots_[wordsBefore + v_ * kSlotWords],
                    Aggregate(MinU64(first * kTile, t.n), MinU64(last * kTile, t.n)));
            SyncAll<false>();
            // Fold the aggregates of the earlier ranges (vector cores are in
            // element order) into this core's carry, and all of them into
            // the next wave's.
            LocalTensor<int32_t> slots = Small()[kSlotWords];
            PipeSync<HardEvent::S_MTE2>();
            DataCopy(slots, gSlots_[wordsBefore], vectors_ * kSlotWords);
            PipeSync<HardEvent::MTE2_S>();
            Agg acc{before, false};
            TAcc carry = before;
            for (uint32_t c = 0; c < vectors_; ++c) {
                if (c == v_) carry = acc.tail;
                acc = Then(acc, Agg{slots.ReinterpretCast<TAcc>().GetValue(c * kSlotWords),
                                       slots.GetValue(c * kSlotWords + 1) != 0});
            }
            before = acc.tail;
            // Phase II: one round per tile of the first half; each AIV takes
            // its own tile of the round. Both AIVs see both flags: each waits
            // for its own tile's first, and for the other one's after (AIV 0)
            // or before (AIV 1) it.
            for (uint64_t r = 0; r < last0 - first0; ++r, ++step) {
                const bool second = first1 + r < last1;
                RingWaitTile(kFlagTileReady);
                if (sub_ == 1 && second) RingWaitTile(kFlagTileReady1);
                if (first + r < last) {
                    GM_ADDR slot = RingSlot(workspace_, t_, block_, sub_, step % t_.ring_slots);
                    carry = Finish(slot, first + r, carry);
                }
                if (sub_ == 0 && second) RingWaitTile(kFlagTileReady1);
                RingRelease();
            }
        }
        PublishRange();
    }

private:
    __aicore__ inline void Init() {
        pipe_.InitBuffer(qC_, kBuffers, kChunk * sizeof(TAcc));
        pipe_.InitBuffer(qX_, kBuffers, kChunk * sizeof(TIn));
        pipe_.InitBuffer(qFlags_, kBuffers, kChunk);
        pipe_.InitBuffer(qOut_, kBuffers, kChunk * sizeof(TAcc));
        pipe_.InitBuffer(xa_, kChunk * sizeof(TAcc));
        pipe_.InitBuffer(g_, kChunk * sizeof(TAcc));
        pipe_.InitBuffer(list_, (kChunk + kListAt) * sizeof(TAcc));
        pipe_.InitBuffer(halves_, kChunk * sizeof(half));
        pipe_.InitBuffer(range_, kChunk * sizeof(half));
        pipe_.InitBuffer(misc_, kIndexAt + kChunk * sizeof(int32_t));
        carriesX_.Init(pipe_);
        if constexpr (!kSimple) {  // the start counts of the vector REVSPEC
            pipe_.InitBuffer(qF_, kBuffers, kChunk * sizeof(int32_t));
            carriesF_.Init(pipe_);
        }
        Duplicate(range_.Get<half>(), static_cast<half>(0.0f), static_cast<int32_t>(kChunk));
        // The index 0, 1, ..., once: StartPositions compacts it by the flag
        // bits (a scratch index rewritten per chunk would share g_'s bytes
        // with the fills of the simple REVSPEC).
        CreateVecIndex(Index(), static_cast<int32_t>(0), kChunk);
        PipeBarrier<PIPE_V>();
    }

    // Starts the load of flags [off, off + count) (zeros after them up to a
    // multiple of 128).
    __aicore__ inline void LoadFlags(uint64_t off, uint32_t count) { EnqueueFlags(qFlags_, gf_[off], count, kChunk); }

    // The oldest loaded flags (count of them) as a bit mask (1 = non-zero),
    // over count rounded up to 128. With `track`, the flags also fold into
    // the lane-wise flag range.
    __aicore__ inline LocalTensor<uint8_t> FlagBits(uint32_t count, bool track) {
        uint32_t padded = CeilDiv(count, 128) * 128;
        LocalTensor<half> h = DeQueFlagsAsHalf(qFlags_, halves_.Get<half>(), padded);
        if (track) {
            LocalTensor<half> hi = range_.Get<half>();
            Max(hi, hi, h, static_cast<int32_t>(padded));
        }
        LocalTensor<uint8_t> bits = misc_.Get<uint8_t>();
        CompareScalar(bits, h, static_cast<half>(0.0f), CMPMODE::NE, padded);
        PipeBarrier<PIPE_V>();
        return bits;
    }

    // Positions (from 0) of the starts among `count` elements with flag bits
    // `bits`, compacted into `dst`; returns how many.
    __aicore__ inline uint32_t StartPositions(const LocalTensor<int32_t>& dst, const LocalTensor<uint8_t>& bits,
                                              uint32_t count) {
        uint64_t starts = 0;
        GatherMask(dst, Index(), bits.ReinterpretCast<uint32_t>(), true, count, GatherMaskParams(1, 1, 8, 0), starts);
        ResetMask();
        PipeBarrier<PIPE_V>();
        return static_cast<uint32_t>(starts);
    }

    // Phase I: the aggregate of [begin, end): the last start is searched
    // from the end, tile by tile; then the values from it (or from begin) are summed.
    __aicore__ inline Agg Aggregate(uint64_t begin, uint64_t end) {
        uint64_t from = begin;
        bool has = false;
        LocalTensor<int32_t> pos = list_.Get<int32_t>();
        for (uint64_t hi = end; hi > begin && !has;) {
            uint64_t lo = hi - begin > kChunk ? hi - kChunk : begin;
            uint32_t count = static_cast<uint32_t>(hi - lo);
            LoadFlags(lo, count);
            uint32_t starts = StartPositions(pos, FlagBits(count, false), count);
            if (starts > 0) {
                PipeSync<HardEvent::V_S>();
                from = lo + static_cast<uint64_t>(pos.GetValue(starts - 1));
                PipeSync<HardEvent::S_V>();  // pos is rewritten by the vector unit
                has = true;
            }
            hi = lo;
        }
        TAcc tail = from < end ? SumRange(gx_, from, end, kChunk, qX_, g_.Get<TAcc>(), xa_.Get<TAcc>(),
                                          halves_.Get<half>())
                               : static_cast<TAcc>(0);
        return Agg{tail, has};
    }

    __aicore__ inline void Publish(const GlobalTensor<int32_t>& slot, Agg a) {
        LocalTensor<int32_t> own = Small();
        own.ReinterpretCast<TAcc>().SetValue(0, a.tail);
        own.SetValue(1, a.has ? 1 : 0);
        for (uint32_t i = 2; i < kSlotWords; ++i) own.SetValue(i, 0);
        StoreSlot(slot, own, kSlotWords);
    }

    // The range of the flags this core read in phase II (FoldFlagMax).
    __aicore__ inline void PublishRange() {
        int32_t fmin = 0, fmax = 0;
        FoldFlagMax(range_.Get<half>(), kChunk, fmin, fmax);
        LocalTensor<int32_t> own = Small();
        own.SetValue(0, fmin);
        own.SetValue(1, fmax);
        for (uint32_t i = 2; i < kSlotWords; ++i) own.SetValue(i, 0);
        StoreSlot(gChecks_[v_ * kSlotWords], own, kSlotWords);
    }

    // dst[begin, end) = value, for any element positions (begin < end): the
    // first 64-lane repeat from the 32-byte block of `begin` under a bit
    // mask, the rest by count from an aligned position.
    __aicore__ inline void FillRange(const LocalTensor<TAcc>& dst, TAcc value, uint32_t begin, uint32_t end) {
        constexpr uint32_t kRepeat = 256 / sizeof(TAcc);
        uint32_t a = begin / kLanes * kLanes;
        if (begin != a || end - a < kRepeat) {
            uint32_t hi = end - a < kRepeat ? end - a : kRepeat;
            uint64_t upto = hi == 64 ? ~0ull : ((1ull << hi) - 1);
            uint64_t mask[2] = {upto & ~((1ull << (begin - a)) - 1), 0};
            Duplicate(dst[a], value, mask, 1, 1, 8);
            begin = a + hi;
        }
        if (begin < end) Duplicate(dst[begin], value, static_cast<int32_t>(end - begin));
    }

    // Phase II for one tile: the segmented scan of tile `tile` from the row
    // scans in `slot`, after `carry`, chunk by chunk (the next chunk loading
    // while this one is computed); returns the value at its last element.
    __aicore__ inline TAcc Finish(GM_ADDR slot, uint64_t tile, TAcc carry) {
        uint64_t base = tile * kTile;
        uint32_t count = TileElems(t_.n, tile, kTile);
        LoadChunk(slot, base, count, 0);
        for (uint32_t first = 0; first < count; first += kChunk) {
            if (first + kChunk < count) LoadChunk(slot, base, count, first + kChunk);
            carry = FinishChunk(base + first, ChunkSize(count, first), carry);
        }
        return carry;
    }

    // Starts the loads of the chunk at element `first` of the tile at `base`
    // (of `count` elements): its row scans (values, and flags for the vector
    // REVSPEC) from the ring slot, its values and flags.
    __aicore__ inline void LoadChunk(GM_ADDR slot, uint64_t base, uint32_t count, uint32_t first) {
        uint32_t size = ChunkSize(count, first);
        uint32_t padded = CeilDiv(size, kS) * kS;
        GlobalTensor<TAcc> gC;
        gC.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(slot) + first, kChunk);
        LocalTensor<TAcc> c = qC_.template AllocTensor<TAcc>();
        DataCopy(c, gC, padded);
        qC_.EnQue(c);
        if constexpr (!kSimple) {
            GlobalTensor<int32_t> gFb;
            gFb.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(slot) + kTile + first, kChunk);
            LocalTensor<int32_t> fb = qF_.template AllocTensor<int32_t>();
            DataCopy(fb, gFb, padded);
            qF_.EnQue(fb);
        }
        LocalTensor<TIn> x = qX_.template AllocTensor<TIn>();
        LoadAny(x, gx_[base + first], size);
        qX_.EnQue(x);
        LoadFlags(base + first, size);
    }

    // One chunk of Finish: elements [base, base + count) (whole rows of the
    // tile), loaded by LoadChunk. The row carries are local to the chunk, so
    // is the subtraction.
    __aicore__ inline TAcc FinishChunk(uint64_t base, uint32_t count, TAcc carry) {
        uint32_t rows = CeilDiv(count, kS);
        uint32_t padded = rows * kS;
        LocalTensor<TAcc> c = qC_.template DeQue<TAcc>();
        LocalTensor<int32_t> fb;
        if constexpr (!kSimple) fb = qF_.template DeQue<int32_t>();
        LocalTensor<TIn> x = qX_.template DeQue<TIn>();
        carriesX_.PrepareLocal(c, rows, 0, rows, static_cast<TAcc>(0));
        if constexpr (!kSimple) carriesF_.PrepareLocal(fb, rows, 0, rows, 0);
        LocalTensor<uint8_t> bits = FlagBits(count, true);

        LocalTensor<TAcc> xa = xa_.Get<TAcc>();
        CastToAcc(xa, x, halves_.Get<half>(), padded);
        qX_.FreeTensor(x);
        carriesX_.AddTo(c, c, 0, rows);  // X
        PipeBarrier<PIPE_V>();
        Sub(c, c, xa, static_cast<int32_t>(padded));  // E
        PipeBarrier<PIPE_V>();
        // S: -carry (in the whole block before the list), then E at each start.
        LocalTensor<TAcc> list = list_.Get<TAcc>();
        Duplicate(list, static_cast<TAcc>(-carry), static_cast<int32_t>(kListAt));
        uint64_t got = 0;
        GatherMask(list[kListAt], c, bits.ReinterpretCast<uint32_t>(), true, count, GatherMaskParams(1, 1, 8, 0),
                   got);
        ResetMask();
        PipeBarrier<PIPE_V>();
        const uint32_t starts = static_cast<uint32_t>(got);
        LocalTensor<TAcc> out = qOut_.template AllocTensor<TAcc>();
        if (starts == 0) {
            Adds(out, c, carry, static_cast<int32_t>(padded));
        } else {
            LocalTensor<TAcc> g = g_.Get<TAcc>();
            if constexpr (kSimple) {
                // Start positions into `out` (free until the final Sub).
                LocalTensor<int32_t> pos = out.template ReinterpretCast<int32_t>();
                StartPositions(pos, bits, count);
                PipeSync<HardEvent::V_S>();
                uint32_t p = static_cast<uint32_t>(pos.GetValue(0));
                if (p > 0) FillRange(g, static_cast<TAcc>(-carry), 0, p);
                for (uint32_t k = 0; k < starts; ++k) {
                    uint32_t q = k + 1 < starts ? static_cast<uint32_t>(pos.GetValue(k + 1)) : padded;
                    FillRange(g, list.GetValue(kListAt + k), p, q);
                    p = q;
                }
                PipeSync<HardEvent::S_V>();  // pos (in out) and list are rewritten by the vector unit
                PipeBarrier<PIPE_V>();
            } else {
                carriesF_.AddTo(fb, fb, 0, rows);  // F
                PipeBarrier<PIPE_V>();
                // Byte offsets (kListAt - 1 + F) * 4 of S[F], F clamped to the
                // starts found (flags other than 0/1 are refused by the host).
                Maxs(fb, fb, 0, static_cast<int32_t>(padded));
                PipeBarrier<PIPE_V>();
                Mins(fb, fb, static_cast<int32_t>(starts), static_cast<int32_t>(padded));
                PipeBarrier<PIPE_V>();
                Adds(fb, fb, static_cast<int32_t>(kListAt - 1), static_cast<int32_t>(padded));
                PipeBarrier<PIPE_V>();
                ShiftLeft(fb, fb, static_cast<int32_t>(2), static_cast<int32_t>(padded));
                PipeBarrier<PIPE_V>();
                Gather(g, list, fb.ReinterpretCast<uint32_t>(), 0, padded);
                PipeBarrier<PIPE_V>();
            }
            Sub(out, c, g, static_cast<int32_t>(padded));
        }
        if constexpr (!kSimple) qF_.FreeTensor(fb);
        PipeBarrier<PIPE_V>();
        if (!t_.exclusive) {
            Add(out, out, xa, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
        }
        PipeSync<HardEvent::V_S>();
        TAcc next;
        // c holds E, the chunk's own unsegmented exclusive scan: its last
        // element plus the last input is the chunk's sum, non-finite exactly
        // when the chunk holds a non-finite input (or a bf16 sum overflows).
        if (NonFinite(static_cast<TAcc>(c.GetValue(count - 1) + xa.GetValue(count - 1)))) {
            next = SequentialSegments(out, xa, bits, count, carry);
            PipeSync<HardEvent::S_MTE3>();  // the scalar unit wrote out
        } else {
            TAcc lastOut = out.GetValue(count - 1);
            next = t_.exclusive ? static_cast<TAcc>(lastOut + xa.GetValue(count - 1)) : lastOut;
        }
        PipeSync<HardEvent::S_MTE2>();  // c's buffer is reloaded by MTE2
        qC_.FreeTensor(c);
        PipeSync<HardEvent::S_V>();  // out's buffer, xa and the flag bits are rewritten by the vector unit
        StoreQueued(qOut_, out, gy_[base], count);
        return next;
    }

    // The non-finite correction (docs/algorithms.md, "Non-finite inputs"):
    // REVSPEC subtracts chunk-local prefixes, so an infinity or NaN would turn
    // later segments of the chunk into inf - inf = NaN, and the cube's row
    // scans spread it to earlier columns. A chunk holding one is scanned again
    // here, segment by segment in sequential order on the scalar unit, from
    // its f32 inputs `xa` and start bits `bits`, after `carry` (the inclusive
    // value before the chunk). Returns the inclusive value at its last element.
    __aicore__ inline TAcc SequentialSegments(const LocalTensor<TAcc>& out, const LocalTensor<TAcc>& xa,
                                              const LocalTensor<uint8_t>& bits, uint32_t count, TAcc carry) {
        TAcc acc = carry;
        for (uint32_t i = 0; i < count; ++i) {
            if ((bits.GetValue(i / 8) >> (i % 8)) & 1) acc = 0;
            TAcc v = xa.GetValue(i);
            if (t_.exclusive) out.SetValue(i, acc);
            acc = static_cast<TAcc>(acc + v);
            if (!t_.exclusive) out.SetValue(i, acc);
        }
        return acc;
    }

    // This core's slot, then every core's slots (after the flag bits).
    __aicore__ inline LocalTensor<int32_t> Small() { return misc_.Get<int32_t>()[kBitsBytes / 4]; }
    // 0, 1, ..., kChunk - 1 (after the slots).
    __aicore__ inline LocalTensor<int32_t> Index() { return misc_.Get<int32_t>()[kIndexAt / 4]; }

    TPipe pipe_;
    TQue<TPosition::VECIN, kBuffers> qC_, qF_, qX_, qFlags_;
    TQue<TPosition::VECOUT, kBuffers> qOut_;
    TBuf<TPosition::VECCALC> xa_, g_, list_, halves_, range_, misc_;  // misc: flag bits, slots, index
    RowCarries<TAcc, kS, kChunkRows> carriesX_;
    RowCarries<int32_t, kS, kChunkRows> carriesF_;
    GlobalTensor<TIn> gx_;
    GlobalTensor<int8_t> gf_;
    GlobalTensor<TAcc> gy_;
    GlobalTensor<int32_t> gChecks_, gSlots_;
    SegScanTiling t_;
    GM_ADDR workspace_ = nullptr;
    uint32_t v_ = 0, sub_ = 0, block_ = 0, vectors_ = 0;
};

}  // namespace segscan

// The REVSPEC variants (crates/algos/src/segscan.rs, RevSpec).
enum class RevSpec { kSimple, kVector };

template <typename TIn, typename TAcc, uint32_t kS, RevSpec kRevSpec, uint32_t kSlotScans>
__aicore__ inline void SegScan(GM_ADDR x, GM_ADDR flags, GM_ADDR y, GM_ADDR checks, GM_ADDR constants,
                               GM_ADDR workspace, const SegScanTiling& t) {
    using Sides = segscan::Sides<TIn, TAcc, kS, kRevSpec == RevSpec::kSimple, kSlotScans>;
    if ASCEND_IS_AIC {
        Sides::Cube(x, flags, constants, workspace, t);
    } else {
        Sides side;
        side.Vector(x, flags, y, checks, workspace, t);
    }
}

}  // namespace ascend_scan
