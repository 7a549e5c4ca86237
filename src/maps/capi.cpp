// C entry points of layer 2: per-dimension index maps and runs, and gdap_map.
#include "core/checked.hpp"
#include "maps/dim_map.hpp"
#include "maps/map.hpp"
#include "maps/owner_batch.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace gdap {
namespace {

gdap_dim valid_dim(const gdap_dim* dim) {
  gdap_dim d = read_dim(dim, 0);
  validate_dim(d, 0, -1);
  return d;
}

void check_rank(const gdap_map& map, int64_t rank) {
  if (rank < 0 || rank >= map.nranks) fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is outside [0, {})", rank, map.nranks);
}

// `count(dim)` of each of rank `rank`'s dictionaries (local extents, owned counts).
std::vector<int64_t> per_dim(const gdap_map& m, int64_t rank, int64_t (*count)(const gdap_dim&)) {
  check_rank(m, rank);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < m.ndim(); ++i) out.push_back(count(m.dim(rank, i)));
  return out;
}

void copy_out(int64_t* out, const std::vector<int64_t>& values, const char* name) {
  if (values.empty()) return;
  require(out, name);
  std::copy(values.begin(), values.end(), out);
}

void write_runs(gdap_run* out, int64_t* written, const std::vector<gdap_run>& runs) {
  require(written, "written");
  if (!runs.empty()) require(out, "runs");
  std::copy(runs.begin(), runs.end(), out);
  *written = static_cast<int64_t>(runs.size());
}

// The global index checked against the global shape, for messages that say which coordinate
// (a map's unstructured indices lie in [0, size) too).
void check_global(const gdap_map& map, const int64_t* global) {
  if (map.ndim() > 0) require(global, "global");
  for (size_t i = 0; i < map.axes.size(); ++i) {
    const auto& axis = map.axes[i];
    if (global[i] < 0 || global[i] >= axis.size()) {
      fail(GDAP_ERR_OUT_OF_RANGE, "global index {} of dimension {} is outside [0, {})", global[i], i, axis.size());
    }
  }
}

std::vector<int64_t> owners(const gdap_map& map, const int64_t* global) {
  check_global(map, global);
  std::vector<int64_t> ranks{0};
  for (size_t i = 0; i < map.axes.size(); ++i) {
    const auto coords = map.axes[i].owners(global[i]);
    std::vector<int64_t> next;
    for (int64_t r : ranks) {
      for (int64_t c : coords) next.push_back(r * map.grid_shape[i] + c);
    }
    ranks = std::move(next);
  }
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

void owner_batch_host(const gdap_map& map, int64_t* ranks, int64_t* locals, const int64_t* globals, int64_t count) {
  const int64_t ndim = map.ndim();
  for (int64_t k = 0; k < count; ++k) {
    int64_t rank = -1;
    if (!map.try_owner(globals + k * ndim, rank, locals != nullptr ? locals + k * ndim : nullptr)) rank = -1;
    ranks[k] = rank;
  }
}

}  // namespace
}  // namespace gdap

using gdap::fail;
using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_dim_global_to_local(int64_t* local, const gdap_dim* dim, int64_t global) {
  return guard([&] {
    require(local, "local");
    const gdap_dim d = gdap::valid_dim(dim);
    auto l = gdap::held_local(d, global);
    if (!l) fail(GDAP_ERR_NOT_FOUND, "global index {} is not held by this process ({})", global, gdap::dim_label(d, 0));
    *local = *l;
  });
}

GDAP_API gdap_status gdap_dim_local_to_global(int64_t* global, const gdap_dim* dim, int64_t local) {
  return guard([&] {
    require(global, "global");
    *global = gdap::global_of_local(gdap::valid_dim(dim), local);
  });
}

GDAP_API gdap_status gdap_dim_num_runs(int64_t* num_runs, const gdap_dim* dim) {
  return guard([&] {
    require(num_runs, "num_runs");
    *num_runs = gdap::num_runs(gdap::valid_dim(dim));
  });
}

GDAP_API gdap_status gdap_dim_runs(gdap_run* runs, int64_t* written, const gdap_dim* dim, int64_t first,
                                   int64_t capacity) {
  return guard([&] { gdap::write_runs(runs, written, gdap::runs(gdap::valid_dim(dim), first, capacity)); });
}

GDAP_API gdap_status gdap_map_create(gdap_map** out, int64_t nranks, int64_t ndim, const gdap_dim* dims) {
  return guard([&] {
    require(out, "out");
    *out = new gdap_map(nranks, ndim, dims);
  });
}

GDAP_API gdap_status gdap_map_destroy(gdap_map* map) {
  return guard([&] { delete gdap::handle_or_null(map, "map"); });
}

GDAP_API gdap_status gdap_map_ndim(int64_t* ndim, const gdap_map* map) {
  return guard([&] {
    require(ndim, "ndim");
    *ndim = gdap::handle(map, "map").ndim();
  });
}

GDAP_API gdap_status gdap_map_nranks(int64_t* nranks, const gdap_map* map) {
  return guard([&] {
    require(nranks, "nranks");
    *nranks = gdap::handle(map, "map").nranks;
  });
}

GDAP_API gdap_status gdap_map_global_shape(int64_t* shape, const gdap_map* map) {
  return guard([&] { gdap::copy_out(shape, gdap::handle(map, "map").global_shape, "shape"); });
}

GDAP_API gdap_status gdap_map_grid_shape(int64_t* grid_shape, const gdap_map* map) {
  return guard([&] { gdap::copy_out(grid_shape, gdap::handle(map, "map").grid_shape, "grid_shape"); });
}

GDAP_API gdap_status gdap_map_dim(gdap_dim* out, const gdap_map* map, int64_t rank, int64_t dim) {
  return guard([&] {
    require(out, "out");
    const gdap_map& m = gdap::handle(map, "map");
    gdap::check_rank(m, rank);
    *out = m.dim(rank, dim);
  });
}

GDAP_API gdap_status gdap_map_local_shape(int64_t* shape, const gdap_map* map, int64_t rank) {
  return guard([&] {
    gdap::copy_out(shape, gdap::per_dim(gdap::handle(map, "map"), rank, gdap::local_extent), "shape");
  });
}

GDAP_API gdap_status gdap_map_owned_shape(int64_t* shape, const gdap_map* map, int64_t rank) {
  return guard([&] {
    gdap::copy_out(shape, gdap::per_dim(gdap::handle(map, "map"), rank, gdap::owned_count), "shape");
  });
}

GDAP_API gdap_status gdap_map_owned_count(int64_t* count, const gdap_map* map, int64_t rank) {
  return guard([&] {
    require(count, "count");
    int64_t n = 1;
    for (int64_t c : gdap::per_dim(gdap::handle(map, "map"), rank, gdap::owned_count)) n = gdap::checked_mul(n, c, "owned count");
    *count = n;
  });
}

GDAP_API gdap_status gdap_map_owner(int64_t* rank, int64_t* local, const gdap_map* map, const int64_t* global) {
  return guard([&] {
    require(rank, "rank");
    const gdap_map& m = gdap::handle(map, "map");
    gdap::check_global(m, global);
    std::vector<int64_t> l(static_cast<size_t>(m.ndim()));
    int64_t r = -1;
    if (!m.try_owner(global, r, l.data())) fail(GDAP_ERR_NOT_FOUND, "no rank owns this global index");
    *rank = r;
    if (local != nullptr) std::copy(l.begin(), l.end(), local);
  });
}

GDAP_API gdap_status gdap_map_owners(int64_t* ranks, int64_t* count, const gdap_map* map, const int64_t* global,
                                     int64_t capacity) {
  return guard([&] {
    require(count, "count");
    const auto all = gdap::owners(gdap::handle(map, "map"), global);
    const auto n = static_cast<int64_t>(all.size());
    if (n > capacity) {
      *count = n;
      fail(GDAP_ERR_BUFFER_TOO_SMALL, "{} ranks own this global index but capacity is {}", n, capacity);
    }
    gdap::copy_out(ranks, all, "ranks");
    *count = n;
  });
}

GDAP_API gdap_status gdap_map_owner_batch(int64_t* ranks, int64_t* locals, const gdap_map* map, const int64_t* globals,
                                          int64_t count, gdap_device device, void* stream) {
  return guard([&] {
    const gdap_map& m = gdap::handle(map, "map");
    if (count < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "count ({}) < 0", count);
    const bool on_host = device.type == GDAP_DEVICE_CPU || device.type == GDAP_DEVICE_CUDA_HOST ||
                         device.type == GDAP_DEVICE_CUDA_MANAGED;
    if (!on_host && device.type != GDAP_DEVICE_CUDA) {
      fail(GDAP_ERR_UNSUPPORTED, "device type {} is not supported; use GDAP_DEVICE_CPU, CUDA, CUDA_HOST or CUDA_MANAGED",
           device.type);
    }
    if (count > 0) {
      require(ranks, "ranks");
      if (m.ndim() > 0) require(globals, "globals");
      gdap::checked_mul(count, m.ndim(), "count * ndim");
    }
    if (on_host) {
      gdap::owner_batch_host(m, ranks, locals, globals, count);
      return;
    }
    const std::string message = gdap::owner_batch_cuda(m, ranks, locals, globals, count, device.id, stream);
    if (!message.empty()) fail(GDAP_ERR_DEVICE, "gdap_map_owner_batch on CUDA device {}: {}", device.id, message);
  });
}

GDAP_API gdap_status gdap_map_local_to_global(int64_t* global, const gdap_map* map, int64_t rank, const int64_t* local) {
  return guard([&] {
    const gdap_map& m = gdap::handle(map, "map");
    gdap::check_rank(m, rank);
    if (m.ndim() > 0) require(local, "local");
    std::vector<int64_t> out;
    for (int64_t i = 0; i < m.ndim(); ++i) out.push_back(gdap::global_of_local(m.dim(rank, i), local[i]));
    gdap::copy_out(global, out, "global");
  });
}

GDAP_API gdap_status gdap_map_num_runs(int64_t* num_runs, const gdap_map* map, int64_t rank, int64_t dim) {
  return guard([&] {
    require(num_runs, "num_runs");
    const gdap_map& m = gdap::handle(map, "map");
    gdap::check_rank(m, rank);
    *num_runs = gdap::num_runs(m.dim(rank, dim));
  });
}

GDAP_API gdap_status gdap_map_runs(gdap_run* runs, int64_t* written, const gdap_map* map, int64_t rank, int64_t dim,
                                   int64_t first, int64_t capacity) {
  return guard([&] {
    const gdap_map& m = gdap::handle(map, "map");
    gdap::check_rank(m, rank);
    gdap::write_runs(runs, written, gdap::runs(m.dim(rank, dim), first, capacity));
  });
}

}  // extern "C"
