// ascendc_sim/datacopy.h
#pragma once
#include "ascendc_sim/tensor.h"
