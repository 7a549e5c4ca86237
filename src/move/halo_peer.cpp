// The persistent halo exchange over NCCL by direct writes (halo.hpp): gdap_halo_exchange_init
// gives every rank's receive staging to its neighbours, and each gdap_exchange_start then queues,
// on the communicator's stream,
//   1. one copy kernel that gathers this rank's faces (strided or not) and writes each neighbour's
//      message packed into that neighbour's staging, across NVLink (and does the periodic wrap
//      onto the rank itself); its last block, once every block's writes are fenced, writes the
//      start's count into this rank's flag in each neighbour's staging;
//   2. one copy kernel that first waits until each neighbour's flag in this rank's staging holds
//      the count (every neighbour's writes are in), then scatters the staging into the padding.
// No NCCL call: the kernels order themselves through the flags (device.hpp, BatchFlags). The staging
// has two halves that the starts use in turn: a neighbour writes half k at start n + 2 only after
// its wait at start n + 1 for this rank's signal, which follows this rank's unpacking of start n
// (neighbours signal each other both ways, whichever way their messages go). The faces travel
// packed (whole cache lines over the link) and only the local reads and writes are strided.
// A wait longer than the communicator's timeout gives up: that start leaves the padding partly
// unfilled, the rank's kernels copy and signal nothing more (so its neighbours time out too), and
// every later start of the exchange fails with GDAP_ERR_TIMEOUT, where an NCCL all-reduce between the
// kernels (about as fast, docs/PERFORMANCE.md) would wait forever; CUDA stream memory operations on
// the same flags were slower. When a rank cannot reach a neighbour (another
// host, no peer access, GDAP_NCCL_PEER=0 on any rank) every rank keeps the NCCL send/receive path.
#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "move/device.hpp"
#include "move/halo.hpp"
#include "move/peer_reach.hpp"

#include <algorithm>
#include <string>

namespace gdap::move {
namespace {

// A message of this rank's: to or from `peer`, `elements` of it; a received one lands packed at
// `offset` elements into a half of the staging.
struct Route {
  int64_t peer = 0, offset = 0, elements = 0;
  int64_t incoming = 0;  // 1: received, 0: sent
};

// One rank's offer (its share of the init's agreement), followed by `routes` Route entries.
// Its staging holds two halves of `half_bytes`, then one 32-bit flag per rank of the communicator.
struct HaloOffer {
  uint32_t version = 2;
  int32_t usable = 0;    // 0: this rank cannot take direct writes (or does not want them)
  int32_t required = 0;  // 1: GDAP_NCCL_PEER=1 on this rank: direct writes or an error
  int32_t reserved = 0;
  PeerAddress staging;
  int64_t half_bytes = 0;
  int64_t element_size = 0;
  int64_t routes = 0;
};

// A neighbour's offer: the header, then the messages it sends and receives.
using Neighbour = Offered<HaloOffer, Route>;

// What a bound exchange keeps: its staging, its neighbours' mapped, the kernels of each half, and
// the flags' counter and time-out word.
struct HaloPeer final : Scratch {
  int device = -1;
  int64_t half_bytes = 0;
  int half = 0;         // the half of the next start
  uint32_t starts = 0;  // the count of the last start (wraps; the waits compare cyclically)
  DeviceBuffer staging, done;  // done: the push kernel's blocks' tally, then the waits' gave-up word
  int32_t* timed_out = nullptr;  // host-mapped: a wait gave up
  PeerMappings mappings;
  DeviceBatch push[2], unpack[2];
  ~HaloPeer() override {  // its kernels, and the neighbours' writes this rank waited for, are done
    const DeviceScope on(device);
    cudaDeviceSynchronize();
    // After a wait gave up, a late neighbour may still write into the staging: it stays allocated.
    if (timed_out != nullptr && *timed_out != 0) staging.release();
    cudaFreeHost(timed_out);
  }
};

int64_t staging_bytes(int64_t half_bytes, int64_t ranks) { return 2 * half_bytes + ranks * int64_t{sizeof(uint32_t)}; }

// Rank `from`'s flag in the staging at `staging` (in any process's view).
uint32_t* flag_in(char* staging, int64_t half_bytes, int64_t from) {
  return reinterpret_cast<uint32_t*>(staging + 2 * half_bytes) + from;
}

// Zeroes this rank's flags and the blocks' counter, and makes the time-out word.
void reset_flags(HaloPeer& p, char* staging, int64_t ranks) {
  check_cuda(cudaMemset(flag_in(staging, p.half_bytes, 0), 0, static_cast<size_t>(ranks) * sizeof(uint32_t)),
             "cudaMemset (flags)");
  check_cuda(cudaMemset(p.done.reserve(2 * sizeof(uint32_t)), 0, 2 * sizeof(uint32_t)), "cudaMemset (counter)");
  if (p.timed_out == nullptr) {
    check_cuda(cudaHostAlloc(&p.timed_out, sizeof(int32_t), cudaHostAllocMapped), "cudaHostAlloc (time-out word)");
  }
  *p.timed_out = 0;
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // before any neighbour can signal
}

// Neighbour `n`'s route for rank `me`'s message of `elements` (`incoming`: one `n` receives, else
// one `n` sends); throws when `n` has no such route (the ranks' halos were made from different maps).
const Route& route_of(const Neighbour& n, int64_t me, int64_t to, int64_t elements, bool incoming) {
  const char* verb = incoming ? "sends" : "expects";
  for (const Route& r : n.entries) {
    if (r.peer != me || (r.incoming != 0) != incoming) continue;
    if (r.elements == elements) return r;
    fail(GDAP_ERR_INVALID_ARGUMENT, "the ranks' halos do not match: rank {} {} {} elements {} rank {}, which has {}", me,
         verb, elements, incoming ? "to" : "from", to, r.elements);
  }
  fail(GDAP_ERR_INVALID_ARGUMENT, "the ranks' halos do not match: rank {} {} {} elements {} rank {}, which has none", me,
       verb, elements, incoming ? "to" : "from", to);
}

// Throws unless every rank's halo has this one's element size and each message of this rank's
// is one its peer has too, the other way round.
void check_routes(const gdap_halo& h, const std::vector<Neighbour>& all, int64_t me) {
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].head.element_size != h.element_size) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "the ranks' halos do not match: rank {}'s elements are {} bytes, rank {}'s {}", me,
           h.element_size, r, all[r].head.element_size);
    }
  }
  for (const HaloMessage& m : h.plan.sends) route_of(all[static_cast<size_t>(m.peer)], me, m.peer, m.elements, true);
  for (const HaloMessage& m : h.plan.recvs) route_of(all[static_cast<size_t>(m.peer)], me, m.peer, m.elements, false);
}

// Uploads both halves' kernels; false if a neighbour cannot be reached.
bool prepare(const HaloCall& call, const std::vector<Neighbour>& all, HaloPeer& p) {
  const gdap_halo& h = *call.halo;
  const int64_t es = h.element_size, me = call.comm.rank, P = call.comm.size;
  const std::vector<int64_t>& strides = call.local->section.strides;
  const HaloEnd sender{HaloEnd::sender, strides}, receiver{HaloEnd::receiver, strides}, packed{HaloEnd::packed, {}};
  set_device(p.device);
  char* data = static_cast<char*>(call.local->data());
  char* staging = p.staging.reserve(staging_bytes(p.half_bytes, P));
  reset_flags(p, staging, P);
  const std::vector<const HaloMessage*> sends = from_next_peer(h.plan.sends, me, P);
  std::vector<char*> reached(all.size(), nullptr);  // every neighbour, whichever way its messages go
  BatchFlags signals, waits;
  for (const std::vector<HaloMessage>* part : {&h.plan.sends, &h.plan.recvs}) {
    for (const HaloMessage& m : *part) {
      const Neighbour& n = all[static_cast<size_t>(m.peer)];
      char*& to = reached[static_cast<size_t>(m.peer)];
      if (to != nullptr) continue;
      if ((to = p.mappings.reach(n.head.staging, p.device)) == nullptr) return false;
      signals.signal.push_back(flag_in(to, n.head.half_bytes, me));
      waits.wait.push_back(flag_in(staging, p.half_bytes, m.peer));
    }
  }
  signals.done = reinterpret_cast<uint32_t*>(p.done.reserve(2 * sizeof(uint32_t)));
  waits.gave_up = signals.done + 1;
  int32_t* timed_out = nullptr;
  check_cuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&timed_out), p.timed_out, 0), "cudaHostGetDevicePointer");
  waits.timed_out = timed_out;
  signals.gave_up = waits.gave_up;  // a rank that gave up neither writes nor signals again
  waits.timeout_ns = static_cast<uint64_t>(std::min(call.comm.timeout, 1e9) * 1e9);
  std::vector<Copy2D> copies;
  for (int half = 0; half < 2; ++half) {
    std::vector<DeviceCopy> push, unpack;
    for (const HaloMessage* m : sends) {
      const Neighbour& n = all[static_cast<size_t>(m->peer)];
      char* to = reached[static_cast<size_t>(m->peer)];
      HaloMessage there = *m;
      there.offset = route_of(n, me, m->peer, m->elements, true).offset;
      copies.clear();
      halo_copies(there, sender, packed, es, copies);
      append_device_copies(push, copies, data, to + half * n.head.half_bytes, crosses_link(n.head.staging, p.device));
    }
    for (const HaloMessage& m : h.plan.local) {
      copies.clear();
      halo_copies(m, sender, receiver, es, copies);
      append_device_copies(push, copies, data, data);
    }
    for (const HaloMessage& m : h.plan.recvs) {
      copies.clear();
      halo_copies(m, packed, receiver, es, copies);
      append_device_copies(unpack, copies, staging + half * p.half_bytes, data);
    }
    p.push[half].upload({half}, push, call.comm.stream, &signals);
    p.unpack[half].upload({half}, unpack, call.comm.stream, &waits);
  }
  return true;
}

}  // namespace

std::string halo_peer_offer(const HaloCall& call, std::unique_ptr<Scratch>& bound) {
  auto& comm = dynamic_cast<NcclComm&>(call.comm);
  HaloOffer o;
  std::vector<Route> routes;
  o.required = direct_writes_required() ? 1 : 0;
  if (direct_writes_wanted()) {
    auto p = std::make_unique<HaloPeer>();
    p->device = comm.device();
    p->half_bytes = (call.halo->recv_bytes + 255) / 256 * 256;  // each half on its own cache lines
    try {
      set_device(p->device);
      o.staging = peer_address(p->staging.reserve(staging_bytes(p->half_bytes, comm.size)), p->device);
      o.usable = o.staging.exported;
    } catch (const Error&) {
      o.usable = 0;  // no memory for the staging: the NCCL path, which needs less
    }
    o.half_bytes = p->half_bytes;
    o.element_size = call.halo->element_size;
    for (const HaloMessage& m : call.halo->plan.recvs) routes.push_back({m.peer, m.offset, m.elements, 1});
    for (const HaloMessage& m : call.halo->plan.sends) routes.push_back({m.peer, 0, m.elements, 0});
    o.routes = static_cast<int64_t>(routes.size());
    if (o.usable) bound = std::move(p);
  }
  return write_offer(o, routes);
}

void halo_peer_bind(const HaloCall& call, const std::vector<std::string>& offers, std::unique_ptr<Scratch>& bound) {
  auto& comm = dynamic_cast<NcclComm&>(call.comm);
  std::vector<Neighbour> all;
  bool usable = true, required = false;
  for (const std::string& offer : offers) {
    all.push_back(read_offer<HaloOffer, Route>(offer, &HaloOffer::routes));
    usable = usable && all.back().head.usable;
    required = required || all.back().head.required;
  }
  const auto refuse = [&](const char* why) {  // the same verdict on every rank
    bound.reset();
    if (required) fail(GDAP_ERR_UNSUPPORTED, "GDAP_NCCL_PEER=1 asks for direct writes, but {}", why);
  };
  if (!usable) return refuse("a rank cannot take them (GDAP_NCCL_PEER=0, no staging, or memory IPC cannot export)");
  // "1": ready; "0": a neighbour out of reach, or no memory for the kernels; else the halos differ.
  std::string vote = "1";
  try {
    check_routes(*call.halo, all, comm.rank);
    if (!prepare(call, all, static_cast<HaloPeer&>(*bound))) vote = "0";
  } catch (const Error& e) {
    vote = "0";
    if (e.status() == GDAP_ERR_INVALID_ARGUMENT) vote = e.what();
  } catch (...) {  // whatever it was, this rank still votes: its peers wait for it
    vote = "0";
  }
  const std::vector<std::string> votes = comm.allgather(vote);
  bool ready = true;
  for (size_t r = 0; r < votes.size(); ++r) {
    if (votes[r].size() > 1) {
      bound.reset();
      if (vote.size() > 1) fail(GDAP_ERR_INVALID_ARGUMENT, "{}", vote);  // a failing rank reports its own error
      fail(GDAP_ERR_REMOTE, "rank {} failed ({}): {}", r, gdap_status_string(GDAP_ERR_INVALID_ARGUMENT), votes[r]);
    }
    ready = ready && votes[r] == "1";
  }
  if (!ready) refuse("a rank cannot reach a neighbour (another host, no peer access) or prepare its kernels");
}

void halo_peer_start(const HaloCall& call, Scratch& bound) {
  auto& comm = dynamic_cast<NcclComm&>(call.comm);
  auto& p = static_cast<HaloPeer&>(bound);
  if (*reinterpret_cast<volatile int32_t*>(p.timed_out) != 0) {
    fail(GDAP_ERR_TIMEOUT, "a neighbour's data for an earlier start of this halo exchange did not come within the "
         "communicator's timeout ({} s); the exchange is broken: destroy it", comm.timeout);
  }
  set_device(p.device);
  const int half = p.half;
  p.half ^= 1;  // every rank turns, whatever this start does: the halves and counts stay in step
  const uint32_t count = ++p.starts;
  p.push[half].launch(comm.stream, count);
  p.unpack[half].launch(comm.stream, count);
}

}  // namespace gdap::move
