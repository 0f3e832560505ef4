// {{ header }}
//
// REDUCE-THEN-SCAN (s = {{ s }}, {{ in_type }} -> {{ acc_type }}): the multi-core scan
// with an L2-resident hand-off. Each AI core owns a block of whole l-tiles.
// Phase I: each AIV sums its half of the block from x and publishes the sum;
// SyncAll. Meanwhile and after, the AIC scans the block's tiles (C = A @ U)
// into a small per-core ring of {{ ring_slots }} slots in GM (it stays in L2) and
// signals its AIVs with CrossCore flags; each AIV reads the row ends of a
// tile, takes its half of the rows, adds the carries and writes y once. HBM
// traffic per f16 element: 2 (reduce) + 2 (scan) + 4 (y) bytes; the ring
// traffic stays in L2. Exclusive: ExclusiveStore (no extra traffic). Inputs
// larger than half the L2 go in waves that fit it (each wave: reduce,
// SyncAll, scan, the carry of earlier waves added), so that the scan's second
// read of x hits L2: about 6 bytes per f16 element at any n.
#include "kernel_operator.h"
#include "ascend_scan_blocks.h"
#include "ascend_scan_tiling.h"

using namespace AscendC;
using namespace ascend_scan;

namespace {
using TIn = {{ in_type }};
using TAcc = {{ acc_type }};
constexpr uint32_t kS = {{ s }};
constexpr uint32_t kTile = kS * kS;
constexpr uint32_t kChunk = {{ chunk }};  // vector chunk (elements), a multiple of s

__aicore__ inline uint64_t Min(uint64_t a, uint64_t b) { return a < b ? a : b; }

__aicore__ inline void BlockTiles(const RtScanTiling& t, uint32_t wave, uint32_t block, uint64_t& first,
                                  uint64_t& last) {
    WaveBlockTiles(t.tiles, t.tiles_per_wave, t.tiles_per_block, wave, block, first, last);
}

__aicore__ inline void CubeSide(GM_ADDR x, GM_ADDR workspace, const RtScanTiling& t) {
    TPipe pipe;
    CubeTileScan<TIn, kS> cube;
    cube.Init(pipe, workspace, t.zeros_offset);
    GlobalTensor<TIn> gx;
    GlobalTensor<TAcc> gRing;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
    uint64_t ringElems = static_cast<uint64_t>(t.ring_slots) * kTile;
    gRing.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + t.ring_offset) + GetBlockIdx() * ringElems,
                          ringElems);
    uint64_t step = 0;  // ring slots filled by this core, over all waves
    for (uint32_t wave = 0; wave < t.waves; ++wave) {
        uint64_t firstTile, lastTile;
        BlockTiles(t, wave, static_cast<uint32_t>(GetBlockIdx()), firstTile, lastTile);
        bool synced = false;
        for (uint64_t tile = firstTile; tile < lastTile; ++tile, ++step) {
            uint64_t base = tile * kTile;
            uint32_t count = static_cast<uint32_t>(Min(t.n - base, kTile));
            uint32_t m1;
            LocalTensor<TAcc> c1 = cube.Compute(gx[base], count, m1);
            if (step >= t.ring_slots) {
                // Slots of this wave are consumed only after the wave's
                // barrier: join it before waiting for one (earlier waves'
                // slots free up without it).
                if (!synced && tile - firstTile >= t.ring_slots) {
                    SyncAll<false>();
                    synced = true;
                }
                CrossCoreWaitFlag(kFlagSlotFree);
            }
            StoreTile(gRing[(step % t.ring_slots) * kTile], c1, kS, CeilDiv(count, kS), m1);
            cube.Release(c1);
            CrossCoreSetFlag<2, PIPE_FIX>(kFlagTileReady);
        }
        if (!synced) SyncAll<false>();
    }
    uint64_t pending = step < t.ring_slots ? step : t.ring_slots;
    for (uint64_t i = 0; i < pending; ++i) CrossCoreWaitFlag(kFlagSlotFree);
}

__aicore__ inline void VectorSide(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR workspace, const RtScanTiling& t) {
    TPipe pipe;
    RingTileFinisher<TIn, kS, kChunk> fin;
    fin.Init(pipe);
    GlobalTensor<TIn> gx;
    GlobalTensor<TAcc> gy, gTotal, gSums, gRing;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
    gTotal.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), 1);
    uint32_t v = static_cast<uint32_t>(GetBlockIdx());
    uint32_t sub = static_cast<uint32_t>(GetSubBlockIdx());
    uint32_t block = v / 2;
    uint32_t vectors = static_cast<uint32_t>(GetBlockNum() * GetTaskRatio());
    uint64_t ringElems = static_cast<uint64_t>(t.ring_slots) * kTile;
    gRing.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + t.ring_offset) + block * ringElems, ringElems);

    TAcc before = 0;    // the sum of all earlier waves
    uint64_t step = 0;  // ring slots consumed, over all waves
    for (uint32_t wave = 0; wave < t.waves; ++wave) {
        uint64_t firstTile, lastTile;
        BlockTiles(t, wave, block, firstTile, lastTile);
        // Phase I: this core's half (in elements) of the block. The partial
        // sums alternate between two slot sets by wave: a core may publish
        // the next wave's sums while a slower one still reads this wave's.
        gSums.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + t.sums_offset) +
                                  (wave % 2) * vectors * kSumSlot<TAcc>,
                              static_cast<uint64_t>(vectors) * kSumSlot<TAcc>);
        uint64_t blockBegin = Min(firstTile * kTile, t.n);
        uint64_t blockEnd = Min(lastTile * kTile, t.n);
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
            uint32_t count = static_cast<uint32_t>(Min(t.n - base, kTile));
            GlobalTensor<TAcc> slot = gRing[(step % t.ring_slots) * kTile];
            carry = static_cast<TAcc>(carry + fin.Finish(slot, gy[base], count, sub, carry, t.exclusive != 0));
        }
    }
}
}  // namespace

extern "C" __global__ __aicore__ void {{ name }}(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR workspace,
                                                  RtScanTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        CubeSide(x, workspace, tiling);
    } else {
        VectorSide(x, y, total, workspace, tiling);
    }
}
