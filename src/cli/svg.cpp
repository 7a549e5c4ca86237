// The ownership picture as SVG, written by hand: one rectangle per (sampled) cell coloured by the
// owning rank, tick labels with global indices on both axes, and a legend of ranks. Only numbers
// generated here go into the text, so nothing needs escaping.
#include "cli/input.hpp"
#include "cli/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gdap::cli {
namespace {

constexpr int64_t kLegendMax = 64;  // ranks listed in the legend
constexpr int64_t kLeft = 80, kTop = 60, kPlot = 480;

// A colour per rank: golden-angle hue steps keep neighbouring ranks apart; lightness varies too.
std::string colour(int64_t rank) {
  if (rank < 0) return "#ffffff";
  const double h = static_cast<double>((rank * 137) % 360) / 60.0;
  const double l = 0.5 + 0.1 * static_cast<double>(rank % 3), s = 0.65;
  const double chroma = (1 - std::fabs(2 * l - 1)) * s, x = chroma * (1 - std::fabs(std::fmod(h, 2.0) - 1));
  double rgb[3] = {0, 0, 0};
  const int sector = static_cast<int>(h);
  const int big[6] = {0, 1, 1, 2, 2, 0}, small[6] = {1, 0, 2, 1, 0, 2};
  rgb[big[sector]] = chroma;
  rgb[small[sector]] = x;
  const double m = l - chroma / 2;
  auto byte = [&](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(rgb[0]), byte(rgb[1]), byte(rgb[2]));
}

struct Geometry {
  int64_t cell_w, cell_h, width, height;
};

Geometry geometry(const Cells& c, bool two_d) {
  const int64_t cell = std::max<int64_t>(4, kPlot / std::max<int64_t>(1, std::max(c.cols, c.rows)));
  const int64_t cell_h = two_d ? cell : 40;  // a 1-d array is one strip
  return {cell, cell_h, c.cols * cell, c.rows * cell_h};
}

std::string cells(const Cells& c, const Geometry& g) {
  std::string out = "<g stroke=\"#ffffff\" stroke-width=\"0.5\">\n";
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      const int64_t rank = c.at(i, j);
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                         kLeft + j * g.cell_w, kTop + i * g.cell_h, g.cell_w, g.cell_h, colour(rank),
                         rank < 0 ? std::string("no owner") : fmt::format("rank {}", rank));
    }
  }
  return out + "</g>\n";
}

// Tick labels every few cells along one axis, each the global index where its cell starts.
std::string ticks(int64_t count, int64_t step, int64_t cell, bool columns) {
  std::string out;
  const int64_t every = std::max<int64_t>(1, count / 8);
  for (int64_t k = 0; k < count; k += every) {
    const int64_t at = k * cell + cell / 2;
    out += columns ? fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + at, kTop - 6,
                                 k * step)
                   : fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, kTop + at + 4,
                                 k * step);
  }
  return out;
}

std::string axes(const Cells& c, const Geometry& g, bool two_d) {
  const int64_t last = two_d ? 1 : 0;
  std::string out = fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">dimension {}: global index{}</text>\n",
      kLeft + g.width / 2, kTop - 26, last, c.col_step > 1 ? fmt::format(" (one cell per {})", c.col_step) : "");
  out += ticks(c.cols, c.col_step, g.cell_w, true);
  if (!two_d) return out;
  const int64_t x = kLeft - 50, y = kTop + g.height / 2;
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\" transform=\"rotate(-90 {} {})\">"
      "dimension 0: global index{}</text>\n",
      x, y, x, y, c.row_step > 1 ? fmt::format(" (one cell per {})", c.row_step) : "");
  return out + ticks(c.rows, c.row_step, g.cell_h, false);
}

std::string legend(int64_t nranks, bool unowned, int64_t x) {
  std::string out;
  const int64_t shown = std::min(nranks, kLegendMax);
  for (int64_t r = 0; r < shown; ++r) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
                       "<text x=\"{}\" y=\"{}\">rank {}</text>\n",
                       x, kTop + 20 * r, colour(r), x + 20, kTop + 20 * r + 12, r);
  }
  int64_t y = kTop + 20 * shown;
  if (nranks > shown) {
    out += fmt::format("<text x=\"{}\" y=\"{}\">and {} more ranks</text>\n", x, y + 12, nranks - shown);
    y += 20;
  }
  if (unowned) {
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"#ffffff\" stroke=\"#888888\"/>"
                       "<text x=\"{}\" y=\"{}\">no owner</text>\n",
                       x, y, x + 20, y + 12);
  }
  return out;
}

}  // namespace

std::string svg(const gdap_map* map, int64_t max_cols, int64_t max_rows) {
  const MapShape shape = map_shape(map);
  const size_t ndim = shape.global.size();
  if (ndim < 1 || ndim > 2) fail(GDAP_ERR_UNSUPPORTED, "an SVG picture needs a 1-d or 2-d array, not {}-d", ndim);
  const bool two_d = ndim == 2;
  const Cells c = sample(map, max_cols, max_rows);
  const Geometry g = geometry(c, two_d);
  const bool unowned = std::find(c.owner.begin(), c.owner.end(), -1) != c.owner.end();
  const int64_t legend_x = kLeft + g.width + 30;
  const int64_t legend_h = 20 * (std::min(shape.nranks, kLegendMax) + 2);
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n"
      "<title>gdap: which rank owns which element of a {} array on a {} process grid</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      legend_x + 140, kTop + std::max(g.height, legend_h) + 30, tuple(shape.global, " x "), tuple(shape.grid, " x "));
  out += cells(c, g);
  out += axes(c, g, two_d);
  out += legend(shape.nranks, unowned, legend_x);
  return out + "</svg>\n";
}

}  // namespace gdap::cli
