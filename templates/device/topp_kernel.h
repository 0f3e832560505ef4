// Top-p sampling (docs/algorithms.md, Top-p): the truncation of the sorted
// probabilities before the weighted draw, and the pick of the token after it.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ub_io.h"

namespace ascend_scan {

// The truncation (TProb probabilities sorted descending in rows of m): with
// the row's inclusive fp32 scan S, the weight of entry i is 0 where
// S[i] - x[i] > p (the mass before it already exceeds p), else x[i] (the
// Llama 3 reference's mask; the draw that follows renormalises).
// Elementwise on every vector core; each core also counts its entries
// outside [0, 1] (NaN included) into its 32-byte workspace slot, so the host
// can refuse such probabilities.
template <typename TProb>
__aicore__ inline void TopPMask(GM_ADDR probs, GM_ADDR scan, GM_ADDR weights, GM_ADDR workspace, const TopPTiling& t) {
    constexpr uint32_t kTile = 4096;  // elements per tile (a multiple of 64)
    uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    uint64_t begin = static_cast<uint64_t>(core) * t.per_core;
    uint64_t end = begin + t.per_core < t.total ? begin + t.per_core : t.total;
    if (begin > end) begin = end;
    GlobalTensor<TProb> gx;
    GlobalTensor<float> gs, gw;
    GlobalTensor<int32_t> gSlot;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ TProb*>(probs), t.total);
    gs.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scan), t.total);
    gw.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weights), t.total);
    gSlot.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace) + core * 8, 8);
    TPipe pipe;
    TQue<TPosition::VECIN, 2> qx, qs;
    TQue<TPosition::VECOUT, 2> qw;
    TBuf<TPosition::VECCALC> bufMasks, bufZero, bufScratch, bufSlot;
    pipe.InitBuffer(qx, 2, kTile * sizeof(TProb));
    pipe.InitBuffer(qs, 2, kTile * sizeof(float));
    pipe.InitBuffer(qw, 2, kTile * sizeof(float));
    pipe.InitBuffer(bufMasks, 3 * kTile / 8);
    pipe.InitBuffer(bufZero, kTile * sizeof(float));
    pipe.InitBuffer(bufScratch, kTile * sizeof(float));
    pipe.InitBuffer(bufSlot, 32);
    LocalTensor<float> zero = bufZero.Get<float>();
    Duplicate(zero, 0.0f, static_cast<int32_t>(kTile));
    LocalTensor<uint8_t> drop = bufMasks.Get<uint8_t>(), lo = drop[kTile / 8], hi = drop[2 * kTile / 8];
    uint64_t bad = 0;
    for (uint64_t off = begin; off < end; off += kTile) {
        uint32_t count = static_cast<uint32_t>(end - off < kTile ? end - off : kTile);
        uint32_t padded = (count + 63) / 64 * 64;  // CompareScalar on float takes whole 256-byte repeats
        LocalTensor<TProb> x = qx.AllocTensor<TProb>();
        LocalTensor<float> s = qs.AllocTensor<float>();
        LoadAny(x, gx[off], count);
        LoadAny(s, gs[off], count);
        qx.EnQue(x);
        qs.EnQue(s);
        x = qx.DeQue<TProb>();
        s = qs.DeQue<float>();
        LocalTensor<float> w = qw.AllocTensor<float>();
        Cast(w, x, RoundMode::CAST_NONE, padded);  // exact
        PipeBarrier<PIPE_V>();
        qx.FreeTensor(x);
        Sub(s, s, w, static_cast<int32_t>(padded));  // the mass before entry i
        // Entries outside [0, 1] (NaN fails both compares).
        CompareScalar(lo, w, 0.0f, CMPMODE::GE, padded);
        CompareScalar(hi, w, 1.0f, CMPMODE::LE, padded);
        PipeBarrier<PIPE_V>();
        And(lo.ReinterpretCast<uint16_t>(), lo.ReinterpretCast<uint16_t>(), hi.ReinterpretCast<uint16_t>(),
            static_cast<int32_t>(padded / 16));
        CompareScalar(drop, s, t.p, CMPMODE::GT, padded);
        PipeBarrier<PIPE_V>();
        qs.FreeTensor(s);
        uint64_t valid = 0;
        GatherMask(bufScratch.Get<float>(), zero, lo.ReinterpretCast<uint32_t>(), true, count,
                   GatherMaskParams(1, 1, 8, 0), valid);  // the count only
        ResetMask();
        bad += count - valid;
        Select(w, drop, zero, w, SELMODE::VSEL_TENSOR_TENSOR_MODE, padded);
        PipeBarrier<PIPE_V>();
        qw.EnQue(w);
        w = qw.DeQue<float>();
        StoreAny(gw[off], w, count);
        qw.FreeTensor(w);
    }
    LocalTensor<int32_t> slot = bufSlot.Get<int32_t>();
    PipeBarrier<PIPE_ALL>();
    slot.SetValue(0, static_cast<int32_t>(bad < 0x7FFFFFFF ? bad : 0x7FFFFFFF));
    for (uint32_t i = 1; i < 8; ++i) slot.SetValue(i, 0);
    PipeSync<HardEvent::S_MTE3>();
    DataCopy(gSlot, slot, 8);
}

// The last step: the token of every row is the index (from the sort) at the
// position its weighted draw chose: tokens[r] = indices[r * m + pos[r]].
// Each vector core takes a range of rows; a row costs two small reads (its
// position, then its index).
__aicore__ inline void TopPPick(GM_ADDR indices, GM_ADDR pos, GM_ADDR tokens, GM_ADDR workspace, const TopPTiling& t) {
    (void)workspace;
    uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
    if (begin >= t.total) return;
    uint64_t end = begin + t.per_core < t.total ? begin + t.per_core : t.total;
    uint32_t rows = static_cast<uint32_t>(end - begin);
    GlobalTensor<int32_t> gIdx, gPos, gTok;
    gIdx.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), t.total * t.row_len);
    gPos.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(pos), t.total);
    gTok.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(tokens), t.total);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bufPos, bufOne, bufTok;
    pipe.InitBuffer(bufPos, (rows + 7) / 8 * 32);
    pipe.InitBuffer(bufOne, 32);
    pipe.InitBuffer(bufTok, (rows + 7) / 8 * 32);
    LocalTensor<int32_t> p = bufPos.Get<int32_t>(), one = bufOne.Get<int32_t>(), tok = bufTok.Get<int32_t>();
    LoadAny(p, gPos[begin], rows);
    PipeSync<HardEvent::MTE2_S>();
    for (uint32_t r = 0; r < rows; ++r) {
        uint64_t at = (begin + r) * t.row_len + static_cast<uint64_t>(p.GetValue(r));
        PipeSync<HardEvent::S_MTE2>();
        LoadAny(one, gIdx[at], 1);
        PipeSync<HardEvent::MTE2_S>();
        tok.SetValue(r, one.GetValue(0));
    }
    PipeSync<HardEvent::S_MTE3>();
    StoreAny(gTok[begin], tok, rows);
}

}  // namespace ascend_scan
