// The batched strided copy kernel every device path of gdap runs: a list of 2-d copies between
// absolute addresses (any GPU's memory the current one can reach), uploaded once and launched as
// one kernel as often as needed, optionally ordered against other GPUs' kernels by flags.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace gdap::cuda {

// One strided 2-d copy between absolute device-accessible addresses (see exchange/copy.hpp's Copy2D).
struct DeviceCopy {
  const char* src;
  char* dst;
  int64_t rows, row_bytes, src_pitch, dst_pitch;
  bool remote = false;  // reads or writes another GPU's memory (over NVLink or PCIe)
};

// Flags that order a batch's kernel with other GPUs' kernels without NCCL (exchange/halo_flags.cpp). Before
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

}  // namespace gdap::cuda
