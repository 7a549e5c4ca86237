// Overlaps along one dimension: what one grid coordinate of one side exchanges with every grid
// coordinate of the other side, as 1-d segments. A rank's runs along a dimension depend only on
// its coordinate there, so the planner computes these once per (dimension, coordinate) and builds
// every N-d message as a Cartesian product of them.
//
// Canonical form (what makes the two ends of a message agree without metadata): the segments of
// one (source coordinate, destination coordinate) pair are the maximal runs of the indices they
// share, taken in increasing global order, in which the source local index and the destination
// local index both step by +1 (the global index may jump: a segment's global_start is its first
// global index). The same list comes out whether it is computed from the source coordinate
// (send_overlap) or from the destination coordinate (recv_overlap): both see the same shared
// indices in the same order, and merging reads only their local indices.
#pragma once

#include "exchange/program.hpp"
#include "maps/axis_side.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace gdap::plan {

// The exchange program's segment: `length` shared indices, the first of them global_start, at
// [src_local, +length) of the source section and [dst_local, +length) of the destination's.
using exchange::Segment;

// One peer coordinate's share of an AxisOverlap.
struct AxisPeer {
  int64_t coord;     // the other side's grid coordinate along this dimension
  int64_t first;     // its segments are segments[first, first + count)
  int64_t count;     // >= 1
  int64_t elements;  // sum of the segments' lengths
  bool whole;        // one segment spanning the full buffer extent on both sides
  bool operator==(const AxisPeer&) const = default;
};

struct AxisOverlap {
  std::vector<Segment> segments;
  std::vector<AxisPeer> peers;  // ascending coord, only peers with a nonzero overlap

  std::span<const Segment> segments_of(const AxisPeer& peer) const {
    return {segments.data() + peer.first, static_cast<size_t>(peer.count)};
  }
};

// What source coordinate `src_coord` sends along this dimension, per destination coordinate.
// Cost: O(its runs + the pieces they meet) (+ a log factor to find the first piece).
AxisOverlap send_overlap(const AxisSide& src, const AxisSide& dst, int64_t src_coord);

// What destination coordinate `dst_coord` receives along this dimension, per source coordinate.
AxisOverlap recv_overlap(const AxisSide& src, const AxisSide& dst, int64_t dst_coord);

}  // namespace gdap::plan
