// The NCCL engine's direct writes into the peers' receiving sections, for programs whose style
// allows them (a redistribution's): where the ranks share one host's NVLink, instead of packing,
// sending through NCCL and unpacking, each rank writes its sends straight into its peers'
// receiving sections with one copy kernel, as the in-process group's push does. Peers in another
// process are reached through CUDA IPC (their receiving section's memory handle, opened once and kept
// while it stays the same); peers in this process through their own pointers.
//
// Every rank offers how it can be reached in the call's agreement (peer_share). The first call
// with new offers maps every peer's receiving section and lets the ranks vote; if any rank cannot reach a
// peer (another host, no peer access, memory CUDA IPC cannot export such as stream-ordered pools or
// VMM allocations, or GDAP_NCCL_PEER=0 on any rank), every rank takes the NCCL path. Within a call
// two one-element NCCL all-reduces on the communicator's stream bracket the copy kernel: after
// the first, every rank's earlier work on its sections is done; after the second, every rank's
// writes are.
#include "exchange/nccl_writes.hpp"

#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "cuda/buffer.hpp"
#include "cuda/copy_kernel.hpp"
#include "exchange/peer_reach.hpp"

#include <string>

namespace gdap::exchange {
namespace {

// One rank's offer, as its share of the agreement's allgather, followed by `ndim` int64 strides.
struct Offer {
  uint32_t version = 2;
  int32_t usable = 0;   // 0: this rank's peers cannot write into its receiving section
  int32_t has_dst = 0;  // 0: no receiving section (nobody sends to this rank)
  int32_t reserved = 0;
  PeerAddress dst;      // the receiving section
  int64_t ndim = 0;
};

// A peer's offer: the header, then its receiving section's strides.
using Peer = Offered<Offer, int64_t>;

// A decision a rank keeps (Cache::recent: a few, so that alternating programs into other
// sections do not map and vote again each call): the offers it was made for, the peers' mapped
// receiving sections (closed when it is evicted) and whether the ranks write directly.
struct PeerDecision {
  std::vector<std::string> shares;
  std::vector<Peer> peers;           // the same, parsed
  bool push = false;
  uint64_t generation = 0;           // unique per decision on a communicator: part of its kernels' keys
  std::vector<char*> dst;            // per rank: its receiving section in this process (NULL: not sent to)
  PeerMappings mappings;
};

// A program's copy kernel for one decision (Cache::recent: a few programs).
struct PeerBatch {
  cuda::DeviceBatch batch;
};

// What every program of a kind shares: the brackets' one element, and the decisions' count.
struct PeerScratch final : Scratch {
  uint64_t decisions = 0;
  cuda::DeviceBuffer flag;
};

// Maps every peer's receiving section; false if one cannot be reached.
bool map_peers(NcclComm& comm, const std::vector<Peer>& peers, PeerDecision& s) {
  s.dst.assign(peers.size(), nullptr);
  for (size_t q = 0; q < peers.size(); ++q) {
    const Offer& o = peers[q].head;
    if (q == static_cast<size_t>(comm.rank) || !o.has_dst) continue;
    s.dst[q] = s.mappings.reach(o.dst, comm.device());
    if (s.dst[q] == nullptr) return false;
  }
  return true;
}

// Decides, with the peers, whether this call's offers allow direct writes (one more allgather,
// only when no kept decision was made for these offers; every rank sees the same offers and keeps
// the same decisions, so all of them take this step together).
const PeerDecision& decide(NcclComm& comm, const std::vector<std::string>& shares, const std::string& name,
                           PeerScratch& scratch) {
  const auto same = [&](const PeerDecision& kept) { return kept.shares == shares; };
  return comm.cache.recent<PeerDecision>(name + ".decisions", same, [&] {
    auto s = std::make_unique<PeerDecision>();
    s->shares = shares;
    s->generation = ++scratch.decisions;
    bool usable = true;
    for (const std::string& share : shares) {
      s->peers.push_back(read_offer<Offer, int64_t>(share, &Offer::ndim));
      usable = usable && s->peers.back().head.usable;
    }
    if (!usable) return s;  // the same verdict on every rank, with no vote
    const bool reached = map_peers(comm, s->peers, *s);
    s->push = every_rank(comm, reached);
    if (!s->push) s->mappings.close();
    return s;
  });
}

void upload_copies(NcclComm& comm, const Program& program, const Sections& sections, const PeerDecision& s,
                   std::vector<int64_t> key, cuda::DeviceBatch& batch) {
  std::vector<std::vector<cuda::DeviceCopy>> per_peer;
  std::vector<Copy2D> copies;
  if (sections.src) {
    const End sender{End::sender, sections.src->section.strides};
    const char* from = static_cast<const char*>(sections.src->data());
    for (const Message* sent : kernel_order(program.messages(Part::send), comm.rank, comm.size)) {
      const Message& m = *sent;
      const Peer& peer = s.peers[static_cast<size_t>(m.peer)];
      copies.clear();
      program.copies(m, sender, End{End::receiver, peer.entries}, copies);
      char* to = s.dst[static_cast<size_t>(m.peer)];
      if (to == nullptr) fail(GDAP_ERR_INTERNAL, "rank {} sends to rank {}, which offered no receiving section", comm.rank, m.peer);
      append_device_copies(per_peer.emplace_back(), copies, from, to, crosses_link(peer.head.dst, comm.device()));
    }
    if (sections.dst) {
      append_device_copies(per_peer.emplace_back(),
                           program.part_copies(Part::local, sender, End{End::receiver, sections.dst->section.strides}),
                           from, static_cast<char*>(sections.dst->data()));
    }
  }
  batch.upload(std::move(key), order_device_copies(std::move(per_peer)), comm.stream);
}

}  // namespace

std::string peer_share(const Program&, const Sections& sections, int device) {
  Offer o;
  o.usable = direct_writes_wanted() ? 1 : 0;
  const gdap_array* dst = sections.dst;
  std::vector<int64_t> strides;
  if (dst && dst->data()) {
    o.has_dst = 1;
    o.dst = peer_address(dst->data(), device);
    o.usable = o.usable && o.dst.exported;
    strides = dst->section.strides;
    o.ndim = static_cast<int64_t>(strides.size());
  }
  return write_offer(o, strides);
}

bool run_peer_writes(NcclComm& comm, const Program& program, const Sections& sections,
                     const std::vector<std::string>& shares, std::vector<int64_t> key) {
  const std::string name = std::string(program.style().name) + ".peer";
  PeerScratch& scratch = comm.cache.get<PeerScratch>(name);
  const PeerDecision& s = decide(comm, shares, name, scratch);
  if (!s.push) return false;
  key.push_back(static_cast<int64_t>(s.generation));  // the peers' mappings too
  key.push_back(static_cast<int64_t>(peer_order()));  // a batch in another order is another batch
  const auto same = [&](const PeerBatch& kept) { return kept.batch.holds(key); };
  const PeerBatch& kernel = comm.cache.recent<PeerBatch>(name + ".batches", same, [&] {
    auto made = std::make_unique<PeerBatch>();
    upload_copies(comm, program, sections, s, std::move(key), made->batch);
    return made;
  });
  char* flag = scratch.flag.reserve(sizeof(int32_t));
  peer_bracket(comm, flag);
  try {
    kernel.batch.launch(comm.stream);
  } catch (const Error&) {
    peer_bracket(comm, flag);  // the peers' second bracket still completes; this rank reports the failure
    throw;
  }
  peer_bracket(comm, flag);
  return true;
}

}  // namespace gdap::exchange
