// Segments given as CSR-style offsets (docs/algorithms.md, "Segments given
// as offsets"): their check and start flags (SegFlags), and the segments'
// sums from the inclusive segmented scan (SegEnds). Vector cores only.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_gather.h"

namespace ascend_scan {
namespace segoffsets {

// Marks the entries of a dense stretch of sorted offsets in a float tile of
// kTile flags (1.0 at every position p = entry - t0 in [0, kTile)) on the
// vector unit, without a scatter (A2 has none). For every lane i in the
// stretch's range of positions, a branch-free binary search counts the
// entries <= i (pos), and lane i is an entry exactly when entry pos - 1
// equals i. The search keeps pos as the byte offset of entry pos - 1 in a
// float table: an 8-entry sentinel block of -1 (entry -1), the stretch
// (clamped into [-1, kTile] relative to t0), then kTile past it (above every
// lane) up to a power of two; Select moves the offsets as bits. Per halving
// of the stretch: Adds, Gather, Compare, Select over the lanes.
template <uint32_t kTile, uint32_t kChunk>
class DenseMarks {
public:
    static_assert(kTile % 64 == 0 && (kChunk & (kChunk - 1)) == 0, "whole compare repeats; a power-of-two chunk");
    static constexpr uint32_t kSearch = 2 * kChunk;  // >= Pow2Ceil(len + 1) for len <= kChunk
    static constexpr uint32_t kLane = (8 + kSearch) * sizeof(float);
    static constexpr uint32_t kOnes = kLane + kTile * sizeof(float);
    static constexpr uint32_t kPos = kOnes + kTile * sizeof(float);
    static constexpr uint32_t kNext = kPos + kTile * sizeof(int32_t);
    static constexpr uint32_t kCand = kNext + kTile * sizeof(int32_t);
    static constexpr uint32_t kG = kCand + kTile * sizeof(int32_t);
    static constexpr uint32_t kIdx = kG + kTile * sizeof(float);
    static constexpr uint32_t kMask = kIdx + kChunk * sizeof(int32_t);
    static constexpr uint32_t kBytes = kMask + kTile / 8;

    __aicore__ inline void Init(TPipe& pipe) {
        ub_.Init(pipe, kBytes);
        LocalTensor<int32_t> idx = ub_.At<int32_t>(kPos, kTile);
        CreateVecIndex(idx, static_cast<int32_t>(0), kTile);
        Duplicate(ub_.At<float>(0, 8), -1.0f, 8);
        Duplicate(ub_.At<float>(kOnes, kTile), 1.0f, static_cast<int32_t>(kTile));
        PipeBarrier<PIPE_V>();
        Cast(ub_.At<float>(kLane, kTile), idx, RoundMode::CAST_NONE, kTile);
        PipeBarrier<PIPE_V>();
    }

    // acc = max(acc, marks) over lanes [laneLo, laneHi) (multiples of 64) for
    // the entries rp[s0, s0 + len) (s0 a multiple of 8, len <= kChunk) of the
    // tile [t0, tileEnd). With sorted offsets the entries before the stretch
    // are below t0 and those after it at or past tileEnd: neither marks a
    // lane. Vector unit only; the caller orders rp's load and acc's scalar
    // writes before it.
    __aicore__ inline void Mark(const LocalTensor<float>& acc, const LocalTensor<int32_t>& rp, uint32_t s0,
                                uint32_t len, int64_t t0, int64_t tileEnd, uint32_t laneLo, uint32_t laneHi) {
        const uint32_t padded = (len + 7) / 8 * 8, search = Pow2Ceil(len + 1), lanes = laneHi - laneLo;
        LocalTensor<float> v = ub_.At<float>(0, 8 + kSearch);
        LocalTensor<int32_t> idx = ub_.At<int32_t>(kIdx, kChunk);
        Mins(idx, rp[s0], static_cast<int32_t>(tileEnd), static_cast<int32_t>(padded));
        PipeBarrier<PIPE_V>();
        Maxs(idx, idx, static_cast<int32_t>(t0 - 1), static_cast<int32_t>(padded));
        PipeBarrier<PIPE_V>();
        Adds(idx, idx, static_cast<int32_t>(-t0), static_cast<int32_t>(padded));
        PipeBarrier<PIPE_V>();
        Cast(v[8], idx, RoundMode::CAST_NONE, padded);
        if (search > padded) Duplicate(v[8 + padded], static_cast<float>(kTile), static_cast<int32_t>(search - padded));
        LocalTensor<int32_t> pos = ub_.At<int32_t>(kPos, kTile), next = ub_.At<int32_t>(kNext, kTile);
        LocalTensor<int32_t> cand = ub_.At<int32_t>(kCand, kTile);
        LocalTensor<float> g = ub_.At<float>(kG, kTile), lane = ub_.At<float>(kLane, kTile)[laneLo];
        LocalTensor<uint8_t> mask = ub_.At<uint8_t>(kMask, kTile / 8);
        Duplicate(pos, static_cast<int32_t>(7 * sizeof(float)), static_cast<int32_t>(lanes));
        PipeBarrier<PIPE_V>();
        for (uint32_t step = search / 2; step >= 1; step /= 2) {
            Adds(cand, pos, static_cast<int32_t>(step * sizeof(float)), static_cast<int32_t>(lanes));
            PipeBarrier<PIPE_V>();
            Gather(g, v, cand.ReinterpretCast<uint32_t>(), 0, lanes);
            PipeBarrier<PIPE_V>();
            Compare(mask, g, lane, CMPMODE::LE, lanes);
            PipeBarrier<PIPE_V>();
            Select(next.ReinterpretCast<float>(), mask, cand.ReinterpretCast<float>(), pos.ReinterpretCast<float>(),
                   SELMODE::VSEL_TENSOR_TENSOR_MODE, lanes);
            PipeBarrier<PIPE_V>();
            LocalTensor<int32_t> t = pos;
            pos = next;
            next = t;
        }
        Gather(g, v, pos.ReinterpretCast<uint32_t>(), 0, lanes);
        PipeBarrier<PIPE_V>();
        Compare(mask, g, lane, CMPMODE::EQ, lanes);
        PipeBarrier<PIPE_V>();
        Select(g, mask, ub_.At<float>(kOnes, kTile), 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
        PipeBarrier<PIPE_V>();
        Max(acc[laneLo], acc[laneLo], g, static_cast<int32_t>(lanes));
        PipeBarrier<PIPE_V>();
    }

private:
    UbArena ub_;
};

}  // namespace segoffsets

// Checks the offsets and writes the start flags of the n elements.
//
// The check: each vector core takes a range of segments in chunks of kRows
// and checks that their entries never decrease (FirstDecrease, exact in
// int32); core 0 also reads the first and the last entry. A core reports into
// its 32-byte slot of `check` (zeroed by the host): word 0 = 1 + the index of
// its first decreasing entry (0 for none), words 1 and 2 that entry and its
// predecessor; core 0: word 3 = 1 (ran), words 4 and 5 the first and the last
// entry, words 6 and 7 n and the index of the last entry.
//
// The flags (none when per_core is 0: the check alone): each vector core
// owns a range of elements (whole tiles of kTile); it finds the first entry at or after its range's start by a binary
// search in GM, then per tile finds the stretch of entries inside the tile
// (entries streamed through UB in chunks; a binary search in UB) and marks
// them in a float tile: with the scalar unit when they are few (under
// kTile / 16), else with DenseMarks on the vector unit; the tile is cast to
// int8 and written (a tile without entries: from a zero tile).
template <uint32_t kChunk, uint32_t kTile>
__aicore__ inline void SegFlags(GM_ADDR offsets, GM_ADDR flags, GM_ADDR check, const SegFlagsTiling& t) {
    constexpr uint32_t kRows = kChunk - 64;  // rows + 1 entries, padded to 64, fit a chunk
    const uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    GlobalTensor<int32_t> gOff, gSlot;
    GlobalTensor<int8_t> gFlags;
    gOff.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(offsets), t.entries);
    gFlags.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(flags), t.n);
    gSlot.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(check) + core * 8, 8);
    TPipe pipe;
    // At most 8 buffers per TPosition on A2: the check's and the flags'
    // scratch each share one.
    constexpr uint32_t kShift = kChunk * sizeof(int32_t), kMask = 2 * kShift;
    constexpr uint32_t kHalf = kTile * sizeof(float), kInt8 = kHalf + kTile * sizeof(half), kZeros = kInt8 + kTile;
    TBuf<TPosition::VECCALC> bufRp, bufSlot;
    UbArena checkUb, marks;
    pipe.InitBuffer(bufRp, (kChunk + 64) * sizeof(int32_t));  // the shifted Gather reads one entry past
    checkUb.Init(pipe, kMask + kChunk / 8);
    marks.Init(pipe, kZeros + kTile);
    pipe.InitBuffer(bufSlot, 32);
    LocalTensor<int32_t> rp = bufRp.Get<int32_t>();

    // The check of this core's segments [c0, c1): entries [c0, c1].
    const uint64_t segments = t.entries - 1;
    const uint64_t c0 = static_cast<uint64_t>(core) * t.checks_per_core;
    const uint64_t c1 = MinU64(c0 + t.checks_per_core, segments);
    int64_t bad = -1;
    int32_t badValue = 0, badPrev = 0;
    if (c0 < c1) {
        LocalTensor<int32_t> shift = checkUb.At<int32_t>(kShift, kChunk);
        ShiftByOneOffsets(shift, kChunk);
        Duplicate(rp, static_cast<int32_t>(0), static_cast<int32_t>(kChunk + 64));
        for (uint64_t off = c0; off < c1; off += kRows) {
            uint32_t rows = static_cast<uint32_t>(MinU64(c1 - off, kRows));
            PipeSync<HardEvent::V_MTE2>();
            LoadAny(rp, gOff[off], rows + 1);
            PipeSync<HardEvent::MTE2_V>();
            int32_t first = FirstDecrease(rp, checkUb.At<int32_t>(0, kChunk), shift,
                                          checkUb.At<uint8_t>(kMask, kChunk / 8), rows, bad < 0);
            if (first >= 0) {
                bad = static_cast<int64_t>(off) + first;
                badValue = rp.GetValue(static_cast<uint32_t>(first));
                badPrev = rp.GetValue(static_cast<uint32_t>(first - 1));
                ScalarReadsDone();
            }
        }
        PipeSync<HardEvent::V_MTE2>();  // the last chunk's vector reads, before rp is reloaded below
    }

    // The flags of this core's elements [a0, a1), a tile at a time: a tile
    // without entries is written from a zero tile; else the entries are
    // marked in a float tile (scalar writes for a few, DenseMarks for
    // kTile / 16 or more: the cross-over in the cost model's conservative
    // profile, 60 scalar cycles per entry against about 1200 vector cycles
    // per halving of the stretch), which is cast to int8 and written.
    const uint64_t a0 = static_cast<uint64_t>(core) * t.per_core;
    const uint64_t a1 = MinU64(a0 + t.per_core, t.n);
    if (a0 < a1) {
        segoffsets::DenseMarks<kTile, kChunk> dense;
        dense.Init(pipe);
        LocalTensor<float> acc = marks.At<float>(0, kTile);
        LocalTensor<half> accHalf = marks.At<half>(kHalf, kTile);
        LocalTensor<int8_t> tile = marks.At<int8_t>(kInt8, kTile);
        LocalTensor<int8_t> zeros = marks.At<int8_t>(kZeros, kTile);
        Duplicate(zeros.ReinterpretCast<int16_t>(), static_cast<int16_t>(0), static_cast<int32_t>(kTile / 2));
        PipeSync<HardEvent::V_MTE3>();
        uint64_t k = a0 == 0 ? 0 : OffsetsLowerBound(gOff, t.entries, static_cast<int64_t>(a0));
        uint64_t base = k;  // entry index of rp[0]
        uint32_t have = 0;  // entries in rp
        for (uint64_t t0 = a0; t0 < a1; t0 += kTile) {
            uint32_t count = static_cast<uint32_t>(MinU64(a1 - t0, kTile));
            const int64_t tileStart = static_cast<int64_t>(t0), tileEnd = tileStart + count;
            bool marked = false;
            while (k < t.entries) {
                if (k >= base + have) {
                    PipeSync<HardEvent::S_MTE2>();  // the scalar and vector reads of the previous chunk
                    PipeSync<HardEvent::V_MTE2>();
                    have = static_cast<uint32_t>(MinU64(t.entries - k, kChunk));
                    // Past the entries: above every tile (DenseMarks clamps them).
                    LoadPadded(rp, gOff[k], have, static_cast<int32_t>(0x7fffffff));
                    PipeSync<HardEvent::MTE2_S>();
                    PipeSync<HardEvent::MTE2_V>();
                    base = k;
                }
                // The chunk's entries from k below the tile's end: [lo, hi).
                uint32_t lo = static_cast<uint32_t>(k - base), hi = have;
                for (uint32_t l = lo; l < hi;) {
                    uint32_t mid = l + (hi - l) / 2;
                    if (static_cast<int64_t>(rp.GetValue(mid)) < tileEnd) {
                        l = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                if (hi > lo) {
                    if (!marked) {
                        PipeSync<HardEvent::MTE3_V>();  // the previous tile is written out (tile, below)
                        Duplicate(acc, 0.0f, static_cast<int32_t>(kTile));
                        PipeBarrier<PIPE_V>();
                        marked = true;
                    }
                    if (hi - lo >= kTile / 16) {
                        // Lanes from the stretch's first to its last entry (clamped into the tile).
                        int64_t first = rp.GetValue(lo), last = rp.GetValue(hi - 1);
                        first = first < tileStart ? tileStart : (first >= tileEnd ? tileEnd - 1 : first);
                        last = last < first ? first : (last >= tileEnd ? tileEnd - 1 : last);
                        uint32_t laneLo = static_cast<uint32_t>(first - tileStart) / 64 * 64;
                        uint32_t laneHi = (static_cast<uint32_t>(last - tileStart) + 64) / 64 * 64;
                        PipeSync<HardEvent::S_V>();  // acc's scalar writes
                        uint32_t s0 = lo / 8 * 8;
                        dense.Mark(acc, rp, s0, hi - s0, tileStart, tileEnd, laneLo, laneHi);
                    } else {
                        PipeSync<HardEvent::V_S>();  // acc's vector writes
                        for (uint32_t j = lo; j < hi; ++j) {
                            int64_t v = rp.GetValue(j);
                            // Outside the tile only for unsorted offsets (reported by the check).
                            if (v >= tileStart && v < tileEnd) {
                                acc.SetValue(static_cast<uint32_t>(v - tileStart), 1.0f);
                            }
                        }
                        PipeSync<HardEvent::S_V>();
                    }
                }
                k = base + hi;
                if (hi < have) break;  // the next entry is past the tile
            }
            if (marked) {
                Cast(accHalf, acc, RoundMode::CAST_NONE, kTile);
                PipeBarrier<PIPE_V>();
                Cast(tile, accHalf, RoundMode::CAST_NONE, kTile);
                PipeSync<HardEvent::V_MTE3>();
                StoreAny(gFlags[t0], tile, count);
            } else {
                StoreAny(gFlags[t0], zeros, count);
            }
        }
    }

    if (bad >= 0 || core == 0) {
        int32_t firstEntry = 0, lastEntry = 0;
        if (core == 0) {
            firstEntry = gOff.GetValue(0);
            lastEntry = gOff.GetValue(t.entries - 1);
        }
        LocalTensor<int32_t> slot = bufSlot.Get<int32_t>();
        PipeBarrier<PIPE_ALL>();
        slot.SetValue(0, static_cast<int32_t>(bad + 1));
        slot.SetValue(1, badValue);
        slot.SetValue(2, badPrev);
        slot.SetValue(3, core == 0 ? 1 : 0);
        slot.SetValue(4, firstEntry);
        slot.SetValue(5, lastEntry);
        slot.SetValue(6, core == 0 ? static_cast<int32_t>(t.n) : 0);
        slot.SetValue(7, core == 0 ? static_cast<int32_t>(t.entries - 1) : 0);
        PipeSync<HardEvent::S_MTE3>();
        DataCopy(gSlot, slot, 8);
    }
}

// The segments' sums from y, the inclusive segmented scan: sums[k] =
// y[offsets[k+1] - 1], 0 for an empty segment (offsets[k+1] = offsets[k]).
// 4-byte values moved bit for bit (Gather, Select), so float and int32 sums
// share the kernel. Each vector core takes a range of segments in chunks of
// kRows; per chunk it loads the entries [k, k + rows) and, one entry later,
// [k + 1, k + rows + 1) (a second GM read: UB operands must be 32-byte
// aligned), marks the empty segments (int32 EQ), gathers y at the ends minus
// one through UB windows (WindowGather; the ends of a chunk cover a
// contiguous stretch of y, read once) and zeroes the empty ones; when that
// stretch is over kSparse elements per segment, it reads each end with the
// scalar unit instead. The offsets
// have passed SegFlags's check before; bad ones give unspecified sums, never
// an access outside y.
template <uint32_t kChunk, uint32_t kWindow, uint32_t kSparse>
__aicore__ inline void SegEnds(GM_ADDR offsets, GM_ADDR y, GM_ADDR sums, const SegEndsTiling& t) {
    constexpr uint32_t kRows = kChunk - 64;
    const uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
    if (begin >= t.segments) return;
    const uint64_t end = MinU64(begin + t.per_core, t.segments);
    GlobalTensor<int32_t> gOff;
    GlobalTensor<float> gY, gSums;
    gOff.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(offsets), t.segments + 1);
    gY.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), t.n);
    gSums.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(sums), t.segments);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bufStart, bufEnd, bufW, bufOut, bufZero, bufEmpty;
    WindowGather<float, kChunk, kWindow> gather;
    gather.Init(pipe);
    pipe.InitBuffer(bufStart, kChunk * sizeof(int32_t));
    pipe.InitBuffer(bufEnd, kChunk * sizeof(int32_t));
    pipe.InitBuffer(bufW, kChunk * sizeof(float));
    pipe.InitBuffer(bufOut, kChunk * sizeof(float));
    pipe.InitBuffer(bufZero, kChunk * sizeof(float));
    pipe.InitBuffer(bufEmpty, kChunk / 8);
    LocalTensor<int32_t> start = bufStart.Get<int32_t>(), last = bufEnd.Get<int32_t>();
    LocalTensor<float> w = bufW.Get<float>(), out = bufOut.Get<float>(), zero = bufZero.Get<float>();
    LocalTensor<uint8_t> empty = bufEmpty.Get<uint8_t>();
    // Lanes past a chunk's rows are compared too (whole repeats): defined.
    Duplicate(start, static_cast<int32_t>(0), static_cast<int32_t>(kChunk));
    Duplicate(last, static_cast<int32_t>(0), static_cast<int32_t>(kChunk));
    Duplicate(zero, 0.0f, static_cast<int32_t>(kChunk));
    for (uint64_t off = begin; off < end; off += kRows) {
        uint32_t rows = static_cast<uint32_t>(MinU64(end - off, kRows));
        uint32_t padded = Pad64(rows);
        PipeSync<HardEvent::V_MTE2>();
        LoadAny(start, gOff[off], rows);
        LoadAny(last, gOff[off + 1], rows);
        PipeSync<HardEvent::MTE2_V>();
        Compare(empty, last, start, CMPMODE::EQ, padded);
        PipeBarrier<PIPE_V>();
        Adds(last, last, static_cast<int32_t>(-1), static_cast<int32_t>(padded));
        PipeBarrier<PIPE_V>();
        int32_t lo = 0, hi = 0;
        IndexRange(last, rows, gather.ScratchA(), gather.ScratchB(), lo, hi);
        if (static_cast<int64_t>(hi) - lo >= static_cast<int64_t>(rows) * kSparse) {
            // Few ends far apart: a scalar read each (a data-cache miss) is
            // cheaper than streaming the stretch between them through UB.
            PipeSync<HardEvent::MTE3_S>();  // the previous chunk's sums are written out
            for (uint32_t i = 0; i < rows; ++i) {
                int32_t at = last.GetValue(i);
                bool keep = at + 1 != start.GetValue(i) && at >= 0 && static_cast<uint64_t>(at) < t.n;
                out.SetValue(i, keep ? gY.GetValue(static_cast<uint64_t>(at)) : 0.0f);
            }
            PipeSync<HardEvent::S_MTE3>();
            ScalarReadsDone();
        } else {
            gather.Run(w, last, padded, lo, hi, gY, t.n);
            PipeSync<HardEvent::MTE3_V>();  // the previous chunk's sums are written out
            Select(out, empty, zero, w, SELMODE::VSEL_TENSOR_TENSOR_MODE, padded);
            PipeSync<HardEvent::V_MTE3>();
        }
        StoreAny(gSums[off], out, rows);
    }
}

}  // namespace ascend_scan
