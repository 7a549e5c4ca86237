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
