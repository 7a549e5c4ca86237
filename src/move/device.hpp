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
  // Replaces the batch (current device; queued on `stream`, which later launches must use too).
  void upload(std::vector<int64_t> key, const std::vector<DeviceCopy>& copies, void* stream);
  // Queues the kernel on `stream` (current device). No-op for an empty batch.
  void launch(void* stream) const;
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
// Lets `device` access `peer`'s memory (idempotent; GDAP_ERR_UNSUPPORTED if it cannot).
void enable_peer_access(int device, int peer);
void synchronize_stream(void* stream);
// Copies `bytes` between any two addresses CUDA knows (host, device, pinned, managed); returns when done.
void copy_bytes(void* dst, const void* src, int64_t bytes);
// Throws GDAP_ERR_DEVICE naming `what` and CUDA's message for a failed call's error code.
void check_cuda(int code, const char* what);

}  // namespace gdap::move
