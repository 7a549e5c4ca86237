// Building a gdap_map: per-process checks of every rank's dictionaries, then the cross-process
// rules (same types and sizes, grid product and coordinates, identical dictionaries along an
// axis, then the per-axis rules in AxisMap).
#include "maps/map.hpp"

#include "core/checked.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <string>

namespace gdap {
namespace {

std::string rank_label(int64_t rank) { return fmt::format("rank {}", rank); }

// The first key in which two dictionaries differ, or nullptr if they are identical.
const char* first_difference(const gdap_dim& a, const gdap_dim& b) {
  if (a.dist_type != b.dist_type) return "dist_type";
  if (a.size != b.size) return "size";
  if (a.proc_grid_size != b.proc_grid_size) return "proc_grid_size";
  if (a.proc_grid_rank != b.proc_grid_rank) return "proc_grid_rank";
  if (a.start != b.start) return "start";
  if (a.stop != b.stop) return "stop";
  if (a.padding[0] != b.padding[0] || a.padding[1] != b.padding[1]) return "padding";
  if (a.periodic != b.periodic) return "periodic";
  if (a.block_size != b.block_size) return "block_size";
  if (a.one_to_one != b.one_to_one) return "one_to_one";
  const uint32_t given = a.given ^ b.given;
  if (given & GDAP_KEY_PADDING) return "whether 'padding' is given";
  if (given & GDAP_KEY_PERIODIC) return "whether 'periodic' is given";
  if (given & GDAP_KEY_BLOCK_SIZE) return "whether 'block_size' is given";
  if (given & GDAP_KEY_ONE_TO_ONE) return "whether 'one_to_one' is given";
  if (a.num_indices != b.num_indices) return "the number of indices";
  if (a.num_indices > 0 && !std::equal(a.indices, a.indices + a.num_indices, b.indices)) return "indices";
  return nullptr;
}

// Every rank's dictionaries, each checked per process ("rank 3, dimension 1 ('c'): ...").
std::vector<gdap_dim> read_all(int64_t nranks, int64_t ndim, const gdap_dim* dims) {
  if (nranks < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "nranks ({}) < 1", nranks);
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
  const int64_t count = checked_mul(nranks, ndim, "nranks * ndim");
  std::vector<gdap_dim> all;
  all.reserve(static_cast<size_t>(std::min(count, ndim)));
  for (int64_t k = 0; k < count; ++k) {
    // Rank 0's grid must count nranks before more is read or reserved: a hostile nranks is then
    // refused by the same rule as in gdap_map's constructor, not by reading past `dims`.
    if (k == ndim) {
      int64_t product = 1;
      bool overflow = false;
      for (const gdap_dim& d : all) overflow = overflow || __builtin_mul_overflow(product, d.proc_grid_size, &product);
      if (overflow || product != nranks) {
        std::string grid;
        for (const gdap_dim& d : all) grid += (grid.empty() ? "" : " x ") + std::to_string(d.proc_grid_size);
        fail(GDAP_ERR_PROTOCOL, "the process grid ({}, the proc_grid_size of each dimension) has {} ranks, but {} "
             "ranks gave dictionaries", grid, overflow ? std::string("more than int64 can count") : std::to_string(product),
             nranks);
      }
      all.reserve(static_cast<size_t>(count));
    }
    gdap_dim d = read_dim(dims, k);
    if (d.dist_type == GDAP_DIST_UNDISTRIBUTED) {
      fail(GDAP_ERR_PROTOCOL,
           "rank {}, dimension {} ({{}}): an empty dictionary must be resolved first; call "
           "gdap_dim_set_undistributed with the buffer's extent",
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

// "2 x 3", or "0-d" for an empty grid shape.
std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t g : shape) text += (text.empty() ? "" : " x ") + std::to_string(g);
  return text.empty() ? "0-d" : text;
}

}  // namespace
}  // namespace gdap

using gdap::fail;

gdap_map::gdap_map(int64_t n, int64_t ndim, const gdap_dim* dims) : nranks(n) {
  const std::vector<gdap_dim> all = gdap::read_all(n, ndim, dims);
  auto at = [&](int64_t r, int64_t i) -> const gdap_dim& { return all[static_cast<size_t>(r * ndim + i)]; };
  // Same dist_type, size and proc_grid_size along each dimension on every rank.
  for (int64_t i = 0; i < ndim; ++i) {
    const gdap_dim& first = at(0, i);
    for (int64_t r = 1; r < n; ++r) {
      const gdap_dim& d = at(r, i);
      const std::string label = gdap::dim_label(d, i);
      if (d.dist_type != first.dist_type) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, {}: dist_type differs from rank 0's ('{}')", r, label,
             static_cast<char>(first.dist_type));
      }
      if (d.size != first.size) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, {}: size ({}) != rank 0's ({})", r, label, d.size, first.size);
      }
      if (d.proc_grid_size != first.proc_grid_size) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, {}: proc_grid_size ({}) != rank 0's ({})", r, label, d.proc_grid_size,
             first.proc_grid_size);
      }
    }
    grid_shape.push_back(first.proc_grid_size);
    global_shape.push_back(first.size);
  }
  // The grid's product is the number of ranks; it must fit int64 before it can be compared.
  int64_t product = 1;
  bool overflow = false;
  for (int64_t g : grid_shape) overflow = overflow || __builtin_mul_overflow(product, g, &product);
  if (overflow || product != n) {
    fail(GDAP_ERR_PROTOCOL, "the process grid ({}, the proc_grid_size of each dimension) has {} ranks, but {} ranks "
         "gave dictionaries", gdap::shape_text(grid_shape),
         overflow ? std::string("more than int64 can count") : std::to_string(product), n);
  }
  grid_stride.assign(static_cast<size_t>(ndim), 1);
  for (int64_t i = ndim - 1; i > 0; --i) {
    grid_stride[static_cast<size_t>(i - 1)] = grid_stride[static_cast<size_t>(i)] * grid_shape[static_cast<size_t>(i)];
  }
  // Each rank's proc_grid_rank values are its C-order coordinates; ranks sharing a coordinate
  // along an axis hold the same dictionary for it, kept once (the first such rank's).
  std::vector<std::vector<int64_t>> first_rank(static_cast<size_t>(ndim));
  for (int64_t i = 0; i < ndim; ++i) {
    first_rank[static_cast<size_t>(i)].assign(static_cast<size_t>(grid_shape[static_cast<size_t>(i)]), -1);
  }
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < ndim; ++i) {
      const gdap_dim& d = at(r, i);
      const int64_t g = coord(r, i);
      if (d.proc_grid_rank != g) {
        fail(GDAP_ERR_PROTOCOL,
             "rank {}, {}: proc_grid_rank ({}) != {}, the rank's coordinate on the {} process grid in C order", r,
             gdap::dim_label(d, i), d.proc_grid_rank, g, gdap::shape_text(grid_shape));
      }
      int64_t& keeper = first_rank[static_cast<size_t>(i)][static_cast<size_t>(g)];
      if (keeper < 0) {
        keeper = r;
      } else if (const char* key = gdap::first_difference(d, at(keeper, i))) {
        fail(GDAP_ERR_PROTOCOL,
             "rank {}, {}: the dictionary differs from rank {}'s in {}, but both have grid coordinate {} along it", r,
             gdap::dim_label(d, i), keeper, key, g);
      }
    }
  }
  axes.reserve(static_cast<size_t>(ndim));
  for (int64_t i = 0; i < ndim; ++i) {
    const auto& keepers = first_rank[static_cast<size_t>(i)];
    gdap::DimData reps;
    for (int64_t keeper : keepers) reps.push_back(at(keeper, i));
    axes.emplace_back(i, std::move(reps), [&](int64_t g) { return gdap::rank_label(keepers[static_cast<size_t>(g)]); });
  }
}

gdap_map::~gdap_map() {
  for (auto& entry : device_tables) gdap::release_device_tables(entry.second);
}

const gdap_dim& gdap_map::dim(int64_t rank, int64_t axis) const {
  if (rank < 0 || rank >= nranks) fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is outside [0, {})", rank, nranks);
  if (axis < 0 || axis >= ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", axis, ndim());
  return axes[static_cast<size_t>(axis)].dim(coord(rank, axis));
}

bool gdap_map::try_owner(const int64_t* global, int64_t& rank, int64_t* local) const {
  int64_t r = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t g = 0, l = 0;
    if (!axes[i].owner(global[i], g, l)) return false;
    r += g * grid_stride[i];
    if (local != nullptr) local[i] = l;
  }
  rank = r;
  return true;
}

namespace gdap {

namespace {

// FNV-1a over 8-byte words: not cryptographic; it tells apart distributions that ranks built
// from different dictionaries by mistake.
struct Digest {
  uint64_t h = 1469598103934665603ull;
  void add(int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
};

}  // namespace

uint64_t digest(const gdap_map& map) {
  Digest d;
  d.add(map.nranks);
  d.add(map.ndim());
  for (int64_t r = 0; r < map.nranks; ++r) {
    for (int64_t a = 0; a < map.ndim(); ++a) {
      const gdap_dim& x = map.dim(r, a);
      for (int64_t v : {int64_t{x.dist_type}, int64_t{x.periodic}, x.size, x.proc_grid_size, x.proc_grid_rank, x.start,
                        x.stop, x.padding[0], x.padding[1], x.block_size, x.num_indices, int64_t{x.one_to_one}}) {
        d.add(v);
      }
      for (int64_t i = 0; x.indices != nullptr && i < x.num_indices; ++i) d.add(x.indices[i]);
    }
  }
  return d.h;
}

}  // namespace gdap
