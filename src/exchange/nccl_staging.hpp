// The NCCL engine's send/receive path (nccl.cpp): the wire messages of one call routed once and
// kept on the communicator (Cache::recent: a few programs) while the program, the sections and the
// staging buffers (NcclStagingBuffers: one pair per kind, shared by its programs) stay the same,
// then queued on its stream as
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

#include "comm/cache.hpp"
#include "cuda/copy_kernel.hpp"
#include "cuda/buffer.hpp"
#include "cuda/stream.hpp"
#include "exchange/copy.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace gdap {
class NcclComm;
}

namespace gdap::exchange {

// The staging buffers every program of a kind routes through, grown to the largest (current
// device): the calls on a communicator are queued one after another on its stream. A larger buffer
// has another address, so the routes kept for the old one no longer match (NcclStaging::holds).
struct NcclStagingBuffers final : Scratch {
  cuda::DeviceBuffer send, recv;
};

class NcclStaging {
 public:
  // True if the routes were built for `key` (whatever identifies the plan and the sections) and
  // these staging buffers.
  bool holds(const std::vector<int64_t>& key, const char* send_staging, const char* recv_staging) const {
    return key_ == key && send_staging_ == send_staging && recv_staging_ == recv_staging;
  }
  // Starts routing anew through these staging buffers (large enough for the program).
  void begin(char* send_staging, char* recv_staging);
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
    std::vector<cuda::DeviceCopy> pack, unpack;  // while routing
    std::unique_ptr<cuda::DeviceBatch> packer, unpacker;
    std::unique_ptr<cuda::DeviceEvent> packed, moved;  // more than one round: the order between the streams
  };
  Round& round(size_t k);
  void route(bool sending, int peer, int64_t bytes, const std::vector<Copy2D>& copies, char* data, int64_t offset);
  void run_rounds(NcclComm& comm);
  static void group(const Round& r, NcclComm& comm, void* stream);

  std::vector<int64_t> key_;
  char *send_staging_ = nullptr, *recv_staging_ = nullptr;
  std::vector<Round> rounds_;
  size_t used_ = 0;  // rounds of the current routes
  std::vector<cuda::DeviceCopy> local_copies_;
  cuda::DeviceBatch local_;
  std::unique_ptr<cuda::DeviceStream> link_;  // the NCCL groups' stream, for more than one round
};

}  // namespace gdap::exchange
