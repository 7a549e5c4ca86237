// Allocations gdap owns: host memory (64-byte aligned, zero-filled) and, in CUDA builds,
// device, pinned and managed memory. Each returns a release function for Storage.
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <functional>

namespace gdap {

struct Allocation {
  void* data = nullptr;
  std::function<void()> release;
};

// `bytes` may be 0 (no allocation, data NULL). Throws GDAP_ERR_NO_MEMORY, GDAP_ERR_DEVICE or
// GDAP_ERR_UNSUPPORTED (a CUDA device in a build without CUDA) with the byte count in the message.
Allocation allocate(gdap_device device, int64_t bytes);

}  // namespace gdap
