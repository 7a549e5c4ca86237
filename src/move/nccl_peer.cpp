#include "move/nccl_peer.hpp"

#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "move/device.hpp"
#include "move/peer_reach.hpp"

#include <string>

namespace gdap::move {
namespace {

// One rank's offer, as its share of the agreement's allgather, followed by `ndim` int64 strides.
struct Offer {
  uint32_t version = 2;
  int32_t usable = 0;   // 0: this rank's peers cannot write into its destination
  int32_t has_dst = 0;  // 0: no destination section (nobody sends to this rank)
  int32_t reserved = 0;
  PeerAddress dst;      // the destination section
  int64_t ndim = 0;
};

// A peer's offer: the header, then its destination's strides.
using Peer = Offered<Offer, int64_t>;

// What a rank keeps between calls: the offers its last decision was made for, the peers' mapped
// destinations, and the copy kernel.
struct PeerScratch final : Scratch {
  std::vector<std::string> shares;
  std::vector<Peer> peers;           // the same, parsed
  bool push = false;
  uint64_t generation = 0;           // changes with every new decision: part of the kernel's key
  std::vector<char*> dst;            // per rank: its destination in this process (NULL: not sent to)
  PeerMappings mappings;             // closed when the offers change
  DeviceBatch batch;
  DeviceBuffer flag;                 // the brackets' one element
};

// Maps every peer's destination (whatever the plan, so that a later plan on the same sections
// finds them mapped); false if one cannot be reached.
bool map_peers(NcclComm& comm, const std::vector<Peer>& peers, PeerScratch& s) {
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
// only when the offers changed since the last decision; every rank sees the same offers, so all
// of them take this step together).
void decide(NcclComm& comm, const std::vector<std::string>& shares, PeerScratch& s) {
  if (shares == s.shares) return;
  s.mappings.close();
  s.shares = shares;
  s.push = false;
  ++s.generation;
  s.peers.clear();
  bool usable = true;
  for (const std::string& share : shares) {
    s.peers.push_back(read_offer<Offer, int64_t>(share, &Offer::ndim));
    usable = usable && s.peers.back().head.usable;
  }
  if (!usable) return;  // the same verdict on every rank, with no vote
  const bool reached = map_peers(comm, s.peers, s);
  s.push = every_rank(comm, reached);
  if (!s.push) s.mappings.close();
}

void upload_copies(const Call& call, PeerScratch& s, std::vector<int64_t> key, int device) {
  const RankPlan& plan = call.plan->plan;
  const int64_t es = call.plan->element_size;
  std::vector<DeviceCopy> device_copies;
  std::vector<Copy2D> copies;
  if (call.src) {
    const Side source{Side::source, call.src->section.strides};
    const char* from = static_cast<const char*>(call.src->data());
    for (const Message* sent : from_next_peer(plan.messages(Part::send), call.comm.rank, call.comm.size)) {
      const Message& m = *sent;
      const Peer& peer = s.peers[static_cast<size_t>(m.peer)];
      copies.clear();
      message_copies(plan, Part::send, m, source, Side{Side::destination, peer.entries}, es, copies);
      char* to = s.dst[static_cast<size_t>(m.peer)];
      if (to == nullptr) fail(GDAP_ERR_INTERNAL, "rank {} sends to rank {}, which offered no destination", call.comm.rank, m.peer);
      append_device_copies(device_copies, copies, from, to, crosses_link(peer.head.dst, device));
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
  Offer o;
  o.usable = direct_writes_wanted() ? 1 : 0;
  const gdap_array* dst = call.dst;
  std::vector<int64_t> strides;
  if (dst && dst->data() && call.plan->dst_shape) {
    o.has_dst = 1;
    o.dst = peer_address(dst->data(), device);
    o.usable = o.usable && o.dst.exported;
    strides = dst->section.strides;
    o.ndim = static_cast<int64_t>(strides.size());
  }
  return write_offer(o, strides);
}

bool run_nccl_peer(const Call& call, NcclComm& comm, const std::vector<std::string>& shares, std::vector<int64_t> key) {
  PeerScratch& s = kept_scratch<PeerScratch>(comm.peer_scratch);
  decide(comm, shares, s);
  if (!s.push) return false;
  key.push_back(static_cast<int64_t>(s.generation));  // the peers' mappings too
  if (!s.batch.holds(key)) upload_copies(call, s, std::move(key), comm.device());
  char* flag = s.flag.reserve(sizeof(int32_t));
  peer_bracket(comm, flag);
  try {
    s.batch.launch(comm.stream);
  } catch (const Error&) {
    peer_bracket(comm, flag);  // the peers' second bracket still completes; this rank reports the failure
    throw;
  }
  peer_bracket(comm, flag);
  return true;
}

}  // namespace gdap::move
