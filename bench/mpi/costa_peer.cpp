/*
 * costa_peer.h's implementation: builds COSTA's block-cyclic layouts once (as gdap's harness
 * plans once) and calls costa::transform on them. COSTA has no reusable plan: every transform
 * works out its messages again, as its own pxgemr2d does, so that cost is part of its time.
 */
#include "costa_peer.h"

#include <costa/layout.hpp>
#include <costa/grid2grid/transform.hpp>

#include <cstdio>
#include <exception>
#include <new>

struct costa_peer {
  costa::grid_layout<double> from, to;
};

namespace {

// ScaLAPACK descriptor fields (DTYPE_, CTXT_, M_, N_, MB_, NB_, RSRC_, CSRC_, LLD_).
enum { kM = 2, kN = 3, kMB = 4, kNB = 5, kRSRC = 6, kCSRC = 7, kLLD = 8 };

costa::grid_layout<double> layout(const int* desc, int nprow, int npcol, double* data, int rank) {
  return costa::block_cyclic_layout<double>(desc[kM], desc[kN], desc[kMB], desc[kNB], 1, 1, desc[kM], desc[kN],
                                            nprow, npcol, 'C', desc[kRSRC], desc[kCSRC], data, desc[kLLD], 'C',
                                            rank);
}

void say(char* error, int size, const char* what) {
  if (error && size > 0) std::snprintf(error, static_cast<size_t>(size), "%s", what);
}

}  // namespace

extern "C" costa_peer* costa_peer_create(const int desc_from[9], int nprow_from, int npcol_from, double* src,
                                         const int desc_to[9], int nprow_to, int npcol_to, double* dst, int rank,
                                         char* error, int error_size) {
  try {
    return new costa_peer{layout(desc_from, nprow_from, npcol_from, src, rank),
                          layout(desc_to, nprow_to, npcol_to, dst, rank)};
  } catch (const std::exception& e) {
    say(error, error_size, e.what());
    return nullptr;
  }
}

extern "C" int costa_peer_run(costa_peer* peer, MPI_Comm comm, char* error, int error_size) {
  try {
    costa::transform<double>(peer->from, peer->to, comm);
    return 0;
  } catch (const std::exception& e) {
    say(error, error_size, e.what());
    return -1;
  }
}

extern "C" void costa_peer_destroy(costa_peer* peer) { delete peer; }
