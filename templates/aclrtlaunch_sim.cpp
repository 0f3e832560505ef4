// {{ header }}
//
// Simulator build only: the aclrtlaunch_<kernel> entries that CANN would
// generate, running each kernel on the project's AscendC simulator.
#include "ascendc_sim/launch.h"
#include "../aclrtlaunch_ascend_scan.h"
{% for k in kernels %}
extern "C" void {{ k.name }}({{ k.kernel_params }});

extern "C" uint32_t aclrtlaunch_{{ k.name }}(uint32_t blockDim, void* stream, {{ k.c_params }}) {
    {{ k.tiling }} t = *tiling;
    return ascsim::launch("{{ k.name }}", {{ k.kernel_type }}, blockDim, stream, [=] { {{ k.name }}({{ k.call_args }}); });
}
{% endfor %}
