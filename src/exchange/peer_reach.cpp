// Reaching peers' device memory on one host (see peer_reach.hpp).
#include "exchange/peer_reach.hpp"

#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <string_view>

namespace gdap::exchange {
namespace {

// The host's identity: its name and boot. GDAP_TEST_HOST, when set, stands for it instead, so that
// a test can give each process of one machine its own host and take the path of ranks on different
// hosts (no CUDA IPC mappings, no direct writes: NCCL's send/receive).
uint64_t host_hash() {
  if (const char* test = std::getenv("GDAP_TEST_HOST"); test != nullptr && *test != '\0') {
    return std::hash<std::string>{}(std::string("GDAP_TEST_HOST=") + test);
  }
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

}  // namespace

PeerAddress peer_address(const void* p, int device) {
  cuda::set_device(device);
  PeerAddress a;
  a.process = process_token();
  a.host = host_hash();
  a.device = device;
  a.address = reinterpret_cast<uint64_t>(p);
  void* base = nullptr;
  int64_t bytes = 0;
  if (p != nullptr && cuda::allocation_of(p, base, bytes) && cudaIpcGetMemHandle(&a.handle, base) == cudaSuccess) {
    a.offset = static_cast<int64_t>(a.address - reinterpret_cast<uint64_t>(base));
    a.exported = 1;
  } else {
    cudaGetLastError();
  }
  return a;
}

bool direct_writes_wanted() {
  const char* env = std::getenv("GDAP_NCCL_PEER");
  return env == nullptr || std::string_view(env) != "0";
}

bool direct_writes_required() {
  const char* env = std::getenv("GDAP_NCCL_PEER");
  return env != nullptr && std::string_view(env) == "1";
}

bool crosses_link(const PeerAddress& a, int device) { return a.device != device || a.process != process_token(); }

char* PeerMappings::reach(const PeerAddress& a, int device) {
  device_ = device;
  if (a.host != host_hash() || !a.exported) return nullptr;
  if (a.process == process_token()) {
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, device, a.device) != cudaSuccess || !can) return cudaGetLastError(), nullptr;
    try {
      cuda::enable_peer_access(device, a.device);
    } catch (const Error&) {
      return nullptr;
    }
    return reinterpret_cast<char*>(a.address);
  }
  void* base = nullptr;
  if (cudaIpcOpenMemHandle(&base, a.handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) return cudaGetLastError(), nullptr;
  opened_.push_back(base);
  return static_cast<char*>(base) + a.offset;
}

void PeerMappings::close() {
  if (opened_.empty()) return;
  const cuda::DeviceScope on(device_);
  cudaDeviceSynchronize();
  for (void* p : opened_) cudaIpcCloseMemHandle(p);
  opened_.clear();
}

void offer_unreadable(size_t bytes) {
  fail(GDAP_ERR_INTERNAL, "an NCCL peer offer of {} bytes does not parse (another gdap version on a peer?)", bytes);
}

void peer_bracket(NcclComm& comm, char* flag) {
  comm.settle(ncclAllReduce(flag, flag, 1, ncclInt32, ncclSum, comm.handle(), static_cast<cudaStream_t>(comm.stream)),
              "ncclAllReduce (the direct writes' bracket)");
}

bool every_rank(NcclComm& comm, bool mine) {
  bool all = true;
  for (const std::string& vote : comm.allgather(mine ? "1" : "0")) all = all && vote == "1";
  return all;
}

}  // namespace gdap::exchange
