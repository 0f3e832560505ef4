// Copy (docs/algorithms.md, Copy): GM -> UB -> GM with double buffering on
// every vector core. The bandwidth baseline every benchmark compares with.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ub_io.h"

namespace ascend_scan {

__aicore__ inline void CopyBytes(GM_ADDR src, GM_ADDR dst, const CopyTiling& tiling) {
    uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * tiling.per_core;
    if (begin >= tiling.bytes) return;
    uint64_t end = begin + tiling.per_core < tiling.bytes ? begin + tiling.per_core : tiling.bytes;

    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 2, tiling.tile);
    GlobalTensor<uint8_t> gs, gd;
    gs.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(src), tiling.bytes);
    gd.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(dst), tiling.bytes);
    for (uint64_t off = begin; off < end; off += tiling.tile) {
        uint32_t len = static_cast<uint32_t>(end - off < tiling.tile ? end - off : tiling.tile);
        LocalTensor<uint8_t> buf = q.AllocTensor<uint8_t>();
        if (len % 32 == 0) {
            DataCopy(buf, gs[off], len);
        } else {
            DataCopyExtParams p(1, len, 0, 0, 0);
            DataCopyPadExtParams<uint8_t> pad(false, 0, 0, 0);
            DataCopyPad(buf, gs[off], p, pad);
        }
        q.EnQue(buf);
        buf = q.DeQue<uint8_t>();
        if (len % 32 == 0) {
            DataCopy(gd[off], buf, len);
        } else {
            StoreAny(gd[off], buf, len);
        }
        q.FreeTensor(buf);
    }
}

}  // namespace ascend_scan
