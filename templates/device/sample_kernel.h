// Sampling (docs/algorithms.md, Sampling), f16, bf16 or f32 weights, f32
// sums, i32 indices: draws with replacement from rows of non-negative
// weights by the inverse transform, on every vector core. The sums form one
// fixed fp32 pair-sum tree per row (PairTree), never a scan
// (crates/algos/src/sample.rs has the argument); the workspace keeps every
// sixth height of it as levels 1 to 4 (level l + 1: sums of 64-entry blocks
// of level l; level 0: the weights):
// 1. every core takes a range of the tiles (kTile weights) of all rows: cast
//    to f32, pair tree, its height-6 nodes into level 1 and its root (NaN
//    when the tile holds a negative weight: ReduceMin) into level 2; SyncAll;
// 2. rows of more than kTile tiles: every core sums ranges of kTile tile sums
//    the same way into levels 3 and 4; SyncAll;
// (Rows of at most kTile weights skip 1. and 2.: the draw phase loads many
// rows at a time and sums and checks each itself.)
// 3. every core takes a range of the draws (row-major): for a new row it
//    builds the pair tree of the top level (cached for the row's next draws;
//    its root is the row total T, which the core owning the row's first draw
//    publishes); then kGroup draws at a time: v = u * T, descend the top
//    tree, and level by level load the 64-entry block under each draw's
//    entry, build the kGroup block trees at once and descend each.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ops.h"
#include "blocks_random.h"
#include "blocks_ub_io.h"

namespace ascend_scan {
namespace sample {

// Values pushed one at a time from the scalar unit into a UB buffer of kCap
// elements and stored to consecutive GM elements (byte-exact DataCopyPad,
// so neighbouring cores may share 32-byte blocks) whenever it fills, and by
// Flush() at the end.
template <typename T, uint32_t kCap>
class ScalarStager {
public:
    static constexpr uint32_t kBytes = kCap * sizeof(T);

    __aicore__ inline void Init(const LocalTensor<T>& buf) { buf_ = buf; }
    // Pushes go to dst[0], dst[1], ...
    __aicore__ inline void Start(const GlobalTensor<T>& dst) {
        dst_ = dst;
        n_ = 0;
        done_ = 0;
    }
    __aicore__ inline void Push(T value) {
        if (n_ == kCap) Flush();
        buf_.SetValue(n_++, value);
    }
    __aicore__ inline void Flush() {
        if (n_ == 0) return;
        PipeSync<HardEvent::S_MTE3>();
        StoreAny(dst_[done_], buf_, n_);
        // The next Push may overwrite the buffer only once it is stored.
        PipeSync<HardEvent::MTE3_S>();
        done_ += n_;
        n_ = 0;
    }

private:
    LocalTensor<T> buf_;
    GlobalTensor<T> dst_;
    uint32_t n_ = 0;
    uint64_t done_ = 0;
};

// Floats of a PairTree<kMax>: every level rounded up to 32.
constexpr uint32_t PairTreeFloats(uint32_t kMax) { return (kMax > 32 ? kMax : 32) + (kMax > 1 ? PairTreeFloats(kMax / 2) : 0); }

// A pair-sum tree over up to kMax (a power of two) f32 leaves in UB: level 0
// holds the leaves, every node of level l+1 is the fp32 sum of its two
// children of level l (PairReduceSum: one rounding per node), the root is the
// single node of the top level. Padding leaves with zeros (up to a power of
// two) leaves every sum unchanged. Descend() walks from the root to a leaf of
// positive weight (see crates/algos/src/sample.rs for the argument):
// with children sums L and R and running prefix P, go left if R == 0 or
// (L > 0 and v < fl(P + L)), else go right with P = fl(P + L).
template <uint32_t kMax>
class PairTree {
public:
    static_assert(kMax >= 1 && (kMax & (kMax - 1)) == 0, "kMax is a power of two");
    static constexpr uint32_t kLevels = Log2Const(kMax);
    // Level l (size kMax >> l) starts at a multiple of 32 floats (128 B: one
    // PairReduceSum repeat writes 32 results) and takes at least 32.
    static constexpr uint32_t kFloats = PairTreeFloats(kMax);
    static constexpr uint32_t kBytes = kFloats * sizeof(float);

    __aicore__ inline void Init(TPipe& pipe) { pipe.InitBuffer(buf_, kBytes); }

    // The leaves (kMax floats): fill [0, size) before Build(size).
    __aicore__ inline LocalTensor<float> Leaves() { return buf_.template Get<float>(); }

    // Builds the levels over `size` leaves (a power of two <= kMax; with
    // `height` < log2(size), a multiple of 2^height: the levels up to that
    // height, one tree per 2^height leaves), then waits for the vector unit
    // (the scalar unit reads the tree next).
    __aicore__ inline void Build(uint32_t size, uint32_t height = kLevels) {
        Levels(size, height);
        PipeSync<HardEvent::V_S>();
    }

    // Issues the vector work of Build() without waiting: the caller syncs
    // V -> S before it reads the tree.
    __aicore__ inline void Levels(uint32_t size, uint32_t height = kLevels) {
        LocalTensor<float> t = Leaves();
        levels_ = 0;
        offs_[0] = 0;
        PipeBarrier<PIPE_V>();
        for (uint32_t s = size; s > 1 && levels_ < height; s /= 2) {
            uint32_t at = offs_[levels_] + (s > 32 ? s : 32);
            // 64 children (32 sums) per repeat; a smaller level masks its children.
            PairReduceSum<float>(t[at], t[offs_[levels_]], static_cast<int32_t>((s + 63) / 64),
                                 static_cast<int32_t>(s < 64 ? s : 64), 1, 1, 8);
            PipeBarrier<PIPE_V>();
            offs_[++levels_] = at;
        }
    }

    // The sum of all leaves (after Build).
    __aicore__ inline float Root() { return Leaves().GetValue(offs_[levels_]); }

    // Where level `height` starts (the top level when the tree is lower).
    __aicore__ inline uint32_t LevelAt(uint32_t height) const { return offs_[height < levels_ ? height : levels_]; }

    // The leaf the descent for target v reaches; `prefix` (the fp32 sum of
    // everything left of the tree, along the descent's chain) becomes the
    // chain's sum left of that leaf.
    __aicore__ inline uint32_t Descend(float v, float& prefix) { return DescendFrom(levels_, 0, v, prefix); }

    // Descend() from node `node` of level `height` (the root of its subtree).
    __aicore__ inline uint32_t DescendFrom(uint32_t height, uint32_t node, float v, float& prefix) {
        LocalTensor<float> t = Leaves();
        uint32_t idx = node;
        for (uint32_t l = height; l > 0; --l) {
            float left = t.GetValue(offs_[l - 1] + 2 * idx);
            float right = t.GetValue(offs_[l - 1] + 2 * idx + 1);
            float c = prefix + left;
            if (right == 0.0f || (left > 0.0f && v < c)) {
                idx = 2 * idx;
            } else {
                prefix = c;
                idx = 2 * idx + 1;
            }
        }
        return idx;
    }

private:
    TBuf<TPosition::VECCALC> buf_;
    uint32_t offs_[kLevels + 1] = {};
    uint32_t levels_ = 0;
};

constexpr uint32_t kBatch = 1024;  // uniforms loaded, results staged at a time
constexpr uint32_t kBlock = 64;    // entries per block of a level (SAMPLE_BLOCK)
constexpr uint32_t kBlockHeight = Log2Const(kBlock);
constexpr uint32_t kStaged = 16;   // chunks whose block sums are stored at once
constexpr uint64_t kNone = ~static_cast<uint64_t>(0);

// TW: the weights' type; kTile: leaves per chunk of every level.
template <typename TW, uint32_t kTile>
class Sampler {
public:
    // Draws descended together: their blocks fill one tree of kTile leaves
    // (and a batch of uniforms holds whole groups).
    static constexpr uint32_t kGroup = kTile / kBlock;
    static_assert(kTile % kBlock == 0 && kBatch % kGroup == 0, "groups tile the batches");

    __aicore__ inline void Run(GM_ADDR weights, GM_ADDR uniforms, GM_ADDR indices, GM_ADDR workspace,
                               const SampleTiling& t) {
        t_ = t;
        core_ = static_cast<uint32_t>(GetBlockIdx());
        gW_.SetGlobalBuffer(reinterpret_cast<__gm__ TW*>(weights), t.rows * t.n);
        gU_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(uniforms), t.rows * t.draws);
        gOut_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), t.rows * t.draws);
        const uint64_t offsets[5] = {0, 0, t.tiles_offset, t.tile_blocks_offset, t.chunks_offset};
        for (uint32_t l = 1; l < 5; ++l) {
            gLevel_[l].SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace + offsets[l]), t.rows * LevelLen(l));
        }
        gTotals_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(workspace + t.totals_offset), t.rows);
        pipe_.InitBuffer(qRaw_, 2, kTile * sizeof(float));
        tile_.Init(pipe_);
        mid_.Init(pipe_);
        top_.Init(pipe_);
        pipe_.InitBuffer(bufMin_, 64 + kTile);  // two ReduceMin results, then scratch
        pipe_.InitBuffer(bufUniforms_, kBatch * sizeof(float));
        pipe_.InitBuffer(bufSums_, ScalarStager<float, kBatch>::kBytes);
        pipe_.InitBuffer(bufOut_, ScalarStager<int32_t, kBatch>::kBytes);
        sums_.Init(bufSums_.Get<float>());
        out_.Init(bufOut_.Get<int32_t>());
        pipe_.InitBuffer(bufBlocks_, kStaged * kBlock * sizeof(float));
        // Long-lived event ids (their Set and Wait are far apart): the
        // uniforms' load, the two trees of SumLevel's pipeline, and the
        // store of the staged block sums.
        uniformsLoaded_ = pipe_.AllocEventID<HardEvent::MTE2_S>();
        treeBuilt_[0] = pipe_.AllocEventID<HardEvent::V_S>();
        treeBuilt_[1] = pipe_.AllocEventID<HardEvent::V_S>();
        blocksStored_ = pipe_.AllocEventID<HardEvent::MTE3_V>();
        Phases();
        pipe_.ReleaseEventID<HardEvent::MTE3_V>(blocksStored_);
        pipe_.ReleaseEventID<HardEvent::V_S>(treeBuilt_[1]);
        pipe_.ReleaseEventID<HardEvent::V_S>(treeBuilt_[0]);
        pipe_.ReleaseEventID<HardEvent::MTE2_S>(uniformsLoaded_);
    }

private:
    __aicore__ inline void Phases() {
        const SampleTiling& t = t_;

        // This core's draws; their first uniforms load while phases 1 and 2 run.
        const uint64_t draws = t.rows * t.draws;
        drawFirst_ = core_ * t.draws_per_core;
        drawLast_ = drawFirst_ + t.draws_per_core < draws ? drawFirst_ + t.draws_per_core : draws;
        if (drawFirst_ < drawLast_) LoadUniforms(drawFirst_);
        if (t.top_level == 0) {
            // Rows of one tile: the draw phase sums and checks each row itself.
            Draw();
            return;
        }
        SumLevel<TW>(gW_, t.n, t.tiles, t.tiles_per_core, 1, true);
        SyncAll();
        if (t.top_level >= 3) {
            SumLevel<float>(gLevel_[2], t.tiles, t.chunks, t.chunks_per_core, 3, false);
            SyncAll();
        }
        Draw();
    }

    // Entries per row of level l (0: the weights).
    __aicore__ inline uint64_t LevelLen(uint32_t l) const {
        const uint64_t lens[5] = {t_.n, t_.blocks, t_.tiles, t_.tile_blocks, t_.chunks};
        return lens[l];
    }

    // Entries of chunk j of a level of `len` entries per row.
    __aicore__ inline uint32_t ChunkCount(uint64_t len, uint64_t j) {
        uint64_t left = len - j * kTile;
        return static_cast<uint32_t>(left < kTile ? left : kTile);
    }

    // Loads chunk j of `row` of a level (`len` entries per row) into a new
    // raw tensor, zero up to the power of two its tree spans.
    template <typename TIn>
    __aicore__ inline void LoadChunk(const GlobalTensor<TIn>& level, uint64_t len, uint64_t row, uint64_t j) {
        uint32_t count = ChunkCount(len, j);
        uint32_t size = Pow2Ceil(count);
        LocalTensor<TIn> raw = qRaw_.AllocTensor<TIn>();
        if (count < size) ZeroBeforeLoad(raw, size);
        LoadAny(raw, level[row * len + j * kTile], count);
        qRaw_.EnQue(raw);
    }

    // The next loaded tensor as `size` f32 leaves of `tree`.
    template <typename TIn>
    __aicore__ inline void ToLeaves(PairTree<kTile>& tree, uint32_t size) {
        LocalTensor<TIn> raw = qRaw_.DeQue<TIn>();
        PipeSync<HardEvent::S_V>();  // the scalar unit is done reading the tree (and its ReduceMin slot)
        CastToAcc(tree.Leaves(), raw, bufMin_.Get<half>(), size);
        qRaw_.FreeTensor(raw);
        PipeBarrier<PIPE_V>();
    }

    // Loads chunk j of `row` of a level into `tree` and builds it.
    template <typename TIn>
    __aicore__ inline void BuildChunk(PairTree<kTile>& tree, const GlobalTensor<TIn>& level, uint64_t len,
                                      uint64_t row, uint64_t j) {
        uint32_t size = Pow2Ceil(ChunkCount(len, j));
        LoadChunk(level, len, row, j);
        ToLeaves<TIn>(tree, size);
        tree.Build(size);
    }

    // Phases 1 and 2: for every chunk (`perRow` chunks of kTile entries of a
    // level of `len` entries per row) in this core's range, its block sums
    // (the height-6 nodes of its tree) into level `dst` and its root into
    // level `dst + 1`. With `checkSign`, a chunk holding a negative entry
    // gets a NaN root (level `dst` is never a top level: it needs no mark).
    // Software-pipelined over two trees (tile_ and mid_, free until phase
    // 3): the next chunk loads while this one is summed, and the scalar unit
    // publishes the previous chunk's root while the vector unit sums this
    // one. The block sums of consecutive chunks are consecutive in level
    // `dst`: the vector unit stages them and MTE3 stores kStaged chunks' at
    // a time.
    template <typename TIn>
    __aicore__ inline void SumLevel(const GlobalTensor<TIn>& src, uint64_t len, uint64_t perRow, uint64_t perCore,
                                    uint32_t dst, bool checkSign) {
        const uint64_t all = t_.rows * perRow;
        uint64_t first = core_ * perCore;
        uint64_t last = first + perCore < all ? first + perCore : all;
        if (first >= last) return;
        sums_.Start(gLevel_[dst + 1][first]);
        PairTree<kTile>* trees[2] = {&tile_, &mid_};
        LocalTensor<float> mins = bufMin_.Get<float>();  // one 32-byte slot per tree, then scratch
        LocalTensor<float> tmp = mins[16];
        LocalTensor<float> staged = bufBlocks_.Get<float>();
        uint32_t stagedChunks = 0, stagedEntries = 0;
        uint64_t stagedAt = 0;  // the first staged entry's index in level `dst`
        bool storing = false;   // a store of the staging buffer is in flight
        LoadChunk(src, len, first / perRow, first % perRow);
        for (uint64_t g = first; g < last; ++g) {
            if (g + 1 < last) LoadChunk(src, len, (g + 1) / perRow, (g + 1) % perRow);
            const uint32_t k = static_cast<uint32_t>((g - first) % 2);
            const uint64_t j = g % perRow;
            uint32_t count = ChunkCount(len, j);
            uint32_t size = Pow2Ceil(count);
            ToLeaves<TIn>(*trees[k], size);
            if (checkSign) ReduceMin(mins[8 * k], trees[k]->Leaves(), tmp, static_cast<int32_t>(count));
            trees[k]->Levels(size);
            // Stage the block sums (a row's last chunk may have fewer than
            // kTile / kBlock; the stage then ends with it).
            const uint32_t blocks = (count + kBlock - 1) / kBlock;
            if (stagedChunks == 0) {
                if (storing) WaitFlag<HardEvent::MTE3_V>(blocksStored_);
                storing = false;
                stagedAt = (g / perRow) * LevelLen(dst) + j * (kTile / kBlock);
            }
            Adds(staged[stagedEntries], trees[k]->Leaves()[trees[k]->LevelAt(kBlockHeight)], 0.0f,
                 static_cast<int32_t>(blocks));
            ++stagedChunks;
            stagedEntries += blocks;
            SetFlag<HardEvent::V_S>(treeBuilt_[k]);
            if (stagedChunks == kStaged || count < kTile || g + 1 == last) {
                PipeSync<HardEvent::V_MTE3>();
                StoreAny(gLevel_[dst][stagedAt], staged, stagedEntries);
                SetFlag<HardEvent::MTE3_V>(blocksStored_);
                storing = true;
                stagedChunks = 0;
                stagedEntries = 0;
            }
            if (g > first) {
                WaitFlag<HardEvent::V_S>(treeBuilt_[1 - k]);
                Publish(*trees[1 - k], mins[8 * (1 - k)], checkSign);
            }
        }
        const uint32_t k = static_cast<uint32_t>((last - 1 - first) % 2);
        WaitFlag<HardEvent::V_S>(treeBuilt_[k]);
        Publish(*trees[k], mins[8 * k], checkSign);
        sums_.Flush();
        if (storing) WaitFlag<HardEvent::MTE3_V>(blocksStored_);
    }

    // Publishes a built tree's root into the stager (NaN for a negative entry).
    __aicore__ inline void Publish(PairTree<kTile>& tree, const LocalTensor<float>& min, bool checkSign) {
        float root = tree.Root();
        if (checkSign && min.GetValue(0) < 0.0f) root = __builtin_nanf("");
        sums_.Push(root);
    }

    // Starts loading the uniforms of draws [d, d + kBatch) of this core's
    // range (the scalar unit waits for them on uniformsLoaded_).
    __aicore__ inline void LoadUniforms(uint64_t d) {
        uint64_t left = drawLast_ - d;
        PipeSync<HardEvent::S_MTE2>();  // the scalar unit is done with the previous batch
        LoadAny(bufUniforms_.Get<float>(), gU_[d], static_cast<uint32_t>(left < kBatch ? left : kBatch));
        SetFlag<HardEvent::MTE2_S>(uniformsLoaded_);
    }

    // Rows of at most kTile weights (top level 0, no phases 1 and 2): the
    // rows of this core's draws load many at a time (one DataCopyPad, each
    // row in its own 32-byte-aligned block, zero-padded) into mid_'s buffer,
    // free here; builds the tree of `row` in top_ and returns its total (NaN
    // when the row holds a negative weight).
    __aicore__ inline float ShortRow(uint64_t row) {
        const uint32_t n = static_cast<uint32_t>(t_.n);
        PipeSync<HardEvent::S_V>();  // the scalar unit is done reading the last row's tree and minimum
        const uint32_t pitch = (n * static_cast<uint32_t>(sizeof(TW)) + 31) / 32 * 32 / sizeof(TW);
        LocalTensor<TW> cache = mid_.Leaves().template ReinterpretCast<TW>();
        if (row < cacheFirst_ || row >= cacheLast_) {
            const uint64_t rowsLeft = (drawLast_ - 1) / t_.draws + 1 - row;
            uint64_t fit = PairTree<kTile>::kBytes / (pitch * sizeof(TW));
            if (fit > 4095) fit = 4095;  // DataCopyPad's blockCount
            const uint64_t count = rowsLeft < fit ? rowsLeft : fit;
            if (cacheLast_ != 0) {
                // The vector unit is done with the cached rows.
                PipeSync<HardEvent::V_MTE2>();
            }
            const uint8_t rightPad = static_cast<uint8_t>(pitch - n);
            DataCopyExtParams p(static_cast<uint16_t>(count), n * static_cast<uint32_t>(sizeof(TW)), 0, 0, 0);
            DataCopyPadExtParams<TW> pad(rightPad != 0, 0, rightPad, static_cast<TW>(0));
            DataCopyPad(cache, gW_[row * t_.n], p, pad);
            PipeSync<HardEvent::MTE2_V>();
            cacheFirst_ = row;
            cacheLast_ = row + count;
        }
        const uint32_t size = Pow2Ceil(n);
        const uint32_t cast = pitch < size ? pitch : size;
        LocalTensor<float> leaves = top_.Leaves();
        CastToAcc(leaves, cache[static_cast<uint32_t>(row - cacheFirst_) * pitch], bufMin_.Get<half>(), cast);
        if (cast < size) Duplicate(leaves[cast], 0.0f, static_cast<int32_t>(size - cast));
        PipeBarrier<PIPE_V>();
        LocalTensor<float> mn = bufMin_.Get<float>();
        ReduceMin(mn, leaves, mn[16], static_cast<int32_t>(n));
        top_.Build(size);
        float total = top_.Root();
        if (mn.GetValue(0) < 0.0f) total = __builtin_nanf("");
        return total;
    }

    // One level of a group's descent: loads the block (kBlock entries of
    // `level`, `len` per row) under entry idx[i] of the level above for each
    // of the `count` draws, builds the `count` block trees together in tile_
    // and descends each; idx[i] becomes the entry reached in this level.
    template <typename TIn>
    __aicore__ inline void DescendBlocks(const GlobalTensor<TIn>& level, uint64_t len, uint64_t row, uint32_t count,
                                         const float* v, float* prefix, uint64_t* idx) {
        // The trees span a power of two of blocks (PairReduceSum's repeats
        // take whole pairs of 32 sums): blocks past `count` are zeros.
        const uint32_t blocks = Pow2Ceil(count);
        LocalTensor<TIn> raw = qRaw_.AllocTensor<TIn>();
        if (blocks > count) ZeroBeforeLoad(raw[count * kBlock], (blocks - count) * kBlock);
        for (uint32_t i = 0; i < count; ++i) {
            const uint64_t at = idx[i] * kBlock;
            const uint64_t left = at < len ? len - at : 0;  // a row's last block may be short
            LocalTensor<TIn> slot = raw[i * kBlock];
            if (left < kBlock) ZeroBeforeLoad(slot, kBlock);
            if (left > 0) LoadAny(slot, level[row * len + at], static_cast<uint32_t>(left < kBlock ? left : kBlock));
        }
        qRaw_.EnQue(raw);
        ToLeaves<TIn>(tile_, blocks * kBlock);
        tile_.Build(blocks * kBlock, kBlockHeight);
        for (uint32_t i = 0; i < count; ++i) {
            idx[i] = idx[i] * kBlock + (tile_.DescendFrom(kBlockHeight, i, v[i], prefix[i]) - i * kBlock);
        }
    }

    // Phase 3: this core's range of the draws, kGroup at a time (a group
    // stays in one row).
    __aicore__ inline void Draw() {
        const uint64_t first = drawFirst_, last = drawLast_;
        if (first >= last) return;
        out_.Start(gOut_[first]);
        // The rows whose first draw is in the range publish their totals.
        sums_.Start(gTotals_[(first + t_.draws - 1) / t_.draws]);
        LocalTensor<float> u = bufUniforms_.Get<float>();
        const uint32_t top = t_.top_level;
        uint64_t topRow = kNone;
        float total = 0.0f;
        float v[kGroup], prefix[kGroup];
        uint64_t idx[kGroup];
        for (uint64_t d = first; d < last;) {
            if ((d - first) % kBatch == 0) {
                if (d != first) LoadUniforms(d);
                WaitFlag<HardEvent::MTE2_S>(uniformsLoaded_);
            }
            const uint64_t row = d / t_.draws;
            if (row != topRow) {
                if (top == 0) {
                    total = ShortRow(row);
                } else {
                    BuildChunk(top_, gLevel_[top], LevelLen(top), row, 0);
                    total = top_.Root();
                }
                topRow = row;
            }
            uint64_t end = first + ((d - first) / kGroup + 1) * kGroup;
            if (end > (row + 1) * t_.draws) end = (row + 1) * t_.draws;
            if (end > last) end = last;
            const uint32_t count = static_cast<uint32_t>(end - d);
            for (uint32_t i = 0; i < count; ++i) {
                if ((d + i) % t_.draws == 0) sums_.Push(total);
                v[i] = u.GetValue(static_cast<uint32_t>((d + i - first) % kBatch)) * total;
                prefix[i] = 0.0f;
                idx[i] = top_.Descend(v[i], prefix[i]);
            }
            for (uint32_t l = top; l > 1; --l) {
                DescendBlocks<float>(gLevel_[l - 1], LevelLen(l - 1), row, count, v, prefix, idx);
            }
            if (top > 0) DescendBlocks<TW>(gW_, t_.n, row, count, v, prefix, idx);
            for (uint32_t i = 0; i < count; ++i) out_.Push(static_cast<int32_t>(idx[i]));
            d = end;
        }
        out_.Flush();
        sums_.Flush();
    }

    TPipe pipe_;
    TEventID uniformsLoaded_ = 0;
    TEventID treeBuilt_[2] = {0, 0};
    TEventID blocksStored_ = 0;
    TQue<TPosition::VECIN, 2> qRaw_;  // depth 2: phase 1 loads the next tile while it sums one
    PairTree<kTile> tile_, mid_, top_;
    TBuf<TPosition::VECCALC> bufMin_, bufUniforms_, bufSums_, bufOut_, bufBlocks_;
    ScalarStager<float, kBatch> sums_;
    ScalarStager<int32_t, kBatch> out_;
    GlobalTensor<TW> gW_;
    GlobalTensor<float> gU_, gLevel_[5], gTotals_;  // gLevel_[0] unused (level 0 is gW_)
    GlobalTensor<int32_t> gOut_;
    SampleTiling t_;
    uint32_t core_ = 0;
    uint64_t drawFirst_ = 0, drawLast_ = 0;
    uint64_t cacheFirst_ = 0, cacheLast_ = 0;  // rows in ShortRow's cache
};


}  // namespace sample

template <typename TW, uint32_t kTile>
__aicore__ inline void Sample(GM_ADDR weights, GM_ADDR uniforms, GM_ADDR indices, GM_ADDR workspace,
                              const SampleTiling& t) {
    sample::Sampler<TW, kTile> sampler;
    sampler.Run(weights, uniforms, indices, workspace, t);
}

// The seeded draws' uniforms: u[r * draws + j] = Uniform(seed, r, j). Each
// vector core computes its range on the scalar unit into UB tiles of kTile
// and writes them.
template <uint32_t kTile>
__aicore__ inline void Uniforms(GM_ADDR u, const UniformsTiling& t) {
    const uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
    if (begin >= t.count) return;
    const uint64_t end = MinU64(begin + t.per_core, t.count);
    GlobalTensor<float> gU;
    gU.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(u), t.count);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bufTile;
    pipe.InitBuffer(bufTile, kTile * sizeof(float));
    LocalTensor<float> tile = bufTile.Get<float>();
    for (uint64_t off = begin; off < end; off += kTile) {
        uint32_t count = static_cast<uint32_t>(MinU64(end - off, kTile));
        PipeSync<HardEvent::MTE3_S>();  // the previous tile is written out
        for (uint32_t i = 0; i < count; ++i) {
            uint64_t at = off + i;
            tile.SetValue(i, rng::Uniform(t.seed, at / t.draws, at % t.draws));
        }
        PipeSync<HardEvent::S_MTE3>();
        StoreAny(gU[off], tile, count);
    }
}

}  // namespace ascend_scan
