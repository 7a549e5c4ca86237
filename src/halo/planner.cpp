// The halo planner: which boxes of its padding a rank receives from which rank, and which boxes of
// its kept cells it sends (see planner.hpp for the model), and their exchange program. Pure
// computation on the map.
#include "halo/planner.hpp"

#include "core/error.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

namespace gdap::halo {

namespace {

void check_widths(const gdap_map& map, std::span<const int64_t> widths) {
  if (widths.empty()) return;
  if (static_cast<int64_t>(widths.size()) != map.ndim()) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} widths given for a map of {} dimensions", widths.size(), map.ndim());
  }
  for (int64_t i = 0; i < map.ndim(); ++i) {
    const int64_t w = widths[static_cast<size_t>(i)];
    if (w < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "dimension {}: width {} < 0", i, w);
    const gdap_dim& d = map.dim(0, i);
    if (w > 0 && d.dist_type != GDAP_DIST_BLOCK) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "{}: a halo width ({}) is asked, but only 'b' dimensions have padding to exchange",
           dim_label(d, i), w);
    }
  }
}

// Along one axis, a box of a receiver at grid coordinate c is a product of pieces: `extent` cells
// at local `dst` in the receiver's section, copied from local `src` of the section at coordinate
// `source` along the axis.
struct Piece {
  int64_t dst, src, extent, source;
};

// One axis of the exchange. A 'b' section [start, stop) splits into the cells it keeps (side 0:
// owned, less a periodic dimension's boundary padding) and the cells below and above them that
// the exchange fills (sides -1 and +1): communication padding, and on a periodic dimension the
// edge ranks' boundary padding. Each filled cell mirrors one kept cell: communication padding its
// own index, boundary padding the periodic image, g + n below and g - n above, where n = size -
// lower boundary - upper boundary is the period (the interior between the boundary paddings).
class AxisHalo {
 public:
  AxisHalo(const gdap_map& map, int64_t axis, std::span<const int64_t> widths)
      : map_(map), axis_(axis), P_(map.grid_shape[static_cast<size_t>(axis)]) {
    const gdap_dim& first = dim(0);
    block_ = first.dist_type == GDAP_DIST_BLOCK;
    if (!block_) return;
    if (!widths.empty()) cap_ = widths[static_cast<size_t>(axis)];
    if (!is_periodic(first)) return;
    lower_ = boundary_padding_lower(first);
    upper_ = boundary_padding_upper(dim(P_ - 1));
    check_one_period();
    period_ = first.size - lower_ - upper_;
    if (period_ < std::max(lower_, upper_)) {
      fail(GDAP_ERR_INVALID_ARGUMENT,
           "{}: periodic, with boundary padding {} below and {} above around an interior of {} (size {}): a periodic "
           "halo fills each boundary padding from the interior's far end, which must be at least as wide",
           dim_label(first, axis), lower_, upper_, period_, first.size);
    }
  }

  // The pieces a receiver at coordinate c fills on `side` (-1, 0 for the kept cells, +1).
  std::vector<Piece> pieces(int64_t c, int side) const {
    const gdap_dim& d = dim(c);
    if (!block_) {
      if (side != 0) return {};
      return {Piece{0, 0, local_extent(d), c}};
    }
    const auto [keep_lo, keep_hi] = kept(d);
    if (side == 0) {
      if (keep_hi == keep_lo) return {};
      return {Piece{keep_lo - d.start, keep_lo - d.start, keep_hi - keep_lo, c}};
    }
    // The filled cells next to the kept ones, at most cap_ of them (no overflow: all in [0, size]).
    const int64_t lo = side < 0 ? std::max(d.start, keep_lo - std::min(cap_, keep_lo)) : keep_hi;
    const int64_t hi = side < 0 ? keep_lo : keep_hi + std::min(cap_, d.stop - keep_hi);
    std::vector<Piece> out;
    // Boundary padding mirrors the periodic image; the rest (communication padding) itself.
    split(out, d, lo, std::min(hi, lower_), period_);
    split(out, d, std::max(lo, lower_), std::min(hi, d.size - upper_), 0);
    split(out, d, std::max(lo, d.size - upper_), hi, -period_);
    return out;
  }

  // The coordinates whose pieces on `side` may come from coordinate `source` (a superset), ascending:
  // its neighbours, itself, and the two coordinates at each end (which hold or border the boundary
  // padding a periodic image fills).
  std::vector<int64_t> receivers_of(int64_t source, int side) const {
    if (side == 0) return {source};
    std::vector<int64_t> out;
    for (int64_t c : {source - 1, source, source + 1, int64_t{0}, int64_t{1}, P_ - 2, P_ - 1}) {
      if (c >= 0 && c < P_) out.push_back(c);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Whether a receiver at any coordinate fills a cell along this axis.
  bool fills_any() const {
    for (int64_t c = 0; block_ && c < P_; ++c) {
      const auto [keep_lo, keep_hi] = kept(dim(c));
      if (std::min(cap_, keep_lo - dim(c).start) > 0 || std::min(cap_, dim(c).stop - keep_hi) > 0) return true;
    }
    return false;
  }

 private:
  const gdap_dim& dim(int64_t coord) const { return map_.axes[static_cast<size_t>(axis_)].dim(coord); }

  // The global range a section keeps: owned, less the periodic boundary padding, within [start, stop).
  std::pair<int64_t, int64_t> kept(const gdap_dim& d) const {
    const int64_t owned_lo = d.start + comm_padding_lower(d), owned_hi = d.stop - comm_padding_upper(d);
    const int64_t lo = std::clamp(std::max(owned_lo, lower_), d.start, d.stop);
    return {lo, std::max(lo, std::clamp(std::min(owned_hi, d.size - upper_), d.start, d.stop))};
  }

  // Appends the pieces of global cells [lo, hi) of section `d` (at coordinate d.proc_grid_rank),
  // which mirror [lo + shift, hi + shift), kept cells: one piece per owning coordinate. Computed in
  // the mirrored range, which lies in [0, size): no sum leaves int64.
  void split(std::vector<Piece>& out, const gdap_dim& d, int64_t lo, int64_t hi, int64_t shift) const {
    if (lo >= hi) return;
    const std::vector<int64_t>& starts = map_.axes[static_cast<size_t>(axis_)].owned_starts();
    for (int64_t image = lo + shift, end = hi + shift; image < end;) {
      const auto o = (std::upper_bound(starts.begin(), starts.end(), image) - starts.begin()) - 1;
      const int64_t image_end = std::min(end, starts[static_cast<size_t>(o) + 1]);
      out.push_back(Piece{image - shift - d.start, image - dim(o).start, image_end - image, o});
      image = image_end;
    }
  }

  // A periodic halo fills boundary padding from one period, so every rank at an edge coordinate
  // must give the same boundary padding (the protocol lets edge processes differ).
  void check_one_period() const {
    for (const auto& [rank, d] : map_.variants[static_cast<size_t>(axis_)]) {
      const bool at_lower = d.proc_grid_rank == 0, at_upper = d.proc_grid_rank == P_ - 1;
      if ((at_lower && boundary_padding_lower(d) != lower_) || (at_upper && boundary_padding_upper(d) != upper_)) {
        fail(GDAP_ERR_INVALID_ARGUMENT,
             "rank {}, {}: periodic, with boundary padding ({}, {}) where the first rank at grid coordinate {} gives "
             "({}, {}); a periodic halo fills boundary padding from one period, so every rank at an edge must give the "
             "same",
             rank, dim_label(d, axis_), boundary_padding_lower(d), boundary_padding_upper(d), d.proc_grid_rank,
             at_lower ? lower_ : 0, at_upper ? upper_ : 0);
      }
    }
  }

  const gdap_map& map_;
  int64_t axis_, P_;
  bool block_ = false;
  int64_t cap_ = INT64_MAX;
  int64_t lower_ = 0, upper_ = 0, period_ = 0;  // periodic: boundary padding and the interior between
};

std::vector<AxisHalo> axis_halos(const gdap_map& map, std::span<const int64_t> widths) {
  check_widths(map, widths);
  std::vector<AxisHalo> out;
  out.reserve(static_cast<size_t>(map.ndim()));
  for (int64_t i = 0; i < map.ndim(); ++i) out.emplace_back(map, i, widths);
  return out;
}

// Calls f(box, peer) for every combination of one piece per axis, in lexicographic order; peer is
// the rank at the pieces' coordinates, `coords(i, k)` the k-th piece's coordinate along axis i.
template <typename Coord, typename F>
void for_each_box(const std::vector<std::vector<Piece>>& per_axis, const gdap_map& map, Coord&& coords, F&& f) {
  const size_t n = per_axis.size();
  for (const auto& pieces : per_axis) {
    if (pieces.empty()) return;
  }
  std::vector<size_t> at(n, 0);
  for (;;) {
    HaloBox box;
    box.elements = 1;
    int64_t peer = 0;
    for (size_t i = 0; i < n; ++i) {
      const Piece& p = per_axis[i][at[i]];
      box.dst_local.push_back(p.dst);
      box.src_local.push_back(p.src);
      box.extent.push_back(p.extent);
      box.elements *= p.extent;  // within the receiver's section, whose size was checked
      peer += coords(i, at[i]) * map.grid_stride[i];
    }
    f(std::move(box), peer);
    size_t i = n;
    while (i > 0 && at[i - 1] + 1 == per_axis[i - 1].size()) at[--i] = 0;
    if (i == 0) return;
    ++at[i - 1];
  }
}

// Every offset in {-1, 0, 1}^n except 0, in increasing lexicographic order; faces only: those
// with one non-zero entry.
std::vector<std::vector<int>> offsets(size_t n, bool corners) {
  std::vector<std::vector<int>> out;
  std::vector<int> d(n, -1);
  for (;;) {
    const auto nonzero = std::count_if(d.begin(), d.end(), [](int v) { return v != 0; });
    if (nonzero > 0 && (corners || nonzero == 1)) out.push_back(d);
    size_t i = n;
    while (i > 0 && d[i - 1] == 1) d[--i] = -1;
    if (i == 0) return out;
    ++d[i - 1];
  }
}

// Groups (peer, box) pairs, given in offset order, into messages in increasing peer order.
std::vector<HaloMessage> group(std::vector<std::pair<int64_t, HaloBox>> boxes) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<HaloMessage> out;
  for (auto& [peer, box] : boxes) {
    if (out.empty() || out.back().peer != peer) out.push_back(HaloMessage{peer, 0, 0, {}});
    out.back().elements += box.elements;
    out.back().boxes.push_back(std::move(box));
  }
  return out;
}

void set_offsets(std::vector<HaloMessage>& messages) {
  int64_t at = 0;
  for (HaloMessage& m : messages) {
    m.offset = at;
    at += m.elements;
  }
}

}  // namespace

HaloPlan plan_halo(const gdap_map& map, int64_t rank, bool corners, std::span<const int64_t> widths) {
  const std::vector<AxisHalo> axes = axis_halos(map, widths);
  const auto n = static_cast<size_t>(map.ndim());
  HaloPlan plan{rank, map.nranks, map.ndim(), {}, {}, {}};
  std::vector<std::pair<int64_t, HaloBox>> sent, received, own;
  std::vector<std::vector<Piece>> pieces(n);
  std::vector<std::vector<int64_t>> receivers(n);  // sends: the receiver coordinate of each piece
  for (const std::vector<int>& d : offsets(n, corners)) {
    // Receives: this rank's pieces on side d[i] of each axis; the box's source is the peer.
    for (size_t i = 0; i < n; ++i) pieces[i] = axes[i].pieces(map.coord(rank, static_cast<int64_t>(i)), d[i]);
    for_each_box(pieces, map, [&](size_t i, size_t k) { return pieces[i][k].source; }, [&](HaloBox box, int64_t from) {
      (from == rank ? own : received).emplace_back(from, std::move(box));
    });
    // Sends: every receiver's pieces on side d[i] that come from this rank's coordinate.
    for (size_t i = 0; i < n; ++i) {
      const int64_t mine = map.coord(rank, static_cast<int64_t>(i));
      pieces[i].clear();
      receivers[i].clear();
      for (int64_t c : axes[i].receivers_of(mine, d[i])) {
        for (const Piece& p : axes[i].pieces(c, d[i])) {
          if (p.source != mine) continue;
          pieces[i].push_back(p);
          receivers[i].push_back(c);
        }
      }
    }
    for_each_box(pieces, map, [&](size_t i, size_t k) { return receivers[i][k]; }, [&](HaloBox box, int64_t to) {
      if (to != rank) sent.emplace_back(to, std::move(box));
    });
  }
  plan.sends = group(std::move(sent));
  plan.recvs = group(std::move(received));
  plan.local = group(std::move(own));
  set_offsets(plan.sends);
  set_offsets(plan.recvs);
  return plan;
}

bool map_has_halo(const gdap_map& map, std::span<const int64_t> widths) {
  const std::vector<AxisHalo> axes = axis_halos(map, widths);
  return std::any_of(axes.begin(), axes.end(), [](const AxisHalo& a) { return a.fills_any(); });
}

namespace {

// What the engines do with a halo exchange's messages: MPI sends wire messages whose runs average
// 32 bytes or more as datatypes over the section (faster than packing them ourselves; shorter runs
// pack faster, bench/mpi/halo_mpi.c), under a tag of their own.
constexpr exchange::Style kStyle{"halo exchange", 1, 32, false};

// The boxes' segments, one per dimension each, owned by the program.
struct Segments {
  std::vector<exchange::Segment> all;
};

}  // namespace

exchange::Program compile(const HaloPlan& plan, int64_t element_size) {
  auto segments = std::make_shared<Segments>();
  const auto n = static_cast<size_t>(plan.ndim);
  for (const auto* part : {&plan.sends, &plan.recvs, &plan.local}) {
    for (const HaloMessage& m : *part) {
      for (const HaloBox& b : m.boxes) {
        for (size_t i = 0; i < n; ++i) segments->all.push_back({0, b.extent[i], b.src_local[i], b.dst_local[i]});
      }
    }
  }
  exchange::Program program(plan.rank, plan.nranks, plan.ndim, element_size, kStyle);
  const exchange::Segment* next = segments->all.data();
  std::vector<std::span<const exchange::Segment>> lists(n);
  const std::pair<exchange::Part, const std::vector<HaloMessage>*> parts[] = {
      {exchange::Part::send, &plan.sends}, {exchange::Part::recv, &plan.recvs}, {exchange::Part::local, &plan.local}};
  for (const auto& [part, messages] : parts) {
    for (const HaloMessage& m : *messages) {
      program.add_message(part, m.peer);
      for (const HaloBox& b : m.boxes) {
        for (size_t i = 0; i < n; ++i) lists[i] = {next++, 1};
        program.add_set(lists, b.elements);
      }
    }
  }
  program.keep(std::move(segments));
  program.finish();
  return program;
}

}  // namespace gdap::halo
