// The redistribution planner: from a source and a destination gdap_map of the same global shape,
// which N-d blocks every rank sends to and receives from every other rank. Pure computation, no
// communication; a RankPlan compiles to the exchange program (exchange/program.hpp) that the
// engines run.
//
// Model. A message from rank s to rank d is the Cartesian product, over dimensions, of the 1-d
// segment lists of the pair (s's source coordinate, d's destination coordinate) along each
// dimension (overlap.hpp). A block is one tuple of segments, one per dimension; its extent is
// their lengths. Both ends of a message enumerate the blocks in the same order: C order over the
// tuple (last dimension's segment fastest), each list in increasing global order, and the
// elements of a block in C order. So a packed buffer is the blocks one after another, each
// packed row-major, and needs no metadata: Block::offset is where a block starts in it.
//
// Ranks. The two maps may have different grids and even different rank counts: both describe
// ranks 0..N-1 of one group of N = max(source ranks, destination ranks) processes; a rank
// outside one map holds nothing on that side (it only receives, or only sends).
//
// Roles (COSTA's relabeling). A plan may let rank r hold destination rank roles[r]'s section
// instead of its own (roles: a permutation of 0..N-1; a role at or past the destination's rank
// count holds nothing there). Only the destination side is relabeled. A caller adopts it by
// renumbering its ranks afterwards (MPI_Comm_split with key roles[r]), so that the destination map
// describes the renumbered ranks; keeping_roles() picks the roles that move the fewest elements.
//
// Replicas. For unstructured dimensions without one_to_one, an index is sent by its lowest source
// holder only, and every destination holder receives it. Only owned indices move: padding and
// halos are never read and never written.
//
// Runs. A message's `runs` counts the pieces that are contiguous in both buffers when both are
// compact C-order arrays of their local shapes (padding included): in a block, the trailing
// dimensions whose segment spans the whole local extent on both sides merge with the last one
// that does not, so a block of extents e_0..e_{n-1} whose dimensions after j are whole holds
// e_0 * ... * e_{j-1} runs (1 if every dimension is whole). Engines with other strides judge
// contiguity themselves.
#pragma once

#include "exchange/program.hpp"
#include "maps/axis_side.hpp"
#include "maps/map.hpp"
#include "plan/overlap.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gdap::plan {

// Which messages of a rank: to other ranks, from other ranks, or its own copy (at most one).
using exchange::Part;

struct Message {
  int64_t peer;      // the destination rank (send, local) or source rank (recv)
  int64_t elements;  // elements moved
  int64_t blocks;    // N-d blocks (product of the per-dimension segment counts)
  int64_t runs;      // contiguous runs in both buffers (see "Runs" above)
  int64_t offset;    // elements before this message in the rank's packed buffer for its part
                     // (messages one after another in peer order): an alltoallv displacement
};

// One N-d block, as for_each_block hands it out (the exchange program's).
using exchange::Block;

// Counts of one rank (or, summed, of the whole plan). Messages and sent bytes exclude the local
// copy, which has its own fields.
struct RankStats {
  int64_t send_messages = 0, recv_messages = 0;
  int64_t send_elements = 0, recv_elements = 0, local_elements = 0;
  int64_t send_bytes = 0, recv_bytes = 0, local_bytes = 0;
  int64_t send_blocks = 0, recv_blocks = 0, local_blocks = 0;
  int64_t send_runs = 0, recv_runs = 0, local_runs = 0;
  bool operator==(const RankStats&) const = default;
};

struct PlanStats {
  int64_t nranks = 0;
  int64_t element_size = 0;
  std::vector<RankStats> ranks;  // per rank
  RankStats total;               // sums over ranks (total.send_* == total.recv_*)
  RankStats max;                 // per-field maxima over ranks (the busiest rank's load)
};

// One rank's part of a plan: its sends, receives and local copy. Self-contained (holds no
// reference to the maps), cheap to keep and reuse; read-only, so safe to share between threads.
class RankPlan {
 public:
  int64_t rank() const { return rank_; }
  int64_t nranks() const { return nranks_; }
  int64_t ndim() const { return ndim_; }

  // Messages of one part in increasing peer order (local: empty or one message to itself).
  std::span<const Message> messages(Part part) const { return messages_[index(part)]; }
  // Segments of message `m` (an element of messages(part)) along dimension `axis`.
  std::span<const Segment> segments(Part part, const Message& m, int64_t axis) const;
  // The segment lists of message `m`, one per dimension.
  std::vector<std::span<const Segment>> lists(Part part, const Message& m) const;
  // Calls f(const Block&) for each block of message `m`, in the packed order both ends share.
  template <typename F>
  void for_each_block(Part part, const Message& m, F&& f) const;

  // This rank's counts; `element_size` in bytes, >= 1.
  RankStats stats(int64_t element_size) const;

  // The exchange program of this rank's part (a message is one block set: the product of its
  // per-dimension segment lists). It shares the plan's segments, keeping them alive.
  exchange::Program program(int64_t element_size, const exchange::Style& style) const;

 private:
  friend class Planner;
  static size_t index(Part part) { return static_cast<size_t>(part); }
  // Puts a part's messages in increasing peer order (their entries and offsets with them).
  void sort_by_peer(Part part);
  size_t slot(Part part, const Message& m) const;

  int64_t rank_ = 0, nranks_ = 0, ndim_ = 0;
  std::array<std::vector<Message>, 3> messages_;
  // axis_peer_[part][k * ndim + i]: message k's entry in axes(part)[i]->peers.
  std::array<std::vector<int64_t>, 3> axis_peer_;
  // Per dimension, this rank's overlaps as a source (send and local) and as a destination (recv);
  // shared between the rank plans of plan_all that have the same coordinate.
  std::vector<std::shared_ptr<const AxisOverlap>> send_axes_, recv_axes_;
  const std::vector<std::shared_ptr<const AxisOverlap>>& axes(Part part) const {
    return part == Part::recv ? recv_axes_ : send_axes_;
  }
};

// Plans redistributions between two maps. Borrows both maps: they must outlive the Planner (not
// the plans it makes). Construction checks that the global shapes match and that the source
// holds every index the destination owns (only unstructured dimensions can fail that); it costs
// O(grid sizes) plus O(n) per unstructured dimension of n held indices.
// The most runs (one-dimensional pieces of ~40 bytes each) a planner lists at once:
// GDAP_PLAN_MAX_RUNS, else kDefaultMaxPlanRuns. A plan that would list more is refused up front
// (GDAP_ERR_NO_MEMORY) instead of allocating until the system stops it: a 'c' dimension of
// block size 1 lists one run per index (a 2^62-element cyclic layout would need 2^62).
constexpr int64_t kDefaultMaxPlanRuns = int64_t{1} << 26;  // about 2.5 GiB of runs
struct RunsLimit {
  int64_t runs;
  std::string set_by;  // what an error tells the user to change: "GDAP_PLAN_MAX_RUNS", "--max-runs"
};
RunsLimit max_plan_runs();
// Sets the limit for this process (a program's own option, named `set_by` in errors), ahead of
// GDAP_PLAN_MAX_RUNS. Not thread-safe: call it before planning starts (the gdap tool's --max-runs).
void set_max_plan_runs(int64_t runs, std::string set_by);

class Planner {
 public:
  // `roles`: empty (every rank its own role) or N entries, a permutation of 0..N-1 (see "Roles";
  // GDAP_ERR_INVALID_ARGUMENT names the first entry that is out of range or repeated).
  Planner(const gdap_map& src, const gdap_map& dst, std::vector<int64_t> roles = {});

  int64_t nranks() const { return nranks_; }
  // The destination role rank `rank` plays, and the rank that plays destination role `role`.
  int64_t role(int64_t rank) const { return roles_.empty() ? rank : roles_[static_cast<size_t>(rank)]; }
  int64_t holder(int64_t role) const { return holders_.empty() ? role : holders_[static_cast<size_t>(role)]; }

  // The roles that keep the most elements on their rank: greedy over the plan's messages, largest
  // first (ties by source rank, then destination rank), the rest in increasing order. Every rank
  // computes the same. An identity or rank-permuted redistribution keeps everything. Cost: every
  // message of the whole plan (O(N^2) for an all-to-all), held at once.
  std::vector<int64_t> keeping_roles() const;
  int64_t ndim() const { return static_cast<int64_t>(src_axes_.size()); }
  const gdap_map& source() const { return *src_; }
  const gdap_map& destination() const { return *dst_; }

  // One rank's sends, receives and local copy: what an MPI rank needs. Cost O(per dimension:
  // its own runs on each side and the pieces they meet, + a log factor) + O(ndim * messages);
  // never the whole N x N matrix.
  RankPlan plan_rank(int64_t rank) const;

  // Every rank's plan (the in-process group), sharing the per-coordinate overlaps.
  std::vector<RankPlan> plan_all() const;

  // Whole-plan counts for tools: O(per dimension: all runs and segments) + O(ndim * messages),
  // without materialising any rank's plan. `element_size` in bytes, >= 1.
  PlanStats stats(int64_t element_size) const;

  // The per-dimension overlaps the plans are made of (for tools and tests).
  AxisOverlap send_overlap(int64_t axis, int64_t src_coord) const;
  AxisOverlap recv_overlap(int64_t axis, int64_t dst_coord) const;

 private:
  using AxesOf = std::vector<std::shared_ptr<const AxisOverlap>>;
  RankPlan assemble(int64_t rank, AxesOf send_axes, AxesOf recv_axes) const;

  // The source overlaps of every coordinate: [dimension][source coordinate].
  std::vector<std::vector<AxisOverlap>> all_send_overlaps() const;
  // Throws GDAP_ERR_NO_MEMORY, before anything is listed, where listing `what` would hold more runs
  // than max_plan_runs() at once; `axis` is the dimension that drives the count (-1: none alone).
  void check_runs(int64_t runs, const std::string& what, int64_t axis) const;
  // The kinds of dimension `axis`, for messages: "('b' source, 'c' destination)".
  std::string kinds(int64_t axis) const;

  const gdap_map* src_;
  const gdap_map* dst_;
  int64_t nranks_;
  std::vector<AxisSide> src_axes_, dst_axes_;
  std::vector<int64_t> roles_, holders_;  // empty: the identity
};

template <typename F>
void RankPlan::for_each_block(Part part, const Message& m, F&& f) const {
  const std::vector<std::span<const Segment>> of = lists(part, m);
  exchange::for_each_block(of, std::forward<F>(f));
}

}  // namespace gdap::plan
