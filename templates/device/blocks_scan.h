// Scans on the vector unit: carries added to rows of per-row scans (one at a
// time, or all rows of a tile at once: RowCarries), the exclusive store of an
// inclusive chunk, and the split of a multi-core scan into waves and blocks.
#pragma once

#include "blocks_ops.h"
#include "blocks_ub_io.h"

namespace ascend_scan {

// The cube's row scans C = A @ U multiply every input of an s-row by the
// zeros of U too, so one infinity or NaN at column i turns the row's columns
// before i into NaN (inf * 0); columns from i on, and the row's total (the
// last column, all ones), are the IEEE results. The rare s-rows whose total is
// non-finite are rescanned here from x in sequential order, which gives the
// results of the definition (docs/algorithms.md, "Non-finite inputs").
// Nothing is allocated for integer accumulators (i8 inputs are exact).
template <typename TIn, typename TAcc, uint32_t kMaxElems>
class SequentialRescan {
public:
    static constexpr bool kNeeded = !std::is_integral<TAcc>::value;

    __aicore__ inline void Init(TPipe& pipe) {
        if constexpr (kNeeded) {
            pipe.InitBuffer(x_, kMaxElems * sizeof(TIn));
            pipe.InitBuffer(xa_, kMaxElems * sizeof(TAcc));
        }
    }

    // The `rows` s-rows of row scans in `scans` (valid elements `count`,
    // written by MTE2 or the vector unit): each whose total is non-finite is
    // replaced by the sequential scan of its inputs `x` (the first row's first
    // element). Costs a scalar read per row: call it only for a chunk whose
    // sum is non-finite.
    __aicore__ inline void Rows(const LocalTensor<TAcc>& scans, const GlobalTensor<TIn>& x, uint32_t s, uint32_t rows,
                                uint32_t count) {
        if constexpr (kNeeded) {
            PipeSync<HardEvent::MTE2_S>();
            PipeSync<HardEvent::V_S>();
            for (uint32_t r = 0; r < rows; ++r) {
                uint32_t len = count - r * s < s ? count - r * s : s;
                // The last valid column sums the whole row (a partial row's
                // columns past it may not have been loaded).
                if (NonFinite(scans.GetValue(r * s + len - 1))) Scan(scans[r * s], x[r * s], len, s);
            }
            ScalarReadsDone();
        }
    }

    // scans[0, count) = the inclusive scan of x[0, count) with ScanU's
    // arithmetic: sequential f32 sums inside every `seg` elements, plus the
    // running sum of the earlier pieces (seg = count: one sequential scan).
    __aicore__ inline void Scan(const LocalTensor<TAcc>& scans, const GlobalTensor<TIn>& x, uint32_t count,
                                uint32_t seg) {
        if constexpr (kNeeded) {
            LocalTensor<TIn> xin = x_.template Get<TIn>();
            LocalTensor<TAcc> xa = xa_.template Get<TAcc>();
            PipeSync<HardEvent::S_MTE2>();  // earlier scalar reads of scratch
            PipeSync<HardEvent::V_MTE2>();  // an earlier cast has read xin
            LoadAny(xin, x, count);
            PipeSync<HardEvent::MTE2_V>();
            PipeSync<HardEvent::S_V>();
            CastToAcc(xa, xin, xin.template ReinterpretCast<half>(), count);
            PipeSync<HardEvent::V_S>();
            PipeSync<HardEvent::MTE2_S>();
            TAcc carry = 0, acc = 0;
            for (uint32_t i = 0, k = 0; i < count; ++i, ++k) {
                if (k == seg) {
                    carry = static_cast<TAcc>(carry + acc);
                    acc = 0;
                    k = 0;
                }
                acc = static_cast<TAcc>(acc + xa.GetValue(i));
                scans.SetValue(i, static_cast<TAcc>(carry + acc));
            }
            ScalarReadsDone();
        }
    }

private:
    TBuf<TPosition::VECCALC> x_, xa_;
};

// Elements of tile `tile` (tiles of `tileElems`) of an array of n.
__aicore__ inline uint32_t TileElems(uint64_t n, uint64_t tile, uint32_t tileElems) {
    return static_cast<uint32_t>(MinU64(n - tile * tileElems, tileElems));
}

// Stores the inclusive results [first, first + count) of a row of n held in
// `out`: one element later for an exclusive scan (shift 1; its leading 0 is
// stored apart), dropping what would land past the row.
template <typename T>
__aicore__ inline void StoreShifted(const GlobalTensor<T>& row, const LocalTensor<T>& out, uint64_t first,
                                    uint64_t count, uint64_t n, uint64_t shift) {
    uint64_t end = first + count;
    uint64_t limit = n - shift;  // results past this are not stored
    if (end > limit) end = limit;
    if (end > first) StoreAny(row[first + shift], out, static_cast<uint32_t>(end - first));
}

// The vector side of the batched cube scans (ScanU, ScanUL1): the chunk
// queues (row scans in from the ring, finished scans out) and the outputs,
// y (rows of n) and the rows' totals (one 32-byte slot each). An exclusive
// scan stores every result one element later, after a leading 0.
template <typename TAcc>
class RowScanOutput {
public:
    TQue<TPosition::VECIN, 1> qIn;
    TQue<TPosition::VECOUT, 1> qOut;

    __aicore__ inline void Init(TPipe& pipe, uint32_t chunkElems, GM_ADDR y, GM_ADDR total, uint64_t n, uint32_t rows,
                                bool exclusive) {
        pipe.InitBuffer(qIn, 2, chunkElems * sizeof(TAcc));
        pipe.InitBuffer(qOut, 2, chunkElems * sizeof(TAcc));
        pipe.InitBuffer(scratch_, 32);
        gy_.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), n * rows);
        gTotal_.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), static_cast<uint64_t>(rows) * kSumSlot<TAcc>);
        n_ = n;
        shift_ = exclusive ? 1 : 0;
    }

    __aicore__ inline void StartRow(uint32_t row) {
        row_ = row;
        yRow_ = gy_[static_cast<uint64_t>(row) * n_];
        if (shift_ != 0) StoreScalar(yRow_, One(), static_cast<TAcc>(0));
    }

    // Stores the oldest tensor of qOut: the row's results [first, first + count).
    __aicore__ inline void Store(uint64_t first, uint64_t count) {
        LocalTensor<TAcc> out = qOut.template DeQue<TAcc>();
        StoreShifted(yRow_, out, first, count, n_, shift_);
        qOut.FreeTensor(out);
    }

    __aicore__ inline void EndRow(TAcc total) {
        StoreScalar(gTotal_[static_cast<uint64_t>(row_) * kSumSlot<TAcc>], One(), total);
    }

private:
    __aicore__ inline LocalTensor<TAcc> One() { return scratch_.template Get<TAcc>(); }

    TBuf<TPosition::VECCALC> scratch_;
    GlobalTensor<TAcc> gy_, gTotal_, yRow_;
    uint64_t n_ = 0, shift_ = 0;
    uint32_t row_ = 0;
};

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

}  // namespace ascend_scan
