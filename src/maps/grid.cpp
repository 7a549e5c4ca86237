// Process grid arithmetic and its C entry points.
#include "maps/grid.hpp"

#include "core/checked.hpp"

#include <gdap/gdap.h>

namespace gdap {

int64_t grid_product(const int64_t* grid_shape, int64_t ndim) {
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
  if (ndim > 0) require(grid_shape, "grid_shape");
  int64_t product = 1;
  for (int64_t i = 0; i < ndim; ++i) {
    if (grid_shape[i] < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "grid_shape[{}] ({}) < 1", i, grid_shape[i]);
    product = checked_mul(product, grid_shape[i], "process grid size");
  }
  return product;
}

std::vector<int64_t> rank_to_coords(const int64_t* grid_shape, int64_t ndim, int64_t rank) {
  const int64_t n = grid_product(grid_shape, ndim);
  if (rank < 0 || rank >= n) fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is outside the process grid of {} ranks", rank, n);
  std::vector<int64_t> coords(static_cast<size_t>(ndim));
  for (int64_t i = ndim - 1; i >= 0; --i) {
    coords[static_cast<size_t>(i)] = rank % grid_shape[i];
    rank /= grid_shape[i];
  }
  return coords;
}

int64_t coords_to_rank(const int64_t* grid_shape, int64_t ndim, const int64_t* coords) {
  grid_product(grid_shape, ndim);
  if (ndim > 0) require(coords, "coords");
  int64_t rank = 0;
  for (int64_t i = 0; i < ndim; ++i) {
    if (coords[i] < 0 || coords[i] >= grid_shape[i]) {
      fail(GDAP_ERR_OUT_OF_RANGE, "coordinate {} ({}) is outside [0, {})", i, coords[i], grid_shape[i]);
    }
    rank = rank * grid_shape[i] + coords[i];  // < product, which fits
  }
  return rank;
}

}  // namespace gdap

extern "C" {

GDAP_API gdap_status gdap_grid_rank_to_coords(int64_t* coords, int64_t ndim, const int64_t* grid_shape, int64_t rank) {
  return gdap::guard([&] {
    auto c = gdap::rank_to_coords(grid_shape, ndim, rank);
    if (ndim > 0) gdap::require(coords, "coords");
    for (int64_t i = 0; i < ndim; ++i) coords[i] = c[static_cast<size_t>(i)];
  });
}

GDAP_API gdap_status gdap_grid_coords_to_rank(int64_t* rank, int64_t ndim, const int64_t* grid_shape,
                                              const int64_t* coords) {
  return gdap::guard([&] {
    gdap::require(rank, "rank");
    *rank = gdap::coords_to_rank(grid_shape, ndim, coords);
  });
}

}  // extern "C"
