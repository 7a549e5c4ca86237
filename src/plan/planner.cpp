// Assembling N-d plans from per-dimension overlaps (see plan.hpp): the messages of a rank are the
// Cartesian product of its per-dimension peer lists, so a rank costs its own overlaps plus
// O(ndim) per message, and the whole-plan counts never touch a segment twice.
#include "plan/planner.hpp"

#include "core/checked.hpp"
#include "core/dtype.hpp"
#include "core/setting.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

namespace gdap::plan {
namespace {

// Per message of the product: its peer rank, its per-dimension peer indices and its counts.
struct Product {
  int64_t peer;
  const std::vector<size_t>& index;
  int64_t elements;
  int64_t blocks;
  int64_t runs;
};

// Calls f(const Product&) for every tuple of per-dimension peers, in increasing peer rank (C
// order over coordinates is increasing rank). `peer_map` gives the peers' grid strides.
template <typename F>
void for_each_product(const std::vector<const AxisOverlap*>& axes, const gdap_map& peer_map, F&& f) {
  const size_t n = axes.size();
  for (const AxisOverlap* a : axes) {
    if (a->peers.empty()) return;
  }
  std::vector<size_t> index(n, 0);
  for (;;) {
    int64_t peer = 0, elements = 1, blocks = 1, runs = 1;
    size_t last_split = n;  // the last dimension that is not whole (n: none)
    for (size_t i = 0; i < n; ++i) {
      const AxisPeer& p = axes[i]->peers[index[i]];
      peer += p.coord * peer_map.grid_stride[i];
      elements = checked_mul(elements, p.elements, "elements in a message");
      blocks = checked_mul(blocks, p.count, "blocks in a message");
      if (!p.whole) last_split = i;
    }
    if (last_split < n) {
      for (size_t i = 0; i < last_split; ++i) runs = checked_mul(runs, axes[i]->peers[index[i]].elements, "runs");
      runs = checked_mul(runs, axes[last_split]->peers[index[last_split]].count, "runs");
    }
    f(Product{peer, index, elements, blocks, runs});
    size_t i = n;
    while (i > 0 && index[i - 1] + 1 == axes[i - 1]->peers.size()) index[--i] = 0;
    if (i == 0) return;
    ++index[i - 1];
  }
}

std::vector<const AxisOverlap*> raw(const std::vector<std::shared_ptr<const AxisOverlap>>& axes) {
  std::vector<const AxisOverlap*> out;
  for (const auto& a : axes) out.push_back(a.get());
  return out;
}

// Adds one message's counts to a stats record: `kind` picks the send, recv or local fields.
void count(RankStats& s, Part kind, int64_t elements, int64_t blocks, int64_t runs, int64_t element_size) {
  const int64_t bytes = checked_mul(elements, element_size, "bytes in a message");
  switch (kind) {
    case Part::send:
      s.send_messages += 1;
      s.send_elements = checked_add(s.send_elements, elements, "elements sent");
      s.send_bytes = checked_add(s.send_bytes, bytes, "bytes sent");
      s.send_blocks = checked_add(s.send_blocks, blocks, "blocks sent");
      s.send_runs = checked_add(s.send_runs, runs, "runs sent");
      return;
    case Part::recv:
      s.recv_messages += 1;
      s.recv_elements = checked_add(s.recv_elements, elements, "elements received");
      s.recv_bytes = checked_add(s.recv_bytes, bytes, "bytes received");
      s.recv_blocks = checked_add(s.recv_blocks, blocks, "blocks received");
      s.recv_runs = checked_add(s.recv_runs, runs, "runs received");
      return;
    case Part::local:
      s.local_elements = checked_add(s.local_elements, elements, "elements copied locally");
      s.local_bytes = checked_add(s.local_bytes, bytes, "bytes copied locally");
      s.local_blocks = checked_add(s.local_blocks, blocks, "blocks copied locally");
      s.local_runs = checked_add(s.local_runs, runs, "runs copied locally");
      return;
  }
}

// Field-wise combination of two records (sum or max).
template <typename Op>
void combine(RankStats& into, const RankStats& s, Op op) {
  int64_t* a[] = {&into.send_messages, &into.recv_messages, &into.send_elements, &into.recv_elements,
                  &into.local_elements, &into.send_bytes, &into.recv_bytes, &into.local_bytes,
                  &into.send_blocks, &into.recv_blocks, &into.local_blocks, &into.send_runs,
                  &into.recv_runs, &into.local_runs};
  const int64_t b[] = {s.send_messages, s.recv_messages, s.send_elements, s.recv_elements, s.local_elements,
                       s.send_bytes, s.recv_bytes, s.local_bytes, s.send_blocks, s.recv_blocks,
                       s.local_blocks, s.send_runs, s.recv_runs, s.local_runs};
  for (size_t k = 0; k < std::size(a); ++k) *a[k] = op(*a[k], b[k]);
}

// Calls f(source rank, const Product&) for every message of the whole plan, local ones included
// (the product's peer is a destination role), from every coordinate's source overlaps `sends`.
template <typename F>
void for_each_message(const gdap_map& src, const gdap_map& dst, const std::vector<std::vector<AxisOverlap>>& sends,
                      F&& f) {
  std::vector<const AxisOverlap*> axes(sends.size());
  for (int64_t r = 0; r < src.nranks; ++r) {
    for (size_t i = 0; i < sends.size(); ++i) axes[i] = &sends[i][static_cast<size_t>(src.coord(r, static_cast<int64_t>(i)))];
    for_each_product(axes, dst, [&](const Product& p) { f(r, p); });
  }
}

// Checks that `roles` is empty or a permutation of 0..n-1 and returns its inverse (empty for empty).
std::vector<int64_t> inverse_of(const std::vector<int64_t>& roles, int64_t n) {
  if (roles.empty()) return {};
  if (static_cast<int64_t>(roles.size()) != n) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "roles has {} entries but the plan has {} ranks (one role per rank)", roles.size(), n);
  }
  std::vector<int64_t> holders(roles.size(), -1);
  for (size_t r = 0; r < roles.size(); ++r) {
    const int64_t role = roles[r];
    if (role < 0 || role >= n) fail(GDAP_ERR_INVALID_ARGUMENT, "roles[{}] = {} is outside [0, {})", r, role, n);
    int64_t& holder = holders[static_cast<size_t>(role)];
    if (holder >= 0) fail(GDAP_ERR_INVALID_ARGUMENT, "roles[{}] = {} repeats roles[{}] (roles must be a permutation)", r, role, holder);
    holder = static_cast<int64_t>(r);
  }
  return holders;
}

void check_element_size(int64_t element_size) {
  if (element_size < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "element size ({} bytes) must be >= 1", element_size);
}

}  // namespace

namespace {

std::optional<RunsLimit>& set_limit() {
  static std::optional<RunsLimit> limit;  // set_max_plan_runs: ahead of the environment
  return limit;
}

}  // namespace

void set_max_plan_runs(int64_t runs, std::string set_by) {
  if (runs < 1) fail(GDAP_ERR_INVALID_ARGUMENT, "{} ({}) must be >= 1 (runs a plan may list)", set_by, runs);
  set_limit() = RunsLimit{runs, std::move(set_by)};
}

RunsLimit max_plan_runs() {
  if (set_limit()) return *set_limit();
  const std::optional<int64_t> runs = whole_setting(
      {"GDAP_PLAN_MAX_RUNS", 1, INT64_MAX, "a whole number from 1 to 9223372036854775807 (runs a plan may list)"});
  return {runs.value_or(kDefaultMaxPlanRuns), "GDAP_PLAN_MAX_RUNS"};
}

namespace {

int64_t saturating_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

// At most how many runs listing one coordinate's overlap along a dimension holds: a piece ends where
// a run of either side ends, so no more than the walked coordinate's runs plus every run of the
// other side (a destination's replicas each count as runs there), and no more than the walked
// coordinate's indices times the pieces one index yields on the other side (its replicas: every
// index of a source coordinate goes to each replica of a replicated destination).
int64_t runs_bound(const AxisSide& walked, const AxisSide& other, int64_t coord) {
  const int64_t owned = walked.owned(coord), per_index = other.pieces_per_index();
  const int64_t pieces = owned > INT64_MAX / per_index ? INT64_MAX : owned * per_index;
  return std::min(pieces, saturating_add(walked.runs(coord), other.total_runs()));
}

// At most how many runs listing every source coordinate's overlap along a dimension holds. The
// source's runs are disjoint (each index is sent by one coordinate: 'b', 'c', and 'u' by its
// primary holder), and a piece begins where a source run or a destination run (replica) begins,
// so each destination run starts at most one extra piece over all coordinates together: the pieces
// are the common refinement of the two sides, no more than src.total_runs() + dst.total_runs()
// (tight for 'b' -> 'b': P + Q - 1). The per-coordinate sum can be smaller (few indices), so the
// lesser of the two.
int64_t all_runs_bound(const AxisSide& src, const AxisSide& dst) {
  int64_t per_coordinate = 0;
  for (int64_t c = 0; c < src.grid_size(); ++c) per_coordinate = saturating_add(per_coordinate, runs_bound(src, dst, c));
  return std::min(per_coordinate, saturating_add(src.total_runs(), dst.total_runs()));
}

// Why a dimension of these kinds lists many runs, and what helps.
std::string runs_advice(int32_t src_type, int32_t dst_type) {
  if (src_type == GDAP_DIST_CYCLIC || dst_type == GDAP_DIST_CYCLIC) {
    return "a 'c' dimension lists one run per block (one per index for block size 1); use larger blocks or raise "
           "the limit";
  }
  if (src_type == GDAP_DIST_UNSTRUCTURED || dst_type == GDAP_DIST_UNSTRUCTURED) {
    return "a 'u' dimension lists one run per held index; raise the limit";
  }
  return "a 'b' dimension lists about one run per rank on each side; raise the limit";
}

}  // namespace

std::string Planner::kinds(int64_t axis) const {
  const auto k = static_cast<size_t>(axis);
  return fmt::format("('{}' source, '{}' destination)", static_cast<char>(src_axes_[k].dist_type()),
                     static_cast<char>(dst_axes_[k].dist_type()));
}

void Planner::check_runs(int64_t runs, const std::string& what, int64_t axis) const {
  const RunsLimit limit = max_plan_runs();
  if (runs <= limit.runs) return;
  const std::string advice =
      axis < 0 ? "no one dimension goes over the limit alone, their sum does; raise the limit"
               : fmt::format("dimension {} {} drives it: {}", axis, kinds(axis),
                             runs_advice(src_axes_[static_cast<size_t>(axis)].dist_type(),
                                         dst_axes_[static_cast<size_t>(axis)].dist_type()));
  fail(GDAP_ERR_NO_MEMORY, "planning this redistribution would list up to {} runs ({}) at once, more than the limit "
       "of {} runs ({}; each run takes about {} bytes): {}", runs, what, limit.runs, limit.set_by,
       sizeof(Segment) + sizeof(int64_t), advice);
}

Planner::Planner(const gdap_map& src, const gdap_map& dst, std::vector<int64_t> roles)
    : src_(&src), dst_(&dst), nranks_(std::max(src.nranks, dst.nranks)), roles_(std::move(roles)) {
  holders_ = inverse_of(roles_, nranks_);
  if (src.ndim() != dst.ndim()) {
    fail(GDAP_ERR_INVALID_ARGUMENT,
         "the source has {} dimensions ({}) but the destination has {} ({}); a redistribution keeps the global shape",
         src.ndim(), shape_text(src.global_shape), dst.ndim(), shape_text(dst.global_shape));
  }
  for (int64_t i = 0; i < src.ndim(); ++i) {
    const auto k = static_cast<size_t>(i);
    if (src.global_shape[k] != dst.global_shape[k]) {
      fail(GDAP_ERR_INVALID_ARGUMENT,
           "dimension {}: the source's size ({}) != the destination's ({}); a redistribution keeps the global shape "
           "(source {}, destination {})",
           i, src.global_shape[k], dst.global_shape[k], shape_text(src.global_shape), shape_text(dst.global_shape));
    }
  }
  src_axes_.reserve(src.axes.size());
  dst_axes_.reserve(dst.axes.size());
  for (size_t k = 0; k < src.axes.size(); ++k) {
    src_axes_.emplace_back(src.axes[k], true);
    dst_axes_.emplace_back(dst.axes[k], false);
    // Both sides hold exactly [0, size) along every dimension (the maps checked it, unstructured
    // indices included), so every index one side holds the other holds too.
  }
}

AxisOverlap Planner::send_overlap(int64_t axis, int64_t src_coord) const {
  if (axis < 0 || axis >= ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", axis, ndim());
  const AxisSide& s = src_axes_[static_cast<size_t>(axis)];
  if (src_coord < 0 || src_coord >= s.grid_size()) {
    fail(GDAP_ERR_OUT_OF_RANGE, "dimension {}: source grid coordinate {} is outside [0, {})", axis, src_coord,
         s.grid_size());
  }
  check_runs(runs_bound(s, dst_axes_[static_cast<size_t>(axis)], src_coord),
             fmt::format("dimension {} {}, source grid coordinate {}", axis, kinds(axis), src_coord), axis);
  return plan::send_overlap(s, dst_axes_[static_cast<size_t>(axis)], src_coord);
}

AxisOverlap Planner::recv_overlap(int64_t axis, int64_t dst_coord) const {
  if (axis < 0 || axis >= ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", axis, ndim());
  const AxisSide& d = dst_axes_[static_cast<size_t>(axis)];
  if (dst_coord < 0 || dst_coord >= d.grid_size()) {
    fail(GDAP_ERR_OUT_OF_RANGE, "dimension {}: destination grid coordinate {} is outside [0, {})", axis, dst_coord,
         d.grid_size());
  }
  check_runs(runs_bound(d, src_axes_[static_cast<size_t>(axis)], dst_coord),
             fmt::format("dimension {} {}, destination grid coordinate {}", axis, kinds(axis), dst_coord), axis);
  return plan::recv_overlap(src_axes_[static_cast<size_t>(axis)], d, dst_coord);
}

RankPlan Planner::assemble(int64_t rank, AxesOf send_axes, AxesOf recv_axes) const {
  RankPlan plan;
  plan.rank_ = rank;
  plan.nranks_ = nranks_;
  plan.ndim_ = ndim();
  plan.send_axes_ = std::move(send_axes);
  plan.recv_axes_ = std::move(recv_axes);
  const auto n = static_cast<size_t>(ndim());
  auto add = [&](Part part, int64_t peer, const Product& p) {
    auto& list = plan.messages_[RankPlan::index(part)];
    const int64_t offset = list.empty() || part == Part::local ? 0 : list.back().offset + list.back().elements;
    list.push_back({peer, p.elements, p.blocks, p.runs, offset});
    for (size_t i = 0; i < n; ++i) plan.axis_peer_[RankPlan::index(part)].push_back(static_cast<int64_t>(p.index[i]));
  };
  if (rank < src_->nranks) {
    for_each_product(raw(plan.send_axes_), *dst_, [&](const Product& p) {
      const int64_t peer = holder(p.peer);
      add(peer == rank ? Part::local : Part::send, peer, p);
    });
    if (!roles_.empty()) plan.sort_by_peer(Part::send);  // roles' holders need not increase with the roles
  }
  if (role(rank) < dst_->nranks) {
    for_each_product(raw(plan.recv_axes_), *src_, [&](const Product& p) {
      if (p.peer != rank) add(Part::recv, p.peer, p);
    });
  }
  return plan;
}

void RankPlan::sort_by_peer(Part part) {
  auto& list = messages_[index(part)];
  auto& peers = axis_peer_[index(part)];
  const auto n = static_cast<size_t>(ndim_);
  std::vector<size_t> order(list.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return list[a].peer < list[b].peer; });
  std::vector<Message> sorted;
  std::vector<int64_t> sorted_peers;
  int64_t offset = 0;
  for (size_t k : order) {
    sorted.push_back(list[k]);
    sorted.back().offset = offset;
    offset += list[k].elements;
    sorted_peers.insert(sorted_peers.end(), peers.begin() + static_cast<ptrdiff_t>(k * n),
                        peers.begin() + static_cast<ptrdiff_t>((k + 1) * n));
  }
  list = std::move(sorted);
  peers = std::move(sorted_peers);
}

RankPlan Planner::plan_rank(int64_t rank) const {
  if (rank < 0 || rank >= nranks_) fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is outside [0, {})", rank, nranks_);
  AxesOf send_axes, recv_axes;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (rank < src_->nranks) send_axes.push_back(std::make_shared<AxisOverlap>(send_overlap(i, src_->coord(rank, i))));
    if (role(rank) < dst_->nranks) recv_axes.push_back(std::make_shared<AxisOverlap>(recv_overlap(i, dst_->coord(role(rank), i))));
  }
  return assemble(rank, std::move(send_axes), std::move(recv_axes));
}

std::vector<RankPlan> Planner::plan_all() const {
  const auto n = static_cast<size_t>(ndim());
  std::vector<AxesOf> send_cache(n), recv_cache(n);  // [dimension][coordinate], filled on first use
  for (size_t i = 0; i < n; ++i) {
    send_cache[i].resize(static_cast<size_t>(src_axes_[i].grid_size()));
    recv_cache[i].resize(static_cast<size_t>(dst_axes_[i].grid_size()));
  }
  std::vector<RankPlan> plans;
  plans.reserve(static_cast<size_t>(nranks_));
  for (int64_t r = 0; r < nranks_; ++r) {
    AxesOf send_axes, recv_axes;
    for (size_t i = 0; i < n; ++i) {
      const auto axis = static_cast<int64_t>(i);
      if (r < src_->nranks) {
        auto& slot = send_cache[i][static_cast<size_t>(src_->coord(r, axis))];
        if (!slot) slot = std::make_shared<AxisOverlap>(send_overlap(axis, src_->coord(r, axis)));
        send_axes.push_back(slot);
      }
      if (role(r) < dst_->nranks) {
        const int64_t coord = dst_->coord(role(r), axis);
        auto& slot = recv_cache[i][static_cast<size_t>(coord)];
        if (!slot) slot = std::make_shared<AxisOverlap>(recv_overlap(axis, coord));
        recv_axes.push_back(slot);
      }
    }
    plans.push_back(assemble(r, std::move(send_axes), std::move(recv_axes)));
  }
  return plans;
}

std::vector<std::vector<AxisOverlap>> Planner::all_send_overlaps() const {
  std::vector<std::vector<AxisOverlap>> sends(static_cast<size_t>(ndim()));
  int64_t all = 0, largest = 0, driver = -1;  // every coordinate's overlaps are held at once
  for (size_t i = 0; i < sends.size(); ++i) {
    const int64_t runs = all_runs_bound(src_axes_[i], dst_axes_[i]);
    all = saturating_add(all, runs);
    if (runs > largest) {
      largest = runs;
      driver = static_cast<int64_t>(i);
    }
  }
  // Name the dimension only when it alone goes over the limit (else it is their sum).
  if (largest <= max_plan_runs().runs) driver = -1;
  check_runs(all, "every source grid coordinate's overlaps, held together for the whole plan", driver);
  for (size_t i = 0; i < sends.size(); ++i) {
    for (int64_t c = 0; c < src_axes_[i].grid_size(); ++c) sends[i].push_back(send_overlap(static_cast<int64_t>(i), c));
  }
  return sends;
}

std::vector<int64_t> Planner::keeping_roles() const {
  struct Kept {
    int64_t elements, rank, role;
  };
  std::vector<Kept> pairs;
  for_each_message(*src_, *dst_, all_send_overlaps(), [&](int64_t r, const Product& p) { pairs.push_back({p.elements, r, p.peer}); });
  std::sort(pairs.begin(), pairs.end(), [](const Kept& a, const Kept& b) {
    if (a.elements != b.elements) return a.elements > b.elements;
    return a.rank != b.rank ? a.rank < b.rank : a.role < b.role;
  });
  std::vector<int64_t> roles(static_cast<size_t>(nranks_), -1);
  std::vector<bool> taken(static_cast<size_t>(nranks_), false);
  for (const Kept& k : pairs) {
    if (roles[static_cast<size_t>(k.rank)] >= 0 || taken[static_cast<size_t>(k.role)]) continue;
    roles[static_cast<size_t>(k.rank)] = k.role;
    taken[static_cast<size_t>(k.role)] = true;
  }
  int64_t next = 0;  // the roles nobody keeps anything of, in increasing order, to the ranks left
  for (int64_t& role : roles) {
    if (role >= 0) continue;
    while (taken[static_cast<size_t>(next)]) ++next;
    role = next;
    taken[static_cast<size_t>(next)] = true;
  }
  return roles;
}

PlanStats Planner::stats(int64_t element_size) const {
  check_element_size(element_size);
  PlanStats out;
  out.nranks = nranks_;
  out.element_size = element_size;
  out.ranks.resize(static_cast<size_t>(nranks_));
  for_each_message(*src_, *dst_, all_send_overlaps(), [&](int64_t r, const Product& p) {
    const int64_t to = holder(p.peer);
    if (to == r) {
      count(out.ranks[static_cast<size_t>(r)], Part::local, p.elements, p.blocks, p.runs, element_size);
      return;
    }
    count(out.ranks[static_cast<size_t>(r)], Part::send, p.elements, p.blocks, p.runs, element_size);
    count(out.ranks[static_cast<size_t>(to)], Part::recv, p.elements, p.blocks, p.runs, element_size);
  });
  for (const RankStats& s : out.ranks) {
    combine(out.total, s, [](int64_t a, int64_t b) { return checked_add(a, b, "plan total"); });
    combine(out.max, s, [](int64_t a, int64_t b) { return std::max(a, b); });
  }
  return out;
}

size_t RankPlan::slot(Part part, const Message& m) const {
  const auto& list = messages_[index(part)];
  const std::less<const Message*> less;
  if (list.empty() || less(&m, list.data()) || !less(&m, list.data() + list.size())) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the message is not one of rank {}'s messages of this part", rank_);
  }
  return static_cast<size_t>(&m - list.data());
}

std::span<const Segment> RankPlan::segments(Part part, const Message& m, int64_t axis) const {
  const size_t k = slot(part, m);
  if (axis < 0 || axis >= ndim_) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", axis, ndim_);
  const AxisOverlap& overlap = *axes(part)[static_cast<size_t>(axis)];
  const auto n = static_cast<size_t>(ndim_);
  return overlap.segments_of(overlap.peers[static_cast<size_t>(axis_peer_[index(part)][k * n + static_cast<size_t>(axis)])]);
}

std::vector<std::span<const Segment>> RankPlan::lists(Part part, const Message& m) const {
  std::vector<std::span<const Segment>> out;
  for (int64_t i = 0; i < ndim_; ++i) out.push_back(segments(part, m, i));
  return out;
}

exchange::Program RankPlan::program(int64_t element_size, const exchange::Style& style) const {
  check_element_size(element_size);
  exchange::Program p(rank_, nranks_, ndim_, element_size, style);
  for (Part part : {Part::send, Part::recv, Part::local}) {
    for (const Message& m : messages(part)) {
      p.add_message(part, m.peer);
      p.add_set(lists(part, m), m.elements);
    }
  }
  for (const auto& axis : send_axes_) p.keep(axis);
  for (const auto& axis : recv_axes_) p.keep(axis);
  p.finish();
  return p;
}

RankStats RankPlan::stats(int64_t element_size) const {
  check_element_size(element_size);
  RankStats s;
  for (Part part : {Part::send, Part::recv, Part::local}) {
    for (const Message& m : messages(part)) count(s, part, m.elements, m.blocks, m.runs, element_size);
  }
  return s;
}

}  // namespace gdap::plan
