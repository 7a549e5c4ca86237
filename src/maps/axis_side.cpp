// Building one side of one dimension (see axis_side.hpp): O(grid size) for 'b' and 'c', one
// counting sort of the map's already sorted table for 'u'.
#include "maps/axis_side.hpp"

#include "protocol/dim.hpp"

namespace gdap {

AxisSide::AxisSide(const AxisMap& axis, bool source)
    : type_(axis.dist_type()), grid_size_(axis.grid_size()), size_(axis.size()), primary_only_(source) {
  const auto P = static_cast<size_t>(grid_size_);
  extent_.resize(P);
  owned_.resize(P);
  for (size_t c = 0; c < P; ++c) {
    const gdap_dim& d = axis.dim(static_cast<int64_t>(c));
    extent_[c] = local_extent(d);
    owned_[c] = owned_count(d);
  }
  switch (type_) {
    case GDAP_DIST_BLOCK:
      owned_start_ = axis.owned_starts();  // P + 1 entries, the last one size
      start_.resize(P);
      for (size_t c = 0; c < P; ++c) start_[c] = axis.dim(static_cast<int64_t>(c)).start;
      return;
    case GDAP_DIST_CYCLIC: block_size_ = block_size_of(axis.dim(0)); return;
    default: break;
  }
  // 'u': the map's table is sorted by (global, grid rank), so the first entry of each global
  // index is its lowest holder; a stable counting sort by coordinate keeps global order per coordinate.
  const auto& table = axis.table();
  table_.reserve(table.size());
  coord_begin_.assign(P + 1, 0);
  int64_t holders = 0;  // of the current global index
  for (size_t k = 0; k < table.size(); ++k) {
    const bool primary = k == 0 || table[k].global != table[k - 1].global;
    table_.push_back({table[k].global, table[k].grid_rank, table[k].local, primary});
    ++coord_begin_[static_cast<size_t>(table[k].grid_rank) + 1];
    holders = primary ? 1 : holders + 1;
    if (!primary_only_) pieces_per_index_ = std::max(pieces_per_index_, holders);
  }
  for (size_t c = 0; c < P; ++c) coord_begin_[c + 1] += coord_begin_[c];
  std::vector<int64_t> next(coord_begin_.begin(), coord_begin_.end() - 1);
  by_coord_.resize(table_.size());
  for (size_t k = 0; k < table_.size(); ++k) {
    by_coord_[static_cast<size_t>(next[static_cast<size_t>(table_[k].coord)]++)] = static_cast<int64_t>(k);
  }
}

}  // namespace gdap
