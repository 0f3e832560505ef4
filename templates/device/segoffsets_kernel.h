// Segments given as CSR-style offsets (docs/algorithms.md, "Segments given
// as offsets"): their check and start flags (SegFlags), the segments' sums
// from the inclusive segmented scan (SegEnds), or from the dense sums of
// the non-empty segments (SegSpread). Vector cores only.
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
// lane); Select moves the offsets as bits. Per halving: Adds, Gather,
// Compare, Select over the lanes. From kGrouped lanes on, two levels: a
// search over the stretch for the two ends of every 16-lane group (an
// eighth of the lanes) bounds each lane's count to its group's range of
// entries; the lanes then search only that range (Brcb spreads the group's
// start to its lanes), so they halve log2(widest range + 1) times instead
// of log2(stretch + 1). A range over kMaxRange entries (many empty
// segments at one position) makes the lanes search the whole stretch.
template <uint32_t kTile, uint32_t kChunk>
class DenseMarks {
public:
    static_assert(kTile % 128 == 0 && (kChunk & (kChunk - 1)) == 0, "whole group repeats; a power-of-two chunk");
    static constexpr uint32_t kSearch = 2 * kChunk;  // >= Pow2Ceil(len + 1) for len <= kChunk
    static constexpr uint32_t kMaxRange = 63;        // a group's lanes search 64 entries at most
    static constexpr uint32_t kGroupLanes = 16;      // lanes of a group (two 32-byte blocks)
    static constexpr uint32_t kGrouped = 1024;       // fewer lanes search the stretch in one level
    static constexpr uint32_t kLane = (8 + kSearch) * sizeof(float);
    static constexpr uint32_t kOnes = kLane + kTile * sizeof(float);
    static constexpr uint32_t kPos = kOnes + kTile * sizeof(float);
    static constexpr uint32_t kNext = kPos + kTile * sizeof(int32_t);
    static constexpr uint32_t kCand = kNext + kTile * sizeof(int32_t);
    static constexpr uint32_t kG = kCand + kTile * sizeof(int32_t);
    static constexpr uint32_t kIdx = kG + kTile * sizeof(float);
    static constexpr uint32_t kMask = kIdx + kChunk * sizeof(int32_t);
    static constexpr uint32_t kProbe = kMask + kTile / 8;  // 2 * kTile / kGroupLanes floats
    static constexpr uint32_t kBytes = kProbe + 2 * kTile / kGroupLanes * sizeof(float);
    static_assert(kChunk + kMaxRange + 1 <= kSearch, "a group's search stays in the table");

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
    // lane. Vector unit and one scalar read; the caller orders rp's load and
    // acc's scalar writes before it.
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
        // Past the stretch: as far as any search reads (a group's lanes up
        // to kMaxRange entries past its start, the start at most len).
        const uint32_t fill = (search > padded + kMaxRange + 1 ? search : padded + kMaxRange + 1) - padded;
        Duplicate(v[8 + padded], static_cast<float>(kTile), static_cast<int32_t>(fill));
        LocalTensor<int32_t> pos = ub_.At<int32_t>(kPos, kTile), next = ub_.At<int32_t>(kNext, kTile);
        uint32_t top = search;
        if (lanes < kGrouped || !GroupStarts(pos, next, search, lanes, laneLo, top)) {
            Duplicate(next, static_cast<int32_t>(7 * sizeof(float)), static_cast<int32_t>(lanes));
        }
        PipeBarrier<PIPE_V>();
        LocalTensor<float> g = ub_.At<float>(kG, kTile), lane = ub_.At<float>(kLane, kTile)[laneLo];
        LocalTensor<uint8_t> mask = ub_.At<uint8_t>(kMask, kTile / 8);
        Lift(next, pos, lane, top, lanes);
        Gather(g, v, next.ReinterpretCast<uint32_t>(), 0, lanes);
        PipeBarrier<PIPE_V>();
        Compare(mask, g, lane, CMPMODE::EQ, lanes);
        PipeBarrier<PIPE_V>();
        Select(g, mask, ub_.At<float>(kOnes, kTile), 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, lanes);
        PipeBarrier<PIPE_V>();
        Max(acc[laneLo], acc[laneLo], g, static_cast<int32_t>(lanes));
        PipeBarrier<PIPE_V>();
    }

private:
    // The first level: every 16-lane group's range of entries, from a
    // search for the lane before the group (probe i < half: laneLo + 16i -
    // 1) and for its last lane (probe half + i: laneLo + 16i + 15). When the
    // widest range is at most kMaxRange entries, next gets each group's
    // start in its 16 lanes, top the lanes' search width, and it returns
    // true; pos is scratch.
    __aicore__ inline bool GroupStarts(LocalTensor<int32_t>& pos, LocalTensor<int32_t>& next, uint32_t search,
                                       uint32_t lanes, uint32_t laneLo, uint32_t& top) {
        const uint32_t groups = lanes / kGroupLanes, half = (groups + 63) / 64 * 64;
        LocalTensor<float> probe = ub_.At<float>(kProbe, 2 * kTile / kGroupLanes);
        Muls(probe, ub_.At<float>(kLane, kTile), static_cast<float>(kGroupLanes), static_cast<int32_t>(half));
        PipeBarrier<PIPE_V>();
        Adds(probe[half], probe, static_cast<float>(laneLo + kGroupLanes - 1), static_cast<int32_t>(half));
        PipeBarrier<PIPE_V>();
        Adds(probe, probe, static_cast<float>(laneLo) - 1.0f, static_cast<int32_t>(half));
        Duplicate(pos, static_cast<int32_t>(7 * sizeof(float)), static_cast<int32_t>(2 * half));
        PipeBarrier<PIPE_V>();
        Lift(pos, next, probe, search, 2 * half);
        // The widest range (entries), from the byte offsets.
        LocalTensor<int32_t> range = ub_.At<int32_t>(kCand, kTile);
        LocalTensor<float> rangeF = ub_.At<float>(kG, kTile), most = ub_.At<float>(kIdx, 8);
        Sub(range, pos[half], pos, static_cast<int32_t>(half));
        PipeBarrier<PIPE_V>();
        Cast(rangeF, range, RoundMode::CAST_NONE, half);  // exact: at most 4 * kSearch
        PipeBarrier<PIPE_V>();
        ReduceMax(most, rangeF, rangeF[half], static_cast<int32_t>(groups));
        PipeSync<HardEvent::V_S>();
        const uint32_t widest = static_cast<uint32_t>(most.GetValue(0)) / sizeof(float);
        ScalarReadsDone();
        if (widest > kMaxRange) return false;
        // Block 2i and 2i + 1 of next: group i's start (8 groups a repeat).
        const uint8_t repeats = static_cast<uint8_t>((groups + 7) / 8);
        Brcb(next, pos, repeats, BrcbRepeatParams(2, 16));
        Brcb(next[8], pos, repeats, BrcbRepeatParams(2, 16));
        top = Pow2Ceil(widest + 1);
        return true;
    }

    // Binary lifting over the table: for every lane, pos (a byte offset)
    // moves step entries up while the entry there is <= the lane's value,
    // step = top / 2 .. 1; the result ends in pos (pos and next swap).
    __aicore__ inline void Lift(LocalTensor<int32_t>& pos, LocalTensor<int32_t>& next, const LocalTensor<float>& value,
                                uint32_t top, uint32_t count) {
        LocalTensor<float> v = ub_.At<float>(0, 8 + kSearch), g = ub_.At<float>(kG, kTile);
        LocalTensor<int32_t> cand = ub_.At<int32_t>(kCand, kTile);
        LocalTensor<uint8_t> mask = ub_.At<uint8_t>(kMask, kTile / 8);
        for (uint32_t step = top / 2; step >= 1; step /= 2) {
            Adds(cand, pos, static_cast<int32_t>(step * sizeof(float)), static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Gather(g, v, cand.ReinterpretCast<uint32_t>(), 0, count);
            PipeBarrier<PIPE_V>();
            Compare(mask, g, value, CMPMODE::LE, count);
            PipeBarrier<PIPE_V>();
            Select(next.ReinterpretCast<float>(), mask, cand.ReinterpretCast<float>(), pos.ReinterpretCast<float>(),
                   SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
            PipeBarrier<PIPE_V>();
            SwapTensors(pos, next);
        }
    }

    UbArena ub_;
};

}  // namespace segoffsets

// Checks the offsets and writes the start flags of the n elements.
//
// The check: each vector core takes a range of segments in chunks of kRows
// and checks that their entries never decrease (FirstDecrease, exact in
// int32); core 0 also reads the first and the last entry. A core reports into
// its 32-byte slot of `check` (every launched core writes its own, so the
// host needs no zeroing before the launch): word 0 = 1 + the index of
// its first decreasing entry (0 for none), words 1 and 2 that entry and its
// predecessor; core 0: word 3 = 1 (ran), words 4 and 5 the first and the last
// entry, words 6 and 7 n and the index of the last entry.
//
// The flags (none when per_core is 0: the check alone): each vector core
// owns a range of elements (whole tiles of kTile); it finds the first entry at or after its range's start by a binary
// search in GM, then per tile finds the stretch of entries inside the tile
// (entries streamed through UB in chunks, the next one loading while this
// one is used; a binary search in UB) and marks
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
    TBuf<TPosition::VECCALC> bufRp, bufSpare, bufSlot;
    UbArena checkUb, marks;
    // Chunks of entries: rp is in use while the next one loads into spare
    // (the shifted Gather of the check reads one entry past a chunk).
    pipe.InitBuffer(bufRp, (kChunk + 64) * sizeof(int32_t));
    pipe.InitBuffer(bufSpare, (kChunk + 64) * sizeof(int32_t));
    checkUb.Init(pipe, kMask + kChunk / 8);
    marks.Init(pipe, kZeros + kTile);
    pipe.InitBuffer(bufSlot, 32);
    LocalTensor<int32_t> rp = bufRp.Get<int32_t>(), spare = bufSpare.Get<int32_t>();

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
        Duplicate(spare, static_cast<int32_t>(0), static_cast<int32_t>(kChunk + 64));
        PipeSync<HardEvent::V_MTE2>();
        LoadAny(rp, gOff[c0], static_cast<uint32_t>(MinU64(c1 - c0, kRows)) + 1);
        for (uint64_t off = c0; off < c1; off += kRows) {
            uint32_t rows = static_cast<uint32_t>(MinU64(c1 - off, kRows));
            PipeSync<HardEvent::MTE2_V>();  // this chunk
            if (off + kRows < c1) {
                PipeSync<HardEvent::V_MTE2>();  // the vector reads of spare (the chunk before)
                LoadAny(spare, gOff[off + kRows], static_cast<uint32_t>(MinU64(c1 - off - kRows, kRows)) + 1);
            }
            int32_t first = FirstDecrease(rp, checkUb.At<int32_t>(0, kChunk), shift,
                                          checkUb.At<uint8_t>(kMask, kChunk / 8), rows, bad < 0);
            if (first >= 0) {
                bad = static_cast<int64_t>(off) + first;
                badValue = rp.GetValue(static_cast<uint32_t>(first));
                badPrev = rp.GetValue(static_cast<uint32_t>(first - 1));
                ScalarReadsDone();
            }
            PipeBarrier<PIPE_V>();  // FirstDecrease's scratch, written again by the next chunk's
            SwapTensors(rp, spare);
        }
        PipeSync<HardEvent::V_MTE2>();  // the last chunks' vector reads, before rp and spare are reloaded below
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
        // The chunks are read in order, each while the one before is
        // searched and marked: the next one loads into spare from entry
        // `aheadAt`.
        uint64_t aheadAt = t.entries;
        for (uint64_t t0 = a0; t0 < a1; t0 += kTile) {
            uint32_t count = static_cast<uint32_t>(MinU64(a1 - t0, kTile));
            const int64_t tileStart = static_cast<int64_t>(t0), tileEnd = tileStart + count;
            bool marked = false;
            while (k < t.entries) {
                if (k >= base + have) {
                    PipeSync<HardEvent::S_MTE2>();  // the scalar and vector reads of the previous chunk
                    PipeSync<HardEvent::V_MTE2>();
                    have = static_cast<uint32_t>(MinU64(t.entries - k, kChunk));
                    if (aheadAt == k) {
                        SwapTensors(rp, spare);
                    } else {
                        // Past the entries: above every tile (DenseMarks clamps them).
                        LoadPadded(rp, gOff[k], have, static_cast<int32_t>(0x7fffffff));
                    }
                    PipeSync<HardEvent::MTE2_S>();
                    PipeSync<HardEvent::MTE2_V>();
                    // The next chunk, into the buffer whose reads were
                    // waited for above.
                    aheadAt = k + have;
                    if (aheadAt < t.entries) {
                        LoadPadded(spare, gOff[aheadAt], static_cast<uint32_t>(MinU64(t.entries - aheadAt, kChunk)),
                                   static_cast<int32_t>(0x7fffffff));
                    }
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

// The dense sums of the non-empty segments (in order, as SEGSUM writes them
// by the start flags SegFlags makes) to one sum per segment (SegSpread):
// sums[k] = dense[j] when segment k is the j-th non-empty one, 0 when it is
// empty. A2 has no vector scatter, so every segment finds its j (its rank):
// each vector core owns a range of segments in chunks of kRows; phase 1
// counts the non-empty ones of its range (Compare of neighbouring entries,
// Select, ReduceSum) into its 32-byte slot; SyncAll; the counts of the cores
// before it give its first rank. Phase 2, per chunk: a chunk without an
// empty segment copies its window of dense as it is (double-buffered); else an inclusive
// Hillis-Steele scan of the non-empty marks (a Gather by a shift table and
// an Add per step, log2(kRows) steps) gives the ranks within the window, a
// Gather takes dense there and a Select writes 0 for the empty segments.
// The offsets have passed SegFlags's check before; bad ones give
// unspecified sums, never an access outside dense or sums.
template <uint32_t kRows>
class Spreader {
public:
    static_assert(kRows % 64 == 0 && (kRows & (kRows - 1)) == 0, "whole int32 compare repeats, a power of two");
    static constexpr uint32_t kSteps = Log2Const(kRows);
    static constexpr uint32_t kSlotCores = 64;
    // Arena (bytes). The mark buffers hold 8 zeros (what a shift reads
    // before the first row), then kRows lanes. (The entries come through a
    // queue of two: a chunk's load overlaps the work on the one before.)
    static constexpr uint32_t kEmptyAt = 0;  // empty-segment mask
    static constexpr uint32_t kMarksAt = kEmptyAt + (kRows / 8 + 31) / 32 * 32;  // 1.0 per non-empty segment
    static constexpr uint32_t kPingAt = kMarksAt + (8 + kRows) * 4;  // scan steps, in turn
    static constexpr uint32_t kPongAt = kPingAt + (8 + kRows) * 4;
    static constexpr uint32_t kShiftedAt = kPongAt + (8 + kRows) * 4;  // a step's shifted lanes
    static constexpr uint32_t kTablesAt = kShiftedAt + kRows * 4;      // byte offset of lane i - 2^s
    static constexpr uint32_t kWindowAt = kTablesAt + kSteps * kRows * 4;  // the chunk's dense sums
    static constexpr uint32_t kOutAt = kWindowAt + kRows * 4;
    static constexpr uint32_t kZeroAt = kOutAt + kRows * 4;
    static constexpr uint32_t kOneAt = kZeroAt + kRows * 4;
    static constexpr uint32_t kRankAt = kOneAt + kRows * 4;  // byte offsets in the window
    static constexpr uint32_t kTmpAt = kRankAt + kRows * 4;  // ReduceSum's scratch
    static constexpr uint32_t kRedAt = kTmpAt + kRows * 4;
    static constexpr uint32_t kSlotAt = kRedAt + 32;
    static constexpr uint32_t kSlotsAt = kSlotAt + 32;
    static constexpr uint32_t kBytes = kSlotsAt + kSlotCores * 32;
    static_assert(kMarksAt % 32 == 0, "32-byte aligned UB operands");

    __aicore__ inline void Run(GM_ADDR offsets, GM_ADDR dense, GM_ADDR sums, GM_ADDR workspace,
                               const SegSpreadTiling& t) {
        const uint32_t core = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t cores = static_cast<uint32_t>(GetBlockNum());
        const uint64_t begin = static_cast<uint64_t>(core) * t.per_core;
        const uint64_t end = MinU64(begin + t.per_core, t.segments);
        denseLen_ = t.dense_len;
        gOff_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(offsets), t.segments + 1);
        gDense_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(dense), t.dense_len);
        gSums_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(sums), t.segments);
        GlobalTensor<int32_t> gSlots;
        gSlots.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace), cores * 8);
        arena_.Init(pipe_, kBytes);
        pipe_.InitBuffer(qEntries_, 2, 2 * kRows * 4);
        pipe_.InitBuffer(qCopy_, 2, kRows * 4);
        Init();

        uint64_t count = 0;
        if (begin < end) LoadEntries(begin, end);
        for (uint64_t off = begin; off < end; off += kRows) {
            if (off + kRows < end) LoadEntries(off + kRows, end);
            count += Marks(Rows(off, end));
        }
        LocalTensor<int32_t> own = At<int32_t>(kSlotAt, 8);
        for (uint32_t i = 0; i < 8; ++i) own.SetValue(i, i == 0 ? static_cast<int32_t>(count) : 0);
        StoreSlot(gSlots[core * 8], own, 8);
        SyncAll();
        LocalTensor<int32_t> slots = At<int32_t>(kSlotsAt, kSlotCores * 8);
        PipeSync<HardEvent::S_MTE2>();
        DataCopy(slots, gSlots, cores * 8);
        PipeSync<HardEvent::MTE2_S>();
        uint64_t base = 0;
        for (uint32_t c = 0; c < core; ++c) base += static_cast<uint64_t>(slots.GetValue(c * 8));
        ScalarReadsDone();
        if (begin < end) LoadEntries(begin, end);
        for (uint64_t off = begin; off < end; off += kRows) {
            if (off + kRows < end) LoadEntries(off + kRows, end);
            const uint32_t rows = Rows(off, end);
            const uint32_t c = Marks(rows);
            Spread(off, rows, c, base);
            base += c;
        }
    }

private:
    template <typename T>
    __aicore__ inline LocalTensor<T> At(uint32_t byteOffset, uint32_t count) {
        return arena_.At<T>(byteOffset, count);
    }
    __aicore__ inline uint32_t Rows(uint64_t off, uint64_t end) {
        return static_cast<uint32_t>(MinU64(end - off, kRows));
    }

    __aicore__ inline void Init() {
        // Every lane defined: the scans run over whole repeats.
        Duplicate(At<float>(kMarksAt, 3 * (8 + kRows)), 0.0f, static_cast<int32_t>(3 * (8 + kRows)));
        Duplicate(At<float>(kZeroAt, kRows), 0.0f, static_cast<int32_t>(kRows));
        Duplicate(At<float>(kOneAt, kRows), 1.0f, static_cast<int32_t>(kRows));
        // Step s reads lane i - 2^s, or a zero of the front (element 7) before lane 0.
        for (uint32_t s = 0; s < kSteps; ++s) {
            LocalTensor<int32_t> table = At<int32_t>(kTablesAt + s * kRows * 4, kRows);
            CreateVecIndex(table, static_cast<int32_t>(8) - static_cast<int32_t>(1u << s), kRows);
            PipeBarrier<PIPE_V>();
            Maxs(table, table, static_cast<int32_t>(7), static_cast<int32_t>(kRows));
            PipeBarrier<PIPE_V>();
            Muls(table, table, static_cast<int32_t>(4), static_cast<int32_t>(kRows));
        }
        PipeBarrier<PIPE_V>();
    }

    // Queues the entries [off, off + rows) and, after them, [off + 1, off +
    // rows + 1) of the chunk at `off` (zeros past them: whole compares).
    __aicore__ inline void LoadEntries(uint64_t off, uint64_t end) {
        const uint32_t rows = Rows(off, end);
        LocalTensor<int32_t> e = qEntries_.AllocTensor<int32_t>();
        if (rows % 64 != 0) ZeroBeforeLoad(e, 2 * kRows);
        LoadAny(e, gOff_[off], rows);
        LoadAny(e[kRows], gOff_[off + 1], rows);
        qEntries_.EnQue(e);
    }

    // Marks the next queued chunk's non-empty segments (1.0, in the marks
    // buffer) and returns how many there are.
    __aicore__ inline uint32_t Marks(uint32_t rows) {
        const uint32_t padded = Pad64(rows);
        LocalTensor<uint8_t> empty = At<uint8_t>(kEmptyAt, kRows / 8);
        LocalTensor<float> marks = At<float>(kMarksAt + 32, kRows);
        LocalTensor<int32_t> e = qEntries_.DeQue<int32_t>();
        PipeBarrier<PIPE_V>();  // the previous chunk's reads of the mask and marks
        Compare(empty, e[kRows], e, CMPMODE::EQ, padded);
        qEntries_.FreeTensor(e);
        PipeBarrier<PIPE_V>();
        Select(marks, empty, At<float>(kZeroAt, kRows), At<float>(kOneAt, kRows), SELMODE::VSEL_TENSOR_TENSOR_MODE,
               padded);
        PipeBarrier<PIPE_V>();
        LocalTensor<float> red = At<float>(kRedAt, 8);
        ReduceSum(red, marks, At<float>(kTmpAt, kRows), static_cast<int32_t>(rows));
        PipeSync<HardEvent::V_S>();
        const uint32_t c = static_cast<uint32_t>(red.GetValue(0));
        ScalarReadsDone();
        return c;
    }

    // Writes the chunk's sums: `c` non-empty segments, the first of rank `base`.
    __aicore__ inline void Spread(uint64_t off, uint32_t rows, uint32_t c, uint64_t base) {
        const uint32_t padded = Pad64(rows);
        // Bad offsets may count more segments than dense holds.
        const uint32_t have = base >= denseLen_ ? 0 : static_cast<uint32_t>(MinU64(c, denseLen_ - base));
        if (have == rows) {
            // No empty segment: the chunk's window of dense is its sums,
            // copied through a queue of two (a chunk's load overlaps the
            // store of the one before).
            LocalTensor<float> copy = qCopy_.AllocTensor<float>();
            LoadAny(copy, gDense_[base], rows);
            qCopy_.EnQue(copy);
            copy = qCopy_.DeQue<float>();
            StoreAny(gSums_[off], copy, rows);
            qCopy_.FreeTensor(copy);
            return;
        }
        LocalTensor<float> window = At<float>(kWindowAt, kRows);
        PipeSync<HardEvent::V_MTE2>();  // the previous chunk's Gather from the window is done
        LocalTensor<float> out = At<float>(kOutAt, kRows);
        PipeSync<HardEvent::MTE3_V>();  // the previous chunk's sums are out
        if (have == 0) {
            Duplicate(out, 0.0f, static_cast<int32_t>(padded));
        } else {
            LoadAny(window, gDense_[base], have);
            LocalTensor<float> ranks = Scan(padded);
            LocalTensor<int32_t> at = At<int32_t>(kRankAt, kRows);
            // Exclusive ranks (the inclusive scan minus the mark), as byte
            // offsets in the window, within what it holds.
            Sub(ranks[8], ranks[8], At<float>(kMarksAt + 32, kRows), static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            Cast(at, ranks[8], RoundMode::CAST_RINT, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            Muls(at, at, static_cast<int32_t>(4), static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            Mins(at, at, static_cast<int32_t>((have - 1) * 4), static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            PipeSync<HardEvent::MTE2_V>();
            LocalTensor<float> picked = At<float>(kShiftedAt, kRows);
            Gather(picked, window, at.ReinterpretCast<uint32_t>(), 0, padded);
            PipeBarrier<PIPE_V>();
            Select(out, At<uint8_t>(kEmptyAt, kRows / 8), At<float>(kZeroAt, kRows), picked,
                   SELMODE::VSEL_TENSOR_TENSOR_MODE, padded);
        }
        PipeSync<HardEvent::V_MTE3>();
        StoreAny(gSums_[off], out, rows);
    }

    // The inclusive scan of the marks over the first `padded` lanes, in a
    // buffer of 8 zeros and then the lanes.
    __aicore__ inline LocalTensor<float> Scan(uint32_t padded) {
        LocalTensor<float> src = At<float>(kMarksAt, 8 + kRows);
        LocalTensor<float> shifted = At<float>(kShiftedAt, kRows);
        for (uint32_t s = 0; s < kSteps; ++s) {
            LocalTensor<float> dst = At<float>(s % 2 == 0 ? kPingAt : kPongAt, 8 + kRows);
            Gather(shifted, src, At<uint32_t>(kTablesAt + s * kRows * 4, kRows), 0, padded);
            PipeBarrier<PIPE_V>();
            Add(dst[8], src[8], shifted, static_cast<int32_t>(padded));
            PipeBarrier<PIPE_V>();
            src = dst;
        }
        return src;
    }

    TPipe pipe_;
    UbArena arena_;
    TQue<TPosition::VECIN, 2> qEntries_;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 2> qCopy_;
    GlobalTensor<int32_t> gOff_;
    GlobalTensor<float> gDense_, gSums_;
    uint64_t denseLen_ = 0;
};

template <uint32_t kRows>
__aicore__ inline void SegSpread(GM_ADDR offsets, GM_ADDR dense, GM_ADDR sums, GM_ADDR workspace,
                                 const SegSpreadTiling& t) {
    Spreader<kRows> spreader;
    spreader.Run(offsets, dense, sums, workspace, t);
}

}  // namespace ascend_scan
