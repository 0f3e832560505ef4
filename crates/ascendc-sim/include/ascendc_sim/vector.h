// ascendc_sim/vector.h
#pragma once
#include "ascendc_sim/tensor.h"
