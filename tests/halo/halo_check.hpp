// Halo exchange cases and their serial reference, shared by the in-process group suite
// (test_halo.cpp), the MPI program (halo_mpi.cpp) and the GPU suite (test_halo_gpu.cpp).
//
// A case is a distribution described per dimension by the cells of its grid ranks (uneven and
// empty allowed), a halo width, boundary padding on the outer sides, and periodic or not. A rank's
// section holds f(global index) in the cells it keeps and a poison in the cells the exchange fills;
// after the exchange every element must be what the reference derived from the protocol text
// (DAP 0.10) says, computed here from the case alone, never from the library: f(g) in kept cells;
// in a communication padding cell f of its own index; in a periodic dimension's boundary padding
// f of the periodic image (g + n below, g - n above, n the interior's length); cells beyond the
// width caps, and corner cells without corners, keep the poison.
//
// No gtest assertions here: a rank records failures and keeps pace with its peers.
#pragma once

#include <gdap/gdap.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace halo_test {

constexpr double kPoison = -7.0;

struct Axis {
  std::vector<int64_t> counts;  // cells per grid rank, boundary padding not included
  int64_t width = 0;            // communication padding wanted between neighbours
  bool periodic = false;
  int64_t boundary = 0;         // boundary padding on both outer sides (periodic: the cells that wrap)
  char type = 'b';              // 'c': a cyclic dimension carried along (counts unused but size)
  int64_t cyclic_size = 0;

  int64_t grid() const { return type == 'b' ? static_cast<int64_t>(counts.size()) : 2; }
  // Owned by grid rank g: its cells, and the boundary padding at the ends.
  int64_t owned(int64_t g) const {
    const int64_t P = grid();
    return counts[static_cast<size_t>(g)] + (g == 0 ? boundary : 0) + (g == P - 1 ? boundary : 0);
  }
  int64_t size() const {
    if (type == 'c') return cyclic_size;
    int64_t n = 2 * boundary;
    for (int64_t k : counts) n += k;
    return n;
  }
  int64_t owned_start(int64_t g) const {
    int64_t at = 0;
    for (int64_t k = 0; k < g; ++k) at += owned(k);
    return at;
  }
  // The padding width between grid ranks g and g + 1: never wider than either owns.
  int64_t pair_width(int64_t g) const { return std::min({width, owned(g), owned(g + 1)}); }
  // The index a cell mirrors: a periodic dimension's boundary padding its image, the rest itself.
  int64_t mirrored(int64_t g) const {
    const int64_t period = size() - 2 * boundary;
    if (!periodic) return g;
    if (g < boundary) return g + period;
    if (g >= size() - boundary) return g - period;
    return g;
  }
};

struct Case {
  std::string name;
  std::vector<Axis> axes;
  bool corners = true;
  std::vector<int64_t> caps;  // width caps (empty: none)
  bool fortran_order = false; // sections in column-major order (non-C strides)

  int64_t nranks() const {
    int64_t n = 1;
    for (const Axis& a : axes) n *= a.grid();
    return n;
  }
};

inline Axis b(std::vector<int64_t> counts, int64_t width, bool periodic = false, int64_t boundary = 0) {
  return Axis{std::move(counts), width, periodic, boundary, 'b', 0};
}
inline Axis c(int64_t size) { return Axis{{}, 0, false, 0, 'c', size}; }  // 2 grid ranks, block_size 1

inline int64_t grid_of(const Axis& a) { return a.grid(); }

inline gdap_dim dim_of(const Axis& a, int64_t g) {
  gdap_dim d = GDAP_DIM_INIT;
  const int64_t P = a.grid();
  if (a.type == 'c') {
    gdap_dim_set_cyclic(&d, a.cyclic_size, P, g, g, 0);
    return d;
  }
  const int64_t lower = g > 0 ? a.pair_width(g - 1) : 0, upper = g < P - 1 ? a.pair_width(g) : 0;
  const int64_t from = a.owned_start(g);
  gdap_dim_set_block(&d, a.size(), P, g, from - lower, from + a.owned(g) + upper);
  gdap_dim_set_padding(&d, g > 0 ? lower : a.boundary, g < P - 1 ? upper : a.boundary);
  if (a.periodic) gdap_dim_set_periodic(&d, 1);
  return d;
}

// Rank `rank`'s dictionaries (grid coordinates in C order).
inline std::vector<gdap_dim> dims_of(const Case& c, int64_t rank) {
  std::vector<gdap_dim> dims(c.axes.size());
  int64_t rest = rank;
  for (size_t i = c.axes.size(); i-- > 0;) {
    const int64_t P = grid_of(c.axes[i]);
    dims[i] = dim_of(c.axes[i], rest % P);
    rest /= P;
  }
  return dims;
}

// Every rank's dictionaries, rank-major, as gdap_map_create takes them.
inline std::vector<gdap_dim> all_dims(const Case& c) {
  std::vector<gdap_dim> all;
  for (int64_t r = 0; r < c.nranks(); ++r) {
    const auto d = dims_of(c, r);
    all.insert(all.end(), d.begin(), d.end());
  }
  return all;
}

inline double value_of(const std::vector<int64_t>& global) {
  double v = 1;
  for (int64_t g : global) v = v * 1000 + static_cast<double>(g);
  return v;
}

// A rank's section on the host: its dictionaries, shape, strides and elements.
struct Section {
  std::vector<gdap_dim> dims;
  std::vector<int64_t> shape, strides;
  std::vector<double> data;
  int64_t count = 1;
};

// Where local index `at` of the section stands along each dimension.
enum class Place { owned, halo, outside };

struct Reference {
  const Case& c;
  const gdap_map* map;  // unused by the reference: kept so callers need not change
  int64_t rank;
  double shift = 0;  // added to every owned value (a repainted section)

  // The global index at a local index along dimension i (from the case, not the library).
  int64_t global_of(const gdap_dim& d, size_t i, int64_t local) const {
    if (c.axes[i].type == 'c') return local * d.proc_grid_size + d.proc_grid_rank;  // block_size 1
    return d.start + local;
  }

  // Per dimension: kept, a cell the exchange fills, or one it leaves (beyond the cap).
  Place place(const gdap_dim& d, size_t i, int64_t local) const {
    const Axis& a = c.axes[i];
    if (a.type != 'b') return Place::owned;
    const int64_t g = d.proc_grid_rank;
    const int64_t from = a.owned_start(g), to = from + a.owned(g);
    // Kept: owned, less a periodic dimension's boundary padding.
    const int64_t kept_lo = a.periodic ? std::max(from, a.boundary) : from;
    const int64_t kept_hi = std::max(kept_lo, a.periodic ? std::min(to, a.size() - a.boundary) : to);
    const int64_t x = d.start + local;
    if (x >= kept_lo && x < kept_hi) return Place::owned;
    const int64_t cap = c.caps.empty() ? INT64_MAX : c.caps[i];
    if (x < kept_lo) return kept_lo - x <= cap ? Place::halo : Place::outside;
    return x - kept_hi < cap ? Place::halo : Place::outside;
  }

  // The value element `local` must hold after the exchange, and whether it is kept.
  double expected(const Section& s, const std::vector<int64_t>& local, bool& owned) const {
    int64_t halos = 0;
    bool outside = false;
    for (size_t i = 0; i < local.size(); ++i) {
      const Place p = place(s.dims[i], i, local[i]);
      halos += p == Place::halo;
      outside = outside || p == Place::outside;
    }
    owned = halos == 0 && !outside;
    if (outside || (halos > 1 && !c.corners)) return kPoison;
    std::vector<int64_t> global(local.size());
    for (size_t i = 0; i < local.size(); ++i) global[i] = c.axes[i].mirrored(global_of(s.dims[i], i, local[i]));
    return value_of(global) + shift;
  }
};

// Calls f(local, offset) for each element of the section, in C order of local indices.
template <typename F>
void for_each_element(const Section& s, F&& f) {
  for (int64_t e : s.shape) {
    if (e == 0) return;
  }
  std::vector<int64_t> local(s.shape.size(), 0);
  for (;;) {
    int64_t offset = 0;
    for (size_t i = 0; i < local.size(); ++i) offset += local[i] * s.strides[i];
    f(local, offset);
    size_t i = local.size();
    while (i > 0 && local[i - 1] + 1 == s.shape[i - 1]) local[--i] = 0;
    if (i == 0) return;
    ++local[i - 1];
  }
}

// Rank `rank`'s section, painted: owned elements f(g) + shift, padding the poison.
inline Section make_section(const Case& c, const gdap_map* map, int64_t rank, double shift = 0) {
  Section s;
  s.dims = dims_of(c, rank);
  for (const gdap_dim& d : s.dims) {
    int64_t e = 0;
    gdap_dim_local_extent(&e, &d);
    s.shape.push_back(e);
    s.count *= e;
  }
  s.strides.assign(s.shape.size(), 1);
  if (c.fortran_order) {
    for (size_t i = 1; i < s.shape.size(); ++i) s.strides[i] = s.strides[i - 1] * std::max<int64_t>(s.shape[i - 1], 1);
  } else {
    for (size_t i = s.shape.size(); i-- > 1;) s.strides[i - 1] = s.strides[i] * std::max<int64_t>(s.shape[i], 1);
  }
  s.data.assign(static_cast<size_t>(std::max<int64_t>(s.count, 1)), kPoison);
  const Reference ref{c, map, rank, shift};
  for_each_element(s, [&](const std::vector<int64_t>& local, int64_t offset) {
    bool owned = false;
    const double v = ref.expected(s, local, owned);
    if (owned) s.data[static_cast<size_t>(offset)] = v;
  });
  return s;
}

inline std::string text(const std::vector<int64_t>& v) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  return out.str() + ")";
}

// Failures of rank `rank`'s section after the exchange (at most a few); `touched`: whether the
// exchange ran (false: every padding cell must still be the poison); `shift`: the painting's.
inline std::vector<std::string> check(const Case& c, const gdap_map* map, int64_t rank, const Section& s, bool touched,
                                      double shift = 0) {
  std::vector<std::string> failures;
  const Reference ref{c, map, rank, shift};
  for_each_element(s, [&](const std::vector<int64_t>& local, int64_t offset) {
    bool owned = false;
    double want = ref.expected(s, local, owned);
    if (!touched && !owned) want = kPoison;
    const double got = s.data[static_cast<size_t>(offset)];
    if (got != want && failures.size() < 8) {
      std::ostringstream out;
      out << c.name << ": rank " << rank << ", local " << text(local) << (owned ? " (owned)" : " (padding)")
          << ": got " << got << ", want " << want;
      failures.push_back(out.str());
    }
  });
  return failures;
}

inline gdap_dtype float64() { return gdap_dtype{GDAP_DTYPE_FLOAT, 64, 1}; }

// The table: 1-d to 3-d, uneven and empty blocks, periodic on some dimensions, corners on and
// off, widths > 1 and caps, a cyclic dimension carried along, 1x1 grids wrapping onto themselves,
// column-major sections. `nranks` picks the cases of that group size.
inline std::vector<Case> cases(int64_t nranks) {
  std::vector<Case> all = {
      {"1d_two_ranks", {b({5, 4}, 1)}},
      {"1d_periodic_width2", {b({5, 4}, 2, true, 2)}},
      {"1d_boundary_padding", {b({6, 5}, 2, false, 1)}},
      {"1d_single_rank_periodic", {b({7}, 2, true, 2)}},
      {"2d_single_rank_periodic_corners", {b({5}, 1, true, 1), b({4}, 2, true, 2)}},
      {"2d_single_rank_periodic_faces", {b({5}, 1, true, 1), b({4}, 2, true, 2)}, false},
      {"2d_mixed_periodic_corners", {b({3, 4}, 1, true, 1), b({6}, 2, false)}},
      {"2d_one_periodic_wrap_2x1", {b({4, 3}, 1), b({5}, 1, true, 1)}},
      {"2d_b_by_c", {b({4, 3}, 2), c(5)}},
      {"3d_faces", {b({3, 3}, 1, true, 1), b({4}, 1), b({2}, 1, true, 1)}, false},
      {"3d_corners_fortran", {b({3, 3}, 1, true, 1), b({4}, 1, true, 1), b({2}, 1, true, 1)}, true, {}, true},
      {"1d_uneven_empty_periodic", {b({3, 0, 4}, 2, true, 2)}},
      {"2d_3x1_empty_middle", {b({3, 0, 4}, 1), b({5}, 1, true, 1)}},
      {"1d_periodic_three", {b({3, 2, 4}, 2, true, 2)}},
      {"1d_capped", {b({5, 0, 6}, 3, true, 3)}, true, {1}},
      {"2d_2x2_periodic_corners", {b({3, 4}, 1, true, 1), b({2, 3}, 1, true, 1)}},
      {"2d_2x2_faces", {b({3, 4}, 2, true, 2), b({3, 3}, 1)}, false},
      {"2d_2x2_empty_block", {b({3, 0}, 1), b({4, 4}, 2, true, 2)}},
      {"2d_4x1_periodic_width3", {b({3, 4, 3, 5}, 3, true, 3), b({6}, 1)}},
      {"3d_2x2x1_capped_corners", {b({4, 3}, 2, true, 2), b({3, 3}, 2), b({5}, 2, true, 2)}, true, {1, 2, 1}},
      {"3d_1x2x2_fortran_faces", {b({4}, 1, true, 1), b({2, 3}, 1, true, 1), b({3, 2}, 1)}, false, {}, true},
      // each side's boundary padding (2) mirrors cells of two ranks
      {"1d_periodic_image_on_two_ranks", {b({1, 1, 1}, 1, true, 2)}},
      // rank 0 owns only boundary padding: rank 1's halo holds it, mirrored from rank 1 itself
      {"1d_periodic_boundary_in_a_halo", {b({0, 3}, 2, true, 2)}},
      {"2d_periodic_boundary_without_halos", {b({4, 4}, 0, true, 1), b({3}, 0, true, 2)}},
      {"2d_periodic_boundary_in_halos_2x2", {b({0, 3}, 2, true, 2), b({1, 1}, 1, true, 2)}},
  };
  std::vector<Case> out;
  for (Case& k : all) {
    if (k.nranks() == nranks) out.push_back(std::move(k));
  }
  return out;
}

}  // namespace halo_test
