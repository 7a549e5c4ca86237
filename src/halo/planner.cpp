// The halo planner: which boxes of its padding a rank receives from which neighbour, and which
// boxes of its owned range it sends (see planner.hpp for the model), and their exchange program.
// Pure computation on the map.
#include "halo/planner.hpp"

#include "core/error.hpp"
#include "protocol/dim.hpp"

#include <algorithm>
#include <memory>
#include <utility>

namespace gdap::halo {

namespace {

int64_t wrap(int64_t g, int64_t size) { return size == 0 ? g : ((g % size) + size) % size; }

// The cells filled on each side of dimension `axis` for a dictionary: its communication padding,
// capped.
struct Sides {
  int64_t lower, upper;
};

Sides sides(const gdap_dim& d, std::span<const int64_t> widths, int64_t axis) {
  Sides s{comm_padding_lower(d), comm_padding_upper(d)};
  if (!widths.empty()) {
    const int64_t cap = widths[static_cast<size_t>(axis)];
    s = Sides{std::min(s.lower, cap), std::min(s.upper, cap)};
  }
  return s;
}

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

// The box receiver `rank` gets for neighbour offset `d` (entries -1, 0, 1), and the rank that
// sends it; false if the box is empty (no padding on that side, nothing owned, or no neighbour).
bool box_for(const gdap_map& map, int64_t rank, std::span<const int> d, std::span<const int64_t> widths, HaloBox& box,
             int64_t& source) {
  const auto n = static_cast<size_t>(map.ndim());
  box.dst_local.assign(n, 0);
  box.src_local.assign(n, 0);
  box.extent.assign(n, 0);
  box.elements = 1;
  source = 0;
  std::vector<int64_t> global(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const auto axis = static_cast<int64_t>(i);
    const gdap_dim& rd = map.dim(rank, axis);
    const int64_t coord = map.coord(rank, axis), P = map.grid_shape[i];
    int64_t from = coord;
    if (rd.dist_type != GDAP_DIST_BLOCK) {
      if (d[i] != 0) return false;  // no padding: only 'b' dimensions have neighbours
      box.extent[i] = local_extent(rd);
    } else {
      const Sides s = sides(rd, widths, axis);
      const int64_t L = comm_padding_lower(rd), owned = owned_count(rd);
      const int64_t owned_start = rd.start + L;
      if (d[i] == 0) {
        box.dst_local[i] = L;
        box.extent[i] = owned;
        global[i] = owned_start;
      } else if (d[i] < 0) {
        box.dst_local[i] = L - s.lower;
        box.extent[i] = s.lower;
        global[i] = owned_start - s.lower;
        from = (coord + P - 1) % P;
      } else {
        box.dst_local[i] = L + owned;
        box.extent[i] = s.upper;
        global[i] = owned_start + owned;
        from = (coord + 1) % P;
      }
    }
    if (box.extent[i] == 0) return false;
    box.elements *= box.extent[i];  // within the receiver's section, whose size was checked
    source += from * map.grid_stride[i];
  }
  for (size_t i = 0; i < n; ++i) {
    const gdap_dim& sd = map.dim(source, static_cast<int64_t>(i));
    if (sd.dist_type == GDAP_DIST_BLOCK) box.src_local[i] = wrap(global[i], sd.size) - sd.start;
  }
  return true;
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

// The rank a sender at `rank` serves with offset d (the receiver at c - d), or -1 if none.
int64_t receiver_of(const gdap_map& map, int64_t rank, std::span<const int> d) {
  int64_t r = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const int64_t P = map.grid_shape[i];
    int64_t c = map.coord(rank, static_cast<int64_t>(i)) - d[i];
    if (c < 0 || c >= P) {
      if (!is_periodic(map.dim(rank, static_cast<int64_t>(i)))) return -1;
      c = (c + P) % P;
    }
    r += c * map.grid_stride[i];
  }
  return r;
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
  check_widths(map, widths);
  HaloPlan plan{rank, map.nranks, map.ndim(), {}, {}, {}};
  std::vector<std::pair<int64_t, HaloBox>> sent, received, own;
  for (const std::vector<int>& d : offsets(static_cast<size_t>(map.ndim()), corners)) {
    HaloBox box;
    int64_t source = 0;
    if (box_for(map, rank, d, widths, box, source)) (source == rank ? own : received).emplace_back(source, std::move(box));
    const int64_t receiver = receiver_of(map, rank, d);
    if (receiver < 0 || receiver == rank) continue;
    if (box_for(map, receiver, d, widths, box, source)) {
      if (source != rank) fail(GDAP_ERR_INTERNAL, "halo box of rank {} comes from rank {}, not {}", receiver, source, rank);
      sent.emplace_back(receiver, std::move(box));
    }
  }
  plan.sends = group(std::move(sent));
  plan.recvs = group(std::move(received));
  plan.local = group(std::move(own));
  set_offsets(plan.sends);
  set_offsets(plan.recvs);
  return plan;
}

bool map_has_halo(const gdap_map& map, std::span<const int64_t> widths) {
  check_widths(map, widths);
  for (int64_t r = 0; r < map.nranks; ++r) {
    for (int64_t i = 0; i < map.ndim(); ++i) {
      const gdap_dim& d = map.dim(r, i);
      if (d.dist_type != GDAP_DIST_BLOCK) continue;
      const Sides s = sides(d, widths, i);
      if (s.lower > 0 || s.upper > 0) return true;
    }
  }
  return false;
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
