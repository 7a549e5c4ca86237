// The reduction buffer's layouts (see reduce_buffer.hpp).
#include "reduce/reduce_buffer.hpp"

#include "core/error.hpp"
#include "maps/map.hpp"

#include <algorithm>
#include <climits>

namespace gdap::reduce {

std::vector<int64_t> Owned::each(bool global) const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count));
  for (const Run& r : runs) {
    for (int64_t k = 0; k < r.length; ++k) out.push_back((global ? r.global : r.local) + k);
  }
  return out;
}

namespace {

// Appends a run of owned indices, merged with the last when it continues it ('c' gives a run per
// block, 'u' one per index).
void add_run(Owned& o, int64_t global, int64_t length, int64_t local) {
  if (length <= 0) return;
  o.count += length;
  if (!o.runs.empty()) {
    Owned::Run& last = o.runs.back();
    if (last.global + last.length == global && last.local + last.length == local) {
      last.length += length;
      return;
    }
  }
  o.runs.push_back({global, length, local});
}

}  // namespace

Owned owned_along(const gdap_map& map, int64_t axis, int64_t rank, bool primary_only) {
  const AxisMap& a = map.axes[static_cast<size_t>(axis)];
  const int64_t coord = map.coord(rank, axis);
  Owned o;
  if (a.dist_type() == GDAP_DIST_UNSTRUCTURED) {
    // The map's table is sorted by (global, grid rank): one pass, the first entry of each global
    // index its lowest holder (AxisSide's rule, without building one per call).
    const auto& table = a.table();
    int64_t global = 0, local = 0, length = 0;  // the run being grown
    for (size_t k = 0; k < table.size(); ++k) {
      const UnstructuredEntry& e = table[k];
      if (e.grid_rank != coord || (primary_only && k > 0 && table[k - 1].global == e.global)) continue;
      if (length > 0 && e.global == global + length && e.local == local + length) {
        ++length;
        continue;
      }
      add_run(o, global, length, local);
      global = e.global;
      local = e.local;
      length = 1;
    }
    add_run(o, global, length, local);
    return o;
  }
  AxisSide(a, primary_only).for_each_run(coord, [&](int64_t global, int64_t length, int64_t local) {
    add_run(o, global, length, local);
  });
  return o;
}

std::vector<int64_t> c_weights(const std::vector<int64_t>& shape) {
  std::vector<int64_t> w(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) w[i - 1] = w[i] * shape[i];
  return w;
}

namespace {

// True if every global index of the axis has exactly one owning coordinate: always for 'b' and
// 'c' (their owned ranges partition the axis), for 'u' when no index is held twice (a valid map
// holds every index).
bool one_owner_each(const AxisMap& axis) {
  return axis.dist_type() != GDAP_DIST_UNSTRUCTURED || static_cast<int64_t>(axis.table().size()) == axis.size();
}

// a * b, or -1 past INT64_MAX (both >= 0).
int64_t times(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? -1 : out;
}

}  // namespace

BufferLayout buffer_layout(const gdap_map* result_map, const std::vector<int64_t>& shape) {
  BufferLayout global;
  global.elements = 1;
  for (int64_t e : shape) global.elements *= e;  // checked by the caller: the result's global size
  global.weights = c_weights(shape);
  if (result_map == nullptr || global.elements == 0) return global;
  BufferLayout s;
  std::vector<int64_t> extents;
  for (const AxisMap& axis : result_map->axes) {
    if (!one_owner_each(axis)) return global;
    AxisSide side(axis, false);
    int64_t most = 0;
    for (int64_t c = 0; c < side.grid_size(); ++c) most = std::max(most, side.extent(c));
    extents.push_back(most);
    s.sides.push_back(std::move(side));
  }
  int64_t segment = 1;
  for (int64_t e : extents) segment = segment < 0 ? -1 : times(segment, e);
  const int64_t elements = segment < 0 ? -1 : times(segment, result_map->nranks);
  // MPI counts a segment in an int; the slack of padding and uneven blocks must stay below the
  // traffic saved (a segment at most 2 size / nranks).
  if (segment <= 0 || segment > INT_MAX || elements < 0 || elements / 2 >= global.elements) return global;
  s.elements = elements;
  s.segment = segment;
  s.weights = c_weights(extents);
  for (int64_t stride : result_map->grid_stride) s.coord_weights.push_back(stride * segment);
  return s;
}

std::vector<int64_t> expand(const std::vector<TermRun>& runs) {
  std::vector<int64_t> out;
  for (const TermRun& r : runs) {
    for (int64_t k = 0; k < r.length; ++k) out.push_back(r.first + k * r.step);
  }
  return out;
}

std::vector<TermRun> BufferLayout::source_terms(size_t j, const Owned& o) const {
  std::vector<TermRun> out;
  int64_t placed = 0;
  for (const Owned::Run& r : o.runs) {
    if (segment == 0) {
      out.push_back({r.length, r.global * weights[j], weights[j]});
      placed += r.length;
      continue;
    }
    sides[j].for_each_piece(r.global, r.global + r.length, [&](int64_t, int64_t length, int64_t coord, int64_t local) {
      out.push_back({length, coord * coord_weights[j] + local * weights[j], weights[j]});
      placed += length;
    });
  }
  // One owner per index (buffer_layout's condition): one term per owned index.
  if (placed != o.count) {
    fail(GDAP_ERR_INTERNAL, "the reduction buffer placed {} of {} indices along result axis {}", placed, o.count, j);
  }
  return out;
}

std::vector<TermRun> BufferLayout::result_terms(size_t j, const Owned& o) const {
  std::vector<TermRun> out;
  for (const Owned::Run& r : o.runs) out.push_back({r.length, (segment == 0 ? r.global : r.local) * weights[j], weights[j]});
  return out;
}

}  // namespace gdap::reduce
