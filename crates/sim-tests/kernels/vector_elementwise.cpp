// Vector unit: mask register, element-wise ops, strides, bit ops.
// Expected values follow ascendc-api.md 5.1-5.3 (element e of repeat r at
// base + (r*repStride + (e/epb)*blkStride)*32 B + (e%epb)*sizeof(T)).
#include "vector_util.h"

using namespace AscendC;

SIMTEST(vector_add_count) {
    std::vector<float> out;
    bool counter = true;
    uint64_t hi = 0, lo = 0;
    ascsim_event ev{};
    vt::run("vector_add_count", [&](vt::Ub& ub) {
        auto a = ub.at<float>(0, 128); auto b = ub.at<float>(512, 128); auto d = ub.at<float>(1024, 128);
        vt::fill_fn(a, 128, [](uint32_t i) { return i; });
        vt::fill_fn(b, 128, [](uint32_t i) { return 1000.0f * i; });
        vt::fill_fn(d, 128, [](uint32_t) { return -1.0f; });
        Add(d, a, b, 100);
        ev = ascsim::core().trace.back();
        counter = ascsim::core().mask_counter;
        hi = ascsim::core().mask_hi;
        lo = ascsim::core().mask_lo;
        out = vt::read(d, 128);
    });
    for (int i = 0; i < 100; ++i) CHECK_EQ(out[i], 1001.0f * i);
    for (int i = 100; i < 128; ++i) CHECK_EQ(out[i], -1.0f);
    // Count form restores Normal mode and the full mask.
    CHECK(!counter);
    CHECK(hi == ~0ull && lo == ~0ull);
    // One event on pipe V: 100 floats = 2 repeats of 64, 3 operands x 400 B.
    CHECK_EQ((int)ev.pipe, (int)ASCSIM_PIPE_V);
    CHECK_EQ(ev.repeats, 2u);
    CHECK_EQ(ev.bytes, (uint64_t)1200);
}

SIMTEST(vector_bitwise_mask_half) {
    std::vector<half> out;
    uint64_t hi = 0, lo = 0;
    vt::run("vector_bitwise_mask_half", [&](vt::Ub& ub) {
        auto a = ub.at<half>(0, 256); auto b = ub.at<half>(1024, 256); auto d = ub.at<half>(2048, 256);
        vt::fill_fn(a, 256, [](uint32_t i) { return i; });
        vt::fill_fn(b, 256, [](uint32_t) { return 1; });
        vt::fill_fn(d, 256, [](uint32_t) { return -1; });
        // mask[0] = elements 0..63, mask[1] = elements 64..127 of each repeat.
        const uint64_t mask[2] = {0x5ull, (1ull << 63) | 1ull};
        Add(d, a, b, mask, 2, {1, 1, 1, 8, 8, 8});
        hi = ascsim::core().mask_hi;
        lo = ascsim::core().mask_lo;
        out = vt::read(d, 256);
    });
    for (int i = 0; i < 256; ++i) {
        int e = i % 128;
        bool sel = e == 0 || e == 2 || e == 64 || e == 127;
        CHECK_EQ((float)out[i], sel ? (float)(i + 1) : -1.0f);
    }
    // isSetMask=true leaves the register set to the API's mask.
    CHECK(lo == 0x5ull && hi == ((1ull << 63) | 1ull));
}

SIMTEST(vector_continuous_mask_strides) {
    std::vector<float> out;
    vt::run("vector_continuous_mask_strides", [&](vt::Ub& ub) {
        auto a = ub.at<float>(0, 512); auto b = ub.at<float>(4096, 64); auto d = ub.at<float>(8192, 256);
        vt::fill_fn(a, 512, [](uint32_t i) { return i; });
        vt::fill_fn(b, 64, [](uint32_t i) { return 1000.0f * i; });
        vt::fill_fn(d, 256, [](uint32_t) { return -1.0f; });
        // 10 leading elements per repeat; src0 block stride 2, repeat stride 16 blocks;
        // src1 repeat stride 0 (same 8 blocks every repeat); dst repeat stride 16 blocks.
        Add(d, a, b, 10, 2, {1, 2, 1, 16, 16, 0});
        out = vt::read(d, 256);
    });
    std::vector<float> expect(256, -1.0f);
    for (int r = 0; r < 2; ++r)
        for (int e = 0; e < 10; ++e) {
            int s0 = (r * 16 + (e / 8) * 2) * 8 + e % 8;
            int s1 = (e / 8) * 8 + e % 8;
            int dd = (r * 16 + e / 8) * 8 + e % 8;
            expect[dd] = (float)s0 + 1000.0f * s1;
        }
    for (int i = 0; i < 256; ++i) CHECK_EQ(out[i], expect[i]);
}

SIMTEST(vector_counter_mode_external_mask) {
    std::vector<float> out;
    bool counter_after = false;
    vt::run("vector_counter_mode_external_mask", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 256); auto d = ub.at<float>(1024, 256);
        vt::fill_fn(s, 256, [](uint32_t i) { return i; });
        vt::fill_fn(d, 256, [](uint32_t) { return -1.0f; });
        SetMaskCount();
        SetVectorMask<float, MaskMode::COUNTER>(0, 70);
        // Counter mode: 70 elements in total, repeatTime ignored.
        Adds<float, false>(d, s, 0.5f, MASK_PLACEHOLDER, 1, {1, 1, 8, 8});
        counter_after = ascsim::core().mask_counter;
        SetMaskNorm();
        ResetMask();
        out = vt::read(d, 256);
    });
    CHECK(counter_after);
    for (int i = 0; i < 256; ++i) CHECK_EQ(out[i], i < 70 ? i + 0.5f : -1.0f);
}

SIMTEST(vector_mask_register_reuse) {
    std::vector<half> d1, d2;
    vt::run("vector_mask_register_reuse", [&](vt::Ub& ub) {
        auto s = ub.at<half>(0, 256); auto d = ub.at<half>(1024, 256); auto e = ub.at<half>(2048, 256);
        vt::fill_fn(s, 256, [](uint32_t i) { return i; });
        vt::fill_fn(d, 256, [](uint32_t) { return -1; });
        vt::fill_fn(e, 256, [](uint32_t) { return -1; });
        // Muls with a continuous mask of 3 leaves the register = 3 leading elements.
        Muls(d, s, (half)2, 3, 1, {1, 1, 8, 8});
        PipeBarrier<PIPE_V>();
        // isSetMask=false reuses it for both repeats.
        Adds<half, false>(d, s, (half)1, MASK_PLACEHOLDER, 2, {1, 1, 8, 8});
        // SetVectorMask takes the HIGH word first: element 64 and element 1.
        SetVectorMask<half>(1, 2);
        Duplicate<half, false>(e, (half)7, MASK_PLACEHOLDER, 1, 1, 8);
        ResetMask();
        d1 = vt::read(d, 256);
        d2 = vt::read(e, 256);
    });
    for (int i = 0; i < 256; ++i) {
        int k = i % 128;
        CHECK_EQ((float)d1[i], k < 3 ? (float)(i + 1) : -1.0f);
        CHECK_EQ((float)d2[i], (i == 1 || i == 64) ? 7.0f : -1.0f);
    }
}

SIMTEST(vector_duplicate_strides) {
    std::vector<int32_t> out;
    vt::run("vector_duplicate_strides", [&](vt::Ub& ub) {
        auto d = ub.at<int32_t>(0, 128);
        vt::fill_fn(d, 128, [](uint32_t) { return -1; });
        // 12 leading elements, block stride 2, repeat stride 4 blocks, 2 repeats.
        Duplicate(d, (int32_t)5, 12, 2, 2, 4);
        out = vt::read(d, 128);
    });
    std::vector<int32_t> expect(128, -1);
    for (int r = 0; r < 2; ++r)
        for (int e = 0; e < 12; ++e) expect[(r * 4 + (e / 8) * 2) * 8 + e % 8] = 5;
    for (int i = 0; i < 128; ++i) CHECK_EQ(out[i], expect[i]);
}

SIMTEST(vector_arith_types) {
    std::vector<int16_t> s16;
    std::vector<int32_t> i32;
    std::vector<half> h;
    std::vector<float> f;
    vt::run("vector_arith_types", [&](vt::Ub& ub) {
        auto a = ub.at<int16_t>(0, 16); auto b = ub.at<int16_t>(64, 16); auto d = ub.at<int16_t>(128, 16);
        vt::fill(a, std::vector<int>{32767, -32768, 100, -5});
        vt::fill(b, std::vector<int>{1, -1, -200, 7});
        Add(d, a, b, 4);  // int16 wraps
        s16 = vt::read(d, 4);
        Max(d, a, b, 4);
        auto m = vt::read(d, 4);
        s16.insert(s16.end(), m.begin(), m.end());
        auto x = ub.at<int32_t>(256, 8); auto y = ub.at<int32_t>(288, 8); auto z = ub.at<int32_t>(320, 8);
        vt::fill(x, std::vector<int32_t>{65536, -7, 3});
        vt::fill(y, std::vector<int32_t>{65536, 3, -9});
        Mul(z, x, y, 3);  // 2^32 wraps to 0
        i32 = vt::read(z, 3);
        Sub(z, x, y, 3);
        auto q = vt::read(z, 3);
        i32.insert(i32.end(), q.begin(), q.end());
        Mins(z, x, (int32_t)0, 3);
        q = vt::read(z, 3);
        i32.insert(i32.end(), q.begin(), q.end());
        auto p = ub.at<half>(512, 16); auto r = ub.at<half>(544, 16); auto o = ub.at<half>(576, 16);
        vt::fill(p, std::vector<float>{2048, 0.5f, 3});
        vt::fill(r, std::vector<float>{1, 0.25f, -4});
        Add(o, p, r, 3);  // 2049 -> 2048 (ties to even)
        h = vt::read(o, 3);
        Mul(o, p, r, 3);
        auto hm = vt::read(o, 3);
        h.insert(h.end(), hm.begin(), hm.end());
        auto fa = ub.at<float>(1024, 8); auto fo = ub.at<float>(1056, 8);
        vt::fill(fa, std::vector<float>{1.5f, -2.0f});
        Maxs(fo, fa, 0.0f, 2);
        f = vt::read(fo, 2);
    });
    std::vector<int16_t> es = {-32768, 32767, -100, 2, 32767, -1, 100, 7};
    for (int i = 0; i < 8; ++i) CHECK_EQ(s16[i], es[i]);
    std::vector<int32_t> ei = {0, -21, -27, 0, -10, 12, 0, -7, 0};
    for (int i = 0; i < 9; ++i) CHECK_EQ(i32[i], ei[i]);
    std::vector<float> eh = {2048, 0.75f, -1, 2048, 0.125f, -12};
    for (int i = 0; i < 6; ++i) CHECK_EQ((float)h[i], eh[i]);
    CHECK_EQ(f[0], 1.5f);
    CHECK_EQ(f[1], 0.0f);
}

SIMTEST(vector_bit_ops) {
    std::vector<int16_t> s;
    std::vector<uint16_t> u;
    std::vector<int32_t> i;
    std::vector<uint32_t> w;
    vt::run("vector_bit_ops", [&](vt::Ub& ub) {
        auto a = ub.at<int16_t>(0, 16); auto b = ub.at<int16_t>(32, 16); auto d = ub.at<int16_t>(64, 16);
        vt::fill(a, std::vector<int>{0x0F0F, -16, 0x7FFF});
        vt::fill(b, std::vector<int>{0x00FF, 0x0F00, 1});
        And(d, a, b, 3);
        s = vt::read(d, 3);
        Or(d, a, b, 3);
        auto t = vt::read(d, 3);
        s.insert(s.end(), t.begin(), t.end());
        Not(d, a, 3);
        t = vt::read(d, 3);
        s.insert(s.end(), t.begin(), t.end());
        ShiftRight(d, a, (int16_t)2, 3);  // arithmetic for signed
        t = vt::read(d, 3);
        s.insert(s.end(), t.begin(), t.end());
        auto ua = ub.at<uint16_t>(128, 16); auto ud = ub.at<uint16_t>(160, 16);
        vt::fill(ua, std::vector<int>{0x8000, 0x00F0});
        ShiftRight(ud, ua, (uint16_t)3, 2);  // logical for unsigned
        u = vt::read(ud, 2);
        ShiftLeft(ud, ua, (uint16_t)1, 2);
        auto uu = vt::read(ud, 2);
        u.insert(u.end(), uu.begin(), uu.end());
        auto ia = ub.at<int32_t>(256, 8); auto id = ub.at<int32_t>(288, 8);
        vt::fill(ia, std::vector<int32_t>{1, -1024});
        ShiftLeft(id, ia, 31, 2);
        i = vt::read(id, 2);
        ShiftRight(id, ia, 4, 2);
        auto ii = vt::read(id, 2);
        i.insert(i.end(), ii.begin(), ii.end());
        auto wa = ub.at<uint32_t>(320, 8); auto wd = ub.at<uint32_t>(352, 8);
        vt::fill(wa, std::vector<uint32_t>{0x80000000u});
        ShiftRight(wd, wa, 31u, 1);
        w = vt::read(wd, 1);
    });
    std::vector<int16_t> es = {0x000F, 0x0F00, 1, 0x0FFF, -16 | 0x0F00, 0x7FFF, (int16_t)0xF0F0, 15, (int16_t)0x8000,
                               0x0F0F >> 2, -4, 0x1FFF};
    for (int k = 0; k < 12; ++k) CHECK_EQ(s[k], es[k]);
    CHECK_EQ(u[0], 0x1000);
    CHECK_EQ(u[1], 0x001E);
    CHECK_EQ(u[2], 0);
    CHECK_EQ(u[3], 0x01E0);
    CHECK_EQ(i[0], INT32_MIN);
    CHECK_EQ(i[1], 0);
    CHECK_EQ(i[2], 0);
    CHECK_EQ(i[3], -64);
    CHECK_EQ(w[0], 1u);
}

SIMTEST(vector_index_and_brcb) {
    std::vector<float> idx;
    std::vector<int16_t> i16;
    std::vector<float> br;
    vt::run("vector_index_and_brcb", [&](vt::Ub& ub) {
        auto d = ub.at<float>(0, 128);
        CreateVecIndex(d, 10.0f, 70);
        idx = vt::read(d, 70);
        auto s = ub.at<int16_t>(512, 256);
        CreateVecIndex(s, (int16_t)-5, 200);
        i16 = vt::read(s, 200);
        auto src = ub.at<float>(1024, 16); auto dst = ub.at<float>(2048, 256);
        vt::fill_fn(src, 16, [](uint32_t k) { return k + 1; });
        vt::fill_fn(dst, 256, [](uint32_t) { return -1.0f; });
        // Each of 8 source elements per repeat fills one 32 B block of dst;
        // block stride 2, repeat stride 16 blocks.
        Brcb(dst, src, 2, {2, 16});
        br = vt::read(dst, 256);
    });
    for (int k = 0; k < 70; ++k) CHECK_EQ(idx[k], 10.0f + k);
    for (int k = 0; k < 200; ++k) CHECK_EQ(i16[k], k - 5);
    std::vector<float> expect(256, -1.0f);
    for (int r = 0; r < 2; ++r)
        for (int j = 0; j < 8; ++j)
            for (int e = 0; e < 8; ++e) expect[(r * 16 + j * 2) * 8 + e] = (float)(8 * r + j + 1);
    for (int k = 0; k < 256; ++k) CHECK_EQ(br[k], expect[k]);
}

SIMTEST(vector_noop_on_aic) {
    simtest::run_ok("vector_noop_on_aic", KERNEL_TYPE_MIX_AIC_1_2, 1, [&] {
        KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
        if ASCEND_IS_AIC {
            // An empty tensor would fail any bound check: the call must do nothing.
            LocalTensor<float> t;
            Add(t, t, t, 64);
            Duplicate(t, 1.0f, 64);
            SetMaskCount();
        }
    });
}

SIMTEST(vector_counter_mode_cast_and_reduce) {
    std::vector<half> h;
    std::vector<float> sums;
    vt::run("vector_counter_mode_cast_and_reduce", [&](vt::Ub& ub) {
        auto f = ub.at<float>(0, 128); auto hd = ub.at<half>(1024, 128); auto d = ub.at<float>(2048, 8);
        vt::fill_fn(f, 128, [](uint32_t i) { return i + 0.5f; });
        vt::fill_fn(hd, 128, [](uint32_t) { return -1; });
        SetMaskCount();
        SetVectorMask<float, MaskMode::COUNTER>(0, 100);
        // 100 elements in total; a repeat is 64 elements (the float side), half side stride 4 blocks.
        Cast<half, float, false>(hd, f, RoundMode::CAST_FLOOR, MASK_PLACEHOLDER, 1, {1, 1, 4, 8});
        // Reductions follow the register too: repeats of 64 then 36 elements.
        WholeReduceSum<float, false>(d, f, MASK_PLACEHOLDER, 1, 1, 1, 8);
        SetMaskNorm();
        ResetMask();
        h = vt::read(hd, 128);
        sums = vt::read(d, 2);
    });
    for (int i = 0; i < 128; ++i) CHECK_EQ((float)h[i], i < 100 ? i + 0.5f : -1.0f);  // exact in half
    float s0 = 0, s1 = 0;
    for (int i = 0; i < 64; ++i) s0 += i + 0.5f;
    for (int i = 64; i < 100; ++i) s1 += i + 0.5f;
    CHECK_EQ(sums[0], s0);
    CHECK_EQ(sums[1], s1);
}

SIMTEST(vector_unary_math_and_div) {
    std::vector<float> f;
    std::vector<half> h;
    std::vector<int32_t> i;
    vt::run("vector_unary_math_and_div", [&](vt::Ub& ub) {
        auto a = ub.at<float>(0, 64); auto b = ub.at<float>(256, 64); auto d = ub.at<float>(512, 64);
        vt::fill(a, std::vector<float>{1, 16, 0, -1});
        vt::fill(b, std::vector<float>{3, 4, 2, 0.5f});
        Div(d, a, b, 4);
        f = vt::read(d, 4);
        Sqrt(d, a, 2);
        auto t = vt::read(d, 2);
        f.insert(f.end(), t.begin(), t.end());
        Exp(d[8], a[0], 4);  // offsets 32 B: aligned views
        Rsqrt(d, b[0], 2);
        t = vt::read(d, 12);
        f.insert(f.end(), t.begin(), t.end());
        AddRelu(d, a, b, 4);
        t = vt::read(d, 4);
        f.insert(f.end(), t.begin(), t.end());
        auto x = ub.at<half>(1024, 128); auto y = ub.at<half>(1280, 128);
        vt::fill(x, std::vector<float>{-2.5f, 4, 1});
        Abs(y, x, 3);
        h = vt::read(y, 3);
        Reciprocal(y, x, 3);
        auto hh = vt::read(y, 3);
        h.insert(h.end(), hh.begin(), hh.end());
        auto p = ub.at<int32_t>(2048, 8); auto q = ub.at<int32_t>(2080, 8);
        vt::fill(p, std::vector<int32_t>{-3, 5});
        Relu(q, p, 2);
        i = vt::read(q, 2);
    });
    CHECK_EQ(f[0], 1.0f / 3.0f);
    CHECK_EQ(f[1], 4.0f);
    CHECK_EQ(f[2], 0.0f);
    CHECK_EQ(f[3], -2.0f);
    CHECK_EQ(f[4], 1.0f);
    CHECK_EQ(f[5], 4.0f);
    CHECK_EQ(f[6], 1.0f / std::sqrt(3.0f));
    CHECK_EQ(f[7], 0.5f);
    CHECK_EQ(f[16], 1.0f);  // exp(0) at d[8 + 2]
    CHECK_EQ(f[18], 4.0f);  // AddRelu: 1 + 3
    CHECK_EQ(f[21], 0.0f);  // AddRelu: -1 + 0.5 -> 0
    CHECK_EQ((float)h[0], 2.5f);
    CHECK_EQ((float)h[1], 4.0f);
    CHECK_EQ((float)h[3], -0.39990234375f);  // 1 / -2.5 = -1638 * 2^-12 in half
    CHECK_EQ((float)h[4], 0.25f);
    CHECK_EQ(i[0], 0);
    CHECK_EQ(i[1], 5);
}
