// The memory layout of a local section, checked before gdap takes or wraps any memory: devices
// gdap can hold, compact strides, and the rule that every element's byte offset fits int64 (so
// that no later index computation can wrap). Element sizes are core/dtype.hpp's.
#pragma once

#include "core/dtype.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <vector>

namespace gdap {

// Throws GDAP_ERR_UNSUPPORTED naming the device type unless it is host, CUDA, CUDA pinned or
// CUDA managed memory; GDAP_ERR_INVALID_ARGUMENT for a negative device id.
void check_device(gdap_device device);

// Row-major (C-order) strides in elements for `shape`; zero extents count as 1, as NumPy does.
std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape);

// Checks a shape (entries >= 0, element count fits int64) and its strides in elements (any sign,
// 0 included): the bytes between the lowest and the highest element, and every element's byte
// offset from the base pointer (byte_offset included), fit int64. `what` starts the messages
// ("DLPack tensor", "wrapped buffer"). Returns the number of elements.
int64_t check_layout(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t element_bytes,
                     uint64_t byte_offset, const char* what);

// The alignment in bytes of a dtype's C type (alignof): its bytes per lane, a complex number's per
// component (double _Complex aligns as double). Throws as element_size does for an unknown dtype.
int64_t element_alignment(gdap_dtype dtype);

// Throws GDAP_ERR_INVALID_ARGUMENT naming `what`, the address (or offset) and the dtype unless
// `address` is a multiple of element_alignment(dtype): typed loops and CUDA kernels read whole
// elements, and a misaligned one is undefined behaviour on the host and a fault on a GPU.
void check_aligned(uint64_t address, gdap_dtype dtype, const char* what);

// Throws GDAP_ERR_INVALID_ARGUMENT naming the axes and strides unless no two indices of a section
// written through `what` can address one element. The test is sufficient, not exact: axes of
// extent > 1 sorted by |stride|, each |stride| must reach past the span of the smaller ones
// (stride 0 never does). A non-overlapping layout that interleaves its axes fails it too. Call it
// after check_layout (its spans fit int64).
void check_distinct_elements(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                             const char* what);

// Throws GDAP_ERR_INVALID_ARGUMENT unless a call may write `a` as its `role` ("dst", "C"): "<role>
// is read-only<why>" for a read-only array, and check_distinct_elements' message when two of its
// indices can address one element (a write would land twice: a silent wrong answer). Sources may
// overlap (a stride-0 broadcast is a legitimate input), so only destinations are checked.
// Defined in array.cpp.
void check_destination(const gdap_array& a, const char* role, const char* why = "");

}  // namespace gdap
