// Reduce (docs/algorithms.md, Reduce) on every vector core: each core
// reduces its range of x into the accumulator type and publishes the partial
// in a 32-byte GM slot; after the hardware SyncAll the last core combines the
// partials. One read of x: 2 bytes per f16 element of HBM traffic.
// - Sum: cast to the accumulator type, vector adds, a final scalar pass.
// - Max, min: padded with the identity, cast, combined into an accumulator
//   by the vector op, lanes folded. Exact. Float inputs are checked for NaN
//   (NanCheckOf<TIn>: each core publishes its folded lanes to its 32-byte
//   slot of `nan`, which the host reads).
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_reduce.h"

namespace ascend_scan {

// kChunk: elements per vector chunk. Max and min take `nan` (the NaN
// slots, float inputs only); the sum has none.
template <typename Op, typename TIn, typename TAcc, uint32_t kChunk>
__aicore__ inline void Reduce(GM_ADDR x, GM_ADDR total, GM_ADDR nan, GM_ADDR workspace, const ReduceTiling& tiling) {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> qX;  // depth 2: OpRange loads the next chunk while it combines one
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
    if constexpr (std::is_same<Op, OpSum>::value) {
        TAcc mine = SumRange(gx, begin, end, kChunk, qX, bufAcc.Get<TAcc>(), bufXa.Get<TAcc>(), bufHalf.Get<half>());
        StoreScalar(gSums[core * kSumSlot<TAcc>], bufOne.Get<TAcc>(), mine);
        SyncAll();
        if (core + 1 == cores) {
            StoreScalar(gTotal, bufOne.Get<TAcc>(), SumSlots(gSums, bufAcc.Get<TAcc>(), cores, cores));
        }
    } else {
        // Float inputs: NanCheckOf<TIn> (HalfNanCheck stands in, unused, for integers).
        constexpr bool kNan = !std::is_same<typename NanCheckOf<TIn>::type, void>::value;
        using Nan = typename std::conditional<kNan, typename NanCheckOf<TIn>::type, HalfNanCheck>::type;
        TBuf<TPosition::VECCALC> bufNan, bufNanMask;
        Nan check;
        if constexpr (kNan) {
            pipe.InitBuffer(bufNan, kChunk * sizeof(int16_t));
            pipe.InitBuffer(bufNanMask, kChunk * sizeof(int16_t));
            check.Init(bufNan.Get<int16_t>(), bufNanMask.Get<int16_t>(), kChunk);
        }
        TAcc mine = OpRange<Op>(gx, begin, end, kChunk, qX, bufAcc.Get<TAcc>(), bufXa.Get<TAcc>(),
                                bufHalf.Get<half>(), kNan ? &check : nullptr);
        if constexpr (kNan) {
            GlobalTensor<int16_t> gNan;
            gNan.SetGlobalBuffer(reinterpret_cast<__gm__ int16_t*>(nan), static_cast<uint64_t>(cores) * 16);
            check.Publish(gNan[core * 16]);
        }
        StoreScalar(gSums[core * kSumSlot<TAcc>], bufOne.Get<TAcc>(), mine);
        SyncAll();
        if (core + 1 == cores) {
            LocalTensor<TAcc> slots = bufAcc.Get<TAcc>();
            DataCopy(slots, gSums, cores * kSumSlot<TAcc>);
            PipeSync<HardEvent::MTE2_S>();
            TAcc all = slots.GetValue(0);
            for (uint32_t i = 1; i < cores; ++i) all = Op::Scalar(all, slots.GetValue(i * kSumSlot<TAcc>));
            StoreScalar(gTotal, bufOne.Get<TAcc>(), all);
        }
    }
}

// The sum's entry: no NaN slots.
template <typename Op, typename TIn, typename TAcc, uint32_t kChunk>
__aicore__ inline void Reduce(GM_ADDR x, GM_ADDR total, GM_ADDR workspace, const ReduceTiling& tiling) {
    Reduce<Op, TIn, TAcc, kChunk>(x, total, nullptr, workspace, tiling);
}

}  // namespace ascend_scan
