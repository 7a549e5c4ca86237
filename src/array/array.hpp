// gdap_array: one process's local section and its distribution. The memory is held through a
// shared Storage, released exactly once when the array and every tensor exported from it are gone
// (the shared_ptr's count is atomic, so an exported tensor may be deleted on any thread).
#pragma once

#include "array/shared_segment.hpp"
#include "core/handle.hpp"
#include "core/footprint.hpp"
#include "protocol/dim_data.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gdap {

// Whatever must happen when the last user of the memory goes: a producer's DLPack deleter, a free
// of gdap's own allocation, or nothing for memory the caller retains (an empty function). Memory
// gdap_array_create_shm made also names its segment, so that peers of one node may map it.
class Storage {
 public:
  explicit Storage(std::function<void()> release) : release_(std::move(release)) {}
  Storage(std::function<void()> release, SegmentMapping segment)
      : release_(std::move(release)), segment_(std::move(segment)) {}
  ~Storage() {
    if (release_) release_();
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  // The shared-memory segment the memory lies in (this process's mapping of it), or NULL.
  const SegmentMapping* segment() const { return segment_.base != nullptr ? &segment_ : nullptr; }

 private:
  std::function<void()> release_;
  SegmentMapping segment_;
};

// A checked description of a section's memory, before an array is built around it.
struct Section {
  void* base = nullptr;      // DLTensor::data: base + byte_offset is element (0, ..., 0)
  uint64_t byte_offset = 0;  // kept as the producer split it, 0 for gdap's own memory
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, always filled
  gdap_dtype dtype{};
  gdap_device device{};
};

}  // namespace gdap

struct gdap_array : gdap::Tagged<gdap_array> {
  std::shared_ptr<gdap::Storage> storage;
  gdap::Section section;
  bool readonly = false;
  gdap::DimData dims;  // empty dictionaries resolved, each valid for its extent
  std::string version;
  // Per unstructured dimension, (global, local) sorted by global: O(log n) global_to_local.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> unstructured_index;

  int64_t ndim() const { return static_cast<int64_t>(section.shape.size()); }
  void* data() const { return static_cast<char*>(section.base) + section.byte_offset; }
};

namespace gdap {

// Copies `ndim` dictionaries for a buffer of `shape` (ndim must equal its length; GDAP_ERR_PROTOCOL
// otherwise): each validated against its extent, then {} resolved from it.
DimData dims_for_shape(const gdap_dim* dims, int64_t ndim, const std::vector<int64_t>& shape);

// `version` checked as gdap_protocol_version_check does; NULL means GDAP_PROTOCOL_VERSION.
std::string checked_version(const char* version);

// The bytes a section's elements occupy: from its address, with strides in bytes.
Footprint footprint_of(const gdap_array& a);
// From the lowest to the highest (first > last: none).
ByteSpan byte_span(const gdap_array& a);

// True if the two sections share a byte (core/footprint.hpp: exact for interleaved strided views of
// one buffer, such as a matrix's even and odd columns, which do not; true too where a bounded
// search cannot tell). Addresses are compared whatever the device: CUDA's unified addressing gives
// host and device memory one space.
bool may_share_memory(const gdap_array& a, const gdap_array& b);

// A new array over `section` (storage may be set later by the caller); builds the 'u' indexes.
// Nothing is taken: on a throw the caller still owns whatever `storage` would release.
std::unique_ptr<gdap_array> make_array(Section section, DimData dims, std::string version, bool readonly);

// A new section of gdap's own (gdap_array_create): shape from `ndim` dictionaries (borrowed for
// the call), compact C order, zero-filled host memory or a CUDA allocation on `device`.
std::unique_ptr<gdap_array> create_array(gdap_dtype dtype, gdap_device device, const gdap_dim* dims, int64_t ndim);

}  // namespace gdap
