// One side (source or destination) of a move along one dimension of a map: the owned runs of
// each grid coordinate, and which coordinates own the pieces of a global range. These two walks
// are all the redistribution planner needs (and what the reductions and Zarr I/O ask of a map);
// both cost O(runs or pieces visited), never O(elements) for 'b'/'c' (for 'u' a piece is one
// index, since an unstructured dimension has no closed form).
//
// On a source side of an unstructured dimension without one_to_one, each global index is sent by
// one holder only, the lowest grid coordinate that holds it ("primary"): the lowest coordinate
// in every dimension gives the lowest rank, since C-order rank grows with each coordinate. On a
// destination side every replica receives.
#pragma once

#include "maps/axis_map.hpp"

#include <gdap/gdap.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gdap {

class AxisSide {
 public:
  // `axis` is borrowed for the constructor only. `source` selects the primary-only rule above.
  AxisSide(const AxisMap& axis, bool source);

  int32_t dist_type() const { return type_; }
  int64_t grid_size() const { return grid_size_; }
  int64_t size() const { return size_; }
  // Buffer extent of a coordinate along this dimension, padding included.
  int64_t extent(int64_t coord) const { return extent_[static_cast<size_t>(coord)]; }
  // Indices a coordinate owns (for 'u' every index it holds, replicas included).
  int64_t owned(int64_t coord) const { return owned_[static_cast<size_t>(coord)]; }
  // The most pieces one global index yields in for_each_piece: 1, except on a destination side of
  // an unstructured dimension, where every replica of an index is a piece of its own.
  int64_t pieces_per_index() const { return pieces_per_index_; }

  // How many runs for_each_run calls f with for `coord`, and for all coordinates together: what
  // listing them costs, known without listing them (O(1); 'u': its indices).
  int64_t runs(int64_t coord) const;
  int64_t total_runs() const;
  // Calls f(global_start, length, local_start) for each owned run of `coord`, in increasing
  // global order; runs are maximal for 'b' and 'u', one per block held for 'c' (merged later).
  template <typename F>
  void for_each_run(int64_t coord, F&& f) const;

  // Calls f(global_start, length, coord, local_start) for each piece of [lo, hi) owned by one
  // coordinate, in increasing global order (replicas of one index: ascending coordinate).
  template <typename F>
  void for_each_piece(int64_t lo, int64_t hi, F&& f) const;

 private:
  struct Entry {  // 'u': one held index
    int64_t global;
    int64_t coord;
    int64_t local;
    bool primary;  // the lowest coordinate holding `global`
  };

  int32_t type_;
  int64_t grid_size_;
  int64_t size_;
  int64_t block_size_ = 1;        // 'c'
  bool primary_only_;
  int64_t pieces_per_index_ = 1;
  std::vector<int64_t> extent_;
  std::vector<int64_t> owned_;
  std::vector<int64_t> start_;        // 'b': the dictionary's start (local index 0) per coordinate
  std::vector<int64_t> owned_start_;  // 'b': first owned index per coordinate, then size
  std::vector<Entry> table_;          // 'u': sorted by (global, coord)
  std::vector<int64_t> coord_begin_;  // 'u': coordinate c's entries are by_coord_[coord_begin_[c] ..)
  std::vector<int64_t> by_coord_;     // 'u': indices into table_, grouped by coordinate, global order
};

inline int64_t AxisSide::runs(int64_t coord) const {
  const int64_t owned = owned_[static_cast<size_t>(coord)];
  if (type_ == GDAP_DIST_BLOCK) return owned > 0 ? 1 : 0;
  if (type_ == GDAP_DIST_CYCLIC) return owned / block_size_ + (owned % block_size_ != 0 ? 1 : 0);
  return owned;
}

inline int64_t AxisSide::total_runs() const {
  if (type_ == GDAP_DIST_BLOCK) return grid_size_;
  if (type_ == GDAP_DIST_CYCLIC) return size_ / block_size_ + (size_ % block_size_ != 0 ? 1 : 0);
  return static_cast<int64_t>(table_.size());
}

template <typename F>
void AxisSide::for_each_run(int64_t coord, F&& f) const {
  const auto c = static_cast<size_t>(coord);
  switch (type_) {
    case GDAP_DIST_BLOCK:
      if (owned_[c] > 0) f(owned_start_[c], owned_[c], owned_start_[c] - start_[c]);
      return;
    case GDAP_DIST_CYCLIC: {
      const int64_t blocks = (owned_[c] + block_size_ - 1) / block_size_;
      for (int64_t k = 0; k < blocks; ++k) {
        const int64_t global = (k * grid_size_ + coord) * block_size_;
        f(global, std::min(block_size_, size_ - global), k * block_size_);
      }
      return;
    }
    default: {
      // Maximal runs of primary entries whose global and local indices both step by one.
      int64_t g0 = 0, l0 = 0, len = 0;
      for (int64_t k = coord_begin_[c]; k < coord_begin_[c + 1]; ++k) {
        const Entry& e = table_[static_cast<size_t>(by_coord_[static_cast<size_t>(k)])];
        if (primary_only_ && !e.primary) continue;
        if (len > 0 && e.global == g0 + len && e.local == l0 + len) {
          ++len;
          continue;
        }
        if (len > 0) f(g0, len, l0);
        g0 = e.global;
        l0 = e.local;
        len = 1;
      }
      if (len > 0) f(g0, len, l0);
      return;
    }
  }
}

template <typename F>
void AxisSide::for_each_piece(int64_t lo, int64_t hi, F&& f) const {
  switch (type_) {
    case GDAP_DIST_BLOCK: {
      lo = std::max<int64_t>(lo, 0);
      hi = std::min(hi, size_);
      if (lo >= hi) return;
      auto c = static_cast<size_t>(std::upper_bound(owned_start_.begin(), owned_start_.end(), lo) -
                                   owned_start_.begin()) - 1;
      for (; c < static_cast<size_t>(grid_size_) && owned_start_[c] < hi; ++c) {
        const int64_t g0 = std::max(lo, owned_start_[c]);
        const int64_t g1 = std::min(hi, owned_start_[c + 1]);
        if (g1 > g0) f(g0, g1 - g0, static_cast<int64_t>(c), g0 - start_[c]);
      }
      return;
    }
    case GDAP_DIST_CYCLIC: {
      lo = std::max<int64_t>(lo, 0);
      hi = std::min(hi, size_);
      if (lo >= hi) return;
      for (int64_t b = lo / block_size_; b <= (hi - 1) / block_size_; ++b) {
        const int64_t first = b * block_size_;
        const int64_t g0 = std::max(lo, first);
        const int64_t g1 = std::min({hi, first + block_size_, size_});
        f(g0, g1 - g0, b % grid_size_, b / grid_size_ * block_size_ + (g0 - first));
      }
      return;
    }
    default: {
      auto it = std::lower_bound(table_.begin(), table_.end(), lo,
                                 [](const Entry& e, int64_t g) { return e.global < g; });
      for (; it != table_.end() && it->global < hi; ++it) {
        if (primary_only_ && !it->primary) continue;
        f(it->global, int64_t{1}, it->coord, it->local);
      }
      return;
    }
  }
}

}  // namespace gdap
