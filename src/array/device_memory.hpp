// Allocations gdap owns for gdap_array_create: host memory (64-byte aligned, zero-filled) and,
// in CUDA builds, device, pinned and managed memory. Each comes with the function that frees it.
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <functional>

namespace gdap {

struct Allocation {
  void* data = nullptr;
  std::function<void()> release;  // frees `data` (empty when nothing was allocated); never throws
};

// `bytes` may be 0 (no allocation, data NULL). Throws GDAP_ERR_NO_MEMORY, GDAP_ERR_DEVICE (with the
// CUDA error and the byte count) or GDAP_ERR_UNSUPPORTED (a CUDA device in a build without CUDA).
// The caller's current CUDA device is the same after the call as before.
Allocation allocate(gdap_device device, int64_t bytes);

}  // namespace gdap
