// Halo exchange: filling each rank's communication padding ('b' dimensions) from the owned
// elements of its neighbours, periodic wrap included, faces only or with edges and corners.
//
// Model. A rank's padded frame splits into one box per neighbour offset d in {-1, 0, 1}^ndim
// (d != 0): along a dimension with d_i = -1 the box is the lower communication padding, +1 the
// upper one, 0 the owned range. The box's source is the rank at coordinates c + d (wrapped on
// periodic dimensions), which owns those global indices. Faces only keeps the offsets with one
// non-zero entry. Both ends enumerate the boxes of a pair in increasing offset order, each box
// packed compact in C order (as a redistribution plan's blocks), so a packed message needs no
// metadata. A message to oneself (a periodic dimension of one grid rank) is a local copy.
//
// A plan compiles to an exchange program (exchange/program.hpp: a message per neighbour, a block
// set per box), which the communicator's engine runs as it runs a redistribution's: host memcpy or
// peer copy kernels in the in-process group, point-to-point over MPI, pack kernels and grouped
// send/recv over NCCL, or, for a bound exchange over NCCL, direct writes into the neighbours'
// staging.
#pragma once

#include "exchange/program.hpp"
#include "maps/map.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace gdap::halo {

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
// owned range. Throws GDAP_ERR_INVALID_ARGUMENT for a cap on a dimension that is not 'b' or < 0.
HaloPlan plan_halo(const gdap_map& map, int64_t rank, bool corners, std::span<const int64_t> widths);

// True if any rank of the map has communication padding to fill under the caps.
bool map_has_halo(const gdap_map& map, std::span<const int64_t> widths);

// The exchange program of `plan` for elements of `element_size` bytes: a halo exchange's style
// (MPI sends wire messages of long runs as datatypes; NCCL never writes into a neighbour's padding
// directly, where a face cut along the last axis would cross the link an element at a time).
exchange::Program compile(const HaloPlan& plan, int64_t element_size);

}  // namespace gdap::halo
