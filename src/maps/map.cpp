// Building a gdap_map: per-process checks of every rank's dictionaries, then the cross-process
// rules (same types and sizes, grid product and coordinates, identical dictionaries along an
// axis, then the per-axis rules in AxisMap).
#include "maps/map.hpp"

#include "core/checked.hpp"
#include "maps/grid.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace gdap {
namespace {

std::string rank_label(int64_t rank) { return fmt::format("rank {}", rank); }

bool same_dict(const gdap_dim& a, const gdap_dim& b) {
  if (a.dist_type != b.dist_type || a.given != b.given || a.periodic != b.periodic || a.size != b.size ||
      a.proc_grid_size != b.proc_grid_size || a.proc_grid_rank != b.proc_grid_rank || a.start != b.start ||
      a.stop != b.stop || a.padding[0] != b.padding[0] || a.padding[1] != b.padding[1] ||
      a.block_size != b.block_size || a.num_indices != b.num_indices || a.one_to_one != b.one_to_one) {
    return false;
  }
  return a.num_indices == 0 || std::equal(a.indices, a.indices + a.num_indices, b.indices);
}

// Every rank's dictionaries, each checked per process ("rank 3, dimension 1 ('c'): ...").
std::vector<gdap_dim> read_all(int64_t nranks, int64_t ndim, const gdap_dim* dims) {
  if (nranks < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "nranks ({}) < 1", nranks);
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
  const int64_t count = checked_mul(nranks, ndim, "nranks * ndim");
  std::vector<gdap_dim> all;
  all.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    gdap_dim d = read_dim(dims, k);
    if (d.dist_type == GDAP_DIST_UNDISTRIBUTED) {
      fail(GDAP_ERR_PROTOCOL,
           "rank {}, dimension {}: an empty dictionary {{}} must be resolved first (gdap_dim_set_undistributed)",
           k / ndim, k % ndim);
    }
    try {
      validate_dim(d, k % ndim, -1);
    } catch (const Error& e) {
      throw Error(e.status(), rank_label(k / ndim) + ", " + e.what());
    }
    all.push_back(d);
  }
  return all;
}

}  // namespace
}  // namespace gdap

using gdap::fail;

gdap_map::gdap_map(int64_t n, int64_t ndim, const gdap_dim* dims) : nranks(n) {
  const std::vector<gdap_dim> all = gdap::read_all(n, ndim, dims);
  auto at = [&](int64_t r, int64_t i) -> const gdap_dim& { return all[static_cast<size_t>(r * ndim + i)]; };
  for (int64_t i = 0; i < ndim; ++i) {
    const gdap_dim& first = at(0, i);
    for (int64_t r = 1; r < n; ++r) {
      const gdap_dim& d = at(r, i);
      const std::string label = gdap::dim_label(d, i);
      if (d.dist_type != first.dist_type) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, {}: dist_type differs from rank 0's ('{}')", r, label,
             static_cast<char>(first.dist_type));
      }
      if (d.size != first.size) fail(GDAP_ERR_PROTOCOL, "rank {}, {}: size ({}) != rank 0's ({})", r, label, d.size, first.size);
      if (d.proc_grid_size != first.proc_grid_size) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, {}: proc_grid_size ({}) != rank 0's ({})", r, label, d.proc_grid_size,
             first.proc_grid_size);
      }
    }
    grid_shape.push_back(first.proc_grid_size);
    global_shape.push_back(first.size);
  }
  std::string shape_text;
  for (int64_t g : grid_shape) shape_text += (shape_text.empty() ? "" : " x ") + std::to_string(g);
  int64_t product = 1;
  for (int64_t g : grid_shape) {
    if (__builtin_mul_overflow(product, g, &product)) product = -1;
    if (product < 0) break;
  }
  if (product != n) {
    fail(GDAP_ERR_PROTOCOL, "the process grid ({}) has {} ranks, but {} ranks gave dictionaries",
         shape_text.empty() ? "0-d" : shape_text, product < 0 ? std::string("too many") : std::to_string(product), n);
  }
  // Each rank's proc_grid_rank values are its C-order coordinates; one dictionary per coordinate.
  std::vector<gdap::DimData> reps(static_cast<size_t>(ndim));
  std::vector<std::vector<int64_t>> first_rank(static_cast<size_t>(ndim));
  for (int64_t i = 0; i < ndim; ++i) first_rank[static_cast<size_t>(i)].assign(static_cast<size_t>(grid_shape[static_cast<size_t>(i)]), -1);
  for (int64_t r = 0; r < n; ++r) {
    const auto c = gdap::rank_to_coords(grid_shape.data(), ndim, r);
    for (int64_t i = 0; i < ndim; ++i) {
      const gdap_dim& d = at(r, i);
      const int64_t g = c[static_cast<size_t>(i)];
      if (d.proc_grid_rank != g) {
        fail(GDAP_ERR_PROTOCOL,
             "rank {}, {}: proc_grid_rank ({}) != {}, the rank's coordinate on the {} grid in C order", r,
             gdap::dim_label(d, i), d.proc_grid_rank, g, shape_text);
      }
      int64_t& owner = first_rank[static_cast<size_t>(i)][static_cast<size_t>(g)];
      if (owner < 0) {
        owner = r;
      } else if (!gdap::same_dict(d, at(owner, i))) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, {}: the dictionary differs from rank {}'s, which has the same grid coordinate {}",
             r, gdap::dim_label(d, i), owner, g);
      }
    }
  }
  for (int64_t i = 0; i < ndim; ++i) {
    gdap::DimData axis;
    for (int64_t owner : first_rank[static_cast<size_t>(i)]) axis.push_back(at(owner, i));
    const auto& names = first_rank[static_cast<size_t>(i)];
    axes.emplace_back(i, std::move(axis), [&](int64_t g) { return gdap::rank_label(names[static_cast<size_t>(g)]); });
  }
}

gdap_map::~gdap_map() {
  for (auto& [device, tables] : device_tables) gdap::release_device_tables(tables);
}

std::vector<int64_t> gdap_map::coords(int64_t rank) const { return gdap::rank_to_coords(grid_shape.data(), ndim(), rank); }

int64_t gdap_map::rank_of(const std::vector<int64_t>& c) const { return gdap::coords_to_rank(grid_shape.data(), ndim(), c.data()); }

const gdap_dim& gdap_map::dim(int64_t rank, int64_t axis) const {
  if (axis < 0 || axis >= ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", axis, ndim());
  return axes[static_cast<size_t>(axis)].dim(coords(rank)[static_cast<size_t>(axis)]);
}

bool gdap_map::try_owner(const int64_t* global, int64_t& rank, int64_t* local) const {
  int64_t r = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t g = 0, l = 0;
    if (!axes[i].owner(global[i], g, l)) return false;
    r = r * grid_shape[i] + g;
    if (local != nullptr) local[i] = l;
  }
  rank = r;
  return true;
}
