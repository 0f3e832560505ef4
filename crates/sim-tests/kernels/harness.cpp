#include "harness.h"

#include <mutex>

namespace simtest {

aclrtStream stream() {
    static std::once_flag once;
    static aclrtStream s = nullptr;
    std::call_once(once, [] {
        aclInit(nullptr);
        ascsim_soc soc{};
        std::snprintf(soc.name, sizeof soc.name, "Ascend910B4");
        soc.cube_cores = 20;
        soc.vector_cores = 40;
        soc.ub_bytes = 192 * 1024;
        soc.l1_bytes = 512 * 1024;
        soc.l0a_bytes = 64 * 1024;
        soc.l0b_bytes = 64 * 1024;
        soc.l0c_bytes = 128 * 1024;
        soc.hbm_bytes = 32ull << 30;
        soc.l2_bytes = 96ull << 20;
        ascsim_configure_device(0, &soc);
        aclrtSetDevice(0);
        aclrtCreateStream(&s);
    });
    aclrtSetDevice(0);
    return s;
}

std::string format(const char* f, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

std::string run(const char* name, KernelMetaType type, uint32_t blockDim, const std::function<void()>& body) {
    // Tests run on parallel threads but share one stream: one launch at a time.
    static std::mutex launch_mutex;
    std::lock_guard<std::mutex> guard(launch_mutex);
    aclrtStream s = stream();
    ascsim_clear_launches(s);
    ascsim::launch(name, type, blockDim, s, body);
    aclError rc = aclrtSynchronizeStream(s);
    if (rc == ACL_SUCCESS) return "";
    char buf[4096];
    ascsim_launch_error(s, ascsim_launch_count(s) - 1, buf, sizeof buf);
    return std::string(buf);
}

void run_ok(const char* name, KernelMetaType type, uint32_t blockDim, const std::function<void()>& body) {
    std::string err = run(name, type, blockDim, body);
    if (!err.empty()) throw Failure{"launch failed: " + err};
}

void expect_violation(const char* rule, const char* name, KernelMetaType type, uint32_t blockDim,
                      const std::function<void()>& body) {
    std::string err = run(name, type, blockDim, body);
    if (err.empty()) throw Failure{format("expected rule '%s' to stop %s, but it ran", rule, name)};
    if (err.find(std::string("rule: ") + rule) == std::string::npos)
        throw Failure{format("expected rule '%s', got: %s", rule, err.c_str())};
}

std::string expect_violation(const char* rule, const Diag& d, const char* name, KernelMetaType type,
                             uint32_t blockDim, const std::function<void()>& body) {
    std::string err = run(name, type, blockDim, body);
    if (err.empty()) throw Failure{format("expected rule '%s' to stop %s, but it ran", rule, name)};
    std::string head = std::string("kernel ") + name + ": core " + d.core + ": ";
    if (d.call) head += std::string("call ") + d.call + ": ";
    const std::string tail = std::string("rule: ") + rule + ": ";
    if (d.call) head += tail;
    size_t at = err.compare(0, head.size(), head) == 0 ? head.size() : std::string::npos;
    if (at != std::string::npos && !d.call) {
        // Unchecked call: the rule follows it (or the core, at launch end).
        at = err.find(tail, at);
        if (at != std::string::npos) at += tail.size();
    }
    if (at == std::string::npos)
        throw Failure{format("expected a message starting '%s%s', got: %s", head.c_str(),
                             d.call ? "" : ("..." + tail).c_str(), err.c_str())};
    for (const std::string& s : d.says) {
        size_t found = err.find(s, at);
        if (found == std::string::npos)
            throw Failure{format("expected '%s' in the message (after byte %zu), got: %s", s.c_str(), at, err.c_str())};
        at = found + s.size();
    }
    return err;
}

int finish(const std::function<void()>& test, char* msg, size_t len) {
    try {
        test();
        return 0;
    } catch (const Failure& f) {
        std::snprintf(msg, len, "%s", f.message.c_str());
        return 1;
    }
}

}  // namespace simtest
