/*
 * gdap_mpi.h: gdap communicators over MPI.
 *
 * The ABI takes the communicator as its Fortran handle (MPI_Fint, an int with every MPI), so one
 * libgdap serves any caller without gdap.h naming an MPI vendor's types. Include <mpi.h> before
 * this header for gdap_comm_from_mpi_comm, which converts an MPI_Comm for you.
 */
#ifndef GDAP_MPI_H
#define GDAP_MPI_H

#include <gdap/gdap.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Wraps MPI communicator `comm` (its Fortran handle, MPI_Comm_c2f) as a gdap communicator.
 * Collective over `comm`: gdap duplicates it (MPI_Comm_dup), so gdap's messages never meet the
 * caller's. The caller keeps `comm`; MPI must be initialised and stay so until gdap_comm_destroy
 * (which frees the duplicate, collectively). Host-accessible arrays only (host, pinned, managed).
 * GDAP_ERR_UNSUPPORTED when gdap was built without MPI.
 * Faults: gdap's waits on this communicator are bounded by its timeout (gdap_comm_set_timeout,
 * 300 s by default). A rank that never makes the matching collective call (it failed before it,
 * returned early, or hangs) costs the others GDAP_ERR_TIMEOUT instead of a hang; gdap withdraws its
 * pending receives, so nothing lands in a destination later, and the communicator is broken from
 * then on: every later call on it fails at once with GDAP_ERR_TIMEOUT, and gdap_comm_destroy leaves
 * the duplicate and gdap's buffers to the end of the process (MPI may still hold operations on
 * them). gdap never calls MPI_Abort; after a timeout the usual choice is MPI_Abort(MPI_COMM_WORLD, 1).
 * A process that dies is MPI's matter: Open MPI's mpirun then ends every process of the job.
 * On success `*out` is a new communicator the caller destroys with gdap_comm_destroy.
 */
GDAP_API gdap_status gdap_comm_from_mpi(gdap_comm** out, int comm);

#if defined(MPI_VERSION) && !defined(GDAP_NO_MPI_HELPERS)
/** gdap_comm_from_mpi for an MPI_Comm of the MPI this caller is compiled with. */
static inline gdap_status gdap_comm_from_mpi_comm(gdap_comm** out, MPI_Comm comm) {
  return gdap_comm_from_mpi(out, (int)MPI_Comm_c2f(comm));
}
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GDAP_MPI_H */
