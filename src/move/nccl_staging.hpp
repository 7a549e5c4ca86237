// What the NCCL executors (redistribution: exec_nccl.cpp, halo exchange: halo_nccl.cpp) share:
// the messages of one call routed once and kept on the communicator while the plan and the
// sections stay the same, then queued on its stream as
//   1. one copy kernel that packs every message that is not one contiguous run into a staging
//      buffer (and does the rank's own copies);
//   2. one NCCL group of ncclSend/ncclRecv, contiguous messages going to and from the sections
//      themselves;
//   3. one copy kernel that unpacks the staged receives.
#pragma once

#include "comm/comm.hpp"
#include "move/copy.hpp"
#include "move/device.hpp"

#include <cstdint>
#include <vector>

namespace gdap {
class NcclComm;
}

namespace gdap::move {

class NcclStaging final : public Scratch {
 public:
  // True if the routes were built for `key` (whatever identifies the plan and the sections).
  bool holds(const std::vector<int64_t>& key) const { return key_ == key; }
  // Starts routing anew, with staging buffers of at least these bytes (current device).
  void begin(int64_t send_bytes, int64_t recv_bytes);
  // One message of `bytes` to `peer`, read by `copies` from `data`: sent from `data` itself when
  // the copies are one run, else packed into the send staging (the copies' packed offsets count
  // the message's place there, `offset` bytes in).
  void send(int peer, int64_t bytes, const std::vector<Copy2D>& copies, const char* data, int64_t offset);
  // The same for a message received and unpacked by `copies` into `data`.
  void recv(int peer, int64_t bytes, const std::vector<Copy2D>& copies, char* data, int64_t offset);
  // Copies of the rank's own, done by the packing kernel.
  void local(const std::vector<Copy2D>& copies, const char* src, char* dst);
  // Uploads both kernels' copies (queued on `stream`) and remembers `key`.
  void end(std::vector<int64_t> key, void* stream);
  // Queues the three steps on the communicator's stream.
  void run(NcclComm& comm) const;

 private:
  struct Transfer {
    int peer;
    int64_t bytes;
    char* data;
  };
  std::vector<int64_t> key_;
  DeviceBuffer send_buffer_, recv_buffer_;
  char *send_staging_ = nullptr, *recv_staging_ = nullptr;
  DeviceBatch pack_, unpack_;
  std::vector<DeviceCopy> pack_copies_, unpack_copies_;  // while routing
  std::vector<Transfer> sends_, recvs_;
};

}  // namespace gdap::move
