// OpScan (docs/algorithms.md, OpScan): inclusive or exclusive scans by an
// operator (sum, max or min) of one array or of a batch of equal rows, on
// every vector core (the cube can only add). Exact.
//
// A tile holds `lanes` x `width` elements: lane r is the segment of `width`
// consecutive inputs starting at r * width. The tile is cast to the
// accumulator type and transposed by a Gather, so that position c of every
// lane is one contiguous row; width - 1 row-wise operator steps scan all
// lanes at once.
// - Short rows (crates/algos/src/opscan.rs, OPSCAN_SHORT_ROW): a lane is a
//   whole row (lanes = rows per tile), so the lanes are the answers; the last
//   row of the transposed tile holds the row totals.
// - Longer rows: kSegLanes lanes are segments of one row. The lane totals (a
//   tree over the rows) are scanned in log2(kSegLanes) shifted steps (a Gather
//   for shifts of 1, 2, 4 lanes, an offset read for longer ones, from buffers
//   whose front is the identity) while the row scan runs (they share its
//   barriers), combined with the carry of the earlier tiles, and applied to
//   every row of the transposed tile (src1 repeat stride 0).
// Either way a second Gather transposes back: from the rows of the scan
// (inclusive), or from one row earlier, whose first row holds each lane's
// carry (exclusive). Both transpose tables are built on the vector unit. The
// next tile loads while the current one computes.
//
// Work split: rows (in groups of 8, so cores never share a 32-byte block of y
// or of the totals) over the cores; a few long rows are split into equal
// ranges instead: phase 1 takes the operator over each core's part of its
// last row into a GM slot, SyncAll, and a core starting inside a row
// combines the slots of the earlier cores of that row into its carry.
// Hold mode (one row, at most kHoldTiles tiles per core): no phase 1; each core
// scans its tiles from the identity and keeps them in the output queue's
// buffers, publishes its part's total, SyncAll, then adds the carry to the
// held tiles and stores them (x read once).
//
// NaN (max/min of f16, bf16 and f32) propagates as in torch.cummax: every
// output from a row's first NaN on is NaN (exclusive: from the next
// position), the row's total too. Nothing relies on what vector Max/Min
// return for a NaN: the outputs before a row's first NaN never combine it,
// and those from it on are overwritten. Each input is masked once
// (NanCheckOf<TIn>) in the pass that reads it first: phase 1 for its range
// (a NaN there is published as a NaN slot, which marks the rest of the row
// on the later cores), the scan for the tiles before it. Only a core that
// saw a NaN then runs FixNan: its tiles again, x read on the scalar unit,
// NaN stored from each row's first NaN to the row's end (or its part of the
// row).
//
// Indices (OpScanIndices, the second launch of cummax/cummin): given x and
// the inclusive max or min scan y of it, position j of a row is a record
// when x[j] equals y[j] or is a NaN. The index of y[i] in torch.cummax's
// sense (the last j <= i whose x[j] made the running value, ties to the
// later position, NaN beating everything) is the last record at or before
// i, so the same scanner runs a max scan of the int32 tile "record ? j :
// INT32_MIN" (j counted from the row's start) instead of the cast of x.
// Phase 1 takes the max of those over a core's part of its last row.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_reduce.h"

namespace ascend_scan {
namespace opscan {

constexpr uint32_t kMaxCores = 64;
constexpr uint32_t kAhead = 1;  // tiles loading ahead of the one computing (2 measured no better)
// Lane scans of long rows: steps 1, 2, 4 shift by a Gather, longer shifts
// (multiples of 8 lanes, 32-byte aligned) read the buffer at an offset.
constexpr uint32_t kGatherSteps = 3;

// kTile: elements of a tile (lanes x width); kMaxLanes: lanes of a tile of
// short rows; kSegLanes: lanes of a tile of a long row.
// TVal: void for a scan of x; the type of y (float or int32_t) for the
// indices of a max/min scan y of x (Op OpMax, TAcc int32_t: see the top).
template <typename Op, typename TIn, typename TAcc, uint32_t kTile, uint32_t kMaxLanes, uint32_t kSegLanes,
          typename TVal = void>
class Scanner {
public:
    static constexpr bool kIndices = !std::is_same<TVal, void>::value;
    using TV = typename std::conditional<kIndices, TVal, TAcc>::type;  // (TAcc: unused)
    static_assert(!kIndices || (std::is_same<Op, OpMax>::value && std::is_same<TAcc, int32_t>::value),
                  "indices are a max scan of int32 positions");
    // Max and min of float inputs propagate NaN explicitly (sums let IEEE
    // addition do it). Nan: the input's check (HalfNanCheck, unused, else).
    static constexpr bool kCheckNan = !std::is_same<typename NanCheckOf<TIn>::type, void>::value &&
                                      !std::is_same<Op, OpSum>::value && !kIndices;
    using Nan = typename std::conditional<kCheckNan, typename NanCheckOf<TIn>::type, HalfNanCheck>::type;
    // Bit patterns of inputs for the scalar NaN test of FixNan.
    using Bits = typename std::conditional<sizeof(TIn) == 2, int16_t, int32_t>::type;
    // Compares (indices mode, fp32 NaN masks) run in whole 256-byte repeats
    // over padded_ elements: the loads fill the tile up to there.
    static constexpr bool kWholeRepeats = kIndices || (kCheckNan && sizeof(TIn) == 4);
    // Sums of f16/bf16: the tile is transposed before the cast (half the
    // Gather's bytes) through the half scratch (which the NaN masks use).
    static constexpr bool kGatherIn = !kIndices && !kCheckNan && sizeof(TIn) == 2;
    // Tiles a core can hold across SyncAll (OpScan::hold_tiles on the host):
    // the output queue's buffers; UB has room for 4 only with 1- and 2-byte
    // inputs of sums.
    static constexpr uint32_t kHoldTiles = std::is_same<Op, OpSum>::value && sizeof(TIn) <= 2 ? 4 : 2;
    // The half scratch casts int8 to the accumulator; the indices mode also
    // keeps its two compare masks (kTile bits each) there.
    static constexpr uint32_t kHalfBytes =
        kIndices && !std::is_same<TIn, int8_t>::value ? kTile / 4 : kTile * sizeof(half);
    static constexpr int32_t kNoRecord = -2147483647 - 1;  // OpMax's identity
    static constexpr uint32_t kSteps = Log2Const(kSegLanes);
    static_assert((1u << kSteps) == kSegLanes, "kSegLanes is a power of two");
    static constexpr uint32_t kRepeatLanes = 256 / sizeof(TAcc);  // lanes of one vector repeat
    static constexpr uint32_t kShiftSteps = kSteps - kGatherSteps;
    // Byte offsets of the small buffers in one TBuf. P and Q: kSegLanes
    // identities, then kSegLanes lane values (ping-pong of the shifted steps).
    static constexpr uint32_t kPAt = 0;
    static constexpr uint32_t kQAt = kPAt + 2 * kSegLanes * sizeof(TAcc);
    static constexpr uint32_t kGAt = kQAt + 2 * kSegLanes * sizeof(TAcc);
    static constexpr uint32_t kCarryAt = kGAt + kSegLanes * sizeof(TAcc);
    static constexpr uint32_t kIdxKsAt = kCarryAt + kSegLanes * sizeof(TAcc);
    static constexpr uint32_t kOneAt = kIdxKsAt + (kGatherSteps + 1) * kSegLanes * sizeof(uint32_t);
    static constexpr uint32_t kSlotsAt = kOneAt + 32;
    static constexpr uint32_t kSmallBytes = kSlotsAt + kMaxCores * 32;
    static constexpr int32_t kNanBits = 0x7fc00000;  // a quiet f32 NaN

    // values: y of the indices mode (else unused).
    __aicore__ inline void Run(GM_ADDR x, GM_ADDR y, GM_ADDR totals, GM_ADDR workspace, const OpScanTiling& t,
                               GM_ADDR values = nullptr) {
        t_ = t;
        lanes_ = t.lanes;
        width_ = t.width;
        tileElems_ = lanes_ * width_;
        // Compares run in whole 256-byte repeats.
        padded_ = (tileElems_ + 63) / 64 * 64;
        if constexpr (kIndices) gVal_.SetGlobalBuffer(reinterpret_cast<__gm__ TV*>(values), t.n);
        core_ = static_cast<uint32_t>(GetBlockIdx());
        cores_ = static_cast<uint32_t>(GetBlockNum());
        gx_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        gy_.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
        gTotals_.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(totals), 0);
        gSlots_.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace), 0);
        Init();

        begin_ = static_cast<uint64_t>(core_) * t.per_core;
        end_ = begin_ + t.per_core < t.n ? begin_ + t.per_core : t.n;
        if (begin_ > end_) begin_ = end_;
        next_ = begin_;
        checkedTo_ = end_;
        carryIn_ = Op::template Identity<TAcc>();
        if (t.segments && !t.hold) CarryIn();
        // Software pipeline: the next kAhead tiles load while this one computes.
        TileDesc ring[kAhead + 1];
        uint32_t loaded = 0, done = 0;
        while (loaded < kAhead && Next(ring[loaded])) Load(ring[loaded++]);
        BuildTables();
        while (done < loaded) {
            if (Next(ring[loaded % (kAhead + 1)])) {
                Load(ring[loaded % (kAhead + 1)]);
                ++loaded;
            }
            const TileDesc& cur = ring[done % (kAhead + 1)];
            ++done;
            if (t.segments && cur.startsRow) {
                Duplicate(Carry(), cur.base == begin_ ? carryIn_ : Op::template Identity<TAcc>(),
                          static_cast<int32_t>(kSegLanes));
                PipeBarrier<PIPE_V>();
            }
            Compute(cur);
            if (t.want_total && t.segments && cur.endsRow && !t.hold) StoreTotals(cur.row, Carry(), 1);
            if (t.want_total && !t.segments) StoreTotals(cur.row, TR()[width_ * lanes_], cur.rows);
        }
        if (t.hold) StoreHeld();
        if constexpr (kCheckNan) {
            // Tiles before checkedTo_ were masked by the scan, the rest by phase 1.
            if (carryNan_ || partNan_ || (checkedTo_ > begin_ && nan_.Seen())) FixNan();
        }
    }

private:
    // i := i % cols and q := floor(i / cols), for the `count` exact float
    // integers i (< 2^22), q also as int32 in dst. The quotient is floor((i +
    // 0.5) / cols), whose fraction stays >= 0.5 / cols away from an integer.
    __aicore__ static inline void DivMod(const LocalTensor<int32_t>& dst, const LocalTensor<float>& i,
                                         const LocalTensor<float>& q, uint32_t count, uint32_t cols) {
        LocalTensor<float> t = dst.ReinterpretCast<float>();
        Adds(q, i, 0.5f, static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        Muls(q, q, 1.0f / static_cast<float>(cols), static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        Cast(dst, q, RoundMode::CAST_FLOOR, count);
        PipeBarrier<PIPE_V>();
        Cast(q, dst, RoundMode::CAST_NONE, count);
        PipeBarrier<PIPE_V>();
        Muls(t, q, static_cast<float>(cols), static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        Sub(i, i, t, static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
    }

    // Transpose table: element i of a `rows` x `cols` (row-major) destination reads
    // element (i % cols) * rows + i / cols of the source, as a byte offset.
    // Row q is row 0 plus q elements, so after the first g rows (g * cols a
    // multiple of 8: blocks stay 32-byte aligned) the rest is made by doubling
    // (rows [k, 2k) = rows [0, k) + k), log2(rows / g) Adds instead of a
    // division per element.
    __aicore__ static inline void TransposeTable(const LocalTensor<int32_t>& dst, const LocalTensor<float>& i,
                                                 const LocalTensor<float>& q, uint32_t rows, uint32_t cols,
                                                 uint32_t elem) {
        const uint32_t g = cols % 8 == 0 ? 1 : (cols % 4 == 0 ? 2 : (cols % 2 == 0 ? 4 : 8));
        const uint32_t first = g < rows ? g : rows;
        if (first == 1) {
            CreateVecIndex(dst, static_cast<int32_t>(0), cols);
            PipeBarrier<PIPE_V>();
            Muls(dst, dst, static_cast<int32_t>(rows * elem), static_cast<int32_t>(cols));
            PipeBarrier<PIPE_V>();
        } else {
            uint32_t count = first * cols;
            CreateVecIndex(i, 0.0f, count);
            PipeBarrier<PIPE_V>();
            DivMod(dst, i, q, count, cols);
            Muls(i, i, static_cast<float>(rows), static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Add(i, i, q, static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Muls(i, i, static_cast<float>(elem), static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Cast(dst, i, RoundMode::CAST_RINT, count);
            PipeBarrier<PIPE_V>();
        }
        for (uint32_t k = first; k < rows; k *= 2) {
            uint32_t copy = k < rows - k ? k : rows - k;
            Adds(dst[k * cols], dst, static_cast<int32_t>(k * elem), static_cast<int32_t>(copy * cols));
            PipeBarrier<PIPE_V>();
        }
    }

    // Indices mode: element k of a tile is position k % cols of its row
    // (short rows: cols = width), or start + k (long rows: cols = the tile).
    __aicore__ static inline void PositionTable(const LocalTensor<int32_t>& dst, const LocalTensor<float>& i,
                                                const LocalTensor<float>& q, uint32_t count, uint32_t cols) {
        CreateVecIndex(i, 0.0f, count);
        PipeBarrier<PIPE_V>();
        DivMod(dst, i, q, count, cols);
        Cast(dst, i, RoundMode::CAST_RINT, count);
        PipeBarrier<PIPE_V>();
    }

    struct TileDesc {
        uint64_t base = 0;  // first element
        uint64_t row = 0;   // row of the first element
        uint32_t count = 0; // valid elements
        uint32_t rows = 0;  // rows (short rows)
        bool startsRow = false;  // long rows: first tile of this core in the row
        bool endsRow = false;    // long rows: the tile ends the row
        bool checkNan = false;   // the scan masks its NaN (phase 1 did not)
    };

    // The next tile of this core's range: `lanes` whole rows (short rows), or
    // up to a tile of one row (long rows; tiles never span rows).
    __aicore__ inline bool Next(TileDesc& d) {
        if (next_ >= end_) return false;
        const uint64_t len = t_.row_len;
        d.base = next_;
        d.row = next_ / len;
        if (!t_.segments) {
            uint64_t left = (end_ - next_) / len;
            d.rows = static_cast<uint32_t>(left < lanes_ ? left : lanes_);
            d.count = d.rows * width_;
        } else {
            uint64_t rowEnd = (d.row + 1) * len;
            uint64_t segEnd = end_ < rowEnd ? end_ : rowEnd;
            d.count = static_cast<uint32_t>(segEnd - next_ < tileElems_ ? segEnd - next_ : tileElems_);
            d.startsRow = next_ == begin_ || next_ % len == 0;
            d.endsRow = next_ + d.count == rowEnd;
        }
        d.checkNan = kCheckNan && d.base < checkedTo_;
        next_ += d.count;
        return true;
    }

    __aicore__ inline LocalTensor<TAcc> TR() { return bufTR_.Get<TAcc>(); }
    // Lane scan buffer: kSegLanes identities, then the scan of the lane totals.
    __aicore__ inline LocalTensor<TAcc> P() { return bufSmall_.GetWithOffset<TAcc>(2 * kSegLanes, kPAt); }
    __aicore__ inline LocalTensor<TAcc> Q() { return bufSmall_.GetWithOffset<TAcc>(2 * kSegLanes, kQAt); }
    __aicore__ inline LocalTensor<TAcc> G() { return bufSmall_.GetWithOffset<TAcc>(kSegLanes, kGAt); }
    __aicore__ inline LocalTensor<TAcc> Carry() { return bufSmall_.GetWithOffset<TAcc>(kSegLanes, kCarryAt); }
    __aicore__ inline LocalTensor<uint32_t> IdxKs() {
        return bufSmall_.GetWithOffset<uint32_t>((kGatherSteps + 1) * kSegLanes, kIdxKsAt);
    }

    __aicore__ inline void Init() {
        pipe_.InitBuffer(qIn_, kAhead + 1, kTile * sizeof(TIn));
        pipe_.InitBuffer(qOut_, kHoldTiles, kTile * sizeof(TAcc));
        if constexpr (kIndices) {
            pipe_.InitBuffer(qVal_, kAhead + 1, kTile * sizeof(TV));
            pipe_.InitBuffer(bufPos_, kTile * sizeof(int32_t));
        } else {
            pipe_.InitBuffer(qTot_, 2, kMaxLanes * sizeof(TAcc));  // (no totals of indices)
        }
        pipe_.InitBuffer(bufTR_, 2 * kTile * sizeof(TAcc));  // >= kTile + kMaxLanes
        pipe_.InitBuffer(bufIdxF_, kTile * sizeof(uint32_t));
        pipe_.InitBuffer(bufIdxB_, kTile * sizeof(uint32_t));
        pipe_.InitBuffer(bufHalf_, kHalfBytes);
        pipe_.InitBuffer(bufSmall_, kSmallBytes);
        if constexpr (kCheckNan) {
            pipe_.InitBuffer(bufNan_, kTile * sizeof(int16_t));
            pipe_.InitBuffer(bufNanMask_, kTile * sizeof(int16_t));
            nan_.Init(bufNan_.Get<int16_t>(), bufNanMask_.Get<int16_t>(), kTile);
        }
        if constexpr (kIndices) {
            LocalTensor<float> scratch = bufTR_.Get<float>();
            PositionTable(bufPos_.Get<int32_t>(), scratch, scratch[kTile], padded_,
                          t_.segments ? padded_ : width_);
            PipeBarrier<PIPE_V>();
        }
    }

    // The tables of the scan (built while the first tiles load).
    __aicore__ inline void BuildTables() {
        // Transpose tables: forward (lanes x width -> width rows of lanes) and back.
        LocalTensor<float> scratch = bufTR_.Get<float>();
        TransposeTable(bufIdxF_.Get<int32_t>(), scratch, scratch[kTile], width_, lanes_,
                       kGatherIn ? sizeof(TIn) : sizeof(TAcc));
        TransposeTable(bufIdxB_.Get<int32_t>(), scratch, scratch[kTile], lanes_, width_, sizeof(TAcc));
        if (t_.segments) {
            // Gather step s reads lane i - 2^s of P, whose front half is the
            // identity; the last table broadcasts the last lane.
            LocalTensor<int32_t> ks = IdxKs().template ReinterpretCast<int32_t>();
            for (uint32_t s = 0; s < kGatherSteps; ++s) {
                LocalTensor<int32_t> step = ks[s * kSegLanes];
                CreateVecIndex(step, static_cast<int32_t>(kSegLanes - (1u << s)), kSegLanes);
                PipeBarrier<PIPE_V>();
                Muls(step, step, static_cast<int32_t>(sizeof(TAcc)), static_cast<int32_t>(kSegLanes));
            }
            Duplicate(ks[kGatherSteps * kSegLanes], static_cast<int32_t>((2 * kSegLanes - 1) * sizeof(TAcc)),
                      static_cast<int32_t>(kSegLanes));
            Duplicate(P(), Op::template Identity<TAcc>(), static_cast<int32_t>(kSegLanes));
            Duplicate(Q(), Op::template Identity<TAcc>(), static_cast<int32_t>(kSegLanes));
        } else {
            // Lanes are rows: each starts from the identity (row 0 of TR, never overwritten).
            PipeBarrier<PIPE_V>();
            Duplicate(TR(), Op::template Identity<TAcc>(), static_cast<int32_t>(lanes_));
        }
        PipeBarrier<PIPE_V>();
    }

    // One tile: `count` inputs from x[base], lanes x width of them valid or
    // padded with the identity. Leaves the transposed scan in TR (row 0: each
    // lane's carry; row c + 1: the inclusive scan at position c).
    __aicore__ inline void Load(const TileDesc& d) {
        const uint32_t used = kWholeRepeats ? padded_ : tileElems_;
        LocalTensor<TIn> in = qIn_.AllocTensor<TIn>();
        if (d.count < used) {
            FillIdentity<Op>(in, kTile);
            PipeSync<HardEvent::V_MTE2>();
        }
        LoadPadded(in, gx_[d.base], d.count, Op::template Identity<TIn>());
        qIn_.EnQue(in);
        if constexpr (kIndices) {
            LocalTensor<TV> v = qVal_.AllocTensor<TV>();
            if (d.count < used) {
                Duplicate(v, static_cast<TV>(0), static_cast<int32_t>(kTile));
                PipeSync<HardEvent::V_MTE2>();
            }
            LoadPadded(v, gVal_[d.base], d.count, static_cast<TV>(0));
            qVal_.EnQue(v);
        }
    }

    // Indices mode: the tile's record positions (see the top) into dst
    // (padded_ int32, row-major); consumes the tile's y from qVal_.
    __aicore__ inline void Records(const TileDesc& d, const LocalTensor<TIn>& in, const LocalTensor<int32_t>& dst) {
        LocalTensor<TV> val = qVal_.template DeQue<TV>();
        LocalTensor<TV> xv = dst.template ReinterpretCast<TV>();
        CastToAcc(xv, in, bufHalf_.Get<half>(), padded_);
        PipeBarrier<PIPE_V>();
        LocalTensor<uint8_t> eq = bufHalf_.Get<uint8_t>();
        Compare(eq, xv, val, CMPMODE::EQ, padded_);
        if constexpr (std::is_same<TV, float>::value) {
            LocalTensor<uint8_t> nan = eq[kTile / 8];
            Compare(nan, xv, xv, CMPMODE::NE, padded_);
            PipeBarrier<PIPE_V>();
            Or(eq.template ReinterpretCast<uint16_t>(), eq.template ReinterpretCast<uint16_t>(),
               nan.template ReinterpretCast<uint16_t>(), static_cast<int32_t>(padded_ / 16));
        }
        PipeBarrier<PIPE_V>();
        qVal_.FreeTensor(val);
        LocalTensor<int32_t> pos = bufPos_.Get<int32_t>();
        if (t_.segments) {
            // A tile of a long row lies in one row: positions from its start.
            Adds(dst, pos, static_cast<int32_t>(d.base - d.row * t_.row_len), static_cast<int32_t>(padded_));
            PipeBarrier<PIPE_V>();
            pos = dst;
        }
        // Positions move as float bit patterns (Select takes half/float).
        Select(dst.template ReinterpretCast<float>(), eq, pos.template ReinterpretCast<float>(),
               AsFloat(static_cast<uint32_t>(kNoRecord)), SELMODE::VSEL_TENSOR_SCALAR_MODE, padded_);
    }

    __aicore__ inline void Compute(const TileDesc& d) {
        LocalTensor<TIn> in = qIn_.DeQue<TIn>();
        LocalTensor<half> tmp = bufHalf_.Get<half>();
        LocalTensor<TAcc> a = qOut_.AllocTensor<TAcc>();
        if constexpr (kIndices) {
            Records(d, in, a);
        } else if constexpr (kGatherIn) {
            Gather(tmp.ReinterpretCast<TIn>(), in, bufIdxF_.Get<uint32_t>(), 0, tileElems_);
        } else {
            CastToAcc(a, in, tmp, tileElems_);
        }
        if constexpr (kCheckNan) {
            if (d.checkNan) nan_.Mask(in, tmp.ReinterpretCast<int16_t>(), kWholeRepeats ? padded_ : tileElems_);
        }
        PipeBarrier<PIPE_V>();
        qIn_.FreeTensor(in);
        LocalTensor<TAcc> tr = TR();
        if constexpr (kGatherIn) {
            Cast(tr[lanes_], tmp.ReinterpretCast<TIn>(), RoundMode::CAST_NONE, tileElems_);
        } else {
            Gather(tr[lanes_], a, bufIdxF_.Get<uint32_t>(), 0, tileElems_);
        }
        if constexpr (kCheckNan) {
            if (d.checkNan) nan_.Merge(tmp.ReinterpretCast<int16_t>(), kWholeRepeats ? padded_ : tileElems_);
        }
        PipeBarrier<PIPE_V>();
        // The row-wise scan down the width_ rows; for long rows the lane scan
        // runs alongside it (independent instructions share the barriers): a
        // tree over the rows gives the lane totals (the first fold before the
        // scan changes any row), then their log-step scan.
        bool lanesLeft = false;
        if (t_.segments) {
            LaneTotalsStart(tr);
            PipeBarrier<PIPE_V>();
            lanesLeft = true;
        }
        for (uint32_t c = 1; c < width_ || lanesLeft; ++c) {
            if (c < width_) Op::Vec(tr[(c + 1) * lanes_], tr[(c + 1) * lanes_], tr[c * lanes_], lanes_);
            if (lanesLeft) lanesLeft = LaneStep(tr);
            PipeBarrier<PIPE_V>();
        }
        if (t_.segments) ApplyCarries(tr);
        // Back to row-major: inclusive reads rows 1..width, exclusive rows 0..width-1.
        uint32_t from = t_.exclusive ? 0 : lanes_ * static_cast<uint32_t>(sizeof(TAcc));
        Gather(a, tr, bufIdxB_.Get<uint32_t>(), from, tileElems_);
        if (t_.hold) {
            held_[heldCount_] = d;
            heldOut_[heldCount_++] = a;
            return;
        }
        StoreQueued(qOut_, a, gy_[d.base], d.count);
    }

    // Rows of the lane-total tree (scratch after the transposed tile in TR).
    __aicore__ inline LocalTensor<TAcc> Fold() { return TR()[kTile + kSegLanes]; }

    // First fold of the rows of the transposed tile (rows r at tr[(r + 1) * lanes]).
    __aicore__ inline void LaneTotalsStart(const LocalTensor<TAcc>& tr) {
        LocalTensor<TAcc> t = tr[kSegLanes];
        LocalTensor<TAcc> p = P()[kSegLanes];
        lanePhase_ = 1;
        laneStep_ = 0;
        if (width_ == 1) {
            Op::Copy(p, t, kSegLanes);
        } else if (width_ == 2) {
            Op::Vec(p, t, t[kSegLanes], kSegLanes);
        } else {
            uint32_t h = width_ / 2;
            Op::Vec(Fold(), t, t[(width_ - h) * kSegLanes], h * kSegLanes);
            if (width_ % 2) Op::Copy(Fold()[h * kSegLanes], t[h * kSegLanes], kSegLanes);
            foldRows_ = width_ - h;
            lanePhase_ = 0;
        }
    }

    // One round of the lane scan: folds down to P, Gather steps, shifted steps,
    // then the exclusive lane scan into TR row 0 and the tile total into G.
    // Returns false after the last round.
    __aicore__ inline bool LaneStep(const LocalTensor<TAcc>& tr) {
        LocalTensor<TAcc> g = G();
        LocalTensor<uint32_t> idx = IdxKs();
        if (lanePhase_ == 0) {
            LocalTensor<TAcc> f = Fold();
            if (foldRows_ > 2) {
                uint32_t h = foldRows_ / 2;
                Op::Vec(f, f, f[(foldRows_ - h) * kSegLanes], h * kSegLanes);
                foldRows_ -= h;
            } else {
                Op::Vec(P()[kSegLanes], f, f[kSegLanes], kSegLanes);
                lanePhase_ = 1;
            }
            return true;
        }
        if (lanePhase_ == 1) {
            LocalTensor<TAcc> p = P();
            if (laneStep_ % 2 == 0) {
                Gather(g, p, idx[(laneStep_ / 2) * kSegLanes], 0, kSegLanes);
            } else {
                Op::Vec(p[kSegLanes], p[kSegLanes], g, kSegLanes);
            }
            if (++laneStep_ == 2 * kGatherSteps) {
                lanePhase_ = 2;
                laneStep_ = 0;
            }
            return true;
        }
        if (lanePhase_ == 2) {
            uint32_t k = 8u << laneStep_;
            LocalTensor<TAcc> src = laneStep_ % 2 == 0 ? P() : Q();
            LocalTensor<TAcc> dst = laneStep_ % 2 == 0 ? Q() : P();
            Op::Vec(dst[kSegLanes], src[kSegLanes], src[kSegLanes - k], kSegLanes);
            if (++laneStep_ == kShiftSteps) lanePhase_ = 3;
            return true;
        }
        LocalTensor<TAcc> last = kShiftSteps % 2 == 1 ? Q() : P();
        Gather(tr, last, idx, 0, kSegLanes);  // lane i: inclusive lane scan at i - 1
        Gather(g, last, idx[kGatherSteps * kSegLanes], 0, kSegLanes);
        return false;
    }

    // TR row 0 = exclusive lane scan with the running carry; every row of the
    // scan takes its lane's carry; the carry takes the tile's total.
    __aicore__ inline void ApplyCarries(const LocalTensor<TAcc>& tr) {
        LocalTensor<TAcc> carry = Carry();
        Op::Vec(tr, tr, carry, kSegLanes);
        PipeBarrier<PIPE_V>();
        Op::Vec(carry, carry, G(), kSegLanes);
        constexpr uint8_t kRowBlocks = kSegLanes * sizeof(TAcc) / 32;
        for (uint32_t j = 0; j < kSegLanes; j += kRepeatLanes) {
            Op::Rows(tr[kSegLanes + j], tr[kSegLanes + j], tr[j], kRepeatLanes, static_cast<uint8_t>(width_),
                     BinaryRepeatParams(1, 1, 1, kRowBlocks, kRowBlocks, 0));
        }
        PipeBarrier<PIPE_V>();
    }

    // Long rows split over cores: phase 1 publishes the op of this core's part
    // of its last row (a NaN slot if the part holds a NaN); after SyncAll a
    // core starting inside a row combines the slots of the earlier cores of
    // that row into carryIn_ (carryNan_ if one is a NaN).
    __aicore__ inline void CarryIn() {
        if (!t_.sync) return;
        TAcc part = Op::template Identity<TAcc>();
        if (begin_ < end_) {
            uint64_t lastRow = (end_ - 1) / t_.row_len * t_.row_len;
            LocalTensor<TAcc> scratch = TR();
            checkedTo_ = begin_ > lastRow ? begin_ : lastRow;
            if constexpr (kIndices) {
                part = LastRecord(checkedTo_, end_);
            } else {
                part = OpRange<Op>(gx_, checkedTo_, end_, kTile, qIn_, scratch, scratch[kTile],
                                   bufHalf_.Get<half>(), kCheckNan ? &nan_ : static_cast<Nan*>(nullptr));
            }
            if constexpr (kCheckNan) partNan_ = nan_.Seen();
        }
        Exchange(part);
    }

    // Publishes `part` (a NaN slot when partNan_), SyncAll, and combines the
    // slots of the earlier cores of this core's first row into carryIn_.
    __aicore__ inline void Exchange(TAcc part) {
        const uint64_t len = t_.row_len;
        LocalTensor<TAcc> one = bufSmall_.GetWithOffset<TAcc>(32 / sizeof(TAcc), kOneAt);
        if (partNan_) {
            one.template ReinterpretCast<int32_t>().SetValue(0, kNanBits);
            PipeSync<HardEvent::S_MTE3>();
            StoreAny(gSlots_[core_ * kSumSlot<TAcc>], one, 1);
            PipeSync<HardEvent::MTE3_S>();
        } else {
            StoreScalar(gSlots_[core_ * kSumSlot<TAcc>], one, part);
        }
        SyncAll();
        if (begin_ % len != 0 && begin_ < end_) {
            LocalTensor<TAcc> slots = bufSmall_.GetWithOffset<TAcc>(kMaxCores * 32 / sizeof(TAcc), kSlotsAt);
            DataCopy(slots, gSlots_, cores_ * kSumSlot<TAcc>);
            PipeSync<HardEvent::MTE2_S>();
            uint64_t rowStart = begin_ / len * len;
            for (uint32_t j = core_; j > 0; --j) {
                uint32_t at = (j - 1) * kSumSlot<TAcc>;
                if constexpr (kCheckNan) {
                    int32_t bits = slots.template ReinterpretCast<int32_t>().GetValue(at);
                    if ((bits & 0x7fffffff) > 0x7f800000) carryNan_ = true;
                }
                carryIn_ = Op::Scalar(carryIn_, slots.GetValue(at));
                if (static_cast<uint64_t>(j - 1) * t_.per_core <= rowStart) break;
            }
            ScalarReadsDone();
        }
    }

    // Hold mode (one row): the tiles are scanned from the identity and kept
    // in UB; this core's part of the row is Carry() (its lanes all equal).
    // Exchange, then the carry of the earlier cores goes onto every held
    // output (and the row's total) before they are stored.
    __aicore__ inline void StoreHeld() {
        TAcc part = Op::template Identity<TAcc>();
        if (heldCount_ > 0) {
            PipeSync<HardEvent::V_S>();
            part = Carry().GetValue(0);
            ScalarReadsDone();
        }
        if constexpr (kCheckNan) partNan_ = nan_.Seen();
        Exchange(part);
        const bool carried = begin_ % t_.row_len != 0;
        LocalTensor<TAcc> c = bufSmall_.GetWithOffset<TAcc>(kRepeatLanes, kSlotsAt);
        if (carried && heldCount_ > 0) {
            Duplicate(c, carryIn_, static_cast<int32_t>(kRepeatLanes));
            PipeBarrier<PIPE_V>();
            constexpr uint8_t kBlocks = 256 / 32;
            for (uint32_t k = 0; k < heldCount_; ++k) {
                uint32_t repeats = (held_[k].count + kRepeatLanes - 1) / kRepeatLanes;
                Op::Rows(heldOut_[k], heldOut_[k], c, kRepeatLanes, static_cast<uint8_t>(repeats),
                         BinaryRepeatParams(1, 1, 1, kBlocks, kBlocks, 0));
            }
            Op::Vec(Carry(), Carry(), c, kRepeatLanes);
            PipeBarrier<PIPE_V>();
        }
        for (uint32_t k = 0; k < heldCount_; ++k) StoreQueued(qOut_, heldOut_[k], gy_[held_[k].base], held_[k].count);
        if (t_.want_total && heldCount_ > 0 && held_[heldCount_ - 1].endsRow) {
            StoreTotals(held_[heldCount_ - 1].row, Carry(), 1);
        }
    }

    // The tile of phase 1 at `off` (inside one row, before `end`).
    __aicore__ inline void PartTile(TileDesc& d, uint64_t off, uint64_t end) {
        d.base = off;
        d.row = off / t_.row_len;
        d.count = static_cast<uint32_t>(end - off < tileElems_ ? end - off : tileElems_);
    }

    // Indices mode, phase 1: the last record position in [from, end) (one
    // row), or kNoRecord; tiles as the scan takes them, the next one loading
    // while the current one is ranked.
    __aicore__ inline int32_t LastRecord(uint64_t from, uint64_t end) {
        LocalTensor<int32_t> acc = TR();
        LocalTensor<int32_t> r = acc[kTile];
        Duplicate(acc, kNoRecord, static_cast<int32_t>(kTile));
        PipeBarrier<PIPE_V>();
        TileDesc d[2];
        PartTile(d[0], from, end);
        Load(d[0]);
        uint32_t k = 0;
        for (uint64_t off = from; off < end; off += tileElems_, ++k) {
            if (off + tileElems_ < end) {
                PartTile(d[(k + 1) % 2], off + tileElems_, end);
                Load(d[(k + 1) % 2]);
            }
            LocalTensor<TIn> in = qIn_.DeQue<TIn>();
            Records(d[k % 2], in, r);
            PipeBarrier<PIPE_V>();
            qIn_.FreeTensor(in);
            Max(acc, acc, r, static_cast<int32_t>(padded_));
            PipeBarrier<PIPE_V>();
        }
        FoldRecords<OpMax>(acc, 0, kTile / 8, 8);
        PipeSync<HardEvent::V_S>();
        int32_t last = acc.GetValue(0);
        for (uint32_t i = 1; i < 8; ++i) last = last > acc.GetValue(i) ? last : acc.GetValue(i);
        ScalarReadsDone();
        return last;
    }

    // NaN propagation (a core that saw a NaN, or starts inside a row that
    // holds one on an earlier core): this core's tiles again, x read on the
    // scalar unit; from each row's first NaN (exclusive: one later) to the
    // end of the row's part here y is stored as NaN, and the row's total.
    __aicore__ inline void FixNan() {
        LocalTensor<TAcc> nans = TR();
        PipeBarrier<PIPE_V>();
        Duplicate(nans.template ReinterpretCast<int32_t>(), kNanBits, static_cast<int32_t>(kTile));
        PipeSync<HardEvent::V_MTE3>();
        PipeSync<HardEvent::V_MTE2>();
        const uint32_t shift = t_.exclusive ? 1 : 0;
        bool rowNan = false;  // long rows: the current row holds a NaN before this tile
        next_ = begin_;
        TileDesc d;
        while (Next(d)) {
            if (t_.segments && d.startsRow) rowNan = d.base == begin_ && carryNan_;
            if (t_.segments && (rowNan || (d.base >= checkedTo_ && !partNan_))) {
                if (rowNan) StoreNan(gy_[d.base], nans, d.count);
            } else {
                // Lanes: whole rows (short rows) or one part of a row.
                const uint32_t lane = t_.segments ? d.count : width_;
                // x into the second half of TR (NaNs to store: the first).
                LocalTensor<TIn> xin = TR()[kTile].template ReinterpretCast<TIn>();
                LoadAny(xin, gx_[d.base], d.count);
                PipeSync<HardEvent::MTE2_S>();
                LocalTensor<Bits> xs = xin.template ReinterpretCast<Bits>();
                for (uint32_t r = 0; r * lane < d.count; ++r) {
                    uint32_t c = 0;
                    while (c < lane && !Nan::IsNan(xs.GetValue(r * lane + c))) ++c;
                    if (c == lane) continue;
                    if (c + shift < lane) StoreNan(gy_[d.base + r * lane + c + shift], nans, lane - c - shift);
                    if (t_.want_total && !t_.segments) StoreNan(gTotals_[(d.row + r) * t_.total_stride], nans, 1);
                    rowNan = true;
                }
                ScalarReadsDone();
            }
            if (t_.want_total && t_.segments && d.endsRow && rowNan) {
                StoreNan(gTotals_[d.row * t_.total_stride], nans, 1);
            }
        }
    }

    // Stores NaN over outputs this core (the scan, or an earlier NaN store
    // into the same 32-byte block) may have written before.
    __aicore__ static inline void StoreNan(const GlobalTensor<TAcc>& dst, const LocalTensor<TAcc>& nans,
                                           uint32_t count) {
        PipeBarrier<PIPE_MTE3>();
        StoreAny(dst, nans, count);
    }

    // Writes `count` totals (from UB, pipe V) for rows first.. to the totals.
    __aicore__ inline void StoreTotals(uint64_t first, const LocalTensor<TAcc>& src, uint32_t count) {
        LocalTensor<TAcc> out = qTot_.AllocTensor<TAcc>();
        Op::Copy(out, src, count);
        PipeBarrier<PIPE_V>();
        qTot_.EnQue(out);
        out = qTot_.DeQue<TAcc>();
        StoreAny(gTotals_[first * t_.total_stride], out, t_.total_stride == 1 ? count : 1);
        qTot_.FreeTensor(out);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, kAhead + 1> qIn_;  // one tile computes while the next kAhead load
    TQue<TPosition::VECIN, kAhead + 1> qVal_;  // indices mode: y with x
    TQue<TPosition::VECOUT, 1> qOut_, qTot_;
    // At most 8 buffers per position: the small ones share bufSmall_.
    TBuf<TPosition::VECCALC> bufTR_, bufIdxF_, bufIdxB_, bufHalf_, bufSmall_, bufNan_, bufNanMask_;
    TBuf<TPosition::VECCALC> bufPos_;  // indices mode: PositionTable
    Nan nan_;
    GlobalTensor<TIn> gx_;
    GlobalTensor<TAcc> gy_, gTotals_, gSlots_;
    GlobalTensor<TV> gVal_;
    OpScanTiling t_;
    uint32_t lanes_ = 0, width_ = 0, tileElems_ = 0, padded_ = 0, core_ = 0, cores_ = 0;
    uint64_t begin_ = 0, end_ = 0, next_ = 0;
    uint64_t checkedTo_ = 0;  // the scan masks tiles before it for NaN, phase 1 the rest
    bool partNan_ = false;    // phase 1 saw a NaN
    bool carryNan_ = false;   // an earlier core saw a NaN in this core's first row
    uint32_t lanePhase_ = 0, laneStep_ = 0, foldRows_ = 0;
    TAcc carryIn_ = 0;
    // Hold mode (OpScanTiling::hold): the scanned tiles waiting for the carry.
    TileDesc held_[kHoldTiles];
    LocalTensor<TAcc> heldOut_[kHoldTiles];
    uint32_t heldCount_ = 0;
};

}  // namespace opscan

// The positions of cummax/cummin (see the top): x (TIn) and its inclusive
// max or min scan `values` (TVal) in, int32 `indices` out; the tiling of the
// value scan without totals.
template <typename TIn, typename TVal, uint32_t kTile, uint32_t kMaxLanes, uint32_t kSegLanes>
__aicore__ inline void OpScanIndices(GM_ADDR x, GM_ADDR values, GM_ADDR indices, GM_ADDR workspace,
                                     const OpScanTiling& t) {
    opscan::Scanner<OpMax, TIn, int32_t, kTile, kMaxLanes, kSegLanes, TVal> scanner;
    scanner.Run(x, indices, indices, workspace, t, values);
}

template <typename Op, typename TIn, typename TAcc, uint32_t kTile, uint32_t kMaxLanes, uint32_t kSegLanes>
__aicore__ inline void OpScan(GM_ADDR x, GM_ADDR y, GM_ADDR totals, GM_ADDR workspace, const OpScanTiling& t) {
    opscan::Scanner<Op, TIn, TAcc, kTile, kMaxLanes, kSegLanes> scanner;
    scanner.Run(x, y, totals, workspace, t);
}

}  // namespace ascend_scan
