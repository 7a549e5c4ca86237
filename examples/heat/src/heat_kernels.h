/* The heat solver's kernels, on host memory (heat_host.c) and on a CUDA device (heat_cuda.cu), as
 * plain C functions that the C driver and, through bind(C) interfaces (heat_kernels.f90), the
 * Fortran driver call. They know nothing of gdap: they take a section's address and extents, as a
 * solver's own kernels would; gdap describes, exchanges, reduces and stores the sections.
 *
 * Every stencil, boundary layer or interior, host or device, goes through one function per backend
 * (heat_*_step over a list of boxes), so a cell is rounded alike whichever box it falls in: a run
 * split over any process grid, or restarted from a checkpoint, gives the same bits.
 *
 * Device functions queue their work on `stream` (a cudaStream_t) and return 0 or a cudaError_t;
 * heat_cuda_error names it. In a build without CUDA they return HEAT_NO_CUDA.
 */
#ifndef HEAT_KERNELS_H
#define HEAT_KERNELS_H

#include "heat_problem.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's section as the kernels see it: C-contiguous, padding included. */
typedef struct heat_view {
  int32_t ndim;     /* 2 or 3 */
  int32_t bits;     /* 32 (float) or 64 (double) */
  int64_t shape[3]; /* local extents, C order (ndim used) */
  int64_t start[3]; /* global index of local index 0 along each dimension */
} heat_view;

/* Local cells lo[d] <= i < hi[d] along each dimension d < ndim. */
typedef struct heat_box {
  int64_t lo[3];
  int64_t hi[3];
} heat_box;

/* Up to 6 boxes, e.g. the boundary layer of a 3-d section (one slab per side). */
#define HEAT_MAX_BOXES 6
typedef struct heat_boxes {
  int32_t count;
  int32_t reserved;
  heat_box box[HEAT_MAX_BOXES];
} heat_boxes;

#define HEAT_NO_CUDA 100000 /* what device functions return in a build without CUDA */

/* Splits `update` (the cells a rank updates) into its boundary layer, one slab per side of each
 * of the `ndim` dimensions (the cells its neighbours read), and the interior left over (which
 * reads no halo cell): a step updates the boundary first and the interior while the halo moves. */
void heat_split(const heat_box* update, int ndim, heat_boxes* boundary, heat_boxes* interior);

/* ---- host memory ---- */

/* v = one step of u over every box (u read, v written only there). */
void heat_host_step(const heat_view* view, const void* u, void* v, const heat_boxes* boxes, double r);
/* u = the exact solution at step 0 in `owned`, NaN everywhere else (the halo, until exchanged). */
void heat_host_fill(const heat_view* view, void* u, const heat_box* owned, const heat_problem* problem);
/* Sum over `box` of (v - u)^2, in double. */
double heat_host_sqdiff(const heat_view* view, const void* u, const void* v, const heat_box* box);
/* Largest |u - exact| over `box` after the steps that made the factor `decay` (NaN counts as inf). */
double heat_host_error(const heat_view* view, const void* u, const heat_box* box, const heat_problem* problem,
                       double decay);
/* The fingerprint of `box` (heat_share summed modulo 2^64; unknowns numbered over problem->n). */
uint64_t heat_host_fingerprint(const heat_view* view, const void* u, const heat_box* box,
                               const heat_problem* problem);

/* ---- CUDA device memory ---- */

int heat_cuda_step(const heat_view* view, const void* u, void* v, const heat_boxes* boxes, double r, void* stream);
int heat_cuda_fill(const heat_view* view, void* u, const heat_box* owned, const heat_problem* problem, void* stream);
/* The reductions write one value to device memory `out` (double, double, uint64_t); `scratch` is
 * device memory of heat_cuda_scratch_bytes() that one reduction uses at a time. */
int heat_cuda_sqdiff(const heat_view* view, const void* u, const void* v, const heat_box* box, double* out,
                     void* scratch, void* stream);
int heat_cuda_error(const heat_view* view, const void* u, const heat_box* box, const heat_problem* problem,
                    double decay, double* out, void* scratch, void* stream);
int heat_cuda_fingerprint(const heat_view* view, const void* u, const heat_box* box, const heat_problem* problem,
                          uint64_t* out, void* scratch, void* stream);
int64_t heat_cuda_scratch_bytes(void);

/* CUDA plumbing the drivers need (the Fortran driver has no CUDA runtime of its own). */
const char* heat_cuda_error_string(int code);
int heat_cuda_device_count(int* count);
int heat_cuda_set_device(int device);
int heat_cuda_malloc(void** pointer, int64_t bytes);
int heat_cuda_free(void* pointer);
/* Copies `bytes` between host and device (or device and device), in order on `stream`, then waits. */
int heat_cuda_copy_sync(void* dst, const void* src, int64_t bytes, void* stream);
/* A non-blocking stream; `high` non-zero gives it the device's highest priority. */
int heat_cuda_stream_create(void** stream, int high);
int heat_cuda_stream_destroy(void* stream);
int heat_cuda_stream_sync(void* stream);
int heat_cuda_event_create(void** event);
int heat_cuda_event_destroy(void* event);
int heat_cuda_event_record(void* event, void* stream);
/* Work queued on `stream` after this waits for `event`'s last record. */
int heat_cuda_stream_wait(void* stream, void* event);
/* Milliseconds between two recorded events (after both are reached). */
int heat_cuda_event_elapsed(float* ms, void* start, void* stop);

#ifdef __cplusplus
}
#endif

#endif /* HEAT_KERNELS_H */
