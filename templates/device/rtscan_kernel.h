// RTScan (docs/algorithms.md, RTScan): the multi-core scan with an
// L2-resident hand-off. Each AI core owns a block of whole l-tiles.
// Phase I: each AIV sums its half of the block from x and publishes the sum;
// SyncAll. Meanwhile and after, the AIC scans the block's tiles (C = A @ U)
// into a small per-core ring in GM (it stays in L2) and signals its AIVs with
// CrossCore flags; each AIV reads the row ends of a tile, takes its half of
// the rows, adds the carries and writes y once. HBM traffic per f16 element:
// 2 (reduce) + 2 (scan) + 4 (y) bytes; the ring traffic stays in L2.
// Exclusive: ExclusiveStore (no extra traffic). Inputs larger than half the
// L2 go in waves that fit it (each wave: reduce, SyncAll, scan, the carry of
// earlier waves added), so that the scan's second read of x hits L2: about 6
// bytes per f16 element at any n.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ring.h"

namespace ascend_scan {
namespace rtscan {

// kChunk: vector chunk (elements), a multiple of s.
template <typename TIn, typename TAcc, uint32_t kS, uint32_t kChunk>
struct Sides {
    static constexpr uint32_t kTile = kS * kS;

    __aicore__ static inline void BlockTiles(const RtScanTiling& t, uint32_t wave, uint32_t block, uint64_t& first,
                                             uint64_t& last) {
        WaveBlockTiles(t.tiles, t.tiles_per_wave, t.tiles_per_block, wave, block, first, last);
    }

    __aicore__ static inline void Cube(GM_ADDR x, GM_ADDR constants, GM_ADDR workspace, const RtScanTiling& t) {
        TPipe pipe;
        CubeTileScan<TIn, kS> cube;
        cube.Init(pipe, constants, t.zeros_offset);
        GlobalTensor<TIn> gx;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        GlobalTensor<TAcc> gRing = RingOf<TAcc>(workspace, t.ring_offset, GetBlockIdx(), t.ring_slots, kTile);
        RingProducer ring(t.ring_slots);
        for (uint32_t wave = 0; wave < t.waves; ++wave) {
            uint64_t firstTile, lastTile;
            BlockTiles(t, wave, static_cast<uint32_t>(GetBlockIdx()), firstTile, lastTile);
            ring.StartWave();
            for (uint64_t tile = firstTile; tile < lastTile; ++tile) {
                uint32_t count = TileElems(t.n, tile, kTile);
                uint32_t m1;
                LocalTensor<TAcc> c1 = cube.Compute(gx[tile * kTile], count, m1);
                StoreTile(gRing[ring.AcquireInWave(tile - firstTile) * kTile], c1, kS, CeilDiv(count, kS), m1);
                cube.Release(c1);
                ring.Publish();
            }
            ring.EndWave();
        }
        ring.Drain();
    }

    __aicore__ static inline void Vector(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR workspace,
                                         const RtScanTiling& t) {
        TPipe pipe;
        RingTileFinisher<TIn, kS, kChunk> fin;
        fin.Init(pipe);
        GlobalTensor<TIn> gx;
        GlobalTensor<TAcc> gy, gTotal, gSums;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
        gy.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
        gTotal.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), 1);
        uint32_t v = static_cast<uint32_t>(GetBlockIdx());
        uint32_t sub = static_cast<uint32_t>(GetSubBlockIdx());
        uint32_t block = v / 2;
        uint32_t vectors = static_cast<uint32_t>(GetBlockNum() * GetTaskRatio());
        GlobalTensor<TAcc> gRing = RingOf<TAcc>(workspace, t.ring_offset, block, t.ring_slots, kTile);

        TAcc before = 0;    // the sum of all earlier waves
        uint64_t step = 0;  // ring slots consumed, over all waves
        for (uint32_t wave = 0; wave < t.waves; ++wave) {
            uint64_t firstTile, lastTile;
            BlockTiles(t, wave, block, firstTile, lastTile);
            // Phase I: this core's half (in elements) of the block. The partial
            // sums alternate between two slot sets by wave: a core may publish
            // the next wave's sums while a slower one still reads this wave's.
            gSums.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace) +
                                      (wave % 2) * vectors * kSumSlot<TAcc>,
                                  static_cast<uint64_t>(vectors) * kSumSlot<TAcc>);
            uint64_t blockBegin = MinU64(firstTile * kTile, t.n);
            uint64_t blockEnd = MinU64(lastTile * kTile, t.n);
            uint64_t mid = blockBegin + (blockEnd - blockBegin) / 2;
            TAcc mine = SumRange(gx, sub ? mid : blockBegin, sub ? blockEnd : mid, kChunk, fin.inputs(), fin.acc(),
                                 fin.xa(), fin.halves());
            StoreScalar(gSums[v * kSumSlot<TAcc>], fin.one(), mine);
            SyncAll<false>();
            TAcc carry = static_cast<TAcc>(before + SumSlots(gSums, fin.acc(), vectors, 2 * block));
            before = static_cast<TAcc>(before + SumSlots(gSums, fin.acc(), vectors, vectors));
            if (wave + 1 == t.waves && v + 1 == vectors) StoreScalar(gTotal, fin.one(), before);

            // Phase II: tiles of the block from the ring.
            for (uint64_t tile = firstTile; tile < lastTile; ++tile, ++step) {
                uint64_t base = tile * kTile;
                uint32_t count = TileElems(t.n, tile, kTile);
                GlobalTensor<TAcc> slot = gRing[(step % t.ring_slots) * kTile];
                carry = static_cast<TAcc>(carry + fin.Finish(slot, gx[base], gy[base], count, sub, carry, t.exclusive != 0));
            }
        }
    }
};

}  // namespace rtscan

template <typename TIn, typename TAcc, uint32_t kS, uint32_t kChunk>
__aicore__ inline void RtScan(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR constants, GM_ADDR workspace,
                              const RtScanTiling& t) {
    using Sides = rtscan::Sides<TIn, TAcc, kS, kChunk>;
    if ASCEND_IS_AIC {
        Sides::Cube(x, constants, workspace, t);
    } else {
        Sides::Vector(x, y, total, workspace, t);
    }
}

}  // namespace ascend_scan
