// MCScan (docs/algorithms.md, MCScan), the multi-core scan as published
// (reduce-scan-add with recomputation). Each AI core owns a block of whole
// l-tiles.
// Phase I, in parallel: the AIC computes the local s-row scans C = A @ U of
// its block's tiles and writes them to y; each of its two AIVs sums its half
// of the block from x and publishes the sum r[i] (i = GetBlockIdx()).
// SyncAll. Phase II: each AIV adds the sum of r[0..i) and the running row
// carry to its rows of y. An AIV whose sum is non-finite first rescans its
// s-rows whose total is non-finite from x (SequentialRescan). Exclusive: ExclusiveStore. HBM traffic: 2 + 2 + 4
// (phase I) + 4 + 4 (phase II) bytes per f16 element.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_cube.h"
#include "blocks_reduce.h"
#include "blocks_scan.h"

namespace ascend_scan {
namespace mcscan {

template <typename TIn, typename TAcc, uint32_t kS>
struct VectorBuffers {
    TQue<TPosition::VECIN, 1> qIn;
    TQue<TPosition::VECIN, 1> qX;
    TQue<TPosition::VECOUT, 1> qOut;
    TBuf<TPosition::VECCALC> acc, xAcc, half16, one;
    SequentialRescan<TIn, TAcc, kS> rescan;
};

// kChunk: vector chunk (elements), a multiple of s.
template <typename TIn, typename TAcc, uint32_t kS, uint32_t kChunk>
struct Sides {
    static constexpr uint32_t kTile = kS * kS;
    using Buffers = VectorBuffers<TIn, TAcc, kS>;

    // Rows of y owned by vector core `v` (two per AI core, each half a block).
    __aicore__ static inline void VectorRows(const McScanTiling& t, uint32_t v, uint64_t& first, uint64_t& last) {
        uint64_t blockRows = static_cast<uint64_t>(t.tiles_per_block) * kS;
        uint64_t half = blockRows / 2;
        uint64_t totalRows = (t.n + kS - 1) / kS;
        uint64_t begin = (v / 2) * blockRows + (v % 2) * half;
        uint64_t end = (v % 2) ? (v / 2 + 1) * blockRows : begin + half;
        first = MinU64(begin, totalRows);
        last = MinU64(end, totalRows);
    }

    __aicore__ static inline void Cube(GM_ADDR x, GM_ADDR y, GM_ADDR constants, const McScanTiling& t) {
        TPipe pipe;
        CubeTileScan<TIn, kS> cube;
        cube.Init(pipe, constants, t.zeros_offset);
        GlobalTensor<TIn> gx;
        GlobalTensor<TAcc> gy;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        gy.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
        uint64_t firstTile = static_cast<uint64_t>(GetBlockIdx()) * t.tiles_per_block;
        uint64_t lastTile = MinU64(firstTile + t.tiles_per_block, t.tiles);
        for (uint64_t tile = firstTile; tile < lastTile; ++tile) {
            uint64_t base = tile * kTile;
            uint32_t count = TileElems(t.n, tile, kTile);
            uint32_t m1;
            LocalTensor<TAcc> c1 = cube.Compute(gx[base], count, m1);
            StoreTileRows(gy[base], c1, kS, count, m1);
            cube.Release(c1);
        }
    }

    // Phase I on an AIV: the sum of x over its rows, published in r[v] and returned.
    __aicore__ static inline TAcc ReducePhase(Buffers& b, const GlobalTensor<TIn>& gx, const GlobalTensor<TAcc>& gr,
                                       const McScanTiling& t, uint32_t v) {
        uint64_t firstRow, lastRow;
        VectorRows(t, v, firstRow, lastRow);
        TAcc sum = SumRange(gx, firstRow * kS, MinU64(lastRow * kS, t.n), kChunk, b.qX, b.acc.template Get<TAcc>(),
                            b.xAcc.template Get<TAcc>(), b.half16.template Get<half>());
        StoreScalar(gr[v * kSumSlot<TAcc>], b.one.template Get<TAcc>(), sum);
        return sum;
    }

    // Phase II on an AIV: add the carry of earlier blocks and rows to its rows
    // of y; `mySum` (its rows' sum) non-finite: rescan the non-finite s-rows first.
    __aicore__ static inline void PropagatePhase(Buffers& b, const GlobalTensor<TIn>& gx,
                                          const GlobalTensor<TAcc>& gy, const GlobalTensor<TAcc>& gr,
                                          const GlobalTensor<TAcc>& gTotal, const McScanTiling& t, uint32_t v,
                                          uint32_t vectors, TAcc mySum) {
        // Sums of the earlier vector cores' rows, read after the barrier.
        TAcc carry = SumSlots(gr, b.acc.template Get<TAcc>(), vectors, v);
        if (v + 1 == vectors) StoreScalar(gTotal, b.one.template Get<TAcc>(), SumSlots(gr, b.acc.template Get<TAcc>(), vectors, vectors));
        uint64_t firstRow, lastRow;
        VectorRows(t, v, firstRow, lastRow);
        uint64_t end = MinU64(lastRow * kS, t.n);
        for (uint64_t row = firstRow; row < lastRow; row += kChunk / kS) {
            uint32_t rows = static_cast<uint32_t>(MinU64(lastRow - row, kChunk / kS));
            uint64_t off = row * kS;
            uint32_t count = static_cast<uint32_t>(MinU64(end - off, static_cast<uint64_t>(rows) * kS));
            LocalTensor<TAcc> in = b.qIn.template AllocTensor<TAcc>();
            LoadAny(in, gy[off], count);
            b.qIn.EnQue(in);
            in = b.qIn.template DeQue<TAcc>();
            if (NonFinite(mySum)) b.rescan.Rows(in, gx[off], kS, rows, count);
            PipeSync<HardEvent::MTE2_S>();
            LocalTensor<TAcc> out = b.qOut.template AllocTensor<TAcc>();
            TAcc before = carry;
            carry = PropagateRows(out, in, kS, rows, carry);
            b.qIn.FreeTensor(in);
            b.qOut.EnQue(out);
            out = b.qOut.template DeQue<TAcc>();
            if (t.exclusive) {
                ExclusiveStore(gy, out, off, count, before, b.one.template Get<TAcc>());
            } else {
                StoreAny(gy[off], out, count);
            }
            b.qOut.FreeTensor(out);
        }
    }

    __aicore__ static inline void Vector(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR workspace, const McScanTiling& t) {
        TPipe pipe;
        Buffers b;
        pipe.InitBuffer(b.qIn, 2, kChunk * sizeof(TAcc));
        pipe.InitBuffer(b.qX, 2, kChunk * sizeof(TIn));
        pipe.InitBuffer(b.qOut, 2, kChunk * sizeof(TAcc));
        pipe.InitBuffer(b.acc, kChunk * sizeof(TAcc));
        pipe.InitBuffer(b.xAcc, kChunk * sizeof(TAcc));
        pipe.InitBuffer(b.half16, kChunk * sizeof(half));
        pipe.InitBuffer(b.one, 32);
        b.rescan.Init(pipe);
        GlobalTensor<TIn> gx;
        GlobalTensor<TAcc> gy, gr, gTotal;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        gy.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
        gTotal.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), 1);
        gr.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace), 0);
        uint32_t v = static_cast<uint32_t>(GetBlockIdx());
        uint32_t vectors = static_cast<uint32_t>(GetBlockNum() * GetTaskRatio());
        TAcc mySum = ReducePhase(b, gx, gr, t, v);
        SyncAll<false>();
        PropagatePhase(b, gx, gy, gr, gTotal, t, v, vectors, mySum);
    }
};

}  // namespace mcscan

template <typename TIn, typename TAcc, uint32_t kS, uint32_t kChunk>
__aicore__ inline void McScan(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR constants, GM_ADDR workspace,
                              const McScanTiling& t) {
    using Sides = mcscan::Sides<TIn, TAcc, kS, kChunk>;
    if ASCEND_IS_AIC {
        Sides::Cube(x, y, constants, t);
        SyncAll<false>();
    } else {
        Sides::Vector(x, y, total, workspace, t);
    }
}

}  // namespace ascend_scan
