// Where a reduction's elements meet: the buffer that gdap_reduce_scatter and gdap_reduce_axes fill
// with each rank's partial results, then reduce across the ranks (reduce.cpp).
//
// Two layouts. Global: the buffer is the result's global shape in C order; the ranks all-reduce
// it and each copies out the elements it owns. Segmented: the buffer is one segment per rank, in
// rank order, each laid out as that rank's result section would be if it had the largest extent
// along every axis (C order over the extents, padding cells included and never read); the ranks
// reduce-scatter it, so each receives only its own segment. A ring reduce-scatter moves
// (nranks - 1) * segment elements per rank, a ring all-reduce 2 (nranks - 1) / nranks * size: the
// segmented layout halves the traffic when the segments are even, and a rank keeps one segment,
// not the whole result, once reduced. It needs every result element to have one owner (a
// replicated result, or unstructured replicas, take the global layout) and is taken only while
// nranks * segment stays below twice the global size (padding and uneven blocks cost slack).
#pragma once

#include "maps/axis_side.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <vector>

namespace gdap::reduce {

// The indices one rank owns along one axis, as runs in increasing global order.
struct Owned {
  struct Run {
    int64_t global, length, local;
  };
  std::vector<Run> runs;
  int64_t count = 0;
  // Per owned index, its local (global = false) or global index.
  std::vector<int64_t> each(bool global) const;
};

// `primary_only`: for unstructured replicas, only where this rank's coordinate is the lowest holder.
Owned owned_along(const gdap_map& map, int64_t axis, int64_t rank, bool primary_only);

// C-order weights of a shape (the flat index of a global index).
std::vector<int64_t> c_weights(const std::vector<int64_t>& shape);

// The buffer-index terms of `length` consecutive owned indices: first, first + step, ...
struct TermRun {
  int64_t length, first, step;
};
// Every term of a list of runs, one per index.
std::vector<int64_t> expand(const std::vector<TermRun>& runs);

struct BufferLayout {
  int64_t elements = 0;  // of the whole buffer
  int64_t segment = 0;   // segmented: elements per rank; 0 for the global layout
  std::vector<int64_t> weights;        // per result axis: of the global index, or of the local index in a segment
  std::vector<int64_t> coord_weights;  // segmented, per result axis: grid stride * segment
  std::vector<AxisSide> sides;         // segmented: the result's axes

  // The elements this rank reads its result from once the buffer is reduced.
  int64_t reduced_elements() const { return segment > 0 ? segment : elements; }
  // For the indices of `o` (the owned indices of a source axis that becomes result axis j), in
  // order, their terms of the buffer index: global * weight, or owner coordinate * coord_weight +
  // owner's local * weight. A run per run of `o` (global layout) or per owner's piece of one.
  std::vector<TermRun> source_terms(size_t j, const Owned& o) const;
  // For the indices of `o` (this rank's owned indices along result axis j), their terms of the
  // index into the part it reads from: the whole buffer (global) or its own segment.
  std::vector<TermRun> result_terms(size_t j, const Owned& o) const;
};

// The layout for a result of global `shape` distributed as `result_map` (NULL: 0-d). The same on
// every rank: it depends on the gathered map only.
BufferLayout buffer_layout(const gdap_map* result_map, const std::vector<int64_t>& shape);

}  // namespace gdap::reduce
