// gdap_map: the global view of a distribution (every rank's dictionaries), checked collectively,
// with owner and run look-ups. One AxisMap per dimension holds one dictionary per grid coordinate,
// so the map's memory is O(sum of proc_grid_size + unstructured indices), not O(nranks * ndim).
#pragma once

#include "core/handle.hpp"
#include "maps/axis_map.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace gdap {
struct DeviceTables;  // owner_batch.hpp: the map's tables on one CUDA device
void release_device_tables(DeviceTables* tables) noexcept;
}  // namespace gdap

struct gdap_map : gdap::Tagged<gdap_map> {
  // Reads nranks * ndim dictionaries (rank-major, stride dims[0].struct_size) and checks every
  // per-process and cross-process rule; errors name the rank.
  gdap_map(int64_t nranks, int64_t ndim, const gdap_dim* dims);
  ~gdap_map();
  gdap_map(const gdap_map&) = delete;
  gdap_map& operator=(const gdap_map&) = delete;

  int64_t nranks;
  std::vector<int64_t> grid_shape;
  std::vector<int64_t> global_shape;
  std::vector<int64_t> grid_stride;  // ranks between neighbours along each axis (C order)
  std::vector<gdap::AxisMap> axes;
  // Per axis, (rank, dictionary) of the ranks whose dictionary says the same as their coordinate's
  // (kept once in `axes`) but in other words: other boundary padding, or optional keys given at
  // their defaults. Sorted by rank; dim() returns these.
  std::vector<std::vector<std::pair<int64_t, gdap_dim>>> variants;

  int64_t ndim() const { return static_cast<int64_t>(axes.size()); }
  // Rank `rank`'s grid coordinate along `axis` (both range-checked by the caller).
  int64_t coord(int64_t rank, int64_t axis) const {
    const auto i = static_cast<size_t>(axis);
    return rank / grid_stride[i] % grid_shape[i];
  }
  // Rank `rank`'s own dictionary for `axis`; throws GDAP_ERR_OUT_OF_RANGE for a bad rank or axis.
  const gdap_dim& dim(int64_t rank, int64_t axis) const;

  // Owner of a global index without throwing: false if no rank owns it. `local` may be NULL.
  bool try_owner(const int64_t* global, int64_t& rank, int64_t* local) const;

  // Tables on CUDA devices, uploaded on first use per device (owner_batch.cu). A cache: filling
  // it does not change what the map describes, hence mutable, guarded by the mutex.
  mutable std::mutex device_mutex;
  mutable std::vector<std::pair<int, gdap::DeviceTables*>> device_tables;
};

namespace gdap {

// A 64-bit digest of what a map describes (every rank's dictionaries, unstructured indices
// included): equal maps made on different ranks digest alike, so ranks can compare distributions
// by exchanging 8 bytes. O(nranks * ndim + indices).
uint64_t digest(const gdap_map& map);

}  // namespace gdap
