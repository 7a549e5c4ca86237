// The process grid: ranks <-> C-order grid coordinates (as MPI_Cart_create).
#pragma once

#include <cstdint>
#include <vector>

namespace gdap {

// Product of the grid shape; throws GDAP_ERR_OVERFLOW / GDAP_ERR_INVALID_ARGUMENT (entries < 1).
int64_t grid_product(const int64_t* grid_shape, int64_t ndim);

// C-order coordinates of `rank` (0 <= rank < product) and the inverse.
std::vector<int64_t> rank_to_coords(const int64_t* grid_shape, int64_t ndim, int64_t rank);
int64_t coords_to_rank(const int64_t* grid_shape, int64_t ndim, const int64_t* coords);

}  // namespace gdap
