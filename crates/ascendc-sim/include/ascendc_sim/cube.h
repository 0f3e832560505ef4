// ascendc_sim/cube.h: the cube unit of an AIC: LoadData (L1 -> L0A/L0B),
// Mmad (L0A x L0B -> L0C) and Fixpipe (L0C -> GM) (ascendc-api.md 3.5-3.7, 4).
// Written from the documented semantics; no vendor code.
//
// Layouts on A2 (K0 = 32 / sizeof(input), M1/N1 = ceil(m|n / 16), K1 = ceil(k / K0)):
//   L0A Zz: A(m,k) at ((m/16)*K1 + k/K0)*16*K0 + (m%16)*K0 + k%K0  (m == 1: plain ND, A(0,k) at k)
//   L0B Zn: B(k,n) at ((k/K0)*N1 + n/16)*16*K0 + (n%16)*K0 + k%K0
//   L0C Nz: C(m,n) at (n/16)*M1*16*16 + m*16 + n%16 (16x16 fractals of the 32-bit accumulator)
#pragma once

#include <algorithm>

#include "ascendc_sim/datacopy.h"

// Fixpipe quantisation modes: a global unscoped enum as in the CCE toolchain.
enum QuantMode_t {
    NoQuant = 0,
    F322F16,
    F322BF16,
    DEQF16,
    VDEQF16,
    QF322B8_PRE,
    VQF322B8_PRE,
    REQ8,
    VREQ8
};

namespace AscendC {

// ---------------------------------------------------------------- parameter structs

struct LoadData2DParams {
    __aicore__ LoadData2DParams() {}
    // Constructor order differs from the member order (fact 14).
    __aicore__ LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                                const uint8_t sidIn, const uint16_t dstGapIn, const bool ifTransposeIn,
                                const uint8_t addrModeIn)
        : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
          repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = false;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};

struct LoadData2dTransposeParams {
    __aicore__ LoadData2dTransposeParams() {}
    __aicore__ LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn,
                                         const uint16_t srcStrideIn, const uint16_t dstGapIn,
                                         const uint16_t dstFracGapIn, const uint8_t addrModeIn = 0)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstFracGapIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};

struct MmadParams {
    __aicore__ MmadParams() {}
    __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn,
                          const int32_t fmOffsetIn, const bool enSsparseIn, const bool enWinogradAIn,
                          const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
    __aicore__ MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
                          const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
};

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
    __aicore__ FixpipeParamsV220() {}
    __aicore__ FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                                 const uint32_t dstStrideIn, const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    __aicore__ FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                                 const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                                 const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                                 const uint16_t dstNdStrideIn, const uint8_t unitFlagIn,
                                 const bool isChannelSplitIn = false)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(static_cast<uint64_t>(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn),
          dstNdStride(dstNdStrideIn), reluEn(reluEnIn), unitFlag(unitFlagIn), isChannelSplit(isChannelSplitIn) {}
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};

// ---------------------------------------------------------------- fractal helpers

namespace sim_cube {

constexpr uint64_t kFracBytes = 512;

// Element offsets of the A2 cube layouts (see the file comment).
inline uint64_t zz_index(uint64_t m, uint64_t k, uint64_t K1, uint64_t K0) {
    return ((m / 16) * K1 + k / K0) * 16 * K0 + (m % 16) * K0 + k % K0;
}
inline uint64_t zn_index(uint64_t k, uint64_t n, uint64_t N1, uint64_t K0) {
    return ((k / K0) * N1 + n / 16) * 16 * K0 + (n % 16) * K0 + k % K0;
}
inline uint64_t nz_index(uint64_t m, uint64_t n, uint64_t M1) { return (n / 16) * M1 * 256 + m * 16 + n % 16; }
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The trace attr naming the L0 buffer an MTE1/MTE2 load fills (for the cost
// model: L1 -> L0A and L1 -> L0B have different documented rates).
inline uint8_t l0_attr(ascsim::Mem m) {
    return m == ascsim::Mem::L0A ? ASCSIM_ATTR_L0A : m == ascsim::Mem::L0B ? ASCSIM_ATTR_L0B : ASCSIM_ATTR_NONE;
}

// Input element -> accumulator type (exact for all A2 combinations).
template <typename T, typename U>
T widen(U v) {
    if constexpr (std::is_same_v<T, int32_t>) return static_cast<T>(v);
    else return static_cast<T>(static_cast<float>(v));
}

// Copies one 512 B fractal, optionally transposing it as a 16x16 matrix.
template <typename T>
void copy_fractal(T* d, const T* s, bool transpose) {
    if (!transpose) {
        std::memcpy(d, s, kFracBytes);
        return;
    }
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) d[r * 16 + c] = s[c * 16 + r];
}

}  // namespace sim_cube

// ---------------------------------------------------------------- InitConstValue

template <typename T>
struct InitConstValueParams {
    __aicore__ InitConstValueParams() {}
    __aicore__ InitConstValueParams(const uint16_t repeatTimesIn, const uint16_t blockNumIn, const uint16_t dstGapIn,
                                    const T initValueIn)
        : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
    __aicore__ InitConstValueParams(const uint16_t repeatTimesIn, const T initValueIn)
        : repeatTimes(repeatTimesIn), initValue(initValueIn) {}
    uint16_t repeatTimes = 0;
    uint16_t blockNum = 0;
    uint16_t dstGap = 0;
    T initValue = 0;
};

// Fills L1 (A1/B1: 32 B blocks) or L0A/L0B (A2/B2: 512 B blocks): repeat i
// writes blockNum blocks starting at block i*(blockNum + dstGap).
template <typename T, typename U>
__aicore__ inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<U>& p) {
    ASCSIM_API("InitConstValue");
    static_assert(std::is_same_v<T, U>, "InitConstValue: the value type must be the tensor type");
    if constexpr (!ascsim::one_of_v<T, half, int16_t, uint16_t, bfloat16_t, float, int32_t, uint32_t>) {
        ascsim::unsupported_dtype<T>("InitConstValue");
    } else {
        sim_detail::require_mem(dst, {ascsim::Mem::L1, ascsim::Mem::L0A, ascsim::Mem::L0B}, "destination");
        const bool l1 = dst.sim_mem() == ascsim::Mem::L1;
        dst.require_aligned(l1 ? 32 : 512, "destination");
        sim_detail::check_range("repeatTimes", p.repeatTimes, 0, 32767);
        sim_detail::check_range("blockNum", p.blockNum, 0, 32767);
        sim_detail::check_range("dstGap", p.dstGap, 0, 32767);
        const uint64_t blk = (l1 ? 32 : 512) / sizeof(T);
        ASCSIM_INSTR(l1 ? ASCSIM_PIPE_MTE2 : ASCSIM_PIPE_MTE1);
        for (uint64_t i = 0; i < p.repeatTimes; ++i) {
            T* d = dst.span(i * (uint64_t(p.blockNum) + p.dstGap) * blk, p.blockNum * blk, ascsim::Acc::Write);
            for (uint64_t e = 0; e < p.blockNum * blk; ++e) d[e] = p.initValue;
        }
        ASCSIM_RECORD("InitConstValue", l1 ? ASCSIM_PIPE_MTE2 : ASCSIM_PIPE_MTE1, p.repeatTimes,
                      uint64_t(p.repeatTimes) * p.blockNum * blk * sizeof(T), 0, 0, false,
                      sim_cube::l0_attr(dst.sim_mem()));
    }
}

// ---------------------------------------------------------------- LoadData

// 2D mode: repeat i copies the 512 B fractal startIndex + i*srcStride of src
// (start-to-start) to fractal i*(dstGap+1) of dst (dstGap end-to-start).
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p) {
    ASCSIM_API("LoadData");
    ASCSIM_INSTR(ASCSIM_PIPE_MTE1);
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "LoadData: 8/16/32-bit element types only");
    sim_detail::require_mem(dst, {ascsim::Mem::L0A, ascsim::Mem::L0B}, "L1 -> destination");
    sim_detail::require_mem(src, {ascsim::Mem::L1}, "source -> L0A/L0B");
    dst.require_aligned(512, "destination");
    src.require_aligned(32, "source");
    if (p.ifTranspose && sizeof(T) != 2) ascsim::unsupported_dtype<T>("LoadData with ifTranspose (16-bit only)");
    constexpr uint64_t E = sim_cube::kFracBytes / sizeof(T);
    for (uint64_t i = 0; i < p.repeatTimes; ++i) {
        int64_t sf = p.addrMode == 0 ? int64_t(p.startIndex) + int64_t(i * p.srcStride)
                                     : int64_t(p.startIndex) - int64_t(i * p.srcStride);
        if (sf < 0) ascsim::fail("access beyond tensor", "LoadData: decreasing source fractal index below 0");
        const T* s = src.span(uint64_t(sf) * E, E, ascsim::Acc::Read);
        sim_cube::copy_fractal(dst.span(i * (p.dstGap + 1ull) * E, E, ascsim::Acc::Write), s, p.ifTranspose);
    }
    ASCSIM_RECORD("LoadData", ASCSIM_PIPE_MTE1, p.repeatTimes, p.repeatTimes * sim_cube::kFracBytes, 0, 0, false,
                  sim_cube::l0_attr(dst.sim_mem()));
}

// GM source (pipe MTE2): same fractal walk over 512 B fractals of GM; addrMode
// 1 walks the source backwards. No transpose on this path.
template <typename T>
__aicore__ inline void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& p) {
    ASCSIM_API("LoadData");
    ASCSIM_INSTR(ASCSIM_PIPE_MTE2);
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "LoadData: 8/16/32-bit element types only");
    sim_detail::require_mem(dst, {ascsim::Mem::L1, ascsim::Mem::L0A, ascsim::Mem::L0B}, "GM -> destination");
    dst.require_aligned(dst.sim_mem() == ascsim::Mem::L1 ? 32 : 512, "destination");
    if (p.ifTranspose) ascsim::fail("unsupported feature", "LoadData: ifTranspose is only available from L1");
    constexpr uint64_t E = sim_cube::kFracBytes / sizeof(T);
    const T* gm = src.GetPhyAddr();
    int64_t lo = p.startIndex, hi = p.startIndex;
    for (uint64_t i = 0; i < p.repeatTimes; ++i) {
        int64_t sf = p.addrMode == 0 ? int64_t(p.startIndex) + int64_t(i * p.srcStride)
                                     : int64_t(p.startIndex) - int64_t(i * p.srcStride);
        lo = std::min(lo, sf);
        hi = std::max(hi, sf);
        ascsim::gm_dma_load(dst.span(i * (p.dstGap + 1ull) * E, E, ascsim::Acc::Write), gm + sf * int64_t(E),
                            sim_cube::kFracBytes);
    }
    const uint64_t first = sim_detail::gm_u64(gm + lo * int64_t(E));
    ASCSIM_RECORD("LoadData", ASCSIM_PIPE_MTE2, p.repeatTimes, p.repeatTimes * sim_cube::kFracBytes,
                  p.repeatTimes ? first : 0, p.repeatTimes ? uint64_t(hi - lo + 1) * sim_cube::kFracBytes : 0, false,
                  sim_cube::l0_attr(dst.sim_mem()));
}

// LoadDataWithTranspose (L1 -> L0A/L0B). 16-bit: repeat i transposes the
// 16x16 fractal startIndex + i*srcStride into fractal i*(dstGap+1). 8-bit:
// repeat i takes the 32x32 square (two consecutive 16x32 fractals, 1 KB)
// startIndex + i*srcStride, transposes it and writes its upper half to fractal
// i*(dstGap+1) and its lower half dstFracGap fractals after that one.
// 32-bit (two merged 16x8 fractals) is not simulated: the documented merge
// order is ambiguous.
template <typename T>
__aicore__ inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                             const LoadData2dTransposeParams& p) {
    ASCSIM_API("LoadDataWithTranspose");
    ASCSIM_INSTR(ASCSIM_PIPE_MTE1);
    if constexpr (!ascsim::one_of_v<T, int8_t, uint8_t, half, bfloat16_t>) {
        if constexpr (ascsim::one_of_v<T, float, int32_t, uint32_t>)
            ascsim::fail("unsupported feature", "LoadDataWithTranspose of 32-bit types is not simulated");
        else
            ascsim::unsupported_dtype<T>("LoadDataWithTranspose");
    } else {
        sim_detail::require_mem(dst, {ascsim::Mem::L0A, ascsim::Mem::L0B}, "L1 -> destination");
        sim_detail::require_mem(src, {ascsim::Mem::L1}, "source -> L0A/L0B");
        dst.require_aligned(512, "destination");
        src.require_aligned(32, "source");
        constexpr uint64_t E = sim_cube::kFracBytes / sizeof(T);  // elements per fractal
        constexpr uint64_t S = sizeof(T) == 1 ? 32 : 16;         // square side
        std::vector<T> sq(S * S);
        for (uint64_t i = 0; i < p.repeatTimes; ++i) {
            int64_t si = p.addrMode == 0 ? int64_t(p.startIndex) + int64_t(i * p.srcStride)
                                         : int64_t(p.startIndex) - int64_t(i * p.srcStride);
            if (si < 0) ascsim::fail("access beyond tensor", "LoadDataWithTranspose: source index below 0");
            const T* s = src.span(uint64_t(si) * S * S, S * S, ascsim::Acc::Read);
            for (uint64_t r = 0; r < S; ++r)
                for (uint64_t c = 0; c < S; ++c) sq[r * S + c] = s[c * S + r];
            const uint64_t d0 = i * (p.dstGap + 1ull);
            std::memcpy(dst.span(d0 * E, E, ascsim::Acc::Write), sq.data(), sim_cube::kFracBytes);
            if (S == 32)
                std::memcpy(dst.span((d0 + 1 + p.dstFracGap) * E, E, ascsim::Acc::Write), sq.data() + E,
                            sim_cube::kFracBytes);
        }
        ASCSIM_RECORD("LoadDataWithTranspose", ASCSIM_PIPE_MTE1, p.repeatTimes,
                      p.repeatTimes * S * S * sizeof(T), 0, 0, false, sim_cube::l0_attr(dst.sim_mem()));
    }
}

// ---------------------------------------------------------------- Mmad

// C[m][n] = init + sum_k A[m][k]*B[k][n], accumulated in the destination type
// in k order. init = 0 when cmatrixInitVal (default), else the current L0C
// value (cmatrixSource=false).
namespace sim_cube {
template <typename T, typename U, typename S>
void mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter, const T* bias,
          const MmadParams& p) {
    constexpr bool ok = (std::is_same_v<T, float> && std::is_same_v<U, half> && std::is_same_v<S, half>) ||
                        (std::is_same_v<T, float> && std::is_same_v<U, bfloat16_t> && std::is_same_v<S, bfloat16_t>) ||
                        (std::is_same_v<T, float> && std::is_same_v<U, float> && std::is_same_v<S, float>) ||
                        (std::is_same_v<T, int32_t> && std::is_same_v<U, int8_t> && std::is_same_v<S, int8_t>);
    if constexpr (!ok) {
        ascsim::fail("unsupported dtype on A2",
                     ascsim::fmt("Mmad %s x %s -> %s is not a cube dtype combination of Atlas A2 (half/bf16/float "
                                 "-> float, int8 -> int32)",
                                 ascsim::type_name<U>(), ascsim::type_name<S>(), ascsim::type_name<T>()));
    } else {
        sim_detail::require_mem(dst, {ascsim::Mem::L0C}, "destination");
        sim_detail::require_mem(fm, {ascsim::Mem::L0A}, "fm (left matrix)");
        sim_detail::require_mem(filter, {ascsim::Mem::L0B}, "filter (right matrix)");
        dst.require_aligned(1024, "destination");
        fm.require_aligned(512, "fm");
        filter.require_aligned(512, "filter");
        sim_detail::check_range("m", p.m, 0, 4095);
        sim_detail::check_range("n", p.n, 0, 4095);
        sim_detail::check_range("k", p.k, 0, 4095);
        constexpr uint64_t K0 = 32 / sizeof(U);
        const uint64_t M = p.m, N = p.n, K = p.k;
        const uint64_t M1 = sim_cube::ceil_div(M, 16), N1 = sim_cube::ceil_div(N, 16);
        const uint64_t K1 = sim_cube::ceil_div(K, K0);
        // float inputs with kDirectionAlign pad K to 16 (two 8-deep fractals).
        const uint64_t K1a = (std::is_same_v<U, float> && p.kDirectionAlign) ? sim_cube::ceil_div(K, 16) * 2 : K1;
        if (M != 0 && N != 0 && K != 0) {
            if (!bias && p.cmatrixSource && !p.cmatrixInitVal)
                ascsim::fail("unsupported feature", "Mmad: bias from C2 (cmatrixSource=true) is not simulated");
            const bool gemv = M == 1;
            const bool accumulate = !bias && (p.isBias || !p.cmatrixInitVal);
            const U* a = fm.span(0, gemv ? K : M1 * K1a * 16 * K0, ascsim::Acc::Read);
            const S* b = filter.span(0, K1 * N1 * 16 * K0, ascsim::Acc::Read);
            T* c = dst.span(0, N1 * M1 * 256, accumulate ? ascsim::Acc::ReadWrite : ascsim::Acc::Write);
            // Gather A (row-major MxK) and B (column-major KxN) in the
            // accumulator type, then accumulate in k order.
            std::vector<T> ad(M * K), bd(N * K);
            for (uint64_t m = 0; m < M; ++m)
                for (uint64_t k = 0; k < K; ++k)
                    ad[m * K + k] = sim_cube::widen<T>(a[gemv ? k : sim_cube::zz_index(m, k, K1a, K0)]);
            for (uint64_t n = 0; n < N; ++n)
                for (uint64_t k = 0; k < K; ++k) bd[n * K + k] = sim_cube::widen<T>(b[sim_cube::zn_index(k, n, N1, K0)]);
            for (uint64_t m = 0; m < M; ++m) {
                for (uint64_t n = 0; n < N; ++n) {
                    T& out = c[sim_cube::nz_index(m, n, M1)];
                    T acc = bias ? bias[n] : accumulate ? out : T(0);
                    const T* ar = &ad[m * K];
                    const T* bc = &bd[n * K];
                    for (uint64_t k = 0; k < K; ++k) acc += ar[k] * bc[k];
                    out = acc;
                }
            }
        }
        // attr: the input element size, which sets the cube rate (trace only).
        ASCSIM_RECORD("Mmad", ASCSIM_PIPE_M, static_cast<uint32_t>(M1 * N1 * K1),
                      (M1 * K1 + K1 * N1) * sim_cube::kFracBytes, 0, 0, false, static_cast<uint8_t>(sizeof(U)));
    }
}
}  // namespace sim_cube

template <typename T, typename U, typename S>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const MmadParams& p) {
    ASCSIM_API("Mmad");
    // Accumulating into L0C after an earlier Mmad needs PipeBarrier<PIPE_M>
    // unless (m/16)*(n/16) >= 10: then the hardware orders them (the Mmad docs).
    ASCSIM_INSTR(ASCSIM_PIPE_M, (p.m / 16) * (p.n / 16) >= 10);
    sim_cube::mmad(dst, fm, filter, static_cast<const T*>(nullptr), p);
}

// Bias form: C[m][n] = bias[n] + sum_k A[m][k]*B[k][n]; bias (C2, BiasTable)
// has the destination type; cmatrixSource/cmatrixInitVal are ignored.
template <typename T, typename U, typename S, typename V>
__aicore__ inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                            const LocalTensor<V>& bias, const MmadParams& p) {
    ASCSIM_API("Mmad");
    ASCSIM_INSTR(ASCSIM_PIPE_M, (p.m / 16) * (p.n / 16) >= 10);
    if constexpr (!std::is_same_v<T, V>) {
        ascsim::fail("unsupported dtype on A2", ascsim::fmt("Mmad bias of %s must have the destination type %s",
                                                            ascsim::type_name<V>(), ascsim::type_name<T>()));
    } else {
        sim_detail::require_mem(bias, {ascsim::Mem::BT}, "bias");
        bias.require_aligned(64, "bias");
        sim_cube::mmad(dst, fm, filter,
                       p.m && p.n && p.k ? bias.span(0, p.n, ascsim::Acc::Read) : static_cast<const T*>(nullptr), p);
    }
}

// ---------------------------------------------------------------- Fixpipe

namespace sim_cube {

// Converts one L0C value for the quant mode; fails for mismatched types.
template <typename T, typename U>
T fixpipe_convert(U v, bool relu) {
    if (relu && v < U(0)) v = U(0);
    return static_cast<T>(v);
}

template <typename T, typename U>
void check_quant(QuantMode_t q) {
    bool ok = false;
    switch (q) {
        case NoQuant: ok = std::is_same_v<T, U>; break;
        case F322F16: ok = std::is_same_v<U, float> && std::is_same_v<T, half>; break;
        case F322BF16: ok = std::is_same_v<U, float> && std::is_same_v<T, bfloat16_t>; break;
        default:
            ascsim::fail("unsupported feature",
                         ascsim::fmt("Fixpipe quant mode %d (scale-based quantisation) is not simulated", int(q)));
    }
    if (!ok)
        ascsim::fail("Fixpipe quant mode mismatch",
                     ascsim::fmt("Fixpipe: quantPre %d does not convert %s (L0C) to %s (GM); set quantPre explicitly "
                                 "(F322F16 for float -> half)",
                                 int(q), ascsim::type_name<U>(), ascsim::type_name<T>()));
}

}  // namespace sim_cube

// L0C (Nz) -> GM. CFG_ROW_MAJOR (default): gm[m*dstStride + n] =
// convert(l0c[(n/16)*srcStride*16 + m*16 + n%16]); matrix j of ndNum reads at
// j*srcNdStride*256 and writes at j*dstNdStride elements. CFG_NZ keeps the Nz
// layout: row m of column block n1 goes to byte n1*dstStride*32 + m*16*sizeof(T).
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
__aicore__ inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p) {
    ASCSIM_API("Fixpipe");
    ASCSIM_INSTR(ASCSIM_PIPE_FIX);
    if constexpr (!ascsim::one_of_v<U, float, int32_t>) {
        ascsim::unsupported_dtype<U>("Fixpipe source (L0C holds float or int32)");
    } else {
        sim_detail::require_mem(src, {ascsim::Mem::L0C}, "source -> GM");
        src.require_aligned(64, "source");
        sim_cube::check_quant<T, U>(p.quantPre);
        const bool nz = config.format == CO2Layout::NZ;
        if (config.format == CO2Layout::COLUMN_MAJOR)
            ascsim::fail("unsupported feature", "Fixpipe: CFG_COLUMN_MAJOR is not available on Atlas A2");
        T* gm = dst.GetPhyAddr();
        if (nz) {
            if (reinterpret_cast<uintptr_t>(gm) % 32 != 0)
                ascsim::fail("misaligned address", "Fixpipe with CFG_NZ: GM destination must be 32-byte aligned");
        } else {
            sim_detail::require_gm_aligned(gm);
        }
        uint64_t rows = 0, bytes = 0, span = 0;
        if (p.nSize != 0 && p.mSize != 0 && p.ndNum != 0) {
            sim_detail::check_range("nSize", p.nSize, 1, 4095);
            sim_detail::check_range("mSize", p.mSize, 1, 8192);
            if (nz && p.nSize % 16 != 0)
                ascsim::fail("parameter out of range", ascsim::fmt("Fixpipe CFG_NZ: nSize %u is not a multiple of 16",
                                                                   p.nSize));
            const uint64_t ncols = nz ? 16 : p.nSize;  // elements per GM burst
            const uint64_t nblk = nz ? p.nSize / 16 : 1;
            // Furthest L0C element read, for one bound check.
            uint64_t last = 0;
            for (uint64_t n = 0; n < p.nSize; ++n)
                last = std::max<uint64_t>(last, (n / 16) * p.srcStride * 16 + n % 16);
            last += (p.ndNum - 1) * uint64_t(p.srcNdStride) * 256 + (p.mSize - 1) * 16;
            const U* l0c = src.span(0, last + 1, ascsim::Acc::Read);
            std::vector<T> row(ncols);
            for (uint64_t j = 0; j < p.ndNum; ++j) {
                const U* mat = l0c + j * uint64_t(p.srcNdStride) * 256;
                for (uint64_t b = 0; b < nblk; ++b) {
                    for (uint64_t m = 0; m < p.mSize; ++m) {
                        for (uint64_t c = 0; c < ncols; ++c) {
                            const uint64_t n = b * 16 + c;
                            row[c] = sim_cube::fixpipe_convert<T>(mat[(n / 16) * p.srcStride * 16 + m * 16 + n % 16],
                                                                  p.reluEn);
                        }
                        const uint64_t off = j * uint64_t(p.dstNdStride) +
                                             (nz ? b * p.dstStride * 32 / sizeof(T) + m * 16 : m * p.dstStride);
                        ascsim::gm_dma_store(gm + off, row.data(), ncols * sizeof(T));
                        span = std::max<uint64_t>(span, (off + ncols) * sizeof(T));
                        ++rows;
                    }
                }
            }
            bytes = rows * ncols * sizeof(T);
        }
        ASCSIM_RECORD("Fixpipe", ASCSIM_PIPE_FIX, static_cast<uint32_t>(rows), bytes, sim_detail::gm_u64(gm), span,
                      true);
    }
}

}  // namespace AscendC
