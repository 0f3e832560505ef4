#include "hazard_util.h"

namespace hz {

simtest::Diag race(const char* core, const Race& r) {
    return simtest::Diag{core,
                         r.call,
                         {simtest::format("%s %s %s %s bytes", r.pipe, r.call, r.access, r.mem),
                          simtest::format("which %s %s (%s instruction", r.earlier_pipe, r.earlier_call,
                                          r.earlier_pipe),
                          std::string("missing: ") + r.missing}};
}

simtest::Diag gm_race(const char* core, const Race& r) {
    return simtest::Diag{core,
                         r.call,
                         {simtest::format("%s %s %s %s 0x", r.pipe, r.call, r.access, r.mem),
                          simtest::format("which this core's %s %s (%s instruction", r.earlier_pipe, r.earlier_call,
                                          r.earlier_pipe),
                          std::string("missing: ") + r.missing}};
}

Io::Io(uint32_t n) : in(n), x(n), y(n) {
    for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) + 0.5f;
    x.upload(in);
}

void aiv_ok(const char* name, const std::function<void()>& body) {
    simtest::run_ok(name, KERNEL_TYPE_AIV_ONLY, 1, body);
}

void aiv_bad(const char* name, const char* rule, const simtest::Diag& d, const std::function<void()>& body) {
    simtest::expect_violation(rule, d, name, KERNEL_TYPE_AIV_ONLY, 1, body);
}

}  // namespace hz
