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
// kept ones. Throws GDAP_ERR_INVALID_ARGUMENT for a cap on a dimension that is not 'b' or < 0, and
// for a periodic dimension whose boundary padding is wider than the interior it mirrors or differs
// between the ranks at one edge.
HaloPlan plan_halo(const gdap_map& map, int64_t rank, bool corners, std::span<const int64_t> widths);

// True if any rank of the map has a cell to fill under the caps (throws as plan_halo does).
bool map_has_halo(const gdap_map& map, std::span<const int64_t> widths);

// The exchange program of `plan` for elements of `element_size` bytes: a halo exchange's style
// (MPI sends wire messages of long runs as datatypes; NCCL never writes into a neighbour's padding
// directly, where a face cut along the last axis would cross the link an element at a time).
exchange::Program compile(const HaloPlan& plan, int64_t element_size);

}  // namespace gdap::halo
