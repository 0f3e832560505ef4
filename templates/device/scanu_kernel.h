// ScanU and batched ScanU (docs/algorithms.md, ScanU): `rows` arrays of `n`
// elements each (one array = the plain ScanU). Rows go to the AI cores in
// pairs; per pair the AIC computes C = A @ U for tile k of both rows (s
// independent row scans each; U upper-triangular ones) into one slot of the
// GM ring; AIV 0 finishes the pair's first row, AIV 1 its second: each adds
// the running carry to every s-row (RowCarries: row ends scanned and
// broadcast on the vector unit) and writes the scan (exclusive: one element
// to the right after a leading 0). Each row's total goes to its own 32-byte
// slot of `total`. A tile whose total is non-finite has its non-finite s-rows
// rescanned from x (SequentialRescan) before the carries are added.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ring.h"

namespace ascend_scan {
namespace scanu {

// kChunkRows: rows of s per vector chunk.
template <typename TIn, typename TAcc, uint32_t kS, uint32_t kChunkRows>
struct Sides {
    static constexpr uint32_t kTile = kS * kS;
    static constexpr uint32_t kSlot = 2 * kTile;  // a ring slot: tile k of both rows of a pair

    __aicore__ static inline void Cube(GM_ADDR x, GM_ADDR constants, GM_ADDR workspace, const ScanUTiling& t) {
        TPipe pipe;
        CubeTileScan<TIn, kS> cube;
        cube.Init(pipe, constants, t.zeros_offset);
        GlobalTensor<TIn> gx;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n * t.rows);
        GlobalTensor<TAcc> gRing = RingOf<TAcc>(workspace, 0, GetBlockIdx(), t.ring_slots, kSlot);
        RingProducer ring(t.ring_slots);
        for (uint32_t pair = GetBlockIdx(); 2 * pair < t.rows; pair += GetBlockNum()) {
            for (uint32_t k = 0; k < t.tiles; ++k) {
                uint32_t count = TileElems(t.n, k, kTile);
                GlobalTensor<TAcc> slot = gRing[ring.Acquire() * kSlot];
                for (uint32_t h = 0; h < 2 && 2 * pair + h < t.rows; ++h) {
                    uint64_t base = static_cast<uint64_t>(2 * pair + h) * t.n + static_cast<uint64_t>(k) * kTile;
                    uint32_t m1;
                    LocalTensor<TAcc> c1 = cube.Compute(gx[base], count, m1);
                    StoreTile(slot[h * kTile], c1, kS, CeilDiv(count, kS), m1);
                    cube.Release(c1);
                }
                ring.Publish();
            }
        }
        ring.Drain();
    }

    __aicore__ static inline void Vector(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR workspace,
                                         const ScanUTiling& t) {
        TPipe pipe;
        RowScanOutput<TAcc> output;
        output.Init(pipe, kChunkRows * kS, y, total, t.n, t.rows, t.exclusive != 0);
        RowCarries<TAcc, kS, kS> carries;
        carries.Init(pipe);
        SequentialRescan<TIn, TAcc, kS> rescan;
        rescan.Init(pipe);
        GlobalTensor<TIn> gx;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n * t.rows);

        uint32_t sub = GetSubBlockIdx();
        uint32_t core = GetBlockIdx() / 2;  // the AI core (AIC index) of this AIV
        uint32_t cores = GetBlockNum();
        GlobalTensor<TAcc> gRing = RingOf<TAcc>(workspace, 0, core, t.ring_slots, kSlot);

        uint32_t step = 0;
        for (uint32_t pair = core; 2 * pair < t.rows; pair += cores) {
            uint32_t row = 2 * pair + sub;
            bool mine = row < t.rows;  // an odd last row leaves AIV 1 idle (it still keeps the flags in step)
            if (mine) output.StartRow(row);
            TAcc carry = 0;
            for (uint32_t k = 0; k < t.tiles; ++k, ++step) {
                uint32_t count = TileElems(t.n, k, kTile);
                uint32_t rows = CeilDiv(count, kS);
                uint64_t base = static_cast<uint64_t>(k) * kTile;
                RingWaitTile();
                GlobalTensor<TAcc> slot = gRing[static_cast<uint64_t>(step % t.ring_slots) * kSlot + sub * kTile];
                TAcc tileSum = 0;
                if (mine) {
                    carries.Prepare(slot, rows, 0, rows, carry);
                    tileSum = carries.Total();
                }
                for (uint32_t r0 = 0; r0 < rows && mine; r0 += kChunkRows) {
                    uint32_t chunkRows = rows - r0 < kChunkRows ? rows - r0 : kChunkRows;
                    LocalTensor<TAcc> in = output.qIn.template AllocTensor<TAcc>();
                    DataCopy(in, slot[static_cast<uint64_t>(r0) * kS], chunkRows * kS);
                    output.qIn.EnQue(in);
                    in = output.qIn.template DeQue<TAcc>();
                    if (NonFinite(tileSum)) {
                        uint64_t first = base + static_cast<uint64_t>(r0) * kS;
                        rescan.Rows(in, gx[static_cast<uint64_t>(row) * t.n + first], kS, chunkRows,
                                    static_cast<uint32_t>(MinU64(count - r0 * kS, chunkRows * kS)));
                    }
                    LocalTensor<TAcc> out = output.qOut.template AllocTensor<TAcc>();
                    carries.AddTo(out, in, r0, chunkRows);
                    output.qOut.EnQue(out);
                    output.qIn.FreeTensor(in);
                    output.Store(base + static_cast<uint64_t>(r0) * kS, chunkRows * kS);
                }
                carry = static_cast<TAcc>(carry + tileSum);
                // This AIV is done with its half of the slot once its loads completed.
                RingRelease();
            }
            if (mine) output.EndRow(carry);
        }
    }
};

}  // namespace scanu

template <typename TIn, typename TAcc, uint32_t kS, uint32_t kChunkRows>
__aicore__ inline void ScanU(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR constants, GM_ADDR workspace,
                             const ScanUTiling& t) {
    using Sides = scanu::Sides<TIn, TAcc, kS, kChunkRows>;
    if ASCEND_IS_AIC {
        Sides::Cube(x, constants, workspace, t);
    } else {
        Sides::Vector(x, y, total, workspace, t);
    }
}

}  // namespace ascend_scan
