// One axis of a global map: the dictionary of every grid coordinate along it, checked against
// each other (the protocol's cross-process rules), with owner look-ups built once.
#pragma once

#include "protocol/dim_data.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gdap {

struct UnstructuredEntry {
  int64_t global;
  int64_t grid_rank;
  int64_t local;
  bool operator<(const UnstructuredEntry& o) const {
    return global != o.global ? global < o.global : grid_rank < o.grid_rank;
  }
};

class AxisMap {
 public:
  // `reps[g]` is grid coordinate g's dictionary (already checked per process and for sameness
  // along the axis). `who(g)` names a rank with that coordinate in messages. Throws
  // GDAP_ERR_PROTOCOL when the coordinates do not fit together.
  AxisMap(int64_t axis, DimData reps, const std::function<std::string(int64_t)>& who);

  int64_t grid_size() const { return reps_.ndim(); }
  int64_t size() const { return reps_[0].size; }
  int32_t dist_type() const { return reps_[0].dist_type; }
  const gdap_dim& dim(int64_t grid_rank) const { return reps_[grid_rank]; }

  // Owning grid coordinate and local index of global index g; false if nobody owns it.
  // For replicated unstructured indices the lowest coordinate.
  bool owner(int64_t g, int64_t& grid_rank, int64_t& local) const;
  // Every owning coordinate (replicas of unstructured indices), ascending.
  std::vector<int64_t> owners(int64_t g) const;

  // Flat tables, as the batched GPU look-up reads them.
  int64_t even_width() const { return even_width_; }
  const std::vector<int64_t>& owned_starts() const { return owned_start_; }
  const std::vector<UnstructuredEntry>& table() const { return table_; }

 private:
  void check_block(const std::function<std::string(int64_t)>& who);
  void check_cyclic(const std::function<std::string(int64_t)>& who);
  void check_unstructured(const std::function<std::string(int64_t)>& who);

  int64_t axis_;
  DimData reps_;
  std::vector<int64_t> owned_start_;  // 'b': P + 1 entries, owned_start_[P] == size
  int64_t even_width_ = 0;            // 'b': > 0 when owned_start_[g] == min(g * w, size)
  std::vector<UnstructuredEntry> table_;  // 'u': sorted
};

}  // namespace gdap
