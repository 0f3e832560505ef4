// The counter-based uniforms of the sampling operations (src/ops/sample.rs,
// `uniform`): the same bits on the host and on every core, so a draw is a
// function of (seed, row, draw) alone.
#pragma once

#include "blocks_base.h"

namespace ascend_scan {
namespace rng {
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// SplitMix64's output mixer (a bijection of 64-bit integers).
__aicore__ inline uint64_t Mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The uniform of draw `draw` of row `row` under `seed`: the top 24 bits of
// Mix64(Mix64(seed + (row + 1) * golden) + (draw + 1) * golden), times
// 2^-24 (exact in float). Wrapping unsigned arithmetic, as on the host.
__aicore__ inline float Uniform(uint64_t seed, uint64_t row, uint64_t draw) {
    uint64_t key = Mix64(seed + kGolden * (row + 1));
    uint64_t bits = Mix64(key + kGolden * (draw + 1));
    return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}
}  // namespace rng
}  // namespace ascend_scan
