// The CUDA plumbing every layer shares, behind plain C++ so that callers compile without the CUDA
// headers: which device is current, CUDA's errors as gdap's, peer access and whole-device waits.
// Without CUDA (cuda/none.cpp) every call that needs a device throws GDAP_ERR_UNSUPPORTED.
// The rest of the folder: stream.hpp (events, streams), buffer.hpp (device buffers),
// copy_kernel.hpp (the batched strided copy kernel).
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <string>

namespace gdap::cuda {

// "<what> failed: <CUDA's description> (<error name>)" for a failed call's error code. Clears the
// runtime's last error, so that an error gdap reports is not blamed on the caller's next call.
std::string error_text(int code, const std::string& what);
// Throws `status` (GDAP_ERR_DEVICE unless said) with error_text.
[[noreturn]] void fail_cuda(int code, const std::string& what, gdap_status status = GDAP_ERR_DEVICE);
// fail_cuda unless `code` is cudaSuccess.
void check_cuda(int code, const char* what);

int current_device();
void set_device(int device);

// Makes `device` current for its lifetime, then the caller's again; switches only when needed, so
// that a caller already on `device` sees no cudaSetDevice. Never throws (destructors use it):
// error() is the switch's CUDA error (0: none), restore() restores early and returns its own.
class DeviceScope {
 public:
  explicit DeviceScope(int device) noexcept;
  ~DeviceScope() { (void)restore(); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  int error() const { return error_; }
  int restore() noexcept;

 private:
  int previous_ = 0;
  bool switched_ = false;
  int error_ = 0;
};

// Keeps the calling thread's current device across one C entry point: the engines switch to their
// sections' device with set_device and do not switch back (a thread that runs many exchanges pays
// one switch), so a caller who had another device current would find it changed after
// gdap_redistribute (a PyTorch test found cuda:1 current). While one lives (the outermost counts),
// the first set_device on this thread notes the caller's device, which the destructor restores.
// Costs nothing on paths that never switch: no CUDA call unless set_device ran.
class CallerDevice {
 public:
  CallerDevice() noexcept;
  ~CallerDevice();
  CallerDevice(const CallerDevice&) = delete;
  CallerDevice& operator=(const CallerDevice&) = delete;
};

// The CUDA allocation that holds `p` (CUDA IPC shares whole allocations): its base and size in
// bytes. False when `p` is in none, or the driver lacks cuMemGetAddressRange (reached through the
// runtime's entry-point query, so that gdap links cudart only).
bool allocation_of(const void* p, void*& base, int64_t& bytes);

// Lets `device` access `peer`'s memory (idempotent; GDAP_ERR_UNSUPPORTED if it cannot).
void enable_peer_access(int device, int peer);
void synchronize_stream(void* stream);
// Copies `bytes` between any two addresses CUDA knows (host, device, pinned, managed); returns when done.
void copy_bytes(void* dst, const void* src, int64_t bytes);
// Queues a strided 2-d copy of `rows` rows of `width` bytes on `stream` (cudaMemcpy2DAsync: the
// copy engines, not SMs; across GPUs peer to peer); nothing for an empty box.
void copy_2d_async(void* dst, int64_t dst_pitch, const void* src, int64_t src_pitch, int64_t width, int64_t rows,
                   void* stream);

}  // namespace gdap::cuda
