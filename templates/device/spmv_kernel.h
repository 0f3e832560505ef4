// CSR SpMV (docs/algorithms.md, SpMV) as a scan: the products of the
// nonzeros with their entries of x, and the rows' sums from the inclusive
// scan of the products.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_gather.h"

namespace ascend_scan {
namespace spmv {


// This core's range [begin, end) of the t.count entries; false when empty.
__aicore__ inline bool CoreRange(const SpmvTiling& t, uint32_t core, uint64_t& begin, uint64_t& end) {
    begin = static_cast<uint64_t>(core) * t.per_core;
    end = begin + t.per_core < t.count ? begin + t.per_core : t.count;
    return begin < end;
}

// z *= values in fp32 (16-bit values widen exactly first; a product of two
// f16 values has at most 22 significant bits, of two bf16 ones 16, so it is
// exact in fp32).
template <typename T>
__aicore__ inline void MulValues(const LocalTensor<float>& z, const LocalTensor<T>& val,
                                 TBuf<TPosition::VECCALC>& tmp, uint32_t padded) {
    if constexpr (std::is_same<T, float>::value) {
        (void)tmp;
        Mul(z, z, val, static_cast<int32_t>(padded));
    } else {
        LocalTensor<float> vf = tmp.Get<float>();
        Cast(vf, val, RoundMode::CAST_NONE, padded);
        PipeBarrier<PIPE_V>();
        Mul(z, z, vf, static_cast<int32_t>(padded));
    }
}

}  // namespace spmv

// The first step: the products z[i] = values[i] * x[col[i]] in fp32 (TVal
// values and x: f16 and bf16 products are exact in fp32, float ones take
// one fp32 rounding each). Each vector core takes a range of nonzeros in chunks (of
// kChunk, a multiple of 64); per chunk it loads the values and column
// indices, folds the columns' range [lo, hi], gathers x[col] from GM through
// UB windows of kWindow elements covering [lo, hi] (WindowGather: x may be
// far larger than UB) and multiplies. A core that meets a column outside
// [0, n) writes 1 + the index of the first such nonzero into its 32-byte
// slot (the host turns it into an error); such products are 0.
template <typename TVal, uint32_t kChunk, uint32_t kWindow>
__aicore__ inline void SpmvProducts(GM_ADDR values, GM_ADDR indices, GM_ADDR src, GM_ADDR out, GM_ADDR check,
                                    const SpmvTiling& t) {
    using namespace spmv;
    uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    uint64_t begin = 0, end = 0;
    if (!CoreRange(t, core, begin, end)) return;
    GlobalTensor<TVal> gVal, gX;
    GlobalTensor<int32_t> gCol;
    GlobalTensor<float> gZ;
    gVal.SetGlobalBuffer(reinterpret_cast<__gm__ TVal*>(values), t.count);
    gCol.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), t.count);
    gX.SetGlobalBuffer(reinterpret_cast<__gm__ TVal*>(src), t.src_len);
    gZ.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), t.count);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bufCol, bufVal, bufValF, bufZ, bufSlot;
    WindowGather<TVal, kChunk, kWindow> gather;
    gather.Init(pipe);
    pipe.InitBuffer(bufCol, kChunk * sizeof(int32_t));
    pipe.InitBuffer(bufVal, kChunk * sizeof(TVal));
    if constexpr (!std::is_same<TVal, float>::value) pipe.InitBuffer(bufValF, kChunk * sizeof(float));
    pipe.InitBuffer(bufZ, kChunk * sizeof(float));
    pipe.InitBuffer(bufSlot, static_cast<uint32_t>(t.slots) * 32);
    LocalTensor<int32_t> col = bufCol.Get<int32_t>();
    LocalTensor<TVal> val = bufVal.Get<TVal>();
    LocalTensor<float> z = bufZ.Get<float>();
    Duplicate(col, static_cast<int32_t>(0), static_cast<int32_t>(kChunk));
    int64_t bad = -1;
    const int64_t n = static_cast<int64_t>(t.src_len);
    for (uint64_t off = begin; off < end; off += kChunk) {
        uint32_t count = static_cast<uint32_t>(end - off < kChunk ? end - off : kChunk);
        uint32_t padded = Pad64(count);
        PipeSync<HardEvent::V_MTE2>();
        LoadAny(col, gCol[off], count);
        LoadAny(val, gVal[off], count);
        PipeSync<HardEvent::MTE2_V>();
        int32_t lo = 0, hi = 0;
        IndexRange(col, count, gather.ScratchA(), gather.ScratchB(), lo, hi);
        if ((lo < 0 || hi >= n) && bad < 0) {
            PipeSync<HardEvent::MTE2_S>();
            for (uint32_t i = 0; i < count; ++i) {
                int32_t c = col.GetValue(i);
                if (c < 0 || c >= n) {
                    bad = static_cast<int64_t>(off + i);
                    break;
                }
            }
            ScalarReadsDone();
        }
        PipeSync<HardEvent::MTE3_V>();
        gather.Run(z, col, padded, lo, hi, gX, t.src_len);
        MulValues(z, val, bufValF, padded);
        PipeSync<HardEvent::V_MTE3>();
        StoreAny(gZ[off], z, count);
    }
    WriteCheckSlots(check, t.slots, bufSlot.Get<int32_t>(), bad);
}

namespace spmv {
// The non-finite correction of SpmvRows (docs/algorithms.md, "Non-finite
// inputs"). Once a product is infinite or NaN, every later prefix of zs is
// too (inf + finite = inf, inf - inf = NaN, NaN stays), so a row whose start
// prefix w[i] is non-finite gets inf - inf or NaN from the subtraction even
// when its own products are finite. Those rows are a suffix of the chunk
// (from the first non-finite w[i]); each is summed again from its own
// products z in sequential order, streamed through the `stage` buffer
// (kChunk floats, free after the gather). `entry` holds row_ptr - 1 of the
// chunk's rows + 1 entries; `rows` >= 1. Called after V -> S and V -> MTE3
// syncs; the caller syncs S -> MTE3 before storing y.
template <uint32_t kChunk>
__aicore__ inline void SumPoisonedRows(const LocalTensor<float>& y, const LocalTensor<float>& w,
                                       const LocalTensor<int32_t>& entry, uint32_t rows, const GlobalTensor<float>& gZ,
                                       uint64_t zLen, const LocalTensor<float>& stage) {
    uint32_t first = 0;
    while (!NonFinite(w.GetValue(first))) ++first;
    // Products [a, b) of row i are z[entry[i] + 1, entry[i + 1] + 1).
    int64_t staged = -1;  // the product index at stage[0], or none
    for (uint32_t i = first; i < rows; ++i) {
        int64_t a = static_cast<int64_t>(entry.GetValue(i)) + 1;
        int64_t b = static_cast<int64_t>(entry.GetValue(i + 1)) + 1;  // b < a: a decreasing row_ptr, reported
        float sum = 0.0f;
        for (int64_t k = a; k < b; ++k) {
            if (staged < 0 || k < staged || k >= staged + static_cast<int64_t>(kChunk)) {
                int64_t left = static_cast<int64_t>(zLen) - k;
                uint32_t count = static_cast<uint32_t>(left < static_cast<int64_t>(kChunk) ? left : kChunk);
                PipeSync<HardEvent::S_MTE2>();  // earlier scalar reads of the stage
                LoadAny(stage, gZ[static_cast<uint64_t>(k)], count);
                PipeSync<HardEvent::MTE2_S>();
                staged = k;
            }
            sum += stage.GetValue(static_cast<uint32_t>(k - staged));
        }
        y.SetValue(i, sum);
    }
}
}  // namespace spmv

// The last step: with zs the inclusive fp32 scan of the products z, every
// row's sum is y[r] = w[r] - w[r-1] where w[r] = zs[row_ptr[r+1] - 1] (0
// where that index is -1, w[-1] = 0). Each vector core takes a range of
// rows in chunks; per chunk it loads row_ptr[r0 .. r0 + rows] (one entry
// more than the rows), gathers w at those entries minus one from GM with the
// windowed gather (the indices of a chunk cover a contiguous stretch of zs,
// read once), and subtracts w shifted by one entry (a UB Gather). An empty
// row gathers the same element twice: exactly 0. Each core also checks that
// its entries of row_ptr do not decrease and writes 1 + the index of the
// first entry that does (row_ptr[i] < row_ptr[i-1]) into its 32-byte slot.
// `values` are the products z themselves: rows after a non-finite product
// are summed again from them (spmv::SumPoisonedRows). With t.alpha != 1 or
// t.beta != 0 every sum s becomes alpha * s + beta * y[r] (y's old value,
// read only when beta != 0, so that a zero beta ignores NaN there, as
// PyTorch's addmv does).
template <uint32_t kChunk, uint32_t kWindow>
__aicore__ inline void SpmvRows(GM_ADDR values, GM_ADDR indices, GM_ADDR src, GM_ADDR out, GM_ADDR check,
                                const SpmvTiling& t) {
    using namespace spmv;
    constexpr uint32_t kRows = kChunk - 64;  // rows + 1 entries, padded to 64, fit a chunk
    uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    uint64_t begin = 0, end = 0;
    if (!CoreRange(t, core, begin, end)) return;
    GlobalTensor<int32_t> gRp;
    GlobalTensor<float> gZ, gZs, gY;
    gRp.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), t.count + 1);
    gZ.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(values), t.src_len);
    gZs.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(src), t.src_len);
    gY.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), t.count);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bufRp, bufShift, bufW, bufY, bufMask, bufSlot;
    WindowGather<float, kChunk, kWindow> gather;
    gather.Init(pipe);
    pipe.InitBuffer(bufRp, (kChunk + 64) * sizeof(int32_t));  // the shifted Gather reads one entry past
    pipe.InitBuffer(bufShift, kChunk * sizeof(uint32_t));
    pipe.InitBuffer(bufW, (kChunk + 64) * sizeof(float));
    pipe.InitBuffer(bufY, kChunk * sizeof(float));
    pipe.InitBuffer(bufMask, kChunk / 8);
    pipe.InitBuffer(bufSlot, static_cast<uint32_t>(t.slots) * 32);
    LocalTensor<int32_t> rp = bufRp.Get<int32_t>();
    LocalTensor<int32_t> next = gather.ScratchA();  // free until IndexRange
    LocalTensor<float> w = bufW.Get<float>(), y = bufY.Get<float>();
    LocalTensor<uint8_t> ok = bufMask.Get<uint8_t>();
    LocalTensor<int32_t> shift = bufShift.Get<int32_t>();
    ShiftByOneOffsets(shift, kChunk);
    Duplicate(rp, static_cast<int32_t>(0), static_cast<int32_t>(kChunk + 64));
    Duplicate(w, 0.0f, static_cast<int32_t>(kChunk + 64));
    int64_t bad = -1;
    const bool scaled = t.alpha != 1.0f || t.beta != 0.0f, readsY = t.beta != 0.0f;
    for (uint64_t off = begin; off < end; off += kRows) {
        uint32_t rows = static_cast<uint32_t>(end - off < kRows ? end - off : kRows);
        uint32_t entries = rows + 1;
        uint32_t padded = Pad64(entries);
        PipeSync<HardEvent::V_MTE2>();
        LoadAny(rp, gRp[off], entries);
        PipeSync<HardEvent::MTE2_V>();
        int32_t first = FirstDecrease(rp, next, shift, ok, rows, bad < 0);
        if (first >= 0) bad = static_cast<int64_t>(off) + first;
        // w[i] = zs[rp[i] - 1] for the chunk's entries (entry 0: w[off - 1]).
        Adds(rp, rp, static_cast<int32_t>(-1), static_cast<int32_t>(padded));
        PipeBarrier<PIPE_V>();
        int32_t lo = 0, hi = 0;
        IndexRange(rp, entries, gather.ScratchA(), gather.ScratchB(), lo, hi);
        PipeSync<HardEvent::MTE3_V>();
        gather.Run(w, rp, padded, lo, hi, gZs, t.src_len);
        // y[i] = w[i + 1] - w[i]
        Gather(y, w, shift.ReinterpretCast<uint32_t>(), 0, padded);
        PipeBarrier<PIPE_V>();
        Sub(y, y, w, static_cast<int32_t>(padded));
        PipeSync<HardEvent::V_MTE3>();
        PipeSync<HardEvent::V_S>();
        if (NonFinite(w.GetValue(rows - 1))) {
            LocalTensor<int32_t> stage = gather.ScratchA();
            SumPoisonedRows<kChunk>(y, w, rp, rows, gZ, t.src_len, stage.ReinterpretCast<float>());
            PipeSync<HardEvent::S_MTE3>();  // the scalar unit rewrote rows of y
        }
        ScalarReadsDone();
        if (scaled) {
            // y's old values (UB is full: into the gather's scratch B, free
            // after the gather until the next chunk's).
            LocalTensor<float> old = gather.ScratchB().template ReinterpretCast<float>();
            if (readsY) {
                PipeSync<HardEvent::V_MTE2>();
                LoadAny(old, gY[off], rows);
                PipeSync<HardEvent::MTE2_V>();
            }
            PipeSync<HardEvent::S_V>();  // the scalar unit may have rewritten rows of y
            if (t.alpha != 1.0f) Muls(y, y, t.alpha, static_cast<int32_t>(rows));  // x 1 is exact
            if (readsY) {
                Muls(old, old, t.beta, static_cast<int32_t>(rows));
                PipeBarrier<PIPE_V>();
                Add(y, y, old, static_cast<int32_t>(rows));
            }
            PipeSync<HardEvent::V_MTE3>();
        }
        StoreAny(gY[off], y, rows);
    }
    WriteCheckSlots(check, t.slots, bufSlot.Get<int32_t>(), bad);
}

}  // namespace ascend_scan
