// Per-process rules of the protocol for one dimension dictionary, and the per-dimension counts
// (owned count, local extent, communication padding) that every higher layer builds on.
#include "protocol/dim.hpp"

#include "core/checked.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace gdap {
namespace {

constexpr gdap_dim kInit = GDAP_DIM_INIT;

const char* type_name(int32_t dist_type) {
  switch (dist_type) {
    case GDAP_DIST_BLOCK: return "'b'";
    case GDAP_DIST_CYCLIC: return "'c'";
    case GDAP_DIST_UNSTRUCTURED: return "'u'";
    case GDAP_DIST_UNDISTRIBUTED: return "{}";
    default: return "?";
  }
}

uint32_t keys_of(int32_t dist_type) {
  switch (dist_type) {
    case GDAP_DIST_BLOCK: return GDAP_KEY_PADDING | GDAP_KEY_PERIODIC;
    case GDAP_DIST_CYCLIC: return GDAP_KEY_BLOCK_SIZE;
    case GDAP_DIST_UNSTRUCTURED: return GDAP_KEY_ONE_TO_ONE;
    default: return 0;
  }
}

// A field that belongs to another dist_type must keep its GDAP_DIM_INIT value.
void require_unused(bool unused, const std::string& label, const char* key, int32_t dist_type) {
  if (!unused) fail(GDAP_ERR_PROTOCOL, "{}: key '{}' is not a key of dist_type {}", label, key, type_name(dist_type));
}

void check_foreign_fields(const gdap_dim& d, const std::string& label) {
  const bool block = d.dist_type == GDAP_DIST_BLOCK;
  const bool cyclic = d.dist_type == GDAP_DIST_CYCLIC;
  const bool unstructured = d.dist_type == GDAP_DIST_UNSTRUCTURED;
  if (!block && !cyclic) require_unused(d.start == 0, label, "start", d.dist_type);
  if (!block) {
    require_unused(d.stop == 0, label, "stop", d.dist_type);
    require_unused(d.padding[0] == 0 && d.padding[1] == 0, label, "padding", d.dist_type);
    require_unused(d.periodic == 0, label, "periodic", d.dist_type);
  }
  if (!cyclic) require_unused(d.block_size == 1, label, "block_size", d.dist_type);
  if (!unstructured) {
    require_unused(d.indices == nullptr && d.num_indices == 0, label, "indices", d.dist_type);
    require_unused(d.one_to_one == 0, label, "one_to_one", d.dist_type);
  }
}

// An optional key holding a non-default value must have its bit in `given`.
void check_given_bits(const gdap_dim& d, const std::string& label) {
  const uint32_t stray = d.given & ~keys_of(d.dist_type);
  if (stray != 0) {
    fail(GDAP_ERR_PROTOCOL, "{}: given holds bits {:#x} that are no optional keys of dist_type {}", label, stray,
         type_name(d.dist_type));
  }
  auto need = [&](bool non_default, uint32_t bit, const char* key, const char* macro, int64_t value) {
    if (non_default && (d.given & bit) == 0) {
      fail(GDAP_ERR_PROTOCOL, "{}: {} {} is set but {} is not in given", label, key, value, macro);
    }
  };
  need(d.padding[0] != 0 || d.padding[1] != 0, GDAP_KEY_PADDING, "padding",
       "GDAP_KEY_PADDING", d.padding[0] != 0 ? d.padding[0] : d.padding[1]);
  need(d.periodic != 0, GDAP_KEY_PERIODIC, "periodic", "GDAP_KEY_PERIODIC", d.periodic);
  need(d.block_size != 1, GDAP_KEY_BLOCK_SIZE, "block_size", "GDAP_KEY_BLOCK_SIZE", d.block_size);
  need(d.one_to_one != 0, GDAP_KEY_ONE_TO_ONE, "one_to_one", "GDAP_KEY_ONE_TO_ONE", d.one_to_one);
}

void check_common(const gdap_dim& d, const std::string& label) {
  if (d.reserved != 0) fail(GDAP_ERR_PROTOCOL, "{}: reserved is {}; it must be 0", label, d.reserved);
  if (d.size < 0) fail(GDAP_ERR_PROTOCOL, "{}: size ({}) < 0", label, d.size);
  if (d.proc_grid_size < 1) fail(GDAP_ERR_PROTOCOL, "{}: proc_grid_size ({}) < 1", label, d.proc_grid_size);
  if (d.proc_grid_rank < 0 || d.proc_grid_rank >= d.proc_grid_size) {
    fail(GDAP_ERR_PROTOCOL, "{}: proc_grid_rank ({}) is outside [0, proc_grid_size ({}))", label, d.proc_grid_rank,
         d.proc_grid_size);
  }
  if (d.periodic != 0 && d.periodic != 1) fail(GDAP_ERR_PROTOCOL, "{}: periodic ({}) is not 0 or 1", label, d.periodic);
  if (d.one_to_one != 0 && d.one_to_one != 1) {
    fail(GDAP_ERR_PROTOCOL, "{}: one_to_one ({}) is not 0 or 1", label, d.one_to_one);
  }
  check_foreign_fields(d, label);
  check_given_bits(d, label);
}

void check_extent(const std::string& label, const char* what, int64_t implied, int64_t extent) {
  if (extent >= 0 && implied != extent) {
    fail(GDAP_ERR_PROTOCOL, "{}: {} ({}) != buffer shape ({})", label, what, implied, extent);
  }
}

void validate_block(const gdap_dim& d, const std::string& label, int64_t extent) {
  if (d.padding[0] < 0 || d.padding[1] < 0) {
    fail(GDAP_ERR_PROTOCOL, "{}: padding ({}, {}) has a negative width", label, d.padding[0], d.padding[1]);
  }
  const bool periodic = d.periodic != 0;
  const int64_t lowest = periodic ? -d.padding[0] : 0;
  const int64_t highest = periodic ? checked_add(d.size, d.padding[1], "size + padding[1]") : d.size;
  if (d.start < lowest) {
    fail(GDAP_ERR_PROTOCOL, "{}: start ({}) < {}", label, d.start, periodic ? "-padding[0]" : "0");
  }
  if (d.stop < d.start) fail(GDAP_ERR_PROTOCOL, "{}: stop ({}) < start ({})", label, d.stop, d.start);
  if (d.stop > highest) {
    fail(GDAP_ERR_PROTOCOL, "{}: stop ({}) > {} ({})", label, d.stop, periodic ? "size + padding[1]" : "size", highest);
  }
  const int64_t held = checked_sub(d.stop, d.start, "stop - start");
  if (d.padding[0] > held || d.padding[1] > held - d.padding[0]) {
    fail(GDAP_ERR_PROTOCOL, "{}: padding ({}, {}) is wider than stop - start ({})", label, d.padding[0], d.padding[1],
         held);
  }
  const int64_t owned_start = d.start + comm_padding_lower(d);
  const int64_t owned_stop = d.stop - comm_padding_upper(d);
  if (owned_start < 0 || owned_stop > d.size) {
    fail(GDAP_ERR_PROTOCOL, "{}: owned range [{}, {}) (start, stop less communication padding) leaves [0, size ({}))",
         label, owned_start, owned_stop, d.size);
  }
  if (d.proc_grid_rank == 0 && owned_start != 0) {
    fail(GDAP_ERR_PROTOCOL, "{}: grid rank 0 must own from index 0, but start ({}) + communication padding ({}) = {}",
         label, d.start, comm_padding_lower(d), owned_start);
  }
  if (d.proc_grid_rank == d.proc_grid_size - 1 && owned_stop != d.size) {
    fail(GDAP_ERR_PROTOCOL,
         "{}: the last grid rank must own up to size ({}), but stop ({}) - communication padding ({}) = {}", label,
         d.size, d.stop, comm_padding_upper(d), owned_stop);
  }
  check_extent(label, "stop - start", held, extent);
}

void validate_cyclic(const gdap_dim& d, const std::string& label, int64_t extent) {
  if (d.block_size < 1) fail(GDAP_ERR_PROTOCOL, "{}: block_size ({}) < 1", label, d.block_size);
  if (d.start < 0) fail(GDAP_ERR_PROTOCOL, "{}: start ({}) < 0", label, d.start);
  int64_t expected = 0;
  const bool fits = !__builtin_mul_overflow(d.proc_grid_rank, d.block_size, &expected);
  const bool empty_alias = d.start == d.size && (!fits || expected >= d.size);
  if (!empty_alias && (!fits || d.start != expected)) {
    fail(GDAP_ERR_PROTOCOL, "{}: start ({}) != proc_grid_rank ({}) * block_size ({})", label, d.start,
         d.proc_grid_rank, d.block_size);
  }
  check_extent(label, "owned count", owned_count(d), extent);
}

void validate_unstructured(const gdap_dim& d, const std::string& label, int64_t extent) {
  if (d.num_indices < 0) fail(GDAP_ERR_PROTOCOL, "{}: number of indices ({}) < 0", label, d.num_indices);
  if (d.num_indices > 0 && d.indices == nullptr) {
    fail(GDAP_ERR_PROTOCOL, "{}: indices is NULL but holds {} entries", label, d.num_indices);
  }
  std::vector<std::pair<int64_t, int64_t>> sorted;  // (global, local)
  sorted.reserve(static_cast<size_t>(d.num_indices));
  for (int64_t i = 0; i < d.num_indices; ++i) sorted.emplace_back(d.indices[i], i);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first == sorted[i - 1].first) {
      fail(GDAP_ERR_PROTOCOL, "{}: indices holds {} twice (local positions {} and {}); indices must be unique",
           label, sorted[i].first, sorted[i - 1].second, sorted[i].second);
    }
  }
  check_extent(label, "number of indices", d.num_indices, extent);
}

}  // namespace

gdap_dim read_dim(const gdap_dim* dims, int64_t i) {
  require(dims, "dims");
  const uint32_t stride = dims[0].struct_size;
  if (stride < sizeof(gdap_dim) || stride % 8 != 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT,
         "dims[0].struct_size is {}; it must be at least {} and a multiple of 8: set it with GDAP_DIM_INIT or "
         "gdap_dim_init",
         stride, sizeof(gdap_dim));
  }
  const int64_t offset = checked_mul(i, static_cast<int64_t>(stride), "offset of a gdap_dim");
  const auto* element = reinterpret_cast<const unsigned char*>(dims) + offset;
  gdap_dim out = kInit;
  std::memcpy(&out, element, sizeof(gdap_dim));
  out.struct_size = sizeof(gdap_dim);
  return out;
}

std::string dim_label(const gdap_dim& dim, int64_t dim_index) {
  if (dim.dist_type == GDAP_DIST_BLOCK || dim.dist_type == GDAP_DIST_CYCLIC || dim.dist_type == GDAP_DIST_UNSTRUCTURED ||
      dim.dist_type == GDAP_DIST_UNDISTRIBUTED) {
    return fmt::format("dimension {} ({})", dim_index, type_name(dim.dist_type));
  }
  return fmt::format("dimension {}", dim_index);
}

gdap_dim resolve_alias(const gdap_dim& dim, int64_t extent) {
  if (dim.dist_type != GDAP_DIST_UNDISTRIBUTED) return dim;
  gdap_dim out = kInit;
  out.dist_type = GDAP_DIST_BLOCK;
  out.size = extent;
  out.stop = extent;
  return out;
}

void validate_dim(const gdap_dim& dim, int64_t dim_index, int64_t extent) {
  const std::string label = dim_label(dim, dim_index);
  switch (dim.dist_type) {
    case GDAP_DIST_UNDISTRIBUTED: {
      gdap_dim init = kInit;
      init.struct_size = dim.struct_size;
      if (std::memcmp(&init, &dim, sizeof(gdap_dim)) != 0) {
        fail(GDAP_ERR_PROTOCOL, "{}: the empty dictionary has keys set; give dist_type 'b', 'c' or 'u'", label);
      }
      if (extent < 0) {
        fail(GDAP_ERR_PROTOCOL, "{}: the empty dictionary {{}} needs the buffer shape to be resolved", label);
      }
      validate_dim(resolve_alias(dim, extent), dim_index, extent);
      return;
    }
    case GDAP_DIST_BLOCK:
    case GDAP_DIST_CYCLIC:
    case GDAP_DIST_UNSTRUCTURED: break;
    default: {
      const bool printable = dim.dist_type >= 32 && dim.dist_type < 127;
      fail(GDAP_ERR_PROTOCOL, "{}: dist_type {}{}{} ({}) is not 'b', 'c' or 'u'", label, printable ? "'" : "",
           printable ? std::string(1, static_cast<char>(dim.dist_type)) : std::string("?"), printable ? "'" : "",
           dim.dist_type);
    }
  }
  check_common(dim, label);
  if (dim.dist_type == GDAP_DIST_BLOCK) validate_block(dim, label, extent);
  if (dim.dist_type == GDAP_DIST_CYCLIC) validate_cyclic(dim, label, extent);
  if (dim.dist_type == GDAP_DIST_UNSTRUCTURED) validate_unstructured(dim, label, extent);
}

int64_t block_size_of(const gdap_dim& dim) { return dim.block_size; }
bool is_periodic(const gdap_dim& dim) { return dim.periodic != 0; }
bool is_one_to_one(const gdap_dim& dim) { return dim.one_to_one != 0; }

int64_t comm_padding_lower(const gdap_dim& dim) {
  if (dim.dist_type != GDAP_DIST_BLOCK) return 0;
  return (dim.proc_grid_rank > 0 || is_periodic(dim)) ? dim.padding[0] : 0;
}

int64_t comm_padding_upper(const gdap_dim& dim) {
  if (dim.dist_type != GDAP_DIST_BLOCK) return 0;
  return (dim.proc_grid_rank < dim.proc_grid_size - 1 || is_periodic(dim)) ? dim.padding[1] : 0;
}

int64_t cyclic_owned_count(int64_t size, int64_t grid_size, int64_t block_size, int64_t grid_rank) {
  const int64_t full_blocks = size / block_size;
  const int64_t remainder = size % block_size;
  const int64_t partial_owner = full_blocks % grid_size;
  const int64_t blocks = full_blocks / grid_size + (grid_rank < partial_owner ? 1 : 0);
  // blocks * block_size <= size, so neither product nor sum overflows.
  return blocks * block_size + (grid_rank == partial_owner ? remainder : 0);
}

int64_t owned_count(const gdap_dim& dim) {
  switch (dim.dist_type) {
    case GDAP_DIST_BLOCK: return dim.stop - dim.start - comm_padding_lower(dim) - comm_padding_upper(dim);
    case GDAP_DIST_CYCLIC:
      return cyclic_owned_count(dim.size, dim.proc_grid_size, dim.block_size, dim.proc_grid_rank);
    case GDAP_DIST_UNSTRUCTURED: return dim.num_indices;
    default: fail(GDAP_ERR_PROTOCOL, "dimension ({}): an empty dictionary {{}} must be resolved first", type_name(dim.dist_type));
  }
}

int64_t local_extent(const gdap_dim& dim) {
  switch (dim.dist_type) {
    case GDAP_DIST_BLOCK: return dim.stop - dim.start;
    case GDAP_DIST_CYCLIC: return owned_count(dim);
    case GDAP_DIST_UNSTRUCTURED: return dim.num_indices;
    default: fail(GDAP_ERR_PROTOCOL, "dimension ({}): an empty dictionary {{}} must be resolved first", type_name(dim.dist_type));
  }
}

}  // namespace gdap
