// SegSum (docs/algorithms.md, "Segmented sum in one pass (SEGSUM)"): the sum
// of every segment that int8 start flags mark, in f32, in one launch on the
// vector cores. Each core owns a range of whole tiles.
//
// Phase 1 (tiles last to first, so that the L2 keeps the bits phase 2 reads
// first): the core's flags are cast to half and added lane-wise (the count
// of ones, folded exactly by FoldLaneCounts) and their lane-wise max as
// bytes kept (FoldFlagMax; flags other than 0/1 are refused by the host).
// The count and the flag range go to the core's 32-byte slot (the layout
// of SplitCount's slots, so the host sums them as COMPRESS's); core 0 counts position 0 as a start
// whatever its flag. Each tile's start mask (a bit per element: flag != 0,
// except position 0, which closes no segment) goes to the workspace, so
// phase 2 reads an eighth of the flags' bytes and skips their cast (which
// phase 1 needs for the count anyway) and compare. SyncAll; with a flag outside 0/1 no core writes a sum.
//
// Phase 2, per tile of kTile elements (the start mask first, and from it the
// count m of starts):
// - a tile with at most kSparseStarts starts (sparse) sums 64-element blocks
//   (one WholeReduceSum); the prefix before the start at p = 64j + r is the
//   sum of blocks 0..j-1 plus that of x[64j, p) (two one-repeat ReduceSums
//   per start, issued back to back) and the tile total the sum of all
//   blocks: G[k] below, without the scans;
// - else (dense) the tile is transposed by a Gather into kW rows of kL
//   lanes (lane r holds elements [r * kW, r * kW + kW)), cast to f32
//   (16-bit inputs are gathered before the cast: half the Gather's bytes),
//   and scanned down the rows (Hillis-Steele over whole rows: log2(kW)
//   steps), so each lane holds its inclusive scan;
// - the lane totals are scanned (exclusive, Hillis-Steele: Gathers for shifts
//   of 1, 2 and 4 lanes, the first two straight from the rows, offset reads
//   for 8 and more) and added to the rows
//   shifted down by one (a zero row in front): the tile-local exclusive scan
//   X in transposed order;
// - a GatherMask of the transposed offset of every position by the start
//   mask picks those of the starts, in position order, and one Gather takes
//   X there: G[k], the tile's sum before
//   its k-th start. The segment that start k closes sums to G[k] - G[k-1]
//   (k >= 1) or G[0] + carry (carry: the open segment's sum before the tile),
//   one Gather (shift by one) and one Sub for all of them;
// - the carry becomes tile total - G[last];
// - a 16-bit tile without starts only adds its x lane-wise (f32) into an
//   accumulator in the rows buffer (Defer), which the next tile with starts
//   sums (one WholeReduceSum and one ReduceSum, Fold) into its first sum
//   and its carry: no block sums, no scalar read per tile. A non-finite
//   accumulator sends the deferred tiles to an in-order rescan too.
// A tile whose starts' prefixes or total are not finite (an inf or NaN in x,
// or an f32 overflow inside the tile) is summed again in order on the scalar
// unit, which gives IEEE's sequential results (inf - inf never appears).
// Sums go out with DataCopyPad at the running count (byte-exact, so cores
// may share a 32-byte block of the sums). The first sum a core writes lacks
// the part of its segment on earlier cores: each core publishes that head,
// its tail (the carry at its end) and whether it saw a start; after a second
// SyncAll every core adds the earlier cores' part to its head sum, and the
// last core writes the last segment's sum.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ops.h"
#include "blocks_reduce.h"

namespace ascend_scan {
namespace segsum {

constexpr uint32_t kMaxCores = 64;
constexpr uint32_t kSlotInts = 8;  // 32 bytes: count, min flag, max flag (phase 1); head, tail, seen (phase 2)
// A tile with at most this many starts skips the transpose and the scans:
// each start's prefix is two one-repeat ReduceSums over 64-element block
// sums (Sparse), cheaper than the ~40 dependent vector steps of the scans.
constexpr uint32_t kSparseStarts = 16;
constexpr uint32_t kBlock = 64;  // floats per repeat: one block sum each

// TIn: half, bfloat16_t or float; kL lanes of kW elements per tile.
template <typename TIn, uint32_t kL, uint32_t kW>
class Summer {
public:
    static constexpr uint32_t kTile = kL * kW;
    static constexpr bool kNarrow = sizeof(TIn) == 2;
    // Phase 2 loads this many tiles ahead (one: 192 us at 2^24 f16 and 0.01%,
    // two: 185). The UB holds one more 16-bit tile, no more f32 ones.
    static constexpr uint32_t kXAhead = kNarrow ? 2 : 1;
    static_assert(kXAhead <= kFlagsAhead, "the start masks share the flags' queue");
    static_assert(kL % 64 == 0 && kL >= 64 && kL <= 256, "whole repeats per row, strides within 255 blocks");
    static_assert(kTile % 128 == 0, "whole half repeats of the flags");
    // Arena layout (bytes). Rows: a zero row, then the kW transposed rows.
    static constexpr uint32_t kRowsAt = 0, kRowsBytes = (kW + 1) * kL * 4;
    static constexpr uint32_t kXAt = kRowsAt + kRowsBytes;  // X; also flags (half), rows' ping-pong, G shifted
    static constexpr uint32_t kToRowsAt = kXAt + (kTile + 8) * 4; // transpose: lane-major byte offsets of x
    static constexpr uint32_t kToXAt = kToRowsAt + kTile * 4;     // position -> byte offset in X
    static constexpr uint32_t kShiftAt = kToXAt + kTile * 4;      // k -> byte offset of G[k - 1]
    static constexpr uint32_t kOffsAt = kShiftAt + (kTile + 8) * 4;  // the starts' offsets in X
    static constexpr uint32_t kScanAt = kOffsAt + kTile * 4;      // two buffers of kL zeros + kL lanes
    static constexpr uint32_t kTmpAt = kScanAt + 2 * 2 * kL * 4;  // shifted lanes; ReduceSum scratch
    static constexpr uint32_t kHsAt = kTmpAt + kL * 4;            // four lane shift tables (Init)
    static constexpr uint32_t kRedAt = kHsAt + 4 * kL * 4;        // one reduction result
    static constexpr uint32_t kSlotAt = kRedAt + 32;              // own slot
    static constexpr uint32_t kSlotsAt = kSlotAt + 32;            // every core's slot
    static constexpr uint32_t kNarrowAt = kSlotsAt + kMaxCores * 32;  // 16-bit x transposed
    // Sparse tiles: the block sums; one 8-float slot per ReduceSum result
    // (the starts' block prefixes, their in-block parts, the total) and one
    // scratch per ReduceSum (one pipe writes no granule twice unordered);
    // the byte offsets of the prefix slots (a Gather compacts them).
    // The last slot holds the deferred tiles' sum (Fold).
    static constexpr uint32_t kPartSlots = 2 * kSparseStarts + 2;
    static constexpr uint32_t kTotalSlot = 2 * kSparseStarts;
    static constexpr uint32_t kFoldSlot = 2 * kSparseStarts + 1;
    static constexpr uint32_t kBlocksAt = kNarrowAt + (kNarrow ? kTile * 2 : 0);
    static constexpr uint32_t kPartsAt = kBlocksAt + kTile / kBlock * 4;
    static constexpr uint32_t kPartTmpAt = kPartsAt + kPartSlots * 32;
    static constexpr uint32_t kPickAt = kPartTmpAt + kPartSlots * 32;
    // Positions 0..kTile-1 as int16: a GatherMask of them by the start mask
    // counts and finds a tile's starts in half the repeats of the offsets'.
    static constexpr uint32_t kPosAt = kPickAt + kSparseStarts * 4;
    static constexpr uint32_t kFoldBlocksAt = kPosAt + kTile * 2;  // the accumulator's block sums
    static constexpr uint32_t kBytes = kFoldBlocksAt + kTile / kBlock * 4;
    static_assert(kTile / kBlock <= kBlock, "the block sums' prefixes are one repeat");

    __aicore__ inline void Run(GM_ADDR x, GM_ADDR flags, GM_ADDR sums, GM_ADDR workspace, const SegSumTiling& t) {
        core_ = static_cast<uint32_t>(GetBlockIdx());
        cores_ = static_cast<uint32_t>(GetBlockNum());
        begin_ = static_cast<uint64_t>(core_) * t.per_core;
        end_ = MinU64(begin_ + t.per_core, t.n);
        gx_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        gf_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(flags), t.n);
        gSums_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(sums), t.n);
        gCount_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace), cores_ * kSlotInts);
        gParts_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace + kMaxCores * 32), cores_ * kSlotInts);
        // The start masks of whole 128-element groups (crates/algos/src/segsum.rs).
        gBits_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(workspace + 2 * kMaxCores * 32), (t.n + 127) / 128 * 16);
        Init();

        Count();
        BuildShift();
        PipeSync<HardEvent::MTE3_MTE2>();  // phase 2 reads the start masks phase 1 wrote
        SyncAll();
        LocalTensor<int32_t> slots = At<int32_t>(kSlotsAt, kMaxCores * kSlotInts);
        PipeSync<HardEvent::S_MTE2>();
        DataCopy(slots, gCount_, cores_ * kSlotInts);
        PipeSync<HardEvent::MTE2_S>();
        uint64_t before = 0, segments = 0;
        bool valid = true;
        for (uint32_t c = 0; c < cores_; ++c) {
            const uint64_t count = static_cast<uint64_t>(slots.GetValue(c * kSlotInts));
            if (c < core_) before += count;
            segments += count;
            valid = valid && slots.GetValue(c * kSlotInts + 1) >= 0 && slots.GetValue(c * kSlotInts + 2) <= 1;
        }
        ScalarReadsDone();
        if (!valid) return;  // every core sees the same slots: none writes, none waits
        // The sums closed by this core's starts begin at the starts before it
        // (slot 0 counts segment 0 in place of a start at position 0).
        at_ = core_ == 0 ? 0 : before - 1;
        first_ = at_;
        Sweep();
        Publish();
        SyncAll();
        Finish(segments);
    }

private:
    template <typename T>
    __aicore__ inline LocalTensor<T> At(uint32_t byteOffset, uint32_t count) {
        return arena_.At<T>(byteOffset, count);
    }

    __aicore__ inline void Init() {
        pipe_.InitBuffer(qIn_, kXAhead + 1, kTile * sizeof(TIn));
        pipe_.InitBuffer(qFlags_, kFlagsAhead + 1, kTile);
        pipe_.InitBuffer(qBits_, 3, kTile / 8);
        pipe_.InitBuffer(qOut_, 1, (8 + kTile) * 4);
        arena_.Init(pipe_, kBytes);
        // The transposes: toRows[j] (rows order j = c * kL + r) is the byte
        // offset in x of element r * kW + c, toX[i] that of element i in X.
        TransposeOffsets();
        // Lane shifts for the scan of the lane totals: tables 0 and 1 shift
        // by 2 and 4 lanes in a buffer behind kL zeros (lane i reads lane
        // i - s); tables 2 and 3 shift the totals (row kW of the rows) by 1
        // and 2 lanes, the lanes before them reading the zero row.
        LocalTensor<int32_t> hs = At<int32_t>(kHsAt, 4 * kL);
        CreateVecIndex(hs, static_cast<int32_t>(kL - 2), kL);
        CreateVecIndex(hs[kL], static_cast<int32_t>(kL - 4), kL);
        CreateVecIndex(hs[2 * kL], static_cast<int32_t>(kW * kL - 1), kL);
        CreateVecIndex(hs[3 * kL], static_cast<int32_t>(kW * kL - 2), kL);
        Duplicate(At<float>(kRowsAt, kL), 0.0f, static_cast<int32_t>(kL));
        Duplicate(At<float>(kScanAt, 4 * kL), 0.0f, static_cast<int32_t>(4 * kL));
        // A ReduceSum writes lane 0 of its slot; the Add of two slots reads all 8.
        Duplicate(At<float>(kPartsAt, kPartSlots * 8), 0.0f, static_cast<int32_t>(kPartSlots * 8));
        LocalTensor<int32_t> pick = At<int32_t>(kPickAt, kSparseStarts);
        CreateVecIndex(pick, static_cast<int32_t>(0), kSparseStarts);
        CreateVecIndex(At<int16_t>(kPosAt, kTile), static_cast<int16_t>(0), kTile);
        PipeBarrier<PIPE_V>();
        Muls(hs, hs, static_cast<int32_t>(4), static_cast<int32_t>(4 * kL));
        Muls(pick, pick, static_cast<int32_t>(32), static_cast<int32_t>(kSparseStarts));
        PipeSync<HardEvent::V_S>();
        hs.SetValue(2 * kL, 0);
        hs.SetValue(3 * kL, 0);
        hs.SetValue(3 * kL + 1, 0);
        PipeSync<HardEvent::S_V>();
    }

    // The two transpose tables, dst[i] = ((i % b) * a + i / b) * bytes for
    // i < kTile = a * b (b a power of two, so the float quotient is exact),
    // on the vector unit; each step issued for both tables before one
    // barrier, so the two chains share their latencies. X, the offsets, the
    // shift table and the rows (all built later) are scratch.
    __aicore__ inline void TransposeOffsets() {
        struct Table {
            LocalTensor<int32_t> dst;
            LocalTensor<float> f;
            LocalTensor<int32_t> q;
            uint32_t a, b, bytes;
        };
        Table tables[2] = {
            {At<int32_t>(kToRowsAt, kTile), At<float>(kXAt, kTile), At<int32_t>(kOffsAt, kTile), kW, kL,
             static_cast<uint32_t>(sizeof(TIn))},
            {At<int32_t>(kToXAt, kTile), At<float>(kShiftAt, kTile), At<int32_t>(kRowsAt, kTile), kL, kW, 4},
        };
        const int32_t count = static_cast<int32_t>(kTile);
        for (Table& t : tables) CreateVecIndex(t.dst, static_cast<int32_t>(0), kTile);
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Cast(t.f, t.dst, RoundMode::CAST_NONE, kTile);
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Muls(t.f, t.f, 1.0f / static_cast<float>(t.b), count);
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Cast(t.q, t.f, RoundMode::CAST_FLOOR, kTile);  // i / b
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Muls(t.f.template ReinterpretCast<int32_t>(), t.q, -static_cast<int32_t>(t.b), count);
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Add(t.dst, t.dst, t.f.template ReinterpretCast<int32_t>(), count);  // i % b
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Muls(t.dst, t.dst, static_cast<int32_t>(t.a), count);
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Add(t.dst, t.dst, t.q, count);
        PipeBarrier<PIPE_V>();
        for (Table& t : tables) Muls(t.dst, t.dst, static_cast<int32_t>(t.bytes), count);
        PipeBarrier<PIPE_V>();
    }

    // shift[k]: the byte offset of G[k - 1] in the output tile (G[k] sits
    // at float 8 + k, after the front), and shift[0] that of the front's
    // lane 0 (-carry, less the deferred tiles' sum: Tile). Built after
    // phase 1, which uses these bytes.
    __aicore__ inline void BuildShift() {
        LocalTensor<int32_t> shift = At<int32_t>(kShiftAt, kTile + 8);
        PipeBarrier<PIPE_V>();
        CreateVecIndex(shift, static_cast<int32_t>(7), kTile + 8);
        PipeBarrier<PIPE_V>();
        Muls(shift, shift, static_cast<int32_t>(4), static_cast<int32_t>(kTile + 8));
        PipeSync<HardEvent::V_S>();
        shift.SetValue(0, 0);
        PipeSync<HardEvent::S_V>();
    }

    __aicore__ inline uint32_t TileLen(uint64_t off) { return static_cast<uint32_t>(MinU64(kTile, end_ - off)); }
    // Bytes of a tile's start mask: its elements in whole 128-element groups.
    __aicore__ inline uint32_t MaskBytes(uint64_t off) { return (TileLen(off) + 127) / 128 * 16; }
    __aicore__ inline void LoadBits(uint64_t off) {
        LocalTensor<uint8_t> b = qFlags_.AllocTensor<uint8_t>();
        LoadAny(b, gBits_[off / 8], MaskBytes(off));
        qFlags_.EnQue(b);
    }
    __aicore__ inline void LoadX(uint64_t off) {
        LocalTensor<TIn> in = qIn_.template AllocTensor<TIn>();
        const uint32_t len = TileLen(off);
        if (len < kTile) {  // zeros add nothing and every lane is defined
            PipeBarrier<PIPE_V>();  // vector reads of the buffer's last tile (Defer waits for nothing)
            ZeroBeforeLoad(in, kTile);
        }
        LoadAny(in, gx_[off], len);
        qIn_.EnQue(in);
    }
    // Phase 1: count and range of this core's flags into its slot, the
    // start mask of each tile into the workspace.
    __aicore__ inline void Count() {
        // Lane-wise accumulators in the rows buffer (past the zero row) and the offsets buffer.
        LocalTensor<half> ones = At<half>(kRowsAt + kL * 4, kTile);
        LocalTensor<half> hi = At<half>(kOffsAt, kTile);
        LocalTensor<float> folded = At<float>(kShiftAt, kTile);  // (the shift table is built later)
        Duplicate(ones, static_cast<half>(0.0f), static_cast<int32_t>(kTile));
        Duplicate(hi, static_cast<half>(0.0f), static_cast<int32_t>(kTile));
        uint64_t count = 0;
        // Position 0 starts segment 0 whatever its flag: counted once, and
        // no sum ends there.
        if (core_ == 0 && begin_ < end_) first0_ = gf_.GetValue(0) != 0;
        const uint64_t tiles = (end_ - begin_ + kTile - 1) / kTile;
        for (uint64_t k = tiles; k > 0; --k) {
            const uint64_t off = begin_ + (k - 1) * kTile;
            LoadFlagsAhead(qFlags_, gf_, begin_, end_, kTile, k);
            const uint32_t padded = (TileLen(off) + 127) / 128 * 128;
            LocalTensor<half> h = DeQueFlagsAsHalf(qFlags_, At<half>(kXAt, kTile), padded);
            StoreStartMask(h, off, padded);
            Add(ones, ones, h, static_cast<int32_t>(padded));
            Max(hi, hi, h, static_cast<int32_t>(padded));
            if (LaneCountsDue(tiles, k))
                count += FoldLaneCounts(ones, folded, At<float>(kRedAt, 8), At<float>(kTmpAt, kL), kTile);
        }
        int32_t fmin = 0, fmax = 0;
        FoldFlagMax(hi, kTile, fmin, fmax);
        if (core_ == 0 && begin_ < end_) count = count - (first0_ ? 1 : 0) + 1;
        LocalTensor<int32_t> own = At<int32_t>(kSlotAt, kSlotInts);
        own.SetValue(0, static_cast<int32_t>(count));
        own.SetValue(1, fmin);
        own.SetValue(2, fmax);
        for (uint32_t i = 3; i < kSlotInts; ++i) own.SetValue(i, 0);
        StoreSlot(gCount_[core_ * kSlotInts], own, kSlotInts);
    }

    // The start mask of the tile at `off` (flags as halves `h`, `padded`
    // lanes) into the workspace; position 0's bit cleared.
    __aicore__ inline void StoreStartMask(const LocalTensor<half>& h, uint64_t off, uint32_t padded) {
        LocalTensor<uint8_t> bits = qBits_.AllocTensor<uint8_t>();
        CompareScalar(bits, h, static_cast<half>(0.0f), CMPMODE::NE, padded);
        if (off == 0 && first0_) {
            PipeSync<HardEvent::V_S>();
            bits.SetValue(0, static_cast<uint8_t>(bits.GetValue(0) & 0xFE));
            PipeSync<HardEvent::S_MTE3>();
            ScalarReadsDone();
        }
        bits = Handoff(qBits_, bits);
        StoreAny(gBits_[off / 8], bits, MaskBytes(off));
        qBits_.FreeTensor(bits);
    }

    // Phase 2 over this core's tiles.
    __aicore__ inline void Sweep() {
        uint64_t next = begin_;  // the next tile to load
        for (uint64_t off = begin_; off < end_; off += kTile) {
            for (; next < end_ && next <= off + kXAhead * kTile; next += kTile) {
                LoadBits(next);
                LoadX(next);
            }
            Tile(off);
        }
        if (Deferred()) {  // the core's last tiles had no start: their sum joins the carry
            Fold();
            PipeSync<HardEvent::V_S>();
            carry_ = FoldedCarry(At<float>(kPartsAt, kPartSlots * 8).GetValue(kFoldSlot * 8));
            ScalarReadsDone();
            deferTo_ = deferFrom_;
        }
    }

    __aicore__ inline void Tile(uint64_t off) {
        const uint32_t len = TileLen(off);
        // The starts' offsets in X, from the start mask.
        LocalTensor<uint8_t> bits = qFlags_.DeQue<uint8_t>();
        PipeBarrier<PIPE_V>();  // the previous tile's reads of the offsets
        uint64_t starts = 0;
        LocalTensor<uint32_t> offs = At<uint32_t>(kOffsAt, kTile);
        const GatherMaskParams once(1, 1, 8, 0);
        // After a sparse tile, expect another: the starts' positions (16-bit,
        // half the repeats) tell the count, and are what a sparse tile needs;
        // only a dense one then gathers the offsets too. After a dense tile,
        // the offsets at once (a sparse tile converts them to positions).
        const bool byPos = sparseBefore_;
        if (byPos) {
            GatherMask(offs.ReinterpretCast<int16_t>(), At<int16_t>(kPosAt, kTile), bits.ReinterpretCast<uint16_t>(),
                       true, len, once, starts);
        }
        if (!byPos || starts > kSparseStarts) {
            if (byPos) PipeBarrier<PIPE_V>();  // the positions' writes of these bytes
            GatherMask(offs, At<uint32_t>(kToXAt, kTile), bits.ReinterpretCast<uint32_t>(), true, len, once, starts);
        }
        ResetMask();
        const uint32_t m = static_cast<uint32_t>(starts);
        LocalTensor<TIn> in = qIn_.template DeQue<TIn>();
        // G, the tile's sum before each start, is gathered from `from` at the
        // byte offsets `at`.
        const bool sparse = m <= kSparseStarts;
        sparseBefore_ = sparse;
        // f32 tiles need no cast and are HBM-bound: summing each costs nothing
        // there (deferring them measured 2% slower).
        if constexpr (kNarrow) {
            if (m == 0) {
                Defer(in, off);
                qIn_.FreeTensor(in);
                qFlags_.FreeTensor(bits);
                return;
            }
        }
        LocalTensor<float> prefix, from;  // prefix: the lane prefixes of a dense tile
        LocalTensor<uint32_t> at;
        if (sparse) {
            SparsePrefixes(in, m, byPos);
            if (Deferred()) Fold();  // after the positions' scalar reads, which wait for the vector pipe
            from = At<float>(kPartsAt, kPartSlots * 8);
            at = At<uint32_t>(kPickAt, kSparseStarts);
        } else {
            if (Deferred()) Fold();  // before the rows, where the accumulator lives, are overwritten
            prefix = DensePrefixes(in);
            from = At<float>(kXAt, kTile + 8);
            at = At<uint32_t>(kOffsAt, kTile);
        }
        // G into out[8..8 + m) after an 8-float front whose last lane is
        // -carry, G shifted by one start into X (whose last lane m is then
        // G[m - 1]) and the sums D = G - shifted, in place.
        LocalTensor<float> out = qOut_.AllocTensor<float>();
        LocalTensor<float> xs = At<float>(kXAt, kTile + 8);
        LocalTensor<float> red = At<float>(kRedAt, 8);
        LocalTensor<float> parts = At<float>(kPartsAt, kPartSlots * 8);
        if (m > 0) {
            Duplicate(out, -carry_, static_cast<int32_t>(8));
            Gather(out[8], from, at, 0, m);
            PipeBarrier<PIPE_V>();
            if (Deferred()) Sub(out, out, parts[kFoldSlot * 8], static_cast<int32_t>(8));  // lane 0: the front
            ReduceSum(red, out[8], At<float>(kTmpAt, kL), static_cast<int32_t>(m));
            if (Deferred()) PipeBarrier<PIPE_V>();
            Gather(xs, out, At<uint32_t>(kShiftAt, kTile + 8), 0, m + 1);
            PipeBarrier<PIPE_V>();
            Sub(out[8], out[8], xs, static_cast<int32_t>(m));
        }
        PipeSync<HardEvent::V_S>();
        const float total = sparse ? from.GetValue(kTotalSlot * 8)
                                   : prefix.GetValue(kL - 1) +
                                         At<float>(kRowsAt, (kW + 1) * kL).GetValue(kW * kL + kL - 1);
        // The starts' prefixes are finite when their sum is (an overflow of
        // the sum only sends a finite tile to the rescan).
        bool rescan = NonFinite(total) || (m > 0 && NonFinite(red.GetValue(0)));
        if (Deferred()) {
            const float folded = parts.GetValue(kFoldSlot * 8);
            // The first sum took the deferred tiles' tree sum; where that is
            // not finite they are summed in order, and so is this tile.
            rescan = rescan || NonFinite(folded);
            if (rescan) carry_ = FoldedCarry(folded);
            deferTo_ = deferFrom_;
        }
        if (rescan) {
            carry_ = Rescan(in, bits, len, out);
            PipeSync<HardEvent::S_MTE3>();
        } else {
            carry_ = m > 0 ? total - xs.GetValue(m) : carry_ + total;
        }
        if (m > 0 && !seen_) {
            head_ = out.GetValue(8);
            seen_ = true;
        }
        ScalarReadsDone();
        qIn_.FreeTensor(in);
        qFlags_.FreeTensor(bits);
        qOut_.EnQue(out);
        out = qOut_.DeQue<float>();
        if (m > 0) StoreAny(gSums_[at_], out[8], m);
        qOut_.FreeTensor(out);
        at_ += m;
    }

    // Dense tiles: the tile-local exclusive scan X in transposed order (rows
    // 0..kW-1 scanned down plus the lane prefixes), from which Tile gathers
    // G at the starts' offsets. Returns the lane prefixes.
    __aicore__ inline LocalTensor<float> DensePrefixes(const LocalTensor<TIn>& in) {
        LocalTensor<float> rows = At<float>(kRowsAt, (kW + 1) * kL);
        LocalTensor<uint32_t> toRows = At<uint32_t>(kToRowsAt, kTile);
        if constexpr (kNarrow) {
            LocalTensor<half> t = At<half>(kNarrowAt, kTile);
            Gather(t, in.template ReinterpretCast<half>(), toRows, 0, kTile);
            PipeBarrier<PIPE_V>();
            Cast(rows[kL], t.template ReinterpretCast<TIn>(), RoundMode::CAST_NONE, kTile);
        } else {
            Gather(rows[kL], in, toRows, 0, kTile);
        }
        PipeBarrier<PIPE_V>();
        ScanRows(rows);
        LocalTensor<float> prefix = LanePrefixes(rows);
        LocalTensor<float> xs = At<float>(kXAt, kTile + 8);
        constexpr uint8_t kRowBlocks = static_cast<uint8_t>(kL * 4 / 32);
        for (uint32_t q = 0; q < kL; q += 64) {
            Add(xs[q], rows[q], prefix[q], static_cast<uint64_t>(64), static_cast<uint8_t>(kW),
                BinaryRepeatParams(1, 1, 1, kRowBlocks, kRowBlocks, 0));
        }
        PipeBarrier<PIPE_V>();
        return prefix;
    }

    // Sparse tiles (at most kSparseStarts starts): the start at position p =
    // 64j + r has G = (sum of block sums 0..j-1) + (sum of x[64j, p)), each
    // a one-repeat ReduceSum (a tree: the error stays that of the scans);
    // the tile total is the ReduceSum of all block sums.
    __aicore__ inline void SparsePrefixes(const LocalTensor<TIn>& in, uint32_t m, bool byPos) {
        // The starts' positions (gathered `byPos`, else from their offsets in
        // X, (p % kW) * kL + p / kW), read first, while the vector pipe has
        // nothing queued (no wait for a tile without starts).
        uint32_t pos[kSparseStarts];
        if (m > 0) PipeSync<HardEvent::V_S>();
        LocalTensor<uint32_t> offs = At<uint32_t>(kOffsAt, kTile);
        LocalTensor<int16_t> gathered = offs.ReinterpretCast<int16_t>();
        for (uint32_t k = 0; k < m; ++k) {
            if (byPos) {
                pos[k] = static_cast<uint32_t>(gathered.GetValue(k));
            } else {
                const uint32_t o = offs.GetValue(k) / 4;
                pos[k] = (o % kL) * kW + o / kL;
            }
        }
        LocalTensor<float> xf;
        if constexpr (kNarrow) {
            xf = At<float>(kXAt, kTile);
            Cast(xf, in, RoundMode::CAST_NONE, kTile);
            PipeBarrier<PIPE_V>();
        } else {
            xf = in;
        }
        LocalTensor<float> blocks = At<float>(kBlocksAt, kTile / kBlock);
        constexpr int32_t kBlocks = static_cast<int32_t>(kTile / kBlock);
        WholeReduceSum(blocks, xf, static_cast<int32_t>(kBlock), kBlocks, 1, 1, 8);
        PipeBarrier<PIPE_V>();
        LocalTensor<float> parts = At<float>(kPartsAt, kPartSlots * 8);
        LocalTensor<float> tmp = At<float>(kPartTmpAt, kPartSlots * 8);
        ReduceSum(parts[kTotalSlot * 8], blocks, tmp[kTotalSlot * 8], kBlocks);
        for (uint32_t k = 0; k < m; ++k) {
            const uint32_t j = pos[k] / kBlock, r = pos[k] % kBlock;
            // A count of 0 writes nothing: the slot is zeroed instead.
            if (j > 0) {
                ReduceSum(parts[8 * k], blocks, tmp[8 * k], static_cast<int32_t>(j));
            } else {
                Duplicate(parts[8 * k], 0.0f, 8);
            }
            const uint32_t inBlock = 8 * (kSparseStarts + k);
            if (r > 0) {
                ReduceSum(parts[inBlock], xf[j * kBlock], tmp[inBlock], static_cast<int32_t>(r));
            } else {
                Duplicate(parts[inBlock], 0.0f, 8);
            }
        }
        if (m > 0) {
            PipeBarrier<PIPE_V>();
            Add(parts, parts, parts[8 * kSparseStarts], static_cast<int32_t>(8 * m));
            PipeBarrier<PIPE_V>();
        }
    }

    // The running sum of the tiles without starts since the last tile with
    // them, lane by lane in f32, in rows 1..kW (only dense tiles use them,
    // and Fold empties them first).
    __aicore__ inline LocalTensor<float> Accumulator() { return At<float>(kRowsAt + kL * 4, kTile); }

    // A 16-bit tile without starts: x into the accumulator (the first such
    // tile's x becomes it).
    __aicore__ inline void Defer(const LocalTensor<TIn>& in, uint64_t off) {
        LocalTensor<float> acc = Accumulator();
        if (!Deferred()) {
            Cast(acc, in, RoundMode::CAST_NONE, kTile);
        } else {
            LocalTensor<float> xf = At<float>(kXAt, kTile);
            Cast(xf, in, RoundMode::CAST_NONE, kTile);
            PipeBarrier<PIPE_V>();
            Add(acc, acc, xf, static_cast<int32_t>(kTile));
        }
        if (!Deferred()) deferFrom_ = off;
        deferTo_ = off + TileLen(off);
    }

    // The accumulator's sum (64-element block sums, then their sum) into
    // the fold slot, lane 0; the slot's other lanes stay zero (Init).
    __aicore__ inline void Fold() {
        LocalTensor<float> blocks = At<float>(kFoldBlocksAt, kTile / kBlock);
        LocalTensor<float> parts = At<float>(kPartsAt, kPartSlots * 8);
        constexpr int32_t kBlocks = static_cast<int32_t>(kTile / kBlock);
        PipeBarrier<PIPE_V>();  // the last Defer's writes
        WholeReduceSum(blocks, Accumulator(), static_cast<int32_t>(kBlock), kBlocks, 1, 1, 8);
        PipeBarrier<PIPE_V>();
        ReduceSum(parts[kFoldSlot * 8], blocks, At<float>(kPartTmpAt + kFoldSlot * 32, 8), kBlocks);
        PipeBarrier<PIPE_V>();
    }

    // Whether the accumulator holds deferred tiles, [deferFrom_, deferTo_).
    __aicore__ inline bool Deferred() const { return deferTo_ > deferFrom_; }

    // The carry with the deferred tiles' sum added: their tree sum `folded`
    // where it is finite, else (an inf, a NaN or an overflow) the tiles
    // reloaded from GM into the accumulator's bytes and summed in order on
    // the scalar unit.
    __aicore__ inline float FoldedCarry(float folded) {
        if (!NonFinite(folded)) return carry_ + folded;
        LocalTensor<TIn> raw = Accumulator().template ReinterpretCast<TIn>();
        float acc = carry_;
        ScalarReadsDone();
        for (uint64_t off = deferFrom_; off < deferTo_; off += kTile) {
            const uint32_t len = TileLen(off);
            LoadAny(raw, gx_[off], len);
            PipeSync<HardEvent::MTE2_V>();
            const LocalTensor<float> xs = WidenIntoX(raw, len);
            for (uint32_t i = 0; i < len; ++i) acc = acc + xs.GetValue(i);
            ScalarReadsDone();
        }
        return acc;
    }

    // x widened to f32 into X, ready for the scalar unit's in-order sums.
    __aicore__ inline LocalTensor<float> WidenIntoX(const LocalTensor<TIn>& in, uint32_t len) {
        LocalTensor<float> xs = At<float>(kXAt, kTile + 8);
        if constexpr (kNarrow) {
            Cast(xs, in, RoundMode::CAST_NONE, len);
        } else {
            Adds(xs, in, 0.0f, static_cast<int32_t>(len));
        }
        PipeSync<HardEvent::V_S>();
        return xs;
    }

    // Inclusive scan down rows 1..kW of `rows` (each lane on its own):
    // Hillis-Steele over whole rows, ping-pong with the X buffer (free until
    // X is made), an even number of steps so that it ends in `rows`.
    __aicore__ inline void ScanRows(const LocalTensor<float>& rows) {
        static_assert(kW == 16, "four ping-pong steps end where they began");
        LocalTensor<float> bufs[2] = {rows[kL], At<float>(kXAt, kTile)};  // row r at (r - 1) * kL
        uint32_t cur = 0;
        for (uint32_t s = 1; s < kW; s *= 2) {
            const LocalTensor<float>& from = bufs[cur];
            const LocalTensor<float>& to = bufs[cur ^ 1];
            Add(to[s * kL], from[s * kL], from, static_cast<int32_t>((kW - s) * kL));
            Adds(to, from, 0.0f, static_cast<int32_t>(s * kL));
            PipeBarrier<PIPE_V>();
            cur ^= 1;
        }
    }

    // The exclusive scan of the kL lane totals (row kW of `rows`), by
    // Hillis-Steele over the totals shifted by one lane: its first step adds
    // the totals shifted by one and by two lanes, both gathered straight
    // from `rows` (the lanes before them read the zero row); the others run
    // over buffers whose first kL floats stay zero. Returns the kL prefixes.
    __aicore__ inline LocalTensor<float> LanePrefixes(const LocalTensor<float>& rows) {
        LocalTensor<float> bufs[2] = {At<float>(kScanAt, 2 * kL), At<float>(kScanAt + 2 * kL * 4, 2 * kL)};
        LocalTensor<float> tmp = At<float>(kTmpAt, kL);
        Gather(bufs[1][kL], rows, At<uint32_t>(kHsAt + 2 * kL * 4, kL), 0, kL);  // lane i: total i - 1
        Gather(tmp, rows, At<uint32_t>(kHsAt + 3 * kL * 4, kL), 0, kL);          // lane i: total i - 2
        PipeBarrier<PIPE_V>();
        Add(bufs[0][kL], bufs[1][kL], tmp, static_cast<int32_t>(kL));
        PipeBarrier<PIPE_V>();
        uint32_t cur = 0;
        for (uint32_t s = 2, step = 0; s < kL; s *= 2, ++step) {
            LocalTensor<float> from = bufs[cur], to = bufs[cur ^ 1];
            if (s < 8) {  // shifts under a 32-byte block: a Gather
                Gather(tmp, from, At<uint32_t>(kHsAt + step * kL * 4, kL), 0, kL);
                PipeBarrier<PIPE_V>();
                Add(to[kL], from[kL], tmp, static_cast<int32_t>(kL));
            } else {
                Add(to[kL], from[kL], from[kL - s], static_cast<int32_t>(kL));
            }
            PipeBarrier<PIPE_V>();
            cur ^= 1;
        }
        return bufs[cur][kL];
    }

    // The tile summed in order on the scalar unit (after an inf, a NaN or an
    // overflow): the sums of the segments its starts close into out[8..],
    // returning the new carry. x is widened into X first.
    __aicore__ inline float Rescan(const LocalTensor<TIn>& in, const LocalTensor<uint8_t>& bits, uint32_t len,
                                   const LocalTensor<float>& out) {
        ScalarReadsDone();
        const LocalTensor<float> xs = WidenIntoX(in, len);
        float acc = carry_;
        uint32_t k = 0;
        for (uint32_t i = 0; i < len; ++i) {
            if (((bits.GetValue(i / 8) >> (i % 8)) & 1) != 0) {
                out.SetValue(8 + k, acc);
                ++k;
                acc = 0.0f;
            }
            acc = acc + xs.GetValue(i);
        }
        return acc;
    }

    // This core's head (the first sum it wrote, without the earlier cores'
    // part of that segment), tail (its carry at the end) and whether it saw
    // a start, into its phase-2 slot.
    __aicore__ inline void Publish() {
        LocalTensor<int32_t> own = At<int32_t>(kSlotAt, kSlotInts);
        own.SetValue(0, static_cast<int32_t>(AsBits(head_)));
        own.SetValue(1, static_cast<int32_t>(AsBits(carry_)));
        own.SetValue(2, seen_ ? 1 : 0);
        for (uint32_t i = 3; i < kSlotInts; ++i) own.SetValue(i, 0);
        StoreSlot(gParts_[core_ * kSlotInts], own, kSlotInts);
    }

    // After the second SyncAll: the earlier cores' part of this core's first
    // segment (their tails back to the last core that saw a start, in core
    // order) completes its head sum; the last core writes the last sum.
    __aicore__ inline void Finish(uint64_t segments) {
        LocalTensor<int32_t> slots = At<int32_t>(kSlotsAt, kMaxCores * kSlotInts);
        PipeSync<HardEvent::S_MTE2>();
        DataCopy(slots, gParts_, cores_ * kSlotInts);
        PipeSync<HardEvent::MTE2_S>();
        float before = 0.0f;
        for (uint32_t c = 0; c < core_; ++c) {
            const float tail = AsFloat(static_cast<uint32_t>(slots.GetValue(c * kSlotInts + 1)));
            before = slots.GetValue(c * kSlotInts + 2) != 0 ? tail : before + tail;
        }
        if (core_ > 0 && seen_) StoreScalar(gSums_[first_], At<float>(kRedAt, 8), before + head_);
        if (core_ + 1 == cores_) {
            StoreScalar(gSums_[segments - 1], At<float>(kSlotAt, 8), seen_ ? carry_ : before + carry_);
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, kXAhead + 1> qIn_;  // the next kXAhead tiles load while this one is summed
    TQue<TPosition::VECIN, kFlagsAhead + 1> qFlags_;  // flags (phase 1), start masks (phase 2)
    TQue<TPosition::VECOUT, 3> qBits_;  // phase 1's start masks on their way out (a buffer frees when its write is done)
    TQue<TPosition::VECOUT, 1> qOut_;
    UbArena arena_;
    GlobalTensor<TIn> gx_;
    GlobalTensor<int8_t> gf_;
    GlobalTensor<uint8_t> gBits_;
    GlobalTensor<float> gSums_;
    GlobalTensor<int32_t> gCount_, gParts_;
    uint32_t core_ = 0, cores_ = 0;
    uint64_t begin_ = 0, end_ = 0, at_ = 0, first_ = 0;
    uint64_t deferFrom_ = 0, deferTo_ = 0;  // the tiles in the accumulator (Deferred)
    bool first0_ = false, seen_ = false;
    float carry_ = 0.0f, head_ = 0.0f;
    bool sparseBefore_ = true;  // the tile before was sparse (Tile's first GatherMask)
};

}  // namespace segsum

template <typename TIn, uint32_t kL, uint32_t kW>
__aicore__ inline void SegSum(GM_ADDR x, GM_ADDR flags, GM_ADDR sums, GM_ADDR workspace, const SegSumTiling& t) {
    segsum::Summer<TIn, kL, kW> summer;
    summer.Run(x, flags, sums, workspace, t);
}

}  // namespace ascend_scan
