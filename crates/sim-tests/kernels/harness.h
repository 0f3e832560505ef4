// harness.h: helpers for the simulator's C++ tests. A test is
//   SIMTEST(name) { ...; return pass(); }
// and fails with CHECK / CHECK_EQ / expect_violation.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "ascendc_sim/launch.h"
#include "ascsim/sim.h"
#include "kernel_operator.h"

namespace simtest {

struct Failure {
    std::string message;
};

// A simulated Ascend910B4 with one stream, set up once per process.
aclrtStream stream();

// Device buffer of n elements of T, zero-filled, freed at scope exit.
template <typename T>
struct DevBuf {
    T* ptr = nullptr;
    size_t n = 0;
    explicit DevBuf(size_t count) : n(count) {
        stream();  // sets up the device on this thread
        void* p = nullptr;
        if (aclrtMalloc(&p, count * sizeof(T) + 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) throw Failure{"aclrtMalloc"};
        ptr = static_cast<T*>(p);
        aclrtMemset(ptr, count * sizeof(T) + 1, 0, count * sizeof(T) + 1);
    }
    DevBuf(const std::vector<T>& v) : DevBuf(v.size()) { upload(v); }
    ~DevBuf() { aclrtFree(ptr); }
    DevBuf(const DevBuf&) = delete;
    DevBuf& operator=(const DevBuf&) = delete;
    void upload(const std::vector<T>& v) {
        aclrtMemcpy(ptr, n * sizeof(T), v.data(), v.size() * sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE);
    }
    std::vector<T> download() const {
        std::vector<T> v(n);
        aclrtMemcpy(v.data(), n * sizeof(T), ptr, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST);
        return v;
    }
    GM_ADDR gm() const { return reinterpret_cast<GM_ADDR>(ptr); }
};

// Launches `body` on blockDim cores; returns "" on success or the launch's
// diagnostic.
std::string run(const char* name, KernelMetaType type, uint32_t blockDim, const std::function<void()>& body);

// Runs the kernel and throws unless it succeeds.
void run_ok(const char* name, KernelMetaType type, uint32_t blockDim, const std::function<void()>& body);

// Runs the kernel and throws unless it fails with a diagnostic naming `rule`.
void expect_violation(const char* rule, const char* name, KernelMetaType type, uint32_t blockDim,
                      const std::function<void()>& body);

// What a diagnostic must say besides its rule: the core it stopped on (its
// label, e.g. "AIV 0"), the API call it stopped in (nullptr: not checked,
// for the checks at the end of a kernel or launch), and substrings of the
// detail, in the order given (the missing edge, the two calls, ...).
struct Diag {
    const char* core;
    const char* call;
    std::vector<std::string> says;
};

// Runs the kernel and throws unless it fails with a message
// "kernel <name>: core <core>: call <call>: rule: <rule>: <detail>" whose
// detail contains d.says in order; returns the message.
std::string expect_violation(const char* rule, const Diag& d, const char* name, KernelMetaType type,
                             uint32_t blockDim, const std::function<void()>& body);

std::string format(const char* f, ...) __attribute__((format(printf, 1, 2)));

// Orders everything pipe E's source has issued before what its destination
// issues next, with an id from the pipe (a SetFlag/WaitFlag pair).
template <AscendC::HardEvent E>
inline void fence() {
    AscendC::TEventID id = AscendC::GetTPipePtr()->FetchEventID(E);
    AscendC::SetFlag<E>(id);
    AscendC::WaitFlag<E>(id);
}

// The whole of a device buffer as a GlobalTensor.
template <typename T>
AscendC::GlobalTensor<T> global(const DevBuf<T>& b) {
    AscendC::GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b.gm()), b.n);
    return g;
}

int finish(const std::function<void()>& test, char* msg, size_t len);

}  // namespace simtest

#define SIMTEST(name)                                                              \
    static void simtest_body_##name();                                             \
    extern "C" int simtest_##name(char* msg, size_t len) {                         \
        return ::simtest::finish(simtest_body_##name, msg, len);                    \
    }                                                                              \
    static void simtest_body_##name()

#define CHECK(cond)                                                                                    \
    do {                                                                                               \
        if (!(cond)) throw ::simtest::Failure{::simtest::format("%s:%d: CHECK(%s)", __FILE__, __LINE__, #cond)}; \
    } while (0)

#define CHECK_EQ(a, b)                                                                                 \
    do {                                                                                               \
        auto va_ = (a);                                                                                \
        auto vb_ = (b);                                                                                \
        if (!(va_ == vb_))                                                                             \
            throw ::simtest::Failure{::simtest::format("%s:%d: %s == %s failed (%.9g vs %.9g)", __FILE__, __LINE__, \
                                                       #a, #b, (double)va_, (double)vb_)};              \
    } while (0)
