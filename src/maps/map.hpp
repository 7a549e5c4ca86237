// gdap_map: the global view of a distribution (every rank's dictionaries), checked collectively,
// with owner and run look-ups. One AxisMap per dimension; ranks are C-order grid coordinates.
#pragma once

#include "maps/axis_map.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gdap {
struct DeviceTables;  // owner_batch.hpp: the map's tables on one CUDA device
void release_device_tables(DeviceTables* tables) noexcept;
}  // namespace gdap

struct gdap_map {
  // Reads nranks * ndim dictionaries (rank-major, stride dims[0].struct_size) and checks every
  // per-process and cross-process rule; errors name the rank.
  gdap_map(int64_t nranks, int64_t ndim, const gdap_dim* dims);
  ~gdap_map();
  gdap_map(const gdap_map&) = delete;
  gdap_map& operator=(const gdap_map&) = delete;

  int64_t nranks;
  std::vector<int64_t> grid_shape;
  std::vector<int64_t> global_shape;
  std::vector<gdap::AxisMap> axes;

  int64_t ndim() const { return static_cast<int64_t>(axes.size()); }
  std::vector<int64_t> coords(int64_t rank) const;
  int64_t rank_of(const std::vector<int64_t>& coords) const;
  const gdap_dim& dim(int64_t rank, int64_t axis) const;

  // Owner of a global index without throwing: false if no rank owns it.
  bool try_owner(const int64_t* global, int64_t& rank, int64_t* local) const;

  // Tables on a CUDA device, uploaded once per device (owner_batch.cu).
  std::mutex device_mutex;
  std::vector<std::pair<int, gdap::DeviceTables*>> device_tables;
};
