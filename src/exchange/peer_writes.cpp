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

// What a rank keeps between calls: the offers its last decision was made for, the peers' mapped
// receiving sections, and the copy kernel.
struct PeerScratch final : Scratch {
  std::vector<std::string> shares;
  std::vector<Peer> peers;           // the same, parsed
  bool push = false;
  uint64_t generation = 0;           // changes with every new decision: part of the kernel's key
  std::vector<char*> dst;            // per rank: its receiving section in this process (NULL: not sent to)
  PeerMappings mappings;             // closed when the offers change
  cuda::DeviceBatch batch;
  cuda::DeviceBuffer flag;           // the brackets' one element
};

// Maps every peer's receiving section (whatever the program, so that a later program on the same
// sections finds them mapped); false if one cannot be reached.
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

void upload_copies(NcclComm& comm, const Program& program, const Sections& sections, PeerScratch& s,
                   std::vector<int64_t> key) {
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
  s.batch.upload(std::move(key), order_device_copies(std::move(per_peer)), comm.stream);
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
  PeerScratch& s = comm.cache.get<PeerScratch>(std::string(program.style().name) + ".peer");
  decide(comm, shares, s);
  if (!s.push) return false;
  key.push_back(static_cast<int64_t>(s.generation));  // the peers' mappings too
  key.push_back(static_cast<int64_t>(peer_order()));  // a batch in another order is another batch
  if (!s.batch.holds(key)) upload_copies(comm, program, sections, s, std::move(key));
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

}  // namespace gdap::exchange
