// VecCumSum (docs/algorithms.md, VectorScan): the scan on the vector unit
// only, the baseline of the cube scans (AscendC CumSum style). For each
// l-tile: cast to the accumulator type, transpose the s x s tile with a Gather
// (so each s-element segment becomes a column), scan down the columns with
// s - 1 row-wise vector Adds, transpose back, then add the running carry to
// each row as ScanU does. One vector core.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ops.h"
#include "blocks_scan.h"

namespace ascend_scan {

template <typename TIn, typename TAcc, uint32_t kS>
__aicore__ inline void VecCumSum(GM_ADDR x, GM_ADDR y, GM_ADDR total, const VecCumSumTiling& tiling) {
    constexpr uint32_t kTile = kS * kS;
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qIn;
    TQue<TPosition::VECOUT, 1> qOut;
    TBuf<TPosition::VECCALC> bufA, bufT, bufHalf, bufIdx, bufOne;
    pipe.InitBuffer(qIn, 2, kTile * sizeof(TIn));
    pipe.InitBuffer(qOut, 2, kTile * sizeof(TAcc));
    pipe.InitBuffer(bufA, kTile * sizeof(TAcc));
    pipe.InitBuffer(bufT, kTile * sizeof(TAcc));
    pipe.InitBuffer(bufHalf, std::is_same<TIn, int8_t>::value ? kTile * sizeof(half) : 32);
    pipe.InitBuffer(bufIdx, kTile * sizeof(uint32_t));
    pipe.InitBuffer(bufOne, 32);

    GlobalTensor<TIn> gx;
    GlobalTensor<TAcc> gy, gTotal;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), tiling.n);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), tiling.n);
    gTotal.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), 1);
    LocalTensor<TAcc> a = bufA.Get<TAcc>();
    LocalTensor<TAcc> tr = bufT.Get<TAcc>();
    LocalTensor<half> tmpHalf = bufHalf.Get<half>();
    LocalTensor<uint32_t> idx = bufIdx.Get<uint32_t>();
    LocalTensor<TAcc> one = bufOne.Get<TAcc>();

    // Transpose table: element r*s + c reads element c*s + r (byte offsets).
    for (uint32_t i = 0; i < kTile; ++i) idx.SetValue(i, static_cast<uint32_t>(((i % kS) * kS + i / kS) * sizeof(TAcc)));
    PipeSync<HardEvent::S_V>();

    uint64_t shift = tiling.exclusive ? 1 : 0;
    if (tiling.exclusive) StoreScalar(gy, one, static_cast<TAcc>(0));
    TAcc carry = 0;
    for (uint32_t tile = 0; tile < tiling.tiles; ++tile) {
        uint64_t base = static_cast<uint64_t>(tile) * kTile;
        uint32_t count = TileElems(tiling.n, tile, kTile);
        LocalTensor<TIn> in = qIn.AllocTensor<TIn>();
        // A partial tile is zero-padded so row ends and carries stay exact.
        if (count < kTile) ZeroBeforeLoad(in, kTile);
        LoadAny(in, gx[base], count);
        qIn.EnQue(in);
        in = qIn.DeQue<TIn>();
        PipeBarrier<PIPE_V>();  // the last tile's row adds have read a
        CastToAcc(a, in, tmpHalf, kTile);
        qIn.FreeTensor(in);
        PipeBarrier<PIPE_V>();
        Gather(tr, a, idx, 0, kTile);
        PipeBarrier<PIPE_V>();
        for (uint32_t r = 1; r < kS; ++r) {
            Add(tr[r * kS], tr[r * kS], tr[(r - 1) * kS], static_cast<int32_t>(kS));
            PipeBarrier<PIPE_V>();
        }
        Gather(a, tr, idx, 0, kTile);
        PipeSync<HardEvent::V_S>();
        LocalTensor<TAcc> out = qOut.AllocTensor<TAcc>();
        carry = PropagateRows(out, a, kS, CeilDiv(count, kS), carry);
        qOut.EnQue(out);
        out = qOut.DeQue<TAcc>();
        StoreShifted(gy, out, base, count, tiling.n, shift);
        qOut.FreeTensor(out);
    }
    StoreScalar(gTotal, one, carry);
}

}  // namespace ascend_scan
