// Split and Compress (docs/algorithms.md, Split/Compress), on the bit
// patterns of 16- or 32-bit values. Split (SPLITIND): stable partition, the
// elements whose flag is 1 first, then those whose flag is 0, each group in
// input order, with the original index of every output element. Compress:
// masked select, the elements whose flag is 1 in input order, optionally
// with their original indices.
// Flags are int8; any non-zero flag counts as 1 here (so every write stays
// inside the outputs), and each core reports its flag range (FoldFlagMax) so
// that the host can refuse flags other than 0/1.
//
// The exclusive scan of the flags is fused in, reduce-then-scan over the
// vector cores (every core owns a range of whole tiles):
// 1. each core counts the non-zero flags of its range (int8 -> half, Mins
//    with 1, added lane-wise and folded by FoldLaneCounts), loading flags
//    kFlagsAhead tiles ahead, and writes the count and flag range into its
//    32-byte GM slot; SyncAll;
// 2. each core sums the counts of the earlier cores (the scan at its first
//    element) and of all cores, then per tile builds the bit mask again,
//    compacts the flag-1 values (and indices) with counter-mode GatherMask
//    and writes them with DataCopyPad at the running scan; Split's flag-0
//    values (mask CompareScalar EQ 0) go to ones + i - scan(f)[i].
//    DataCopyPad writes exactly the compacted bytes, so neighbouring cores
//    may share 32-byte blocks of the outputs without a race.
// The next tile loads while the current one is compacted. Compress runs
// 1.-2. in equal waves whose traffic fits 90% of the L2, so phase 2 re-reads the
// wave's flags from L2 (each wave and core has its own slot; the ones of
// earlier waves carry over). Split runs one wave: its flag-0 elements need
// the total; past the L2 it caches the flag bits (1/8 byte per element) in
// the workspace in phase 1 and reads them back in phase 2 instead of the
// flags. Phase 1 walks its tiles backwards so that the L2 (LRU) evicts
// the flags phase 2 needs last first.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_reduce.h"

namespace ascend_scan {

// What a split kernel writes: the flag-1 elements only, or them and then the
// flag-0 ones (crates/algos/src/split.rs, SplitKind).
enum class SplitKind { kCompress, kSplit };

namespace split {

constexpr uint32_t kMaxCores = 64;
constexpr uint32_t kSlotInts = 8;  // one 32-byte slot per core: ones, min flag, max flag
// Byte offsets in the small buffer: this core's slot, then every core's slot.
constexpr uint32_t kOwnAt = 0;
constexpr uint32_t kSlotsAt = 32;
constexpr uint32_t kSmallBytes = kSlotsAt + kMaxCores * 32;

// TVal: the values as bit patterns (GatherMask takes a uint16_t pattern for
// 16-bit data and uint32_t for 32-bit: the pattern type is TVal itself);
// kTile: elements per tile (a multiple of 128).
template <typename TVal, bool kSplit, uint32_t kTile>
class Splitter {
public:
    __aicore__ inline void Run(GM_ADDR x, GM_ADDR flags, GM_ADDR y, GM_ADDR indices, GM_ADDR workspace,
                               const SplitTiling& t) {
        t_ = t;
        core_ = static_cast<uint32_t>(GetBlockIdx());
        cores_ = static_cast<uint32_t>(GetBlockNum());
        gx_.SetGlobalBuffer(reinterpret_cast<__gm__ TVal*>(x), t.n);
        gf_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(flags), t.n);
        gy_.SetGlobalBuffer(reinterpret_cast<__gm__ TVal*>(y), t.n);
        gi_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), t.want_indices ? t.n : 0);
        gSlots_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(workspace),
                                (t.n + t.wave_len - 1) / t.wave_len * cores_ * kSlotInts);
        gBits_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(workspace + t.bits_offset),
                               t.bit_cache ? (t.n + kTile - 1) / kTile * (kTile / 8) : 0);
        Init();

        // Waves (COMPRESS: the wave's flags stay in L2 for phase 2; SPLIT:
        // one wave). Each wave has its own slots, so no slot is rewritten.
        uint64_t carried = 0;  // ones of the earlier waves
        const uint64_t waves = (t.n + t.wave_len - 1) / t.wave_len;
        LocalTensor<int32_t> slots = Small<int32_t>(kSlotsAt, kMaxCores * kSlotInts);
        for (uint64_t w = 0; w < waves; ++w) {
            uint64_t waveBegin = w * t.wave_len;
            uint64_t waveEnd = waveBegin + t.wave_len < t.n ? waveBegin + t.wave_len : t.n;
            begin_ = waveBegin + static_cast<uint64_t>(core_) * t.per_core;
            end_ = begin_ + t.per_core < waveEnd ? begin_ + t.per_core : waveEnd;
            if (begin_ > end_) begin_ = end_;
            Count(gSlots_[(w * cores_ + core_) * kSlotInts]);
            SyncAll();
            PipeSync<HardEvent::S_MTE2>();
            DataCopy(slots, gSlots_[w * cores_ * kSlotInts], cores_ * kSlotInts);
            PipeSync<HardEvent::MTE2_S>();
            uint64_t onesBefore = carried, ones = carried;
            for (uint32_t c = 0; c < cores_; ++c) {
                uint64_t count = static_cast<uint64_t>(slots.GetValue(c * kSlotInts));
                if (c < core_) onesBefore += count;
                ones += count;
            }
            // Flag-0 elements (SPLIT, one wave): after all ones, at i - scan(f)[i].
            Scatter(onesBefore, ones + begin_ - onesBefore);
            carried = ones;
        }
    }

private:
    template <typename T>
    __aicore__ inline LocalTensor<T> Small(uint32_t byteOffset, uint32_t count) {
        return bufSmall_.GetWithOffset<T>(count, byteOffset);
    }

    __aicore__ inline void Init() {
        pipe_.InitBuffer(qFlags_, kFlagsAhead + 1, kTile);
        pipe_.InitBuffer(qVals_, 2, kTile * sizeof(TVal));
        pipe_.InitBuffer(qOnes_, 1, kTile * sizeof(TVal));
        pipe_.InitBuffer(qIdxOnes_, 1, kTile * sizeof(int32_t));
        if constexpr (kSplit) {
            pipe_.InitBuffer(qZeros_, 1, kTile * sizeof(TVal));
            pipe_.InitBuffer(qIdxZeros_, 1, kTile * sizeof(int32_t));
        }
        pipe_.InitBuffer(bufHalf_, kTile * sizeof(half));
        pipe_.InitBuffer(bufBits_, 2 * kTile / 8);
        if constexpr (kSplit) pipe_.InitBuffer(qBits_, 2, kTile / 8);
        pipe_.InitBuffer(bufIdx_, kTile * sizeof(int32_t));
        pipe_.InitBuffer(bufRange_, kTile * sizeof(half));
        pipe_.InitBuffer(bufOnes_, kTile * sizeof(half));
        pipe_.InitBuffer(bufSmall_, kSmallBytes);
        Duplicate(bufRange_.Get<half>(), static_cast<half>(0.0f), static_cast<int32_t>(kTile));
        Duplicate(bufOnes_.Get<half>(), static_cast<half>(0.0f), static_cast<int32_t>(kTile));
        PipeBarrier<PIPE_V>();
    }

    __aicore__ inline uint32_t TileCount(uint64_t off) {
        return static_cast<uint32_t>(end_ - off < kTile ? end_ - off : kTile);
    }
    // Elements the mask is built over: CompareScalar on half takes whole 128s.
    __aicore__ inline uint32_t Padded(uint32_t count) { return (count + 127) / 128 * 128; }

    // Flags of the tile at `off` into a new VECIN tensor; a partial tile is
    // zero up to the next multiple of 128.
    __aicore__ inline void LoadFlags(uint64_t off) {
        EnqueueFlags(qFlags_, gf_[off], TileCount(off), kTile);
    }

    __aicore__ inline void LoadValues(uint64_t off) {
        LocalTensor<TVal> v = qVals_.AllocTensor<TVal>();
        LoadAny(v, gx_[off], TileCount(off));
        qVals_.EnQue(v);
    }

    // SPLIT with the bit cache: the flag bits phase 1 wrote for the tile at `off`.
    __aicore__ inline void LoadBits(uint64_t off) {
        LocalTensor<uint8_t> b = qFlags_.AllocTensor<uint8_t>();
        LoadAny(b, gBits_[off / 8], Padded(TileCount(off)) / 8);
        qFlags_.EnQue(b);
    }

    // Phase 1: this core's count of non-zero flags in [begin_, end_) and its
    // flag range so far (lane-wise max of the bytes, kept across waves), into `slot`.
    // Tiles run last to first: the L2 (LRU) then evicts the flags phase 2
    // needs last before those it needs first.
    __aicore__ inline void Count(const GlobalTensor<int32_t>& slot) {
        LocalTensor<half> hi = bufRange_.Get<half>();
        LocalTensor<half> lanes = bufOnes_.Get<half>();  // zero between calls (FoldLaneCounts)
        LocalTensor<half> nonzero = bufIdx_.Get<half>();
        uint64_t ones = 0;
        const uint64_t tiles = (end_ - begin_ + kTile - 1) / kTile;
        for (uint64_t k = tiles; k > 0; --k) {
            uint64_t off = begin_ + (k - 1) * kTile;
            LoadFlagsAhead(qFlags_, gf_, begin_, end_, kTile, k);
            uint32_t padded = Padded(TileCount(off));
            LocalTensor<half> h = DeQueFlagsAsHalf(qFlags_, bufHalf_.Get<half>(), padded);  // zeros past the tile's end
            Max(hi, hi, h, static_cast<int32_t>(padded));
            // Any non-zero flag counts 1 (bytes 2..255 to 1), as in phase 2's masks.
            Mins(nonzero, h, static_cast<half>(1.0f), static_cast<int32_t>(padded));
            if (kSplit && t_.bit_cache) {
                LocalTensor<uint8_t> b = qBits_.AllocTensor<uint8_t>();
                CompareScalar(b, h, static_cast<half>(0.0f), CMPMODE::NE, padded);
                StoreQueued(qBits_, b, gBits_[off / 8], padded / 8);
            }
            PipeBarrier<PIPE_V>();
            Add(lanes, lanes, nonzero, static_cast<int32_t>(padded));
            if (LaneCountsDue(tiles, k)) {
                // (the flags' buffer is free for ReduceSum's scratch once the fold's barrier passes)
                ones += FoldLaneCounts(lanes, bufIdx_.Get<float>(), Small<float>(kOwnAt, 8),
                                       bufHalf_.Get<float>(), kTile);
            }
        }
        int32_t fmin = 0, fmax = 0;
        FoldFlagMax(hi, kTile, fmin, fmax);
        LocalTensor<int32_t> own = Small<int32_t>(kOwnAt, kSlotInts);
        own.SetValue(0, static_cast<int32_t>(ones));
        own.SetValue(1, fmin);
        own.SetValue(2, fmax);
        for (uint32_t i = 3; i < kSlotInts; ++i) own.SetValue(i, 0);
        StoreSlot(slot, own, kSlotInts);
    }

    // Phase 2: compaction of every tile of this core's range; flag-1
    // elements go to y[onesAt..], flag-0 elements to y[zerosAt..]. With the
    // bit cache (SPLIT past the L2) the masks come from the bits phase 1
    // wrote (1/8 byte per element instead of re-reading the flags).
    __aicore__ inline void Scatter(uint64_t onesAt, uint64_t zerosAt) {
        LocalTensor<int32_t> idx = bufIdx_.Get<int32_t>();
        const bool wantIdx = t_.want_indices != 0;
        const bool cache = kSplit && t_.bit_cache;
        if (begin_ < end_) {
            if (cache) LoadBits(begin_);
            else LoadFlags(begin_);
            LoadValues(begin_);
        }
        for (uint64_t off = begin_; off < end_; off += kTile) {
            if (off + kTile < end_) {
                if (cache) LoadBits(off + kTile);
                else LoadFlags(off + kTile);
                LoadValues(off + kTile);
            }
            uint32_t count = TileCount(off);
            uint32_t padded = Padded(count);
            LocalTensor<uint8_t> bits1 = bufBits_.Get<uint8_t>();
            LocalTensor<uint8_t> bits0 = bufBits_.Get<uint8_t>()[kTile / 8];
            if (cache) {
                bits1 = qFlags_.DeQue<uint8_t>();
                PipeBarrier<PIPE_V>();
                Not(bits0.ReinterpretCast<uint16_t>(), bits1.ReinterpretCast<uint16_t>(),
                    static_cast<int32_t>(padded / 16));
            } else {
                LocalTensor<half> h = DeQueFlagsAsHalf(qFlags_, bufHalf_.Get<half>(), padded);
                CompareScalar(bits1, h, static_cast<half>(0.0f), CMPMODE::NE, padded);
                if constexpr (kSplit) CompareScalar(bits0, h, static_cast<half>(0.0f), CMPMODE::EQ, padded);
            }
            if (wantIdx) CreateVecIndex(idx, static_cast<int32_t>(off), count);
            PipeBarrier<PIPE_V>();
            LocalTensor<TVal> v = qVals_.DeQue<TVal>();
            const GatherMaskParams once(1, 1, 8, 0);
            uint64_t ones = 0, zeros = 0, n1 = 0, n0 = 0;
            LocalTensor<TVal> o1 = qOnes_.template AllocTensor<TVal>();
            GatherMask(o1, v, bits1.template ReinterpretCast<TVal>(), true, count, once, ones);
            LocalTensor<TVal> o0;
            if constexpr (kSplit) {
                o0 = qZeros_.template AllocTensor<TVal>();
                GatherMask(o0, v, bits0.template ReinterpretCast<TVal>(), true, count, once, zeros);
            }
            LocalTensor<int32_t> i1, i0;
            if (wantIdx) {
                i1 = qIdxOnes_.AllocTensor<int32_t>();
                GatherMask(i1, idx, bits1.ReinterpretCast<uint32_t>(), true, count, once, n1);
                if constexpr (kSplit) {
                    i0 = qIdxZeros_.AllocTensor<int32_t>();
                    GatherMask(i0, idx, bits0.ReinterpretCast<uint32_t>(), true, count, once, n0);
                }
            }
            ResetMask();
            qVals_.FreeTensor(v);
            if (cache) qFlags_.FreeTensor(bits1);
            StoreQueued(qOnes_, o1, gy_[onesAt], static_cast<uint32_t>(ones));
            if constexpr (kSplit) StoreQueued(qZeros_, o0, gy_[zerosAt], static_cast<uint32_t>(zeros));
            if (wantIdx) {
                StoreQueued(qIdxOnes_, i1, gi_[onesAt], static_cast<uint32_t>(n1));
                if constexpr (kSplit) StoreQueued(qIdxZeros_, i0, gi_[zerosAt], static_cast<uint32_t>(n0));
            }
            onesAt += ones;
            zerosAt += count - ones;
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, kFlagsAhead + 1> qFlags_;  // phase 2 loads one tile ahead, phase 1 kFlagsAhead
    TQue<TPosition::VECIN, 2> qVals_;                  // the next tile loads while this one compacts
    TQue<TPosition::VECOUT, 1> qOnes_, qZeros_, qIdxOnes_, qIdxZeros_, qBits_;
    TBuf<TPosition::VECCALC> bufHalf_, bufBits_, bufIdx_, bufRange_, bufOnes_, bufSmall_;
    GlobalTensor<TVal> gx_, gy_;
    GlobalTensor<int8_t> gf_;
    GlobalTensor<uint8_t> gBits_;
    GlobalTensor<int32_t> gi_, gSlots_;
    SplitTiling t_;
    uint32_t core_ = 0, cores_ = 0;
    uint64_t begin_ = 0, end_ = 0;
};


}  // namespace split

template <SplitKind kKind, typename TVal, uint32_t kTile>
__aicore__ inline void Split(GM_ADDR x, GM_ADDR flags, GM_ADDR y, GM_ADDR indices, GM_ADDR workspace,
                            const SplitTiling& t) {
    split::Splitter<TVal, kKind == SplitKind::kSplit, kTile> splitter;
    splitter.Run(x, flags, y, indices, workspace, t);
}

}  // namespace ascend_scan
