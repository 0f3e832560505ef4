// vector_util.h: helpers of the vector-unit tests. A kernel gets one 64 KB UB
// scratch TBuf and carves tensors out of it at byte offsets; inputs are
// written with LocalTensor::SetValue and results read back with GetValue into
// host vectors captured by the kernel lambda (one core, no concurrency).
#pragma once

#include <vector>

#include "harness.h"

namespace vt {

struct Ub {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    Ub() { pipe.InitBuffer(buf, 64 * 1024); }
    // n elements of T at `byte` inside the scratch buffer.
    template <typename T>
    AscendC::LocalTensor<T> at(uint32_t byte, uint32_t n) {
        return buf.GetWithOffset<T>(n, byte);
    }
};

// Scalar writes after the vector unit's earlier work, visible to its next.
template <typename T, typename F>
void fill_fn(const AscendC::LocalTensor<T>& t, uint32_t n, F f) {
    simtest::fence<AscendC::HardEvent::V_S>();
    for (uint32_t i = 0; i < n; ++i) t.SetValue(i, static_cast<T>(f(i)));
    simtest::fence<AscendC::HardEvent::S_V>();
}
template <typename T, typename V>
void fill(const AscendC::LocalTensor<T>& t, const std::vector<V>& v) {
    fill_fn(t, static_cast<uint32_t>(v.size()), [&](uint32_t i) { return v[i]; });
}
// Scalar reads after the vector unit's earlier work, done before its next.
template <typename T>
std::vector<T> read(const AscendC::LocalTensor<T>& t, uint32_t n) {
    simtest::fence<AscendC::HardEvent::V_S>();
    std::vector<T> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = t.GetValue(i);
    simtest::fence<AscendC::HardEvent::S_V>();
    return v;
}

// Runs `body` on one AIV core and throws on failure.
template <typename F>
void run(const char* name, F body) {
    simtest::run_ok(name, KERNEL_TYPE_AIV_ONLY, 1, [&] {
        Ub ub;
        body(ub);
    });
}

template <typename F>
void violation(const char* rule, const char* name, F body) {
    simtest::expect_violation(rule, name, KERNEL_TYPE_AIV_ONLY, 1, [&] {
        Ub ub;
        body(ub);
    });
}

}  // namespace vt
