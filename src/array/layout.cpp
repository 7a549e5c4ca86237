// Layout checks for local sections (see layout.hpp).
#include "array/layout.hpp"

#include "core/checked.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gdap {

void check_device(gdap_device device) {
  switch (device.type) {
    case GDAP_DEVICE_CPU:
    case GDAP_DEVICE_CUDA:
    case GDAP_DEVICE_CUDA_HOST:
    case GDAP_DEVICE_CUDA_MANAGED: break;
    default:
      fail(GDAP_ERR_UNSUPPORTED,
           "device type {} is not supported: gdap holds host (1), CUDA (2), CUDA pinned (3) and CUDA managed (13) "
           "memory",
           device.type);
  }
  if (device.id < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "device id {} < 0", device.id);
}

std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = stride;
    stride = checked_mul(stride, std::max<int64_t>(shape[k], 1), "compact stride");
  }
  return strides;
}

int64_t check_layout(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t element_bytes,
                     uint64_t byte_offset, const char* what) {
  int64_t count = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "{} shape[{}] ({}) < 0", what, k, shape[k]);
  }
  for (size_t k = 0; k < shape.size(); ++k) count = checked_mul(count, shape[k], "number of elements");
  if (byte_offset > static_cast<uint64_t>(INT64_MAX)) {
    fail(GDAP_ERR_OVERFLOW, "{} byte_offset {} overflows int64", what, byte_offset);
  }
  if (count == 0) return 0;  // no element is ever addressed: strides do not matter
  // Element offsets of the lowest and highest elements: negative strides reach below element 0.
  int64_t low = 0;
  int64_t high = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    const int64_t reach = checked_mul(shape[k] - 1, strides[k], "stride * (extent - 1)");
    if (reach < 0) {
      low = checked_add(low, reach, "lowest element offset");
    } else {
      high = checked_add(high, reach, "highest element offset");
    }
  }
  const int64_t span = checked_add(checked_sub(high, low, "element span"), 1, "element span");
  checked_mul(span, element_bytes, "byte span");
  const auto offset = static_cast<int64_t>(byte_offset);
  checked_add(offset, checked_mul(high, element_bytes, "highest byte offset"), "byte_offset + highest byte offset");
  checked_add(offset, checked_mul(low, element_bytes, "lowest byte offset"), "byte_offset + lowest byte offset");
  return count;
}

int64_t element_alignment(gdap_dtype dtype) {
  const int64_t lane = element_size(dtype) / dtype.lanes;
  return dtype.code == GDAP_DTYPE_COMPLEX ? lane / 2 : lane;
}

void check_aligned(uint64_t address, gdap_dtype dtype, const char* what) {
  const int64_t alignment = element_alignment(dtype);
  if (address % static_cast<uint64_t>(alignment) != 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} {:#x} is not aligned for {}: it must be a multiple of {} bytes", what,
         address, dtype_text(dtype), alignment);
  }
}

void check_distinct_elements(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                             const char* what) {
  std::vector<size_t> axes;  // extent 1 never steps; extent 0 holds no element at all
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) return;
    if (shape[k] > 1) axes.push_back(k);
  }
  const auto magnitude = [&](size_t k) { return strides[k] < 0 ? -strides[k] : strides[k]; };
  std::stable_sort(axes.begin(), axes.end(), [&](size_t x, size_t y) { return magnitude(x) < magnitude(y); });
  int64_t span = 1;  // elements spanned by the axes checked so far (check_layout: fits int64)
  for (const size_t k : axes) {
    if (magnitude(k) < span) {
      fail(GDAP_ERR_INVALID_ARGUMENT,
           "{} has strides ({}) on shape {}: axis {} (extent {}, stride {}) steps fewer elements than the {} that "
           "the axes of smaller stride magnitude span, so two indices can address one element and a write would "
           "land twice; gdap refuses such destinations (a non-overlapping layout with interleaved axes too): write "
           "into a compact array",
           what, fmt::join(strides, ", "), shape_text(shape), k, shape[k], strides[k], span);
    }
    span += magnitude(k) * (shape[k] - 1);
  }
}

}  // namespace gdap
