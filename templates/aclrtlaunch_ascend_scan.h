/* {{ header }}
 *
 * Launch functions of every ascend-scan kernel, with the signature CANN's
 * ascendc_library generates (aclrtlaunch_<kernel>(numBlocks, stream, GM
 * pointers..., tiling struct pointer)). The simulator build defines them in
 * kernels/sim/; a CANN build gets them from the generated host stub. */
#ifndef ACLRTLAUNCH_ASCEND_SCAN_H
#define ACLRTLAUNCH_ASCEND_SCAN_H

#include "ascend_scan_tiling.h"

#ifdef __cplusplus
extern "C" {
#endif
{% for k in kernels %}
uint32_t aclrtlaunch_{{ k.name }}(uint32_t blockDim, void* stream, {{ k.c_params }});{% endfor %}

#ifdef __cplusplus
}
#endif
#endif
