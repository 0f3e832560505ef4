/* {{ header }}
 *
 * Tiling structs passed by value to the kernels. Each is the C++ mirror of a
 * #[derive(Tiling)] struct in crates/algos; the static_asserts and the Rust
 * const assertions keep both sides byte-identical. Valid C and C++. */
#ifndef ASCEND_SCAN_TILING_H
#define ASCEND_SCAN_TILING_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
#else
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#endif
{% for s in structs %}
typedef struct {{ s.name }} {{ s.name }};
{{ s.definition }}{% endfor %}
#endif
