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

}  // namespace gdap
