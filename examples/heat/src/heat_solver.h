/* The C driver's solver: what one rank does, on whichever communicator the caller made (an
 * in-process group of threads, MPI, or NCCL). heat_main.c parses the options and starts the ranks.
 */
#ifndef HEAT_SOLVER_H
#define HEAT_SOLVER_H

#include <gdap/gdap.h>

#include <stdint.h>

/* What to solve and how (the command line's options, heat_main.c). */
typedef struct heat_options {
  int ndim;                  /* 2 or 3 */
  int64_t n[3];              /* unknowns per dimension, C order */
  int64_t grid[3];           /* process grid (0: chosen from the rank count) */
  int grid_ndim;             /* values given in grid (0: none) */
  int periodic[3];           /* per dimension */
  int mode[3];               /* the eigenmode's wave numbers */
  int bits;                  /* 32 or 64 */
  int on_device;             /* 0: host memory; 1: one CUDA device per rank */
  int overlap;               /* exchange the halo while the interior is updated */
  int check;                 /* compare with the exact solution at the end */
  int bench;                 /* time `steps` steps after a warm-up, without residuals or checkpoints */
  int64_t steps;             /* steps to reach (a restart continues up to it); bench: steps timed */
  int64_t residual_every;    /* the residual norm every so many steps (0: never) */
  int64_t checkpoint_every;  /* a Zarr checkpoint every so many steps (0: never) */
  const char* checkpoint_dir;
  const char* restart;       /* a checkpoint store to start from (its step and problem) */
  const char* share_dir;     /* IPC handles and a state file for the Python companion */
  double hold;               /* seconds to keep the sections for the companion at the end */
  double r;                  /* the step's coefficient (0: 1 / (2 ndim), Jacobi) */
} heat_options;

/* Runs rank `comm`'s part of the solve to the end. `comm_stream`: the CUDA stream an NCCL
 * communicator was made with (NULL otherwise: the rank makes its own). `device`: this rank's CUDA
 * device (on_device only). Returns 0 when every step and check passed, 1 otherwise (the reason
 * printed on stderr, naming the rank). Collective over `comm`. */
int heat_run_rank(const heat_options* o, gdap_comm* comm, void* comm_stream, int device);

#endif /* HEAT_SOLVER_H */
