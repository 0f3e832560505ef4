// {{ header }}
//
// SCANU (s = {{ s }}, {{ in_type }} -> {{ acc_type }}): single-core scan with the
// cube unit. The AIC computes C = A @ U for each l-tile A (s x s, row-major;
// U upper-triangular ones) = s independent row scans, and hands C to the AIV
// through a GM ring of {{ ring_slots }} slots; the AIV adds the running carry
// to each row and writes the scan. Inclusive or exclusive (tiling.exclusive:
// the inclusive result is stored one element to the right after a leading 0);
// the total goes to `total`.
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
constexpr uint32_t kChunkRows = {{ chunk_rows }};  // rows per vector chunk

__aicore__ inline void CubeSide(GM_ADDR x, GM_ADDR workspace, const ScanUTiling& t) {
    TPipe pipe;
    CubeTileScan<TIn, kS> cube;
    cube.Init(pipe, workspace, t.zeros_offset);
    GlobalTensor<TIn> gx;
    GlobalTensor<TAcc> gRing;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), t.n);
    gRing.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + t.ring_offset),
                          static_cast<uint64_t>(t.ring_slots) * kTile);
    for (uint32_t tile = 0; tile < t.tiles; ++tile) {
        uint64_t base = static_cast<uint64_t>(tile) * kTile;
        uint32_t count = static_cast<uint32_t>(t.n - base < kTile ? t.n - base : kTile);
        uint32_t m1;
        LocalTensor<TAcc> c1 = cube.Compute(gx[base], count, m1);
        if (tile >= t.ring_slots) CrossCoreWaitFlag(kFlagSlotFree);
        StoreTile(gRing[static_cast<uint64_t>(tile % t.ring_slots) * kTile], c1, kS, CeilDiv(count, kS), m1);
        cube.Release(c1);
        CrossCoreSetFlag<2, PIPE_FIX>(kFlagTileReady);
    }
    // Drain the slot-free flags still pending so none outlive the kernel.
    uint32_t pending = t.tiles < t.ring_slots ? t.tiles : t.ring_slots;
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

    GlobalTensor<TAcc> gy, gTotal, gRing;
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(y), t.n);
    gTotal.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), 1);
    gRing.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + t.ring_offset),
                          static_cast<uint64_t>(t.ring_slots) * kTile);
    LocalTensor<TAcc> one = scratch.Get<TAcc>();
    uint64_t shift = t.exclusive ? 1 : 0;
    if (t.exclusive) StoreScalar(gy, one, static_cast<TAcc>(0));

    TAcc carry = 0;
    for (uint32_t tile = 0; tile < t.tiles; ++tile) {
        uint64_t base = static_cast<uint64_t>(tile) * kTile;
        uint32_t count = static_cast<uint32_t>(t.n - base < kTile ? t.n - base : kTile);
        uint32_t rows = CeilDiv(count, kS);
        CrossCoreWaitFlag(kFlagTileReady);
        GlobalTensor<TAcc> slot = gRing[static_cast<uint64_t>(tile % t.ring_slots) * kTile];
        for (uint32_t r0 = 0; r0 < rows; r0 += kChunkRows) {
            uint32_t chunkRows = rows - r0 < kChunkRows ? rows - r0 : kChunkRows;
            LocalTensor<TAcc> in = qIn.AllocTensor<TAcc>();
            DataCopy(in, slot[static_cast<uint64_t>(r0) * kS], chunkRows * kS);
            qIn.EnQue(in);
            if (r0 + chunkRows == rows) CrossCoreSetFlag<2, PIPE_MTE2>(kFlagSlotFree);
            in = qIn.DeQue<TAcc>();
            SetFlag<HardEvent::MTE2_S>(0);
            WaitFlag<HardEvent::MTE2_S>(0);
            LocalTensor<TAcc> out = qOut.AllocTensor<TAcc>();
            carry = PropagateRows(out, in, kS, chunkRows, carry);
            qOut.EnQue(out);
            qIn.FreeTensor(in);

            out = qOut.DeQue<TAcc>();
            uint64_t first = base + static_cast<uint64_t>(r0) * kS;  // first input index of the chunk
            uint64_t end = first + static_cast<uint64_t>(chunkRows) * kS;
            uint64_t limit = t.n - shift;  // results past this are not stored
            if (end > limit) end = limit;
            if (end > first) StoreAny(gy[first + shift], out, static_cast<uint32_t>(end - first));
            qOut.FreeTensor(out);
        }
    }
    StoreScalar(gTotal, one, carry);
}
}  // namespace

extern "C" __global__ __aicore__ void {{ name }}(GM_ADDR x, GM_ADDR y, GM_ADDR total, GM_ADDR workspace,
                                                  ScanUTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
    if ASCEND_IS_AIC {
        CubeSide(x, workspace, tiling);
    } else {
        VectorSide(y, total, workspace, tiling);
    }
}
