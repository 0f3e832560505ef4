// Gathers by index on the vector unit of an AIV core: the range of a chunk
// of int32 indices, the windowed gather from a GM array far larger than UB,
// the check that a chunk of offsets never decreases, and the 32-byte
// per-core report slots the host reads after a launch.
#pragma once

#include "blocks_ub_io.h"

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

    __aicore__ inline void Init(TPipe& pipe) { ub_.Init(pipe, kBytes); }

    // Scratch of kChunk int32 entries each, free between calls of Run
    // (IndexRange's a and b).
    __aicore__ inline LocalTensor<int32_t> ScratchA() { return ub_.At<int32_t>(kE, kChunk); }
    __aicore__ inline LocalTensor<int32_t> ScratchB() { return ub_.At<int32_t>(kC, kChunk); }

    __aicore__ inline void Run(const LocalTensor<float>& dst, const LocalTensor<int32_t>& idx, uint32_t padded,
                               int64_t lo, int64_t hi, const GlobalTensor<T>& src, uint64_t srcLen) {
        Duplicate(dst, 0.0f, static_cast<int32_t>(padded));
        PipeBarrier<PIPE_V>();
        if (lo < 0) lo = 0;
        if (hi > static_cast<int64_t>(srcLen) - 1) hi = static_cast<int64_t>(srcLen) - 1;
        LocalTensor<T> win = ub_.At<T>(0, kWindow);
        LocalTensor<int32_t> e = ScratchA(), c = ScratchB();
        LocalTensor<uint8_t> mask = ub_.At<uint8_t>(kMask, kChunk / 8);
        LocalTensor<T> g = ub_.At<T>(kG, kChunk);
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
                LocalTensor<float> gf = ub_.At<float>(kGf, kChunk);
                Cast(gf, g, RoundMode::CAST_NONE, padded);
                PipeBarrier<PIPE_V>();
                Select(dst, mask, gf, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, padded);
            }
            PipeBarrier<PIPE_V>();
        }
    }

private:
    UbArena ub_;
};

__aicore__ inline uint32_t Pad64(uint32_t count) { return (count + 63) / 64 * 64; }

// Writes the check slots of `slots` 8-int slots at `check`, so the host
// zeroes nothing: 1 + `bad` (0 for none, `bad` < 0) into this core's slot,
// and from the last launched core zeros into the slots of the cores that do
// not run. `scratch`: at least `slots` * 8 ints of UB.
__aicore__ inline void WriteCheckSlots(__gm__ uint8_t* check, uint64_t slots, const LocalTensor<int32_t>& scratch,
                                       int64_t bad) {
    const uint32_t core = static_cast<uint32_t>(GetBlockIdx()), cores = static_cast<uint32_t>(GetBlockNum());
    GlobalTensor<int32_t> gSlots;
    gSlots.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(check), slots * 8);
    const uint32_t rest = slots > cores ? static_cast<uint32_t>(slots - cores) : 0;
    const uint32_t words = core + 1 == cores ? (rest + 1) * 8 : 8;
    PipeBarrier<PIPE_ALL>();
    Duplicate(scratch, static_cast<int32_t>(0), static_cast<int32_t>(words));
    PipeSync<HardEvent::V_S>();
    scratch.SetValue(0, static_cast<int32_t>(bad + 1));
    PipeSync<HardEvent::S_MTE3>();
    // This core's slot, then (last core) the others' up to `slots`.
    DataCopy(gSlots[core * 8], scratch, 8);
    if (words > 8) DataCopy(gSlots[cores * 8], scratch[8], words - 8);
}

// Byte offsets of entry i + 1 for i < count: a Gather through them shifts a
// tensor of 4-byte entries by one entry.
__aicore__ inline void ShiftByOneOffsets(const LocalTensor<int32_t>& shift, uint32_t count) {
    CreateVecIndex(shift, static_cast<int32_t>(1), count);
    PipeBarrier<PIPE_V>();
    Muls(shift, shift, static_cast<int32_t>(sizeof(int32_t)), static_cast<int32_t>(count));
}

// The index (1..rows) of the first of the rows + 1 int32 entries of `rp`
// (in UB, after the caller's MTE2 -> V sync) that is below its predecessor,
// or -1 when none is. The vector check is exact in int32: min(next, rp) ==
// rp lane by lane, next being rp shifted by one entry (a Gather through
// `shift`, ShiftByOneOffsets); `next` and the mask bits `ok` are scratch.
// The scalar search for the index runs only when a lane failed and `find`
// is set (a core reports its first bad entry once).
__aicore__ inline int32_t FirstDecrease(const LocalTensor<int32_t>& rp, const LocalTensor<int32_t>& next,
                                        const LocalTensor<int32_t>& shift, const LocalTensor<uint8_t>& ok,
                                        uint32_t rows, bool find) {
    uint32_t padded = Pad64(rows + 1);
    Gather(next, rp, shift.ReinterpretCast<uint32_t>(), 0, padded);
    PipeBarrier<PIPE_V>();
    Min(next, next, rp, static_cast<int32_t>(padded));
    PipeBarrier<PIPE_V>();
    Compare(ok, next, rp, CMPMODE::EQ, padded);
    PipeBarrier<PIPE_V>();
    uint64_t good = 0;
    GatherMask(next, rp, ok.ReinterpretCast<uint32_t>(), true, rows, GatherMaskParams(1, 1, 8, 0), good);
    ResetMask();
    int32_t first = -1;
    if (good < rows && find) {
        PipeSync<HardEvent::V_S>();
        for (uint32_t i = 0; i < rows; ++i) {
            if (rp.GetValue(i + 1) < rp.GetValue(i)) {
                first = static_cast<int32_t>(i + 1);
                break;
            }
        }
        ScalarReadsDone();
    }
    return first;
}

// The first entry k of the sorted offsets with offsets[k] >= x (entries if
// none), by binary search with scalar GM reads (about log2(entries) of them,
// each a data-cache miss). Unsorted offsets give some k; the caller's
// bounds keep every write inside its range, and the check reports them.
__aicore__ inline uint64_t OffsetsLowerBound(const GlobalTensor<int32_t>& off, uint64_t entries, int64_t x) {
    uint64_t lo = 0, hi = entries;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (static_cast<int64_t>(off.GetValue(mid)) < x) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

}  // namespace ascend_scan
