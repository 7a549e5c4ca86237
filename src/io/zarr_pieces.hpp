// The walk that Zarr save and load share: this rank's owned runs along each dimension, cut at the
// boundaries of the store's units (chunks, or a shard's inner chunks), so that a unit is decoded or
// encoded once and its elements are copied run by run: O(owned elements + units met).
#pragma once

#include "maps/map.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace gdap::io {

// A piece of an owned run inside one unit along one dimension.
struct Piece {
  int64_t in_chunk;  // index inside the unit
  int64_t local;     // index in the local buffer
  int64_t length;
};
// Per dimension: unit index -> its pieces (in global order).
using AxisPieces = std::map<int64_t, std::vector<Piece>>;
// One unit's pieces, per dimension.
using UnitPieces = std::vector<const std::vector<Piece>*>;

// Rank `rank`'s owned runs of `map` (as a source: owned elements; else as a destination) cut at
// multiples of `unit`.
std::vector<AxisPieces> pieces_of(const gdap_map& map, int64_t rank, const std::vector<int64_t>& unit, bool source);

// A host view of a section: element (0, ..., 0) and strides in bytes.
struct HostView {
  char* origin;
  std::vector<int64_t> strides;
};

// The strides in bytes of a C-ordered array of `shape`.
std::vector<int64_t> c_strides(const std::vector<int64_t>& shape, int64_t itemsize);

// Copies the pieces' elements from a section into one unit's bytes (C order, strides
// `unit_strides`), or from a decoded unit into the section.
void copy_to_unit(const UnitPieces& pieces, const std::vector<int64_t>& unit_strides, const HostView& view, int64_t itemsize,
                  char* unit);
void copy_from_unit(const UnitPieces& pieces, const std::vector<int64_t>& unit_strides, const HostView& view, int64_t itemsize,
                    const char* unit);

// Writes the fill value into the section where an absent unit's pieces fall: nothing the size of
// the unit is allocated for a unit that has no bytes.
void fill_pieces(const UnitPieces& pieces, const std::vector<int64_t>& unit_strides, const HostView& view,
                 const std::vector<unsigned char>& fill);

// Calls f(unit index, its pieces) for every unit this rank's pieces fall in (once, with no pieces,
// for a 0-d array).
void for_each_unit(const std::vector<AxisPieces>& axes,
                   const std::function<void(const std::vector<int64_t>&, const UnitPieces&)>& f);

// Calls f(outer index, the pieces of the units inside it) for every outer chunk (a shard) that
// holds some of this rank's units, each `ratio` units wide along each dimension.
void for_each_group(const std::vector<AxisPieces>& axes, const std::vector<int64_t>& ratio,
                    const std::function<void(const std::vector<int64_t>&, const std::vector<AxisPieces>&)>& f);

}  // namespace gdap::io
