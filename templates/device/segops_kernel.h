// The vector steps of the composed segmented operations (docs/algorithms.md,
// Segmented sum (SSCR, SCD)). Each vector core owns a range of whole 32-byte
// blocks.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ops.h"
#include "blocks_ub_io.h"

namespace ascend_scan {
namespace segops {
constexpr uint32_t kChunk = 4096;
constexpr uint32_t kPad = 8;  // zeros before the window of v (w(0) = 0 at kPad - 1)
}  // namespace segops

// The revert of SSCR (TIn values, TAcc scans): y[i] = xe[i] - w(fs[i])
// (+ x[i] for the inclusive scan), where xe is the exclusive scan of x, fs
// the inclusive scan of the flags and w(k) = v[k - 1] (0 for k = 0), v being
// xe compacted at the segment starts. fs never decreases, so the v a chunk
// needs is one contiguous window, no longer than the chunk plus one: it is
// loaded after eight zeros (w(0)) and gathered from by byte offsets.
template <typename TIn, typename TAcc>
__aicore__ inline void SegRevert(GM_ADDR xe, GM_ADDR x, GM_ADDR fs, GM_ADDR v, GM_ADDR y, const SegRevertTiling& t) {
    using segops::kChunk;
    using segops::kPad;
    uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
    if (begin >= t.n) return;
    uint64_t end = MinU64(begin + t.per_core, t.n);
    GlobalTensor<TAcc> gXe, gV, gY;
    GlobalTensor<TIn> gX;
    GlobalTensor<int32_t> gFs;
    gXe.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(xe), t.n);
    gX.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
    gFs.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(fs), t.n);
    gV.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(v), t.n);
    gY.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qFs, qXe, qX, qW;
    TQue<TPosition::VECOUT, 1> qY;
    TBuf<TPosition::VECCALC> bufG, bufXa, bufHalf;
    pipe.InitBuffer(qFs, 1, kChunk * sizeof(int32_t));
    pipe.InitBuffer(qXe, 1, kChunk * sizeof(TAcc));
    pipe.InitBuffer(qX, 1, kChunk * sizeof(TIn));
    pipe.InitBuffer(qW, 1, (kPad + kChunk + 8) * sizeof(TAcc));
    pipe.InitBuffer(qY, 1, kChunk * sizeof(TAcc));
    pipe.InitBuffer(bufG, kChunk * sizeof(TAcc));
    pipe.InitBuffer(bufXa, kChunk * sizeof(TAcc));
    pipe.InitBuffer(bufHalf, kChunk * sizeof(half));
    for (uint64_t off = begin; off < end; off += kChunk) {
        uint32_t count = static_cast<uint32_t>(MinU64(end - off, kChunk));
        LocalTensor<int32_t> f = qFs.AllocTensor<int32_t>();
        LoadAny(f, gFs[off], count);
        LocalTensor<TAcc> e = qXe.AllocTensor<TAcc>();
        LoadAny(e, gXe[off], count);
        // The window of v: w(k) for k in [fs[off], fs[off + count - 1]].
        PipeSync<HardEvent::MTE2_S>();
        int32_t kLo = f.GetValue(0), kHi = f.GetValue(count - 1);
        PipeSync<HardEvent::S_V>();  // f becomes byte offsets below
        int32_t base = kLo > 0 ? kLo - 1 : 0;  // first v index in the window
        LocalTensor<TAcc> w = qW.AllocTensor<TAcc>();
        Duplicate(w, static_cast<TAcc>(0), static_cast<int32_t>(kPad));
        PipeSync<HardEvent::V_MTE2>();
        if (kHi > base) LoadAny(w[kPad], gV[static_cast<uint64_t>(base)], static_cast<uint32_t>(kHi - base));
        qFs.EnQue(f);
        qXe.EnQue(e);
        qW.EnQue(w);
        f = qFs.DeQue<int32_t>();
        e = qXe.DeQue<TAcc>();
        w = qW.DeQue<TAcc>();
        // Byte offsets (kPad - 1 + fs - base) * sizeof(TAcc) of w(fs).
        Adds(f, f, static_cast<int32_t>(kPad - 1) - base, static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        ShiftLeft(f, f, static_cast<int32_t>(2), static_cast<int32_t>(count));
        PipeBarrier<PIPE_V>();
        LocalTensor<TAcc> g = bufG.Get<TAcc>();
        Gather(g, w, f.ReinterpretCast<uint32_t>(), 0, count);
        PipeBarrier<PIPE_V>();
        qFs.FreeTensor(f);
        qW.FreeTensor(w);
        LocalTensor<TAcc> out = qY.AllocTensor<TAcc>();
        Sub(out, e, g, static_cast<int32_t>(count));
        qXe.FreeTensor(e);
        if (!t.exclusive) {
            LocalTensor<TIn> xin = qX.AllocTensor<TIn>();
            LoadAny(xin, gX[off], count);
            xin = Handoff(qX, xin);
            LocalTensor<TAcc> xa = bufXa.Get<TAcc>();
            CastToAcc(xa, xin, bufHalf.Get<half>(), count);
            qX.FreeTensor(xin);
            PipeBarrier<PIPE_V>();
            Add(out, out, xa, static_cast<int32_t>(count));
        }
        StoreQueued(qY, out, gY[off], count);
    }
}

// The difference of SCD (TAcc): y[0] = z[0], y[i] = z[i] - z[i-1]. The
// shifted operand is a second load from GM one element earlier (UB operands
// must be 32-byte aligned; GM reads need not be); y[0] is written on its own.
template <typename TAcc>
__aicore__ inline void SegDiff(GM_ADDR z, GM_ADDR y, GM_ADDR workspace, const SegDiffTiling& t) {
    using segops::kChunk;
    (void)workspace;
    uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
    if (begin >= t.n) return;
    uint64_t end = MinU64(begin + t.per_core, t.n);
    GlobalTensor<TAcc> gZ, gY;
    gZ.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(z), t.n);
    gY.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qCur, qPrev;
    TQue<TPosition::VECOUT, 1> qY;
    pipe.InitBuffer(qCur, 1, kChunk * sizeof(TAcc));
    pipe.InitBuffer(qPrev, 1, kChunk * sizeof(TAcc));
    pipe.InitBuffer(qY, 1, kChunk * sizeof(TAcc));
    if (begin == 0) {
        // y[0] = z[0], then the differences from element 1.
        LocalTensor<TAcc> first = qCur.AllocTensor<TAcc>();
        LoadAny(first, gZ, 1);
        first = Handoff(qCur, first);
        LocalTensor<TAcc> out = qY.AllocTensor<TAcc>();
        Adds(out, first, static_cast<TAcc>(0), 1);
        qCur.FreeTensor(first);
        StoreQueued(qY, out, gY, 1);
        begin = 1;
    }
    for (uint64_t off = begin; off < end; off += kChunk) {
        uint32_t count = static_cast<uint32_t>(MinU64(end - off, kChunk));
        LocalTensor<TAcc> cur = qCur.AllocTensor<TAcc>();
        LocalTensor<TAcc> prev = qPrev.AllocTensor<TAcc>();
        LoadAny(cur, gZ[off], count);
        LoadAny(prev, gZ[off - 1], count);
        cur = Handoff(qCur, cur);
        prev = Handoff(qPrev, prev);
        LocalTensor<TAcc> out = qY.AllocTensor<TAcc>();
        Sub(out, cur, prev, static_cast<int32_t>(count));
        qCur.FreeTensor(cur);
        qPrev.FreeTensor(prev);
        StoreQueued(qY, out, gY[off], count);
    }
}

}  // namespace ascend_scan
