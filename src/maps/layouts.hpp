// Layouts gdap builds itself: equal blocks (what GEMM and Zarr move arrays into), and the whole
// array on one rank or on every rank (gdap_map_create_root, gdap_map_create_replicated).
#pragma once

#include <gdap/gdap.h>

#include <cstdint>

namespace gdap {

// Coordinate `coord`'s dictionary of a 'b' dimension of `size` cut into `parts` equal blocks
// (ceil(size / parts) each, the last ones shorter or empty), without padding.
gdap_dim even_block(int64_t size, int64_t parts, int64_t coord);

}  // namespace gdap
