// Host and CUDA allocations for gdap_array_create (see device_memory.hpp).
#include "array/device_memory.hpp"

#include "core/checked.hpp"

#include <cstdlib>
#include <cstring>

#if GDAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdap {
namespace {

Allocation host_allocation(int64_t bytes) {
  const int64_t rounded = checked_add(bytes, 63, "allocation size") / 64 * 64;
  void* p = std::aligned_alloc(64, static_cast<size_t>(rounded));
  if (p == nullptr) fail(GDAP_ERR_NO_MEMORY, "allocating {} bytes of host memory failed", bytes);
  std::memset(p, 0, static_cast<size_t>(rounded));
  return {p, [p] { std::free(p); }};
}

#if GDAP_HAVE_CUDA
// Runs `body` with `device` current, restoring the caller's current device afterwards.
template <typename Body>
cudaError_t on_device(int device, Body&& body) {
  int current = 0;
  cudaError_t err = cudaGetDevice(&current);
  if (err != cudaSuccess) return err;
  err = cudaSetDevice(device);
  if (err == cudaSuccess) err = body();
  cudaSetDevice(current);
  return err;
}

Allocation cuda_allocation(gdap_device device, int64_t bytes) {
  void* p = nullptr;
  const auto size = static_cast<size_t>(bytes);
  const cudaError_t err = on_device(device.id, [&] {
    switch (device.type) {
      case GDAP_DEVICE_CUDA: return cudaMalloc(&p, size);
      case GDAP_DEVICE_CUDA_HOST: return cudaMallocHost(&p, size);
      default: return cudaMallocManaged(&p, size);
    }
  });
  if (err != cudaSuccess) {
    fail(GDAP_ERR_DEVICE, "allocating {} bytes on CUDA device {} (device type {}) failed: {} ({})", bytes, device.id,
         device.type, cudaGetErrorName(err), cudaGetErrorString(err));
  }
  const int32_t type = device.type;
  return {p, [p, type, id = device.id] {
            on_device(id, [&] { return type == GDAP_DEVICE_CUDA_HOST ? cudaFreeHost(p) : cudaFree(p); });
          }};
}
#endif

}  // namespace

Allocation allocate(gdap_device device, int64_t bytes) {
  if (bytes < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "allocation of {} bytes", bytes);
  if (bytes == 0) return {};
  if (device.type == GDAP_DEVICE_CPU) return host_allocation(bytes);
#if GDAP_HAVE_CUDA
  return cuda_allocation(device, bytes);
#else
  fail(GDAP_ERR_UNSUPPORTED, "device type {} needs CUDA, but gdap was built without CUDA", device.type);
#endif
}

}  // namespace gdap
