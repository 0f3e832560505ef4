// ascendc_sim/launch.h: host-side entry used by the generated aclrtlaunch_*
// stubs of the simulator build (kernels/sim/) and by the simulator tests.
#pragma once

#include <functional>

#include "ascendc_sim/core.h"

namespace ascsim {

// Runs one kernel launch on `stream` (nullptr = default stream of the current
// device): block_dim AI cores of the given kernel type, each core a thread
// with its own local memories, `body` called once per core. The launch runs to
// completion before this returns; a failure (rule violation, deadlock) is
// recorded on the stream and returned by aclrtSynchronizeStream. Returns 0 like
// the CANN stub does.
uint32_t launch(const char* kernel, KernelMetaType type, uint32_t block_dim, void* stream,
                const std::function<void()>& body);

}  // namespace ascsim
