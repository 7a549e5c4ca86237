// Layouts over a process grid in one call (gdap_map_create_grid): each axis's dictionaries are
// worked out once per grid coordinate (even or irregular blocks, halos, periodic boundary padding,
// cyclic and block-cyclic), then every rank's dim_data is put together from its grid coordinates
// and checked as any map is. Also the choice of a balanced grid (gdap_grid_balance).
#include "maps/layout_build.hpp"
#include "maps/map.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "protocol/dim.hpp"

#include <gdap/gdap.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

namespace gdap {
namespace {

// Copies axis i of a caller's array (stride axes[0].struct_size), as read_dim does for gdap_dim:
// the fields this release knows and the caller has (core/versioned.hpp).
gdap_axis_layout read_axis(const gdap_axis_layout* axes, int64_t i) {
  const uint32_t stride = axes[0].struct_size;
  const size_t known = struct_bytes<gdap_axis_layout>(stride, "axes[0].struct_size", "GDAP_AXIS_LAYOUT_INIT");
  gdap_axis_layout out = GDAP_AXIS_LAYOUT_INIT;
  const auto* element = reinterpret_cast<const unsigned char*>(axes) + static_cast<size_t>(i) * stride;
  std::memcpy(&out, element, known);
  out.struct_size = sizeof(gdap_axis_layout);
  return out;
}

// The owned lengths of an axis's blocks, in grid order.
std::vector<int64_t> block_lengths(int64_t axis, const gdap_axis_layout& a) {
  const int64_t g = a.grid_size;
  std::vector<int64_t> lengths(static_cast<size_t>(g));
  if (a.lengths != nullptr) {
    int64_t sum = 0;
    for (int64_t c = 0; c < g; ++c) {
      const int64_t n = a.lengths[c];
      if (n < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {}: lengths[{}] ({}) < 0", axis, c, n);
      sum = checked_add(sum, n, "the sum of the block lengths");
      lengths[static_cast<size_t>(c)] = n;
    }
    if (sum != a.size) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {}: the block lengths sum to {}, not to size {}", axis, sum, a.size);
    return lengths;
  }
  // Even blocks of the interior; a periodic axis's edge blocks add their boundary padding.
  const int64_t boundary = a.periodic != 0 ? a.halo : 0;
  const int64_t interior = a.size - boundary - boundary;  // >= boundary, as check_axis found
  const int64_t w = interior == 0 ? 0 : (interior - 1) / g + 1;
  for (int64_t c = 0; c < g; ++c) {
    const int64_t lo = std::min(checked_mul(c, w, "block start"), interior);
    lengths[static_cast<size_t>(c)] = std::min(checked_add(lo, w, "block end"), interior) - lo;
  }
  lengths.front() += boundary;
  lengths.back() += boundary;
  return lengths;
}

// A halo is communication padding: no wider than the block it reaches into.
void check_halo(int64_t axis, const gdap_axis_layout& a, const std::vector<int64_t>& lengths) {
  const int64_t g = a.grid_size, h = a.halo;
  for (int64_t c = 0; g > 1 && c < g; ++c) {  // with neighbours, every block is some neighbour's halo's reach
    const int64_t n = lengths[static_cast<size_t>(c)];
    if (n < h) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "axis {}: halo {} is wider than the {} cells that grid coordinate {} owns; "
           "a halo may reach at most into a neighbour's whole block", axis, h, n, c);
    }
  }
}

void check_axis(int64_t i, const gdap_axis_layout& a) {
  if (a.dist_type != GDAP_DIST_BLOCK && a.dist_type != GDAP_DIST_CYCLIC) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "axis {}: dist_type {} is not GDAP_DIST_BLOCK ('b') or GDAP_DIST_CYCLIC ('c')", i,
         a.dist_type);
  }
  if (a.size < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {}: size ({}) < 0", i, a.size);
  if (a.grid_size < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {}: grid_size ({}) < 1", i, a.grid_size);
  if (a.reserved != 0) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {}: reserved ({}) must be 0", i, a.reserved);
  if (a.dist_type == GDAP_DIST_CYCLIC) {
    if (a.block_size < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('c'): block_size ({}) < 1", i, a.block_size);
    if (a.lengths != nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('c'): lengths are for block axes only", i);
    if (a.halo != 0) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('c'): halo ({}) is for block axes only", i, a.halo);
    if (a.periodic != 0) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('c'): periodic is for block axes only", i);
    return;
  }
  if (a.block_size != 1) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('b'): block_size ({}) is for cyclic axes; leave it 1", i, a.block_size);
  }
  if (a.halo < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('b'): halo ({}) < 0", i, a.halo);
  if (a.halo > a.size) fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('b'): halo ({}) > size ({})", i, a.halo, a.size);
  // A periodic halo wraps `halo` interior cells onto each edge's boundary padding.
  if (a.periodic != 0 && a.size - a.halo - a.halo < a.halo) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "axis {} ('b'): a periodic halo of {} fills each edge from the opposite edge's "
         "interior, which must hold at least {} cells: size ({}) >= 3 * halo", i, a.halo, a.halo, a.size);
  }
}

// Grid coordinate c's dictionary of a block axis whose owned lengths are `lengths`.
gdap_dim axis_block_dim(const gdap_axis_layout& a, const std::vector<int64_t>& lengths, int64_t c, int64_t owned_start) {
  const int64_t g = a.grid_size, h = a.halo;
  const bool periodic = a.periodic != 0;
  // Towards a neighbour: communication padding; at a periodic edge: boundary padding inside the block.
  const int64_t lower = (c > 0 || periodic) ? h : 0, upper = (c + 1 < g || periodic) ? h : 0;
  const int64_t owned_stop = owned_start + lengths[static_cast<size_t>(c)];
  const int64_t start = c > 0 ? owned_start - lower : 0;
  const int64_t stop = c + 1 < g ? owned_stop + upper : a.size;
  gdap_dim d = gdap::block_dim(a.size, g, c, start, stop);
  if (h > 0) d = with_padding(d, lower, upper);
  if (periodic) d = with_periodic(d, true);
  return d;
}

// Every grid coordinate's dictionary along axis i.
std::vector<gdap_dim> axis_dims(int64_t i, const gdap_axis_layout& a) {
  std::vector<gdap_dim> dims;
  dims.reserve(static_cast<size_t>(a.grid_size));
  if (a.dist_type == GDAP_DIST_CYCLIC) {
    for (int64_t c = 0; c < a.grid_size; ++c) {
      const int64_t start = checked_mul(c, a.block_size, "grid coordinate * block_size");
      dims.push_back(cyclic_dim(a.size, a.grid_size, c, start, a.block_size == 1 ? 0 : a.block_size));
    }
    return dims;
  }
  const std::vector<int64_t> lengths = block_lengths(i, a);
  if (a.halo > 0) check_halo(i, a, lengths);
  int64_t at = 0;
  for (int64_t c = 0; c < a.grid_size; ++c) {
    dims.push_back(axis_block_dim(a, lengths, c, at));
    at += lengths[static_cast<size_t>(c)];
  }
  return dims;
}

// The fixed entries of a grid shape and how many ranks remain for the free ones.
int64_t free_ranks(const int64_t* grid_shape, int64_t ndim, int64_t nranks) {
  int64_t fixed = 1;
  for (int64_t i = 0; i < ndim; ++i) {
    if (grid_shape[i] < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "grid_shape[{}] ({}) < 0 (0 is free)", i, grid_shape[i]);
    if (grid_shape[i] > 0) fixed = checked_mul(fixed, grid_shape[i], "the fixed grid extents");
  }
  if (nranks % fixed != 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the fixed grid extents multiply to {}, which does not divide {} ranks", fixed, nranks);
  }
  return nranks / fixed;
}

// The prime factors of n, largest first.
std::vector<int64_t> prime_factors(int64_t n) {
  std::vector<int64_t> f;
  for (int64_t p = 2; p <= n / p; ++p) {
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  }
  if (n > 1) f.push_back(n);
  std::reverse(f.begin(), f.end());
  return f;
}

}  // namespace

gdap_map* build_map(int64_t nranks, int64_t ndim, const std::vector<std::vector<gdap_dim>>& per_axis) {
  std::vector<gdap_dim> dims;
  dims.reserve(static_cast<size_t>(nranks * ndim));
  for (int64_t r = 0; r < nranks; ++r) {
    int64_t rest = r;
    const size_t first = dims.size();
    dims.resize(first + static_cast<size_t>(ndim));
    for (int64_t i = ndim - 1; i >= 0; --i) {  // C order: the last coordinate runs fastest
      const auto& axis = per_axis[static_cast<size_t>(i)];
      const auto g = static_cast<int64_t>(axis.size());
      dims[first + static_cast<size_t>(i)] = axis[static_cast<size_t>(rest % g)];
      rest /= g;
    }
  }
  return new gdap_map(nranks, ndim, dims.data());
}

}  // namespace gdap

extern "C" GDAP_API gdap_status gdap_map_create_grid(gdap_map** out, int64_t ndim, const gdap_axis_layout* axes) {
  return gdap::guard([&] {
    gdap::require(out, "out");
    if (ndim < 1) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "ndim {} is not >= 1: a 0-d array has no dimension to place", ndim);
    gdap::require(axes, "axes");
    std::vector<gdap_axis_layout> read;
    int64_t nranks = 1;
    for (int64_t i = 0; i < ndim; ++i) {
      read.push_back(gdap::read_axis(axes, i));
      gdap::check_axis(i, read.back());
      nranks = gdap::checked_mul(nranks, read.back().grid_size, "the process grid's size");
    }
    gdap::allocating(nranks, gdap::layout_bytes(nranks, ndim, 0), [&] {
      std::vector<std::vector<gdap_dim>> per_axis;
      for (int64_t i = 0; i < ndim; ++i) per_axis.push_back(gdap::axis_dims(i, read[static_cast<size_t>(i)]));
      *out = gdap::build_map(nranks, ndim, per_axis);
    });
  });
}

extern "C" GDAP_API gdap_status gdap_grid_balance(int64_t* grid_shape, int64_t ndim, int64_t nranks) {
  return gdap::guard([&] {
    if (ndim < 0) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
    if (nranks < 1) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "nranks ({}) < 1", nranks);
    if (ndim > 0) gdap::require(grid_shape, "grid_shape");
    const int64_t left = gdap::free_ranks(grid_shape, ndim, nranks);
    std::vector<int64_t> free;
    for (int64_t i = 0; i < ndim; ++i) {
      if (grid_shape[i] == 0) free.push_back(1);
    }
    if (free.empty()) {
      if (left != 1) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "every grid extent is fixed, and they multiply to {}, not to {} ranks", nranks / left, nranks);
      return;
    }
    // Each prime, largest first, onto the free extent that is smallest so far.
    for (int64_t p : gdap::prime_factors(left)) *std::min_element(free.begin(), free.end()) *= p;
    std::sort(free.begin(), free.end(), std::greater<>());
    size_t k = 0;
    for (int64_t i = 0; i < ndim; ++i) {
      if (grid_shape[i] == 0) grid_shape[i] = free[k++];
    }
  });
}
