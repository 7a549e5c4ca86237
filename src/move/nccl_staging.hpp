// What the NCCL executors (redistribution: exec_nccl.cpp, halo exchange: halo_nccl.cpp) share:
// the messages of one call routed once and kept on the communicator while the plan and the
// sections stay the same, then queued on its stream as
//   1. one copy kernel that packs every message that is not one contiguous run into a staging
//      buffer (and does the rank's own copies);
//   2. one NCCL group of ncclSend/ncclRecv, contiguous messages going to and from the sections
//      themselves;
//   3. one copy kernel that unpacks the staged receives.
// A message of 64 MiB or more is cut into up to 8 pieces (both ends cut it alike, from its size
// alone), and piece k of every message goes in round k: then the packing of round k + 1 and the
// unpacking of round k - 1 run on the communicator's stream while round k's NCCL group runs on a
// stream of higher priority, so that the copies hide behind the link instead of adding to it.
#pragma once

#include "comm/comm.hpp"
#include "move/copy.hpp"
#include "move/device.hpp"

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace gdap {
class NcclComm;
}

namespace gdap::move {

// Throws unless `a` is in CUDA device memory on the communicator's GPU (`device`): GDAP_ERR_UNSUPPORTED
// for host memory, GDAP_ERR_INVALID_ARGUMENT for another GPU. `which` names it ("source",
// "local"); `takes` says what the operation takes ("the reductions take").
void check_nccl_section(const gdap_array* a, int device, std::string_view which, std::string_view takes);

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
  // Uploads the kernels' copies (queued on `stream`) and remembers `key`.
  void end(std::vector<int64_t> key, void* stream);
  // Queues the rounds on the communicator's stream (and its own, for more than one round).
  void run(NcclComm& comm);

  // The bytes of each piece of a message of `bytes` (the message itself below 64 MiB).
  static int64_t piece_bytes(int64_t bytes);

 private:
  struct Transfer {
    int peer;
    int64_t bytes;
    char* data;
  };
  struct Round {  // piece k of every message that has one
    std::vector<Transfer> sends, recvs;
    std::vector<DeviceCopy> pack, unpack;  // while routing
    std::unique_ptr<DeviceBatch> packer, unpacker;
    std::unique_ptr<DeviceEvent> packed, moved;  // more than one round: the order between the streams
  };
  Round& round(size_t k);
  void route(bool sending, int peer, int64_t bytes, const std::vector<Copy2D>& copies, char* data, int64_t offset);
  void run_rounds(NcclComm& comm);
  static void group(const Round& r, NcclComm& comm, void* stream);

  std::vector<int64_t> key_;
  DeviceBuffer send_buffer_, recv_buffer_;
  char *send_staging_ = nullptr, *recv_staging_ = nullptr;
  std::vector<Round> rounds_;
  size_t used_ = 0;  // rounds of the current routes
  std::vector<DeviceCopy> local_copies_;
  DeviceBatch local_;
  std::unique_ptr<DeviceStream> link_;  // the NCCL groups' stream, for more than one round
};

}  // namespace gdap::move
