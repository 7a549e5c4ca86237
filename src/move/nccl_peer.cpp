#include "move/nccl_peer.hpp"

#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "move/device.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <string_view>

namespace gdap::move {
namespace {

// One rank's offer, as its share of the agreement's allgather, followed by `ndim` int64 strides.
struct Offer {
  uint32_t version = 1;
  int32_t usable = 0;   // 0: this rank's peers cannot write into its destination
  int32_t has_dst = 0;  // 0: no destination section (nobody sends to this rank)
  int32_t device = -1;
  uint64_t process = 0;  // this process's random token: pids repeat across PID namespaces
  uint64_t host = 0;     // the host name's and boot's hash: CUDA IPC stays within one host
  uint64_t dst = 0;     // the destination section's address in its own process
  int64_t offset = 0;   // of `dst` from the allocation `handle` exports
  cudaIpcMemHandle_t handle{};
  int64_t ndim = 0;
};

struct Peer {
  Offer offer;
  std::vector<int64_t> strides;
};

Peer parse(const std::string& share) {
  Peer p;
  if (share.size() >= sizeof(Offer)) std::memcpy(&p.offer, share.data(), sizeof(Offer));
  if (share.size() < sizeof(Offer) || p.offer.version != Offer{}.version || p.offer.ndim < 0 ||
      share.size() != sizeof(Offer) + static_cast<size_t>(p.offer.ndim) * sizeof(int64_t)) {
    fail(GDAP_ERR_INTERNAL, "an NCCL peer offer of {} bytes does not parse (another gdap version on a peer?)", share.size());
  }
  p.strides.resize(static_cast<size_t>(p.offer.ndim));
  std::memcpy(p.strides.data(), share.data() + sizeof(Offer), p.strides.size() * sizeof(int64_t));
  return p;
}

uint64_t host_hash() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string id(name);
  if (std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {  // containers share the host's
    char boot[64] = {};
    if (std::fgets(boot, sizeof boot, f)) id += boot;
    std::fclose(f);
  }
  return std::hash<std::string>{}(id);
}

// Drawn once per process: two ranks hold the same token only in the same address space.
uint64_t process_token() {
  static const uint64_t token = [] {
    std::random_device entropy;
    return (uint64_t{entropy()} << 32 | entropy()) ^ static_cast<uint64_t>(getpid());
  }();
  return token;
}

bool wanted() {
  const char* env = std::getenv("GDAP_NCCL_PEER");
  return env == nullptr || std::string_view(env) != "0";
}

// The allocation that holds `p`: CUDA IPC exports whole allocations.
bool allocation_of(const void* p, CUdeviceptr& base) {
  using GetRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static GetRange get_range = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<GetRange>(nullptr);
    }
    return reinterpret_cast<GetRange>(f);
  }();
  size_t size = 0;
  return get_range != nullptr && get_range(&base, &size, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS;
}

// What a rank keeps between calls: the offers its last decision was made for, the peers' mapped
// destinations, and the copy kernel.
struct PeerScratch final : Scratch {
  std::vector<std::string> shares;
  std::vector<Peer> peers;           // the same, parsed
  bool push = false;
  uint64_t generation = 0;           // changes with every new decision: part of the kernel's key
  std::vector<char*> dst;            // per rank: its destination in this process (NULL: not sent to)
  std::vector<void*> opened;         // CUDA IPC mappings, closed when the offers change
  DeviceBatch batch;
  DeviceBuffer flag;                 // the brackets' one element
  int device = -1;                   // where the mappings live
  ~PeerScratch() override { close(); }
  void close() {  // after every kernel that may still write through the mappings
    if (opened.empty()) return;
    int current = 0;
    cudaGetDevice(&current);
    cudaSetDevice(device);
    cudaDeviceSynchronize();
    for (void* p : opened) cudaIpcCloseMemHandle(p);
    opened.clear();
    cudaSetDevice(current);
  }
};

// Maps every peer's destination (whatever the plan, so that a later plan on the same sections
// finds them mapped); false if one cannot be reached.
bool map_peers(NcclComm& comm, const std::vector<Peer>& peers, PeerScratch& s) {
  const Offer& mine = peers[static_cast<size_t>(comm.rank)].offer;
  s.dst.assign(peers.size(), nullptr);
  for (size_t q = 0; q < peers.size(); ++q) {
    const Offer& o = peers[q].offer;
    if (q == static_cast<size_t>(comm.rank) || !o.has_dst) continue;
    if (o.host != mine.host) return false;
    if (o.process == mine.process) {
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, comm.device(), o.device) != cudaSuccess || !can) return cudaGetLastError(), false;
      enable_peer_access(comm.device(), o.device);
      s.dst[q] = reinterpret_cast<char*>(o.dst);
      continue;
    }
    void* base = nullptr;
    if (cudaIpcOpenMemHandle(&base, o.handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) return cudaGetLastError(), false;
    s.opened.push_back(base);
    s.dst[q] = static_cast<char*>(base) + o.offset;
  }
  return true;
}

// Decides, with the peers, whether this call's offers allow direct writes (one more allgather,
// only when the offers changed since the last decision; every rank sees the same offers, so all
// of them take this step together).
void decide(NcclComm& comm, const std::vector<std::string>& shares, PeerScratch& s) {
  if (shares == s.shares) return;
  s.close();
  s.device = comm.device();
  s.shares = shares;
  s.push = false;
  ++s.generation;
  s.peers.clear();
  bool usable = true;
  for (const std::string& share : shares) {
    s.peers.push_back(parse(share));
    usable = usable && s.peers.back().offer.usable;
  }
  if (!usable) return;  // the same verdict on every rank, with no vote
  bool reached = false;
  try {
    reached = map_peers(comm, s.peers, s);
  } catch (const Error&) {
    reached = false;
  }
  bool all = true;
  for (const std::string& vote : comm.allgather(reached ? "1" : "0")) all = all && vote == "1";
  s.push = all;
  if (!all) s.close();
}

// A one-element all-reduce on the communicator's stream: done on a rank only once every rank's
// stream has reached it.
void bracket(NcclComm& comm, PeerScratch& s) {
  char* flag = s.flag.reserve(sizeof(int32_t));
  comm.settle(ncclAllReduce(flag, flag, 1, ncclInt32, ncclSum, comm.handle(), static_cast<cudaStream_t>(comm.stream)),
              "ncclAllReduce (the direct writes' bracket)");
}

void upload_copies(const Call& call, PeerScratch& s, std::vector<int64_t> key, int device) {
  const RankPlan& plan = call.plan->plan;
  const int64_t es = call.plan->element_size;
  std::vector<DeviceCopy> device_copies;
  std::vector<Copy2D> copies;
  if (call.src) {
    const Side source{Side::source, call.src->section.strides};
    const char* from = static_cast<const char*>(call.src->data());
    // Rank r writes to r + 1 first, then r + 2, ...: the kernel walks its copies in order, so every
    // rank writing to the same peer first would crowd that peer's links while others idle.
    std::vector<const Message*> sends;
    for (const Message& m : plan.messages(Part::send)) sends.push_back(&m);
    const int64_t P = call.comm.size, r = call.comm.rank;
    std::stable_sort(sends.begin(), sends.end(), [&](const Message* a, const Message* b) {
      return (a->peer - r + P) % P < (b->peer - r + P) % P;
    });
    for (const Message* sent : sends) {
      const Message& m = *sent;
      const Peer& peer = s.peers[static_cast<size_t>(m.peer)];
      copies.clear();
      message_copies(plan, Part::send, m, source, Side{Side::destination, peer.strides}, es, copies);
      char* to = s.dst[static_cast<size_t>(m.peer)];
      if (to == nullptr) fail(GDAP_ERR_INTERNAL, "rank {} sends to rank {}, which offered no destination", call.comm.rank, m.peer);
      append_device_copies(device_copies, copies, from, to, peer.offer.device != device || peer.offer.process != process_token());
    }
    if (call.dst) {
      append_device_copies(device_copies,
                           part_copies(plan, Part::local, source, Side{Side::destination, call.dst->section.strides}, es),
                           from, static_cast<char*>(call.dst->data()));
    }
  }
  s.batch.upload(std::move(key), device_copies, call.comm.stream);
}

}  // namespace

std::string peer_share(const Call& call, int device) {
  set_device(device);  // the allocation look-up asks the current device's context
  Offer o;
  o.process = process_token();
  o.host = host_hash();
  o.device = device;
  o.usable = wanted() ? 1 : 0;
  const gdap_array* dst = call.dst;
  std::vector<int64_t> strides;
  if (dst && dst->data() && call.plan->dst_shape) {
    o.has_dst = 1;
    o.dst = reinterpret_cast<uint64_t>(dst->data());
    strides = dst->section.strides;
    o.ndim = static_cast<int64_t>(strides.size());
    CUdeviceptr base = 0;
    if (o.usable && allocation_of(dst->data(), base) && cudaIpcGetMemHandle(&o.handle, reinterpret_cast<void*>(base)) == cudaSuccess) {
      o.offset = static_cast<int64_t>(o.dst - static_cast<uint64_t>(base));
    } else {
      cudaGetLastError();
      o.usable = 0;
    }
  }
  std::string share(reinterpret_cast<const char*>(&o), sizeof o);
  share.append(reinterpret_cast<const char*>(strides.data()), strides.size() * sizeof(int64_t));
  return share;
}

bool run_nccl_peer(const Call& call, NcclComm& comm, const std::vector<std::string>& shares, std::vector<int64_t> key) {
  PeerScratch& s = kept_scratch<PeerScratch>(comm.peer_scratch);
  decide(comm, shares, s);
  if (!s.push) return false;
  key.push_back(static_cast<int64_t>(s.generation));  // the peers' mappings too
  if (!s.batch.holds(key)) upload_copies(call, s, std::move(key), comm.device());
  bracket(comm, s);
  try {
    s.batch.launch(comm.stream);
  } catch (const Error&) {
    bracket(comm, s);  // the peers' second bracket still completes; this rank reports the failure
    throw;
  }
  bracket(comm, s);
  return true;
}

}  // namespace gdap::move
