// Operators on the vector unit: the conversion of inputs to accumulators and
// the binary operators of the scans and reductions (sum, max, min; or for
// folds of masks).
#pragma once

#include "blocks_base.h"

namespace ascend_scan {

// Converts scan inputs to the accumulator type: half and bf16 -> float
// directly, int8 -> int32 through half (A2 has no direct int8 -> int32 cast;
// all exact), float -> float a copy.
template <typename TAcc, typename TIn>
__aicore__ inline void CastToAcc(const LocalTensor<TAcc>& dst, const LocalTensor<TIn>& src,
                                 const LocalTensor<half>& tmp, uint32_t count) {
    if constexpr (std::is_same<TIn, int8_t>::value) {
        Cast(tmp, src, RoundMode::CAST_NONE, count);
        PipeBarrier<PIPE_V>();
        Cast(dst, tmp, RoundMode::CAST_RINT, count);
    } else if constexpr (std::is_same<TIn, TAcc>::value) {
        (void)tmp;
        Adds(dst, src, static_cast<TAcc>(0), static_cast<int32_t>(count));
    } else {
        (void)tmp;
        Cast(dst, src, RoundMode::CAST_NONE, count);
    }
}

// A binary operator of the scans and reductions: the element-wise vector op
// (count form and row form), a copy, the scalar op and the identity of each
// type the kernels use (inputs half / bfloat16_t / int8_t / float,
// accumulators float / int32_t).
struct OpSum {
    template <typename T>
    __aicore__ static inline void Vec(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                      uint32_t count) {
        Add(dst, a, b, static_cast<int32_t>(count));
    }
    template <typename T>
    __aicore__ static inline void Rows(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                       uint64_t mask, uint8_t repeats, const BinaryRepeatParams& p) {
        Add(dst, a, b, mask, repeats, p);
    }
    template <typename T>
    __aicore__ static inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
        Adds(dst, src, static_cast<T>(0), static_cast<int32_t>(count));
    }
    template <typename T>
    __aicore__ static inline T Scalar(T a, T b) {
        return static_cast<T>(a + b);
    }
    template <typename T>
    __aicore__ static inline T Identity() {
        return static_cast<T>(0);
    }
    static constexpr int16_t kInt8Pair = 0;
};

// Max (kIsMax) or min: the same operator but for the vector op, the scalar
// comparison and the sign of the identity.
template <bool kIsMax>
struct OpExtreme {
    template <typename T>
    __aicore__ static inline void Vec(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                      uint32_t count) {
        if constexpr (kIsMax) {
            Max(dst, a, b, static_cast<int32_t>(count));
        } else {
            Min(dst, a, b, static_cast<int32_t>(count));
        }
    }
    template <typename T>
    __aicore__ static inline void Rows(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                       uint64_t mask, uint8_t repeats, const BinaryRepeatParams& p) {
        if constexpr (kIsMax) {
            Max(dst, a, b, mask, repeats, p);
        } else {
            Min(dst, a, b, mask, repeats, p);
        }
    }
    template <typename T>
    __aicore__ static inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
        Vec(dst, src, src, count);  // op(v, v) = v
    }
    template <typename T>
    __aicore__ static inline T Scalar(T a, T b) {
        return (kIsMax ? a > b : a < b) ? a : b;
    }
    // -inf / the smallest integer for max, +inf / the largest for min.
    template <typename T>
    __aicore__ static inline T Identity() {
        if constexpr (std::is_same<T, float>::value) {
            return kIsMax ? -__builtin_huge_valf() : __builtin_huge_valf();
        } else if constexpr (std::is_same<T, half>::value) {
            return static_cast<half>(kIsMax ? -__builtin_huge_valf() : __builtin_huge_valf());
        } else if constexpr (std::is_same<T, bfloat16_t>::value) {
            return static_cast<bfloat16_t>(kIsMax ? -__builtin_huge_valf() : __builtin_huge_valf());
        } else if constexpr (std::is_same<T, int32_t>::value) {
            return kIsMax ? static_cast<int32_t>(-2147483647 - 1) : static_cast<int32_t>(2147483647);
        } else {
            return static_cast<T>(kIsMax ? -128 : 127);  // int8_t
        }
    }
    // Two int8 identities as one int16 (to fill int8 buffers with Duplicate).
    static constexpr int16_t kInt8Pair = kIsMax ? static_cast<int16_t>(-32640) : static_cast<int16_t>(0x7f7f);
};
using OpMax = OpExtreme<true>;
using OpMin = OpExtreme<false>;

// Bitwise or (uint16 / int16 lanes): only the vector op, for folds of masks.
struct OpOr {
    template <typename T>
    __aicore__ static inline void Vec(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                                      uint32_t count) {
        Or(dst, a, b, static_cast<int32_t>(count));
    }
};

// Fills the first `count` elements (a multiple of 2 for int8) of an input
// buffer with the operator's identity.
template <typename Op, typename TIn>
__aicore__ inline void FillIdentity(const LocalTensor<TIn>& dst, uint32_t count) {
    if constexpr (std::is_same<TIn, int8_t>::value) {
        Duplicate(dst.template ReinterpretCast<int16_t>(), Op::kInt8Pair, static_cast<int32_t>(count / 2));
    } else {
        Duplicate(dst, Op::template Identity<TIn>(), static_cast<int32_t>(count));
    }
}

}  // namespace ascend_scan
