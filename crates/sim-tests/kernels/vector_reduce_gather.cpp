// Vector unit: reductions (ascendc-api.md 5.5), Gather and GatherMask (5.7).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "vector_util.h"

using namespace AscendC;

SIMTEST(vector_reduce_sum_order_and_saturation) {
    half seq = 0, sat = 0;
    float fsum = 0;
    vt::run("vector_reduce_sum_order_and_saturation", [&](vt::Ub& ub) {
        auto s = ub.at<half>(0, 512); auto d = ub.at<half>(2048, 16); auto tmp = ub.at<half>(4096, 512);
        vt::fill_fn(s, 512, [](uint32_t) { return 0; });
        // Repeat sums 2048, 0, 1, 1: sequential across repeats gives
        // ((2048 + 0) + 1) + 1 = 2048 in half (2049 ties to even);
        // a tree across repeats would give (2048 + 0) + (1 + 1) = 2050.
        s.SetValue(0, (half)2048);
        s.SetValue(256, (half)1);
        s.SetValue(384, (half)1);
        simtest::fence<HardEvent::S_V>();
        ReduceSum(d, s, tmp, 512);
        simtest::fence<HardEvent::V_S>();
        seq = d.GetValue(0);
        // Partial sums saturate at 65504 instead of overflowing to inf.
        s.SetValue(0, (half)60000);
        s.SetValue(1, (half)60000);
        simtest::fence<HardEvent::S_V>();
        ReduceSum(d, s, tmp, 2);
        simtest::fence<HardEvent::V_S>();
        sat = d.GetValue(0);
        auto f = ub.at<float>(8192, 128); auto fd = ub.at<float>(9216, 8); auto ft = ub.at<float>(10240, 128);
        vt::fill_fn(f, 128, [](uint32_t i) { return i; });
        ReduceSum(fd, f, ft, 100);
        simtest::fence<HardEvent::V_S>();
        fsum = fd.GetValue(0);
    });
    CHECK_EQ((float)seq, 2048.0f);
    CHECK_EQ((float)sat, 65504.0f);
    CHECK_EQ(fsum, 4950.0f);
}

SIMTEST(vector_reduce_max_min_index) {
    float fmax = 0, fmin = 0, hmax = 0;
    uint32_t imax = 99, imin = 99;
    uint16_t ihmax = 999;
    vt::run("vector_reduce_max_min_index", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64); auto d = ub.at<float>(256, 8); auto t = ub.at<float>(512, 64);
        vt::fill(s, std::vector<float>{3, 9, 1, 9, -2});
        ReduceMax(d, s, t, 5, true);
        simtest::fence<HardEvent::V_S>();
        fmax = d.GetValue(0);
        imax = d.ReinterpretCast<uint32_t>().GetValue(1);  // index in the bits of T
        simtest::fence<HardEvent::S_V>();
        ReduceMin(d, s, t, 5, true);
        simtest::fence<HardEvent::V_S>();
        fmin = d.GetValue(0);
        imin = d.ReinterpretCast<uint32_t>().GetValue(1);
        auto h = ub.at<half>(1024, 256); auto hd = ub.at<half>(2048, 16); auto ht = ub.at<half>(3072, 256);
        vt::fill_fn(h, 200, [](uint32_t k) { return k % 50; });
        ReduceMax(hd, h, ht, 200, true);
        simtest::fence<HardEvent::V_S>();
        hmax = hd.GetValue(0);
        ihmax = hd.ReinterpretCast<uint16_t>().GetValue(1);
    });
    CHECK_EQ(fmax, 9.0f);
    CHECK_EQ(imax, 1u);  // ties -> smallest index
    CHECK_EQ(fmin, -2.0f);
    CHECK_EQ(imin, 4u);
    CHECK_EQ(hmax, 49.0f);
    CHECK_EQ(ihmax, 49);
}

SIMTEST(vector_whole_reduce_sum_strides) {
    std::vector<float> a, b, c;
    vt::run("vector_whole_reduce_sum_strides", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 512); auto d = ub.at<float>(4096, 64);
        vt::fill_fn(s, 512, [](uint32_t i) { return i; });
        vt::fill_fn(d, 64, [](uint32_t) { return -1.0f; });
        // 3 leading elements per repeat, 2 repeats, dstRepStride 2 ELEMENTS.
        WholeReduceSum(d, s, 3, 2, 2, 1, 8);
        a = vt::read(d, 4);
        // 10 elements with srcBlkStride 2: elements 0..7 and 16, 17.
        WholeReduceSum(d, s, 10, 1, 1, 2, 8);
        b = vt::read(d, 1);
        // Bitwise mask: elements 0 and 63; srcRepStride 16 blocks; dst stride 1.
        const uint64_t mask[2] = {0x8000000000000001ull, 0};
        WholeReduceSum(d[8], s, mask, 2, 1, 1, 16);
        c = vt::read(d, 10);
    });
    CHECK_EQ(a[0], 3.0f);
    CHECK_EQ(a[1], -1.0f);
    CHECK_EQ(a[2], 195.0f);
    CHECK_EQ(a[3], -1.0f);
    CHECK_EQ(b[0], 61.0f);
    CHECK_EQ(c[8], 63.0f);
    CHECK_EQ(c[9], 319.0f);
}

SIMTEST(vector_block_reduce_sum_strides) {
    std::vector<float> f;
    std::vector<half> h, h2;
    vt::run("vector_block_reduce_sum_strides", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 256); auto d = ub.at<float>(2048, 64);
        vt::fill_fn(s, 256, [](uint32_t i) { return i; });
        vt::fill_fn(d, 64, [](uint32_t) { return -1.0f; });
        // repeatTime BEFORE mask; dstRepStride in units of 8 outputs.
        BlockReduceSum(d, s, 2, 64, 2, 1, 8);
        f = vt::read(d, 24);
        auto hs = ub.at<half>(4096, 128); auto hd = ub.at<half>(8192, 16);
        vt::fill_fn(hs, 128, [](uint32_t k) { return k % 4; });
        BlockReduceSum(hd, hs, 1, 128, 1, 1, 8);
        h = vt::read(hd, 8);
        BlockReduceSum(hd, hs, 1, 20, 1, 1, 8);
        h2 = vt::read(hd, 8);
    });
    for (int j = 0; j < 8; ++j) {
        CHECK_EQ(f[j], 64.0f * j + 28);
        CHECK_EQ(f[8 + j], -1.0f);
        CHECK_EQ(f[16 + j], 540.0f + 64 * j);
        CHECK_EQ((float)h[j], 24.0f);
        CHECK_EQ((float)h2[j], j == 0 ? 24.0f : j == 1 ? 6.0f : 0.0f);
    }
}

SIMTEST(vector_gather_byte_offsets) {
    std::vector<float> out, out2;
    vt::run("vector_gather_byte_offsets", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64); auto d = ub.at<float>(512, 8);
        auto off = ub.at<uint32_t>(1024, 8);
        vt::fill_fn(s, 64, [](uint32_t i) { return 10.0f * i; });
        vt::fill(off, std::vector<uint32_t>{20, 0, 252, 8});
        Gather(d, s, off, 0, 4);
        out = vt::read(d, 4);
        Gather(d, s, off, 32, 2);  // srcBaseAddr is a byte offset too
        out2 = vt::read(d, 2);
    });
    CHECK_EQ(out[0], 50.0f);
    CHECK_EQ(out[1], 0.0f);
    CHECK_EQ(out[2], 630.0f);
    CHECK_EQ(out[3], 20.0f);
    CHECK_EQ(out2[0], 130.0f);
    CHECK_EQ(out2[1], 80.0f);
}

SIMTEST(vector_gather_mask_builtin_patterns) {
    std::vector<float> even, g4;
    std::vector<half> odd;
    uint64_t c_even = 0, c_odd = 0, c_g4 = 0, c_rows = 0;
    bool counter = true;
    uint64_t lo = 1, hi = 1;
    std::vector<float> rows;
    vt::run("vector_gather_mask_builtin_patterns", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 256); auto d = ub.at<float>(2048, 128);
        vt::fill_fn(s, 256, [](uint32_t i) { return i; });
        // Normal mode: 256 B per repeat, output packed across repeats.
        GatherMask(d, s, 1, false, 0, {1, 2, 8, 0}, c_even);
        counter = ascsim::core().mask_counter;
        lo = ascsim::core().mask_lo;
        hi = ascsim::core().mask_hi;
        ResetMask();
        even = vt::read(d, 64);
        GatherMask(d, s, 6, false, 0, {1, 1, 8, 0}, c_g4);
        g4 = vt::read(d, 16);
        auto h = ub.at<half>(4096, 128); auto hd = ub.at<half>(4608, 128);
        vt::fill_fn(h, 128, [](uint32_t i) { return i; });
        GatherMask(hd, h, 2, false, 0, {1, 1, 8, 0}, c_odd);
        odd = vt::read(hd, 64);
        // Counter mode: `mask` = 20 elements per repeat, repeats 32 floats apart.
        GatherMask(d, s, 7, true, 20, {1, 2, 4, 0}, c_rows);
        rows = vt::read(d, 40);
        ResetMask();
    });
    CHECK_EQ(c_even, (uint64_t)64);
    for (int k = 0; k < 64; ++k) CHECK_EQ(even[k], 2.0f * k);
    CHECK(!counter && lo == 0 && hi == 0);  // mask register = the mask argument
    CHECK_EQ(c_g4, (uint64_t)16);
    for (int k = 0; k < 16; ++k) CHECK_EQ(g4[k], 4.0f * k + 3);
    CHECK_EQ(c_odd, (uint64_t)64);
    for (int k = 0; k < 64; ++k) CHECK_EQ((float)odd[k], 2.0f * k + 1);
    CHECK_EQ(c_rows, (uint64_t)40);
    for (int k = 0; k < 40; ++k) CHECK_EQ(rows[k], (float)((k / 20) * 32 + k % 20));
}

SIMTEST(vector_gather_mask_user_pattern) {
    std::vector<float> f;
    std::vector<half> h;
    uint64_t cf = 0, ch = 0, lo = 0;
    bool counter = true;
    vt::run("vector_gather_mask_user_pattern", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 128); auto d = ub.at<float>(1024, 64);
        auto p = ub.at<uint32_t>(2048, 8);
        vt::fill_fn(s, 128, [](uint32_t i) { return i; });
        // Keep elements 3, 40, 70, 99 (LSB-first bits of little-endian words).
        vt::fill(p, std::vector<uint32_t>{1u << 3, 1u << 8, 1u << 6, 1u << 3});
        GatherMask(d, s, p, true, 100, {1, 1, 8, 0}, cf);
        counter = ascsim::core().mask_counter;
        lo = ascsim::core().mask_lo;
        ResetMask();
        f = vt::read(d, 4);
        auto hs = ub.at<half>(4096, 256); auto hd = ub.at<half>(5120, 16);
        auto hp = ub.at<uint16_t>(6144, 16);
        vt::fill_fn(hs, 256, [](uint32_t i) { return i; });
        vt::fill(hp, std::vector<uint16_t>{1, 0, 0, 0, 0, 0, 0, 0x8000});
        // Normal mode, src1RepeatStride 0: both repeats reuse the same 128 bits.
        GatherMask(hd, hs, hp, false, 0, {1, 2, 8, 0}, ch);
        ResetMask();
        h = vt::read(hd, 4);
    });
    CHECK_EQ(cf, (uint64_t)4);
    CHECK_EQ(f[0], 3.0f);
    CHECK_EQ(f[1], 40.0f);
    CHECK_EQ(f[2], 70.0f);
    CHECK_EQ(f[3], 99.0f);
    CHECK(!counter);
    CHECK_EQ(lo, (uint64_t)100);
    CHECK_EQ(ch, (uint64_t)4);
    CHECK_EQ((float)h[0], 0.0f);
    CHECK_EQ((float)h[1], 127.0f);
    CHECK_EQ((float)h[2], 128.0f);
    CHECK_EQ((float)h[3], 255.0f);
}

SIMTEST(vector_reduce_sum_mask_form_tree_and_nop) {
    half tree = 0, nop = 0;
    float nopmax = 0;
    vt::run("vector_reduce_sum_mask_form_tree_and_nop", [&](vt::Ub& ub) {
        auto s = ub.at<half>(0, 512); auto d = ub.at<half>(2048, 16); auto tmp = ub.at<half>(4096, 512);
        vt::fill_fn(s, 512, [](uint32_t) { return 0; });
        s.SetValue(0, (half)2048);
        s.SetValue(256, (half)1);
        s.SetValue(384, (half)1);
        simtest::fence<HardEvent::S_V>();
        // Mask form on A2: tree inside a repeat AND across repeats:
        // (2048 + 0) + (1 + 1) = 2048 + 2 = 2050.
        ReduceSum(d, s, tmp, 128, 4, 8);
        simtest::fence<HardEvent::V_S>();
        tree = d.GetValue(0);
        // count 0 is a NOP: dst is not written.
        d.SetValue(0, (half)-7);
        simtest::fence<HardEvent::S_V>();
        ReduceSum(d, s, tmp, 0);
        simtest::fence<HardEvent::V_S>();
        nop = d.GetValue(0);
        auto f = ub.at<float>(8192, 64); auto fd = ub.at<float>(9216, 8); auto ft = ub.at<float>(10240, 64);
        fd.SetValue(0, -7.0f);
        simtest::fence<HardEvent::S_V>();
        ReduceMax(fd, f, ft, 0, true);
        simtest::fence<HardEvent::V_S>();
        nopmax = fd.GetValue(0);
    });
    CHECK_EQ((float)tree, 2050.0f);
    CHECK_EQ((float)nop, -7.0f);
    CHECK_EQ(nopmax, -7.0f);
}

SIMTEST(vector_whole_reduce_max_min_orders) {
    std::vector<float> vi, iv;
    std::vector<uint32_t> vib, ivb, oi;
    vt::run("vector_whole_reduce_max_min_orders", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 128); auto d = ub.at<float>(1024, 16);
        vt::fill_fn(s, 128, [](uint32_t i) { return (float)((i * 37) % 101); });
        s.SetValue(5, 1000.0f);
        s.SetValue(9, 1000.0f);  // tie: the smaller index (5) wins
        simtest::fence<HardEvent::S_V>();
        WholeReduceMax(d, s, 64, 2, 1, 1, 8);  // [value, index] per repeat, stride 1 result
        vi = vt::read(d, 4);
        vib = vt::read(d.ReinterpretCast<uint32_t>(), 4);
        vt::fill_fn(d, 16, [](uint32_t) { return -1.0f; });
        WholeReduceMin(d, s, 10, 2, 2, 1, 8, ReduceOrder::ORDER_INDEX_VALUE);  // stride 2 results
        iv = vt::read(d, 8);
        ivb = vt::read(d.ReinterpretCast<uint32_t>(), 8);
        WholeReduceMax(d, s, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_INDEX);
        oi = vt::read(d.ReinterpretCast<uint32_t>(), 2);
    });
    auto val = [](int i) { return i == 5 || i == 9 ? 1000.0f : (float)((i * 37) % 101); };
    auto arg = [&](int r, int n, bool mx) {
        int b = 0;
        for (int e = 1; e < n; ++e)
            if (mx ? val(r * 64 + e) > val(r * 64 + b) : val(r * 64 + e) < val(r * 64 + b)) b = e;
        return b;
    };
    CHECK_EQ(vi[0], 1000.0f);
    CHECK_EQ(vib[1], 5u);
    CHECK_EQ(vi[2], val(64 + arg(1, 64, true)));
    CHECK_EQ(vib[3], (uint32_t)arg(1, 64, true));
    CHECK_EQ(ivb[0], (uint32_t)arg(0, 10, false));
    CHECK_EQ(iv[1], val(arg(0, 10, false)));
    CHECK_EQ(iv[2], -1.0f);
    CHECK_EQ(ivb[4], (uint32_t)arg(1, 10, false));
    CHECK_EQ(iv[5], val(64 + arg(1, 10, false)));
    CHECK_EQ(oi[0], 5u);
    CHECK_EQ(oi[1], (uint32_t)arg(1, 64, true));
}

// PairReduceSum as a pair-sum tree level (weighted sampling): each output is
// ONE fp32 rounding of a + b (round to nearest even), and a continuous mask
// below 64 on one repeat sums only the selected pairs.
SIMTEST(vector_pair_sum_rounding_and_partial_mask) {
    std::vector<float> ps;
    const float e = 1.0f / 16777216.0f;  // 2^-24: half an ulp of 1
    vt::run("vector_pair_sum_rounding_and_partial_mask", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64);
        auto d = ub.at<float>(1024, 64);
        vt::fill_fn(s, 64, [](uint32_t) { return 9.0f; });
        s.SetValue(0, 1.0f);
        s.SetValue(1, e);  // tie: rounds to even (1)
        s.SetValue(2, 1.0f);
        s.SetValue(3, 3 * e);  // 1 + 1.5 ulp -> 1 + 2 ulp
        s.SetValue(4, 1e30f);
        s.SetValue(5, 1e30f);
        vt::fill_fn(d, 8, [](uint32_t) { return -1.0f; });
        PairReduceSum(d, s, 1, 6, 1, 1, 8);  // 6 elements: 3 pairs
        ps = vt::read(d, 3);
    });
    CHECK_EQ(ps[0], 1.0f);
    CHECK_EQ(ps[1], 1.0f + 4 * e);
    CHECK_EQ(ps[2], 2e30f);
}

SIMTEST(vector_block_max_and_pair_sum) {
    std::vector<float> bm, ps, bn;
    vt::run("vector_block_max_and_pair_sum", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 128); auto d = ub.at<float>(1024, 128);
        vt::fill_fn(s, 128, [](uint32_t i) { return (float)i; });
        BlockReduceMax(d, s, 2, 64, 1, 1, 8);  // 8 results per repeat, stride 1 = 8 results
        bm = vt::read(d, 16);
        PairReduceSum(d, s, 2, 64, 1, 1, 8);  // 32 pair sums per repeat, stride 1 = 128 B
        ps = vt::read(d, 64);
        vt::fill_fn(d, 16, [](uint32_t) { return -1.0f; });
        s.SetValue(2, -5.0f);
        simtest::fence<HardEvent::S_V>();
        BlockReduceMin(d, s, 1, 4, 1, 1, 8);
        bn = vt::read(d, 8);
    });
    for (int j = 0; j < 8; ++j) {
        CHECK_EQ(bm[j], 8.0f * j + 7);
        CHECK_EQ(bm[8 + j], 64.0f + 8 * j + 7);
    }
    for (int k = 0; k < 32; ++k) {
        CHECK_EQ(ps[k], 4.0f * k + 1);
        CHECK_EQ(ps[32 + k], 129.0f + 4 * k);
    }
    CHECK_EQ(bn[0], -5.0f);
    for (int j = 1; j < 8; ++j) CHECK_EQ(bn[j], 0.0f);  // no selected element in the block
}

// A NaN in vector max/min: the answer of ASCSIM_NAN_MAXMIN (propagate, the
// default: a NaN wins, a reduction gives the first; ignore: a number wins),
// the same for the element-wise, scalar and reducing forms.
SIMTEST(vector_max_min_nan_mode) {
    const char* env = std::getenv("ASCSIM_NAN_MAXMIN");
    const bool ignore = env != nullptr && std::strcmp(env, "ignore") == 0;
    std::vector<float> mx, mn, ms;
    float rmax = 0, wmax = 0, bmin = 0;
    uint32_t rimax = 99, wimax = 99;
    vt::run("vector_max_min_nan_mode", [&](vt::Ub& ub) {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        auto a = ub.at<float>(0, 64); auto b = ub.at<float>(256, 64); auto d = ub.at<float>(512, 64);
        auto t = ub.at<float>(768, 64);
        vt::fill(a, std::vector<float>{nan, 1, nan, 5, 2, 2, 2, 2});
        vt::fill(b, std::vector<float>{1, nan, nan, 3, 2, 2, 2, 2});
        Max(d, a, b, 8);
        mx = vt::read(d, 4);
        Min(d, a, b, 8);
        mn = vt::read(d, 4);
        Maxs(d, a, 0.0f, 8);
        ms = vt::read(d, 2);
        // [2, NaN, 5, NaN, 2, 2, 2, 2]: the first NaN at 1, the largest number 5 at 2.
        vt::fill(a, std::vector<float>{2, nan, 5, nan, 2, 2, 2, 2});
        ReduceMax(d, a, t, 8, true);
        simtest::fence<HardEvent::V_S>();
        rmax = d.GetValue(0);
        rimax = d.ReinterpretCast<uint32_t>().GetValue(1);
        simtest::fence<HardEvent::S_V>();
        WholeReduceMax(d, a, 8, 1, 1, 1, 8);
        simtest::fence<HardEvent::V_S>();
        wmax = d.GetValue(0);
        wimax = d.ReinterpretCast<uint32_t>().GetValue(1);
        simtest::fence<HardEvent::S_V>();
        BlockReduceMin(d, a, 1, 8, 1, 1, 8);
        simtest::fence<HardEvent::V_S>();
        bmin = d.GetValue(0);
    });
    if (ignore) {
        CHECK_EQ(mx[0], 1.0f);
        CHECK_EQ(mx[1], 1.0f);
        CHECK(std::isnan(mx[2]));  // nothing but NaN
        CHECK_EQ(mn[0], 1.0f);
        CHECK_EQ(mn[1], 1.0f);
        CHECK_EQ(ms[0], 0.0f);
        CHECK_EQ(rmax, 5.0f);
        CHECK_EQ(rimax, 2u);
        CHECK_EQ(wmax, 5.0f);
        CHECK_EQ(wimax, 2u);
        CHECK_EQ(bmin, 2.0f);
    } else {
        CHECK(std::isnan(mx[0]) && std::isnan(mx[1]) && std::isnan(mx[2]));
        CHECK(std::isnan(mn[0]) && std::isnan(mn[1]));
        CHECK(std::isnan(ms[0]));
        CHECK(std::isnan(rmax));
        CHECK_EQ(rimax, 1u);
        CHECK(std::isnan(wmax));
        CHECK_EQ(wimax, 1u);
        CHECK(std::isnan(bmin));
    }
    CHECK_EQ(mx[3], 5.0f);
    CHECK_EQ(mn[3], 3.0f);
    CHECK_EQ(ms[1], 1.0f);
}
