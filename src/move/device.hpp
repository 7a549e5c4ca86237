// What the executors need from CUDA, behind plain C++ so that they compile without the CUDA
// headers: a batched strided copy kernel with its descriptors kept on the device between calls,
// events, streams and peer access. Without CUDA every function throws GDAP_ERR_UNSUPPORTED.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace gdap::move {

// One strided 2-d copy between absolute device-accessible addresses (see copy.hpp's Copy2D).
struct DeviceCopy {
  const char* src;
  char* dst;
  int64_t rows, row_bytes, src_pitch, dst_pitch;
  bool remote = false;  // reads or writes another GPU's memory (over NVLink or PCIe)
};

// Flags that order a batch's kernel with other GPUs' kernels without NCCL (halo_peer.cpp). Before
// its first copy the kernel waits until every `wait` flag holds the launch's count or a later one
// (a cyclic 32-bit compare: counts may wrap), at most `timeout_ns`; past that it sets `*gave_up`
// (this device's memory: every later wait gives up at once) and `*timed_out` (host-mapped), and
// copies nothing. After its last copy it writes the count into every `signal` flag, behind a
// system-wide fence, so that its copies, to any GPU, land first. Flags may lie in other GPUs'
// memory. `done` (signals only): a zeroed counter on this device, the blocks' tally. Once
// `*gave_up` is set, every later launch of either kind returns at once, copying and signalling
// nothing.
struct BatchFlags {
  std::vector<uint32_t*> wait, signal;
  uint32_t* done = nullptr;
  uint32_t* gave_up = nullptr;   // zeroed, on this device
  int32_t* timed_out = nullptr;  // the device's view of a host-mapped word
  uint64_t timeout_ns = 0;
};

// A batch of copies uploaded once to one device and launched as one kernel as often as needed.
// Each row is split into tiles that are spread over the whole GPU, and each tile moves 16, 8, 4
// or 1 bytes per load, as the alignment of its addresses and pitches allows. Remote copies come
// first, so that the link-bound traffic starts at once rather than after the local copies.
class DeviceBatch {
 public:
  DeviceBatch();
  ~DeviceBatch();
  DeviceBatch(const DeviceBatch&) = delete;
  DeviceBatch& operator=(const DeviceBatch&) = delete;

  // True if the uploaded batch was built for `key` (whatever identifies its copies).
  bool holds(const std::vector<int64_t>& key) const;
  // Replaces the batch (current device; queued on `stream`, which later launches must use too),
  // with `flags` to wait on and signal at each launch when given.
  void upload(std::vector<int64_t> key, const std::vector<DeviceCopy>& copies, void* stream,
              const BatchFlags* flags = nullptr);
  // Queues the kernel on `stream` (current device); `count`: what the flags wait for and signal.
  // No-op for an empty batch without flags.
  void launch(void* stream, uint32_t count = 0) const;
  int64_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A device buffer that only grows; freed with its owner.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // At least `bytes` on the current device (which must not change between calls).
  char* reserve(int64_t bytes);
  // Forgets the buffer without freeing it (memory another GPU may still write into).
  void release() { data_ = nullptr, bytes_ = 0; }

 private:
  char* data_ = nullptr;
  int64_t bytes_ = 0;
};

// A CUDA event without timing, created on the current device.
class DeviceEvent {
 public:
  DeviceEvent();
  ~DeviceEvent();
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  void record(void* stream);
  // Makes `stream` wait (on the device) for the last record.
  void wait_on(void* stream) const;

 private:
  void* event_ = nullptr;
};

// A nonblocking CUDA stream of the highest priority, created on the current device: the NCCL
// rounds' stream, so that their kernels take SMs ahead of the copy kernels they overlap.
class DeviceStream {
 public:
  DeviceStream();
  ~DeviceStream();
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;
  void* get() const { return stream_; }

 private:
  void* stream_ = nullptr;
};

int current_device();
void set_device(int device);
// Makes `device` current for its lifetime, then restores the caller's; never throws (destructors
// use it), ignoring CUDA's errors.
class DeviceScope {
 public:
  explicit DeviceScope(int device) noexcept;
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};
// Lets `device` access `peer`'s memory (idempotent; GDAP_ERR_UNSUPPORTED if it cannot).
void enable_peer_access(int device, int peer);
void synchronize_stream(void* stream);
// Copies `bytes` between any two addresses CUDA knows (host, device, pinned, managed); returns when done.
void copy_bytes(void* dst, const void* src, int64_t bytes);
// Throws GDAP_ERR_DEVICE naming `what` and CUDA's message for a failed call's error code.
void check_cuda(int code, const char* what);

}  // namespace gdap::move
