// Layouts along dimension 0, built as ordinary maps so that plans and gdap_redistribute move data
// to and from them on every engine: the whole array on one rank (gather, scatter), the whole array
// on every rank (allgather, broadcast), and any rows on any rank (unstructured). The protocol has no
// replicated 'b' or 'c' dimension, so the replicated layout is unstructured along dimension 0
// (every rank holds every index, one_to_one false) and whole along the others.
#include "maps/layouts.hpp"

#include "maps/layout_build.hpp"
#include "maps/map.hpp"
#include "protocol/dim.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"

#include <gdap/gdap.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <utility>
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

int64_t layout_bytes(int64_t nranks, int64_t ndim, int64_t indices) {
  const int64_t dims = checked_mul(checked_mul(nranks, ndim, "nranks * ndim"), kBytesPerDictionary,
                                   "bytes of the map's dictionaries");
  const int64_t per_index = kBytesHeldPerIndex + (nranks > 1 ? kBytesMergingPerIndex : 0);
  return checked_add(dims, checked_mul(indices, per_index, "bytes of the map's indices"), "bytes of the map");
}

namespace {

// Pages of this process's address space (statm field 0) or of its data (field 5), as a limit on
// either counts them: what is mapped already is not left for a map.
int64_t pages_in_use(int field) {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long value[6] = {};
  const bool read = std::fscanf(f, "%llu %llu %llu %llu %llu %llu", &value[0], &value[1], &value[2], &value[3],
                                &value[4], &value[5]) == 6;
  std::fclose(f);
  return read ? static_cast<int64_t>(std::min<unsigned long long>(value[field], INT64_MAX / 65536)) : 0;
}

}  // namespace

int64_t host_memory_bound() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t bound = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : UINT64_MAX;
  for (auto [resource, field] : {std::pair{RLIMIT_AS, 0}, std::pair{RLIMIT_DATA, 5}}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      const uint64_t used = static_cast<uint64_t>(pages_in_use(field)) * static_cast<uint64_t>(page > 0 ? page : 4096);
      bound = std::min<uint64_t>(bound, limit.rlim_cur > used ? limit.rlim_cur - used : 0);
    }
  }
  return static_cast<int64_t>(std::min<uint64_t>(bound, INT64_MAX));
}

void check_fits_memory(int64_t nranks, int64_t bytes, const std::string& what) {
  const int64_t bound = host_memory_bound();
  if (bytes > bound) {
    fail(GDAP_ERR_NO_MEMORY, "a map of {} ranks needs about {} bytes, which cannot be allocated: more than the {} "
         "bytes this process can have (the host's physical memory, or what ulimit -v / -d leaves if lower){}; "
         "refused before allocating", nranks, bytes, bound, what.empty() ? "" : ", " + what);
  }
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
      dims.reserve(static_cast<size_t>(nranks * ndim));
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
    const std::string what = fmt::format("every rank holds all {} indices of dimension 0", shape[0]);
    // The map's bytes and the one list of every index that all ranks' dictionaries point at.
    const int64_t bytes = gdap::checked_add(
        gdap::layout_bytes(nranks, ndim, gdap::checked_mul(nranks, shape[0], "nranks * shape[0] (indices held)")),
        gdap::checked_mul(shape[0], int64_t{sizeof(int64_t)}, "bytes of the list of indices"), "bytes of the map");
    gdap::allocating(nranks, bytes, [&] {
      std::vector<int64_t> all(static_cast<size_t>(shape[0]));
      std::iota(all.begin(), all.end(), int64_t{0});
      std::vector<gdap_dim> dims;
      dims.reserve(static_cast<size_t>(nranks * ndim));
      for (int64_t r = 0; r < nranks; ++r) {
        dims.push_back(gdap::unstructured_dim(shape[0], nranks, r, all.data(), shape[0], 0));
        gdap::whole_tail(dims, ndim, shape);
      }
      *out = new gdap_map(nranks, ndim, dims.data());
    }, what);
  });
}

extern "C" GDAP_API gdap_status gdap_map_create_unstructured(gdap_map** out, int64_t nranks, int64_t ndim,
                                                             const int64_t* shape, const int64_t* counts,
                                                             const int64_t* indices, int64_t num_indices,
                                                             int one_to_one) {
  return gdap::guard([&] {
    gdap::require(out, "out");
    gdap::check_layout(nranks, ndim, shape);
    gdap::require(counts, "counts");
    if (num_indices < 0) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "num_indices ({}) < 0", num_indices);
    if (num_indices > 0) gdap::require(indices, "indices");
    int64_t sum = 0;
    for (int64_t r = 0; r < nranks; ++r) {
      if (counts[r] < 0) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "counts[{}] ({}) < 0", r, counts[r]);
      sum = gdap::checked_add(sum, counts[r], "the sum of counts");
    }
    if (sum != num_indices) {
      gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "counts sum to {} indices, but num_indices is {}", sum, num_indices);
    }
    gdap::allocating(nranks, gdap::layout_bytes(nranks, ndim, num_indices), [&] {
      std::vector<gdap_dim> dims;
      dims.reserve(static_cast<size_t>(nranks * ndim));
      int64_t at = 0;
      for (int64_t r = 0; r < nranks; ++r) {
        dims.push_back(gdap::unstructured_dim(shape[0], nranks, r, counts[r] > 0 ? indices + at : nullptr, counts[r],
                                              one_to_one));
        gdap::whole_tail(dims, ndim, shape);
        at += counts[r];
      }
      *out = new gdap_map(nranks, ndim, dims.data());
    });
  });
}
