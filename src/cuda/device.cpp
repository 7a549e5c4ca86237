// The CUDA plumbing of device.hpp, stream.hpp and buffer.hpp: host C++ against the CUDA runtime.
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "cuda/stream.hpp"

#include "core/error.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <mutex>
#include <set>
#include <utility>

namespace gdap::cuda {

namespace {
cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }
}  // namespace

namespace {

// Whether the NVIDIA driver's library can be loaded: the runtime reports "CUDA driver version is
// insufficient" both for an old driver and for none at all, and none is the usual case (a CPU node).
bool driver_library_loads() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) dlclose(driver);
  return driver != nullptr;
}

// The runtime's text, except where it misleads: a missing driver or GPU is said as such.
std::string cause(cudaError_t error) {
  if (error == cudaErrorInsufficientDriver && !driver_library_loads()) {
    return "no NVIDIA driver was found (libcuda.so.1 cannot be loaded), so there is no CUDA GPU here; use host "
           "memory (device 'cpu'), or run on a machine with an NVIDIA GPU and driver";
  }
  if (error == cudaErrorInsufficientDriver) {
    return fmt::format("the NVIDIA driver is older than the CUDA runtime gdap was built with ({}.{}): update the "
                       "driver", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
  }
  if (error == cudaErrorNoDevice) {
    return "no CUDA GPU was found: the NVIDIA driver is there but sees no device (is CUDA_VISIBLE_DEVICES empty "
           "or wrong?)";
  }
  return cudaGetErrorString(error);
}

}  // namespace

std::string error_text(int code, const std::string& what) {
  const auto error = static_cast<cudaError_t>(code);
  (void)cudaGetLastError();
  return fmt::format("{} failed: {} ({})", what, cause(error), cudaGetErrorName(error));
}

void fail_cuda(int code, const std::string& what, gdap_status status) { throw Error(status, error_text(code, what)); }

void check_cuda(int code, const char* what) {
  if (code != cudaSuccess) fail_cuda(code, what);
}

DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }

char* DeviceBuffer::reserve(int64_t bytes) {
  if (bytes <= bytes_) return data_;
  // Callers only grow their buffer between redistributions on one stream; wait for it to be idle.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaFree(data_);
  data_ = nullptr, bytes_ = 0;
  check_cuda(cudaMalloc(&data_, static_cast<size_t>(bytes)), "cudaMalloc (staging buffer)");
  bytes_ = bytes;
  return data_;
}

DeviceEvent::DeviceEvent() {
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  event_ = e;
}
DeviceEvent::~DeviceEvent() { cudaEventDestroy(static_cast<cudaEvent_t>(event_)); }
void DeviceEvent::record(void* stream) {
  check_cuda(cudaEventRecord(static_cast<cudaEvent_t>(event_), as_stream(stream)), "cudaEventRecord");
}
void DeviceEvent::wait_on(void* stream) const {
  check_cuda(cudaStreamWaitEvent(as_stream(stream), static_cast<cudaEvent_t>(event_), 0), "cudaStreamWaitEvent");
}

DeviceStream::DeviceStream() {
  int least = 0, greatest = 0;
  check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest), "cudaStreamCreateWithPriority");
  stream_ = s;
}
// Queued work still finishes: CUDA releases the stream after it.
DeviceStream::~DeviceStream() { cudaStreamDestroy(static_cast<cudaStream_t>(stream_)); }

int current_device() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

namespace {

// This thread's CallerDevice scopes: how deeply nested, and the caller's device once noted.
struct Kept {
  int depth = 0;
  bool noted = false;
  int device = 0;
};
thread_local Kept kept;

}  // namespace

void set_device(int device) {
  if (kept.depth > 0 && !kept.noted) kept.noted = cudaGetDevice(&kept.device) == cudaSuccess;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
}

CallerDevice::CallerDevice() noexcept { ++kept.depth; }

CallerDevice::~CallerDevice() {
  if (--kept.depth > 0 || !kept.noted) return;
  kept.noted = false;
  int now = 0;
  if (cudaGetDevice(&now) == cudaSuccess && now == kept.device) return;
  if (cudaSetDevice(kept.device) != cudaSuccess) (void)cudaGetLastError();  // nothing to report from a destructor
}

DeviceScope::DeviceScope(int device) noexcept {
  error_ = cudaGetDevice(&previous_);
  if (error_ == cudaSuccess && previous_ != device) {
    error_ = cudaSetDevice(device);
    switched_ = error_ == cudaSuccess;
  }
}

int DeviceScope::restore() noexcept {
  if (!switched_) return cudaSuccess;
  switched_ = false;
  return cudaSetDevice(previous_);
}

void enable_peer_access(int device, int peer) {
  if (device == peer) return;
  static std::mutex mutex;
  static std::set<std::pair<int, int>> enabled;
  std::lock_guard lock(mutex);
  if (enabled.count({device, peer})) return;
  int can = 0;
  check_cuda(cudaDeviceCanAccessPeer(&can, device, peer), "cudaDeviceCanAccessPeer");
  if (!can) fail(GDAP_ERR_UNSUPPORTED, "GPU {} cannot access the memory of GPU {} (no peer access)", device, peer);
  const int previous = current_device();
  set_device(device);
  const cudaError_t status = cudaDeviceEnablePeerAccess(peer, 0);
  set_device(previous);
  if (status == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // clear the sticky-free error
  else check_cuda(status, "cudaDeviceEnablePeerAccess");
  enabled.insert({device, peer});
}

void synchronize_stream(void* stream) { check_cuda(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize"); }

void copy_bytes(void* dst, const void* src, int64_t bytes) {
  check_cuda(cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDefault), "cudaMemcpy");
}

bool allocation_of(const void* p, void*& base, int64_t& bytes) {
  using GetRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static const GetRange get_range = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return static_cast<GetRange>(nullptr);
    }
    return reinterpret_cast<GetRange>(f);
  }();
  CUdeviceptr b = 0;
  size_t size = 0;
  if (get_range == nullptr || get_range(&b, &size, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return false;
  base = reinterpret_cast<void*>(b);
  bytes = static_cast<int64_t>(size);
  return true;
}

void copy_2d_async(void* dst, int64_t dst_pitch, const void* src, int64_t src_pitch, int64_t width, int64_t rows,
                   void* stream) {
  if (width == 0 || rows == 0) return;
  check_cuda(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_pitch), src, static_cast<size_t>(src_pitch),
                               static_cast<size_t>(width), static_cast<size_t>(rows), cudaMemcpyDefault, as_stream(stream)),
             "cudaMemcpy2DAsync");
}

StreamBuffer::StreamBuffer(int64_t bytes, void* stream) : stream_(stream) {
  if (bytes <= 0) return;
  const cudaError_t e = cudaMallocAsync(&data_, static_cast<size_t>(bytes), as_stream(stream));
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(GDAP_ERR_NO_MEMORY, "no device memory for a {}-byte buffer", bytes);
  }
  check_cuda(e, "cudaMallocAsync");
}

StreamBuffer::~StreamBuffer() {
  if (data_ != nullptr) cudaFreeAsync(data_, as_stream(stream_));
}

}  // namespace gdap::cuda
