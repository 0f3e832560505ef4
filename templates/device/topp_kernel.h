// Top-p sampling with top_k (docs/algorithms.md, Top-p by radix select):
// the pick of the token after the draw over the top-k values.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ub_io.h"

namespace ascend_scan {

// The last step: the token of every row is the index (from the top-k) at the
// position its weighted draw chose: tokens[r] = indices[r * m + pos[r]].
// Each vector core takes a range of rows; a row costs two small reads (its
// position, then its index).
__aicore__ inline void TopPPick(GM_ADDR indices, GM_ADDR pos, GM_ADDR tokens, const TopPTiling& t) {
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
