// A bound exchange over NCCL by direct writes (nccl_writes.hpp), made for the persistent halo
// exchange: the binding (gdap_halo_exchange_init) gives every rank's receive staging to its
// neighbours, and each start (gdap_exchange_start) then queues, on the communicator's stream,
//   1. one copy kernel that gathers this rank's faces (strided or not) and writes each neighbour's
//      message packed into that neighbour's staging, across NVLink (and does the periodic wrap
//      onto the rank itself); its last block, once every block's writes are fenced, writes the
//      start's count into this rank's flag in each neighbour's staging;
//   2. one copy kernel that first waits until each neighbour's flag in this rank's staging holds
//      the count (every neighbour's writes are in), then scatters the staging into the padding.
// No NCCL call: the kernels order themselves through the flags (cuda/copy_kernel.hpp, BatchFlags).
// The staging has two halves that the starts use in turn: a neighbour writes half k at start n + 2 only after
// its wait at start n + 1 for this rank's signal, which follows this rank's unpacking of start n
// (neighbours signal each other both ways, whichever way their messages go). The faces travel
// packed (whole cache lines over the link) and only the local reads and writes are strided.
// A wait longer than the communicator's timeout gives up: that start leaves the padding partly
// unfilled, the rank's kernels copy and signal nothing more (so its neighbours time out too), and
// every later start of the exchange fails with GDAP_ERR_TIMEOUT, where an NCCL all-reduce between the
// kernels (about as fast, docs/PERFORMANCE.md) would wait forever; CUDA stream memory operations on
// the same flags were slower. When a rank cannot reach a neighbour (another host, no peer access,
// GDAP_NCCL_PEER=0 on any rank) every rank keeps the NCCL send/receive path.
#include "exchange/nccl_writes.hpp"

#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "cuda/buffer.hpp"
#include "cuda/copy_kernel.hpp"
#include "cuda/device.hpp"
#include "exchange/peer_reach.hpp"

#include <algorithm>
#include <string>

namespace gdap::exchange {
namespace {

// A message of this rank's: to or from `peer`, `elements` of it; a received one lands packed at
// `offset` elements into a half of the staging.
struct Route {
  int64_t peer = 0, offset = 0, elements = 0;
  int64_t incoming = 0;  // 1: received, 0: sent
};

// One rank's offer (its share of the binding's agreement), followed by `routes` Route entries.
// Its staging holds two halves of `half_bytes`, then one 32-bit flag per rank of the communicator.
struct BoundOffer {
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
using Neighbour = Offered<BoundOffer, Route>;

// What a bound exchange keeps: its staging, its neighbours' mapped, the kernels of each half, and
// the flags' counter and time-out word.
struct BoundWrites final : Scratch {
  int device = -1;
  int64_t half_bytes = 0;
  int half = 0;         // the half of the next start
  uint32_t starts = 0;  // the count of the last start (wraps; the waits compare cyclically)
  cuda::DeviceBuffer staging, done;  // done: the push kernel's blocks' tally, then the waits' gave-up word
  int32_t* timed_out = nullptr;  // host-mapped: a wait gave up
  PeerMappings mappings;
  cuda::DeviceBatch push[2], unpack[2];
  ~BoundWrites() override {  // its kernels, and the neighbours' writes this rank waited for, are done
    const cuda::DeviceScope on(device);
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
void reset_flags(BoundWrites& p, char* staging, int64_t ranks) {
  cuda::check_cuda(cudaMemset(flag_in(staging, p.half_bytes, 0), 0, static_cast<size_t>(ranks) * sizeof(uint32_t)),
                   "cudaMemset (flags)");
  cuda::check_cuda(cudaMemset(p.done.reserve(2 * sizeof(uint32_t)), 0, 2 * sizeof(uint32_t)), "cudaMemset (counter)");
  if (p.timed_out == nullptr) {
    cuda::check_cuda(cudaHostAlloc(&p.timed_out, sizeof(int32_t), cudaHostAllocMapped), "cudaHostAlloc (time-out word)");
  }
  *p.timed_out = 0;
  cuda::check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // before any neighbour can signal
}

// Neighbour `n`'s route for rank `me`'s message of `elements` (`incoming`: one `n` receives, else
// one `n` sends); throws when `n` has no such route (the ranks' programs were made from different
// inputs, e.g. halos of different maps).
const Route& route_of(const Neighbour& n, int64_t me, int64_t to, int64_t elements, bool incoming, const char* name) {
  const char* verb = incoming ? "sends" : "expects";
  for (const Route& r : n.entries) {
    if (r.peer != me || (r.incoming != 0) != incoming) continue;
    if (r.elements == elements) return r;
    fail(GDAP_ERR_INVALID_ARGUMENT, "the ranks' {}s do not match: rank {} {} {} elements {} rank {}, which has {}",
         name, me, verb, elements, incoming ? "to" : "from", to, r.elements);
  }
  fail(GDAP_ERR_INVALID_ARGUMENT, "the ranks' {}s do not match: rank {} {} {} elements {} rank {}, which has none", name,
       me, verb, elements, incoming ? "to" : "from", to);
}

// Throws unless every rank's program has this one's element size and each message of this rank's
// is one its peer has too, the other way round.
void check_routes(const Program& p, const std::vector<Neighbour>& all, int64_t me) {
  const char* name = p.style().name;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].head.element_size != p.element_size()) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "the ranks' {}s do not match: rank {}'s elements are {} bytes, rank {}'s {}", name,
           me, p.element_size(), r, all[r].head.element_size);
    }
  }
  for (const Message& m : p.messages(Part::send)) route_of(all[static_cast<size_t>(m.peer)], me, m.peer, m.elements, true, name);
  for (const Message& m : p.messages(Part::recv)) route_of(all[static_cast<size_t>(m.peer)], me, m.peer, m.elements, false, name);
}

// Uploads both halves' kernels; false if a neighbour cannot be reached.
bool prepare(NcclComm& comm, const Program& program, const Sections& sections, const std::vector<Neighbour>& all,
             BoundWrites& p) {
  const int64_t me = comm.rank, P = comm.size;
  const char* name = program.style().name;
  const std::vector<int64_t>& strides = sections.dst->section.strides;
  const End sender{End::sender, sections.src->section.strides}, receiver{End::receiver, strides}, packed{End::packed, {}};
  cuda::set_device(p.device);
  const char* from = static_cast<const char*>(sections.src->data());
  char* data = static_cast<char*>(sections.dst->data());
  char* staging = p.staging.reserve(staging_bytes(p.half_bytes, P));
  reset_flags(p, staging, P);
  const std::vector<const Message*> sends = from_next_peer(program.messages(Part::send), me, P);
  std::vector<char*> reached(all.size(), nullptr);  // every neighbour, whichever way its messages go
  cuda::BatchFlags signals, waits;
  for (Part part : {Part::send, Part::recv}) {
    for (const Message& m : program.messages(part)) {
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
  cuda::check_cuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&timed_out), p.timed_out, 0), "cudaHostGetDevicePointer");
  waits.timed_out = timed_out;
  signals.gave_up = waits.gave_up;  // a rank that gave up neither writes nor signals again
  waits.timeout_ns = static_cast<uint64_t>(std::min(comm.timeout, 1e9) * 1e9);
  std::vector<Copy2D> copies;
  for (int half = 0; half < 2; ++half) {
    std::vector<cuda::DeviceCopy> push, unpack;
    for (const Message* m : sends) {
      const Neighbour& n = all[static_cast<size_t>(m->peer)];
      char* to = reached[static_cast<size_t>(m->peer)];
      Message there = *m;
      there.offset = route_of(n, me, m->peer, m->elements, true, name).offset;
      copies.clear();
      program.copies(there, sender, packed, copies);
      append_device_copies(push, copies, from, to + half * n.head.half_bytes, crosses_link(n.head.staging, p.device));
    }
    for (const Message& m : program.messages(Part::local)) {
      copies.clear();
      program.copies(m, sender, receiver, copies);
      append_device_copies(push, copies, from, data);
    }
    for (const Message& m : program.messages(Part::recv)) {
      copies.clear();
      program.copies(m, packed, receiver, copies);
      append_device_copies(unpack, copies, staging + half * p.half_bytes, data);
    }
    p.push[half].upload({half}, push, comm.stream, &signals);
    p.unpack[half].upload({half}, unpack, comm.stream, &waits);
  }
  return true;
}

}  // namespace

std::string bound_offer(NcclComm& comm, const Program& program, std::unique_ptr<Scratch>& state) {
  BoundOffer o;
  std::vector<Route> routes;
  o.required = direct_writes_required() ? 1 : 0;
  if (direct_writes_wanted()) {
    auto p = std::make_unique<BoundWrites>();
    p->device = comm.device();
    p->half_bytes = (program.bytes(Part::recv) + 255) / 256 * 256;  // each half on its own cache lines
    try {
      cuda::set_device(p->device);
      o.staging = peer_address(p->staging.reserve(staging_bytes(p->half_bytes, comm.size)), p->device);
      o.usable = o.staging.exported;
    } catch (const Error&) {
      o.usable = 0;  // no memory for the staging: the NCCL path, which needs less
    }
    o.half_bytes = p->half_bytes;
    o.element_size = program.element_size();
    for (const Message& m : program.messages(Part::recv)) routes.push_back({m.peer, m.offset, m.elements, 1});
    for (const Message& m : program.messages(Part::send)) routes.push_back({m.peer, 0, m.elements, 0});
    o.routes = static_cast<int64_t>(routes.size());
    if (o.usable) state = std::move(p);
  }
  return write_offer(o, routes);
}

void bind_writes(NcclComm& comm, const Program& program, const Sections& sections,
                 const std::vector<std::string>& offers, std::unique_ptr<Scratch>& state) {
  std::vector<Neighbour> all;
  bool usable = true, required = false;
  for (const std::string& offer : offers) {
    all.push_back(read_offer<BoundOffer, Route>(offer, &BoundOffer::routes));
    usable = usable && all.back().head.usable;
    required = required || all.back().head.required;
  }
  const auto refuse = [&](const char* why) {  // the same verdict on every rank
    state.reset();
    if (required) fail(GDAP_ERR_UNSUPPORTED, "GDAP_NCCL_PEER=1 asks for direct writes, but {}", why);
  };
  if (!usable) return refuse("a rank cannot take them (GDAP_NCCL_PEER=0, no staging, or memory IPC cannot export)");
  // "1": ready; "0": a neighbour out of reach, or no memory for the kernels; else the programs differ.
  std::string vote = "1";
  try {
    check_routes(program, all, comm.rank);
    if (!prepare(comm, program, sections, all, static_cast<BoundWrites&>(*state))) vote = "0";
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
      state.reset();
      if (vote.size() > 1) fail(GDAP_ERR_INVALID_ARGUMENT, "{}", vote);  // a failing rank reports its own error
      fail(GDAP_ERR_REMOTE, "rank {} failed ({}): {}", r, gdap_status_string(GDAP_ERR_INVALID_ARGUMENT), votes[r]);
    }
    ready = ready && votes[r] == "1";
  }
  if (!ready) refuse("a rank cannot reach a neighbour (another host, no peer access) or prepare its kernels");
}

void start_writes(NcclComm& comm, Scratch& state) {
  auto& p = static_cast<BoundWrites&>(state);
  if (*reinterpret_cast<volatile int32_t*>(p.timed_out) != 0) {
    fail(GDAP_ERR_TIMEOUT, "a neighbour's data for an earlier start of this exchange did not come within the "
         "communicator's timeout ({} s); the exchange is broken: destroy it", comm.timeout);
  }
  cuda::set_device(p.device);
  const int half = p.half;
  p.half ^= 1;  // every rank turns, whatever this start does: the halves and counts stay in step
  const uint32_t count = ++p.starts;
  p.push[half].launch(comm.stream, count);
  p.unpack[half].launch(comm.stream, count);
}

}  // namespace gdap::exchange
