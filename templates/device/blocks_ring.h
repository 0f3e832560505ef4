// The AIC -> AIV ring of the cube scans: the cube (producer) fills the GM
// slots of a small per-core ring in order and raises kFlagTileReady per
// tile; the vector cores (consumers) take the tiles in the same order and
// raise kFlagSlotFree once done with a slot. A ring of a few slots lets the
// cube run ahead of the vector cores while no flag ever holds more than the
// 15 pending sets the hardware counts.
#pragma once

#include "blocks_cube.h"
#include "blocks_reduce.h"
#include "blocks_scan.h"

namespace ascend_scan {

// Cross-core flag ids (0..10 are free for kernels; 11..14 belong to SyncAll).
constexpr uint16_t kFlagTileReady = 1;  // AIC -> AIV: a ring slot holds a tile
constexpr uint16_t kFlagSlotFree = 2;   // AIV -> AIC: a ring slot may be reused

// The ring of AI core `core` in the workspace: `slots` slots of `slotElems`
// accumulators each, the rings one after the other from byte `offset`.
template <typename TAcc>
__aicore__ inline GlobalTensor<TAcc> RingOf(GM_ADDR workspace, uint32_t offset, uint64_t core, uint32_t slots,
                                            uint32_t slotElems) {
    uint64_t ringElems = static_cast<uint64_t>(slots) * slotElems;
    GlobalTensor<TAcc> ring;
    ring.SetGlobalBuffer(reinterpret_cast<__gm__ TAcc*>(workspace + offset) + core * ringElems, ringElems);
    return ring;
}

// The cube side of the ring: Acquire() the slot of the next tile (the first
// `slots` tiles find theirs free, every later one waits for the vector cores
// to free the slot it reuses), store the tile there, Publish(). Drain() at
// the end takes the frees still pending, so that no flag outlives the kernel.
class RingProducer {
public:
    __aicore__ inline explicit RingProducer(uint32_t slots) : slots_(slots) {}

    __aicore__ inline uint64_t Acquire() {
        if (filled_ >= slots_) CrossCoreWaitFlag(kFlagSlotFree);
        return filled_++ % slots_;
    }

    // Kernels in waves (a SyncAll in each): the vector cores free the slots
    // of a wave only after the wave's barrier, so the cube joins it before it
    // waits for a slot filled in the same wave (its tile `tileOfWave` of the
    // wave reuses one once tileOfWave >= slots); earlier waves' slots free up
    // without it. EndWave() joins the barrier if no wait needed it.
    __aicore__ inline void StartWave() { joined_ = false; }
    __aicore__ inline uint64_t AcquireInWave(uint64_t tileOfWave) {
        if (filled_ >= slots_ && !joined_ && tileOfWave >= slots_) {
            SyncAll<false>();
            joined_ = true;
        }
        return Acquire();
    }
    __aicore__ inline void EndWave() {
        if (!joined_) SyncAll<false>();
    }

    // Tells the vector cores that the slot holds its tile (once the Fixpipe
    // has stored it).
    __aicore__ inline void Publish(uint16_t flag = kFlagTileReady) { CrossCoreSetFlag<2, PIPE_FIX>(flag); }

    __aicore__ inline void Drain() {
        uint64_t pending = filled_ < slots_ ? filled_ : slots_;
        for (uint64_t i = 0; i < pending; ++i) CrossCoreWaitFlag(kFlagSlotFree);
    }

private:
    uint64_t slots_;
    uint64_t filled_ = 0;  // tiles stored, over all waves
    bool joined_ = false;
};

// The vector side of the ring: wait for the next tile before reading its
// slot; release the slot once the loads from it completed.
__aicore__ inline void RingWaitTile(uint16_t flag = kFlagTileReady) { CrossCoreWaitFlag(flag); }
__aicore__ inline void RingRelease() { CrossCoreSetFlag<2, PIPE_MTE2>(kFlagSlotFree); }

// The vector side of the ring hand-off: waits for the next tile of row scans
// in the ring, takes half of its s-rows (sub-block 0 the first half, 1 the
// second), adds the carries (the value before the tile, plus the row ends of
// the earlier rows of the tile, read from the ring: RowCarries), writes y and
// releases the slot. Returns the tile's sum. Exclusive: ExclusiveStore. A
// tile whose sum is non-finite has its non-finite s-rows rescanned from x.
template <typename TIn, uint32_t kS, uint32_t kChunk>
class RingTileFinisher {
public:
    using TAcc = typename CubeTraits<TIn>::Acc;

    __aicore__ inline void Init(TPipe& pipe) {
        pipe.InitBuffer(qIn_, 2, kChunk * sizeof(TAcc));
        pipe.InitBuffer(qX_, 2, kChunk * sizeof(TIn));
        pipe.InitBuffer(qOut_, 2, kChunk * sizeof(TAcc));
        pipe.InitBuffer(acc_, kChunk * sizeof(TAcc));
        pipe.InitBuffer(xa_, kChunk * sizeof(TAcc));
        pipe.InitBuffer(half_, kChunk * sizeof(half));
        pipe.InitBuffer(one_, 32);
        carries_.Init(pipe);
        rescan_.Init(pipe);
    }

    // `slot`: the tile's row scans; x, y: the tile's first input and output
    // element; count: valid elements of the tile.
    __aicore__ inline TAcc Finish(const GlobalTensor<TAcc>& slot, const GlobalTensor<TIn>& x,
                                  const GlobalTensor<TAcc>& y, uint32_t count, uint32_t sub, TAcc carry,
                                  bool exclusive) {
        uint32_t rows = CeilDiv(count, kS);
        uint32_t myFirst = sub ? rows / 2 : 0;
        uint32_t myLast = sub ? rows : rows / 2;
        RingWaitTile();
        carries_.Prepare(slot, rows, myFirst, myLast, carry);
        TAcc tileSum = carries_.Total();
        uint32_t end = myLast * kS < count ? myLast * kS : count;
        for (uint32_t r0 = myFirst; r0 < myLast; r0 += kChunk / kS) {
            uint32_t chunkRows = myLast - r0 < kChunk / kS ? myLast - r0 : kChunk / kS;
            uint32_t first = r0 * kS;
            uint32_t valid = end - first < chunkRows * kS ? end - first : chunkRows * kS;
            LocalTensor<TAcc> in = qIn_.template AllocTensor<TAcc>();
            DataCopy(in, slot[first], chunkRows * kS);
            qIn_.EnQue(in);
            in = qIn_.template DeQue<TAcc>();
            if (NonFinite(tileSum)) rescan_.Rows(in, x[first], kS, chunkRows, valid);
            LocalTensor<TAcc> out = qOut_.template AllocTensor<TAcc>();
            carries_.AddTo(out, in, r0 - myFirst, chunkRows);
            qIn_.FreeTensor(in);
            qOut_.EnQue(out);
            out = qOut_.template DeQue<TAcc>();
            if (exclusive) {
                ExclusiveStore(y, out, first, valid, carries_.Carry(r0 - myFirst), one());
            } else {
                StoreAny(y[first], out, valid);
            }
            qOut_.FreeTensor(out);
        }
        // Both AIVs are done with this slot once their loads completed.
        RingRelease();
        return tileSum;
    }

    // Scratch for other phases of the kernel (SumRange, SumSlots, StoreScalar).
    __aicore__ inline TQue<TPosition::VECIN, 1>& inputs() { return qX_; }
    __aicore__ inline LocalTensor<TAcc> acc() { return acc_.template Get<TAcc>(); }
    __aicore__ inline LocalTensor<TAcc> xa() { return xa_.template Get<TAcc>(); }
    __aicore__ inline LocalTensor<half> halves() { return half_.template Get<half>(); }
    __aicore__ inline LocalTensor<TAcc> one() { return one_.template Get<TAcc>(); }

private:
    TQue<TPosition::VECIN, 1> qIn_, qX_;
    TQue<TPosition::VECOUT, 1> qOut_;
    TBuf<TPosition::VECCALC> acc_, xa_, half_, one_;
    RowCarries<TAcc, kS, kS> carries_;
    SequentialRescan<TIn, TAcc, kS> rescan_;
};

}  // namespace ascend_scan
