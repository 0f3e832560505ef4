// {{ header }}
//
// REDUCE (sum, {{ in_type }} -> {{ acc_type }}) on every vector core: each core sums
// its range of x (cast to the accumulator type, vector adds, a final scalar
// pass), publishes the partial in a 32-byte GM slot, and after the hardware
// SyncAll the last core adds the partials. One read of x: 2 bytes per f16
// element of HBM traffic.
#include "kernel_operator.h"
#include "ascend_scan_blocks.h"
#include "ascend_scan_tiling.h"

using namespace AscendC;
using namespace ascend_scan;

extern "C" __global__ __aicore__ void {{ name }}(GM_ADDR x, GM_ADDR total, GM_ADDR workspace, ReduceTiling tiling) {
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIV_1_0);
    using TIn = {{ in_type }};
    using TAcc = {{ acc_type }};
    constexpr uint32_t kChunk = {{ chunk }};
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qX;
    TBuf<TPosition::VECCALC> bufAcc, bufXa, bufHalf, bufOne;
    pipe.InitBuffer(qX, 2, kChunk * sizeof(TIn));
    pipe.InitBuffer(bufAcc, kChunk * sizeof(TAcc));
    pipe.InitBuffer(bufXa, kChunk * sizeof(TAcc));
    pipe.InitBuffer(bufHalf, kChunk * sizeof(half));
    pipe.InitBuffer(bufOne, 32);
    GlobalTensor<TIn> gx;
    GlobalTensor<TAcc> gTotal, gSums;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x), tiling.n);
    gTotal.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(total), 1);
    gSums.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace), 0);

    uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    uint32_t cores = static_cast<uint32_t>(GetBlockNum());
    uint64_t begin = static_cast<uint64_t>(core) * tiling.per_core;
    uint64_t end = begin + tiling.per_core < tiling.n ? begin + tiling.per_core : tiling.n;
    if (begin > end) begin = end;
    TAcc mine = SumRange(gx, begin, end, kChunk, qX, bufAcc.Get<TAcc>(), bufXa.Get<TAcc>(), bufHalf.Get<half>());
    StoreScalar(gSums[core * kSumSlot<TAcc>], bufOne.Get<TAcc>(), mine);
    SyncAll();
    if (core + 1 == cores) StoreScalar(gTotal, bufOne.Get<TAcc>(), SumSlots(gSums, bufAcc.Get<TAcc>(), cores, cores));
}
