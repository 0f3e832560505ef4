// ascendc_sim/vector.h: the vector unit (AIV, pipe V) of the ascend-scan CPU
// simulator: mask register, element-wise arithmetic, Cast, Compare/Select,
// bit ops, reductions, Gather/GatherMask. Semantics follow
// the AscendC vector API as docs/simulator.md describes it; written from the
// documented behaviour, no vendor code.
//
// Every API runs through one repeat/mask iterator (ascsim::vec): element e of
// repeat r of an operand lives at
//   base + (r*repStride + (e/epb)*blkStride)*32 B + (e%epb)*sizeof(T)
// with epb = 32/sizeof(T). Normal mode: repeatTime repeats, the 128-bit mask
// selects elements of every repeat. Counter mode: the low mask word is the
// total element count, repeats are derived.
//
// Choices where the documentation is silent (kept deliberately simple):
// - Compare/CompareScalar repeat forms write the result bits packed by repeat
//   (dst block/repeat strides are not applied).
// - Overflow of Cast saturates (float -> half gives +-65504, integers clamp),
//   following the documented default saturation mode; inf/NaN pass through,
//   NaN -> integer gives 0. Element-wise half arithmetic is IEEE (may give inf).
// - Reductions treat masked-off elements as absent (sum: 0 in the tree).
// - GatherMask built-in patterns select by the element index inside a repeat;
//   a user pattern for repeat r starts at src1 + r * src1RepeatStride * 32 B.
// - Mask setters and the trace: SetMaskNorm/SetMaskCount/SetVectorMask/
//   ResetMask record a pipe-V event with 0 repeats and 0 bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cfloat>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "ascendc_sim/tensor.h"

namespace AscendC {

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };
enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;

constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

struct UnaryRepeatParams {
    __aicore__ UnaryRepeatParams() {}
    __aicore__ UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn,
                                 uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    __aicore__ UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn,
                                 uint8_t srcRepStrideIn, bool halfBlockIn)
        : UnaryRepeatParams(dstBlkStrideIn, srcBlkStrideIn, dstRepStrideIn, srcRepStrideIn) {
        halfBlock = halfBlockIn;
    }
    uint32_t blockNumber = 8;
    uint16_t dstBlkStride = 1;
    uint16_t srcBlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t srcRepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
    bool halfBlock = false;
};

struct BinaryRepeatParams {
    __aicore__ BinaryRepeatParams() {}
    __aicore__ BinaryRepeatParams(uint8_t dstBlkStrideIn, uint8_t src0BlkStrideIn, uint8_t src1BlkStrideIn,
                                  uint8_t dstRepStrideIn, uint8_t src0RepStrideIn, uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint32_t blockNumber = 8;
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct GatherMaskParams {
    __aicore__ GatherMaskParams() {}
    __aicore__ GatherMaskParams(uint8_t src0BlockStrideIn, uint16_t repeatTimesIn, uint16_t src0RepeatStrideIn,
                                uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = 8;
    uint8_t src1RepeatStride = 8;
};

struct BrcbRepeatParams {
    __aicore__ BrcbRepeatParams() {}
    __aicore__ BrcbRepeatParams(uint16_t dstBlkStrideIn, uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
};

}  // namespace AscendC

// ---------------------------------------------------------------- engine

namespace ascsim {
namespace vec {

using AscendC::LocalTensor;

// Entry of every vector API: diagnostics name; no-op on a cube core; one
// instruction of pipe V.
#define ASCSIM_VEC(name)                                                  \
    ASCSIM_API(name);                                                     \
    if (::ascsim::core().kind == ::ascsim::CoreKind::AIC) return;         \
    ASCSIM_INSTR(ASCSIM_PIPE_V)

// What vector max and min (Max, Min, Maxs, Mins, ReduceMax/Min,
// WholeReduceMax/Min, BlockReduceMax/Min) make of a NaN: no A2 document says. The simulator
// takes one of two answers, ASCSIM_NAN_MAXMIN=propagate (the default: a NaN
// wins, a reduction gives the first NaN) or =ignore (a NaN loses to any
// number; all NaN gives the first), and the kernels' tests pass under both
// (docs/simulator.md): a kernel must not rely on either.
enum class NanMaxMin : uint8_t { Propagate, Ignore };
inline NanMaxMin nan_maxmin() {
    static const NanMaxMin mode = [] {
        const char* v = std::getenv("ASCSIM_NAN_MAXMIN");
        return v != nullptr && std::string(v) == "ignore" ? NanMaxMin::Ignore : NanMaxMin::Propagate;
    }();
    return mode;
}
// Whether `a` takes the place of `b` as the maximum (`is_max`) or minimum.
template <class W>
inline bool beats(W a, W b, bool is_max) {
    if constexpr (std::is_floating_point_v<W>) {
        const bool na = std::isnan(a), nb = std::isnan(b);
        if (na || nb) return nan_maxmin() == NanMaxMin::Propagate ? na && !nb : nb && !na;
    }
    return is_max ? a > b : a < b;
}

template <class T, class... Ok>
inline void need(const char* op) {
    if constexpr (!one_of_v<T, Ok...>) unsupported_dtype<T>(op);
}

inline void check_repeat(int64_t repeat) {
    if (repeat > 255) fail("repeat count over 255", fmt("%s: repeat count %lld exceeds 255", core().api, (long long)repeat));
    if (repeat < 0) fail("repeat count over 255", fmt("%s: negative repeat count %lld", core().api, (long long)repeat));
}

// One trace event per API call: pipe V, 256-byte repeats, bytes touched.
inline void rec(uint64_t repeats, uint64_t bytes) {
    record(op_id(core().api), ASCSIM_PIPE_V, static_cast<uint32_t>(repeats), bytes);
}

struct Geo {
    uint32_t blk;
    uint32_t rep;
};

// One instruction's iteration space, read from the mask register.
struct Exec {
    bool counter = false;
    uint64_t lo = 0, hi = 0;  // Normal: element bits of a repeat; Counter: lo = element count
    uint64_t repeats = 0;     // Normal: repeatTime; Counter: derived
    uint32_t n = 0;           // elements per repeat
    bool bit(uint32_t e) const { return e < 64 ? ((lo >> e) & 1) : e < 128 ? ((hi >> (e - 64)) & 1) : false; }
    uint64_t active() const {
        return counter ? lo
                       : static_cast<uint64_t>(__builtin_popcountll(lo) + __builtin_popcountll(hi)) * repeats;
    }
    uint32_t last_e() const { return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll(lo); }
};

template <class F>
inline void for_active(const Exec& x, F&& f) {
    if (x.counter) {
        for (uint64_t i = 0; i < x.lo; ++i) f(static_cast<uint32_t>(i / x.n), static_cast<uint32_t>(i % x.n));
        return;
    }
    uint32_t es[128];
    uint32_t k = 0;
    for (uint32_t e = 0; e < x.n && e < 128; ++e)
        if (x.bit(e)) es[k++] = e;
    for (uint64_t r = 0; r < x.repeats; ++r)
        for (uint32_t i = 0; i < k; ++i) f(static_cast<uint32_t>(r), es[i]);
}

inline Exec reg_exec(uint32_t n, uint64_t repeatTime) {
    auto& c = core();
    Exec x;
    x.n = n;
    x.counter = c.mask_counter;
    if (x.counter) {
        x.lo = c.mask_lo;
        x.repeats = (x.lo + n - 1) / n;
    } else {
        x.lo = n >= 64 ? c.mask_lo : (c.mask_lo & ((1ull << n) - 1));
        x.hi = n > 64 ? c.mask_hi : 0;
        x.repeats = repeatTime;
    }
    return x;
}

inline void cont_bits(uint64_t m, uint32_t n, uint64_t& hi, uint64_t& lo) {
    if (m > n) m = n;
    lo = m >= 64 ? ~0ull : ((1ull << m) - 1);
    hi = m >= 128 ? ~0ull : m > 64 ? ((1ull << (m - 64)) - 1) : 0;
}

// Mask-form entry: with isSetMask the API writes its mask into the register
// (bit form in Normal mode; raw count in Counter mode), then runs on the register.
// Normal mode masks select lanes of one repeat: a continuous mask is at most
// the lanes of a repeat (128 16-bit, 64 32-bit elements; larger values are
// "not supported" by the docs), a bit mask of a 32-bit type has mask[1] = 0.
inline void check_mask_range(uint64_t mask, uint32_t n) {
    if (mask > n)
        fail("mask out of range", fmt("%s: continuous mask %llu exceeds the %u elements of a repeat", core().api,
                                      (unsigned long long)mask, n));
}
template <bool isSetMask>
inline Exec mask_exec(uint32_t n, const uint64_t mask[], uint64_t repeatTime) {
    if (isSetMask) {
        auto& c = core();
        if (!c.mask_counter && n <= 64 && mask[1] != 0)
            fail("mask out of range", fmt("%s: mask[1] = 0x%llx must be 0 for %u lanes per repeat", core().api,
                                          (unsigned long long)mask[1], n));
        c.mask_lo = mask[0];
        c.mask_hi = n > 64 ? mask[1] : 0;
    }
    return reg_exec(n, repeatTime);
}
template <bool isSetMask>
inline Exec mask_exec(uint32_t n, uint64_t mask, uint64_t repeatTime) {
    if (isSetMask) {
        auto& c = core();
        if (c.mask_counter) {
            c.mask_lo = mask;
            c.mask_hi = 0;
        } else {
            check_mask_range(mask, n);
            cont_bits(mask, n, c.mask_hi, c.mask_lo);
        }
    }
    return reg_exec(n, repeatTime);
}

// Count form: Counter mode with `count` elements for the duration of the
// call, then Normal mode with the full mask.
struct CountMode {
    explicit CountMode(int64_t count) {
        if (count < 0) fail("invalid count", fmt("%s: negative element count %lld", core().api, (long long)count));
        auto& c = core();
        c.mask_counter = true;
        c.mask_lo = static_cast<uint64_t>(count);
        c.mask_hi = 0;
    }
    ~CountMode() {
        auto& c = core();
        c.mask_counter = false;
        c.mask_lo = c.mask_hi = ~0ull;
    }
    CountMode(const CountMode&) = delete;
    CountMode& operator=(const CountMode&) = delete;
};

// Full-mask Normal-mode iteration of `repeats` repeats (Compare and friends).
inline Exec full_exec(uint32_t n, uint64_t repeats) {
    Exec x;
    x.n = n;
    cont_bits(n, n, x.hi, x.lo);
    x.repeats = repeats;
    return x;
}

// A bound operand: element (r, e) -> reference, after the alignment and bound checks.
template <class T>
struct Op {
    static constexpr uint32_t epb = sizeof(T) >= 32 ? 1 : 32 / sizeof(T);
    T* p = nullptr;
    Geo g{1, 8};
    uint64_t off(uint64_t r, uint64_t e) const { return (r * g.rep + (e / epb) * g.blk) * epb + e % epb; }
    T& operator()(uint64_t r, uint64_t e) const { return p[off(r, e)]; }
};

// The 32-byte granules of its memory an operand touches, repeat by repeat
// (blocks holding at least one active element): granules of repeat r are
// g[start[r] .. start[r + 1]), the bytes of the active elements in bytes[].
struct Blocks {
    std::vector<uint32_t> g;
    std::vector<uint32_t> bytes;
    std::vector<uint32_t> start;
    uint64_t lo = ~0ull, hi = 0;  // granule hull [lo, hi)
    size_t repeats() const { return start.empty() ? 0 : start.size() - 1; }
};
template <class T>
inline Blocks operand_blocks(const LocalTensor<T>& t, Geo geo, const Exec& x) {
    constexpr uint32_t epb = Op<T>::epb;
    Blocks b;
    if (x.active() == 0 || (!x.counter && x.repeats == 0)) return b;
    // Active bytes of each block of a repeat (a full one, and the last one).
    constexpr uint32_t kMaxBlocks = 64;
    uint32_t full[kMaxBlocks] = {}, last[kMaxBlocks] = {};
    const uint32_t elem = static_cast<uint32_t>(sizeof(T) >= 32 ? 31 : (1u << sizeof(T)) - 1);
    for (uint32_t e = 0; e < x.n; ++e)
        if (x.counter || x.bit(e)) full[e / epb] |= elem << (e % epb * sizeof(T));
    std::memcpy(last, full, sizeof full);
    if (x.counter) {
        std::memset(last, 0, sizeof last);
        uint64_t rem = x.lo - (x.repeats - 1) * x.n;
        for (uint64_t e = 0; e < rem; ++e) last[e / epb] |= elem << (e % epb * sizeof(T));
    }
    const uint64_t base = t.sim_addr() / 32;
    b.start.reserve(x.repeats + 1);
    for (uint64_t r = 0; r < x.repeats; ++r) {
        b.start.push_back(static_cast<uint32_t>(b.g.size()));
        const uint32_t* m = r + 1 == x.repeats ? last : full;
        for (uint32_t j = 0; j < kMaxBlocks; ++j) {
            if (!m[j]) continue;
            uint64_t gr = base + r * geo.rep + static_cast<uint64_t>(j) * geo.blk;
            b.g.push_back(static_cast<uint32_t>(gr));
            b.bytes.push_back(m[j]);
            b.lo = std::min(b.lo, gr);
            b.hi = std::max(b.hi, gr + 1);
        }
    }
    b.start.push_back(static_cast<uint32_t>(b.g.size()));
    return b;
}

// The granules of `count` repeats of `per` blocks each (block j of repeat r
// at granule base + r*rep + j*blk).
inline Blocks strided_blocks(uint64_t base, uint64_t count, uint64_t per, uint64_t rep, uint64_t blk) {
    Blocks b;
    for (uint64_t r = 0; r < count; ++r) {
        b.start.push_back(static_cast<uint32_t>(b.g.size()));
        for (uint64_t j = 0; j < per; ++j) {
            uint64_t gr = base + r * rep + j * blk;
            b.g.push_back(static_cast<uint32_t>(gr));
            b.bytes.push_back(~0u);
            b.lo = std::min(b.lo, gr);
            b.hi = std::max(b.hi, gr + 1);
        }
    }
    b.start.push_back(static_cast<uint32_t>(b.g.size()));
    return b;
}

template <class T>
inline void touch(const LocalTensor<T>& t, const Blocks& b, Acc a) {
    if (!b.g.empty() && hz_enabled()) hz_granules(t.sim_mem(), b.g.data(), b.bytes.data(), b.g.size(), a);
}

// The documented operand overlap rule of the repeat (high-dimension) forms:
// inside one repeat a source and the destination overlap 100% or not at all;
// no destination block of a repeat is a source block of a later repeat,
// except that Add/Sub/Mul/Max/Min/AddRelu/SubRelu on half/int32/float may
// accumulate into src1 when src1RepStride or dstRepStride is 0.
inline void check_overlap(Mem dm, const Blocks& d, Mem sm, const Blocks& s, const char* what, bool same_type,
                          bool accumulate_ok) {
    if (dm != sm || d.g.empty() || s.g.empty() || d.hi <= s.lo || s.hi <= d.lo) return;
    const uint64_t lo = std::min(d.lo, s.lo), span = std::max(d.hi, s.hi) - lo;
    std::vector<int32_t> first_dst(span, -1);  // first repeat writing each granule
    for (size_t r = 0; r < d.repeats(); ++r)
        for (uint32_t i = d.start[r]; i < d.start[r + 1]; ++i)
            if (first_dst[d.g[i] - lo] < 0) first_dst[d.g[i] - lo] = static_cast<int32_t>(r);
    for (size_t r = 0; r < s.repeats(); ++r) {
        bool shared = false;
        for (uint32_t i = s.start[r]; i < s.start[r + 1]; ++i) {
            int32_t w = first_dst[s.g[i] - lo];
            if (w >= 0 && static_cast<size_t>(w) < r && !accumulate_ok)
                fail("partial operand overlap",
                     fmt("%s: %s of repeat %zu reads UB granule %u that dst of repeat %d writes (a destination "
                         "of an earlier repeat must not be a source of a later one)",
                         core().api, what, r, s.g[i], w));
            if (w >= 0 && static_cast<size_t>(w) == r) shared = true;
        }
        if (!shared || accumulate_ok) continue;
        bool identical = same_type && r < d.repeats() && d.start[r + 1] - d.start[r] == s.start[r + 1] - s.start[r];
        for (uint32_t i = 0; identical && i < s.start[r + 1] - s.start[r]; ++i)
            identical = d.g[d.start[r] + i] == s.g[s.start[r] + i];
        if (!identical)
            fail("partial operand overlap", fmt("%s: %s and dst overlap partly in repeat %zu (inside a repeat they "
                                                "must overlap 100%% or not at all)",
                                                core().api, what, r));
    }
}

inline bool accumulates_into_src1() {
    static const char* const ops[] = {"Add", "Sub", "Mul", "Max", "Min", "AddRelu", "SubRelu"};
    for (const char* o : ops)
        if (std::strcmp(core().api, o) == 0) return true;
    return false;
}

// Binds an operand for element access (the hull is bound-checked) and, for
// acc != None, records its block-exact accesses with the hazard checker.
template <class T>
inline Op<T> bind(const LocalTensor<T>& t, Geo g, const Exec& x, const char* what, Acc acc = Acc::None) {
    t.require_aligned(32, what);
    Op<T> o;
    o.g = g;
    if (x.active() == 0 || (!x.counter && x.repeats == 0)) {
        o.p = t.span(0, 0, Acc::None);
        return o;
    }
    uint64_t m;
    if (x.counter) {
        uint64_t last = x.lo - 1, rl = last / x.n, el = last % x.n;
        m = o.off(rl, el);
        if (rl > 0) m = std::max(m, o.off(rl - 1, x.n - 1));
    } else {
        m = o.off(x.repeats - 1, x.last_e());
    }
    o.p = t.span(0, m + 1, Acc::None);
    if (acc != Acc::None) touch(t, operand_blocks(t, g, x), acc);
    return o;
}

// Arithmetic domain: integers in int64, half/bf16 in double (exact sums and
// products, rounded once), float in float.
template <class T>
using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t, std::conditional_t<std::is_same_v<T, float>, float, double>>;
template <class T>
inline wide_t<T> W(T v) {
    if constexpr (std::is_same_v<T, bfloat16_t>) return static_cast<double>(static_cast<float>(v));
    else return static_cast<wide_t<T>>(v);
}
template <class T>
inline T Nw(wide_t<T> v) {
    if constexpr (std::is_same_v<T, bfloat16_t>) return bfloat16_t(static_cast<float>(v));
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<uint64_t>(v));  // wraps
    else return static_cast<T>(v);
}

template <class T>
constexpr uint32_t per_rep() { return 256 / sizeof(T); }

// dst = f(src0, src1) over the iteration space.
template <class T, class F>
inline void binary(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b, const Exec& x,
                   const AscendC::BinaryRepeatParams& p, F f) {
    Geo gd{p.dstBlkStride, p.dstRepStride}, ga{p.src0BlkStride, p.src0RepStride}, gb{p.src1BlkStride, p.src1RepStride};
    auto D = bind(d, gd, x, "dst");
    auto A = bind(a, ga, x, "src0");
    auto B = bind(b, gb, x, "src1");
    {
        Blocks bd = operand_blocks(d, gd, x), ba = operand_blocks(a, ga, x), bb = operand_blocks(b, gb, x);
        const bool acc_ok = one_of_v<T, half, int32_t, float> && (p.src1RepStride == 0 || p.dstRepStride == 0) &&
                            accumulates_into_src1();
        check_overlap(d.sim_mem(), bd, a.sim_mem(), ba, "src0", true, false);
        check_overlap(d.sim_mem(), bd, b.sim_mem(), bb, "src1", true, acc_ok);
        touch(a, ba, Acc::Read);
        touch(b, bb, Acc::Read);
        touch(d, bd, Acc::Write);
    }
    for_active(x, [&](uint32_t r, uint32_t e) { D(r, e) = Nw<T>(f(W(A(r, e)), W(B(r, e)))); });
    rec(x.repeats, x.active() * 3 * sizeof(T));
}

// dst = f(src) (element types may differ: Cast). `reads_src` false: the
// source is not read (Duplicate passes its dst).
template <class D, class S, class F>
inline void unary(const LocalTensor<D>& d, const LocalTensor<S>& s, const Exec& x, const AscendC::UnaryRepeatParams& p,
                  F f, uint32_t bytes_per_elem = sizeof(D) + sizeof(S), bool reads_src = true) {
    Geo gd{p.dstBlkStride, p.dstRepStride}, gs{p.srcBlkStride, p.srcRepStride};
    auto Do = bind(d, gd, x, "dst");
    auto So = bind(s, gs, x, "src");
    {
        Blocks bd = operand_blocks(d, gd, x);
        if (reads_src) {
            Blocks bs = operand_blocks(s, gs, x);
            check_overlap(d.sim_mem(), bd, s.sim_mem(), bs, "src", std::is_same_v<D, S>, false);
            touch(s, bs, Acc::Read);
        }
        touch(d, bd, Acc::Write);
    }
    for_active(x, [&](uint32_t r, uint32_t e) { Do(r, e) = f(So(r, e)); });
    rec(x.repeats, x.active() * bytes_per_elem);
}

// Count-form unary params: a repeat covers 256 B of the wider operand.
template <class D, class S>
inline AscendC::UnaryRepeatParams dense_unary() {
    constexpr uint32_t w = sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S);
    return AscendC::UnaryRepeatParams(1, 1, static_cast<uint8_t>(8 * sizeof(D) / w), static_cast<uint8_t>(8 * sizeof(S) / w));
}

// ---------------------------------------------------------------- rounding
// Values are carried as long double (64-bit significand): exact for every
// source type, so each conversion rounds exactly once, in the requested mode.

using real = long double;

inline real round_int(real v, AscendC::RoundMode m) {
    using AscendC::RoundMode;
    switch (m) {
        case RoundMode::CAST_FLOOR: return std::floor(v);
        case RoundMode::CAST_CEIL: return std::ceil(v);
        case RoundMode::CAST_TRUNC: return std::trunc(v);
        case RoundMode::CAST_ROUND: return v < 0 ? -std::floor(-v + 0.5L) : std::floor(v + 0.5L);
        case RoundMode::CAST_ODD: {  // inexact -> the neighbour with an odd last digit
            real t = std::trunc(v);
            if (t == v) return t;
            return std::fmod(t, 2.0L) != 0 ? t : t + (v < 0 ? -1.0L : 1.0L);
        }
        default: {  // RINT, and NONE where precision is lost: nearest, ties to even
            real f = std::floor(v), d = v - f;
            if (d > 0.5L) return f + 1;
            if (d < 0.5L) return f;
            return std::fmod(f, 2.0L) == 0 ? f : f + 1;
        }
    }
}

// Rounds v to a binary format with p significand bits and minimum normal
// exponent emin; overflow saturates to +-maxv (the documented default
// saturation mode); infinities and NaN pass through.
inline real round_fp(real v, int p, int emin, real maxv, AscendC::RoundMode m) {
    if (std::isnan(v) || std::isinf(v) || v == 0) return v;
    int e;
    std::frexp(v, &e);
    int q = std::max(e - 1, emin) - (p - 1);
    real res = std::ldexp(round_int(std::ldexp(v, -q), m), q);
    if (res > maxv) res = maxv;
    if (res < -maxv) res = -maxv;
    return res;
}

template <class D>
inline D convert(real v, AscendC::RoundMode m) {
    if constexpr (std::is_integral_v<D>) {  // NaN -> 0, out of range saturates
        if (std::isnan(v)) return D(0);
        real r = round_int(v, m);
        real lo = static_cast<real>(std::numeric_limits<D>::min());
        real hi = static_cast<real>(std::numeric_limits<D>::max());
        return static_cast<D>(r < lo ? lo : r > hi ? hi : r);
    } else if constexpr (std::is_same_v<D, half>) {
        return static_cast<half>(static_cast<double>(round_fp(v, 11, -14, 65504.0L, m)));
    } else if constexpr (std::is_same_v<D, bfloat16_t>) {
        return bfloat16_t(static_cast<float>(round_fp(v, 8, -126, std::ldexp(255.0L, 120), m)));
    } else {
        return static_cast<D>(round_fp(v, 24, -126, static_cast<real>(FLT_MAX), m));
    }
}

template <class S>
inline real to_real(S v) {
    if constexpr (std::is_same_v<S, bfloat16_t>) return static_cast<real>(static_cast<float>(v));
    else return static_cast<real>(v);
}

// Round modes accepted per A2 Cast pair (bit m = RoundMode m); 0 = pair unsupported.
constexpr uint8_t kNone = 1u << 0, kRfcrt = 0x3Eu, kOdd = 1u << 6;
template <class D, class S>
constexpr uint8_t cast_modes() {
    using std::is_same_v;
    if constexpr (is_same_v<S, half>) {
        if constexpr (is_same_v<D, float>) return kNone;
        else if constexpr (one_of_v<D, int32_t, int16_t>) return kRfcrt;
        else if constexpr (one_of_v<D, int8_t, uint8_t>) return kRfcrt | kNone;
        else return 0;
    } else if constexpr (is_same_v<S, float>) {
        if constexpr (is_same_v<D, half>) return kRfcrt | kNone | kOdd;
        else if constexpr (one_of_v<D, bfloat16_t, int32_t, int16_t, float, int64_t>) return kRfcrt;
        else return 0;
    } else if constexpr (is_same_v<S, int32_t>) {
        if constexpr (is_same_v<D, float>) return kRfcrt | kNone;
        else if constexpr (one_of_v<D, int16_t, int64_t>) return kNone;
        else return 0;
    } else if constexpr (is_same_v<S, int16_t>) {
        if constexpr (is_same_v<D, half>) return kRfcrt | kNone;
        else if constexpr (is_same_v<D, float>) return kNone;
        else return 0;
    } else if constexpr (one_of_v<S, int8_t, uint8_t>) {
        return is_same_v<D, half> ? kNone : 0;
    } else if constexpr (is_same_v<S, bfloat16_t>) {
        return is_same_v<D, float> ? kNone : is_same_v<D, int32_t> ? kRfcrt : 0;
    } else if constexpr (is_same_v<S, int64_t>) {
        return is_same_v<D, int32_t> ? kNone : is_same_v<D, float> ? kRfcrt : 0;
    } else {
        return 0;
    }
}

template <class D, class S>
inline void cast_check(AscendC::RoundMode m) {
    constexpr uint8_t ok = cast_modes<D, S>();
    if (ok == 0)
        fail("unsupported dtype on A2",
             fmt("Cast from %s to %s is not supported on Atlas A2", type_name<S>(), type_name<D>()));
    if (static_cast<unsigned>(m) > 6 || !((ok >> static_cast<unsigned>(m)) & 1))
        fail("unsupported round mode", fmt("Cast from %s to %s does not accept RoundMode %u on Atlas A2",
                                           type_name<S>(), type_name<D>(), static_cast<unsigned>(m)));
}

template <class D, class S>
inline void cast_run(const LocalTensor<D>& d, const LocalTensor<S>& s, AscendC::RoundMode m, const Exec& x,
                     const AscendC::UnaryRepeatParams& p) {
    cast_check<D, S>(m);
    if constexpr (std::is_same_v<D, float> && (std::is_same_v<S, half> || std::is_same_v<S, bfloat16_t>)) {
        // Exact widening: every source value is a float, nothing to round.
        unary(d, s, x, p, [](S v) { return static_cast<float>(v); });
    } else {
        unary(d, s, x, p, [m](S v) { return convert<D>(to_real(v), m); });
    }
}

template <class D, class S>
constexpr uint32_t wide_rep() {
    return 256 / (sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S));
}

// ---------------------------------------------------------------- compare

template <class T>
inline bool cmp(T a, T b, AscendC::CMPMODE m) {
    auto x = W(a), y = W(b);
    switch (m) {
        case AscendC::CMPMODE::LT: return x < y;
        case AscendC::CMPMODE::GT: return x > y;
        case AscendC::CMPMODE::EQ: return x == y;
        case AscendC::CMPMODE::LE: return x <= y;
        case AscendC::CMPMODE::GE: return x >= y;
        default: return x != y;
    }
}

template <class T, class U>
inline void cmp_check(AscendC::CMPMODE m, uint64_t count) {
    need<T, half, float, int32_t>(core().api);
    need<U, uint8_t, int8_t>(core().api);
    if (std::is_same_v<T, int32_t> && m != AscendC::CMPMODE::EQ)
        fail("unsupported dtype on A2", fmt("%s: int32_t supports only CMPMODE::EQ on Atlas A2", core().api));
    if (count * sizeof(T) % 256 != 0)
        fail("compare count not 256-byte multiple",
             fmt("%s: count %llu x %zu B is not a multiple of 256 B", core().api, (unsigned long long)count, sizeof(T)));
}

// Writes one bit per element (little-endian within each byte), packed by repeat.
template <class T, class U, class G>
inline void cmp_run(const LocalTensor<U>& dst, uint64_t repeats, G&& get_pair, uint32_t operands, AscendC::CMPMODE m) {
    constexpr uint32_t n = per_rep<T>();
    Exec x = full_exec(n, repeats);
    dst.require_aligned(32, "dst");
    uint8_t* out = reinterpret_cast<uint8_t*>(dst.span(0, repeats * n / 8 / sizeof(U), Acc::Write));
    for_active(x, [&](uint32_t r, uint32_t e) {
        uint64_t bit = static_cast<uint64_t>(r) * n + e;
        T a, b;
        get_pair(r, e, a, b);
        if (cmp(a, b, m)) out[bit / 8] = static_cast<uint8_t>(out[bit / 8] | (1u << (bit % 8)));
        else out[bit / 8] = static_cast<uint8_t>(out[bit / 8] & ~(1u << (bit % 8)));
    });
    rec(repeats, repeats * 256 * operands + repeats * n / 8);
}

// ---------------------------------------------------------------- reductions

template <class T>
inline T add_sat(T a, T b) {
    if constexpr (std::is_same_v<T, half>) {
        half h = static_cast<half>(static_cast<double>(a) + static_cast<double>(b));
        if (std::isinf(static_cast<float>(h))) h = static_cast<half>(h > half(0) ? 65504.0 : -65504.0);
        return h;
    } else {
        return a + b;
    }
}

// Pairwise tree: v[i] = v[2i] + v[2i+1] level by level (n padded with zeros
// to a power of two); v is overwritten.
template <class T>
inline T tree_sum_in_place(std::vector<T>& v) {
    if (v.empty()) return T(0);
    size_t n = 1;
    while (n < v.size()) n *= 2;
    v.resize(n, T(0));
    for (; n > 1; n /= 2)
        for (size_t i = 0; i < n / 2; ++i) v[i] = add_sat(v[2 * i], v[2 * i + 1]);
    return v[0];
}
template <class T>
inline T tree_sum(std::vector<T> v) {
    return tree_sum_in_place(v);
}

// Values of the selected elements of every repeat (masked-off elements read as 0).
template <class T>
inline std::vector<std::vector<T>> gather_repeats(const LocalTensor<T>& src, const Exec& x, Geo g, uint32_t width) {
    auto S = bind(src, g, x, "src", Acc::Read);
    std::vector<std::vector<T>> reps(x.repeats, std::vector<T>(width, T(0)));
    for_active(x, [&](uint32_t r, uint32_t e) { reps[r][e] = S(r, e); });
    return reps;
}

template <class T>
inline void store_index(const LocalTensor<T>& dst, uint32_t idx) {
    T* p = dst.span(1, 1, Acc::Write);
    if constexpr (sizeof(T) == 2) {
        uint16_t i = static_cast<uint16_t>(idx);
        std::memcpy(p, &i, 2);
    } else {
        std::memcpy(p, &idx, 4);
    }
}

template <class T>
inline void reduce_maxmin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                          int32_t count, bool calIndex, bool is_max) {
    need<T, half, float>(core().api);
    if (count <= 0) return rec(0, 0);  // documented NOP
    dst.require_aligned(32, "dst");
    src.require_aligned(32, "src");
    tmp.require_aligned(32, "sharedTmpBuffer");
    const T* s = src.span(0, static_cast<uint64_t>(count), Acc::Read);
    uint32_t best = 0;
    for (uint32_t i = 1; i < static_cast<uint32_t>(count); ++i) {
        if (beats(static_cast<float>(s[i]), static_cast<float>(s[best]), is_max)) best = i;
    }
    T v = s[best];
    *dst.span(0, 1, Acc::Write) = v;
    if (calIndex) store_index(dst, best);
    rec((static_cast<uint64_t>(count) * sizeof(T) + 255) / 256, static_cast<uint64_t>(count) * sizeof(T) + 2 * sizeof(T));
}

// ---------------------------------------------------------------- gather mask

inline bool builtin_pattern(uint8_t pat, uint64_t e) {
    switch (pat) {
        case 1: return e % 2 == 0;
        case 2: return e % 2 == 1;
        case 3: return e % 4 == 0;
        case 4: return e % 4 == 1;
        case 5: return e % 4 == 2;
        case 6: return e % 4 == 3;
        case 7: return true;
        default: fail("invalid pattern", fmt("GatherMask built-in pattern %u is not in 1..7", pat));
    }
}

// pattern: byte view of the user pattern tensor or null for the built-in `builtin`.
template <class T>
inline void gather_mask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint8_t>* pattern,
                        uint8_t builtin, bool reduceMode, uint32_t mask, const AscendC::GatherMaskParams& p,
                        uint64_t& rsvdCnt) {
    check_repeat(p.repeatTimes);
    dst.require_aligned(32, "dst");
    src0.require_aligned(32, "src0");
    const uint64_t reps = p.repeatTimes;
    const uint64_t per = reduceMode ? mask : per_rep<T>();
    Op<T> S;
    S.g = {p.src0BlockStride, p.src0RepeatStride};
    const uint8_t* bits = nullptr;
    uint64_t pat_bytes = 0;
    if (reps > 0 && per > 0) {
        S.p = src0.span(0, S.off(reps - 1, per - 1) + 1, Acc::None);
        const uint64_t epb = Op<T>::epb;
        touch(src0, strided_blocks(src0.sim_addr() / 32, reps, (per + epb - 1) / epb, S.g.rep, S.g.blk), Acc::Read);
        if (pattern) {
            pattern->require_aligned(32, "src1Pattern");
            pat_bytes = (reps - 1) * p.src1RepeatStride * 32 + (per + 7) / 8;
            bits = pattern->span(0, pat_bytes, Acc::Read);
        }
    }
    std::vector<T> kept;
    for (uint64_t r = 0; r < reps; ++r) {
        for (uint64_t e = 0; e < per; ++e) {
            bool keep;
            if (bits) {
                uint64_t b = r * p.src1RepeatStride * 256 + e;
                keep = (bits[b / 8] >> (b % 8)) & 1;
            } else {
                keep = builtin_pattern(builtin, e);
            }
            if (keep) kept.push_back(S(r, e));
        }
    }
    if (!kept.empty()) std::memcpy(dst.span(0, kept.size(), Acc::Write), kept.data(), kept.size() * sizeof(T));
    rsvdCnt = kept.size();
    auto& c = core();
    c.mask_counter = false;
    c.mask_lo = mask;
    c.mask_hi = 0;
    uint64_t src_bytes = reps * per * sizeof(T);
    rec(reduceMode ? (src_bytes + 255) / 256 : reps, src_bytes + pat_bytes + kept.size() * sizeof(T));
}

}  // namespace vec
}  // namespace ascsim

// ---------------------------------------------------------------- API

namespace AscendC {

// ---- mask register

__aicore__ inline void SetMaskNorm() {
    ASCSIM_VEC("SetMaskNorm");
    ascsim::core().mask_counter = false;
    ascsim::vec::rec(0, 0);
}
__aicore__ inline void SetMaskCount() {
    ASCSIM_VEC("SetMaskCount");
    ascsim::core().mask_counter = true;
    ascsim::vec::rec(0, 0);
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow) {
    ASCSIM_VEC("SetVectorMask");
    auto& c = ascsim::core();
    c.mask_hi = maskHigh;
    c.mask_lo = maskLow;
    ascsim::vec::rec(0, 0);
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
__aicore__ inline void SetVectorMask(int32_t len) {
    ASCSIM_VEC("SetVectorMask");
    auto& c = ascsim::core();
    if (mode == MaskMode::COUNTER) {
        c.mask_hi = 0;
        c.mask_lo = static_cast<uint64_t>(static_cast<uint32_t>(len));
    } else {
        uint64_t m = len < 0 ? 0 : static_cast<uint64_t>(len);
        ascsim::vec::check_mask_range(m, 256 / sizeof(T));
        ascsim::vec::cont_bits(m, 256 / sizeof(T), c.mask_hi, c.mask_lo);
    }
    ascsim::vec::rec(0, 0);
}
__aicore__ inline void ResetMask() {
    ASCSIM_VEC("ResetMask");
    auto& c = ascsim::core();
    c.mask_hi = c.mask_lo = ~0ull;
    ascsim::vec::rec(0, 0);
}

// ---- families generated from one description each

// Binary tensor ops: count form, bitwise-mask form, continuous-mask form.
#define ASCSIM_VEC_BINARY(NAME, FN, ...)                                                                            \
    template <typename T>                                                                                           \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                const int32_t& count) {                                                             \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        ascsim::vec::CountMode cm_(count);                                                                          \
        ascsim::vec::binary(dst, src0, src1, ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0),                   \
                            BinaryRepeatParams(), FN);                                                              \
    }                                                                                                               \
    template <typename T, bool isSetMask = true>                                                                    \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                const uint64_t mask[], const uint8_t repeatTime,                                    \
                                const BinaryRepeatParams& repeatParams) {                                           \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        ascsim::vec::binary(dst, src0, src1,                                                                        \
                            ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),         \
                            repeatParams, FN);                                                                      \
    }                                                                                                               \
    template <typename T, bool isSetMask = true>                                                                    \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, \
                                uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {  \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        ascsim::vec::binary(dst, src0, src1,                                                                        \
                            ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),         \
                            repeatParams, FN);                                                                      \
    }

// Tensor-scalar ops (Adds, ShiftLeft, ...): FN(a, s) on the wide values.
#define ASCSIM_VEC_SCALAR(NAME, FN, EXTRA, ...)                                                                     \
    template <typename T, bool isSetMask = true>                                                                    \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,        \
                                const int32_t& count) {                                                             \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        ascsim::vec::CountMode cm_(count);                                                                          \
        auto s_ = ascsim::vec::W(scalarValue);                                                                      \
        ascsim::vec::unary(dst, src, ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0), UnaryRepeatParams(),      \
                           [&](T a) { return ascsim::vec::Nw<T>(FN(ascsim::vec::W(a), s_)); });                     \
    }                                                                                                               \
    template <typename T, bool isSetMask = true>                                                                    \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,        \
                                const uint64_t mask[], const uint8_t repeatTime,                                    \
                                const UnaryRepeatParams& repeatParams EXTRA) {                                      \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        auto s_ = ascsim::vec::W(scalarValue);                                                                      \
        ascsim::vec::unary(dst, src,                                                                                \
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),          \
                           repeatParams, [&](T a) { return ascsim::vec::Nw<T>(FN(ascsim::vec::W(a), s_)); });       \
    }                                                                                                               \
    template <typename T, bool isSetMask = true>                                                                    \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,        \
                                uint64_t mask, const uint8_t repeatTime,                                            \
                                const UnaryRepeatParams& repeatParams EXTRA) {                                      \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        auto s_ = ascsim::vec::W(scalarValue);                                                                      \
        ascsim::vec::unary(dst, src,                                                                                \
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),          \
                           repeatParams, [&](T a) { return ascsim::vec::Nw<T>(FN(ascsim::vec::W(a), s_)); });       \
    }

// Tensor-only unary ops (Not).
#define ASCSIM_VEC_UNARY(NAME, FN, ...)                                                                             \
    template <typename T>                                                                                           \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {      \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        ascsim::vec::CountMode cm_(count);                                                                          \
        ascsim::vec::unary(dst, src, ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0), UnaryRepeatParams(),      \
                           [](T a) { return ascsim::vec::Nw<T>(FN(ascsim::vec::W(a))); });                          \
    }                                                                                                               \
    template <typename T, bool isSetMask = true>                                                                    \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],       \
                                const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                  \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        ascsim::vec::unary(dst, src,                                                                                \
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),          \
                           repeatParams, [](T a) { return ascsim::vec::Nw<T>(FN(ascsim::vec::W(a))); });            \
    }                                                                                                               \
    template <typename T, bool isSetMask = true>                                                                    \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,               \
                                const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {                  \
        ASCSIM_VEC(#NAME);                                                                                          \
        ascsim::vec::need<T, __VA_ARGS__>(#NAME);                                                                   \
        ascsim::vec::unary(dst, src,                                                                                \
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),          \
                           repeatParams, [](T a) { return ascsim::vec::Nw<T>(FN(ascsim::vec::W(a))); });            \
    }

namespace sim_fn {
inline constexpr auto add = [](auto a, auto b) { return a + b; };
inline constexpr auto sub = [](auto a, auto b) { return a - b; };
inline constexpr auto mul = [](auto a, auto b) { return a * b; };
inline constexpr auto max = [](auto a, auto b) { return ascsim::vec::beats(b, a, true) ? b : a; };
inline constexpr auto min = [](auto a, auto b) { return ascsim::vec::beats(b, a, false) ? b : a; };
inline constexpr auto band = [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return a & b;
    else return a;
};
inline constexpr auto bor = [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return a | b;
    else return a;
};
inline constexpr auto bnot = [](auto a) {
    if constexpr (std::is_integral_v<decltype(a)>) return ~a;
    else return a;
};
// Shift amounts beyond the width give 0 (left, logical right) or the sign fill (arithmetic right);
// the wide value of an unsigned element is non-negative, so >> is logical for it.
inline constexpr auto shl = [](auto a, auto s) {
    if constexpr (std::is_integral_v<decltype(a)>) {
        return s < 0 || s >= 64 ? decltype(a)(0) : static_cast<decltype(a)>(static_cast<uint64_t>(a) << s);
    } else {
        return a;
    }
};
inline constexpr auto shr = [](auto a, auto s) {
    if constexpr (std::is_integral_v<decltype(a)>) {
        return s < 0 ? a : a >> (s > 63 ? 63 : s);
    } else {
        return a;
    }
};

// Unary math on the wide value (double for half, float for float), rounded once.
#define ASCSIM_VEC_MATH(NAME, EXPR)                                     \
    inline constexpr auto NAME = [](auto a) {                           \
        using W_ = decltype(a);                                         \
        if constexpr (std::is_integral_v<W_>) return a;                 \
        else return static_cast<W_>(EXPR);                              \
    };
ASCSIM_VEC_MATH(exp_, std::exp(a))
ASCSIM_VEC_MATH(ln_, std::log(a))
ASCSIM_VEC_MATH(sqrt_, std::sqrt(a))
ASCSIM_VEC_MATH(rsqrt_, W_(1) / std::sqrt(a))
ASCSIM_VEC_MATH(recip_, W_(1) / a)
#undef ASCSIM_VEC_MATH
inline constexpr auto abs_ = [](auto a) { return a < 0 ? -a : a; };
inline constexpr auto relu_ = [](auto a) { return a > 0 ? a : decltype(a)(0); };
inline constexpr auto div_ = [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return b == 0 ? a : a / b;
    else return a / b;
};
inline constexpr auto add_relu = [](auto a, auto b) { return relu_(a + b); };
inline constexpr auto sub_relu = [](auto a, auto b) { return relu_(a - b); };
}  // namespace sim_fn

ASCSIM_VEC_BINARY(Add, sim_fn::add, int16_t, half, int32_t, float)
ASCSIM_VEC_BINARY(Sub, sim_fn::sub, int16_t, half, int32_t, float)
ASCSIM_VEC_BINARY(Mul, sim_fn::mul, int16_t, half, int32_t, float)
ASCSIM_VEC_BINARY(Max, sim_fn::max, int16_t, half, int32_t, float)
ASCSIM_VEC_BINARY(Min, sim_fn::min, int16_t, half, int32_t, float)
ASCSIM_VEC_BINARY(And, sim_fn::band, int16_t, uint16_t)
ASCSIM_VEC_BINARY(Or, sim_fn::bor, int16_t, uint16_t)
ASCSIM_VEC_UNARY(Not, sim_fn::bnot, int16_t, uint16_t)
ASCSIM_VEC_BINARY(Div, sim_fn::div_, half, float)
ASCSIM_VEC_BINARY(AddRelu, sim_fn::add_relu, int16_t, half, float)
ASCSIM_VEC_BINARY(SubRelu, sim_fn::sub_relu, int16_t, half, float)
ASCSIM_VEC_UNARY(Abs, sim_fn::abs_, half, float)
ASCSIM_VEC_UNARY(Relu, sim_fn::relu_, half, float, int32_t)
ASCSIM_VEC_UNARY(Exp, sim_fn::exp_, half, float)
ASCSIM_VEC_UNARY(Ln, sim_fn::ln_, half, float)
ASCSIM_VEC_UNARY(Sqrt, sim_fn::sqrt_, half, float)
ASCSIM_VEC_UNARY(Rsqrt, sim_fn::rsqrt_, half, float)
ASCSIM_VEC_UNARY(Reciprocal, sim_fn::recip_, half, float)
ASCSIM_VEC_SCALAR(Adds, sim_fn::add, , int16_t, half, int32_t, float)
ASCSIM_VEC_SCALAR(Muls, sim_fn::mul, , int16_t, half, int32_t, float)
ASCSIM_VEC_SCALAR(Maxs, sim_fn::max, , int16_t, half, int32_t, float)
ASCSIM_VEC_SCALAR(Mins, sim_fn::min, , int16_t, half, int32_t, float)
#define ASCSIM_VEC_ROUND_EN , bool /*roundEn*/ = false
ASCSIM_VEC_SCALAR(ShiftLeft, sim_fn::shl, ASCSIM_VEC_ROUND_EN, int16_t, uint16_t, int32_t, uint32_t)
ASCSIM_VEC_SCALAR(ShiftRight, sim_fn::shr, ASCSIM_VEC_ROUND_EN, int16_t, uint16_t, int32_t, uint32_t)

// ---- Duplicate

#define ASCSIM_DUP_TYPES int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float

template <typename T>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count) {
    ASCSIM_VEC("Duplicate");
    ascsim::vec::need<T, ASCSIM_DUP_TYPES>("Duplicate");
    ascsim::vec::CountMode cm_(count);
    ascsim::vec::unary(dst, dst, ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0), UnaryRepeatParams(),
                       [&](T) { return scalarValue; }, sizeof(T), false);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                                 const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    ASCSIM_VEC("Duplicate");
    ascsim::vec::need<T, ASCSIM_DUP_TYPES>("Duplicate");
    UnaryRepeatParams p(dstBlockStride, dstBlockStride, dstRepeatStride, dstRepeatStride);
    ascsim::vec::unary(dst, dst, ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime), p,
                       [&](T) { return scalarValue; }, sizeof(T), false);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask,
                                 const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
    ASCSIM_VEC("Duplicate");
    ascsim::vec::need<T, ASCSIM_DUP_TYPES>("Duplicate");
    UnaryRepeatParams p(dstBlockStride, dstBlockStride, dstRepeatStride, dstRepeatStride);
    ascsim::vec::unary(dst, dst, ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime), p,
                       [&](T) { return scalarValue; }, sizeof(T), false);
}

// ---- Cast (T = dst, U = src; a repeat covers 256 B of the wider type)

template <typename T, typename U>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                            const uint32_t count) {
    ASCSIM_VEC("Cast");
    ascsim::vec::CountMode cm_(count);
    ascsim::vec::cast_run(dst, src, roundMode, ascsim::vec::reg_exec(ascsim::vec::wide_rep<T, U>(), 0),
                          ascsim::vec::dense_unary<T, U>());
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                            const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    ASCSIM_VEC("Cast");
    ascsim::vec::cast_run(dst, src, roundMode,
                          ascsim::vec::mask_exec<isSetMask>(ascsim::vec::wide_rep<T, U>(), mask, repeatTime),
                          repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                            const uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams) {
    ASCSIM_VEC("Cast");
    ascsim::vec::cast_run(dst, src, roundMode,
                          ascsim::vec::mask_exec<isSetMask>(ascsim::vec::wide_rep<T, U>(), mask, repeatTime),
                          repeatParams);
}

// ---- Compare / CompareScalar (mask argument of the repeat forms is ignored on A2)

template <typename T, typename U>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, uint32_t count) {
    ASCSIM_VEC("Compare");
    ascsim::vec::cmp_check<T, U>(cmpMode, count);
    uint64_t reps = static_cast<uint64_t>(count) * sizeof(T) / 256;
    ascsim::vec::Exec x = ascsim::vec::full_exec(ascsim::vec::per_rep<T>(), reps);
    auto A = ascsim::vec::bind(src0, {1, 8}, x, "src0", ascsim::Acc::Read);
    auto B = ascsim::vec::bind(src1, {1, 8}, x, "src1", ascsim::Acc::Read);
    ascsim::vec::cmp_run<T>(dst, reps, [&](uint32_t r, uint32_t e, T& a, T& b) { a = A(r, e), b = B(r, e); }, 2, cmpMode);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime,
                               const BinaryRepeatParams& repeatParams) {
    ASCSIM_VEC("Compare");
    (void)mask;
    ascsim::vec::cmp_check<T, U>(cmpMode, 0);
    ascsim::vec::Exec x = ascsim::vec::full_exec(ascsim::vec::per_rep<T>(), repeatTime);
    auto A = ascsim::vec::bind(src0, {repeatParams.src0BlkStride, repeatParams.src0RepStride}, x, "src0",
                               ascsim::Acc::Read);
    auto B = ascsim::vec::bind(src1, {repeatParams.src1BlkStride, repeatParams.src1RepStride}, x, "src1",
                               ascsim::Acc::Read);
    ascsim::vec::cmp_run<T>(dst, repeatTime, [&](uint32_t r, uint32_t e, T& a, T& b) { a = A(r, e), b = B(r, e); }, 2,
                            cmpMode);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                               CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime,
                               const BinaryRepeatParams& repeatParams) {
    const uint64_t m[2] = {mask, 0};
    Compare<T, U, isSetMask>(dst, src0, src1, cmpMode, m, repeatTime, repeatParams);
}

template <typename T, typename U>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                     CMPMODE cmpMode, uint32_t count) {
    ASCSIM_VEC("CompareScalar");
    ascsim::vec::cmp_check<T, U>(cmpMode, count);
    uint64_t reps = static_cast<uint64_t>(count) * sizeof(T) / 256;
    ascsim::vec::Exec x = ascsim::vec::full_exec(ascsim::vec::per_rep<T>(), reps);
    auto A = ascsim::vec::bind(src0, {1, 8}, x, "src0", ascsim::Acc::Read);
    ascsim::vec::cmp_run<T>(dst, reps, [&](uint32_t r, uint32_t e, T& a, T& b) { a = A(r, e), b = src1Scalar; }, 1,
                            cmpMode);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                     CMPMODE cmpMode, const uint64_t mask[], uint8_t repeatTime,
                                     const UnaryRepeatParams& repeatParams) {
    ASCSIM_VEC("CompareScalar");
    (void)mask;
    ascsim::vec::cmp_check<T, U>(cmpMode, 0);
    ascsim::vec::Exec x = ascsim::vec::full_exec(ascsim::vec::per_rep<T>(), repeatTime);
    auto A = ascsim::vec::bind(src0, {repeatParams.srcBlkStride, repeatParams.srcRepStride}, x, "src0",
                               ascsim::Acc::Read);
    ascsim::vec::cmp_run<T>(dst, repeatTime, [&](uint32_t r, uint32_t e, T& a, T& b) { a = A(r, e), b = src1Scalar; },
                            1, cmpMode);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                                     CMPMODE cmpMode, const uint64_t mask, uint8_t repeatTime,
                                     const UnaryRepeatParams& repeatParams) {
    const uint64_t m[2] = {mask, 0};
    CompareScalar<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, m, repeatTime, repeatParams);
}

// ---- Select: bit = 1 -> src0, 0 -> src1. Mode 0 reuses the first 256/sizeof(T)
// bits every repeat; modes 1 and 2 consume the mask bits continuously.

namespace sim_detail {
// src1 is a tensor (an Op) or a scalar.
template <typename T>
struct SelScalar {
    T v;
    T operator()(uint32_t, uint32_t) const { return v; }
};
template <typename T, typename U, typename B>
inline void select_run(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                       const B& src1, SELMODE mode, const ascsim::vec::Exec& x, const BinaryRepeatParams& p,
                       uint32_t operands) {
    ascsim::vec::need<T, half, float>("Select");
    ascsim::vec::need<U, uint8_t, uint16_t, uint32_t, uint64_t>("Select");
    const uint32_t n = x.n;
    auto A = ascsim::vec::bind(src0, {p.src0BlkStride, p.src0RepStride}, x, "src0", ascsim::Acc::Read);
    auto D = ascsim::vec::bind(dst, {p.dstBlkStride, p.dstRepStride}, x, "dst", ascsim::Acc::Write);
    selMask.require_aligned(32, "selMask");
    uint64_t nbits = mode == SELMODE::VSEL_CMPMASK_SPR ? n : x.repeats * n;
    const uint8_t* bits = nullptr;
    if (x.active() > 0) {
        bits = reinterpret_cast<const uint8_t*>(
            selMask.span(0, (nbits + 8 * sizeof(U) - 1) / (8 * sizeof(U)), ascsim::Acc::Read));
    }
    ascsim::vec::for_active(x, [&](uint32_t r, uint32_t e) {
        uint64_t b = mode == SELMODE::VSEL_CMPMASK_SPR ? e : static_cast<uint64_t>(r) * n + e;
        D(r, e) = ((bits[b / 8] >> (b % 8)) & 1) ? A(r, e) : src1(r, e);
    });
    ascsim::vec::rec(x.repeats, x.active() * sizeof(T) * operands + (nbits + 7) / 8);
}
template <typename T, typename U>
inline void select_tensor(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                          const LocalTensor<T>& src1, SELMODE mode, const ascsim::vec::Exec& x,
                          const BinaryRepeatParams& p) {
    auto B = ascsim::vec::bind(src1, {p.src1BlkStride, p.src1RepStride}, x, "src1", ascsim::Acc::Read);
    select_run(dst, selMask, src0, B, mode, x, p, 3);
}
}  // namespace sim_detail

// Count forms: `count` contiguous elements (Counter mode inside).
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
    ASCSIM_VEC("Select");
    ascsim::vec::CountMode cm_(count);
    sim_detail::select_tensor<T, U>(dst, selMask, src0, src1, selMode,
                                          ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0), BinaryRepeatParams());
}
template <typename T, typename U>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint32_t count) {
    ASCSIM_VEC("Select");
    ascsim::vec::CountMode cm_(count);
    sim_detail::select_run(dst, selMask, src0, sim_detail::SelScalar<T>{src1}, selMode,
                           ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0), BinaryRepeatParams(), 2);
}
// Mask forms (modes 1 and 2 consume 256/sizeof(T) mask bits per repeat).
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams) {
    ASCSIM_VEC("Select");
    sim_detail::select_tensor<T, U>(
        dst, selMask, src0, src1, selMode,
        ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime), repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams) {
    ASCSIM_VEC("Select");
    sim_detail::select_tensor<T, U>(
        dst, selMask, src0, src1, selMode,
        ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime), repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, const uint64_t mask[], uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams) {
    ASCSIM_VEC("Select");
    sim_detail::select_run(dst, selMask, src0, sim_detail::SelScalar<T>{src1}, selMode,
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),
                           repeatParams, 2);
}
template <typename T, typename U, bool isSetMask = true>
__aicore__ inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                              T src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
                              const BinaryRepeatParams& repeatParams) {
    ASCSIM_VEC("Select");
    sim_detail::select_run(dst, selMask, src0, sim_detail::SelScalar<T>{src1}, selMode,
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),
                           repeatParams, 2);
}

// ---- CreateVecIndex, Brcb

template <typename T>
__aicore__ inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count) {
    ASCSIM_VEC("CreateVecIndex");
    ascsim::vec::need<T, int16_t, half, int32_t, float>("CreateVecIndex");
    ascsim::vec::CountMode cm_(count);
    ascsim::vec::Exec x = ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0);
    auto D = ascsim::vec::bind(dst, {1, 8}, x, "dst", ascsim::Acc::Write);
    ascsim::vec::for_active(x, [&](uint32_t r, uint32_t e) {
        uint64_t i = static_cast<uint64_t>(r) * x.n + e;
        if constexpr (std::is_integral_v<T>) D(r, e) = static_cast<T>(static_cast<int64_t>(firstValue) + static_cast<int64_t>(i));
        else D(r, e) = static_cast<T>(static_cast<double>(firstValue) + static_cast<double>(i));
    });
    ascsim::vec::rec(x.repeats, x.active() * sizeof(T));
}

template <typename T>
__aicore__ inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                            const BrcbRepeatParams& repeatParams) {
    ASCSIM_VEC("Brcb");
    ascsim::vec::need<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>("Brcb");
    dst.require_aligned(32, "dst");
    src.require_aligned(32, "src");
    if (repeatTime == 0) return ascsim::vec::rec(0, 0);
    constexpr uint32_t epb = 32 / sizeof(T);
    // dst block j of repeat r <- src[8r + j], i.e. an Op with one "element" per block.
    ascsim::vec::Op<T> D;
    D.g = {repeatParams.dstBlkStride, repeatParams.dstRepStride};
    const T* s = src.span(0, 8ull * repeatTime, ascsim::Acc::Read);
    T* d = dst.span(0, D.off(repeatTime - 1, 8 * epb - 1) + 1, ascsim::Acc::None);
    ascsim::vec::touch(dst, ascsim::vec::strided_blocks(dst.sim_addr() / 32, repeatTime, 8, D.g.rep, D.g.blk),
                       ascsim::Acc::Write);
    D.p = d;
    std::vector<T> in(s, s + 8ull * repeatTime);
    for (uint32_t r = 0; r < repeatTime; ++r)
        for (uint32_t e = 0; e < 8 * epb; ++e) D(r, e) = in[8 * r + e / epb];
    ascsim::vec::rec(repeatTime, repeatTime * (8ull * sizeof(T) + 256));
}

// ---- Reductions (half / float)

namespace sim_detail {
// ReduceSum: tree inside each repeat; across repeats sequential (count form)
// or tree (mask forms). Count or repeatTime 0 is a NOP.
template <typename T>
inline void reduce_sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                       const ascsim::vec::Exec& x, uint32_t srcRepStride, bool tree_across) {
    ascsim::vec::need<T, half, float>("ReduceSum");
    dst.require_aligned(32, "dst");
    tmp.require_aligned(32, "sharedTmpBuffer");
    if (x.repeats == 0 || x.active() == 0) return ascsim::vec::rec(0, 0);
    auto reps = ascsim::vec::gather_repeats(src, x, {1, srcRepStride}, x.n);
    std::vector<T> sums;
    for (auto& r : reps) sums.push_back(ascsim::vec::tree_sum(r));
    T acc = sums[0];
    if (tree_across) {
        acc = ascsim::vec::tree_sum(sums);
    } else {
        for (size_t r = 1; r < sums.size(); ++r) acc = ascsim::vec::add_sat(acc, sums[r]);
    }
    // The instruction keeps its per-repeat sums in the scratch buffer.
    (void)tmp.span(0, std::min<uint64_t>(tmp.GetSize(), (x.repeats * sizeof(T) + 31) / 32 * 32 / sizeof(T)),
                   ascsim::Acc::Write);
    *dst.span(0, 1, ascsim::Acc::Write) = acc;
    ascsim::vec::rec(x.repeats, x.active() * sizeof(T) + sizeof(T));
}
}  // namespace sim_detail

template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t count) {
    ASCSIM_VEC("ReduceSum");
    ascsim::vec::CountMode cm_(count);
    sim_detail::reduce_sum(dst, src, sharedTmpBuffer, ascsim::vec::reg_exec(ascsim::vec::per_rep<T>(), 0), 8, false);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const uint64_t mask[], const int32_t repeatTime,
                                 const int32_t srcRepStride) {
    ASCSIM_VEC("ReduceSum");
    sim_detail::reduce_sum(dst, src, sharedTmpBuffer,
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask,
                                                             static_cast<uint64_t>(std::max(repeatTime, 0))),
                           static_cast<uint32_t>(srcRepStride), true);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t mask, const int32_t repeatTime,
                                 const int32_t srcRepStride) {
    ASCSIM_VEC("ReduceSum");
    sim_detail::reduce_sum(dst, src, sharedTmpBuffer,
                           ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(),
                                                             static_cast<uint64_t>(std::max(mask, 0)),
                                                             static_cast<uint64_t>(std::max(repeatTime, 0))),
                           static_cast<uint32_t>(srcRepStride), true);
}

template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t count, bool calIndex = false) {
    ASCSIM_VEC("ReduceMax");
    ascsim::vec::reduce_maxmin(dst, src, sharedTmpBuffer, count, calIndex, true);
}
template <typename T>
__aicore__ inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& sharedTmpBuffer, const int32_t count, bool calIndex = false) {
    ASCSIM_VEC("ReduceMin");
    ascsim::vec::reduce_maxmin(dst, src, sharedTmpBuffer, count, calIndex, false);
}

namespace sim_detail {
// One sum per repeat at dst[r * dstRepStride] (elements).
template <typename T>
inline void whole_reduce_sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const ascsim::vec::Exec& x,
                             int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride) {
    ascsim::vec::need<T, half, float>("WholeReduceSum");
    src.require_aligned(32, "src");
    auto reps = ascsim::vec::gather_repeats(src, x, {static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride)}, x.n);
    if (!reps.empty()) {
        T* d = dst.span(0, (reps.size() - 1) * static_cast<uint64_t>(dstRepStride) + 1, ascsim::Acc::Write);
        for (size_t r = 0; r < reps.size(); ++r) d[r * static_cast<uint64_t>(dstRepStride)] = ascsim::vec::tree_sum(reps[r]);
    }
    ascsim::vec::rec(x.repeats, x.active() * sizeof(T) + reps.size() * sizeof(T));
}
// Group reductions: every repeat is cut into groups of `group` elements
// (BlockReduce*: one 32 B block; PairReduceSum: 2 elements); group k of repeat
// r goes to dst[r * dstRepStride * unit + k]. Only selected elements take part
// (sum: tree over the group; max/min: a group without selected elements gives 0).
enum class GroupOp { Sum, Max, Min };
template <typename T>
inline void group_reduce(const LocalTensor<T>& dst, const LocalTensor<T>& src, const ascsim::vec::Exec& x,
                         int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, uint32_t group,
                         uint32_t unit, GroupOp op) {
    ascsim::vec::need<T, half, float>(ascsim::core().api);
    src.require_aligned(32, "src");
    const uint32_t groups = x.n / group;
    auto S = ascsim::vec::bind(src, {static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride)}, x, "src",
                               ascsim::Acc::Read);
    // Every group's elements at their own positions (masked-off ones 0 for
    // the sum's tree), and how many of them are selected.
    std::vector<T> vals(static_cast<size_t>(x.repeats) * groups * group, T(0));
    std::vector<uint32_t> selected(static_cast<size_t>(x.repeats) * groups, 0);
    ascsim::vec::for_active(x, [&](uint32_t r, uint32_t e) {
        const size_t g = static_cast<size_t>(r) * groups + e / group;
        vals[g * group + e % group] = S(r, e);
        ++selected[g];
    });
    if (x.repeats > 0 && x.active() > 0) {
        const uint64_t stride = static_cast<uint64_t>(dstRepStride) * unit;
        T* d = dst.span(0, (x.repeats - 1) * stride + groups, ascsim::Acc::Write);
        std::vector<T> tree(group);
        for (uint64_t r = 0; r < x.repeats; ++r)
            for (uint32_t k = 0; k < groups; ++k) {
                const size_t g = r * groups + k;
                const T* v = &vals[g * group];
                T out = T(0);
                if (op == GroupOp::Sum) {
                    // keep positions: tree order follows the element index inside the group
                    std::copy(v, v + group, tree.begin());
                    out = ascsim::vec::tree_sum_in_place(tree);
                } else if (selected[g] > 0) {
                    bool first = true;
                    for (uint32_t e = 0; e < group; ++e) {
                        if (!(x.counter ? r * x.n + k * group + e < x.lo : x.bit(k * group + e))) continue;
                        const T& a = v[e];
                        if (first || ascsim::vec::beats(static_cast<float>(a), static_cast<float>(out),
                                                        op == GroupOp::Max))
                            out = a;
                        first = false;
                    }
                }
                d[r * stride + k] = out;
            }
    }
    ascsim::vec::rec(x.repeats, x.active() * sizeof(T) + x.repeats * groups * sizeof(T));
}
// Max/min of the selected elements of every repeat with its index inside the
// repeat (smallest index on ties), stored per `order`; the index lives in the
// bits of T (ORDER_ONLY_INDEX: a 4-byte index). dstRepStride unit = one result.
template <typename T>
inline void whole_reduce_maxmin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const ascsim::vec::Exec& x,
                                int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, ReduceOrder order,
                                bool is_max) {
    ascsim::vec::need<T, half, float>(ascsim::core().api);
    src.require_aligned(32, "src");
    const bool vi = order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE;
    const uint32_t unit = vi ? 2 * sizeof(T) : order == ReduceOrder::ORDER_ONLY_VALUE ? sizeof(T) : 4;
    dst.require_aligned(unit, "dst");
    std::vector<int64_t> best(x.repeats, -1);
    auto S = ascsim::vec::bind(src, {static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride)}, x, "src",
                               ascsim::Acc::Read);
    ascsim::vec::for_active(x, [&](uint32_t r, uint32_t e) {
        if (best[r] < 0) {
            best[r] = e;
            return;
        }
        if (ascsim::vec::beats(static_cast<float>(S(r, e)), static_cast<float>(S(r, static_cast<uint32_t>(best[r]))),
                               is_max)) {
            best[r] = e;
        }
    });
    if (x.repeats > 0) {
        uint64_t bytes = (x.repeats - 1) * static_cast<uint64_t>(dstRepStride) * unit + unit;
        uint8_t* out = reinterpret_cast<uint8_t*>(dst.span(0, (bytes + sizeof(T) - 1) / sizeof(T), ascsim::Acc::Write));
        for (uint64_t r = 0; r < x.repeats; ++r) {
            if (best[r] < 0) continue;
            uint8_t* o = out + r * static_cast<uint64_t>(dstRepStride) * unit;
            T v = S(r, static_cast<uint32_t>(best[r]));
            uint32_t i32 = static_cast<uint32_t>(best[r]);
            uint16_t i16 = static_cast<uint16_t>(best[r]);
            const void* idx = sizeof(T) == 2 ? static_cast<const void*>(&i16) : static_cast<const void*>(&i32);
            switch (order) {
                case ReduceOrder::ORDER_VALUE_INDEX:
                    std::memcpy(o, &v, sizeof(T));
                    std::memcpy(o + sizeof(T), idx, sizeof(T));
                    break;
                case ReduceOrder::ORDER_INDEX_VALUE:
                    std::memcpy(o, idx, sizeof(T));
                    std::memcpy(o + sizeof(T), &v, sizeof(T));
                    break;
                case ReduceOrder::ORDER_ONLY_VALUE: std::memcpy(o, &v, sizeof(T)); break;
                default: std::memcpy(o, &i32, 4); break;
            }
        }
    }
    ascsim::vec::rec(x.repeats, x.active() * sizeof(T) + x.repeats * unit);
}
}  // namespace sim_detail

#define ASCSIM_WHOLE_REDUCE_MAXMIN(NAME, IS_MAX)                                                                      \
    template <typename T, bool isSetMask = true>                                                                      \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],          \
                                const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,     \
                                const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {     \
        ASCSIM_VEC(#NAME);                                                                                            \
        ascsim::vec::check_repeat(repeatTime);                                                                        \
        sim_detail::whole_reduce_maxmin(dst, src,                                                                     \
                                        ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime), \
                                        dstRepStride, srcBlkStride, srcRepStride, order, IS_MAX);                     \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,             \
                                const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,     \
                                const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {     \
        ASCSIM_VEC(#NAME);                                                                                            \
        ascsim::vec::check_repeat(repeatTime);                                                                        \
        sim_detail::whole_reduce_maxmin(                                                                              \
            dst, src,                                                                                                 \
            ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), static_cast<uint64_t>(mask < 0 ? 0 : mask),  \
                                              repeatTime),                                                            \
            dstRepStride, srcBlkStride, srcRepStride, order, IS_MAX);                                                 \
    }
ASCSIM_WHOLE_REDUCE_MAXMIN(WholeReduceMax, true)
ASCSIM_WHOLE_REDUCE_MAXMIN(WholeReduceMin, false)
#undef ASCSIM_WHOLE_REDUCE_MAXMIN

template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride) {
    ASCSIM_VEC("WholeReduceSum");
    ascsim::vec::check_repeat(repeatTime);
    sim_detail::whole_reduce_sum(dst, src, ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),
                                 dstRepStride, srcBlkStride, srcRepStride);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                                      const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride) {
    ASCSIM_VEC("WholeReduceSum");
    ascsim::vec::check_repeat(repeatTime);
    sim_detail::whole_reduce_sum(dst, src,
                                 ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(),
                                                                   static_cast<uint64_t>(mask < 0 ? 0 : mask), repeatTime),
                                 dstRepStride, srcBlkStride, srcRepStride);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void BlockReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                                      const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride) {
    ASCSIM_VEC("BlockReduceSum");
    ascsim::vec::check_repeat(repeatTime);
    sim_detail::group_reduce(dst, src, ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),
                             dstRepStride, srcBlkStride, srcRepStride, 32 / sizeof(T), 8, sim_detail::GroupOp::Sum);
}
template <typename T, bool isSetMask = true>
__aicore__ inline void BlockReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                                      const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,
                                      const int32_t srcRepStride) {
    ASCSIM_VEC("BlockReduceSum");
    ascsim::vec::check_repeat(repeatTime);
    sim_detail::group_reduce(dst, src,
                             ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(),
                                                               static_cast<uint64_t>(mask < 0 ? 0 : mask), repeatTime),
                             dstRepStride, srcBlkStride, srcRepStride, 32 / sizeof(T), 8, sim_detail::GroupOp::Sum);
}

// BlockReduceMax/Min: 8 results per repeat; PairReduceSum: sums of adjacent
// element pairs, dstRepStride in units of 128 B of results.
#define ASCSIM_GROUP_REDUCE(NAME, GROUP, UNIT, OP)                                                                    \
    template <typename T, bool isSetMask = true>                                                                      \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,       \
                                const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,        \
                                const int32_t srcRepStride) {                                                         \
        ASCSIM_VEC(#NAME);                                                                                            \
        ascsim::vec::check_repeat(repeatTime);                                                                        \
        sim_detail::group_reduce(dst, src,                                                                            \
                                 ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), mask, repeatTime),      \
                                 dstRepStride, srcBlkStride, srcRepStride, GROUP, UNIT, sim_detail::GroupOp::OP);     \
    }                                                                                                                 \
    template <typename T, bool isSetMask = true>                                                                      \
    __aicore__ inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,       \
                                const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,           \
                                const int32_t srcRepStride) {                                                         \
        ASCSIM_VEC(#NAME);                                                                                            \
        ascsim::vec::check_repeat(repeatTime);                                                                        \
        sim_detail::group_reduce(                                                                                     \
            dst, src,                                                                                                 \
            ascsim::vec::mask_exec<isSetMask>(ascsim::vec::per_rep<T>(), static_cast<uint64_t>(mask < 0 ? 0 : mask),  \
                                              repeatTime),                                                            \
            dstRepStride, srcBlkStride, srcRepStride, GROUP, UNIT, sim_detail::GroupOp::OP);                          \
    }
ASCSIM_GROUP_REDUCE(BlockReduceMax, 32 / sizeof(T), 8, Max)
ASCSIM_GROUP_REDUCE(BlockReduceMin, 32 / sizeof(T), 8, Min)
ASCSIM_GROUP_REDUCE(PairReduceSum, 2, 128 / sizeof(T), Sum)
#undef ASCSIM_GROUP_REDUCE

// ---- Gather (byte offsets relative to src) and GatherMask

template <typename T>
__aicore__ inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                              const uint32_t srcBaseAddr, const uint32_t count) {
    ASCSIM_VEC("Gather");
    ascsim::vec::need<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>("Gather");
    dst.require_aligned(32, "dst");
    src.require_aligned(32, "src");
    srcOffset.require_aligned(32, "srcOffset");
    if (count == 0) return ascsim::vec::rec(0, 0);
    {  // documented: dst and src must not share memory
        uint64_t d0 = dst.sim_addr(), d1 = d0 + static_cast<uint64_t>(count) * sizeof(T);
        uint64_t s0 = src.sim_addr(), s1 = s0 + static_cast<uint64_t>(src.GetSize()) * sizeof(T);
        if (dst.sim_mem() == src.sim_mem() && d0 < s1 && s0 < d1)
            ascsim::fail("operand overlap", ascsim::fmt("Gather: dst [%llu, %llu) overlaps src [%llu, %llu)",
                                                        (unsigned long long)d0, (unsigned long long)d1,
                                                        (unsigned long long)s0, (unsigned long long)s1));
    }
    const uint32_t* off = srcOffset.span(0, count, ascsim::Acc::Read);
    std::vector<T> out(count);
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t b = static_cast<uint64_t>(srcBaseAddr) + off[i];
        if (b % sizeof(T) != 0)
            ascsim::fail("misaligned address",
                         ascsim::fmt("Gather: byte offset %llu of element %u is not a multiple of %zu",
                                     (unsigned long long)b, i, sizeof(T)));
        out[i] = *src.span(b / sizeof(T), 1, ascsim::Acc::Read);
    }
    std::memcpy(dst.span(0, count, ascsim::Acc::Write), out.data(), count * sizeof(T));
    ascsim::vec::rec((static_cast<uint64_t>(count) * sizeof(T) + 255) / 256, static_cast<uint64_t>(count) * (2 * sizeof(T) + 4));
}

template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                                  const LocalTensor<U>& src1Pattern, const bool reduceMode, const uint32_t mask,
                                  const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt) {
    ASCSIM_VEC("GatherMask");
    ascsim::vec::need<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>("GatherMask");
    if constexpr (sizeof(T) == 2) ascsim::vec::need<U, uint16_t>("GatherMask pattern for 16-bit data");
    else ascsim::vec::need<U, uint32_t>("GatherMask pattern for 32-bit data");
    LocalTensor<uint8_t> bytes = src1Pattern.template ReinterpretCast<uint8_t>();
    ascsim::vec::gather_mask(dst, src0, &bytes, 0, reduceMode, mask, gatherMaskParams, rsvdCnt);
}
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
__aicore__ inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                                  const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                                  uint64_t& rsvdCnt) {
    ASCSIM_VEC("GatherMask");
    ascsim::vec::need<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>("GatherMask");
    ascsim::vec::gather_mask<T>(dst, src0, nullptr, src1Pattern, reduceMode, mask, gatherMaskParams, rsvdCnt);
}

}  // namespace AscendC

#undef ASCSIM_VEC_BINARY
#undef ASCSIM_VEC_SCALAR
#undef ASCSIM_VEC_UNARY
#undef ASCSIM_VEC_ROUND_EN
#undef ASCSIM_DUP_TYPES
