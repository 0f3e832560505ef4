// The simulator's ACL host subset: results and error codes as CANN documents them.
#include "harness.h"

SIMTEST(acl_soc_name_and_core_counts) {
    simtest::stream();
    const char* name = aclrtGetSocName();
    CHECK(name != nullptr);
    CHECK(std::string(name) == "Ascend910B4");
    int64_t aic = 0, aiv = 0, l2 = 0;
    CHECK_EQ(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &aic), ACL_SUCCESS);
    CHECK_EQ(aclGetDeviceCapability(0, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &aiv), ACL_SUCCESS);
    CHECK_EQ(aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, &l2), ACL_SUCCESS);
    CHECK_EQ(aic, 20);
    CHECK_EQ(aiv, 40);
    CHECK_EQ(l2, 96ll << 20);
    CHECK_EQ(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, nullptr), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
}

SIMTEST(acl_malloc_beyond_hbm_fails) {
    simtest::stream();
    void* p = nullptr;
    CHECK_EQ(aclrtMalloc(&p, 33ull << 30, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    CHECK(std::string(aclGetRecentErrMsg()).find("HBM") != std::string::npos);
    CHECK_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
}

SIMTEST(acl_malloc_alignment_and_rounding) {
    simtest::stream();
    uint64_t before = ascsim_allocated_bytes(0);
    void* p = nullptr;
    CHECK_EQ(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    CHECK_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    // Rounded up to 32 bytes plus 32 more: 128 + 32.
    CHECK_EQ(ascsim_allocated_bytes(0) - before, 160u);
    std::vector<uint8_t> host(200, 1);
    CHECK_EQ(aclrtMemcpy(p, 160, host.data(), 160, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    CHECK_EQ(aclrtMemcpy(p, 200, host.data(), 200, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemcpy(p, 10, host.data(), 20, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(aclrtMemset(p, 160, 0, 160), ACL_SUCCESS);
    CHECK_EQ(aclrtFree(p), ACL_SUCCESS);
    CHECK_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
    CHECK_EQ(ascsim_allocated_bytes(0), before);
}

SIMTEST(acl_failed_launch_reports_at_synchronize) {
    std::string err = simtest::run("bad", KERNEL_TYPE_AIV_ONLY, 1, [] { AscendC::WaitFlag<AscendC::HardEvent::V_S>(3); });
    CHECK(err.find("kernel bad") != std::string::npos);
    CHECK(err.find("core AIV 0") != std::string::npos);
    CHECK(err.find("call WaitFlag") != std::string::npos);
    CHECK(err.find("rule: unpaired WaitFlag") != std::string::npos);
    CHECK(std::string(aclGetRecentErrMsg()).find("unpaired WaitFlag") != std::string::npos);
}

SIMTEST(acl_invalid_block_dim) {
    std::string err = simtest::run("zero_blocks", KERNEL_TYPE_AIV_ONLY, 0, [] {});
    CHECK(err.find("invalid blockDim") != std::string::npos);
}

SIMTEST(acl_set_unknown_device) {
    CHECK_EQ(aclrtSetDevice(63), ACL_ERROR_RT_INVALID_DEVICEID);
    simtest::stream();
}
