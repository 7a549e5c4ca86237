// CUDA events and streams owned by gdap: what orders its kernels after the caller's work, and
// after each other across streams and GPUs.
#pragma once

namespace gdap::cuda {

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

}  // namespace gdap::cuda
