// Hazard suite, vector rules and poison: continuous and bit masks beyond
// the lanes of a repeat, operands overlapping partly across or inside a
// repeat (with the documented exceptions: 100% in place, and Add & co.
// accumulating into src1 with a repeat stride 0), and the poison of memory
// a kernel never wrote or DataCopyPad left undefined.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "hazard_util.h"

using namespace AscendC;

namespace {

template <typename T>
constexpr uint32_t kLanes = 256 / sizeof(T);  // elements of one repeat

// Small integers 1, 2, ..., n (exact in every type).
template <typename T>
std::vector<T> counting(uint32_t n, int first = 1) {
    std::vector<T> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>(i) + first);
    return v;
}

// d = a + b over one repeat under `mask` (continuous, or bits {lo, hi});
// d starts as -1 so that masked-off lanes show. Returns d.
template <typename T, typename M>
std::vector<T> masked_add(vt::Ub& ub, M mask) {
    constexpr uint32_t n = kLanes<T>;
    auto a = ub.at<T>(0, n), b = ub.at<T>(512, n), d = ub.at<T>(1024, n);
    vt::fill(a, counting<T>(n));
    vt::fill(b, counting<T>(n, 100));
    vt::fill(d, std::vector<T>(n, static_cast<T>(-1)));
    Add(d, a, b, mask, 1, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    return vt::read(d, n);
}

// Throws unless d holds a + b on the first `active` lanes and -1 after.
template <typename T>
void expect_masked(const std::vector<T>& d, uint32_t active) {
    for (uint32_t i = 0; i < d.size(); ++i)
        CHECK_EQ(static_cast<float>(d[i]), i < active ? static_cast<float>(2 * i + 101) : -1.0f);
}

template <typename T, typename M>
void mask_ok(const char* name, M mask, uint32_t active) {
    std::vector<T> d;
    vt::run(name, [&](vt::Ub& ub) { d = masked_add<T>(ub, mask); });
    expect_masked(d, active);
}

template <typename T, typename M>
void mask_bad(const char* name, M mask, const std::string& says) {
    hz::aiv_bad(name, "mask out of range", {"AIV 0", "Add", {says}}, [&] {
        vt::Ub ub;
        (void)masked_add<T>(ub, mask);
    });
}

// x = 1..3*64 (float); Adds(x[dst], x, 1) over `repeats` repeats of 64.
void adds_shifted(vt::Ub& ub, uint32_t dst, uint8_t repeats) {
    auto x = ub.at<float>(0, 3 * 64);
    vt::fill(x, counting<float>(3 * 64));
    Adds(x[dst], x, 1.0f, 64, repeats, UnaryRepeatParams(1, 1, 8, 8));
}

// acc (one repeat) += each of 4 repeats of x: Add/Div(acc, x, acc) with
// dstRepStride = src1RepStride = 0. Returns acc.
enum class Op { Add, Div };
template <typename T>
std::vector<T> accumulate(vt::Ub& ub, Op op) {
    constexpr uint32_t n = kLanes<T>;
    auto x = ub.at<T>(0, 4 * n), acc = ub.at<T>(4096, n);
    vt::fill(x, counting<T>(4 * n));
    vt::fill(acc, std::vector<T>(n, static_cast<T>(1)));
    const BinaryRepeatParams p(1, 1, 1, 0, 8, 0);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half>) {
        if (op == Op::Div) Div(acc, x, acc, n, 4, p);
    }
    if (op == Op::Add) Add(acc, x, acc, n, 4, p);
    return vt::read(acc, n);
}

template <typename T>
void accumulate_ok(const char* name) {
    constexpr uint32_t n = kLanes<T>;
    std::vector<T> acc;
    vt::run(name, [&](vt::Ub& ub) { acc = accumulate<T>(ub, Op::Add); });
    // 1 + (e + 1) + (n + e + 1) + (2n + e + 1) + (3n + e + 1)
    for (uint32_t e = 0; e < n; ++e) CHECK_EQ(static_cast<float>(acc[e]), static_cast<float>(5 + 4 * e + 6 * n));
}

template <typename T>
void accumulate_bad(const char* name, Op op, const char* call) {
    hz::aiv_bad(name, "partial operand overlap", {"AIV 0", call, {"src1 of repeat 1", "that dst of repeat 0 writes"}},
                [&] {
                    vt::Ub ub;
                    (void)accumulate<T>(ub, op);
                });
}

// DataCopyPad of one block of 3 floats with `left`/`right` padding into a
// 32-byte UB slot (8 floats), copied out to y[0..8).
void pad_copy(const hz::Io& io, bool isPad, uint8_t left, uint8_t right) {
    vt::Ub ub;
    auto u = ub.at<float>(0, 8);
    DataCopyPad(u, io.gx(), DataCopyExtParams(1, 12, 0, 0, 0), DataCopyPadExtParams<float>(isPad, left, right, 9.0f));
    simtest::fence<HardEvent::MTE2_MTE3>();
    DataCopy(io.gy(), u, 8);
}

}  // namespace

// ---------------------------------------------------------------- masks

SIMTEST(hz_mask_half_200) {
    mask_bad<half>("hz_mask_half_200", uint64_t{200}, "continuous mask 200 exceeds the 128 elements of a repeat");
}
SIMTEST(hz_mask_half_128_legal) { mask_ok<half>("hz_mask_half_128_legal", uint64_t{128}, 128); }

SIMTEST(hz_mask_float_65) {
    mask_bad<float>("hz_mask_float_65", uint64_t{65}, "continuous mask 65 exceeds the 64 elements of a repeat");
}
SIMTEST(hz_mask_float_64_legal) {
    mask_ok<float>("hz_mask_float_64_legal", uint64_t{64}, 64);
    mask_ok<float>("hz_mask_float_40_legal", uint64_t{40}, 40);
}

SIMTEST(hz_mask_bits_high_word_float) {
    uint64_t m[2] = {~0ull, 1};
    mask_bad<float>("hz_mask_bits_high_word_float", m, "mask[1] = 0x1 must be 0 for 64 lanes per repeat");
}
SIMTEST(hz_mask_bits_legal) {
    uint64_t f[2] = {~0ull, 0};
    mask_ok<float>("hz_mask_bits_float_legal", f, 64);
    uint64_t h[2] = {~0ull, 1};  // 16-bit types: mask[1] holds lanes 64..127
    mask_ok<half>("hz_mask_bits_half_legal", h, 65);
}

// ---------------------------------------------------------------- operand overlap

// dst of repeat 0 is src of repeat 1.
SIMTEST(hz_overlap_across_repeats) {
    hz::aiv_bad("hz_overlap_across_repeats", "partial operand overlap",
                {"AIV 0", "Adds", {"src of repeat 1 reads UB granule", "that dst of repeat 0 writes"}}, [] {
                    vt::Ub ub;
                    adds_shifted(ub, 64, 2);
                });
}

// dst one 32-byte block after src: 7 of 8 blocks shared inside the repeat.
SIMTEST(hz_overlap_inside_repeat) {
    hz::aiv_bad("hz_overlap_inside_repeat", "partial operand overlap",
                {"AIV 0", "Adds", {"src and dst overlap partly in repeat 0", "100% or not at all"}}, [] {
                    vt::Ub ub;
                    adds_shifted(ub, 8, 1);
                });
}

SIMTEST(hz_overlap_in_place_legal) {
    std::vector<float> x;
    vt::run("hz_overlap_in_place_legal", [&](vt::Ub& ub) {
        adds_shifted(ub, 0, 3);
        x = vt::read(ub.at<float>(0, 3 * 64), 3 * 64);
    });
    for (uint32_t i = 0; i < 3 * 64; ++i) CHECK_EQ(x[i], static_cast<float>(i + 2));
}

// The documented exception: Add (& co.) on half/int32/float accumulating
// into src1 with src1RepStride and dstRepStride 0.
SIMTEST(hz_overlap_accumulate_src1_legal) {
    accumulate_ok<half>("hz_accumulate_half");
    accumulate_ok<int32_t>("hz_accumulate_int32");
    accumulate_ok<float>("hz_accumulate_float");
}

// Outside it: Div, or Add on int16.
SIMTEST(hz_overlap_accumulate_outside_exception) {
    accumulate_bad<float>("hz_accumulate_div_float", Op::Div, "Div");
    accumulate_bad<int16_t>("hz_accumulate_add_int16", Op::Add, "Add");
}

// ---------------------------------------------------------------- poison

// Local memory the kernel never wrote holds poison: float NaN.
SIMTEST(hz_poison_unwritten_ub_is_nan) {
    hz::Io io;
    hz::aiv_ok("hz_poison_unwritten_ub_is_nan", [&] {
        vt::Ub ub;
        auto a = ub.at<float>(0, 64), b = ub.at<float>(1024, 64);
        Adds(b, a, 1.0f, 64);
        simtest::fence<HardEvent::V_MTE3>();
        DataCopy(io.gy(), b, 64);
    });
    auto y = io.y.download();
    for (uint32_t i = 0; i < 64; ++i) CHECK(std::isnan(y[i]));
}

// Unwritten UB and fresh device memory hold the poison word, ASCSIM_POISON
// (hex) or 7FFFFFFF; tests/hazard.rs also runs this under another word.
SIMTEST(hz_poison_is_the_poison_word) {
    const char* env = std::getenv("ASCSIM_POISON");
    const uint32_t want = env != nullptr && *env != '\0' ? static_cast<uint32_t>(std::strtoul(env, nullptr, 16))
                                                           : 0x7fffffffu;
    hz::Io io;
    hz::aiv_ok("hz_poison_is_the_poison_word", [&] {
        vt::Ub ub;
        auto a = ub.at<float>(0, 64);
        DataCopy(io.gy(), a, 64);
    });
    auto bits = [](float f) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
    };
    auto y = io.y.download();
    for (uint32_t i = 0; i < 64; ++i) CHECK_EQ(bits(y[i]), want);
    void* fresh = nullptr;
    CHECK_EQ(aclrtMalloc(&fresh, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::vector<uint32_t> words(64);
    aclrtMemcpy(words.data(), 256, fresh, 256, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtFree(fresh);
    for (uint32_t w : words) CHECK_EQ(w, want);
}

// Slot of 8 floats: left pad 1, data 3, right pad 2, dummy 2.
SIMTEST(hz_pad_without_is_pad_is_poison) {
    hz::Io io;
    hz::aiv_ok("hz_pad_without_is_pad_is_poison", [&] { pad_copy(io, false, 1, 2); });
    auto y = io.y.download();
    for (uint32_t i = 0; i < 8; ++i) {
        if (i >= 1 && i <= 3) CHECK_EQ(y[i], io.in[i - 1]);
        else CHECK(std::isnan(y[i]));
    }
}

SIMTEST(hz_pad_with_is_pad_is_value) {
    hz::Io io;
    hz::aiv_ok("hz_pad_with_is_pad_is_value", [&] { pad_copy(io, true, 1, 2); });
    io.expect(8, [&](uint32_t i) { return i >= 1 && i <= 3 ? io.in[i - 1] : 9.0f; });
}

// No padding asked: the dummy up to 32 bytes repeats the block's first element.
SIMTEST(hz_pad_none_repeats_first_element) {
    hz::Io io;
    hz::aiv_ok("hz_pad_none_repeats_first_element", [&] { pad_copy(io, false, 0, 0); });
    io.expect(8, [&](uint32_t i) { return io.in[i < 3 ? i : 0]; });
}
