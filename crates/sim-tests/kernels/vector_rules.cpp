// Vector unit strictness: one test per rule (ascendc-api.md 5.1, 5.4, 5.6, 10).
#include "vector_util.h"

using namespace AscendC;

SIMTEST(vector_rule_repeat_over_255) {
    vt::violation("repeat count over 255", "vector_rule_repeat_over_255", [](vt::Ub& ub) {
        auto s = ub.at<float>(0, 8192); auto d = ub.at<float>(40960, 512);
        WholeReduceSum(d, s, 64, 256, 1, 1, 1);
    });
    vt::violation("repeat count over 255", "vector_rule_repeat_over_255_gm", [](vt::Ub& ub) {
        auto s = ub.at<float>(0, 8192); auto d = ub.at<float>(40960, 512);
        uint64_t cnt = 0;
        GatherMask(d, s, 1, false, 0, {1, 300, 1, 0}, cnt);
    });
}

SIMTEST(vector_rule_misaligned_operand) {
    vt::violation("misaligned address", "vector_rule_misaligned_operand", [](vt::Ub& ub) {
        auto a = ub.at<float>(0, 128); auto b = ub.at<float>(512, 128); auto d = ub.at<float>(1024, 128);
        Add(d, a[1], b, 64);  // 4-byte offset view: not 32-byte aligned
    });
}

SIMTEST(vector_rule_unsupported_dtype) {
    vt::violation("unsupported dtype on A2", "vector_rule_unsupported_add_u32", [](vt::Ub& ub) {
        auto a = ub.at<uint32_t>(0, 64);
        Add(a, a, a, 64);
    });
    vt::violation("unsupported dtype on A2", "vector_rule_unsupported_and_i32", [](vt::Ub& ub) {
        auto a = ub.at<int32_t>(0, 64);
        And(a, a, a, 64);
    });
    vt::violation("unsupported dtype on A2", "vector_rule_unsupported_cast", [](vt::Ub& ub) {
        auto a = ub.at<int32_t>(0, 64);
        auto b = ub.at<int8_t>(512, 64);
        Cast(b, a, RoundMode::CAST_RINT, 64);
    });
    vt::violation("unsupported dtype on A2", "vector_rule_unsupported_cmp_i32_lt", [](vt::Ub& ub) {
        auto a = ub.at<int32_t>(0, 64);
        auto d = ub.at<uint8_t>(512, 64);
        CompareScalar(d, a, 3, CMPMODE::LT, 64);
    });
}

SIMTEST(vector_rule_compare_count) {
    vt::violation("compare count not 256-byte multiple", "vector_rule_compare_count", [](vt::Ub& ub) {
        auto a = ub.at<float>(0, 64);
        auto d = ub.at<uint8_t>(512, 64);
        CompareScalar(d, a, 1.0f, CMPMODE::LT, 32);
    });
}

SIMTEST(vector_rule_cast_needs_round_mode) {
    vt::violation("unsupported round mode", "vector_rule_cast_needs_round_mode", [](vt::Ub& ub) {
        auto a = ub.at<float>(0, 64);
        auto b = ub.at<int32_t>(512, 64);
        Cast(b, a, RoundMode::CAST_NONE, 64);
    });
    vt::violation("unsupported round mode", "vector_rule_cast_bf16_none", [](vt::Ub& ub) {
        auto a = ub.at<float>(0, 64);
        auto b = ub.at<bfloat16_t>(512, 64);
        Cast(b, a, RoundMode::CAST_NONE, 64);
    });
    vt::violation("unsupported round mode", "vector_rule_cast_half_float_rint", [](vt::Ub& ub) {
        auto a = ub.at<half>(0, 64);
        auto b = ub.at<float>(512, 64);
        Cast(b, a, RoundMode::CAST_RINT, 64);
    });
}

SIMTEST(vector_rule_access_beyond_tensor) {
    vt::violation("access beyond tensor", "vector_rule_access_beyond_tensor", [](vt::Ub& ub) {
        auto a = ub.at<float>(0, 64); auto d = ub.at<float>(512, 64);
        Adds(d, a, 1.0f, 65);
    });
}

SIMTEST(vector_rule_more_dtypes_and_offsets) {
    vt::violation("unsupported dtype on A2", "vector_rule_select_i32", [](vt::Ub& ub) {
        auto a = ub.at<int32_t>(0, 64);
        auto m = ub.at<uint8_t>(512, 32);
        Select(a, m, a, a, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64);
    });
    vt::violation("unsupported dtype on A2", "vector_rule_gathermask_pattern_width", [](vt::Ub& ub) {
        auto a = ub.at<float>(0, 64);
        auto p = ub.at<uint16_t>(512, 16);
        uint64_t cnt = 0;
        GatherMask(a, a, p, false, 0, {1, 1, 8, 0}, cnt);
    });
    vt::violation("unsupported dtype on A2", "vector_rule_reduce_int", [](vt::Ub& ub) {
        auto a = ub.at<int32_t>(0, 64);
        ReduceSum(a, a, a, 64);
    });
    vt::violation("misaligned address", "vector_rule_gather_offset", [](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64); auto d = ub.at<float>(512, 8);
        auto off = ub.at<uint32_t>(1024, 8);
        vt::fill(off, std::vector<uint32_t>{6u});  // not a multiple of sizeof(float)
        Gather(d, s, off, 0, 1);
    });
    vt::violation("operand overlap", "vector_rule_gather_in_place", [](vt::Ub& ub) {
        auto s = ub.at<float>(0, 64);
        auto off = ub.at<uint32_t>(1024, 8);
        off.SetValue(0, 4u);
        Gather(s, s, off, 0, 1);
    });
}
