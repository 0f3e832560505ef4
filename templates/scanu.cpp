// {{ header }}
//
// SCANU and BATCHED SCANU (s = {{ s }}, {{ in_type }} -> {{ acc_type }}): `rows` arrays of
// `n` elements each (one array = the plain SCANU). Rows go to the AI cores in
// pairs; per pair the AIC computes C = A @ U for tile k of both rows (s
// independent row scans each; U upper-triangular ones) into one slot of a GM
// ring of {{ ring_slots }} slots; AIV 0 finishes the pair's first row, AIV 1 its
// second: each adds the running carry to every s-row (RowCarries: row ends
// scanned and broadcast on the vector unit) and writes the scan
// (exclusive: one element to the right after a leading 0). Each row's total
// goes to its own 32-byte slot of `total`.
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
constexpr uint32_t kSlot = 2 * kTile;              // a ring slot: tile k of both rows of a pair
constexpr uint32_t kChunkRows = {{ chunk_rows }};  // rows per vector chunk

__aicore__ inline uint32_t TileCount(const ScanUTiling& t, uint32_t k) {
    uint64_t base = static_cast<uint64_t>(k) * kTile;
    return static_cast<uint32_t>(t.n - base < kTile ? t.n - base : kTile);
}

__aicore__ inline void CubeSide(GM_ADDR x, GM_ADDR workspace, const ScanUTiling& t) {
    TPipe pipe;
    CubeTileScan<TIn, kS> cube;
    cube.Init(pipe, workspace, t.zeros_offset);
    GlobalTensor<TIn> gx;
    GlobalTensor<TAcc> gRing;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n * t.rows);
    uint64_t ringElems = static_cast<uint64_t>(t.ring_slots) * kSlot;
    gRing.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + t.ring_offset) + GetBlockIdx() * ringElems,
                          ringElems);
    uint32_t step = 0;  // ring slots filled by this core
    for (uint32_t pair = GetBlockIdx(); 2 * pair < t.rows; pair += GetBlockNum()) {
        for (uint32_t k = 0; k < t.tiles; ++k, ++step) {
            uint32_t count = TileCount(t, k);
            if (step >= t.ring_slots) CrossCoreWaitFlag(kFlagSlotFree);
            GlobalTensor<TAcc> slot = gRing[static_cast<uint64_t>(step % t.ring_slots) * kSlot];
            for (uint32_t h = 0; h < 2 && 2 * pair + h < t.rows; ++h) {
                uint64_t base = static_cast<uint64_t>(2 * pair + h) * t.n + static_cast<uint64_t>(k) * kTile;
                uint32_t m1;
                LocalTensor<TAcc> c1 = cube.Compute(gx[base], count, m1);
                StoreTile(slot[h * kTile], c1, kS, CeilDiv(count, kS), m1);
                cube.Release(c1);
            }
            CrossCoreSetFlag<2, PIPE_FIX>(kFlagTileReady);
        }
    }
    // Drain the slot-free flags still pending so none outlive the kernel.
    uint32_t pending = step < t.ring_slots ? step : t.ring_slots;
    for (uint32_t i = 0; i < pending; ++i) CrossCoreWaitFlag(kFlagSlotFree);
}

__aicore__ inline void VectorSide(GM_ADDR y, GM_ADDR total, GM_ADDR workspace, const ScanUTiling& t) {
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qIn;
    TQue<TPosition::VECOUT, 1> qOut;
    TBuf<TPosition::VECCALC> scratch;
    pipe.InitBuffer(qIn, 2, kChunkRows * kS * sizeof(TAcc));
    pipe.InitBuffer(qOut, 2, kChunkRows * kS * sizeof(TAcc));
    pipe.InitBuffer(scratch, 32);
    RowCarries<TAcc, kS, kS> carries;
    carries.Init(pipe);

    uint32_t sub = GetSubBlockIdx();
    uint32_t core = GetBlockIdx() / 2;  // the AI core (AIC index) of this AIV
    uint32_t cores = GetBlockNum();
    GlobalTensor<TAcc> gy, gTotal, gRing;
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n * t.rows);
    gTotal.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), static_cast<uint64_t>(t.rows) * kSumSlot<TAcc>);
    uint64_t ringElems = static_cast<uint64_t>(t.ring_slots) * kSlot;
    gRing.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + t.ring_offset) + core * ringElems, ringElems);
    LocalTensor<TAcc> one = scratch.Get<TAcc>();
    uint64_t shift = t.exclusive ? 1 : 0;

    uint32_t step = 0;
    for (uint32_t pair = core; 2 * pair < t.rows; pair += cores) {
        uint32_t row = 2 * pair + sub;
        bool mine = row < t.rows;  // an odd last row leaves AIV 1 idle (it still keeps the flags in step)
        GlobalTensor<TAcc> yRow = gy[static_cast<uint64_t>(row < t.rows ? row : 0) * t.n];
        if (mine && t.exclusive) StoreScalar(yRow, one, static_cast<TAcc>(0));
        TAcc carry = 0;
        for (uint32_t k = 0; k < t.tiles; ++k, ++step) {
            uint32_t count = TileCount(t, k);
            uint32_t rows = CeilDiv(count, kS);
            uint64_t base = static_cast<uint64_t>(k) * kTile;
            CrossCoreWaitFlag(kFlagTileReady);
            GlobalTensor<TAcc> slot = gRing[static_cast<uint64_t>(step % t.ring_slots) * kSlot + sub * kTile];
            TAcc tileSum = 0;
            if (mine) {
                carries.Prepare(slot, rows, 0, rows, carry);
                tileSum = carries.Total();
            }
            for (uint32_t r0 = 0; r0 < rows && mine; r0 += kChunkRows) {
                uint32_t chunkRows = rows - r0 < kChunkRows ? rows - r0 : kChunkRows;
                LocalTensor<TAcc> in = qIn.AllocTensor<TAcc>();
                DataCopy(in, slot[static_cast<uint64_t>(r0) * kS], chunkRows * kS);
                qIn.EnQue(in);
                in = qIn.DeQue<TAcc>();
                LocalTensor<TAcc> out = qOut.AllocTensor<TAcc>();
                carries.AddTo(out, in, r0, chunkRows);
                qOut.EnQue(out);
                qIn.FreeTensor(in);

                out = qOut.DeQue<TAcc>();
                uint64_t first = base + static_cast<uint64_t>(r0) * kS;  // first index of the chunk in the row
                uint64_t end = first + static_cast<uint64_t>(chunkRows) * kS;
                uint64_t limit = t.n - shift;  // results past this are not stored
                if (end > limit) end = limit;
                if (end > first) StoreAny(yRow[first + shift], out, static_cast<uint32_t>(end - first));
                qOut.FreeTensor(out);
            }
            carry = static_cast<TAcc>(carry + tileSum);
            // This AIV is done with its half of the slot once its loads completed.
            CrossCoreSetFlag<2, PIPE_MTE2>(kFlagSlotFree);
        }
        if (mine) StoreScalar(gTotal[static_cast<uint64_t>(row) * kSumSlot<TAcc>], one, carry);
    }
}
}  // namespace

extern "C" __global__ __aicore__ void {{ name }}(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR workspace,
                                                  ScanUTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        CubeSide(x, workspace, tiling);
    } else {
        VectorSide(y, total, workspace, tiling);
    }
}
