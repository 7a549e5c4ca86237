// Tables and ownership pictures for the CLI (see report.hpp).
#include "cli/report.hpp"

#include "core/error.hpp"

#include <algorithm>

namespace gdap::cli {
namespace {

int64_t ndim_of(const gdap_map* map) {
  int64_t n = 0;
  check(gdap_map_ndim(&n, map));
  return n;
}

std::vector<int64_t> global_shape(const gdap_map* map) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim_of(map)));
  check(gdap_map_global_shape(shape.data(), map));
  return shape;
}

char rank_symbol(int64_t rank) {
  static const char symbols[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  return rank < 0 ? '.' : rank < 62 ? symbols[rank] : '#';
}

// The sampled cells of a 1-d or 2-d picture: rows x cols cells, each at a global index.
struct Cells {
  int64_t rows = 1, cols = 1, row_step = 1, col_step = 1;
  std::vector<int64_t> owner;  // rows * cols, -1 where nobody owns
};

int64_t step_for(int64_t size, int64_t max_cells) { return std::max<int64_t>(1, (size + max_cells - 1) / max_cells); }

Cells sample(const gdap_map* map, int64_t max_cols, int64_t max_rows) {
  const auto shape = global_shape(map);
  Cells c;
  const bool two_d = shape.size() == 2;
  const int64_t height = two_d ? shape[0] : 1, width = shape.back();
  c.row_step = step_for(height, max_rows);
  c.col_step = step_for(width, max_cols);
  c.rows = (height + c.row_step - 1) / c.row_step;
  c.cols = (width + c.col_step - 1) / c.col_step;
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      int64_t global[2] = {i * c.row_step, j * c.col_step}, rank = -1;
      const int64_t* g = two_d ? global : global + 1;
      if (gdap_map_owner(&rank, nullptr, map, g) != GDAP_SUCCESS) rank = -1;
      c.owner.push_back(rank);
    }
  }
  return c;
}

std::string colour(int64_t rank) {
  if (rank < 0) return "#ffffff";
  const int64_t hue = (rank * 137) % 360;  // golden-angle steps keep neighbours apart
  return fmt::format("hsl({}, 65%, {}%)", hue, 55 + (rank % 3) * 10);
}

}  // namespace

void check(gdap_status status) {
  if (status != GDAP_SUCCESS) throw Error(status, gdap_last_error());
}

std::string tuple(const std::vector<int64_t>& values, const char* separator) {
  std::string out = "(";
  for (size_t k = 0; k < values.size(); ++k) out += (k ? separator : "") + std::to_string(values[k]);
  return out + (values.size() == 1 && std::string(separator) == ", " ? ",)" : ")");
}

std::vector<RankSummary> summarize(const gdap_map* map) {
  int64_t nranks = 0;
  check(gdap_map_nranks(&nranks, map));
  const int64_t ndim = ndim_of(map);
  std::vector<int64_t> grid_shape(static_cast<size_t>(ndim));
  check(gdap_map_grid_shape(grid_shape.data(), map));
  std::vector<RankSummary> out;
  for (int64_t r = 0; r < nranks; ++r) {
    RankSummary s{r, std::vector<int64_t>(static_cast<size_t>(ndim)), std::vector<int64_t>(static_cast<size_t>(ndim)),
                  std::vector<int64_t>(static_cast<size_t>(ndim)), 0};
    check(gdap_grid_rank_to_coords(s.grid.data(), ndim, grid_shape.data(), r));
    check(gdap_map_local_shape(s.local_shape.data(), map, r));
    check(gdap_map_owned_shape(s.owned_shape.data(), map, r));
    check(gdap_map_owned_count(&s.owned, map, r));
    out.push_back(std::move(s));
  }
  return out;
}

std::string table(const std::vector<RankSummary>& ranks) {
  std::string out = fmt::format("{:>5}  {:<12}  {:<16}  {:<16}  {:>12}\n", "rank", "grid", "local shape",
                                "owned shape", "owned");
  for (const auto& s : ranks) {
    out += fmt::format("{:>5}  {:<12}  {:<16}  {:<16}  {:>12}\n", s.rank, tuple(s.grid), tuple(s.local_shape),
                       tuple(s.owned_shape), s.owned);
  }
  return out;
}

nlohmann::json to_json(const std::vector<RankSummary>& ranks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : ranks) {
    out.push_back({{"rank", s.rank},
                   {"grid", s.grid},
                   {"local_shape", s.local_shape},
                   {"owned_shape", s.owned_shape},
                   {"owned", s.owned}});
  }
  return out;
}

std::string picture(const gdap_map* map, int64_t max_cols, int64_t max_rows) {
  const int64_t ndim = ndim_of(map);
  if (ndim < 1 || ndim > 2) return fmt::format("(no picture for a {}-d array)\n", ndim);
  const Cells c = sample(map, max_cols, max_rows);
  std::string out;
  if (c.row_step > 1 || c.col_step > 1) {
    out += fmt::format("(one character per {} x {} elements: the owner of each cell's first element)\n", c.row_step,
                       c.col_step);
  }
  for (int64_t i = 0; i < c.rows; ++i) {
    out += "  ";
    for (int64_t j = 0; j < c.cols; ++j) out += rank_symbol(c.owner[static_cast<size_t>(i * c.cols + j)]);
    out += '\n';
  }
  return out;
}

std::string svg(const gdap_map* map, int64_t max_cols, int64_t max_rows) {
  const int64_t ndim = ndim_of(map);
  if (ndim < 1 || ndim > 2) fail(GDAP_ERR_UNSUPPORTED, "an SVG picture needs a 1-d or 2-d array, not {}-d", ndim);
  const Cells c = sample(map, max_cols, max_rows);
  int64_t nranks = 0;
  check(gdap_map_nranks(&nranks, map));
  const int64_t cell = std::max<int64_t>(4, 480 / std::max(c.cols, c.rows));
  const int64_t left = 60, top = 40, width = c.cols * cell, height = c.rows * cell;
  const int64_t legend_x = left + width + 30;
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>gdap: which rank owns which element</title>\n",
      legend_x + 120, top + std::max(height, 20 * std::min<int64_t>(nranks, 64)) + 60);
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      const int64_t rank = c.owner[static_cast<size_t>(i * c.cols + j)];
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" "
                         "stroke-width=\"0.5\"><title>rank {}</title></rect>\n",
                         left + j * cell, top + i * cell, cell, cell, colour(rank), rank);
    }
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">dimension {} (step {})</text>\n", left + width / 2,
                     top - 12, ndim - 1, c.col_step);
  if (ndim == 2) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 {} {})\">dimension 0 "
                       "(step {})</text>\n",
                       left - 20, top + height / 2, left - 20, top + height / 2, c.row_step);
  }
  for (int64_t r = 0; r < std::min<int64_t>(nranks, 64); ++r) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\">rank {}</text>\n",
                       legend_x, top + 20 * r, colour(r), legend_x + 20, top + 20 * r + 12, r);
  }
  return out + "</svg>\n";
}

}  // namespace gdap::cli
