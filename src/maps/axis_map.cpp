// Cross-process rules along one axis, and owner look-ups (see axis_map.hpp).
#include "maps/axis_map.hpp"

#include "core/checked.hpp"
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

namespace {

// A padding entry for a message. Without the key it is the default (0, 0), which validate_dim
// made sure the fields hold.
std::string padding_text(const gdap_dim& d, int side) {
  if ((d.given & GDAP_KEY_PADDING) == 0) return "0, 'padding' not given";
  return std::to_string(d.padding[side]);
}

}  // namespace

void AxisMap::check_block(const std::function<std::string(int64_t)>& who) {
  const int64_t P = grid_size();
  const std::string label = dim_label(reps_[0], axis_);
  owned_start_.resize(static_cast<size_t>(P) + 1);
  for (int64_t g = 0; g < P; ++g) {
    const gdap_dim& d = reps_[g];
    if (is_periodic(d) != is_periodic(reps_[0])) {
      fail(GDAP_ERR_PROTOCOL, "{}, {}: periodic ({}) differs from grid rank 0's ({})", who(g), label,
           is_periodic(d) ? "true" : "false", is_periodic(reps_[0]) ? "true" : "false");
    }
    // Per process, grid rank 0 starts at 0 and the last grid rank stops at size (validate_dim).
    const int64_t starts = d.start + comm_padding_lower(d);
    owned_start_[static_cast<size_t>(g)] = starts;
    if (g == 0) continue;
    // Owned ranges tile [0, size): each starts where the previous one ends.
    const gdap_dim& prev = reps_[g - 1];
    const int64_t expected = prev.stop - comm_padding_upper(prev);
    if (starts != expected) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: owned range starts at {} (start {} + communication padding[0] {}) but grid rank {}'s ends at {} "
           "(stop {} - communication padding[1] {}): {}, [{}, {}) {}",
           who(g), label, starts, d.start, comm_padding_lower(d), g - 1, expected, prev.stop,
           comm_padding_upper(prev), starts > expected ? "a gap" : "an overlap", std::min(starts, expected),
           std::max(starts, expected), starts > expected ? "owned by no rank" : "owned twice");
    }
  }
  owned_start_[static_cast<size_t>(P)] = size();
  // Communication padding mirrors the neighbour's and fits in what the neighbour owns. Only
  // neighbours inside the grid: the edge ranks' outer padding is boundary padding, periodic or not.
  for (int64_t g = 0; g + 1 < P; ++g) {
    const gdap_dim& left = reps_[g];
    const gdap_dim& right = reps_[g + 1];
    if (left.padding[1] != right.padding[0]) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: communication padding[0] ({}) != padding[1] ({}) of its lower neighbour, grid rank {}", who(g + 1),
           label, padding_text(right, 0), padding_text(left, 1), g);
    }
    if (right.padding[0] > owned_count(left)) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: communication padding[0] ({}) is wider than what its lower neighbour, grid rank {}, owns ({})",
           who(g + 1), label, right.padding[0], g, owned_count(left));
    }
    if (left.padding[1] > owned_count(right)) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: communication padding[1] ({}) is wider than what its upper neighbour, grid rank {}, owns ({})",
           who(g), label, left.padding[1], g + 1, owned_count(right));
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
  const bool one_to_one = is_one_to_one(reps_[0]);
  std::vector<std::ptrdiff_t> bounds{0};  // where each rank's entries end
  // The table at its final size at once: grown by doubling it would take up to twice its bytes
  // (three times while moving), more than the layouts' memory bound counts.
  int64_t entries = 0;
  for (int64_t g = 0; g < grid_size(); ++g) entries = checked_add(entries, reps_[g].num_indices, "the indices held");
  table_.reserve(static_cast<size_t>(entries));
  for (int64_t g = 0; g < grid_size(); ++g) {
    const gdap_dim& d = reps_[g];
    if (is_one_to_one(d) != one_to_one) {
      fail(GDAP_ERR_PROTOCOL, "{}, {}: one_to_one ({}) differs from grid rank 0's ({})", who(g), label,
           is_one_to_one(d) ? "true" : "false", one_to_one ? "true" : "false");
    }
    const auto begin = static_cast<std::ptrdiff_t>(table_.size());
    for (int64_t l = 0; l < d.num_indices; ++l) table_.push_back({d.indices[l], g, l});
    // Each rank's entries sorted on their own (indices are often listed in order already), then
    // merged: O(n log P) instead of a sort of the whole table.
    if (!std::is_sorted(table_.begin() + begin, table_.end())) std::sort(table_.begin() + begin, table_.end());
    bounds.push_back(static_cast<std::ptrdiff_t>(table_.size()));
  }
  merge_runs(table_, std::move(bounds));
  // A global index names an element of the array as if it were not distributed: one of [0, size).
  // A process may list other integers (the text: "they can be negative"), but they name no
  // element, and with one_to_one every index of [0, size) must be held exactly once.
  // The table is sorted: its first and last entries are the lowest and highest index.
  for (size_t k : {size_t{0}, table_.size() - 1}) {
    if (table_.empty()) break;
    const UnstructuredEntry& e = table_[k];
    if (e.global < 0 || e.global >= size()) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: indices[{}] ({}) is outside [0, size ({})): a global index names one of the dimension's size "
           "elements, so every index of a distribution lies in [0, size){}",
           who(e.grid_rank), label, e.local, e.global, size(),
           one_to_one ? " and, with one_to_one, is held exactly once" : "");
    }
  }
  int64_t next = 0;  // the smallest index not yet seen: indices are in [0, size), so a gap is a missing one
  for (size_t k = 0; k < table_.size(); ++k) {
    const bool repeat = k > 0 && table_[k].global == table_[k - 1].global;
    if (repeat && one_to_one) {
      fail(GDAP_ERR_PROTOCOL,
           "{}, {}: indices[{}] ({}) is also held by grid rank {}, but one_to_one is true (each index on exactly one "
           "process)",
           who(table_[k].grid_rank), label, table_[k].local, table_[k].global, table_[k - 1].grid_rank);
    }
    if (repeat) continue;
    if (table_[k].global != next) break;
    ++next;
  }
  if (next != size()) {
    fail(GDAP_ERR_PROTOCOL, "{}: global index {} of [0, size ({})) is held by no rank's indices{}", label, next, size(),
         one_to_one ? " (one_to_one: each is held exactly once)" : "");
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
