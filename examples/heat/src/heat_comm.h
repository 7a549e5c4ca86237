/* NCCL communicators for the heat drivers: gdap wraps an NCCL communicator the caller made
 * (gdap_comm_from_nccl), so a solver makes its own, here from MPI (one process per GPU) or for
 * every GPU of one process (one thread per GPU). The Fortran driver calls these through bind(C).
 * Functions return 0 or an NCCL / MPI error code; heat_nccl_error_string names it. In a build
 * without NCCL (or, for heat_nccl_from_mpi, without MPI) they return HEAT_NO_NCCL. */
#ifndef HEAT_COMM_H
#define HEAT_COMM_H

#ifdef __cplusplus
extern "C" {
#endif

#define HEAT_NO_NCCL 100001

/* Collective over the MPI communicator `mpi_comm` (its Fortran handle): one NCCL communicator of
 * the same ranks, this rank's on CUDA device `device` (made current). */
int heat_nccl_from_mpi(void** nccl_comm, int mpi_comm, int device);
/* One NCCL communicator per device 0 .. count - 1 of this process (ncclCommInitAll). */
int heat_nccl_init_all(void** nccl_comms, int count);
int heat_nccl_destroy(void* nccl_comm);
const char* heat_nccl_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif /* HEAT_COMM_H */
