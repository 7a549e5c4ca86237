// Device sections shared through CUDA IPC: the handle names the allocation's base
// (cudaIpcGetMemHandle works on whole allocations, and cudaIpcOpenMemHandle returns the base) plus
// the section's offset inside it, and the GPU by UUID, since ordinals differ between processes
// that see different CUDA_VISIBLE_DEVICES. The allocation's base and size come from the driver's
// cuMemGetAddressRange, reached through cudart's entry-point query so libgdap links cudart only.
#include "array/array.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"
#include "ipc/handle.hpp"

#include <cstring>

#include <unistd.h>

#if GDAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdap::ipc {

#if GDAP_HAVE_CUDA
namespace {

// Makes `device` current for its lifetime, then the caller's device again; throws if it cannot.
struct OnDevice {
  explicit OnDevice(int device) : scope(device) {
    if (scope.error() != 0) cuda::fail_cuda(scope.error(), fmt::format("cudaSetDevice({})", device));
  }
  cuda::DeviceScope scope;
};

// The allocation that holds `p`: its base and size in bytes.
void allocation_of(const void* p, void*& base, int64_t& bytes) {
  if (!cuda::allocation_of(p, base, bytes)) {
    fail(GDAP_ERR_DEVICE, "cuMemGetAddressRange({}) failed: the address is not in a CUDA allocation (or the driver "
         "lacks the call)", p);
  }
}

std::string uuid_text(const unsigned char* u) {
  std::string s;
  for (int i = 0; i < 16; ++i) s += fmt::format("{:02x}", u[i]);
  return s;
}

int device_with_uuid(const unsigned char* uuid) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) cuda::fail_cuda(err, "cudaGetDeviceCount");
  for (int d = 0; d < count; ++d) {
    cudaUUID_t id{};
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    id = prop.uuid;
    if (std::memcmp(id.bytes, uuid, 16) == 0) return d;
  }
  (void)cudaGetLastError();
  fail(GDAP_ERR_DEVICE, "no GPU visible to this process has UUID {} (the exporter's; {} visible): check "
       "CUDA_VISIBLE_DEVICES", uuid_text(uuid), count);
}

void close_ipc(void* base, int64_t, int32_t device) {
  try {
    const cuda::DeviceScope scope(device);
    (void)cudaIpcCloseMemHandle(base);
  } catch (...) {  // runs from a destructor: nobody to tell
  }
  (void)cudaGetLastError();
}

}  // namespace

void export_cuda(HandleData& h, const gdap_array& array) {
  const int device = array.section.device.id;
  const OnDevice scope(device);
  void* base = nullptr;
  int64_t bytes = 0;
  const Span s = span(array);
  const char* data = static_cast<const char*>(array.data());
  allocation_of(data + s.low, base, bytes);
  const int64_t offset = data - static_cast<const char*>(base);
  if (offset + s.high > bytes) {
    fail(GDAP_ERR_UNSUPPORTED, "the section spans more than one CUDA allocation (its allocation at {} holds {} bytes, "
         "the section reaches {}): a handle names one allocation", static_cast<void*>(base), bytes, offset + s.high);
  }
  cudaIpcMemHandle_t handle{};
  const cudaError_t err = cudaIpcGetMemHandle(&handle, base);
  if (err != cudaSuccess) {
    cuda::fail_cuda(err, fmt::format("cudaIpcGetMemHandle on the allocation at {} (memory from "
              "cudaMallocAsync pools or cuMemCreate cannot be shared this way; cudaMalloc memory can)", base));
  }
  cudaDeviceProp prop{};
  const cudaError_t perr = cudaGetDeviceProperties(&prop, device);
  if (perr != cudaSuccess) cuda::fail_cuda(perr, "cudaGetDeviceProperties");
  static_assert(sizeof handle <= sizeof h.cuda_ipc);
  std::memcpy(h.cuda_ipc, &handle, sizeof handle);
  std::memcpy(h.device_uuid, prop.uuid.bytes, 16);
  h.offset = offset;
  h.allocation_bytes = bytes;
}

Opened open_cuda(const HandleData& h) {
  if (h.exporter_pid == static_cast<int64_t>(getpid())) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "this process (pid {}) exported the CUDA IPC handle, and CUDA does not let a "
         "process open its own handle: use the exported array itself", h.exporter_pid);
  }
  check_exporter_alive(h, "device memory");
  const int device = device_with_uuid(h.device_uuid);
  const OnDevice scope(device);
  cudaIpcMemHandle_t handle{};
  std::memcpy(&handle, h.cuda_ipc, sizeof handle);
  void* base = nullptr;
  const cudaError_t err = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  if (err != cudaSuccess) {
    cuda::fail_cuda(err, fmt::format("cudaIpcOpenMemHandle on GPU {} (the exporter may have freed the "
              "allocation)", device));
  }
  void* check_base = nullptr;
  int64_t bytes = 0;
  try {
    allocation_of(base, check_base, bytes);
  } catch (...) {
    close_ipc(base, 0, device);
    throw;
  }
  if (bytes != h.allocation_bytes) {
    close_ipc(base, 0, device);
    fail(GDAP_ERR_INVALID_ARGUMENT, "the CUDA allocation behind the handle is {} bytes but the handle says {}: it was "
         "freed and its memory reused", bytes, h.allocation_bytes);
  }
  Opened o;
  o.base = base;
  o.bytes = bytes;
  o.data = static_cast<char*>(base) + h.offset;
  o.device = {GDAP_DEVICE_CUDA, device};
  o.release = close_ipc;
  return o;
}

#else

void export_cuda(HandleData&, const gdap_array&) {
  fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without CUDA: device sections cannot be shared");
}

Opened open_cuda(const HandleData&) {
  fail(GDAP_ERR_UNSUPPORTED, "the IPC handle names CUDA device memory, but this gdap was built without CUDA");
}

#endif

}  // namespace gdap::ipc
