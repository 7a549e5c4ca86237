// Halo exchange: filling each rank's communication padding ('b' dimensions) from the owned
// elements of its neighbours and, on periodic dimensions, the edge ranks' boundary padding from
// the periodic image; faces only or with edges and corners.
//
// Model. Along a 'b' dimension a rank's section [start, stop) splits into the cells it keeps
// (owned, less a periodic dimension's boundary padding) and the cells below and above them that
// the exchange fills: communication padding, which mirrors the neighbour's owned cells, and on a
// periodic dimension the boundary padding (DAP 0.10: grid rank 0's padding[0] and the last grid
// rank's padding[1], owned and counted in size), which mirrors the interior's far end: with
// boundary padding bl below and bu above, the period is n = size - bl - bu, a cell g < bl mirrors
// g + n and a cell g >= size - bu mirrors g - n. Every filled cell mirrors a kept cell (never
// another filled one), so owned cells are only read and filled cells only written.
//
// A rank's boxes are products of one piece per dimension for each offset d in {-1, 0, 1}^ndim
// (d != 0): side -1 the cells below the kept ones, 0 the kept ones, +1 those above, each side cut
// into pieces by the rank that owns what they mirror. Faces only keeps the offsets with one
// non-zero entry. Both ends enumerate the boxes of a pair in the same order (offsets, then pieces),
// each box packed compact in C order (as a redistribution plan's blocks), so a packed message needs
// no metadata. A box a rank fills from itself (a periodic dimension of one grid rank) is a local
// copy.
//
// The executors turn boxes into Copy2D programs (copy.hpp) and run them as gdap_redistribute's
// executors do: host memcpy or peer copy kernels in the in-process group, packed nonblocking
// point-to-point over MPI, pack kernels and grouped send/recv over NCCL, or, for a bound exchange
// over NCCL, direct writes into the neighbours' staging (halo_peer.cpp).
#pragma once

#include "comm/comm.hpp"
#include "maps/map.hpp"
#include "move/copy.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gdap::move {

// One N-d box: local start in the receiver's and the sender's section, and extent (ndim each).
struct HaloBox {
  std::vector<int64_t> dst_local, src_local, extent;
  int64_t elements = 0;
};

// All boxes between one pair of ranks, in packed order.
struct HaloMessage {
  int64_t peer = 0;      // receiver (send, local) or sender (recv)
  int64_t elements = 0;  // sum of the boxes' elements
  int64_t offset = 0;    // elements before it in this rank's packed buffer of its part
  std::vector<HaloBox> boxes;
};

struct HaloPlan {
  int64_t rank = 0, nranks = 0, ndim = 0;
  std::vector<HaloMessage> sends, recvs;  // increasing peer order, never this rank
  std::vector<HaloMessage> local;         // empty, or one message to itself
};

// Plans rank `rank`'s exchange on `map`. `corners`: edges and corners too, not faces only.
// `widths` (ndim caps, or empty for none) limits each side's cells to the `widths[i]` next to the
// kept ones. Throws GDAP_ERR_INVALID_ARGUMENT for a cap on a dimension that is not 'b' or < 0, and
// for a periodic dimension whose boundary padding is wider than the interior it mirrors or differs
// between the ranks at one edge.
HaloPlan plan_halo(const gdap_map& map, int64_t rank, bool corners, std::span<const int64_t> widths);

// True if any rank of the map has a cell to fill under the caps (throws as plan_halo does).
bool map_has_halo(const gdap_map& map, std::span<const int64_t> widths);

// One end of a halo copy: the sender's section (boxes' src_local), the receiver's (dst_local), or
// the packed buffer of a part (messages one after another, boxes compact in C order).
struct HaloEnd {
  enum Kind { sender, receiver, packed } kind;
  std::span<const int64_t> strides;  // sections: element strides
};

// Copies that move message `m` from `from` to `to`, appended to `out` (consecutive ones merged).
void halo_copies(const HaloMessage& m, const HaloEnd& from, const HaloEnd& to, int64_t element_size,
                 std::vector<Copy2D>& out);

constexpr int64_t kOwnMessageBytes = int64_t{1} << 16;  // a box this large travels as a message of its own

// Calls f(part) for the transport messages (MPI, NCCL) that carry message `m`: each box of
// kOwnMessageBytes or more alone, each run of smaller boxes between them together (packed one after
// another). Both ends split a pair's boxes alike (the split reads only the boxes' sizes, which both
// ends share), so sends and receives match in order; a face that is one run in the section (a
// slab's face) then goes from and into the section with no packing, even when the same peer gets
// another face too.
template <typename F>
void for_each_part(const HaloMessage& m, int64_t es, F&& f) {
  HaloMessage part{m.peer, 0, m.offset, {}};
  const auto flush = [&] {
    if (!part.boxes.empty()) f(part);
    part.offset += part.elements;
    part.elements = 0;
    part.boxes.clear();
  };
  for (const HaloBox& b : m.boxes) {
    const bool own = b.elements * es >= kOwnMessageBytes;
    if (own) flush();
    part.boxes.push_back(b);
    part.elements += b.elements;
    if (own) flush();
  }
  flush();
}

}  // namespace gdap::move

struct gdap_halo {
  gdap::move::HaloPlan plan;
  gdap_dtype dtype{};
  int64_t element_size = 0;
  bool corners = true;
  std::vector<gdap_dim> dims;  // this rank's dictionaries, which the local array must match
  std::vector<int64_t> shape;  // this rank's local shape
  int64_t send_bytes = 0, recv_bytes = 0, local_bytes = 0;
  uint64_t serial = 0;  // unique per halo made in this process: a cache key that never recurs
};

namespace gdap::move {

// The arguments of one rank's halo exchange. `bound`: a gdap_exchange_start, whose arguments every
// rank checked and agreed on once, in gdap_halo_exchange_init; the executors then skip the
// agreement where it is a round trip of its own (MPI, NCCL).
struct HaloCall {
  gdap_comm& comm;
  const gdap_halo* halo;
  gdap_array* local;
  bool bound = false;
  Scratch* direct = nullptr;  // bound over NCCL: the direct writes' state, when the ranks took them
};

// This rank's own checks (run inside each executor's agreement step).
void check_halo_call(const HaloCall& call);
// check_halo_call and what the communicator's engine needs of the section's memory.
void check_halo_mpi(const HaloCall& call);
void check_halo_nccl(const HaloCall& call);

// NCCL's persistent exchange by direct writes into the neighbours' staging (halo_peer.cpp), set
// up by gdap_halo_exchange_init: this rank's offer once its checks passed (its staging kept in
// `bound`), then, from every rank's offer, the bound state in `bound`, or `bound` emptied when the
// ranks keep NCCL send/receive. Collective; throws on every rank when the ranks' halos differ.
std::string halo_peer_offer(const HaloCall& call, std::unique_ptr<Scratch>& bound);
void halo_peer_bind(const HaloCall& call, const std::vector<std::string>& offers, std::unique_ptr<Scratch>& bound);
void halo_peer_start(const HaloCall& call, Scratch& bound);

void halo_group(const HaloCall& call);
void halo_mpi(const HaloCall& call);
void halo_nccl(const HaloCall& call);

}  // namespace gdap::move
