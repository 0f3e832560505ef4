// The base layer of the device building blocks: element-type traits, pipe
// synchronisation, small arithmetic and the queue hand-off. Written against
// the AscendC API of CANN 8.x/9.x (Atlas A2).
#pragma once

#include "kernel_operator.h"

namespace ascend_scan {

using namespace AscendC;

template <typename T>
struct CubeTraits;
template <>
struct CubeTraits<half> {
    using Acc = float;
    static constexpr uint32_t kC0 = 16;  // elements per 32-byte fractal row
};
template <>
struct CubeTraits<bfloat16_t> {
    using Acc = float;
    static constexpr uint32_t kC0 = 16;
};
template <>
struct CubeTraits<int8_t> {
    using Acc = int32_t;
    static constexpr uint32_t kC0 = 32;
};
template <>
struct CubeTraits<float> {
    using Acc = float;
    static constexpr uint32_t kC0 = 8;
};

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
constexpr uint32_t CeilDivConst(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint64_t MinU64(uint64_t a, uint64_t b) { return a < b ? a : b; }

// Exchanges two tensor handles (ping-pong buffers; the data stays put).
template <typename T>
__aicore__ inline void SwapTensors(LocalTensor<T>& a, LocalTensor<T>& b) {
    LocalTensor<T> t = a;
    a = b;
    b = t;
}

// Smallest power of two >= count (count >= 1).
__aicore__ inline uint32_t Pow2Ceil(uint32_t count) {
    uint32_t p = 1;
    while (p < count) p *= 2;
    return p;
}

constexpr uint32_t Log2Const(uint32_t p) { return p <= 1 ? 0 : 1 + Log2Const(p / 2); }

// Orders everything the source pipe of E has issued before whatever its
// destination pipe issues next: a SetFlag/WaitFlag pair on an id the TPipe
// hands out (its queues take ids of the same events from the same eight).
template <HardEvent E>
__aicore__ inline void PipeSync() {
    event_t id = static_cast<event_t>(GetTPipePtr()->FetchEventID(E));
    SetFlag<E>(id);
    WaitFlag<E>(id);
}

// The fp32 with bit pattern `b`, and the bit pattern of `f` (scalar).
__aicore__ inline float AsFloat(uint32_t b) {
    union {
        uint32_t u;
        float f;
    } v;
    v.u = b;
    return v.f;
}
__aicore__ inline uint32_t AsBits(float f) {
    union {
        uint32_t u;
        float f;
    } v;
    v.f = f;
    return v.u;
}

// The exact fp32 value of the non-negative 16-bit float bit pattern `m`
// (below the pattern of +inf), for T = half or bfloat16_t (scalar).
template <typename T>
__aicore__ inline float Float16Value(uint32_t m) {
    if constexpr (std::is_same<T, bfloat16_t>::value) {
        return AsFloat(m << 16);
    } else {
        uint32_t e = (m >> 10) & 31u, f = m & 1023u;
        if (e == 0) return static_cast<float>(f) * 5.9604644775390625e-08f;  // subnormal: f * 2^-24
        return AsFloat(((e + 112u) << 23) | (f << 13));
    }
}

// True for an infinity or a NaN (every finite float lies within +-FLT_MAX;
// a NaN fails both comparisons). Integer accumulators are always finite.
template <typename T>
__aicore__ inline bool NonFinite(T v) {
    if constexpr (std::is_integral<T>::value) {
        (void)v;
        return false;
    } else {
        constexpr float kMaxFinite = 3.40282347e38f;
        return !(v >= -kMaxFinite && v <= kMaxFinite);
    }
}

// After scalar reads of UB scratch: the vector unit and MTE2 may overwrite it.
__aicore__ inline void ScalarReadsDone() {
    PipeSync<HardEvent::S_V>();
    PipeSync<HardEvent::S_MTE2>();
}

// Hands a tensor from its producer to its consumer through queue `q`
// (EnQue then DeQue: the queue inserts the pipe sync between them).
template <typename Que, typename T>
__aicore__ inline LocalTensor<T> Handoff(Que& q, const LocalTensor<T>& t) {
    q.EnQue(t);
    return q.template DeQue<T>();
}

// One UB buffer carved into tensors at byte offsets: many scratch tensors
// under one TBuf (A2 allows at most 8 buffers per TPosition, each owning a
// hardware event).
class UbArena {
public:
    __aicore__ inline void Init(TPipe& pipe, uint32_t bytes) { pipe.InitBuffer(buf_, bytes); }
    template <typename U>
    __aicore__ inline LocalTensor<U> At(uint32_t byteOffset, uint32_t count) {
        return buf_.template GetWithOffset<U>(count, byteOffset);
    }

private:
    TBuf<TPosition::VECCALC> buf_;
};

// Per-vector-core partial sums live in 32-byte GM slots (one DMA block each,
// so no two cores write the same block).
template <typename TAcc>
constexpr uint32_t kSumSlot = 32 / sizeof(TAcc);

// A GM tensor of `count` elements of T at byte `offset` of `base`.
template <typename T>
__aicore__ inline GlobalTensor<T> GmTensor(GM_ADDR base, uint64_t offset, uint64_t count) {
    GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(base + offset), count);
    return g;
}

}  // namespace ascend_scan
