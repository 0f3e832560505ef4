// ascendc_sim/cube.h
#pragma once
#include "ascendc_sim/tensor.h"
