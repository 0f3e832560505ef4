// ascendc_sim/datacopy.h: DataCopy / DataCopyPad between GM, UB and L1
// (ascendc-api.md 3.1-3.4). Written from the documented semantics; no vendor
// code. Units differ per field (fact 1): DataCopy count = elements,
// DataCopyParams lengths/gaps = 32 B blocks (end-to-start gaps), DataCopyPad
// blockLen = bytes with GM strides in bytes and UB strides in 32 B blocks,
// Nd2Nz C0/N strides in 32 B units and matrix strides in elements.
#pragma once

#include <initializer_list>

#include "ascendc_sim/tensor.h"

namespace AscendC {

// ---------------------------------------------------------------- parameter structs

struct DataCopyParams {
    __aicore__ DataCopyParams() {}
    __aicore__ DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn,
                              const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    union {
        uint16_t srcGap = 0;
        uint16_t srcStride;
    };
    union {
        uint16_t dstGap = 0;
        uint16_t dstStride;
    };
};

struct DataCopyExtParams {
    __aicore__ DataCopyExtParams() {}
    __aicore__ DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                                 const uint32_t dstStrideIn, const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
    __aicore__ DataCopyPadExtParams() {}
    __aicore__ DataCopyPadExtParams(const bool isPadIn, const uint8_t left, const uint8_t right, T value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = 0;
};

struct DataCopyPadParams {
    __aicore__ DataCopyPadParams() {}
    __aicore__ DataCopyPadParams(const bool isPadIn, const uint8_t left, const uint8_t right, const uint64_t value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

struct Nd2NzParams {
    __aicore__ Nd2NzParams() {}
    __aicore__ Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                           const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn,
                           const uint16_t dstNzC0StrideIn, const uint16_t dstNzNStrideIn,
                           const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 0;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

// ---------------------------------------------------------------- shared helpers

namespace sim_detail {

inline uint64_t gm_u64(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }
inline uint64_t ceil32(uint64_t b) { return (b + 31u) / 32u * 32u; }

inline void check_range(const char* field, uint64_t v, uint64_t lo, uint64_t hi) {
    if (v < lo || v > hi) {
        ascsim::fail("parameter out of range",
                     ascsim::fmt("%s: %s = %llu outside [%llu, %llu]", ascsim::core().api, field,
                                 (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi));
    }
}

// The local tensor must live in one of `allowed` memories (the A2 data paths).
template <typename T>
void require_mem(const LocalTensor<T>& t, std::initializer_list<ascsim::Mem> allowed, const char* what) {
    for (ascsim::Mem m : allowed)
        if (t.sim_mem() == m) return;
    ascsim::fail("unsupported data path", ascsim::fmt("%s: %s in %s is not a supported path on Atlas A2",
                                                      ascsim::core().api, what, ascsim::mem_name(t.sim_mem())));
}

template <typename T>
void require_gm_aligned(const T* gm) {
    if (gm_u64(gm) % sizeof(T) != 0) {
        ascsim::fail("misaligned address", ascsim::fmt("%s: GM address %p is not %zu-byte aligned",
                                                       ascsim::core().api, static_cast<const void*>(gm), sizeof(T)));
    }
}

template <typename T>
void require_32b_length(uint64_t count) {
    if (count * sizeof(T) % 32 != 0) {
        ascsim::fail("DataCopy length not 32-byte multiple",
                     ascsim::fmt("%s: %llu x %s = %llu bytes is not a multiple of 32 (hardware silently truncates "
                                 "it; use DataCopyPad)",
                                 ascsim::core().api, (unsigned long long)count, ascsim::type_name<T>(),
                                 (unsigned long long)(count * sizeof(T))));
    }
}

// Bursts of `len` bytes: burst i at byte i*gm_pitch on the GM side and at
// byte i*loc_pitch of the local tensor (pitches start-to-start; loc_pitch is a
// multiple of sizeof(T)). Contiguous bursts are issued as one DMA access.
template <typename T>
void gm_to_local(const LocalTensor<T>& dst, const T* gm, uint32_t count, uint64_t len, uint64_t gm_pitch,
                 uint64_t loc_pitch) {
    if (count == 0 || len == 0) return;
    if (gm_pitch == len && loc_pitch == len) {
        ascsim::gm_dma_load(dst.span(0, count * len / sizeof(T), ascsim::Acc::Write), gm, count * len);
        return;
    }
    for (uint32_t i = 0; i < count; ++i)
        ascsim::gm_dma_load(dst.span(i * loc_pitch / sizeof(T), len / sizeof(T), ascsim::Acc::Write),
                            reinterpret_cast<const uint8_t*>(gm) + i * gm_pitch, len);
}

template <typename T>
void local_to_gm(T* gm, const LocalTensor<T>& src, uint32_t count, uint64_t len, uint64_t gm_pitch,
                 uint64_t loc_pitch) {
    if (count == 0 || len == 0) return;
    if (gm_pitch == len && loc_pitch == len) {
        ascsim::gm_dma_store(gm, src.span(0, count * len / sizeof(T), ascsim::Acc::Read), count * len);
        return;
    }
    for (uint32_t i = 0; i < count; ++i)
        ascsim::gm_dma_store(reinterpret_cast<uint8_t*>(gm) + i * gm_pitch,
                             src.span(i * loc_pitch / sizeof(T), len / sizeof(T), ascsim::Acc::Read), len);
}

// First GM byte and span of `count` bursts of `len` bytes at pitch `pitch`.
inline uint64_t gm_span(uint32_t count, uint64_t len, uint64_t pitch) {
    return count == 0 || len == 0 ? 0 : (count - 1) * pitch + len;
}

// DataCopyParams checks: returns false for the documented NOP (count/len 0).
inline bool check_copy_params(const DataCopyParams& p) {
    if (p.blockCount == 0 || p.blockLen == 0) return false;
    check_range("blockCount", p.blockCount, 1, 4095);
    return true;
}

}  // namespace sim_detail

// ---------------------------------------------------------------- DataCopy GM -> UB / L1

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    ASCSIM_API("DataCopy");
    ASCSIM_INSTR(ASCSIM_PIPE_MTE2);
    sim_detail::require_mem(dst, {ascsim::Mem::UB, ascsim::Mem::L1}, "GM -> destination");
    dst.require_aligned(32, "destination");
    sim_detail::require_gm_aligned(src.GetPhyAddr());
    uint64_t len = 0, pitch = 0;
    uint32_t count = 0;
    if (sim_detail::check_copy_params(p)) {
        count = p.blockCount;
        len = p.blockLen * 32ull;
        pitch = (p.blockLen + static_cast<uint64_t>(p.srcGap)) * 32ull;
        sim_detail::gm_to_local(dst, src.GetPhyAddr(), count, len, pitch, (p.blockLen + uint64_t(p.dstGap)) * 32ull);
    }
    ASCSIM_RECORD("DataCopy", ASCSIM_PIPE_MTE2, count, count * len, sim_detail::gm_u64(src.GetPhyAddr()),
                  sim_detail::gm_span(count, len, pitch), false);
}

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    ASCSIM_API("DataCopy");
    sim_detail::require_32b_length<T>(count);
    uint32_t blocks = static_cast<uint32_t>(count * sizeof(T) / 32);
    if (blocks > 65535) ascsim::fail("parameter out of range", "DataCopy: more than 65535 32-byte blocks");
    DataCopy(dst, src, DataCopyParams(1, static_cast<uint16_t>(blocks), 0, 0));
}

// ---------------------------------------------------------------- DataCopy UB -> GM

template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    ASCSIM_API("DataCopy");
    ASCSIM_INSTR(ASCSIM_PIPE_MTE3);
    sim_detail::require_mem(src, {ascsim::Mem::UB}, "source -> GM");
    src.require_aligned(32, "source");
    sim_detail::require_gm_aligned(dst.GetPhyAddr());
    uint64_t len = 0, pitch = 0;
    uint32_t count = 0;
    if (sim_detail::check_copy_params(p)) {
        count = p.blockCount;
        len = p.blockLen * 32ull;
        pitch = (p.blockLen + static_cast<uint64_t>(p.dstGap)) * 32ull;
        sim_detail::local_to_gm(dst.GetPhyAddr(), src, count, len, pitch, (p.blockLen + uint64_t(p.srcGap)) * 32ull);
    }
    ASCSIM_RECORD("DataCopy", ASCSIM_PIPE_MTE3, count, count * len, sim_detail::gm_u64(dst.GetPhyAddr()),
                  sim_detail::gm_span(count, len, pitch), true);
}

template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    ASCSIM_API("DataCopy");
    sim_detail::require_32b_length<T>(count);
    uint32_t blocks = static_cast<uint32_t>(count * sizeof(T) / 32);
    if (blocks > 65535) ascsim::fail("parameter out of range", "DataCopy: more than 65535 32-byte blocks");
    DataCopy(dst, src, DataCopyParams(1, static_cast<uint16_t>(blocks), 0, 0));
}

// ---------------------------------------------------------------- DataCopy UB -> UB

namespace sim_detail {

// L1 (C1) -> BiasTable (C2): blockLen and dstGap in 64 B units, srcGap in
// 32 B units (pipe MTE1). Bias elements are float or int32 (the Mmad
// accumulator types).
template <typename T>
void copy_l1_to_bt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    ASCSIM_INSTR(ASCSIM_PIPE_MTE1);
    if constexpr (!ascsim::one_of_v<T, float, int32_t>) {
        ascsim::unsupported_dtype<T>("DataCopy L1 -> BiasTable (float or int32 bias)");
    } else {
        dst.require_aligned(64, "destination (BiasTable)");
        src.require_aligned(32, "source");
        uint32_t count = 0;
        uint64_t len = 0;
        if (check_copy_params(p)) {
            count = p.blockCount;
            len = p.blockLen * 64ull;
            const uint64_t e = len / sizeof(T);
            for (uint32_t i = 0; i < count; ++i)
                std::memcpy(dst.span(i * (p.blockLen * 64ull + p.dstGap * 64ull) / sizeof(T), e, ascsim::Acc::Write),
                            src.span(i * (p.blockLen * 64ull + p.srcGap * 32ull) / sizeof(T), e, ascsim::Acc::Read),
                            len);
        }
        ASCSIM_RECORD("DataCopy", ASCSIM_PIPE_MTE1, count, count * len);
    }
}

}  // namespace sim_detail

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    ASCSIM_API("DataCopy");
    if (dst.sim_mem() == ascsim::Mem::BT && src.sim_mem() == ascsim::Mem::L1) {
        sim_detail::copy_l1_to_bt(dst, src, p);
        return;
    }
    ASCSIM_INSTR(ASCSIM_PIPE_V);
    sim_detail::require_mem(dst, {ascsim::Mem::UB}, "UB -> destination");
    sim_detail::require_mem(src, {ascsim::Mem::UB}, "source -> UB");
    dst.require_aligned(32, "destination");
    src.require_aligned(32, "source");
    uint32_t count = 0;
    uint64_t len = 0;
    if (sim_detail::check_copy_params(p)) {
        count = p.blockCount;
        len = p.blockLen * 32ull;
        const uint64_t e = len / sizeof(T);
        std::vector<T> tmp(e);
        for (uint32_t i = 0; i < count; ++i) {
            std::memcpy(tmp.data(),
                        src.span(i * (p.blockLen + uint64_t(p.srcGap)) * 32 / sizeof(T), e, ascsim::Acc::Read), len);
            std::memcpy(dst.span(i * (p.blockLen + uint64_t(p.dstGap)) * 32 / sizeof(T), e, ascsim::Acc::Write),
                        tmp.data(), len);
        }
    }
    ASCSIM_RECORD("DataCopy", ASCSIM_PIPE_V, count, count * len);
}

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    ASCSIM_API("DataCopy");
    sim_detail::require_32b_length<T>(count);
    uint32_t blocks = static_cast<uint32_t>(count * sizeof(T) / 32);
    if (blocks > 65535) ascsim::fail("parameter out of range", "DataCopy: more than 65535 32-byte blocks");
    DataCopy(dst, src, DataCopyParams(1, static_cast<uint16_t>(blocks), 0, 0));
}

// ---------------------------------------------------------------- DataCopyPad

namespace sim_detail {

// GM -> UB: block i of blockLen bytes from gm + i*(blockLen + gmGap) lands at
// a 32 B-aligned UB slot of ceil32(left + blockLen + right) bytes followed by
// ubGapBlocks*32 bytes. Padding elements get `value` when isPad; every other
// filler element of the slot repeats the block's first element.
template <typename T>
void pad_gm_to_ub(const LocalTensor<T>& dst, const T* gm, uint32_t count, uint64_t blockLen, uint64_t gmGap,
                  uint64_t ubGapBlocks, bool isPad, uint32_t left, uint32_t right, T value) {
    ASCSIM_INSTR(ASCSIM_PIPE_MTE2);
    require_mem(dst, {ascsim::Mem::UB}, "GM -> destination (DataCopyPad to L1 is not supported on A2)");
    dst.require_aligned(32, "destination");
    require_gm_aligned(gm);
    uint64_t total = 0;
    if (count != 0 && blockLen != 0) {
        check_range("blockCount", count, 1, 4095);
        check_range("blockLen", blockLen, 1, 2097151);
        if (blockLen % sizeof(T) != 0)
            ascsim::fail("parameter out of range",
                         ascsim::fmt("DataCopyPad: blockLen %llu bytes is not a multiple of sizeof(%s)",
                                     (unsigned long long)blockLen, ascsim::type_name<T>()));
        check_range("leftPadding bytes", left * sizeof(T), 0, 32);
        check_range("rightPadding bytes", right * sizeof(T), 0, 32);
        const uint64_t n = blockLen / sizeof(T);
        const uint64_t slot = ceil32((left + right) * sizeof(T) + blockLen) / sizeof(T);
        const uint64_t pitch = slot + ubGapBlocks * 32 / sizeof(T);
        // Filler (the docs): with no padding asked, the dummy up to 32 bytes
        // repeats the block's first element; with padding, padding and dummy
        // are paddingValue when isPad, else undefined (poisoned here).
        const bool padded = left != 0 || right != 0;
        for (uint32_t i = 0; i < count; ++i) {
            T* d = dst.span(i * pitch, slot, ascsim::Acc::Write);
            ascsim::gm_dma_load(d + left, reinterpret_cast<const uint8_t*>(gm) + i * (blockLen + gmGap), blockLen);
            const T first = d[left];
            for (uint64_t e = 0; e < slot; ++e) {
                if (e >= left && e < left + n) continue;
                if (!padded) d[e] = first;
                else if (isPad) d[e] = value;
                else ascsim::poison(d + e, sizeof(T));
            }
        }
        total = count * blockLen;
    }
    ASCSIM_RECORD("DataCopyPad", ASCSIM_PIPE_MTE2, count, total, gm_u64(gm),
                  total ? gm_span(count, blockLen, blockLen + gmGap) : 0, false);
}

// UB -> GM: block i of blockLen bytes from UB slot i (ceil32(blockLen) bytes +
// ubGapBlocks*32) to gm + i*(blockLen + gmGap); only blockLen bytes written.
template <typename T>
void pad_ub_to_gm(T* gm, const LocalTensor<T>& src, uint32_t count, uint64_t blockLen, uint64_t gmGap,
                  uint64_t ubGapBlocks) {
    ASCSIM_INSTR(ASCSIM_PIPE_MTE3);
    require_mem(src, {ascsim::Mem::UB}, "source -> GM");
    src.require_aligned(32, "source");
    require_gm_aligned(gm);
    uint64_t total = 0;
    if (count != 0 && blockLen != 0) {
        check_range("blockCount", count, 1, 4095);
        check_range("blockLen", blockLen, 1, 2097151);
        if (blockLen % sizeof(T) != 0)
            ascsim::fail("parameter out of range",
                         ascsim::fmt("DataCopyPad: blockLen %llu bytes is not a multiple of sizeof(%s)",
                                     (unsigned long long)blockLen, ascsim::type_name<T>()));
        local_to_gm(gm, src, count, blockLen, blockLen + gmGap, ceil32(blockLen) + ubGapBlocks * 32);
        total = count * blockLen;
    }
    ASCSIM_RECORD("DataCopyPad", ASCSIM_PIPE_MTE3, count, total, gm_u64(gm),
                  total ? gm_span(count, blockLen, blockLen + gmGap) : 0, true);
}

}  // namespace sim_detail

template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad) {
    ASCSIM_API("DataCopyPad");
    sim_detail::pad_gm_to_ub(dst, src.GetPhyAddr(), p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad,
                             pad.leftPadding, pad.rightPadding, pad.paddingValue);
}

template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                                   const DataCopyPadParams& pad) {
    ASCSIM_API("DataCopyPad");
    sim_detail::pad_gm_to_ub(dst, src.GetPhyAddr(), p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad,
                             pad.leftPadding, pad.rightPadding, static_cast<T>(pad.paddingValue));
}

template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& p) {
    ASCSIM_API("DataCopyPad");
    sim_detail::pad_ub_to_gm(dst.GetPhyAddr(), src, p.blockCount, p.blockLen, p.dstStride, p.srcStride);
}

template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    ASCSIM_API("DataCopyPad");
    sim_detail::pad_ub_to_gm(dst.GetPhyAddr(), src, p.blockCount, p.blockLen, p.dstStride, p.srcStride);
}

// ---------------------------------------------------------------- DataCopy GM -> L1 with ND -> NZ

// Matrix i, row r, column c of the ND source (element i*srcNdMatrixStride +
// r*srcDValue + c) goes to element i*dstNzMatrixStride +
// (c/C0)*dstNzC0Stride*C0 + r*dstNzNStride*C0 + c%C0 with C0 = 32/sizeof(T).
// The tail of the last column block is zero-filled; rows past nValue are not
// written.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
    ASCSIM_API("DataCopy(Nd2Nz)");
    ASCSIM_INSTR(ASCSIM_PIPE_MTE2);
    if constexpr (!ascsim::one_of_v<T, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, half, bfloat16_t,
                                    float>) {
        ascsim::unsupported_dtype<T>("DataCopy(Nd2Nz)");
    } else {
        sim_detail::require_mem(dst, {ascsim::Mem::L1}, "GM -> destination (Nd2Nz)");
        dst.require_aligned(32, "destination");
        constexpr uint64_t C0 = 32 / sizeof(T);
        const T* gm = src.GetPhyAddr();
        uint64_t rows = 0, span = 0;
        if (p.ndNum != 0 && p.nValue != 0 && p.dValue != 0) {
            sim_detail::check_range("ndNum", p.ndNum, 1, 4095);
            sim_detail::check_range("nValue", p.nValue, 1, 16384);
            sim_detail::check_range("dstNzC0Stride", p.dstNzC0Stride, 1, 16384);
            sim_detail::check_range("dstNzNStride", p.dstNzNStride, 1, 16384);
            const uint64_t dpad = (p.dValue + C0 - 1) / C0 * C0;
            std::vector<T> row(dpad, T(0));
            for (uint64_t i = 0; i < p.ndNum; ++i) {
                for (uint64_t r = 0; r < p.nValue; ++r) {
                    ascsim::gm_dma_load(row.data(), gm + i * p.srcNdMatrixStride + r * p.srcDValue,
                                        p.dValue * sizeof(T));
                    for (uint64_t c1 = 0; c1 < dpad / C0; ++c1) {
                        T* d = dst.span(i * p.dstNzMatrixStride + c1 * p.dstNzC0Stride * C0 + r * p.dstNzNStride * C0,
                                        C0, ascsim::Acc::Write);
                        std::memcpy(d, row.data() + c1 * C0, C0 * sizeof(T));
                    }
                }
            }
            rows = uint64_t(p.ndNum) * p.nValue;
            span = ((p.ndNum - 1) * uint64_t(p.srcNdMatrixStride) + (p.nValue - 1) * uint64_t(p.srcDValue) +
                    p.dValue) *
                   sizeof(T);
        }
        ASCSIM_RECORD("DataCopy(Nd2Nz)", ASCSIM_PIPE_MTE2, static_cast<uint32_t>(rows), rows * p.dValue * sizeof(T),
                      sim_detail::gm_u64(gm), span, false);
    }
}

}  // namespace AscendC
