// Cross-process rules along one axis, and owner look-ups (see axis_map.hpp).
#include "maps/axis_map.hpp"

#include "core/error.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace gdap {

namespace {

// Sorts `v`, made of sorted runs ending at bounds[1..] (bounds[0] is 0), by merging neighbouring
// runs in rounds: O(n log runs).
template <typename T>
void merge_runs(std::vector<T>& v, std::vector<std::ptrdiff_t> bounds) {
  while (bounds.size() > 2) {
    std::vector<std::ptrdiff_t> next{0};
    for (size_t k = 2; k < bounds.size(); k += 2) {
      std::inplace_merge(v.begin() + bounds[k - 2], v.begin() + bounds[k - 1], v.begin() + bounds[k]);
      next.push_back(bounds[k]);
    }
    if (bounds.size() % 2 == 0) next.push_back(bounds.back());  // an odd run out waits a round
    bounds = std::move(next);
  }
}

}  // namespace

AxisMap::AxisMap(int64_t axis, DimData reps, const std::function<std::string(int64_t)>& who)
    : axis_(axis), reps_(std::move(reps)) {
  switch (dist_type()) {
    case GDAP_DIST_BLOCK: check_block(who); break;
    case GDAP_DIST_CYCLIC: check_cyclic(who); break;
    default: check_unstructured(who); break;
  }
}

void AxisMap::check_block(const std::function<std::string(int64_t)>& who) {
  const int64_t P = grid_size();
  const std::string label = dim_label(reps_[0], axis_);
  const uint32_t padding_given = reps_[0].given & GDAP_KEY_PADDING;
  owned_start_.resize(static_cast<size_t>(P) + 1);
  for (int64_t g = 0; g < P; ++g) {
    const gdap_dim& d = reps_[g];
    if ((d.given & GDAP_KEY_PADDING) != padding_given) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: 'padding' is given here but not on grid rank 0, or the reverse; give it on all grid ranks of a "
           "dimension or on none", who(g), label);
    }
    if (d.periodic != reps_[0].periodic) {
      fail(GDAP_ERR_PROTOCOL, "{}, {}: periodic ({}) differs from grid rank 0's ({})", who(g), label, d.periodic,
           reps_[0].periodic);
    }
    const int64_t starts = d.start + comm_padding_lower(d);
    owned_start_[static_cast<size_t>(g)] = starts;
    // Owned ranges tile [0, size): each starts where the previous one ends.
    const int64_t expected = g == 0 ? 0 : reps_[g - 1].stop - comm_padding_upper(reps_[g - 1]);
    if (starts != expected) {
      if (g == 0) {
        fail(GDAP_ERR_PROTOCOL, "{}, {}: owned range of grid rank 0 starts at {}, not 0", who(g), label, starts);
      }
      fail(GDAP_ERR_PROTOCOL, "{}, {}: owned range starts at {} but grid rank {} ends at {} ({})", who(g), label,
           starts, g - 1, expected, starts > expected ? "gap" : "overlap");
    }
  }
  const gdap_dim& last = reps_[P - 1];
  if (last.stop - comm_padding_upper(last) != size()) {
    fail(GDAP_ERR_PROTOCOL, "{}, {}: owned range of the last grid rank ends at {}, not at size ({})", who(P - 1), label,
         last.stop - comm_padding_upper(last), size());
  }
  owned_start_[static_cast<size_t>(P)] = size();
  // Communication padding mirrors the neighbour's and fits in what the neighbour owns.
  const int64_t pairs = reps_[0].periodic ? P : P - 1;
  for (int64_t g = 0; g < pairs; ++g) {
    const int64_t h = (g + 1) % P;
    const gdap_dim& left = reps_[g];
    const gdap_dim& right = reps_[h];
    if (left.padding[1] != right.padding[0]) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: communication padding[0] ({}) != padding[1] ({}) of its lower neighbour, grid rank {}", who(h),
           label, right.padding[0], left.padding[1], g);
    }
    if (right.padding[0] > owned_count(left)) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: communication padding[0] ({}) is wider than what its lower neighbour, grid rank {}, owns ({})",
           who(h), label, right.padding[0], g, owned_count(left));
    }
    if (left.padding[1] > owned_count(right)) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: communication padding[1] ({}) is wider than what its upper neighbour, grid rank {}, owns ({})",
           who(g), label, left.padding[1], h, owned_count(right));
    }
  }
  // O(1) owner look-up when the owned counts are even: owned_start_[g] == min(g * w, size),
  // which allows a shorter or empty tail.
  const int64_t w = owned_count(reps_[0]);
  bool even = w > 0;
  for (int64_t g = 0; even && g <= P; ++g) {
    int64_t expected = 0;
    if (__builtin_mul_overflow(g, w, &expected) || expected > size()) expected = size();
    even = owned_start_[static_cast<size_t>(g)] == expected;
  }
  even_width_ = even ? w : 0;
}

void AxisMap::check_cyclic(const std::function<std::string(int64_t)>& who) {
  for (int64_t g = 1; g < grid_size(); ++g) {
    if (reps_[g].block_size != reps_[0].block_size) {
      fail(GDAP_ERR_PROTOCOL, "{}, {}: block_size ({}) differs from grid rank 0's ({})", who(g),
           dim_label(reps_[g], axis_), reps_[g].block_size, reps_[0].block_size);
    }
  }
}

void AxisMap::check_unstructured(const std::function<std::string(int64_t)>& who) {
  const std::string label = dim_label(reps_[0], axis_);
  std::vector<std::ptrdiff_t> bounds{0};  // where each rank's entries end
  for (int64_t g = 0; g < grid_size(); ++g) {
    const gdap_dim& d = reps_[g];
    if (d.one_to_one != reps_[0].one_to_one) {
      fail(GDAP_ERR_PROTOCOL, "{}, {}: one_to_one ({}) differs from grid rank 0's ({})", who(g), label,
           d.one_to_one, reps_[0].one_to_one);
    }
    const auto begin = static_cast<std::ptrdiff_t>(table_.size());
    for (int64_t l = 0; l < d.num_indices; ++l) table_.push_back({d.indices[l], g, l});
    // Each rank's entries sorted on their own (indices are often listed in order already), then
    // merged: O(n log P) instead of a sort of the whole table.
    if (!std::is_sorted(table_.begin() + begin, table_.end())) std::sort(table_.begin() + begin, table_.end());
    bounds.push_back(static_cast<std::ptrdiff_t>(table_.size()));
  }
  merge_runs(table_, std::move(bounds));
  int64_t distinct = 0;
  for (size_t k = 0; k < table_.size(); ++k) {
    const bool repeat = k > 0 && table_[k].global == table_[k - 1].global;
    if (repeat && reps_[0].one_to_one) {
      fail(GDAP_ERR_PROTOCOL, "{}, {}: global index {} is also held by grid rank {}, but one_to_one is true",
           who(table_[k].grid_rank), label, table_[k].global, table_[k - 1].grid_rank);
    }
    distinct += repeat ? 0 : 1;
  }
  if (distinct != size()) {
    fail(GDAP_ERR_PROTOCOL, "{}, {}: the ranks hold {} distinct indices but size is {}", who(0), label, distinct,
         size());
  }
}

bool AxisMap::owner(int64_t g, int64_t& grid_rank, int64_t& local) const {
  switch (dist_type()) {
    case GDAP_DIST_BLOCK: {
      if (g < 0 || g >= size()) return false;
      if (even_width_ > 0) {
        grid_rank = g / even_width_;
      } else {
        auto it = std::upper_bound(owned_start_.begin(), owned_start_.end(), g);
        grid_rank = (it - owned_start_.begin()) - 1;
      }
      local = g - reps_[grid_rank].start;
      return true;
    }
    case GDAP_DIST_CYCLIC: {
      if (g < 0 || g >= size()) return false;
      const int64_t bs = reps_[0].block_size;
      const int64_t block = g / bs;
      grid_rank = block % grid_size();
      local = block / grid_size() * bs + g % bs;
      return true;
    }
    default: {
      auto it = std::lower_bound(table_.begin(), table_.end(), UnstructuredEntry{g, INT64_MIN, 0});
      if (it == table_.end() || it->global != g) return false;
      grid_rank = it->grid_rank;
      local = it->local;
      return true;
    }
  }
}

std::vector<int64_t> AxisMap::owners(int64_t g) const {
  std::vector<int64_t> out;
  if (dist_type() != GDAP_DIST_UNSTRUCTURED) {
    int64_t grid_rank = 0, local = 0;
    if (owner(g, grid_rank, local)) out.push_back(grid_rank);
    return out;
  }
  auto it = std::lower_bound(table_.begin(), table_.end(), UnstructuredEntry{g, INT64_MIN, 0});
  for (; it != table_.end() && it->global == g; ++it) out.push_back(it->grid_rank);
  return out;
}

}  // namespace gdap
