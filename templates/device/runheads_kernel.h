// Runs of equal keys (docs/algorithms.md, "Runs of equal keys (RUNHEADS)"):
// flags[i] = 1 where a run starts (i = 0, or keys[i] != keys[i - 1]), else 0.
// Vector cores only; each owns a range of keys and no core waits for another.
#pragma once

#include "ascend_scan_tiling.h"
#include "blocks_ub_io.h"

namespace ascend_scan {

// K: the keys' lane type (half, bfloat16_t, float, int16_t, int32_t; u16 and
// u32 keys come as their int16/int32 bits). C: the type the vector Compare
// takes them in: K itself, or float for bfloat16_t and int16_t (an exact
// widening; A2 compares half, float and int32 only, int32 for EQ only).
// kTile keys per tile. A tile sits in UB after the 32-byte block of keys
// before it, so the Gather that shifts the tile by one key finds the
// predecessor of its first key there.
template <typename K, typename C, uint32_t kTile>
__aicore__ inline void RunHeads(GM_ADDR keys, GM_ADDR flags, const RunHeadsTiling& t) {
    static_assert(kTile % 128 == 0, "whole compare repeats in every type");
    constexpr uint32_t kHead = 32 / sizeof(K);  // keys of the block before the tile
    constexpr bool kWiden = !std::is_same<K, C>::value;
    const uint64_t begin = static_cast<uint64_t>(GetBlockIdx()) * t.per_core;
    if (begin >= t.n) return;
    const uint64_t end = MinU64(begin + t.per_core, t.n);
    GlobalTensor<K> gKeys;
    GlobalTensor<int8_t> gFlags;
    gKeys.SetGlobalBuffer(reinterpret_cast<__gm__ K*>(keys), t.n);
    gFlags.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t*>(flags), t.n);

    TPipe pipe;
    TQue<TPosition::VECIN, 2> qIn;  // depth 2: the next tile loads while one is compared
    TQue<TPosition::VECOUT, 2> qOut;
    pipe.InitBuffer(qIn, 2, (kHead + kTile) * sizeof(K));
    pipe.InitBuffer(qOut, 2, kTile);
    // The gathers and compares run in G: the keys' own lanes, or their f32
    // widening (the tile and the block before it, cast together).
    using G = typename std::conditional<kWiden, float, K>::type;
    constexpr uint32_t kPrev = 0, kWideIn = kPrev + kTile * sizeof(G);
    constexpr uint32_t kOffsets = kWideIn + (kWiden ? (kHead + kTile) * sizeof(float) : 0);
    constexpr uint32_t kEqual = kOffsets + kTile * sizeof(uint32_t), kZeros = kEqual + kTile / 8;
    constexpr uint32_t kHalf = kZeros + kTile * sizeof(half), kBytes = kHalf + kTile * sizeof(half);
    UbArena ub;
    ub.Init(pipe, kBytes);
    LocalTensor<G> prev = ub.At<G>(kPrev, kTile);
    LocalTensor<int32_t> offsets = ub.At<int32_t>(kOffsets, kTile);
    LocalTensor<uint8_t> equal = ub.At<uint8_t>(kEqual, kTile / 8);
    LocalTensor<half> zeros = ub.At<half>(kZeros, kTile), heads = ub.At<half>(kHalf, kTile);
    // prev[i] = lane kHead + i - 1 of the loaded (or widened) tile.
    CreateVecIndex(offsets, static_cast<int32_t>(0), kTile);
    Duplicate(zeros, static_cast<half>(0.0f), static_cast<int32_t>(kTile));
    PipeBarrier<PIPE_V>();
    Muls(offsets, offsets, static_cast<int32_t>(sizeof(G)), static_cast<int32_t>(kTile));
    PipeBarrier<PIPE_V>();

    // Loads the tile at `t0` of `len` keys with the block before it (from
    // the array's start: a block of zeros, the first flag is set apart). A
    // short tile is zeroed first up to whole compare repeats, so every lane
    // compared is defined.
    auto load = [&](uint64_t t0, uint32_t len) {
        LocalTensor<K> in = qIn.AllocTensor<K>();
        const uint32_t padded = (len + 127) / 128 * 128;
        if (len < kTile || t0 == 0) ZeroBeforeLoad(in, kHead + padded);
        if (t0 == 0) {
            LoadAny(in[kHead], gKeys, len);
        } else {
            LoadAny(in, gKeys[t0 - kHead], kHead + len);
        }
        qIn.EnQue(in);
    };

    uint64_t t0 = begin;
    uint32_t len = static_cast<uint32_t>(MinU64(kTile, end - t0));
    load(t0, len);
    while (t0 < end) {
        const uint64_t next = t0 + len;
        const uint32_t nextLen = next < end ? static_cast<uint32_t>(MinU64(kTile, end - next)) : 0;
        if (nextLen > 0) load(next, nextLen);
        const uint32_t padded = (len + 127) / 128 * 128;
        LocalTensor<K> in = qIn.DeQue<K>();
        const uint32_t before = static_cast<uint32_t>((kHead - 1) * sizeof(G));
        if constexpr (kWiden) {
            LocalTensor<float> wide = ub.At<float>(kWideIn, kHead + kTile);
            Cast(wide, in, RoundMode::CAST_NONE, kHead + padded);
            PipeBarrier<PIPE_V>();
            Gather(prev, wide, offsets.ReinterpretCast<uint32_t>(), before, padded);
            PipeBarrier<PIPE_V>();
            Compare(equal, wide[kHead], prev, CMPMODE::EQ, padded);
        } else {
            Gather(prev, in, offsets.ReinterpretCast<uint32_t>(), before, padded);
            PipeBarrier<PIPE_V>();
            Compare(equal, in[kHead], prev, CMPMODE::EQ, padded);
        }
        PipeBarrier<PIPE_V>();
        qIn.FreeTensor(in);
        // 0 where a key equals its predecessor, else 1.
        Select(heads, equal, zeros, static_cast<half>(1.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, padded);
        PipeBarrier<PIPE_V>();
        LocalTensor<int8_t> out = qOut.AllocTensor<int8_t>();
        Cast(out, heads, RoundMode::CAST_NONE, padded);
        if (t0 == 0) {  // the array's first key starts a run
            PipeSync<HardEvent::V_S>();
            out.SetValue(0, static_cast<int8_t>(1));
            PipeSync<HardEvent::S_MTE3>();
        }
        StoreQueued(qOut, out, gFlags[t0], len);
        t0 = next;
        len = nextLen;
    }
}

}  // namespace ascend_scan
