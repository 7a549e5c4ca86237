// What the CLI prints about a distribution: the per-rank table and the ownership picture, all
// computed through the public C API from a gdap_map. The SVG picture is in svg.cpp.
#pragma once

#include <gdap/gdap.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gdap::cli {

struct RankSummary {
  int64_t rank = 0;
  std::vector<int64_t> grid;         // grid coordinates
  std::vector<int64_t> local_shape;  // the buffer, padding included
  std::vector<int64_t> owned_shape;  // owned indices per dimension
  int64_t owned = 0;
};

struct MapShape {
  int64_t nranks = 0;
  std::vector<int64_t> global;  // sizes
  std::vector<int64_t> grid;    // proc_grid_size per dimension
};

MapShape map_shape(const gdap_map* map);
std::vector<RankSummary> summarize(const gdap_map* map);
std::string table(const std::vector<RankSummary>& ranks);
nlohmann::json to_json(const std::vector<RankSummary>& ranks);

// "(3, 4)", "(3,)", "()" with the default separator; "2 x 2" style with " x ".
std::string tuple(const std::vector<int64_t>& values, const char* separator = ", ");

// A 1-d or 2-d map sampled on at most max_rows x max_cols cells (a 1-d map is one row); each cell
// holds the rank owning all its elements, -1 where no rank owns its first element, kMixed where
// its elements have more than one owner (a cyclic axis drawn at one cell per several elements).
inline constexpr int64_t kMixed = -2;
struct Cells {
  int64_t rows = 0, cols = 0, row_step = 1, col_step = 1;
  int64_t height = 1, width = 0;  // the global extents the cells cover
  std::vector<int64_t> owner;     // rows * cols, row-major
  int64_t at(int64_t i, int64_t j) const { return owner[static_cast<size_t>(i * cols + j)]; }
};
Cells sample(const gdap_map* map, int64_t max_cols, int64_t max_rows);

// One character per cell (0-9, a-z, A-Z, then '#'; '.' where nobody owns; '*' for a cell of
// several owners), for 1-d and 2-d maps;
// larger arrays are sampled and the picture says the step.
std::string picture(const gdap_map* map, int64_t max_cols = 64, int64_t max_rows = 32);

// The picture as SVG (svg.cpp): each rank's blocks outlined and labelled, a legend colour -> rank,
// padding hatched, labelled axes; a 1-d array wrapped into rows, of more dimensions the first 2-d
// slice; a corner at full detail when the blocks are too many to draw. Under 200 KB for any map.
std::string svg(const gdap_map* map);

}  // namespace gdap::cli
