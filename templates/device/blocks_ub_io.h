// UB I/O: moves between GM and the unified buffer of a vector core for any
// element count and offset (DataCopyPad where DataCopy's 32-byte blocks do
// not fit), and scalars written through UB.
#pragma once

#include "blocks_base.h"

namespace ascend_scan {

// Loads `count` elements from GM into UB; the rest of the last 32-byte block
// is `pad` (unrequested pad bytes would repeat the block's first element).
template <typename T>
__aicore__ inline void LoadPadded(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count, T pad) {
    uint32_t tailBytes = (count * static_cast<uint32_t>(sizeof(T))) % 32;
    uint8_t rightPad = static_cast<uint8_t>(tailBytes ? (32 - tailBytes) / sizeof(T) : 0);
    DataCopyExtParams p(1, count * static_cast<uint32_t>(sizeof(T)), 0, 0, 0);
    DataCopyPadExtParams<T> padding(rightPad != 0, 0, rightPad, pad);
    DataCopyPad(dst, src, p, padding);
}

// Loads `count` elements from GM into UB, zero-padded to the 32-byte block.
template <typename T>
__aicore__ inline void LoadAny(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
    LoadPadded(dst, src, count, static_cast<T>(0));
}

// Loads `runs` runs of `count` elements, run i from src[i * stride], into
// dst at lanes i * count, in one DMA (count * sizeof(T) a multiple of 32
// bytes, so the runs land back to back).
template <typename T>
__aicore__ inline void LoadRuns(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t runs, uint32_t count,
                                uint64_t stride) {
    const uint32_t bytes = count * static_cast<uint32_t>(sizeof(T));
    DataCopyExtParams p(static_cast<uint16_t>(runs), bytes, static_cast<uint32_t>((stride - count) * sizeof(T)), 0, 0);
    DataCopyPadExtParams<T> none(false, 0, 0, static_cast<T>(0));
    DataCopyPad(dst, src, p, none);
}

// Zeroes the first `count` elements of `dst` (an even number of bytes)
// before a load of fewer elements into it; the DMA waits for the zeros.
template <typename T>
__aicore__ inline void ZeroBeforeLoad(const LocalTensor<T>& dst, uint32_t count) {
    Duplicate(dst.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0),
              static_cast<int32_t>(count * sizeof(T) / 2));
    PipeSync<HardEvent::V_MTE2>();
}

// Loads `count` int8 flags into a new tensor of queue `q` (room for
// `capacity`), zero past them up to the next multiple of 128, so that their
// compares run in whole repeats once cast to half.
template <typename Que>
__aicore__ inline void EnqueueFlags(Que& q, const GlobalTensor<int8_t>& src, uint32_t count, uint32_t capacity) {
    LocalTensor<int8_t> f = q.template AllocTensor<int8_t>();
    if (count % 128 != 0) ZeroBeforeLoad(f, capacity);
    LoadAny(f, src, count);
    q.EnQue(f);
}

// Writes `count` elements from UB to GM (any count, any element offset).
template <typename T>
__aicore__ inline void StoreAny(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    if (count == 0) return;
    DataCopyExtParams p(1, count * static_cast<uint32_t>(sizeof(T)), 0, 0, 0);
    DataCopyPad(dst, src, p);
}

// Writes a slot of `words` 32-bit words (filled by scalar writes) from UB to
// GM and waits for it, so the slot may be refilled at once.
template <typename T>
__aicore__ inline void StoreSlot(const GlobalTensor<T>& dst, const LocalTensor<T>& own, uint32_t words) {
    PipeSync<HardEvent::S_MTE3>();
    DataCopy(dst, own, words);
    PipeSync<HardEvent::MTE3_S>();
}

// A core's `n` (<= 8) counts into its 32-byte slot of `check` (word i:
// counts[i], saturated to int32; the rest 0), or added to the slot's counts
// when `accumulate` (a later launch of the same batch). Core 0 of a first
// launch also zeroes the slots of the cores that do not run (`slots` in all),
// so the host may sum every slot.
__aicore__ inline void WriteCheckSlot(const LocalTensor<int32_t>& slot, const GlobalTensor<int32_t>& check,
                                      uint64_t* counts, uint32_t n, bool accumulate, uint32_t slots) {
    const uint32_t core = static_cast<uint32_t>(GetBlockIdx());
    if (accumulate) {
        PipeSync<HardEvent::S_MTE2>();
        DataCopy(slot, check[core * 8], 8);
        PipeSync<HardEvent::MTE2_S>();
        for (uint32_t i = 0; i < n; ++i) counts[i] += static_cast<uint64_t>(slot.GetValue(i));
    }
    for (uint32_t i = 0; i < 8; ++i) {
        slot.SetValue(i, i < n ? static_cast<int32_t>(counts[i] < 0x7FFFFFFF ? counts[i] : 0x7FFFFFFF) : 0);
    }
    StoreSlot(check[core * 8], slot, 8);
    if (accumulate || core != 0) return;
    for (uint32_t i = 0; i < n; ++i) slot.SetValue(i, 0);
    PipeSync<HardEvent::S_MTE3>();
    for (uint32_t c = static_cast<uint32_t>(GetBlockNum()); c < slots; ++c) DataCopy(check[c * 8], slot, 8);
    PipeSync<HardEvent::MTE3_S>();
}

// Writes one scalar to GM through UB (scalar write, then MTE3).
template <typename T>
__aicore__ inline void StoreScalar(const GlobalTensor<T>& dst, const LocalTensor<T>& scratch, T value) {
    scratch.SetValue(0, value);
    PipeSync<HardEvent::S_MTE3>();
    StoreAny(dst, scratch, 1);
    PipeSync<HardEvent::MTE3_S>();
}

// Hands `src` (filled on the vector unit) to MTE3 through queue `q`, writes
// `count` elements of it to `dst` and frees it.
template <typename Que, typename T>
__aicore__ inline void StoreQueued(Que& q, const LocalTensor<T>& src, const GlobalTensor<T>& dst, uint32_t count) {
    LocalTensor<T> out = Handoff(q, src);
    StoreAny(dst, out, count);
    q.FreeTensor(out);
}

// Keys gathered as integer lanes (int16 for keys of up to 16 bits, else as
// wide as the key) as TKey: 8-bit keys, once narrowed, sit in the bytes of
// `keys` from `narrowAt`.
template <typename TKey, typename TLane>
__aicore__ inline LocalTensor<TKey> StoredKeys(const LocalTensor<TLane>& keys, uint32_t narrowAt) {
    if constexpr (sizeof(TKey) == 1) return keys.template ReinterpretCast<TKey>()[narrowAt];
    return keys.template ReinterpretCast<TKey>();
}

// Narrows 8-bit keys held as lanes [from, extent) of `keys` back to bytes
// (exact, through f16 in `scratch`, lane for lane) into the bytes from
// `narrowAt`; wider keys need nothing.
template <typename TKey, typename TLane>
__aicore__ inline void NarrowKeys(const LocalTensor<TLane>& keys, uint32_t from, uint32_t extent, uint32_t narrowAt,
                                  const LocalTensor<half>& scratch) {
    if constexpr (sizeof(TKey) == 1) {
        if (extent <= from) return;
        Cast(scratch[from], keys[from], RoundMode::CAST_NONE, extent - from);
        PipeBarrier<PIPE_V>();
        Cast(keys.template ReinterpretCast<TKey>()[narrowAt + from], scratch[from], RoundMode::CAST_NONE,
             extent - from);
        PipeBarrier<PIPE_V>();
    }
}

// Keys gathered as integer lanes (`extent` lanes of `keys`, a tensor of
// queue `q`) as TKey, handed from V to MTE3; 8-bit keys are narrowed back
// first (lanes from `from`: earlier ones are narrowed already).
template <typename TKey, typename Que, typename TLane>
__aicore__ inline LocalTensor<TKey> HandoffKeys(Que& q, LocalTensor<TLane>& keys, uint32_t extent, uint32_t narrowAt,
                                               const LocalTensor<half>& scratch, uint32_t from = 0) {
    NarrowKeys<TKey>(keys, from, extent, narrowAt, scratch);
    keys = Handoff(q, keys);
    return StoredKeys<TKey>(keys, narrowAt);
}

}  // namespace ascend_scan
