// Per-dimension index arithmetic for one process's dictionary (see dim_map.hpp).
#include "maps/dim_map.hpp"

#include "core/checked.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <utility>

namespace gdap {
namespace {

// Number of blocks a cyclic rank holds (the partial trailing block counts as one).
int64_t cyclic_blocks(const gdap_dim& d) {
  const int64_t owned = owned_count(d);
  return owned / d.block_size + (owned % d.block_size != 0 ? 1 : 0);
}

std::vector<std::pair<int64_t, int64_t>> sorted_pairs(const gdap_dim& d) {
  std::vector<std::pair<int64_t, int64_t>> pairs;  // (global, local)
  pairs.reserve(static_cast<size_t>(d.num_indices));
  for (int64_t l = 0; l < d.num_indices; ++l) pairs.emplace_back(d.indices[l], l);
  if (!std::is_sorted(pairs.begin(), pairs.end())) std::sort(pairs.begin(), pairs.end());  // often in order
  return pairs;
}

// Maximal runs in which global and local both step by +1.
std::vector<gdap_run> unstructured_runs(const gdap_dim& d) {
  std::vector<gdap_run> out;
  for (const auto& [g, l] : sorted_pairs(d)) {
    if (!out.empty()) {
      gdap_run& last = out.back();
      if (last.global_start + last.length == g && last.local_start + last.length == l) {
        ++last.length;
        continue;
      }
    }
    out.push_back({g, 1, l});
  }
  return out;
}

}  // namespace

std::optional<int64_t> owned_local(const gdap_dim& d, int64_t g) {
  switch (d.dist_type) {
    case GDAP_DIST_BLOCK: {
      const int64_t lo = d.start + comm_padding_lower(d);
      const int64_t hi = d.stop - comm_padding_upper(d);
      if (g >= lo && g < hi) return g - d.start;
      return std::nullopt;
    }
    case GDAP_DIST_CYCLIC: {
      if (g < 0 || g >= d.size) return std::nullopt;
      const int64_t block = g / d.block_size;
      if (block % d.proc_grid_size != d.proc_grid_rank) return std::nullopt;
      return block / d.proc_grid_size * d.block_size + g % d.block_size;
    }
    case GDAP_DIST_UNSTRUCTURED:
      for (int64_t l = 0; l < d.num_indices; ++l) {
        if (d.indices[l] == g) return l;
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::optional<int64_t> held_local(const gdap_dim& d, int64_t g) {
  if (d.dist_type == GDAP_DIST_BLOCK) {
    if (g >= d.start && g < d.stop) return g - d.start;  // padding and periodic halos hold their own index
    return std::nullopt;
  }
  return owned_local(d, g);
}

int64_t global_of_local(const gdap_dim& d, int64_t local) {
  const int64_t extent = local_extent(d);
  if (local < 0 || local >= extent) {
    fail(GDAP_ERR_OUT_OF_RANGE, "local index {} is outside the buffer extent {}", local, extent);
  }
  switch (d.dist_type) {
    case GDAP_DIST_BLOCK: return d.start + local;  // < stop <= size
    case GDAP_DIST_CYCLIC: {
      const int64_t block = local / d.block_size * d.proc_grid_size + d.proc_grid_rank;
      return checked_add(checked_mul(block, d.block_size, "global index"), local % d.block_size, "global index");
    }
    default: return d.indices[local];
  }
}

int64_t num_runs(const gdap_dim& d) {
  switch (d.dist_type) {
    case GDAP_DIST_BLOCK: return owned_count(d) > 0 ? 1 : 0;
    case GDAP_DIST_CYCLIC: return cyclic_blocks(d);
    default: return static_cast<int64_t>(unstructured_runs(d).size());
  }
}

std::vector<gdap_run> runs(const gdap_dim& d, int64_t first, int64_t capacity) {
  if (first < 0 || capacity < 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "first ({}) and capacity ({}) must be >= 0", first, capacity);
  }
  std::vector<gdap_run> out;
  if (d.dist_type == GDAP_DIST_UNSTRUCTURED) {
    auto all = unstructured_runs(d);
    const auto begin = std::min<size_t>(static_cast<size_t>(first), all.size());
    const auto end = std::min<size_t>(begin + static_cast<size_t>(capacity), all.size());
    return {all.begin() + static_cast<std::ptrdiff_t>(begin), all.begin() + static_cast<std::ptrdiff_t>(end)};
  }
  const int64_t total = num_runs(d);
  const int64_t end = first < total ? first + std::min(capacity, total - first) : first;
  out.reserve(static_cast<size_t>(std::max<int64_t>(end - first, 0)));
  for (int64_t k = first; k < end; ++k) {
    if (d.dist_type == GDAP_DIST_BLOCK) {
      const int64_t lo = comm_padding_lower(d);
      out.push_back({d.start + lo, owned_count(d), lo});
    } else {
      const int64_t global = (k * d.proc_grid_size + d.proc_grid_rank) * d.block_size;
      out.push_back({global, std::min(d.block_size, d.size - global), k * d.block_size});
    }
  }
  return out;
}

}  // namespace gdap
