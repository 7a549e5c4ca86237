// Layouts gdap builds itself (see layouts.hpp). Two of them every collective needs, built as
// ordinary maps so that plans and gdap_redistribute move data to and from them on every engine:
// the whole array on one rank (gather, scatter), and the whole array on every rank (allgather,
// broadcast). The protocol has no replicated 'b' or 'c'
// dimension, so the replicated layout is unstructured along dimension 0 (every rank holds every
// index, one_to_one false) and whole along the others.
#include "maps/layouts.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"
#include "maps/map.hpp"
#include "protocol/dim.hpp"

#include <gdap/gdap.h>

#include <algorithm>
#include <exception>
#include <numeric>
#include <vector>

namespace gdap {
namespace {

void check_layout(int64_t nranks, int64_t ndim, const int64_t* shape) {
  if (nranks < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "nranks {} is not >= 1", nranks);
  if (ndim < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim {} is not >= 1: a 0-d array has no dimension to place", ndim);
  require(shape, "shape");
  for (int64_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "dimension {}: size {} is negative", i, shape[i]);
  }
}

// The bytes a layout's map holds (every rank's dictionaries and `indices_per_rank` indices each),
// counted before anything is allocated, so a hostile nranks or shape is a clear error.
int64_t layout_bytes(int64_t nranks, int64_t ndim, int64_t indices_per_rank) {
  const int64_t dims = checked_mul(checked_mul(nranks, ndim, "nranks * ndim"), int64_t{sizeof(gdap_dim)},
                                   "bytes of the map's dictionaries");
  const int64_t indices = checked_mul(checked_mul(nranks, indices_per_rank, "nranks * shape[0] (indices held)"),
                                      int64_t{sizeof(int64_t)}, "bytes of the map's indices");
  return checked_add(dims, indices, "bytes of the map");
}

// Runs `body`, naming the layout's size when an allocation in it fails.
template <typename Body>
void allocating(int64_t nranks, int64_t bytes, Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    if (dynamic_cast<const Error*>(&e) != nullptr) throw;
    fail(GDAP_ERR_NO_MEMORY, "a map of {} ranks needs about {} bytes, which cannot be allocated ({})", nranks, bytes,
         e.what());
  }
}

// Dimensions 1.. of every rank: whole, on a grid of one.
void whole_tail(std::vector<gdap_dim>& rank_dims, int64_t ndim, const int64_t* shape) {
  for (int64_t i = 1; i < ndim; ++i) {
    rank_dims.push_back(block_dim(shape[i], 1, 0, 0, shape[i]));
  }
}

}  // namespace

gdap_dim even_block(int64_t size, int64_t parts, int64_t coord) {
  const int64_t step = (size + parts - 1) / parts;
  const int64_t start = std::min(size, coord * step), stop = std::min(size, start + step);
  return block_dim(size, parts, coord, start, stop);
}

}  // namespace gdap

extern "C" GDAP_API gdap_status gdap_map_create_root(gdap_map** out, int64_t nranks, int64_t ndim,
                                                     const int64_t* shape, int64_t root) {
  return gdap::guard([&] {
    gdap::require(out, "out");
    gdap::check_layout(nranks, ndim, shape);
    if (root < 0 || root >= nranks) gdap::fail(GDAP_ERR_OUT_OF_RANGE, "root {} is not in [0, {})", root, nranks);
    gdap::allocating(nranks, gdap::layout_bytes(nranks, ndim, 0), [&] {
      std::vector<gdap_dim> dims;
      for (int64_t r = 0; r < nranks; ++r) {
        const int64_t at = r <= root ? 0 : shape[0];  // ranks before the root hold [0, 0), after it [n, n)
        dims.push_back(gdap::block_dim(shape[0], nranks, r, at, r == root ? shape[0] : at));
        gdap::whole_tail(dims, ndim, shape);
      }
      *out = new gdap_map(nranks, ndim, dims.data());
    });
  });
}

extern "C" GDAP_API gdap_status gdap_map_create_replicated(gdap_map** out, int64_t nranks, int64_t ndim,
                                                           const int64_t* shape) {
  return gdap::guard([&] {
    gdap::require(out, "out");
    gdap::check_layout(nranks, ndim, shape);
    gdap::allocating(nranks, gdap::layout_bytes(nranks, ndim, shape[0]), [&] {
      std::vector<int64_t> all(static_cast<size_t>(shape[0]));
      std::iota(all.begin(), all.end(), int64_t{0});
      std::vector<gdap_dim> dims;
      for (int64_t r = 0; r < nranks; ++r) {
        dims.push_back(gdap::unstructured_dim(shape[0], nranks, r, all.data(), shape[0], 0));
        gdap::whole_tail(dims, ndim, shape);
      }
      *out = new gdap_map(nranks, ndim, dims.data());
    });
  });
}
