// gdap_array: one process's local section and its distribution. The memory is held through a
// shared Storage, released exactly once when the array and every tensor exported from it are gone.
#pragma once

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
// of gdap's own allocation, or nothing for memory the caller retains.
class Storage {
 public:
  explicit Storage(std::function<void()> release) : release_(std::move(release)) {}
  ~Storage() {
    if (release_) release_();
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

 private:
  std::function<void()> release_;
};

// Element size in bytes of a dtype gdap can hold; throws GDAP_ERR_UNSUPPORTED otherwise.
int64_t element_size(gdap_dtype dtype);

// Throws GDAP_ERR_UNSUPPORTED unless gdap handles memory of this device type.
void check_device(gdap_device device);

}  // namespace gdap

struct gdap_array {
  std::shared_ptr<gdap::Storage> storage;
  void* base = nullptr;      // DLTensor::data as exported: base + byte_offset is element (0, ..., 0)
  uint64_t byte_offset = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, always filled
  gdap_dtype dtype{};
  gdap_device device{};
  bool readonly = false;
  gdap::DimData dims;  // empty dictionaries resolved
  std::string version;
  // Per unstructured dimension, (global, local) sorted by global: O(log n) global_to_local.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> unstructured_index;

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  void* data() const { return static_cast<char*>(base) + byte_offset; }
};
