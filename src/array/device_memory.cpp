// Host and CUDA allocations for gdap_array_create (see device_memory.hpp).
#include "array/device_memory.hpp"

#include "core/checked.hpp"
#include "cuda/device.hpp"

#include <cstdlib>
#include <cstring>

#if GDAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdap {
namespace {

Allocation host_allocation(int64_t bytes) {
  // aligned_alloc wants a multiple of the alignment.
  const int64_t rounded = checked_add(bytes, 63, "allocation size") / 64 * 64;
  void* p = std::aligned_alloc(64, static_cast<size_t>(rounded));
  if (p == nullptr) fail(GDAP_ERR_NO_MEMORY, "allocating {} bytes of host memory failed", bytes);
  std::memset(p, 0, static_cast<size_t>(rounded));
  return {p, [p] { std::free(p); }};
}

#if GDAP_HAVE_CUDA
const char* kind_name(int32_t type) {
  switch (type) {
    case GDAP_DEVICE_CUDA: return "device";
    case GDAP_DEVICE_CUDA_HOST: return "pinned host";
    default: return "managed";
  }
}

// Frees with `device` current (cudaFree needs the owning device's context); an error here cannot
// be reported (it runs from a destructor or a DLPack deleter) and does not stop the free.
void cuda_free(void* p, int32_t type, int device) {
  const cuda::DeviceScope scope(device);
  (void)(type == GDAP_DEVICE_CUDA_HOST ? cudaFreeHost(p) : cudaFree(p));
}

// Reported through gdap's status, so cleared from the runtime's last error (error_text does): the
// caller's next cudaGetLastError does not blame the caller's own work (a sticky error stays).
[[noreturn]] void fail_cuda(int err, const char* step, gdap_device device, int64_t bytes) {
  fail(GDAP_ERR_DEVICE, "allocating {} bytes of CUDA {} memory on device {}: {}", bytes, kind_name(device.type),
       device.id, cuda::error_text(err, step));
}

Allocation cuda_allocation(gdap_device device, int64_t bytes) {
  const auto size = static_cast<size_t>(bytes);
  // An ordinal that does not exist is refused before cudaSetDevice sees it: no CUDA error raised.
  int count = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
    fail_cuda(err, "counting the devices", device, bytes);
  }
  if (device.id >= count) {
    fail(GDAP_ERR_DEVICE, "allocating {} bytes of CUDA {} memory on device {}: there is no such device ({} CUDA "
         "device{})", bytes, kind_name(device.type), device.id, count, count == 1 ? "" : "s");
  }
  cuda::DeviceScope scope(device.id);
  if (scope.error() != cudaSuccess) fail_cuda(scope.error(), "selecting the device", device, bytes);
  void* p = nullptr;
  cudaError_t err = cudaSuccess;
  switch (device.type) {
    case GDAP_DEVICE_CUDA: err = cudaMalloc(&p, size); break;
    case GDAP_DEVICE_CUDA_HOST: err = cudaMallocHost(&p, size); break;
    default: err = cudaMallocManaged(&p, size, cudaMemAttachGlobal); break;
  }
  if (err != cudaSuccess) fail_cuda(err, "the allocation", device, bytes);
  if (const int restored = scope.restore(); restored != cudaSuccess) {
    cuda_free(p, device.type, device.id);
    fail_cuda(restored, "restoring the caller's current device", device, bytes);
  }
  const int32_t type = device.type;
  const int id = device.id;
  try {
    return {p, [p, type, id] { cuda_free(p, type, id); }};
  } catch (...) {
    cuda_free(p, type, id);
    throw;
  }
}
#endif

}  // namespace

Allocation allocate(gdap_device device, int64_t bytes) {
  if (bytes < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "allocation of {} bytes", bytes);
  if (bytes == 0) return {};  // an empty section: nothing to allocate, data stays NULL
  if (device.type == GDAP_DEVICE_CPU) return host_allocation(bytes);
#if GDAP_HAVE_CUDA
  return cuda_allocation(device, bytes);
#else
  fail(GDAP_ERR_UNSUPPORTED, "device type {} needs CUDA, but gdap was built without CUDA ({} bytes requested)",
       device.type, bytes);
#endif
}

}  // namespace gdap
