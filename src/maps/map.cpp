// Building a gdap_map: per-process checks of every rank's dictionaries, then the cross-process
// rules (same types and sizes, grid product and coordinates, identical dictionaries along an
// axis, then the per-axis rules in AxisMap).
#include "maps/map.hpp"

#include "core/checked.hpp"
#include "maps/layout_build.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <string>
#include <tuple>

namespace gdap {
namespace {

std::string rank_label(int64_t rank) { return fmt::format("rank {}", rank); }

// The first key in which two dictionaries of one grid coordinate differ, as "key (a vs b)", or ""
// if they agree. Optional keys compare by value, a missing key as its default (validate_dim made
// sure the fields hold the default then). Boundary padding (grid rank 0's padding[0], the last
// grid rank's padding[1]) may differ between edge processes, so it is not compared.
std::string first_difference(const gdap_dim& a, const gdap_dim& b) {
  auto differs = [](const char* key, int64_t x, int64_t y) {
    return x == y ? std::string() : fmt::format("{} ({} vs {})", key, x, y);
  };
  std::string out;
  for (auto [key, x, y] : {std::tuple{"dist_type", int64_t{a.dist_type}, int64_t{b.dist_type}},
                           std::tuple{"size", a.size, b.size},
                           std::tuple{"proc_grid_size", a.proc_grid_size, b.proc_grid_size},
                           std::tuple{"proc_grid_rank", a.proc_grid_rank, b.proc_grid_rank},
                           std::tuple{"start", a.start, b.start}, std::tuple{"stop", a.stop, b.stop}}) {
    if (out.empty()) out = differs(key, x, y);
  }
  if (!out.empty()) return out;
  if (a.proc_grid_rank > 0) out = differs("communication padding[0]", a.padding[0], b.padding[0]);
  if (out.empty() && a.proc_grid_rank < a.proc_grid_size - 1) {
    out = differs("communication padding[1]", a.padding[1], b.padding[1]);
  }
  if (out.empty()) out = differs("periodic", is_periodic(a), is_periodic(b));
  if (out.empty()) out = differs("block_size", block_size_of(a), block_size_of(b));
  if (out.empty()) out = differs("one_to_one", is_one_to_one(a), is_one_to_one(b));
  if (out.empty()) out = differs("the number of indices", a.num_indices, b.num_indices);
  for (int64_t k = 0; out.empty() && k < a.num_indices; ++k) {
    if (a.indices[k] != b.indices[k]) out = fmt::format("indices[{}] ({} vs {})", k, a.indices[k], b.indices[k]);
  }
  return out;
}

// Whether a rank's dictionary must be kept beside its coordinate's: it agrees by value
// (first_difference) but gives other keys or other boundary padding.
bool is_variant(const gdap_dim& a, const gdap_dim& b) {
  return a.given != b.given || a.padding[0] != b.padding[0] || a.padding[1] != b.padding[1];
}

// "2 x 3", or "0-d" for an empty grid shape.
std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t g : shape) text += (text.empty() ? "" : " x ") + std::to_string(g);
  return text.empty() ? "0-d" : text;
}

// Rank 0's proc_grid_size values must multiply to nranks. If not, the first rank that disagrees
// with rank 0 is named: only ranks both claims agree exist are read (fewer than nranks when rank
// 0's grid is smaller, so a hostile nranks never makes gdap read past `dims`).
void check_rank0_grid(const std::vector<gdap_dim>& rank0, int64_t nranks, const gdap_dim* dims) {
  const auto ndim = static_cast<int64_t>(rank0.size());
  int64_t product = 1;
  bool overflow = false;
  std::vector<int64_t> grid;
  for (const gdap_dim& d : rank0) {
    overflow = overflow || __builtin_mul_overflow(product, d.proc_grid_size, &product);
    grid.push_back(d.proc_grid_size);
  }
  if (!overflow && product == nranks) return;
  const int64_t readable = overflow ? nranks : std::min(nranks, product);
  for (int64_t r = 1; r < readable; ++r) {
    for (int64_t i = 0; i < ndim; ++i) {
      const gdap_dim d = read_dim(dims, r * ndim + i);
      if (d.proc_grid_size != rank0[static_cast<size_t>(i)].proc_grid_size) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, {}: proc_grid_size ({}) != rank 0's ({})", r, dim_label(d, i),
             d.proc_grid_size, rank0[static_cast<size_t>(i)].proc_grid_size);
      }
    }
  }
  fail(GDAP_ERR_PROTOCOL,
       "the process grid ({}, the proc_grid_size of each dimension) has {} ranks, but {} ranks gave dictionaries",
       shape_text(grid), overflow ? std::string("more than int64 can count") : std::to_string(product), nranks);
}

// An unstructured dimension's index list, by address: ranks that share one list (the replicated
// layout gives every rank the same) have it sorted for uniqueness once, not once per rank.
struct IndexList {
  const int64_t* indices = nullptr;
  int64_t count = 0;
};

// `d` to validate: as given, or without its indices when they are the list `last` already checked
// (which it then becomes).
gdap_dim shared_list_checked(gdap_dim d, IndexList& last) {
  if (d.dist_type != GDAP_DIST_UNSTRUCTURED || d.indices == nullptr) return d;
  const IndexList list{d.indices, d.num_indices};
  if (list.indices == last.indices && list.count == last.count) {
    d.indices = nullptr;  // the same memory, already found unique: the other keys are still checked
    d.num_indices = 0;
  }
  last = list;
  return d;
}

// Every rank's dictionaries, each checked per process ("rank 3, dimension 1 ('c'): ...").
std::vector<gdap_dim> read_all(int64_t nranks, int64_t ndim, const gdap_dim* dims) {
  if (nranks < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "nranks ({}) < 1", nranks);
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
  const int64_t count = checked_mul(nranks, ndim, "nranks * ndim");
  std::vector<gdap_dim> all;
  all.reserve(static_cast<size_t>(std::min(count, ndim)));
  std::vector<IndexList> checked(static_cast<size_t>(ndim));  // per dimension, the list last checked
  for (int64_t k = 0; k < count; ++k) {
    // Rank 0's grid must count nranks before more is read or reserved: a hostile nranks is then
    // refused by the same rule as in gdap_map's constructor, not by reading past `dims`.
    if (k == ndim) {
      check_rank0_grid(all, nranks, dims);
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
      validate_dim(shared_list_checked(d, checked[static_cast<size_t>(k % ndim)]), k % ndim, -1);
    } catch (const Error& e) {
      throw Error(e.status(), rank_label(k / ndim) + ", " + e.what());
    }
    all.push_back(d);
  }
  return all;
}

// Bounds the map's memory as the layouts' maps are (layout_build.hpp), before the axes copy and
// sort their indices: each grid coordinate's unstructured list is held once per coordinate, so
// many ranks naming one caller's list would otherwise make the map allocate without limit.
// Throws GDAP_ERR_NO_MEMORY naming the dimension that holds the most, its size and the bound.
void check_indices_fit(int64_t nranks, int64_t ndim, const std::vector<gdap_dim>& all,
                       const std::vector<std::vector<int64_t>>& keepers) {
  int64_t total = 0, most = 0, widest = 0;
  for (int64_t i = 0; i < ndim; ++i) {
    int64_t held = 0;
    for (int64_t keeper : keepers[static_cast<size_t>(i)]) {
      const gdap_dim& d = all[static_cast<size_t>(keeper * ndim + i)];
      if (d.dist_type == GDAP_DIST_UNSTRUCTURED) held = checked_add(held, d.num_indices, "the unstructured indices held");
    }
    total = checked_add(total, held, "the unstructured indices held");
    if (held > most) {
      most = held;
      widest = i;
    }
  }
  if (total == 0) return;
  const gdap_dim& d = all[static_cast<size_t>(widest)];  // rank 0's: size and grid agree on every rank
  check_fits_memory(nranks, layout_bytes(nranks, ndim, total),
                    fmt::format("{} holds {} unstructured indices over its {} grid ranks (size {})", dim_label(d, widest),
                                most, d.proc_grid_size, d.size));
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
  variants.resize(static_cast<size_t>(ndim));
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
        continue;
      }
      if (const std::string key = gdap::first_difference(d, at(keeper, i)); !key.empty()) {
        fail(GDAP_ERR_PROTOCOL,
             "rank {}, {}: the dictionary differs from rank {}'s in {}, but both have grid coordinate {} along it (only "
             "boundary padding may differ)",
             r, gdap::dim_label(d, i), keeper, key, g);
      }
      if (gdap::is_variant(d, at(keeper, i))) variants[static_cast<size_t>(i)].emplace_back(r, d);
    }
  }
  gdap::check_indices_fit(n, ndim, all, first_rank);
  axes.reserve(static_cast<size_t>(ndim));
  for (int64_t i = 0; i < ndim; ++i) {
    const auto& keepers = first_rank[static_cast<size_t>(i)];
    gdap::DimData reps;
    for (int64_t keeper : keepers) reps.push_back(at(keeper, i));
    axes.emplace_back(i, std::move(reps), [&](int64_t g) { return gdap::rank_label(keepers[static_cast<size_t>(g)]); });
  }
  // A variant shares its coordinate's indices (equal by first_difference), kept by the axis.
  for (int64_t i = 0; i < ndim; ++i) {
    for (auto& [r, d] : variants[static_cast<size_t>(i)]) {
      d.indices = axes[static_cast<size_t>(i)].dim(coord(r, i)).indices;
    }
  }
}

gdap_map::~gdap_map() {
  for (auto& entry : device_tables) gdap::release_device_tables(entry.second);
}

const gdap_dim& gdap_map::dim(int64_t rank, int64_t axis) const {
  if (rank < 0 || rank >= nranks) fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is outside [0, {})", rank, nranks);
  if (axis < 0 || axis >= ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", axis, ndim());
  const auto& own = variants[static_cast<size_t>(axis)];
  if (!own.empty()) {
    auto it = std::lower_bound(own.begin(), own.end(), rank, [](const auto& v, int64_t r) { return v.first < r; });
    if (it != own.end() && it->first == rank) return it->second;
  }
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
