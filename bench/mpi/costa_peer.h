/*
 * COSTA (github.com/eth-cscs/COSTA) behind a C interface, so the C harness redistribute_mpi.c can
 * time costa::transform beside gdap and pdgemr2d on the same buffers. A layout is described by the
 * ScaLAPACK descriptor the harness already builds for pdgemr2d (column-major local blocks, BLACS
 * grid in column-major rank order), so all three move exactly the same elements. Built only when
 * COSTA is installed (bench/mpi/costa.sh, then GDAP_BENCH_COSTA_DIR or COSTA_PREFIX for run.sh).
 */
#ifndef GDAP_BENCH_COSTA_PEER_H
#define GDAP_BENCH_COSTA_PEER_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct costa_peer costa_peer;

/* Layouts of `src` (descriptor `desc_from` over an nprow_from x npcol_from grid) and `dst`
 * (likewise) for this rank. Borrows both buffers until costa_peer_destroy. Returns NULL and
 * writes COSTA's message to `error` (size `error_size`) when COSTA refuses the layouts. */
costa_peer* costa_peer_create(const int desc_from[9], int nprow_from, int npcol_from, double* src,
                              const int desc_to[9], int nprow_to, int npcol_to, double* dst, int rank,
                              char* error, int error_size);

/* dst = src through costa::transform over `comm` (collective). 0 on success; else -1 with
 * COSTA's message in `error`. */
int costa_peer_run(costa_peer* peer, MPI_Comm comm, char* error, int error_size);

void costa_peer_destroy(costa_peer* peer);

#ifdef __cplusplus
}
#endif

#endif
