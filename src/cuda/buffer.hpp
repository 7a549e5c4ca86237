// Device memory gdap takes for itself: staging that only grows and is freed with its owner, and
// buffers freed in stream order for a kernel's scratch.
#pragma once

#include <cstdint>

namespace gdap::cuda {

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

// Device memory freed in stream order: what was queued on `stream` before the free may still use
// it. Taken from the stream-ordered pool; GDAP_ERR_NO_MEMORY when the device has no room.
class StreamBuffer {
 public:
  StreamBuffer(int64_t bytes, void* stream);
  ~StreamBuffer();
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  void* stream_ = nullptr;
};

}  // namespace gdap::cuda
