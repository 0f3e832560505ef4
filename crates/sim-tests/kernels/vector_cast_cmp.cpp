// Vector unit: Cast rounding modes (ascendc-api.md 5.4), Compare/CompareScalar
// bit order and Select (5.6).
#include <cmath>

#include "vector_util.h"

using namespace AscendC;

namespace {
const RoundMode kModes[] = {RoundMode::CAST_RINT, RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL, RoundMode::CAST_ROUND,
                            RoundMode::CAST_TRUNC, RoundMode::CAST_ODD};
}

SIMTEST(vector_cast_float_to_int32_modes) {
    std::vector<std::vector<int32_t>> got;
    vt::run("vector_cast_float_to_int32_modes", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64); auto d = ub.at<int32_t>(256, 64);
        vt::fill(s, std::vector<float>{2.5f, -2.5f, 1.5f, -1.5f, 0.4f, -0.6f, 2.6f, -0.5f});
        for (int m = 0; m < 5; ++m) {
            Cast(d, s, kModes[m], 8);
            got.push_back(vt::read(d, 8));
        }
    });
    const int32_t expect[5][8] = {
        {2, -2, 2, -2, 0, -1, 3, 0},    // RINT: ties to even
        {2, -3, 1, -2, 0, -1, 2, -1},   // FLOOR
        {3, -2, 2, -1, 1, 0, 3, 0},     // CEIL
        {3, -3, 2, -2, 0, -1, 3, -1},   // ROUND: ties away from zero
        {2, -2, 1, -1, 0, 0, 2, 0},     // TRUNC
    };
    for (int m = 0; m < 5; ++m)
        for (int i = 0; i < 8; ++i) CHECK_EQ(got[m][i], expect[m][i]);
}

SIMTEST(vector_cast_float_to_half_modes) {
    std::vector<std::vector<half>> got;
    vt::run("vector_cast_float_to_half_modes", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64); auto d = ub.at<half>(256, 64);
        vt::fill(s, std::vector<float>{2049.0f, -2049.0f, 2051.0f, 65520.0f, -65520.0f, 1.0f + std::ldexp(1.0f, -11), 3.0f});
        for (int m = 0; m < 6; ++m) {
            Cast(d, s, kModes[m], 7);
            got.push_back(vt::read(d, 7));
        }
    });
    // Overflow saturates to +-65504 (documented default saturation mode).
    const float up = 1.0f + std::ldexp(1.0f, -10);
    const float expect[6][7] = {
        {2048, -2048, 2052, 65504, -65504, 1.0f, 3},     // RINT
        {2048, -2050, 2050, 65504, -65504, 1.0f, 3},     // FLOOR
        {2050, -2048, 2052, 65504, -65504, up, 3},       // CEIL
        {2050, -2050, 2052, 65504, -65504, up, 3},       // ROUND
        {2048, -2048, 2050, 65504, -65504, 1.0f, 3},     // TRUNC
        {2050, -2050, 2050, 65504, -65504, up, 3},       // ODD: inexact -> odd significand
    };
    for (int m = 0; m < 6; ++m)
        for (int i = 0; i < 7; ++i) CHECK_EQ((float)got[m][i], expect[m][i]);
}

SIMTEST(vector_cast_other_pairs) {
    std::vector<float> i2f, h2f, s2f, b2f, f2b;
    std::vector<int32_t> h2i;
    std::vector<half> s2h, u2h, c2h;
    std::vector<int8_t> h2c;
    std::vector<uint8_t> h2u;
    std::vector<int16_t> h2s, sat16;
    vt::run("vector_cast_other_pairs", [&](vt::Ub& ub) {
        auto i32 = ub.at<int32_t>(0, 64); auto f = ub.at<float>(256, 64);
        vt::fill(i32, std::vector<int32_t>{16777217, 16777219, -16777217, 7});
        Cast(f, i32, RoundMode::CAST_NONE, 4);
        i2f = vt::read(f, 4);
        auto h = ub.at<half>(512, 128);
        vt::fill(h, std::vector<float>{-2.5f, 2.5f, -0.5f, 0.1f});
        Cast(i32, h, RoundMode::CAST_ROUND, 3);
        h2i = vt::read(i32, 3);
        Cast(f, h, RoundMode::CAST_NONE, 4);
        h2f = vt::read(f, 4);
        auto s16 = ub.at<int16_t>(1024, 128); auto hh = ub.at<half>(1536, 128);
        vt::fill(s16, std::vector<int>{2049, -3, -32768});
        Cast(hh, s16, RoundMode::CAST_NONE, 2);
        s2h = vt::read(hh, 2);
        Cast(f, s16, RoundMode::CAST_NONE, 3);
        s2f = vt::read(f, 3);
        auto u8 = ub.at<uint8_t>(2048, 128); auto i8 = ub.at<int8_t>(2304, 128);
        vt::fill(u8, std::vector<int>{200, 0});
        vt::fill(i8, std::vector<int>{-128, 127});
        Cast(hh, u8, RoundMode::CAST_NONE, 2);
        u2h = vt::read(hh, 2);
        Cast(hh, i8, RoundMode::CAST_NONE, 2);
        c2h = vt::read(hh, 2);
        vt::fill(hh, std::vector<float>{-3.5f, 2.5f, 3.9f, -1.5f});
        Cast(i8, hh, RoundMode::CAST_NONE, 2);
        h2c = vt::read(i8, 2);
        Cast(u8, hh[0], RoundMode::CAST_TRUNC, 3);
        h2u = vt::read(u8, 3);
        Cast(s16, hh, RoundMode::CAST_CEIL, 4);
        h2s = vt::read(s16, 4);
        auto bf = ub.at<bfloat16_t>(2560, 128);
        vt::fill(f, std::vector<float>{1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8), -1.5f});
        Cast(bf, f, RoundMode::CAST_RINT, 3);
        for (bfloat16_t v : vt::read(bf, 3)) f2b.push_back((float)v);
        Cast(bf, f, RoundMode::CAST_TRUNC, 3);
        for (bfloat16_t v : vt::read(bf, 3)) f2b.push_back((float)v);
        Cast(f, bf, RoundMode::CAST_NONE, 3);
        b2f = vt::read(f, 3);
        // Integer overflow saturates (documented default saturation mode).
        vt::fill(f, std::vector<float>{4194304.5f, -1e9f});
        Cast(s16, f, RoundMode::CAST_RINT, 2);
        sat16 = vt::read(s16, 2);
        vt::fill(i32, std::vector<int32_t>{40000, -40000, -7});
        Cast(s16, i32, RoundMode::CAST_NONE, 3);
        auto t = vt::read(s16, 3);
        sat16.insert(sat16.end(), t.begin(), t.end());
    });
    CHECK_EQ(sat16[0], 32767);
    CHECK_EQ(sat16[1], -32768);
    CHECK_EQ(sat16[2], 32767);
    CHECK_EQ(sat16[3], -32768);
    CHECK_EQ(sat16[4], -7);
    CHECK_EQ(i2f[0], 16777216.0f);
    CHECK_EQ(i2f[1], 16777220.0f);
    CHECK_EQ(i2f[2], -16777216.0f);
    CHECK_EQ(i2f[3], 7.0f);
    CHECK_EQ(h2i[0], -3);
    CHECK_EQ(h2i[1], 3);
    CHECK_EQ(h2i[2], -1);
    CHECK_EQ(h2f[3], (float)(half)0.1f);
    CHECK_EQ((float)s2h[0], 2048.0f);
    CHECK_EQ((float)s2h[1], -3.0f);
    CHECK_EQ(s2f[2], -32768.0f);
    CHECK_EQ((float)u2h[0], 200.0f);
    CHECK_EQ((float)c2h[0], -128.0f);
    CHECK_EQ((float)c2h[1], 127.0f);
    CHECK_EQ(h2c[0], -4);  // CAST_NONE = RINT where precision is lost
    CHECK_EQ(h2c[1], 2);
    CHECK_EQ(h2u[2], 3);
    CHECK_EQ(h2s[0], -3);
    CHECK_EQ(h2s[3], -1);
    const float b1 = 1.0f, b2 = 1.0f + std::ldexp(1.0f, -6), b3 = 1.0f + std::ldexp(1.0f, -7);
    CHECK_EQ(f2b[0], b1);
    CHECK_EQ(f2b[1], b2);
    CHECK_EQ(f2b[2], -1.5f);
    CHECK_EQ(f2b[4], b3);
    CHECK_EQ(b2f[0], b1);
    CHECK_EQ(b2f[1], b3);
}

SIMTEST(vector_cast_mask_form_wider_type_repeats) {
    std::vector<float> wide;
    std::vector<half> narrow;
    vt::run("vector_cast_mask_form_wider_type_repeats", [&](vt::Ub& ub) {
        auto h = ub.at<half>(0, 256); auto f = ub.at<float>(1024, 128); auto h2 = ub.at<half>(2048, 256);
        vt::fill_fn(h, 256, [](uint32_t i) { return i; });
        // half -> float: a repeat = 64 elements (256 B of float); the half side advances 4 blocks.
        Cast(f, h, RoundMode::CAST_NONE, 64, 2, {1, 1, 8, 4});
        wide = vt::read(f, 128);
        vt::fill_fn(h2, 256, [](uint32_t) { return -1; });
        // float -> half with a half-side repeat stride of 8 blocks leaves a 64-element gap.
        Cast(h2, f, RoundMode::CAST_RINT, 64, 2, {1, 1, 8, 8});
        narrow = vt::read(h2, 256);
    });
    for (int i = 0; i < 128; ++i) CHECK_EQ(wide[i], (float)i);
    for (int i = 0; i < 256; ++i) {
        int r = i / 128, e = i % 128;
        CHECK_EQ((float)narrow[i], e < 64 ? (float)(r * 64 + e) : -1.0f);
    }
}

SIMTEST(vector_compare_scalar_bits) {
    std::vector<uint8_t> lt, ge, eq, ne;
    vt::run("vector_compare_scalar_bits", [&](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64); auto d = ub.at<uint8_t>(512, 64);
        vt::fill_fn(s, 64, [](uint32_t i) { return i; });
        CompareScalar(d, s, 5.0f, CMPMODE::LT, 64);
        lt = vt::read(d, 8);
        CompareScalar(d, s, 60.0f, CMPMODE::GE, 64);
        ge = vt::read(d, 8);
        auto i = ub.at<int32_t>(1024, 64);
        vt::fill_fn(i, 64, [](uint32_t k) { return k; });
        CompareScalar(d, i, 9, CMPMODE::EQ, 64);
        eq = vt::read(d, 8);
        auto h = ub.at<half>(2048, 128);
        vt::fill_fn(h, 128, [](uint32_t k) { return k % 3; });
        CompareScalar(d, h, (half)0, CMPMODE::NE, 128);
        ne = vt::read(d, 16);
    });
    // Bit i of byte j <-> element 8j + i.
    CHECK_EQ(lt[0], 0x1F);
    for (int j = 1; j < 8; ++j) CHECK_EQ(lt[j], 0);
    for (int j = 0; j < 7; ++j) CHECK_EQ(ge[j], 0);
    CHECK_EQ(ge[7], 0xF0);
    for (int j = 0; j < 8; ++j) CHECK_EQ(eq[j], j == 1 ? 0x02 : 0);
    for (int j = 0; j < 16; ++j) {
        int b = 0;
        for (int k = 0; k < 8; ++k) b |= ((8 * j + k) % 3 != 0) << k;
        CHECK_EQ(ne[j], b);
    }
}

SIMTEST(vector_compare_tensor_repeats) {
    std::vector<uint8_t> eq, lt;
    vt::run("vector_compare_tensor_repeats", [&](vt::Ub& ub) {
        auto a = ub.at<half>(0, 256); auto b = ub.at<half>(512, 256); auto d = ub.at<uint8_t>(1024, 64);
        vt::fill_fn(a, 256, [](uint32_t i) { return i % 7; });
        vt::fill_fn(b, 256, [](uint32_t) { return 3; });
        Compare(d, a, b, CMPMODE::EQ, 256);
        eq = vt::read(d, 32);
        // The mask of the repeat form is ignored on A2: all 128 elements are compared.
        Compare(d, a, b, CMPMODE::LT, 1, 1, {1, 1, 1, 8, 8, 8});
        lt = vt::read(d, 16);
    });
    for (int j = 0; j < 32; ++j) {
        int e = 0, l = 0;
        for (int k = 0; k < 8; ++k) {
            e |= ((8 * j + k) % 7 == 3) << k;
            l |= ((8 * j + k) % 7 < 3) << k;
        }
        CHECK_EQ(eq[j], e);
        if (j < 16) CHECK_EQ(lt[j], l);
    }
}

SIMTEST(vector_select_modes) {
    std::vector<half> tt, spr;
    std::vector<float> ts;
    vt::run("vector_select_modes", [&](vt::Ub& ub) {
        auto a = ub.at<half>(0, 256); auto b = ub.at<half>(512, 256); auto d = ub.at<half>(1024, 256);
        auto m = ub.at<uint8_t>(2048, 64);
        vt::fill_fn(a, 256, [](uint32_t i) { return i; });
        vt::fill_fn(b, 256, [](uint32_t i) { return -(int)i; });
        vt::fill_fn(m, 32, [](uint32_t j) { return j * 7 + 1; });
        // Tensor-tensor: 256 bits consumed continuously.
        Select(d, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 256);
        tt = vt::read(d, 256);
        // Mode 0: the first 128 bits apply to every repeat.
        Select(d, m, a, b, SELMODE::VSEL_CMPMASK_SPR, 256);
        spr = vt::read(d, 256);
        auto fa = ub.at<float>(3072, 64); auto fd = ub.at<float>(3584, 64);
        vt::fill_fn(fa, 64, [](uint32_t i) { return i; });
        Select(fd, m, fa, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
        ts = vt::read(fd, 64);
    });
    auto bit = [](int i) { return (((i / 8) * 7 + 1) >> (i % 8)) & 1; };
    for (int i = 0; i < 256; ++i) {
        CHECK_EQ((float)tt[i], bit(i) ? (float)i : -(float)i);
        CHECK_EQ((float)spr[i], bit(i % 128) ? (float)i : -(float)i);
    }
    for (int i = 0; i < 64; ++i) CHECK_EQ(ts[i], bit(i) ? (float)i : -1.0f);
}

SIMTEST(vector_select_mask_forms) {
    std::vector<float> tt, ts;
    vt::run("vector_select_mask_forms", [&](vt::Ub& ub) {
        auto a = ub.at<float>(0, 128); auto b = ub.at<float>(512, 128); auto d = ub.at<float>(1024, 128);
        auto m = ub.at<uint8_t>(2048, 32);
        vt::fill_fn(a, 128, [](uint32_t i) { return i; });
        vt::fill_fn(b, 128, [](uint32_t i) { return -(float)i; });
        vt::fill_fn(m, 16, [](uint32_t j) { return j * 37 + 5; });
        vt::fill_fn(d, 128, [](uint32_t) { return 999.0f; });
        // Mode 2, 10 leading elements of each of 2 repeats; repeat r uses bits [64r, 64r + 64).
        Select(d, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 10, 2, {1, 1, 1, 8, 8, 8});
        tt = vt::read(d, 128);
        vt::fill_fn(d, 128, [](uint32_t) { return 999.0f; });
        const uint64_t mask[2] = {0xF0ull, 0};
        Select(d, m, a, 0.5f, SELMODE::VSEL_TENSOR_SCALAR_MODE, mask, 2, {1, 1, 1, 8, 8, 8});
        ts = vt::read(d, 128);
    });
    auto bit = [](int i) { return (((i / 8) * 37 + 5) >> (i % 8)) & 1; };
    for (int i = 0; i < 128; ++i) {
        int e = i % 64;
        CHECK_EQ(tt[i], e < 10 ? (bit(i) ? (float)i : -(float)i) : 999.0f);
        CHECK_EQ(ts[i], (e >= 4 && e < 8) ? (bit(i) ? (float)i : 0.5f) : 999.0f);
    }
}

SIMTEST(vector_trace_events) {
    std::vector<ascsim_event> ev;
    std::vector<std::string> names;
    vt::run("vector_trace_events", [&](vt::Ub& ub) {
        auto h = ub.at<half>(0, 256); auto f = ub.at<float>(1024, 128); auto m = ub.at<uint8_t>(2048, 64);
        auto& tr = ascsim::core().trace;
        size_t start = tr.size();
        Cast(f, h, RoundMode::CAST_NONE, 64, 2, {1, 1, 8, 4});
        Compare(m, h, h, CMPMODE::EQ, 256);
        PipeBarrier<PIPE_V>();
        Duplicate(h, (half)0, 200);
        uint64_t cnt = 0;
        GatherMask(f, f, 1, false, 0, {1, 2, 8, 0}, cnt);
        for (size_t k = start; k < tr.size(); ++k) {
            if (tr[k].kind != ASCSIM_EV_INSTR) continue;
            ev.push_back(tr[k]);
            names.push_back(ascsim_op_name(tr[k].op));
        }
    });
    CHECK_EQ(ev.size(), (size_t)4);
    for (auto& e : ev) CHECK_EQ((int)e.pipe, (int)ASCSIM_PIPE_V);
    CHECK(names[0] == "Cast" && names[1] == "Compare" && names[2] == "Duplicate" && names[3] == "GatherMask");
    CHECK_EQ(ev[0].repeats, 2u);  // 2 repeats of 64 (float side)
    CHECK_EQ(ev[0].bytes, (uint64_t)(128 * 6));
    CHECK_EQ(ev[1].repeats, 2u);  // 256 half = 2 x 256 B
    CHECK_EQ(ev[2].repeats, 2u);  // 200 half -> 2 repeats
    CHECK_EQ(ev[2].bytes, (uint64_t)400);
    CHECK_EQ(ev[3].repeats, 2u);
}
