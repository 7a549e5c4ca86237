// How the ranks of an NCCL communicator on one host reach each other's device memory, for the
// NCCL engine's paths that write straight into a peer's buffer instead of sending through NCCL
// (peer_writes.cpp: into the peers' receiving sections; bound_writes.cpp: into the staging of a
// bound exchange's peers). A rank describes a
// buffer of its own (PeerAddress, which travels in an allgather); a peer in the same process reaches
// it through its pointer and peer access, a peer in another process of the host through CUDA IPC.
#pragma once


#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ranges>
#include <string>
#include <vector>

namespace gdap {
class NcclComm;
}

namespace gdap::exchange {

// A device buffer as its peers see it (trivially copyable: it travels as bytes).
struct PeerAddress {
  uint64_t process = 0;  // the owning process's random token: pids repeat across PID namespaces
  uint64_t host = 0;     // the host name's and boot's hash: CUDA IPC stays within one host
  uint64_t address = 0;  // in the owning process
  int64_t offset = 0;    // of `address` from the allocation `handle` exports
  cudaIpcMemHandle_t handle{};
  int32_t device = -1;
  int32_t exported = 0;  // 0: CUDA IPC cannot export it (stream-ordered pools, VMM allocations)
};

// Describes `p`, device memory on `device` (made current: the allocation look-up asks its context).
PeerAddress peer_address(const void* p, int device);

// False when GDAP_NCCL_PEER=0 asks for NCCL send/receive instead of direct writes.
bool direct_writes_wanted();
// True when GDAP_NCCL_PEER=1 asks for direct writes or an error (tests: the path was taken).
bool direct_writes_required();

// True if a copy from `device` into `a` crosses a link (another GPU, or another process's memory).
bool crosses_link(const PeerAddress& a, int device);

// The peers' buffers one rank has mapped; every mapping closes together, after the device is idle.
class PeerMappings {
 public:
  PeerMappings() = default;
  ~PeerMappings() { close(); }
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;
  // Where this rank, on `device`, writes to reach `a`; NULL when it cannot (another host, no peer
  // access, or memory CUDA IPC did not export). Never throws.
  char* reach(const PeerAddress& a, int device);
  // Waits for `device` (kernels may still write through the mappings), then closes them.
  void close();

 private:
  std::vector<void*> opened_;  // CUDA IPC mappings
  int device_ = -1;
};

// A one-element NCCL all-reduce on the communicator's stream (`flag`: 4 bytes on its device): done
// on a rank only once every rank's stream has reached it, so it orders the direct writes.
void peer_bracket(NcclComm& comm, char* flag);

// An offer as it travels in an allgather: a header H (trivially copyable, with a `version` that
// changes with its layout) followed by `head.*count` entries E.
template <typename H, typename E>
struct Offered {
  H head;
  std::vector<E> entries;
};

template <typename H, typename E>
std::string write_offer(const H& head, const std::vector<E>& entries) {
  std::string share(reinterpret_cast<const char*>(&head), sizeof head);
  share.append(reinterpret_cast<const char*>(entries.data()), entries.size() * sizeof(E));
  return share;
}

// Throws GDAP_ERR_INTERNAL when `share` is not such an offer (another gdap version on a peer?).
void offer_unreadable(size_t bytes);
template <typename H, typename E>
Offered<H, E> read_offer(const std::string& share, int64_t H::*count) {
  Offered<H, E> o;
  if (share.size() < sizeof(H)) offer_unreadable(share.size());
  std::memcpy(&o.head, share.data(), sizeof(H));
  const int64_t n = o.head.*count;
  if (o.head.version != H{}.version || n < 0 || share.size() != sizeof(H) + static_cast<size_t>(n) * sizeof(E)) {
    offer_unreadable(share.size());
  }
  o.entries.resize(static_cast<size_t>(n));
  std::memcpy(static_cast<void*>(o.entries.data()), share.data() + sizeof(H), o.entries.size() * sizeof(E));
  return o;
}

// True on every rank if `mine` is true on every rank (one allgather of one byte each).
bool every_rank(NcclComm& comm, bool mine);

}  // namespace gdap::exchange
