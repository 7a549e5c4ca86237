// gdap_reduce_axes and gdap_reduce_scatter, one rank's part, shared by the in-process group test
// (test_reduce_group.cpp) and the MPI program (reduce_mpi.cpp). A table of source layouts (1-d,
// 2-d, 3-d; block, cyclic, block-cyclic, irregular with empty sections, padded, unstructured,
// unstructured with replicas, replicated; grids P x 1, 1 x P, 2 x 2 ...) times every op, every
// subset of axes and result layouts (replicated, block, cyclic, 0-d), each result element checked
// against a serial reduction of the global array computed here (and its padding left untouched);
// then refusals, each checked for its status, message words and an unchanged result. Every rank
// makes every collective call, whatever failed before. Returns a description of each failure.
#pragma once

#include "move_layouts.hpp"

#include <gdap/gdap.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace reduce_test {

using move_test::Axis;
using move_test::Layout;

constexpr double kSentinel = 77;  // result cells before the call: padding must keep it

// How one axis is split over `grid` coordinates; every global index is held by some coordinate.
inline Axis make_axis(const std::string& kind, int64_t size, int64_t grid, uint64_t seed) {
  if (kind == "block") return move_test::block(size, grid);
  if (kind == "cyclic") return move_test::cyclic(size, grid, 1);
  if (kind == "blockcyclic") return move_test::cyclic(size, grid, 2);
  if (kind == "unstructured") return move_test::shuffled(size, grid, seed, false);
  if (kind == "replicas") return move_test::shuffled(size, grid, seed, true);
  if (kind == "replicated") {
    std::vector<int64_t> all(static_cast<size_t>(size));
    for (int64_t g = 0; g < size; ++g) all[static_cast<size_t>(g)] = g;
    return move_test::unstructured(size, std::vector<std::vector<int64_t>>(static_cast<size_t>(grid), all), false);
  }
  std::vector<int64_t> counts(static_cast<size_t>(grid), 0);
  if (kind == "irregular") {  // coordinate 0 empty (when there are others), the rest shared
    const int64_t first = grid > 1 ? 1 : 0, n = grid - first;
    for (int64_t g = first; g < grid; ++g) counts[static_cast<size_t>(g)] = size * (g - first + 1) / n - size * (g - first) / n;
    return move_test::irregular(size, counts);
  }
  for (int64_t g = 0; g < grid; ++g) counts[static_cast<size_t>(g)] = size * (g + 1) / grid - size * g / grid;
  return move_test::padded(size, counts, 1, false, 1, 2);  // "padded": needs size >= grid
}

struct Case {
  std::string name;
  std::vector<int64_t> shape;
  Layout layout;
};

// The source layouts for `nranks` ranks.
inline std::vector<Case> cases(int64_t nranks) {
  struct Spec {
    std::vector<int64_t> shape;
    std::vector<std::string> kinds;
  };
  const std::vector<Spec> specs = {
      {{11}, {"block"}}, {{11}, {"cyclic"}}, {{11}, {"blockcyclic"}}, {{11}, {"irregular"}}, {{11}, {"padded"}},
      {{11}, {"unstructured"}}, {{11}, {"replicas"}}, {{11}, {"replicated"}},
      {{7, 5}, {"block", "cyclic"}}, {{7, 5}, {"blockcyclic", "replicas"}}, {{7, 5}, {"padded", "irregular"}},
      {{7, 5}, {"replicated", "block"}}, {{7, 5}, {"unstructured", "blockcyclic"}}, {{8, 3}, {"replicated", "block"}},
      {{5, 4, 3}, {"block", "cyclic", "replicas"}}, {{5, 4, 3}, {"padded", "replicated", "blockcyclic"}},
      {{5, 4, 3}, {"irregular", "unstructured", "block"}}};
  // Grids: all ranks along the first axis, along the last, and 2 x 2 on 4 ranks.
  std::vector<Case> out;
  uint64_t seed = 1;
  for (const Spec& s : specs) {
    const size_t n = s.shape.size();
    std::vector<std::vector<int64_t>> grids;
    std::vector<int64_t> first(n, 1), last(n, 1);
    first[0] = nranks;
    last[n - 1] = nranks;
    grids.push_back(first);
    if (n > 1 && nranks > 1) grids.push_back(last);
    if (n > 1 && nranks == 4) {
      std::vector<int64_t> square(n, 1);
      square[0] = 2;
      square[n - 1] = 2;
      grids.push_back(square);
    }
    for (const auto& grid : grids) {
      Case c{"", s.shape, {}};
      bool fits = true;
      for (size_t i = 0; i < n; ++i) {
        fits = fits && (s.kinds[i] != "padded" || s.shape[i] >= grid[i]);
        c.layout.axes.push_back(make_axis(s.kinds[i], s.shape[i], grid[i], seed++));
        c.name += (i ? " x " : "") + s.kinds[i] + "(" + std::to_string(s.shape[i]) + "/" + std::to_string(grid[i]) + ")";
      }
      if (fits) out.push_back(std::move(c));
    }
  }
  return out;
}

inline const char* op_text(gdap_reduce_op op) {
  switch (op) {
    case GDAP_REDUCE_SUM: return "sum";
    case GDAP_REDUCE_PROD: return "prod";
    case GDAP_REDUCE_MIN: return "min";
    case GDAP_REDUCE_MAX: return "max";
    default: return "mean";
  }
}

// The value of global element `flat` (on rank `rank`, for reduce-scatter sources): small integers,
// so every reduction is exact in every dtype tested (products stay below 2^6).
inline int64_t value(gdap_reduce_op op, int64_t flat, int64_t rank, bool nonnegative) {
  const int64_t h = (flat * 7 + rank * 3) % 13;
  if (op == GDAP_REDUCE_PROD) return flat % 17 == 3 && rank == 0 ? 2 : (!nonnegative && h == 5 ? -1 : 1);
  return nonnegative ? h % 4 : h - 6;
}

inline double combine(gdap_reduce_op op, double a, double b) {
  switch (op) {
    case GDAP_REDUCE_PROD: return a * b;
    case GDAP_REDUCE_MIN: return std::min(a, b);
    case GDAP_REDUCE_MAX: return std::max(a, b);
    default: return a + b;
  }
}

inline double identity(gdap_reduce_op op) {
  return op == GDAP_REDUCE_PROD ? 1 : op == GDAP_REDUCE_MIN ? HUGE_VAL : op == GDAP_REDUCE_MAX ? -HUGE_VAL : 0;
}

inline void store(gdap_dtype t, double v, unsigned char* at) {
  if (t.code == GDAP_DTYPE_FLOAT && t.bits == 32) { const float f = static_cast<float>(v); std::memcpy(at, &f, 4); return; }
  if (t.code == GDAP_DTYPE_FLOAT) { std::memcpy(at, &v, 8); return; }
  const auto i = static_cast<int64_t>(v);
  std::memcpy(at, &i, static_cast<size_t>(t.bits / 8));  // little-endian: the low bytes
}

inline double load(gdap_dtype t, const unsigned char* at) {
  if (t.code == GDAP_DTYPE_FLOAT && t.bits == 32) { float f; std::memcpy(&f, at, 4); return f; }
  if (t.code == GDAP_DTYPE_FLOAT) { double d; std::memcpy(&d, at, 8); return d; }
  int64_t v = 0;
  std::memcpy(&v, at, static_cast<size_t>(t.bits / 8));
  const int shift = 64 - t.bits;
  if (t.code == GDAP_DTYPE_INT && shift > 0) v = static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
  return static_cast<double>(v);
}

inline int64_t flat_of(const std::vector<int64_t>& g, const std::vector<int64_t>& shape) {
  int64_t f = 0;
  for (size_t i = 0; i < g.size(); ++i) f = f * shape[i] + g[i];
  return f;
}

// One rank's gdap-allocated section of a layout (C order), every cell set to `fill`, with the
// oracle's owned global index per dimension and local position.
struct Section {
  gdap_array* array = nullptr;
  std::vector<int64_t> shape;
  std::vector<std::vector<std::optional<int64_t>>> globals;
  gdap_dtype dtype{};

  Section(const std::vector<gdap_dim>& dims, gdap_dtype t, double fill) : dtype(t) {
    for (const gdap_dim& d : dims) {
      globals.push_back(move_test::owned_globals(d));
      shape.push_back(static_cast<int64_t>(globals.back().size()));
    }
    if (gdap_array_create(&array, t, {GDAP_DEVICE_CPU, 0}, dims.data(), static_cast<int64_t>(dims.size())) != GDAP_SUCCESS) {
      array = nullptr;
      return;
    }
    for (int64_t k = 0; k < cells(); ++k) store(t, fill, at(k));
  }
  ~Section() { gdap_array_destroy(array); }
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;

  int64_t cells() const {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    return n;
  }
  unsigned char* at(int64_t k) const {
    void* data = nullptr;
    gdap_array_data(&data, array);
    return static_cast<unsigned char*>(data) + k * (dtype.bits / 8);
  }
  // Calls f(cell, owned global index or nullopt) for every cell in C order.
  template <typename F>
  void each(F&& f) const {
    for (int64_t k = 0; k < cells(); ++k) {
      std::vector<int64_t> g(shape.size());
      bool owned = true;
      int64_t rest = k;
      for (size_t i = shape.size(); i-- > 0;) {
        const auto& x = globals[i][static_cast<size_t>(rest % shape[i])];
        rest /= shape[i];
        owned = owned && x.has_value();
        if (x) g[i] = *x;
      }
      f(k, owned ? std::optional<std::vector<int64_t>>(g) : std::nullopt);
    }
  }
  std::vector<unsigned char> bytes() const {
    return array ? std::vector<unsigned char>(at(0), at(cells())) : std::vector<unsigned char>();
  }
};

class Rank {
 public:
  Rank(gdap_comm* comm, int64_t rank, int64_t nranks) : comm_(comm), rank_(rank), nranks_(nranks) {}

  std::vector<std::string> run() {
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1}, i32 = {GDAP_DTYPE_INT, 32, 1};
    const std::vector<gdap_reduce_op> ops = {GDAP_REDUCE_SUM, GDAP_REDUCE_PROD, GDAP_REDUCE_MIN, GDAP_REDUCE_MAX};
    for (const Case& c : cases(nranks_)) {
      for (gdap_dtype t : {f64, i32}) {
        for (gdap_reduce_op op : ops) {
          for_each_subset(c, [&](const std::vector<int64_t>& axes, bool all) { axes_case(c, t, op, axes, all, false); });
          scatter_case(c, t, op);
        }
        if (t.code == GDAP_DTYPE_FLOAT) {
          for_each_subset(c, [&](const std::vector<int64_t>& axes, bool all) { axes_case(c, t, GDAP_REDUCE_MEAN, axes, all, false); });
        }
      }
    }
    dtypes();
    nans();
    accuracy();
    refusals();
    return failures_;
  }

 private:
  // Every subset of the axes (as a list, the full one also as NULL), negative axes for odd masks.
  template <typename F>
  void for_each_subset(const Case& c, F&& f) {
    const auto n = static_cast<int64_t>(c.shape.size());
    for (int64_t mask = 0; mask < (int64_t{1} << n); ++mask) {
      std::vector<int64_t> axes;
      for (int64_t i = n; i-- > 0;) {  // descending: the order must not matter
        if (mask & (int64_t{1} << i)) axes.push_back(mask % 2 ? i - n : i);
      }
      f(axes, false);
      if (mask + 1 == (int64_t{1} << n)) f(axes, true);
    }
  }

  // Every dtype on one 2-d layout: each op over every subset of axes.
  void dtypes() {
    const std::vector<Case> all = cases(nranks_);
    const Case& c = *std::find_if(all.begin(), all.end(), [](const Case& k) { return k.name.rfind("blockcyclic(7", 0) == 0; });
    const std::vector<gdap_dtype> types = {{GDAP_DTYPE_INT, 8, 1},  {GDAP_DTYPE_UINT, 8, 1},  {GDAP_DTYPE_INT, 32, 1},
                                           {GDAP_DTYPE_UINT, 32, 1}, {GDAP_DTYPE_INT, 64, 1},  {GDAP_DTYPE_UINT, 64, 1},
                                           {GDAP_DTYPE_FLOAT, 32, 1}, {GDAP_DTYPE_FLOAT, 64, 1}};
    for (gdap_dtype t : types) {
      for (gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_PROD, GDAP_REDUCE_MIN, GDAP_REDUCE_MAX, GDAP_REDUCE_MEAN}) {
        if (op == GDAP_REDUCE_MEAN && t.code != GDAP_DTYPE_FLOAT) continue;
        for_each_subset(c, [&](const std::vector<int64_t>& axes, bool whole) { axes_case(c, t, op, axes, whole, true); });
      }
    }
  }

  // Rule (NumPy's np.minimum/np.maximum): min and max of floats propagate NaN. A NaN in one rank's
  // section (each rank in turn; -NaN on odd ranks) makes the result NaN at its element, on every
  // rank, whichever rank holds it, and a NaN everywhere (holder -1) gives NaN everywhere, not the
  // identity +-inf. Before: std::min/std::max kept one side, so the answer depended on the rank.
  void nans() {
    const std::vector<Case> all = cases(nranks_);
    const Case& c = *std::find_if(all.begin(), all.end(), [](const Case& k) { return k.name.rfind("blockcyclic(7", 0) == 0; });
    for (gdap_dtype t : {gdap_dtype{GDAP_DTYPE_FLOAT, 32, 1}, gdap_dtype{GDAP_DTYPE_FLOAT, 64, 1}}) {
      for (gdap_reduce_op op : {GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) {
        for (int64_t holder = -1; holder < nranks_; ++holder) nan_case(c, t, op, holder);
      }
    }
  }

  // Rule (NumPy's pairwise sum or better): float sums do not lose small addends to large ones
  // however many there are. 40000 elements in blocks, four of them 1e8 (float32) or 1e16
  // (float64) and the rest 1: adding one element at a time in the dtype gave 4e8 and 4e16 (every
  // 1 rounded away); NumPy gives 4.0003997e8 and 4.000000000003996e16. And a tall float32 array
  // of values in [0, 1) summed over its rows, each column against its sum in double: the
  // element-at-a-time float32 sum drifted by 2e-6 to 6e-6 relative (1M rows; NumPy's strided
  // sum over axis 0 does too).
  void accuracy() {
    const gdap_dtype f32 = {GDAP_DTYPE_FLOAT, 32, 1}, f64 = {GDAP_DTYPE_FLOAT, 64, 1};
    const int64_t n = 40000;
    Layout line;
    line.axes = {move_test::block(n, nranks_)};
    for (const auto& [t, big] : {std::pair{f32, 1e8}, std::pair{f64, 1e16}}) {
      Section source(dims_of(line), t, 0);
      source.each([&](int64_t k, const auto& g) { store(t, g && (*g)[0] % 10000 == 0 ? big : 1.0, source.at(k)); });
      const long double exact = 4.0L * big + (n - 4);
      // float32: NumPy's error (rtol 1e-6); float64: an ulp of the sum (8), a partial's own rounding.
      const double tol = t.bits == 32 ? 1e-6 * 4 * big : 8;
      for (gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_MEAN}) {
        Section scalar({}, t, kSentinel);
        const std::string what = std::string("accuracy float") + std::to_string(t.bits) + " " + op_text(op);
        if (gdap_reduce_axes(comm_, source.array, scalar.array, op, nullptr, 0) != GDAP_SUCCESS) {
          fail(what + ": " + gdap_last_error());
          continue;
        }
        const long double per = op == GDAP_REDUCE_MEAN ? n : 1;
        const double got = load(t, scalar.at(0));
        if (std::abs(static_cast<long double>(got) - exact / per) > tol / per) {
          fail(what + ": " + std::to_string(got) + ", exact " + std::to_string(static_cast<double>(exact / per)));
        }
      }
    }
    tall_column_sums();
  }

  void tall_column_sums() {
    const gdap_dtype f32 = {GDAP_DTYPE_FLOAT, 32, 1};
    const int64_t rows = int64_t{1} << 20, cols = 2;
    Layout tall, result;
    tall.axes = {move_test::block(rows, nranks_), move_test::block(cols, 1)};
    result.axes = {make_axis("replicated", cols, nranks_, 0)};
    auto element = [](int64_t flat) {  // 24 random bits (splitmix64) in [0, 1): exact in float32
      uint64_t z = static_cast<uint64_t>(flat) + 0x9E3779B97F4A7C15u;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
      return static_cast<double>((z ^ (z >> 31)) >> 40) / 16777216.0;
    };
    std::vector<double> exact(cols, 0);
    for (int64_t k = 0; k < rows * cols; ++k) exact[static_cast<size_t>(k % cols)] += element(k);
    Section source(dims_of(tall), f32, 0), sums(dims_of(result), f32, kSentinel);
    source.each([&](int64_t k, const auto& g) { store(f32, element((*g)[0] * cols + (*g)[1]), source.at(k)); });
    const int64_t axis0[1] = {0};
    if (gdap_reduce_axes(comm_, source.array, sums.array, GDAP_REDUCE_SUM, axis0, 1) != GDAP_SUCCESS) {
      fail(std::string("accuracy tall float32 sum over axis 0: ") + gdap_last_error());
      return;
    }
    sums.each([&](int64_t k, const auto& g) {
      const double want = exact[static_cast<size_t>((*g)[0])], got = load(f32, sums.at(k));
      if (std::abs(got - want) > 0x1p-22 * want) {  // two float32 ulps; one element at a time: 2e-6 to 6e-6
        fail("accuracy tall float32 sum over axis 0, column " + std::to_string((*g)[0]) + ": " + std::to_string(got) +
             ", exact " + std::to_string(want));
      }
    });
  }

  // Per axis, the global indices rank r holds of layout c.
  std::vector<std::vector<int64_t>> held_by(const Case& c, int64_t r) const {
    std::vector<std::vector<int64_t>> held(c.shape.size());
    for (size_t i = 0; i < c.shape.size(); ++i) {
      for (const auto& g : move_test::owned_globals(c.layout.dim(r, static_cast<int64_t>(i)))) {
        if (g) held[i].push_back(*g);
      }
    }
    return held;
  }

  // The NaN rank r puts in its section (at its first owned element; everywhere for holder -1).
  static double nan_of(int64_t r) { return r % 2 ? -std::nan("") : std::nan(""); }
  static bool nan_here(int64_t holder, int64_t r, const std::vector<int64_t>& g, const std::vector<std::vector<int64_t>>& held) {
    if (holder < 0) return true;
    if (r != holder) return false;
    for (size_t i = 0; i < g.size(); ++i) {
      if (held[i].empty() || g[i] != held[i][0]) return false;
    }
    return true;
  }

  // The reduce-scatter reference: each global element is the op over the ranks holding it of
  // v(rank, global index, what that rank holds), NaN winning (NumPy's np.minimum/np.maximum).
  template <typename V>
  std::vector<double> scatter_reference(const Case& c, gdap_reduce_op op, V&& v) const {
    int64_t cells = 1;
    for (int64_t e : c.shape) cells *= e;
    std::vector<double> ref(static_cast<size_t>(cells), identity(op));
    for (int64_t r = 0; r < nranks_; ++r) {
      const std::vector<std::vector<int64_t>> held = held_by(c, r);
      std::vector<int64_t> extent;
      for (const auto& h : held) extent.push_back(static_cast<int64_t>(h.size()));
      if (std::find(extent.begin(), extent.end(), 0) != extent.end()) continue;
      move_test::for_each_index(extent, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> g;
        for (size_t i = 0; i < idx.size(); ++i) g.push_back(held[i][static_cast<size_t>(idx[i])]);
        auto& slot = ref[static_cast<size_t>(flat_of(g, c.shape))];
        const double x = v(r, g, held);
        slot = std::isnan(slot) || std::isnan(x) ? std::nan("") : combine(op, slot, x);
      });
    }
    return ref;
  }

  void nan_case(const Case& c, gdap_dtype t, gdap_reduce_op op, int64_t holder) {
    const std::vector<double> ref = scatter_reference(c, op, [&](int64_t r, const std::vector<int64_t>& g, const auto& held) {
      return nan_here(holder, r, g, held) ? nan_of(r) : static_cast<double>(value(op, flat_of(g, c.shape), r, false));
    });
    Section source(dims_of(c.layout), t, 0);
    const std::vector<std::vector<int64_t>> mine = held_by(c, rank_);
    source.each([&](int64_t k, const auto& g) {
      const double v = !g ? 5 : nan_here(holder, rank_, *g, mine) ? nan_of(rank_) : static_cast<double>(value(op, flat_of(*g, c.shape), rank_, false));
      store(t, v, source.at(k));
    });
    const std::string what = "NaN " + (holder < 0 ? std::string("everywhere") : "on rank " + std::to_string(holder)) +
                             " dtype float" + std::to_string(t.bits) + " " + op_text(op);
    for (const auto& [rname, rlayout] : result_layouts(c.shape)) {
      Section result(dims_of(rlayout), t, kSentinel);
      if (gdap_reduce_scatter(comm_, source.array, result.array, op) != GDAP_SUCCESS) {
        fail(what + " reduce_scatter to " + rname + ": " + gdap_last_error());
        continue;
      }
      const int64_t wrong = wrong_cells(result, c.shape, ref, op);
      if (wrong > 0) fail(what + " reduce_scatter to " + rname + ": " + std::to_string(wrong) + " cells wrong");
    }
    // Over every axis into a 0-d result: NaN, as np.max of an array holding one.
    const std::vector<gdap_dim> none;
    Section scalar(none, t, kSentinel);
    if (gdap_reduce_axes(comm_, source.array, scalar.array, op, nullptr, 0) != GDAP_SUCCESS) {
      fail(what + " reduce_axes over every axis: " + gdap_last_error());
    } else if (!std::isnan(load(t, scalar.at(0)))) {
      fail(what + " reduce_axes over every axis: " + std::to_string(load(t, scalar.at(0))) + ", not NaN");
    }
  }

  std::vector<gdap_dim> dims_of(const Layout& layout) const {
    std::vector<gdap_dim> dims;
    for (int64_t i = 0; i < layout.ndim(); ++i) dims.push_back(layout.dim(rank_, i));
    return dims;
  }

  // The source: owned cells hold value(global, rank), padding a value that would show if read.
  void fill_source(Section& s, gdap_reduce_op op, const std::vector<int64_t>& shape, bool nonnegative, bool by_rank) {
    s.each([&](int64_t k, const auto& g) {
      store(s.dtype, g ? static_cast<double>(value(op, flat_of(*g, shape), by_rank ? rank_ : 0, nonnegative)) : 5, s.at(k));
    });
  }

  // Result layouts of a shape: replicated (the reduction's global buffer), then layouts whose
  // elements have one owner each (a segment per rank): rows in blocks, last axis cyclic, rows
  // irregular (coordinate 0 empty), rows unstructured, rows padded (its slack may send it back
  // to the global buffer), and on 4 ranks a 2 x 2 grid, block rows x cyclic last axis.
  std::vector<std::pair<std::string, Layout>> result_layouts(const std::vector<int64_t>& shape) const {
    std::vector<std::pair<std::string, Layout>> out;
    const size_t n = shape.size();
    auto along_first = [&](const std::string& kind) {
      Layout l;
      for (size_t i = 0; i < n; ++i) {
        l.axes.push_back(i == 0 ? make_axis(kind, shape[i], nranks_, 7) : move_test::block(shape[i], 1));
      }
      return l;
    };
    out.emplace_back("replicated", along_first("replicated"));
    if (n == 0) return out;
    out.emplace_back("block", along_first("block"));
    if (n > 1) {
      Layout last;
      for (size_t i = 0; i < n; ++i) {
        last.axes.push_back(i + 1 == n ? move_test::cyclic(shape[i], nranks_, 1) : move_test::block(shape[i], 1));
      }
      out.emplace_back("cyclic", std::move(last));
    }
    out.emplace_back("irregular", along_first("irregular"));
    out.emplace_back("unstructured", along_first("unstructured"));
    if (shape[0] >= 2 * nranks_) out.emplace_back("padded", along_first("padded"));  // boundary padding 2 needs room
    if (n > 1 && nranks_ == 4) {
      Layout grid;
      for (size_t i = 0; i < n; ++i) {
        const int64_t g = i == 0 || i + 1 == n ? 2 : 1;
        grid.axes.push_back(i + 1 == n ? move_test::cyclic(shape[i], g, 1) : move_test::block(shape[i], g));
      }
      out.emplace_back("2 x 2", std::move(grid));
    }
    return out;
  }

  // Checks every cell of a result against the reference (flat over `shape`): owned cells equal
  // it, padding keeps the sentinel. Returns the number of wrong cells.
  int64_t wrong_cells(const Section& r, const std::vector<int64_t>& shape, const std::vector<double>& ref,
                      gdap_reduce_op op) const {
    int64_t wrong = 0;
    const double tol = op == GDAP_REDUCE_MEAN ? (r.dtype.bits == 32 ? 1e-5 : 1e-12) : 0;
    r.each([&](int64_t k, const auto& g) {
      const double want = g ? ref[static_cast<size_t>(flat_of(*g, shape))] : kSentinel;
      const double got = load(r.dtype, r.at(k));
      const bool same = got == want || (std::isnan(got) && std::isnan(want)) || std::abs(got - want) <= tol * std::abs(want);
      wrong += same ? 0 : 1;
    });
    return wrong;
  }

  void axes_case(const Case& c, gdap_dtype t, gdap_reduce_op op, const std::vector<int64_t>& axes, bool as_null,
                 bool nonnegative) {
    const size_t n = c.shape.size();
    std::vector<bool> gone(n, false);
    for (int64_t a : axes) gone[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(n) : a)] = true;
    std::vector<int64_t> kept;
    double count = 1;
    for (size_t i = 0; i < n; ++i) {
      if (!gone[i]) kept.push_back(c.shape[i]);
      else count *= static_cast<double>(c.shape[i]);
    }
    // The serial reference over the whole global array.
    int64_t kept_count = 1;
    for (int64_t e : kept) kept_count *= e;
    std::vector<double> ref(static_cast<size_t>(kept_count), identity(op == GDAP_REDUCE_MEAN ? GDAP_REDUCE_SUM : op));
    move_test::for_each_index(c.shape, [&](const std::vector<int64_t>& g) {
      std::vector<int64_t> k;
      for (size_t i = 0; i < n; ++i) {
        if (!gone[i]) k.push_back(g[i]);
      }
      auto& slot = ref[static_cast<size_t>(flat_of(k, kept))];
      slot = combine(op, slot, static_cast<double>(value(op, flat_of(g, c.shape), 0, nonnegative)));
    });
    if (op == GDAP_REDUCE_MEAN) {
      for (double& v : ref) v /= count;
      if (t.bits == 32) {
        for (double& v : ref) v = static_cast<float>(v);
      }
    }
    Section source(dims_of(c.layout), t, 0);
    fill_source(source, op, c.shape, nonnegative, false);
    for (const auto& [rname, rlayout] : result_layouts(kept)) {
      Section result(dims_of(rlayout), t, kSentinel);
      std::string what = "reduce_axes " + c.name + " dtype " + std::to_string(t.code) + "/" + std::to_string(t.bits) +
                         " " + op_text(op) + " axes (";
      for (int64_t a : axes) what += std::to_string(a) + " ";
      what += as_null ? "NULL) to " : ") to " + rname;
      static const int64_t none[1] = {0};  // an empty list, not NULL (NULL reduces every axis)
      const int64_t* list = as_null ? nullptr : axes.empty() ? none : axes.data();
      const gdap_status s = gdap_reduce_axes(comm_, source.array, result.array, op, list,
                                             as_null ? 0 : static_cast<int64_t>(axes.size()));
      if (s != GDAP_SUCCESS) {
        fail(what + ": " + gdap_last_error());
        continue;
      }
      const int64_t wrong = wrong_cells(result, kept, ref, op);
      if (wrong > 0) fail(what + ": " + std::to_string(wrong) + " of " + std::to_string(result.cells()) + " cells wrong");
    }
  }

  // Reduce-scatter: every rank's section holds rank-dependent values; each global element is the
  // op over the ranks holding it (the oracle's ownership of every rank, computed here).
  void scatter_case(const Case& c, gdap_dtype t, gdap_reduce_op op) {
    const std::vector<double> ref = scatter_reference(c, op, [&](int64_t r, const std::vector<int64_t>& g, const auto&) {
      return static_cast<double>(value(op, flat_of(g, c.shape), r, false));
    });
    Section source(dims_of(c.layout), t, 0);
    fill_source(source, op, c.shape, false, true);
    for (const auto& [rname, rlayout] : result_layouts(c.shape)) {
      Section result(dims_of(rlayout), t, kSentinel);
      const std::string what = "reduce_scatter " + c.name + " dtype " + std::to_string(t.code) + "/" +
                               std::to_string(t.bits) + " " + op_text(op) + " to " + rname;
      if (gdap_reduce_scatter(comm_, source.array, result.array, op) != GDAP_SUCCESS) {
        fail(what + ": " + gdap_last_error());
        continue;
      }
      const int64_t wrong = wrong_cells(result, c.shape, ref, op);
      if (wrong > 0) fail(what + ": " + std::to_string(wrong) + " of " + std::to_string(result.cells()) + " cells wrong");
    }
  }

  // One refusal: the call's status on this rank, words its message must hold, the result unchanged.
  template <typename Call>
  void refused(const std::string& what, const Section& result, gdap_status want, const std::string& words, Call&& call) {
    const std::vector<unsigned char> before = result.bytes();
    const gdap_status s = call();
    const std::string message = gdap_last_error();
    if (s != want) fail(what + ": status " + std::to_string(s) + ", want " + std::to_string(want) + " (" + message + ")");
    if (message.find(words) == std::string::npos) fail(what + ": the message lacks '" + words + "': " + message);
    if (result.bytes() != before) fail(what + ": a refused call changed the result");
  }

  void refusals() {
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1}, f32 = {GDAP_DTYPE_FLOAT, 32, 1}, i32 = {GDAP_DTYPE_INT, 32, 1};
    const std::vector<Case> all = cases(nranks_);
    const Case& c3 = all.back();  // 5 x 4 x 3
    Section source(dims_of(c3.layout), f64, 1), isource(dims_of(c3.layout), i32, 1);
    Layout r2;  // 5 x 3 replicated: the reduction over axis 1
    r2.axes = {make_axis("replicated", 5, nranks_, 0), move_test::block(3, 1)};
    Section result(dims_of(r2), f64, kSentinel), r32(dims_of(r2), f32, kSentinel), ri32(dims_of(r2), i32, kSentinel);
    const int64_t one[1] = {1}, three[1] = {3}, repeat[2] = {0, -3}, two[1] = {2};
    gdap_array* const default_source = source.array;
    gdap_array* const default_result = result.array;
    auto axes = [&](const int64_t* list, int64_t n, gdap_array* r = nullptr, const gdap_array* s = nullptr,
                    gdap_reduce_op op = GDAP_REDUCE_SUM) {
      gdap_comm* comm = comm_;
      const gdap_array* from = s ? s : default_source;
      gdap_array* to = r ? r : default_result;
      return [=] { return gdap_reduce_axes(comm, from, to, op, list, n); };
    };
    refused("axis out of range", result, GDAP_ERR_OUT_OF_RANGE, "axes[0] = 3", axes(three, 1));
    refused("repeated axis", result, GDAP_ERR_INVALID_ARGUMENT, "repeats axis 0", axes(repeat, 2));
    refused("dtype mismatch (named)", r32, GDAP_ERR_INVALID_ARGUMENT, "result's dtype float32 differs from source's float64", axes(one, 1, r32.array));
    refused("shape mismatch", result, GDAP_ERR_INVALID_ARGUMENT, "result dimension 1 has size 3", axes(two, 1));
    refused("result ndim", result, GDAP_ERR_INVALID_ARGUMENT, "result has 2 dimensions", axes(nullptr, 0));
    refused("NULL axes with naxes", result, GDAP_ERR_INVALID_ARGUMENT, "axes is NULL but naxes is 1", axes(nullptr, 1));
    refused("mean of int32", ri32, GDAP_ERR_UNSUPPORTED, "op mean needs a float32 or float64",
            axes(one, 1, ri32.array, isource.array, GDAP_REDUCE_MEAN));
    refused("bad op", result, GDAP_ERR_INVALID_ARGUMENT, "op 7", axes(one, 1, nullptr, nullptr, static_cast<gdap_reduce_op>(7)));
    refused("NULL source", result, GDAP_ERR_INVALID_ARGUMENT, "source is NULL",
            [&] { return gdap_reduce_axes(comm_, nullptr, result.array, GDAP_REDUCE_SUM, one, 1); });
    Section whole(dims_of(c3.layout), f64, kSentinel);
    refused("scatter mean", whole, GDAP_ERR_INVALID_ARGUMENT, "op mean is not an element-wise reduce-scatter",
            [&] { return gdap_reduce_scatter(comm_, source.array, whole.array, GDAP_REDUCE_MEAN); });
    refused("scatter shape", result, GDAP_ERR_INVALID_ARGUMENT, "result has 2 dimensions but source has 3",
            [&] { return gdap_reduce_scatter(comm_, source.array, result.array, GDAP_REDUCE_SUM); });
    // A source distribution over more ranks than the communicator has: every rank refuses it.
    Layout wide;
    wide.axes = {move_test::block(11, nranks_ + 1)};
    std::vector<gdap_dim> wide_dims = {wide.axes[0].by_coord[static_cast<size_t>(rank_)]};
    Section bad(wide_dims, f64, 1);
    Section scalar({}, f64, kSentinel);
    refused("comm size mismatch", scalar, GDAP_ERR_PROTOCOL, "source's distribution",
            [&] { return gdap_reduce_axes(comm_, bad.array, scalar.array, GDAP_REDUCE_SUM, nullptr, 0); });
    if (nranks_ < 2) return;
    // Only the last rank passes a bad axis: it reports its own error, the others name it.
    const bool last = rank_ == nranks_ - 1;
    refused("one rank's bad axis", result, last ? GDAP_ERR_OUT_OF_RANGE : GDAP_ERR_REMOTE,
            last ? "axes[0] = 3" : "rank " + std::to_string(nranks_ - 1), axes(last ? three : one, 1));
    // Valid but different axes on rank 1: every rank refuses, naming it.
    Layout r0;  // 4 x 3 replicated: the reduction over axis 0
    r0.axes = {make_axis("replicated", 4, nranks_, 0), move_test::block(3, 1)};
    Section other(dims_of(r0), f64, kSentinel);
    const bool odd = rank_ == 1;
    const int64_t zero[1] = {0};
    refused("different axes", odd ? other : result, GDAP_ERR_INVALID_ARGUMENT, "rank 1 passed",
            axes(odd ? zero : one, 1, odd ? other.array : result.array));
  }

  void fail(const std::string& what) { failures_.push_back("rank " + std::to_string(rank_) + ": " + what); }

  gdap_comm* comm_;
  int64_t rank_, nranks_;
  std::vector<std::string> failures_;
};

}  // namespace reduce_test
