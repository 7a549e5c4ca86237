// Tables and text pictures of a distribution (see report.hpp).
#include "cli/report.hpp"

#include "cli/input.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gdap::cli {
namespace {

char rank_symbol(int64_t rank) {
  static constexpr char symbols[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  if (rank == kMixed) return '*';
  if (rank < 0) return '.';
  return rank < 62 ? symbols[rank] : '#';
}

// ceil(size / max_cells), at least 1, without overflowing near INT64_MAX.
int64_t step_for(int64_t size, int64_t max_cells) {
  return std::max<int64_t>(1, size / max_cells + (size % max_cells != 0 ? 1 : 0));
}

int64_t cells_for(int64_t size, int64_t step) { return size / step + (size % step != 0 ? 1 : 0); }

}  // namespace

std::string tuple(const std::vector<int64_t>& values, const char* separator) {
  const bool python = std::string(separator) == ", ";
  if (values.empty()) return "()";
  std::string out = python ? "(" : "";
  for (size_t k = 0; k < values.size(); ++k) out += (k ? separator : "") + std::to_string(values[k]);
  if (python && values.size() == 1) out += ",";
  return python ? out + ")" : out;
}

MapShape map_shape(const gdap_map* map) {
  MapShape s;
  int64_t ndim = 0;
  check(gdap_map_ndim(&ndim, map));
  check(gdap_map_nranks(&s.nranks, map));
  s.global.resize(static_cast<size_t>(ndim));
  s.grid.resize(static_cast<size_t>(ndim));
  check(gdap_map_global_shape(s.global.data(), map));
  check(gdap_map_grid_shape(s.grid.data(), map));
  return s;
}

std::vector<RankSummary> summarize(const gdap_map* map) {
  const MapShape shape = map_shape(map);
  const auto ndim = static_cast<int64_t>(shape.global.size());
  std::vector<RankSummary> out;
  for (int64_t r = 0; r < shape.nranks; ++r) {
    RankSummary s;
    s.rank = r;
    s.grid.resize(static_cast<size_t>(ndim));
    s.local_shape.resize(static_cast<size_t>(ndim));
    s.owned_shape.resize(static_cast<size_t>(ndim));
    check(gdap_grid_rank_to_coords(s.grid.data(), ndim, shape.grid.data(), r));
    check(gdap_map_local_shape(s.local_shape.data(), map, r));
    check(gdap_map_owned_shape(s.owned_shape.data(), map, r));
    check(gdap_map_owned_count(&s.owned, map, r));
    out.push_back(std::move(s));
  }
  return out;
}

std::string table(const std::vector<RankSummary>& ranks) {
  std::string out = fmt::format("{:>5}  {:<12}  {:<16}  {:>12}  {}\n", "rank", "grid", "owned shape", "owned",
                                "local shape");
  for (const auto& s : ranks) {
    out += fmt::format("{:>5}  {:<12}  {:<16}  {:>12}  {}\n", s.rank, tuple(s.grid), tuple(s.owned_shape),
                       s.owned, tuple(s.local_shape));
  }
  return out;
}

nlohmann::json to_json(const std::vector<RankSummary>& ranks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : ranks) {
    out.push_back({{"rank", s.rank},
                   {"grid", s.grid},
                   {"owned_shape", s.owned_shape},
                   {"owned", s.owned},
                   {"local_shape", s.local_shape}});
  }
  return out;
}

// The owner of `index` along axis `dim` (index 0 along the other), -1 where nobody owns it.
int64_t owner_along(const gdap_map* map, size_t dim, int64_t index) {
  int64_t global[2] = {0, 0};
  global[dim] = index;
  int64_t rank = -1;
  if (gdap_map_owner(&rank, nullptr, map, global) != GDAP_SUCCESS) rank = -1;
  return rank;
}

// Whether cells of `step` indices along axis `dim` (of `size`) hold more than one owner, per cell.
// A map is a product of one distribution per axis, so a 2-d cell is mixed when either of its axes
// is. Checked: every index of a cell up to 2 * kExactCells long; of a longer one the first
// kExactCells one by one, then kExactCells spread evenly over the whole cell (a sample).
std::vector<bool> mixed_along(const gdap_map* map, size_t dim, int64_t size, int64_t step, int64_t cells) {
  constexpr int64_t kExactCells = 1024;
  std::vector<bool> mixed(static_cast<size_t>(cells), false);
  for (int64_t k = 0; k < cells; ++k) {
    const int64_t begin = k * step, end = std::min(size, begin + step), length = end - begin;
    const int64_t first = owner_along(map, dim, begin);
    const auto differs = [&](int64_t index) { return owner_along(map, dim, index) != first; };
    // Cells up to 2 * kExactCells long: every index. Longer: the first kExactCells, then kExactCells
    // spread over the whole cell, the last index among them.
    const int64_t exact = length <= 2 * kExactCells ? length : kExactCells;
    bool seen = false;
    for (int64_t i = begin + 1; i < begin + exact && !seen; ++i) seen = differs(i);
    for (int64_t s = 1; exact < length && s <= kExactCells && !seen; ++s) {
      const int64_t q = (length - 1) / kExactCells, r = (length - 1) % kExactCells;  // (q K + r) s / K, no overflow
      seen = differs(begin + q * s + r * s / kExactCells);
    }
    mixed[static_cast<size_t>(k)] = seen;
  }
  return mixed;
}

Cells sample(const gdap_map* map, int64_t max_cols, int64_t max_rows) {
  const MapShape shape = map_shape(map);
  const bool two_d = shape.global.size() == 2;
  Cells c;
  c.height = two_d ? shape.global[0] : 1;
  c.width = shape.global.back();
  c.row_step = step_for(c.height, max_rows);
  c.col_step = step_for(c.width, max_cols);
  c.rows = cells_for(c.height, c.row_step);
  c.cols = cells_for(c.width, c.col_step);
  c.owner.reserve(static_cast<size_t>(c.rows * c.cols));
  const size_t ndim = shape.global.size();
  const std::vector<bool> mixed_rows = two_d ? mixed_along(map, 0, c.height, c.row_step, c.rows) : std::vector<bool>(1, false);
  const std::vector<bool> mixed_cols = mixed_along(map, ndim - 1, c.width, c.col_step, c.cols);
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      const int64_t global[2] = {i * c.row_step, j * c.col_step};
      int64_t rank = -1;
      if (gdap_map_owner(&rank, nullptr, map, two_d ? global : global + 1) != GDAP_SUCCESS) rank = -1;
      if (mixed_rows[static_cast<size_t>(i)] || mixed_cols[static_cast<size_t>(j)]) rank = kMixed;
      c.owner.push_back(rank);
    }
  }
  return c;
}

std::string picture(const gdap_map* map, int64_t max_cols, int64_t max_rows) {
  const MapShape shape = map_shape(map);
  const size_t ndim = shape.global.size();
  if (ndim < 1 || ndim > 2) return fmt::format("  (no picture for a {}-d array)\n", ndim);
  const Cells c = sample(map, max_cols, max_rows);
  std::string out;
  if (c.row_step > 1 || c.col_step > 1) {
    out += fmt::format("  (one character per {} x {} elements: the rank owning all of a cell, '*' where its "
                       "elements have several owners)\n", c.row_step, c.col_step);
  }
  if (c.rows == 0 || c.cols == 0) return out + "  (empty array: no elements)\n";
  for (int64_t i = 0; i < c.rows; ++i) {
    out += "  ";
    for (int64_t j = 0; j < c.cols; ++j) out += rank_symbol(c.at(i, j));
    out += '\n';
  }
  if (std::any_of(c.owner.begin(), c.owner.end(), [](int64_t rank) { return rank >= 62; })) {
    out += "  (0-9, a-z, A-Z are ranks 0-61; '#' is a rank of 62 or more)\n";
  }
  return out;
}

}  // namespace gdap::cli
