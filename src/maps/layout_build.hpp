// What the layout helpers (layouts.cpp, grid_layout.cpp) share: the bytes a layout's map will hold,
// counted before anything is allocated, an allocation guard that names them, and the assembly of
// every rank's dim_data from each grid axis's dictionaries.
#pragma once

#include "core/error.hpp"
#include "maps/axis_map.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace gdap {

// What building a map allocates, measured (RSS, and the address space under ulimit -v) as well as
// read from the structures. Per unstructured index it keeps: its copy in the axis's dictionaries
// (DimData, 8 bytes) and its entry in the axis's sorted owner table (UnstructuredEntry, 24 bytes).
inline constexpr int64_t kBytesHeldPerIndex = sizeof(int64_t) + sizeof(UnstructuredEntry);
// While several ranks' sorted entries are merged (AxisMap), std::inplace_merge borrows a buffer of up
// to half the table.
inline constexpr int64_t kBytesMergingPerIndex = sizeof(UnstructuredEntry) / 2;
// Per dictionary (measured: 352 to 371 bytes at the peak): the layout's list of every rank's, the
// map's checked copy, the axis's kept one in a vector grown by doubling (up to twice its size), the
// vector that would hold its indices and the coordinate's first rank.
inline constexpr int64_t kBytesPerDictionary = 4 * sizeof(gdap_dim) + sizeof(std::vector<int64_t>) + sizeof(int64_t);

// The bytes building a layout's map takes at its peak (every rank's dictionaries, and `indices`
// unstructured indices held in all, summed over the ranks), so that a hostile nranks or shape is a
// clear error before anything is allocated, and a map this admits does fit.
int64_t layout_bytes(int64_t nranks, int64_t ndim, int64_t indices);

// The most bytes an allocation here can hope to get: the host's physical memory, or less where an
// address-space or data limit (ulimit -v, -d) is set, less what this process has mapped already.
int64_t host_memory_bound();

// Throws GDAP_ERR_NO_MEMORY naming nranks, `bytes` and `what` (the layout's sizes) when `bytes`
// exceed host_memory_bound(): refused at once, not after minutes of filling the memory.
void check_fits_memory(int64_t nranks, int64_t bytes, const std::string& what);

// Runs `body` if the layout can fit (check_fits_memory), naming its size when an allocation in
// it fails all the same.
template <typename Body>
void allocating(int64_t nranks, int64_t bytes, Body&& body, const std::string& what = "") {
  check_fits_memory(nranks, bytes, what);
  try {
    body();
  } catch (const std::exception& e) {
    if (dynamic_cast<const Error*>(&e) != nullptr) throw;
    fail(GDAP_ERR_NO_MEMORY, "a map of {} ranks needs about {} bytes, which cannot be allocated ({})", nranks, bytes,
         e.what());
  }
}

// A map of `nranks` ranks whose rank r holds, along axis i, per_axis[i][c_i] for its C-order grid
// coordinates c (the grid's extents are the per_axis sizes, whose product is nranks).
gdap_map* build_map(int64_t nranks, int64_t ndim, const std::vector<std::vector<gdap_dim>>& per_axis);

}  // namespace gdap
