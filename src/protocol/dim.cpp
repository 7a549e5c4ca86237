// Per-process rules of the protocol for one dimension dictionary, and the per-dimension counts
// (owned count, local extent, communication padding) that every higher layer builds on.
// Every check runs on caller-controlled int64 values, so each sum, difference and product is either
// proven in range by an earlier check (said in a comment) or overflow-checked.
#include "protocol/dim.hpp"

#include "core/checked.hpp"
#include "core/versioned.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
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

// The name of a `given` bit, for messages.
std::string bit_names(uint32_t bits) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {{GDAP_KEY_PADDING, "GDAP_KEY_PADDING"},
                                                                {GDAP_KEY_PERIODIC, "GDAP_KEY_PERIODIC"},
                                                                {GDAP_KEY_BLOCK_SIZE, "GDAP_KEY_BLOCK_SIZE"},
                                                                {GDAP_KEY_ONE_TO_ONE, "GDAP_KEY_ONE_TO_ONE"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((bits & bit) == 0) continue;
    out += out.empty() ? "" : " | ";
    out += name;
    bits &= ~bit;
  }
  if (bits != 0) out += fmt::format("{}unknown bits {:#x}", out.empty() ? "" : " | ", bits);
  return out;
}

// The first field that differs from GDAP_DIM_INIT, as "key (value)"; "" if none. `dist_type` and
// `struct_size` are not compared.
std::string first_set_field(const gdap_dim& d) {
  if (d.given != 0) return fmt::format("given ({})", bit_names(d.given));
  if (d.periodic != 0) return fmt::format("periodic ({})", d.periodic);
  if (d.size != 0) return fmt::format("size ({})", d.size);
  if (d.proc_grid_size != 1) return fmt::format("proc_grid_size ({})", d.proc_grid_size);
  if (d.proc_grid_rank != 0) return fmt::format("proc_grid_rank ({})", d.proc_grid_rank);
  if (d.start != 0) return fmt::format("start ({})", d.start);
  if (d.stop != 0) return fmt::format("stop ({})", d.stop);
  if (d.padding[0] != 0 || d.padding[1] != 0) return fmt::format("padding ({}, {})", d.padding[0], d.padding[1]);
  if (d.block_size != 1) return fmt::format("block_size ({})", d.block_size);
  if (d.indices != nullptr || d.num_indices != 0) return fmt::format("indices ({} entries)", d.num_indices);
  if (d.one_to_one != 0) return fmt::format("one_to_one ({})", d.one_to_one);
  if (d.reserved != 0) return fmt::format("reserved ({})", d.reserved);
  return "";
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

// `given` names only optional keys of the dist_type, and an optional key holding a non-default
// value has its bit (a forgotten bit is reported rather than silently ignored).
void check_given_bits(const gdap_dim& d, const std::string& label) {
  const uint32_t stray = d.given & ~keys_of(d.dist_type);
  if (stray != 0) {
    fail(GDAP_ERR_PROTOCOL, "{}: given holds {}, which is not an optional key of dist_type {}", label,
         bit_names(stray), type_name(d.dist_type));
  }
  auto need = [&](bool non_default, uint32_t bit, const std::string& key_and_value) {
    if (non_default && (d.given & bit) == 0) {
      fail(GDAP_ERR_PROTOCOL, "{}: {} is set but {} is not in given", label, key_and_value, bit_names(bit));
    }
  };
  need(d.padding[0] != 0 || d.padding[1] != 0, GDAP_KEY_PADDING,
       fmt::format("padding ({}, {})", d.padding[0], d.padding[1]));
  need(d.periodic != 0, GDAP_KEY_PERIODIC, fmt::format("periodic {}", d.periodic));
  need(d.block_size != 1, GDAP_KEY_BLOCK_SIZE, fmt::format("block_size {}", d.block_size));
  need(d.one_to_one != 0, GDAP_KEY_ONE_TO_ONE, fmt::format("one_to_one {}", d.one_to_one));
}

void check_common(const gdap_dim& d, const std::string& label) {
  if (d.reserved != 0) fail(GDAP_ERR_PROTOCOL, "{}: reserved ({}) must be 0", label, d.reserved);
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

// DAP 0.10 keeps 0 <= start <= stop <= size for every block dimension, periodic or not: a periodic
// dimension's wrap-around halo is the edge ranks' boundary padding, which size counts. gdap before
// this reading wrote the wrap as start = -padding[0]; the message says how to read such a section.
void validate_block(const gdap_dim& d, const std::string& label, int64_t extent) {
  if (d.padding[0] < 0 || d.padding[1] < 0) {
    fail(GDAP_ERR_PROTOCOL, "{}: padding ({}, {}) has a negative width", label, d.padding[0], d.padding[1]);
  }
  const char* periodic_hint =
      is_periodic(d) ? " (periodic too: the wrap-around halo is the edge ranks' boundary padding, counted in size; "
                       "a section that starts at -padding[0] or stops at size + padding[1] is read as size + "
                       "padding[0] + padding[1] elements starting at 0)"
                     : "";
  if (d.start < 0) fail(GDAP_ERR_PROTOCOL, "{}: start ({}) < 0{}", label, d.start, periodic_hint);
  if (d.stop < d.start) fail(GDAP_ERR_PROTOCOL, "{}: stop ({}) < start ({})", label, d.stop, d.start);
  if (d.stop > d.size) fail(GDAP_ERR_PROTOCOL, "{}: stop ({}) > size ({}){}", label, d.stop, d.size, periodic_hint);
  const int64_t held = d.stop - d.start;  // 0 <= start <= stop: no overflow
  // Compared without forming padding[0] + padding[1], which may overflow.
  if (d.padding[0] > held || d.padding[1] > held - d.padding[0]) {
    fail(GDAP_ERR_PROTOCOL, "{}: padding ({}, {}) is wider than stop - start ({})", label, d.padding[0], d.padding[1],
         held);
  }
  if (d.proc_grid_rank == 0 && d.start != 0) {
    fail(GDAP_ERR_PROTOCOL, "{}: start ({}) != 0, but grid rank 0 starts at index 0", label, d.start);
  }
  if (d.proc_grid_rank == d.proc_grid_size - 1 && d.stop != d.size) {
    fail(GDAP_ERR_PROTOCOL, "{}: stop ({}) != size ({}), but the last grid rank ({}) stops at size", label, d.stop,
         d.size, d.proc_grid_rank);
  }
  check_extent(label, "stop - start", held, extent);
}

void validate_cyclic(const gdap_dim& d, const std::string& label, int64_t extent) {
  const int64_t block_size = block_size_of(d);
  if (block_size < 1) fail(GDAP_ERR_PROTOCOL, "{}: block_size ({}) < 1", label, block_size);
  if (d.start < 0) fail(GDAP_ERR_PROTOCOL, "{}: start ({}) < 0", label, d.start);
  int64_t expected = 0;
  const bool fits = !__builtin_mul_overflow(d.proc_grid_rank, block_size, &expected);
  // A rank whose first block lies past the end holds nothing and may say so with start == size.
  const bool empty_at_size = d.start == d.size && (!fits || expected >= d.size);
  if (!empty_at_size && (!fits || d.start != expected)) {
    fail(GDAP_ERR_PROTOCOL, "{}: start ({}) != proc_grid_rank ({}) * block_size ({}){}", label, d.start,
         d.proc_grid_rank, block_size, fits ? "" : " (which overflows int64)");
  }
  check_extent(label, "owned count", owned_count(d), extent);
}

void validate_unstructured(const gdap_dim& d, const std::string& label, int64_t extent) {
  if (d.num_indices < 0) fail(GDAP_ERR_PROTOCOL, "{}: num_indices ({}) < 0", label, d.num_indices);
  if (d.num_indices > 0 && d.indices == nullptr) {
    fail(GDAP_ERR_PROTOCOL, "{}: indices is NULL but num_indices is {}", label, d.num_indices);
  }
  // Before the copy below: a count that disagrees with the buffer is refused without touching
  // (or allocating for) indices that may not be there.
  check_extent(label, "num_indices", d.num_indices, extent);
  // Sort a copy of (global, local) pairs: equal globals end up adjacent, in local order.
  std::vector<std::pair<int64_t, int64_t>> sorted;
  try {
    sorted.reserve(static_cast<size_t>(d.num_indices));
  } catch (const std::exception&) {  // bad_alloc, or length_error past max_size
    fail(GDAP_ERR_NO_MEMORY, "{}: no memory to check num_indices ({}) indices for uniqueness", label, d.num_indices);
  }
  for (int64_t i = 0; i < d.num_indices; ++i) sorted.emplace_back(d.indices[i], i);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first == sorted[i - 1].first) {
      fail(GDAP_ERR_PROTOCOL, "{}: indices holds {} twice (local positions {} and {}); indices must be unique",
           label, sorted[i].first, sorted[i - 1].second, sorted[i].second);
    }
  }
}

[[noreturn]] void fail_unresolved(const gdap_dim& dim) {
  if (dim.dist_type == GDAP_DIST_UNDISTRIBUTED) {
    fail(GDAP_ERR_PROTOCOL,
         "the empty dictionary {{}} has no counts of its own; resolve it from the buffer shape first "
         "(gdap_dim_set_undistributed)");
  }
  fail(GDAP_ERR_PROTOCOL, "dist_type {} is not 'b', 'c' or 'u'", dim.dist_type);
}

}  // namespace

gdap_dim read_dim(const gdap_dim* dims, int64_t i) {
  require(dims, "dims");
  // The caller's elements lie struct_size apart; of each, the fields this release knows and the
  // caller has are read (core/versioned.hpp).
  const uint32_t stride = dims[0].struct_size;
  const size_t known = struct_bytes<gdap_dim>(stride, "dims[0].struct_size", "GDAP_DIM_INIT or gdap_dim_init");
  int64_t offset = 0;
  if (i < 0 || __builtin_mul_overflow(i, static_cast<int64_t>(stride), &offset)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "dimension {} cannot be read: its offset {} * struct_size {} is out of range", i,
         i, stride);
  }
  const auto* element = reinterpret_cast<const unsigned char*>(dims) + offset;
  gdap_dim out = kInit;
  std::memcpy(&out, element, known);
  out.struct_size = sizeof(gdap_dim);
  return out;
}

std::string dim_label(const gdap_dim& dim, int64_t dim_index) {
  if (std::strcmp(type_name(dim.dist_type), "?") != 0) {
    return fmt::format("dimension {} ({})", dim_index, type_name(dim.dist_type));
  }
  return fmt::format("dimension {}", dim_index);
}

gdap_dim resolve_alias(const gdap_dim& dim, int64_t extent) {
  if (dim.dist_type != GDAP_DIST_UNDISTRIBUTED) return dim;
  if (extent < 0) {
    fail(GDAP_ERR_PROTOCOL, "the empty dictionary {{}} needs the buffer shape, but the extent is {}", extent);
  }
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
      if (const std::string key = first_set_field(dim); !key.empty()) {
        fail(GDAP_ERR_PROTOCOL, "{}: the empty dictionary has {} set; give dist_type 'b', 'c' or 'u' or leave every "
             "key at its GDAP_DIM_INIT value", label, key);
      }
      if (extent < 0) {
        fail(GDAP_ERR_PROTOCOL, "{}: the empty dictionary {{}} needs the buffer shape to be resolved: it stands "
             "for the buffer's whole extent, and no shape was given with the dictionaries (in JSON: {{\"dim_data\": "
             "[...], \"shape\": [...]}})", label);
      }
      validate_dim(resolve_alias(dim, extent), dim_index, extent);  // recurses once: the result is 'b'
      return;
    }
    case GDAP_DIST_BLOCK:
    case GDAP_DIST_CYCLIC:
    case GDAP_DIST_UNSTRUCTURED: break;
    default: {
      const bool printable = dim.dist_type >= 32 && dim.dist_type < 127;
      if (printable) {
        fail(GDAP_ERR_PROTOCOL, "{}: dist_type '{}' ({}) is not 'b', 'c' or 'u'{}", label,
             static_cast<char>(dim.dist_type), dim.dist_type, dim.dist_type == 'n' ? kNotN : "");
      }
      fail(GDAP_ERR_PROTOCOL, "{}: dist_type {} is not 'b', 'c' or 'u'", label, dim.dist_type);
    }
  }
  check_common(dim, label);
  if (dim.dist_type == GDAP_DIST_BLOCK) validate_block(dim, label, extent);
  if (dim.dist_type == GDAP_DIST_CYCLIC) validate_cyclic(dim, label, extent);
  if (dim.dist_type == GDAP_DIST_UNSTRUCTURED) validate_unstructured(dim, label, extent);
}

int64_t block_size_of(const gdap_dim& dim) { return (dim.given & GDAP_KEY_BLOCK_SIZE) != 0 ? dim.block_size : 1; }
bool is_periodic(const gdap_dim& dim) { return (dim.given & GDAP_KEY_PERIODIC) != 0 && dim.periodic != 0; }
bool is_one_to_one(const gdap_dim& dim) { return (dim.given & GDAP_KEY_ONE_TO_ONE) != 0 && dim.one_to_one != 0; }

int64_t comm_padding_lower(const gdap_dim& dim) {
  if (dim.dist_type != GDAP_DIST_BLOCK || (dim.given & GDAP_KEY_PADDING) == 0) return 0;
  return dim.proc_grid_rank > 0 ? dim.padding[0] : 0;
}

int64_t comm_padding_upper(const gdap_dim& dim) {
  if (dim.dist_type != GDAP_DIST_BLOCK || (dim.given & GDAP_KEY_PADDING) == 0) return 0;
  return dim.proc_grid_rank < dim.proc_grid_size - 1 ? dim.padding[1] : 0;
}

int64_t boundary_padding_lower(const gdap_dim& dim) {
  if (dim.dist_type != GDAP_DIST_BLOCK || (dim.given & GDAP_KEY_PADDING) == 0) return 0;
  return dim.proc_grid_rank == 0 ? dim.padding[0] : 0;
}

int64_t boundary_padding_upper(const gdap_dim& dim) {
  if (dim.dist_type != GDAP_DIST_BLOCK || (dim.given & GDAP_KEY_PADDING) == 0) return 0;
  return dim.proc_grid_rank == dim.proc_grid_size - 1 ? dim.padding[1] : 0;
}

gdap_dim common_keys(int32_t dist_type, int64_t size, int64_t grid_size, int64_t grid_rank) {
  gdap_dim d = GDAP_DIM_INIT;
  d.dist_type = dist_type;
  d.size = size;
  d.proc_grid_size = grid_size;
  d.proc_grid_rank = grid_rank;
  return d;
}

gdap_dim block_dim(int64_t size, int64_t grid_size, int64_t grid_rank, int64_t start, int64_t stop) {
  gdap_dim d = common_keys(GDAP_DIST_BLOCK, size, grid_size, grid_rank);
  d.start = start;
  d.stop = stop;
  return d;
}

gdap_dim unstructured_dim(int64_t size, int64_t grid_size, int64_t grid_rank, const int64_t* indices,
                          int64_t num_indices, int one_to_one) {
  gdap_dim d = common_keys(GDAP_DIST_UNSTRUCTURED, size, grid_size, grid_rank);
  d.indices = indices;
  d.num_indices = num_indices;
  if (one_to_one >= 0) {
    d.one_to_one = one_to_one != 0 ? 1 : 0;
    d.given |= GDAP_KEY_ONE_TO_ONE;
  }
  return d;
}

gdap_dim cyclic_dim(int64_t size, int64_t grid_size, int64_t grid_rank, int64_t start, int64_t block_size) {
  gdap_dim d = common_keys(GDAP_DIST_CYCLIC, size, grid_size, grid_rank);
  d.start = start;
  if (block_size != 0) {
    d.block_size = block_size;
    d.given |= GDAP_KEY_BLOCK_SIZE;
  }
  return d;
}

gdap_dim with_padding(gdap_dim d, int64_t lower, int64_t upper) {
  d.padding[0] = lower;
  d.padding[1] = upper;
  d.given |= GDAP_KEY_PADDING;
  return d;
}

gdap_dim with_periodic(gdap_dim d, bool periodic) {
  d.periodic = periodic ? 1 : 0;
  d.given |= GDAP_KEY_PERIODIC;
  return d;
}

int64_t cyclic_owned_count(int64_t size, int64_t grid_size, int64_t block_size, int64_t grid_rank) {
  if (size < 0 || grid_size < 1 || block_size < 1 || grid_rank < 0 || grid_rank >= grid_size) {
    fail(GDAP_ERR_INVALID_ARGUMENT,
         "cyclic owned count needs size >= 0, block_size >= 1 and 0 <= rank < grid size; got size {}, block_size {}, "
         "rank {}, grid size {}",
         size, block_size, grid_rank, grid_size);
  }
  const int64_t full_blocks = size / block_size;
  const int64_t remainder = size % block_size;
  const int64_t partial_owner = full_blocks % grid_size;  // the rank that would hold block number full_blocks
  const int64_t blocks = full_blocks / grid_size + (grid_rank < partial_owner ? 1 : 0);
  // blocks <= ceil(full_blocks / grid_size) and a rank holding an extra block holds no partial one,
  // so the result is at most size: neither product nor sum overflows.
  return blocks * block_size + (grid_rank == partial_owner ? remainder : 0);
}

int64_t owned_count(const gdap_dim& dim) {
  switch (dim.dist_type) {
    case GDAP_DIST_BLOCK: {
      const int64_t held = checked_sub(dim.stop, dim.start, "owned count stop - start");
      const int64_t less_lower = checked_sub(held, comm_padding_lower(dim), "owned count");
      return checked_sub(less_lower, comm_padding_upper(dim), "owned count");
    }
    case GDAP_DIST_CYCLIC:
      return cyclic_owned_count(dim.size, dim.proc_grid_size, block_size_of(dim), dim.proc_grid_rank);
    case GDAP_DIST_UNSTRUCTURED: return dim.num_indices;
    default: fail_unresolved(dim);
  }
}

int64_t local_extent(const gdap_dim& dim) {
  switch (dim.dist_type) {
    case GDAP_DIST_BLOCK: return checked_sub(dim.stop, dim.start, "local extent stop - start");
    case GDAP_DIST_CYCLIC: return owned_count(dim);
    case GDAP_DIST_UNSTRUCTURED: return dim.num_indices;
    default: fail_unresolved(dim);
  }
}

}  // namespace gdap
