// The ownership picture as SVG, written by hand. A gdap_map is a product of one distribution per
// axis, so the picture is built from each drawn axis's runs of one owner (segments): one outlined
// rectangle per block of one rank, grouped by rank, with the rank's number inside when it fits and a
// legend colour -> rank. The file grows with the number of blocks drawn, not with the elements:
// when a layout has more blocks than kMaxBoxes, a corner is drawn at full detail and a caption says
// which rows and columns. A 1-d array is wrapped into rows; of a 3-d or larger array the first 2-d
// slice is drawn. Padding of 'b' dimensions is hatched, and each padded rank's buffer outlined
// dashed. Only numbers generated here go into the text, so nothing needs escaping.
#include "cli/input.hpp"
#include "cli/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gdap::cli {
namespace {

// Size bound: at most kMaxBoxes owner rectangles and labels (about 100 bytes each) and kMaxPadBoxes
// padding and buffer rectangles (about 60), about 170 KB with the legend, whatever the layout.
constexpr int64_t kMaxBoxes = 1024;
constexpr int64_t kMaxPadBoxes = 800;
constexpr int64_t kCornerCells = 96;     // cells along an axis of a corner, if two blocks fit
constexpr int64_t kMaxUnits = 1 << 20;   // cells looked up along one axis; longer axes are sampled
constexpr int64_t kMaxPadRanks = 4096;   // ranks whose padding is looked at
constexpr int64_t kLegendMax = 64;       // ranks listed in the legend
constexpr int64_t kTop = 60;
constexpr double kPlot = 560, kMaxCell = 48;

// A colour per rank: golden-angle hue steps keep neighbouring ranks apart; lightness varies too.
// `darken` < 1 scales the lightness (for outlines).
std::string colour(int64_t rank, double darken = 1.0) {
  if (rank < 0) return "#ffffff";
  const double h = static_cast<double>((rank * 137) % 360) / 60.0;
  const double l = (0.55 + 0.1 * static_cast<double>(rank % 3)) * darken, s = 0.65;
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

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// A run of cells [begin, end) along one axis with one owner: `rank` owns it at index 0 of every
// other axis, `coord` is that rank's grid coordinate along this axis.
struct Segment {
  int64_t begin, end, rank, coord;
};

// One drawn axis: `step` elements per cell (1 unless the axis is longer than kMaxUnits).
struct Axis {
  int64_t dim = 0, size = 0, step = 1, units = 0;
  std::vector<Segment> segs;
};

struct Interval {
  int64_t begin, end;
};

// Cells [row0, row1) x [col0, col1) of the drawn plane.
struct Box {
  int64_t row0, row1, col0, col1;
};

class Picture {
 public:
  explicit Picture(const gdap_map* map);
  std::string render() const;

 private:
  int64_t owner_at(int64_t dim, int64_t index) const;
  Axis axis(int64_t dim) const;
  int64_t combine(int64_t row_rank, int64_t col_rank) const;
  void choose_window();
  void wrap_boxes(Interval cells, std::vector<Box>& out) const;
  void plane_boxes(Interval rows, Interval cols, std::vector<Box>& out) const;
  void owner_boxes();
  std::vector<Interval> held(int64_t rank, const Axis& a, const gdap_dim& dim, bool interior) const;
  void padding_boxes();
  std::string captions() const;

  const gdap_map* map_;
  MapShape shape_;
  int64_t ndim_ = 0;
  bool wrapped_ = false;  // a 1-d (or 0-d) array drawn as rows of wrap_ cells
  Axis rows_, cols_;      // 2-d: the last two axes; wrapped: cols_ only
  int64_t origin_rank_ = -1;
  int64_t shown_rows_ = 0, shown_cols_ = 0;  // the window, in cells (wrapped: shown_cols_ cells in all)
  int64_t wrap_ = 1;                         // wrapped: cells per row
  std::map<int64_t, std::vector<Box>> owners_;
  std::vector<Box> padding_;
  std::vector<std::pair<int64_t, Box>> buffers_;  // padded ranks' buffers, outlined dashed
  int64_t padding_ranks_ = 0;                     // ranks looked at for padding (all unless capped)
};

Picture::Picture(const gdap_map* map) : map_(map), shape_(map_shape(map)) {
  ndim_ = static_cast<int64_t>(shape_.global.size());
  wrapped_ = ndim_ < 2;
  if (ndim_ > 0) origin_rank_ = owner_at(0, 0);
  if (ndim_ == 0) {
    int64_t r = -1;
    const int64_t none = 0;
    if (gdap_map_owner(&r, nullptr, map, &none) != GDAP_SUCCESS) r = -1;
    origin_rank_ = r;
    cols_.size = cols_.units = 1;
    cols_.segs.push_back({0, 1, r, 0});
  } else {
    cols_ = axis(ndim_ - 1);
    if (!wrapped_) rows_ = axis(ndim_ - 2);
  }
  if (std::find(shape_.global.begin(), shape_.global.end(), 0) != shape_.global.end()) {
    rows_ = cols_ = Axis{};  // an empty array (a leading axis of size 0 too): nothing to draw
  }
  choose_window();
  owner_boxes();
  padding_boxes();
}

// The owner of global index `index` along `dim`, index 0 along every other dimension; -1 if none.
int64_t Picture::owner_at(int64_t dim, int64_t index) const {
  std::vector<int64_t> global(static_cast<size_t>(ndim_), 0);
  global[static_cast<size_t>(dim)] = index;
  int64_t rank = -1;
  if (gdap_map_owner(&rank, nullptr, map_, global.data()) != GDAP_SUCCESS) rank = -1;
  return rank;
}

Axis Picture::axis(int64_t dim) const {
  Axis a;
  a.dim = dim;
  a.size = shape_.global[static_cast<size_t>(dim)];
  a.step = std::max<int64_t>(1, ceil_div(a.size, kMaxUnits));
  a.units = ceil_div(a.size, a.step);
  std::vector<int64_t> coords(static_cast<size_t>(ndim_));
  for (int64_t u = 0; u < a.units; ++u) {
    const int64_t rank = owner_at(dim, u * a.step);
    if (!a.segs.empty() && a.segs.back().rank == rank) {
      a.segs.back().end = u + 1;
      continue;
    }
    int64_t coord = -1;
    if (rank >= 0) {
      check(gdap_grid_rank_to_coords(coords.data(), ndim_, shape_.grid.data(), rank));
      coord = coords[static_cast<size_t>(dim)];
    }
    a.segs.push_back({u, u + 1, rank, coord});
  }
  return a;
}

// The owner of a cell from the owners along its row and its column: ranks are linear in the grid
// coordinates (C order), so owner(i, j) = owner(i, 0) + owner(0, j) - owner(0, 0).
int64_t Picture::combine(int64_t row_rank, int64_t col_rank) const {
  if (row_rank < 0 || col_rank < 0 || origin_rank_ < 0) return -1;
  return row_rank + col_rank - origin_rank_;
}

// Cells per row of a wrapped 1-d array: about 3:2 wide, rounded to 1, 2 or 5 times a power of ten.
int64_t wrap_width(int64_t cells) {
  if (cells <= 16) return std::max<int64_t>(1, cells);
  const double raw = std::sqrt(1.5 * static_cast<double>(cells));
  double best = 1;
  for (double p = 1; p <= raw * 10; p *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (std::fabs(std::log(m * p / raw)) < std::fabs(std::log(best / raw))) best = m * p;
    }
  }
  return static_cast<int64_t>(best);
}

// Boxes of the wrapped cells [begin, end): a partial first row, whole middle rows, a partial last row.
void Picture::wrap_boxes(Interval cells, std::vector<Box>& out) const {
  const int64_t begin = std::max<int64_t>(0, cells.begin), end = std::min(cells.end, shown_cols_);
  if (begin >= end) return;
  const int64_t r0 = begin / wrap_, r1 = (end - 1) / wrap_;
  if (r0 == r1) {
    out.push_back({r0, r0 + 1, begin % wrap_, (end - 1) % wrap_ + 1});
    return;
  }
  int64_t first_full = r0, last_full = r1 + 1;
  if (begin % wrap_ != 0) out.push_back({r0, r0 + 1, begin % wrap_, wrap_}), first_full = r0 + 1;
  if (end % wrap_ != 0) out.push_back({r1, r1 + 1, 0, end % wrap_}), last_full = r1;
  if (first_full < last_full) out.push_back({first_full, last_full, 0, wrap_});
}

void Picture::plane_boxes(Interval rows, Interval cols, std::vector<Box>& out) const {
  if (wrapped_) return wrap_boxes(cols, out);
  const Box b{std::max<int64_t>(0, rows.begin), std::min(rows.end, shown_rows_), std::max<int64_t>(0, cols.begin),
              std::min(cols.end, shown_cols_)};
  if (b.row0 < b.row1 && b.col0 < b.col1) out.push_back(b);
}

// The whole array when its blocks fit in kMaxBoxes, else a corner of about kMaxBoxes blocks, no
// more than kCornerCells cells along an axis that has two blocks within them.
void Picture::choose_window() {
  const auto n1 = static_cast<int64_t>(cols_.segs.size());
  if (wrapped_) {
    int64_t k = std::min(n1, kMaxBoxes);
    for (;;) {
      shown_cols_ = k == n1 ? cols_.units : cols_.segs[static_cast<size_t>(k - 1)].end;
      wrap_ = wrap_width(shown_cols_);
      std::vector<Box> boxes;
      for (int64_t s = 0; s < k; ++s) wrap_boxes({cols_.segs[s].begin, cols_.segs[s].end}, boxes);
      if (static_cast<int64_t>(boxes.size()) <= kMaxBoxes || k <= 1) return;
      k = k * 3 / 4;
    }
  }
  const auto n0 = static_cast<int64_t>(rows_.segs.size());
  shown_rows_ = rows_.units;
  shown_cols_ = cols_.units;
  if (n0 * n1 <= kMaxBoxes) return;
  const auto root = static_cast<int64_t>(std::sqrt(static_cast<double>(kMaxBoxes)));
  const int64_t k0 = std::min(n0, std::max(root, kMaxBoxes / n1));
  const int64_t k1 = std::min(n1, kMaxBoxes / k0);
  shown_rows_ = rows_.segs[static_cast<size_t>(k0 - 1)].end;
  shown_cols_ = cols_.segs[static_cast<size_t>(k1 - 1)].end;
  // Cells of at least about 6 pixels, unless that would hide the second block along an axis.
  auto crop = [](int64_t shown, const Axis& a) {
    return std::min(shown, std::max(kCornerCells, a.segs[std::min<size_t>(1, a.segs.size() - 1)].end));
  };
  shown_rows_ = crop(shown_rows_, rows_);
  shown_cols_ = crop(shown_cols_, cols_);
}

void Picture::owner_boxes() {
  if (wrapped_) {
    for (const Segment& s : cols_.segs) {
      if (s.begin >= shown_cols_) break;
      wrap_boxes({s.begin, s.end}, owners_[s.rank]);
    }
    return;
  }
  for (const Segment& r : rows_.segs) {
    if (r.begin >= shown_rows_) break;
    for (const Segment& c : cols_.segs) {
      if (c.begin >= shown_cols_) break;
      plane_boxes({r.begin, r.end}, {c.begin, c.end}, owners_[combine(r.rank, c.rank)]);
    }
  }
}

// Cells of `rank`'s buffer along axis `a` (interior: without padding), as intervals of cells. A
// 'b' dimension holds [start, stop); others hold the segments at the rank's grid coordinate.
std::vector<Interval> Picture::held(int64_t rank, const Axis& a, const gdap_dim& dim, bool interior) const {
  std::vector<Interval> out;
  if (dim.dist_type == GDAP_DIST_BLOCK) {
    const bool padded = interior && (dim.given & GDAP_KEY_PADDING) != 0;
    const int64_t begin = dim.start + (padded ? dim.padding[0] : 0), end = dim.stop - (padded ? dim.padding[1] : 0);
    if (begin < end) out.push_back({begin / a.step, ceil_div(end, a.step)});
    return out;
  }
  std::vector<int64_t> coords(static_cast<size_t>(ndim_));
  check(gdap_grid_rank_to_coords(coords.data(), ndim_, shape_.grid.data(), rank));
  const int64_t shown = &a == &rows_ ? shown_rows_ : shown_cols_;
  for (const Segment& s : a.segs) {
    if (s.begin >= shown) break;  // only what is drawn: a cyclic axis may have a million segments
    if (s.coord == coords[static_cast<size_t>(a.dim)]) out.push_back({s.begin, s.end});
  }
  return out;
}

// The parts of `whole` outside the first interval of `inner` that overlaps it (at most two).
std::vector<Interval> minus(Interval whole, const std::vector<Interval>& inner) {
  for (const Interval& i : inner) {
    const Interval in{std::max(whole.begin, i.begin), std::min(whole.end, i.end)};
    if (in.begin >= in.end) continue;
    std::vector<Interval> out;
    if (whole.begin < in.begin) out.push_back({whole.begin, in.begin});
    if (in.end < whole.end) out.push_back({in.end, whole.end});
    return out;
  }
  return {whole};
}

bool has_padding(const gdap_dim& d) {
  return d.dist_type == GDAP_DIST_BLOCK && (d.given & GDAP_KEY_PADDING) != 0 && (d.padding[0] > 0 || d.padding[1] > 0);
}

// Hatched cells: each rank's buffer less its interior, on the drawn plane (index 0 of leading axes).
void Picture::padding_boxes() {
  if (ndim_ == 0 || shown_cols_ == 0) return;
  padding_ranks_ = std::min(shape_.nranks, kMaxPadRanks);
  std::vector<gdap_dim> dims(static_cast<size_t>(ndim_));
  std::vector<int64_t> coords(static_cast<size_t>(ndim_)), origin(static_cast<size_t>(ndim_));
  if (origin_rank_ >= 0) check(gdap_grid_rank_to_coords(origin.data(), ndim_, shape_.grid.data(), origin_rank_));
  const int64_t drawn = ndim_ - (wrapped_ ? 1 : 2);  // the first drawn axis; those before are at index 0
  for (int64_t r = 0; r < padding_ranks_; ++r) {
    check(gdap_grid_rank_to_coords(coords.data(), ndim_, shape_.grid.data(), r));
    bool padded = false, in_plane = true, leading_padding = false;
    for (int64_t d = 0; d < ndim_; ++d) {
      gdap_dim& dim = dims[static_cast<size_t>(d)];
      dim = GDAP_DIM_INIT;
      check(gdap_map_dim(&dim, map_, r, d));
      padded = padded || has_padding(dim);
      if (d >= drawn) continue;
      // A leading axis: the rank is on the plane if it holds index 0 there (a 'b' buffer may hold it
      // as padding, and then all it holds on the plane is padding).
      const bool block = dim.dist_type == GDAP_DIST_BLOCK;
      in_plane = in_plane && (block ? dim.start == 0 && dim.stop > 0 : coords[d] == origin[d]);
      leading_padding = leading_padding || (block && has_padding(dim) && dim.padding[0] > 0);
    }
    if (!padded || !in_plane) continue;
    const gdap_dim& cd = dims.back();
    const auto col_held = held(r, cols_, cd, false), col_inner = held(r, cols_, cd, true);
    std::vector<Interval> row_held{{0, 1}}, row_inner{{0, 1}};
    if (!wrapped_) {
      const gdap_dim& rd = dims[static_cast<size_t>(ndim_ - 2)];
      row_held = held(r, rows_, rd, false);
      row_inner = held(r, rows_, rd, true);
    }
    if (leading_padding) row_inner.clear();  // everything held on the plane is padding
    const size_t pad_before = padding_.size(), buffers_before = buffers_.size();
    for (const Interval& rh : row_held) {
      for (const Interval& ch : col_held) {
        std::vector<Box> buffer;
        plane_boxes(rh, ch, buffer);
        for (const Box& b : buffer) buffers_.push_back({r, b});
        // Rows of padding across the whole buffer, then columns of padding in the interior rows.
        for (const Interval& band : minus(rh, row_inner)) plane_boxes(band, ch, padding_);
        for (const Interval& in : row_inner) {
          const Interval rows{std::max(rh.begin, in.begin), std::min(rh.end, in.end)};
          if (rows.begin >= rows.end) continue;
          for (const Interval& band : minus(ch, col_inner)) plane_boxes(rows, band, padding_);
        }
      }
    }
    if (static_cast<int64_t>(padding_.size() + buffers_.size()) > kMaxPadBoxes) {
      padding_.resize(pad_before);
      buffers_.resize(buffers_before);
      padding_ranks_ = r;
      return;
    }
  }
}

// "[0, 0, :, :]": the drawn slice of an array of more than two dimensions.
std::string slice_name(int64_t ndim) {
  std::string out = "[";
  for (int64_t d = 0; d < ndim; ++d) out += d + 2 < ndim ? "0, " : (d + 1 < ndim ? ":, " : ":]");
  return out;
}

std::string Picture::captions() const {
  std::vector<std::string> lines;
  lines.push_back(ndim_ == 0 ? fmt::format("a 0-d array (one element) over {} rank{}", shape_.nranks,
                                           shape_.nranks == 1 ? "" : "s")
                             : fmt::format("a {} array on a {} process grid ({} rank{})", tuple(shape_.global, " x "),
                                           tuple(shape_.grid, " x "), shape_.nranks, shape_.nranks == 1 ? "" : "s"));
  const bool empty = std::find(shape_.global.begin(), shape_.global.end(), 0) != shape_.global.end();
  if (empty) lines.emplace_back("an empty array: no elements to draw");
  if (ndim_ > 2 && !empty) {
    lines.push_back(fmt::format("a {}-d array: the first 2-d slice {} is drawn (dimensions {} and {})", ndim_,
                                slice_name(ndim_), ndim_ - 2, ndim_ - 1));
  }
  if (wrapped_ && ndim_ == 1 && !empty) {
    if (shown_cols_ > wrap_) {
      lines.push_back(fmt::format("dimension 0 wrapped into rows of {} elements", wrap_ * cols_.step));
    }
    if (shown_cols_ < cols_.units) {
      lines.push_back(fmt::format("showing elements 0..{} of {} at full detail: the whole array has {} blocks",
                                  std::min(cols_.size, shown_cols_ * cols_.step) - 1, cols_.size, cols_.segs.size()));
    }
  }
  if (!wrapped_ && !empty && (shown_rows_ < rows_.units || shown_cols_ < cols_.units)) {
    lines.push_back(fmt::format("showing rows 0..{} of {} and columns 0..{} of {}: a corner at full detail",
                                std::min(rows_.size, shown_rows_ * rows_.step) - 1, rows_.size,
                                std::min(cols_.size, shown_cols_ * cols_.step) - 1, cols_.size));
    lines.push_back(fmt::format("(the whole slice has {} x {} blocks)", rows_.segs.size(), cols_.segs.size()));
  }
  if (rows_.step > 1 || cols_.step > 1) {
    lines.push_back(wrapped_ ? fmt::format("one cell per {} elements: the owner of its first element", cols_.step)
                             : fmt::format("one cell per {} x {} elements: the owner of its first element",
                                           rows_.step, cols_.step));
  }
  if (!padding_.empty() || !buffers_.empty()) {
    lines.emplace_back("hatched: padding (halo or boundary); dashed: a padded rank's whole buffer");
  }
  if (!padding_.empty() && padding_ranks_ < shape_.nranks) {
    lines.push_back(fmt::format("padding drawn for ranks 0..{} only", padding_ranks_ - 1));
  } else if (padding_ranks_ == 0 && shape_.nranks > 0 && ndim_ > 0 && shown_cols_ > 0) {
    lines.emplace_back("padding not drawn: rank 0's padding alone has too many blocks");
  }
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

// Pixel positions of cell boundaries: `scale` pixels per cell, rounded so that blocks tile.
struct Scale {
  double x, y;
  int64_t left;  // the plot's left edge: room for the row labels and the axis title
  int64_t px(int64_t col) const { return left + std::llround(static_cast<double>(col) * x); }
  int64_t py(int64_t row) const { return kTop + std::llround(static_cast<double>(row) * y); }
};

// Square cells for a whole array, each side at least a quarter of the plot (so a thin array is
// still a band); a corner fills the plot along each axis, its cells stretched as needed.
Scale scale_for(int64_t rows, int64_t cols, bool corner, int64_t left) {
  const double r = static_cast<double>(std::max<int64_t>(1, rows)), c = static_cast<double>(std::max<int64_t>(1, cols));
  const double fit_x = std::min(kPlot / c, kMaxCell), fit_y = std::min(kPlot / r, kMaxCell);
  if (corner) return {fit_x, fit_y, left};
  const double s = std::min(fit_x, fit_y), quarter = kPlot / 4;
  return {std::max(s, std::min(quarter / c, kMaxCell)), std::max(s, std::min(quarter / r, kMaxCell)), left};
}

// 1, 2 or 5 times a power of ten: the smallest such number >= `at_least`.
int64_t round_up_nice(int64_t at_least) {
  for (int64_t p = 1;; p *= 10) {
    for (int64_t m : {1, 2, 5}) {
      if (m * p >= at_least) return m * p;
    }
  }
}

// Tick labels every 1, 2 or 5 times a power of ten cells (about eight along an axis), each the
// global index there.
std::string ticks(const Scale& sc, int64_t cells, int64_t per_cell, bool columns) {
  std::string out;
  const int64_t every = round_up_nice(ceil_div(cells, 8));
  for (int64_t k = 0; k < cells; k += every) {
    out += columns ? fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                                 (sc.px(k) + sc.px(k + 1)) / 2, kTop - 6, k * per_cell)
                   : fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", sc.left - 6,
                                 (sc.py(k) + sc.py(k + 1)) / 2 + 4, k * per_cell);
  }
  return out;
}

std::string legend(int64_t nranks, bool unowned, bool padding, int64_t x, int64_t per_column) {
  std::string out = "<g class=\"legend\">\n";
  const int64_t shown = std::min(nranks, kLegendMax);
  int64_t k = 0;
  auto next = [&] {
    const int64_t cx = x + 80 * (k / per_column), cy = kTop + 20 * (k % per_column);
    ++k;
    return std::pair{cx, cy};
  };
  for (int64_t r = 0; r < shown; ++r) {
    const auto [cx, cy] = next();
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\" stroke=\"#333333\"/>"
                       "<text x=\"{}\" y=\"{}\">rank {}</text>\n",
                       cx, cy, colour(r), cx + 20, cy + 12, r);
  }
  if (nranks > shown) {
    const auto [cx, cy] = next();
    out += fmt::format("<text x=\"{}\" y=\"{}\">+{} ranks</text>\n", cx, cy + 12, nranks - shown);
  }
  if (unowned) {
    const auto [cx, cy] = next();
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"#ffffff\" stroke=\"#333333\"/>"
                       "<text x=\"{}\" y=\"{}\">no owner</text>\n",
                       cx, cy, cx + 20, cy + 12);
  }
  if (padding) {
    const auto [cx, cy] = next();
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"url(#hatch)\" stroke=\"#333333\"/>"
                       "<text x=\"{}\" y=\"{}\">padding</text>\n",
                       cx, cy, cx + 20, cy + 12);
  }
  return out + "</g>\n";
}

std::string Picture::render() const {
  const int64_t rows = wrapped_ ? ceil_div(shown_cols_, wrap_) : shown_rows_;
  const int64_t cols = wrapped_ ? std::min(wrap_, shown_cols_) : shown_cols_;
  // A 2-d corner is stretched to fill the plot; wrapped rows are already about 3:2.
  const bool corner = !wrapped_ && (shown_rows_ < rows_.units || shown_cols_ < cols_.units);
  const int64_t last_row_label = std::max<int64_t>(0, rows - 1) * (wrapped_ ? wrap_ * cols_.step : rows_.step);
  const int64_t left = 40 + 7 * static_cast<int64_t>(std::to_string(last_row_label).size());
  const Scale sc = scale_for(rows, cols, corner, left);
  const bool one_row = (wrapped_ && rows == 1) || rows == 0 || cols == 0;  // no row axis to label
  const int64_t plot_w = sc.px(cols) - left, plot_h = sc.py(rows) - kTop;
  const bool padding = !padding_.empty();
  const int64_t legend_items = std::min(shape_.nranks, kLegendMax + 1) + 1 + (padding ? 1 : 0);
  const int64_t per_column = std::max<int64_t>(8, plot_h / 20);
  const int64_t legend_x = left + plot_w + 30, legend_w = 80 * ceil_div(legend_items, per_column);
  const std::string notes = captions();
  const auto caption_lines = static_cast<int64_t>(std::count(notes.begin(), notes.end(), '\n'));
  const int64_t y_title = 7 * 26;  // pixels the rotated axis title may need below the plot's middle
  const int64_t body_h =
      std::max({plot_h, 20 * std::min(legend_items, per_column), one_row ? int64_t{0} : plot_h / 2 + y_title / 2});
  const int64_t width = std::max<int64_t>(legend_x + legend_w + 10, 560);
  const int64_t height = kTop + body_h + 24 + 16 * caption_lines;

  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>gdap: which rank owns which element of a {2} array on a {3} process grid</title>\n"
      "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\" fill-opacity=\"0.3\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#000000\" stroke-width=\"1.5\"/></pattern></defs>\n"
      "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      width, height, tuple(shape_.global, " x "), tuple(shape_.grid, " x "));

  // Owners: one group per rank; thin outlines when blocks are only a few pixels wide.
  int64_t boxes = 0;
  for (const auto& [rank, list] : owners_) boxes += static_cast<int64_t>(list.size());
  const double area = static_cast<double>(plot_w * plot_h) / static_cast<double>(std::max<int64_t>(1, boxes));
  out += fmt::format("<g id=\"owners\" stroke=\"#333333\" stroke-width=\"{}\">\n", area < 64 ? 0.3 : 1);
  // Rank numbers in one font size for the whole picture, from the median block height; in every
  // block that can hold the longest number, none where blocks are too small (the legend tells).
  std::vector<int64_t> heights;
  for (const auto& [rank, list] : owners_) {
    for (const Box& b : list) heights.push_back(sc.py(b.row1) - sc.py(b.row0));
  }
  std::nth_element(heights.begin(), heights.begin() + static_cast<ptrdiff_t>(heights.size() / 2), heights.end());
  const int64_t font = heights.empty() ? 0 : std::min<int64_t>(16, heights[heights.size() / 2] * 6 / 10);
  const auto digits = static_cast<int64_t>(std::to_string(std::max<int64_t>(0, shape_.nranks - 1)).size());
  std::string labels;
  for (const auto& [rank, list] : owners_) {
    out += fmt::format("<g id=\"{}\" fill=\"{}\"><title>{}</title>\n", rank < 0 ? "no-owner" : fmt::format("rank-{}", rank),
                       colour(rank), rank < 0 ? std::string("no owner") : fmt::format("rank {}", rank));
    const std::string text = std::to_string(rank);
    for (const Box& b : list) {
      const int64_t x0 = sc.px(b.col0), x1 = sc.px(b.col1), y0 = sc.py(b.row0), y1 = sc.py(b.row1);
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", x0, y0, x1 - x0, y1 - y0);
      if (rank >= 0 && font >= 8 && y1 - y0 >= font + 2 && x1 - x0 >= font * digits * 6 / 10 + 4) {
        labels += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\">{}</text>\n", (x0 + x1) / 2,
                              (y0 + y1) / 2 + font * 35 / 100, font, text);
      }
    }
    out += "</g>\n";
  }
  out += "</g>\n";
  if (padding) {
    out += "<g id=\"padding\" fill=\"url(#hatch)\" stroke=\"none\">\n";
    for (const Box& b : padding_) {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", sc.px(b.col0), sc.py(b.row0),
                         sc.px(b.col1) - sc.px(b.col0), sc.py(b.row1) - sc.py(b.row0));
    }
    out += "</g>\n<g id=\"buffers\" fill=\"none\" stroke-width=\"2.5\" stroke-dasharray=\"6 3\">\n";
    for (const auto& [rank, b] : buffers_) {
      // Dashes around buffers narrower than a label would only hide the cells (fine layouts).
      const int64_t w = sc.px(b.col1) - sc.px(b.col0), h = sc.py(b.row1) - sc.py(b.row0);
      if (w < 12 || h < 12) continue;
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" stroke=\"{}\"/>\n", sc.px(b.col0) + 1,
                         sc.py(b.row0) + 1, w - 2, h - 2, colour(rank, 0.45));
    }
    out += "</g>\n";
  }
  out += "<g id=\"labels\" text-anchor=\"middle\">\n" + labels + "</g>\n";

  // Axes: global indices at cell boundaries; a wrapped array's rows start at multiples of the width.
  if (rows > 0 && cols > 0 && ndim_ > 0) {
    const int64_t last = ndim_ - 1;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n",
                       left + plot_w / 2, kTop - 26,
                       wrapped_ && !one_row ? std::string("position in the row")
                                            : fmt::format("dimension {}: global index", last));
    out += ticks(sc, cols, cols_.step, true);
  }
  if (rows > 0 && cols > 0 && ndim_ > 0 && !one_row) {
    const int64_t x = 20, y = kTop + plot_h / 2;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\" "
                       "transform=\"rotate(-90 {} {})\">{}</text>\n",
                       x, y, x, y,
                       wrapped_ ? std::string("dimension 0: row start")
                                : fmt::format("dimension {}: global index", ndim_ - 2));
    out += ticks(sc, rows, wrapped_ ? wrap_ * cols_.step : rows_.step, false);
  }
  const bool unowned = owners_.count(-1) != 0;
  out += legend(shape_.nranks, unowned, padding, legend_x, per_column);
  int64_t line_y = kTop + body_h + 24;
  size_t from = 0;
  for (size_t nl = notes.find('\n'); nl != std::string::npos; from = nl + 1, nl = notes.find('\n', from)) {
    out += fmt::format("<text class=\"caption\" x=\"{}\" y=\"{}\">{}</text>\n", 10, line_y,
                       notes.substr(from, nl - from));
    line_y += 16;
  }
  return out + "</svg>\n";
}

}  // namespace

std::string svg(const gdap_map* map) { return Picture(map).render(); }

}  // namespace gdap::cli
