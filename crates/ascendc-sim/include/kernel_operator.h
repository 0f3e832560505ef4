// kernel_operator.h: the AscendC device API subset of the ascend-scan CPU
// simulator. Kernels include this exactly as they would with CANN.
#pragma once

#include "ascendc_sim/core.h"
#include "ascendc_sim/tensor.h"
#include "ascendc_sim/sync.h"
#include "ascendc_sim/datacopy.h"
#include "ascendc_sim/cube.h"
#include "ascendc_sim/vector.h"
