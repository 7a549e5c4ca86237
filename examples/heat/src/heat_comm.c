/* NCCL communicators for the heat drivers (heat_comm.h), built when gdap has NCCL. */
#include "heat_comm.h"

#include <cuda_runtime.h>
#include <nccl.h>

#ifdef HEAT_HAVE_MPI
#include <mpi.h>
#endif

int heat_nccl_from_mpi(void** nccl_comm, int mpi_comm, int device) {
#ifdef HEAT_HAVE_MPI
  MPI_Comm comm = MPI_Comm_f2c(mpi_comm);
  int rank = 0, size = 0, e = MPI_Comm_rank(comm, &rank);
  if (e == MPI_SUCCESS) e = MPI_Comm_size(comm, &size);
  ncclUniqueId id;
  if (e == MPI_SUCCESS && rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) e = MPI_ERR_OTHER;
  if (e == MPI_SUCCESS) e = MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
  if (e != MPI_SUCCESS) return e;
  if (cudaSetDevice(device) != cudaSuccess) return (int)ncclUnhandledCudaError;
  ncclComm_t out = NULL;
  const ncclResult_t r = ncclCommInitRank(&out, size, id, rank);
  if (r == ncclSuccess) *nccl_comm = out;
  return (int)r;
#else
  (void)nccl_comm, (void)mpi_comm, (void)device;
  return HEAT_NO_NCCL;
#endif
}

int heat_nccl_init_all(void** nccl_comms, int count) {
  return (int)ncclCommInitAll((ncclComm_t*)nccl_comms, count, NULL);
}

int heat_nccl_destroy(void* nccl_comm) { return (int)ncclCommDestroy((ncclComm_t)nccl_comm); }

const char* heat_nccl_error_string(int code) {
  if (code == HEAT_NO_NCCL) return "this heat build has no MPI for NCCL's set-up";
  return ncclGetErrorString((ncclResult_t)code);
}
