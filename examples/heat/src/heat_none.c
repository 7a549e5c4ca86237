/* Stand-ins for the device kernels and NCCL helpers in a build of the heat example without CUDA
 * (or without NCCL): every call fails with HEAT_NO_CUDA / HEAT_NO_NCCL, so the drivers, Fortran's
 * included, link alike and say what is missing when asked for a GPU. */
#include "heat_comm.h"
#include "heat_kernels.h"

#ifndef HEAT_HAVE_CUDA
int heat_cuda_step(const heat_view* v, const void* u, void* w, const heat_boxes* b, double r, void* s) {
  (void)v, (void)u, (void)w, (void)b, (void)r, (void)s;
  return HEAT_NO_CUDA;
}
int heat_cuda_fill(const heat_view* v, void* u, const heat_box* o, const heat_problem* p, void* s) {
  (void)v, (void)u, (void)o, (void)p, (void)s;
  return HEAT_NO_CUDA;
}
int heat_cuda_sqdiff(const heat_view* v, const void* u, const void* w, const heat_box* b, double* out, void* x, void* s) {
  (void)v, (void)u, (void)w, (void)b, (void)out, (void)x, (void)s;
  return HEAT_NO_CUDA;
}
int heat_cuda_error(const heat_view* v, const void* u, const heat_box* b, const heat_problem* p, double d, double* out,
                    void* x, void* s) {
  (void)v, (void)u, (void)b, (void)p, (void)d, (void)out, (void)x, (void)s;
  return HEAT_NO_CUDA;
}
int heat_cuda_fingerprint(const heat_view* v, const void* u, const heat_box* b, const heat_problem* p, uint64_t* out,
                          void* x, void* s) {
  (void)v, (void)u, (void)b, (void)p, (void)out, (void)x, (void)s;
  return HEAT_NO_CUDA;
}
int64_t heat_cuda_scratch_bytes(void) { return 0; }
const char* heat_cuda_error_string(int code) {
  return code == HEAT_NO_CUDA ? "this heat build has no CUDA (gdap was installed without it)" : "unknown error";
}
int heat_cuda_device_count(int* count) { *count = 0; return HEAT_NO_CUDA; }
int heat_cuda_set_device(int device) { (void)device; return HEAT_NO_CUDA; }
int heat_cuda_malloc(void** p, int64_t bytes) { (void)p, (void)bytes; return HEAT_NO_CUDA; }
int heat_cuda_free(void* p) { (void)p; return HEAT_NO_CUDA; }
int heat_cuda_copy_sync(void* d, const void* s, int64_t n, void* st) { (void)d, (void)s, (void)n, (void)st; return HEAT_NO_CUDA; }
int heat_cuda_stream_create(void** s, int high) { (void)s, (void)high; return HEAT_NO_CUDA; }
int heat_cuda_stream_destroy(void* s) { (void)s; return HEAT_NO_CUDA; }
int heat_cuda_stream_sync(void* s) { (void)s; return HEAT_NO_CUDA; }
int heat_cuda_event_create(void** e) { (void)e; return HEAT_NO_CUDA; }
int heat_cuda_event_destroy(void* e) { (void)e; return HEAT_NO_CUDA; }
int heat_cuda_event_record(void* e, void* s) { (void)e, (void)s; return HEAT_NO_CUDA; }
int heat_cuda_stream_wait(void* s, void* e) { (void)s, (void)e; return HEAT_NO_CUDA; }
int heat_cuda_event_elapsed(float* ms, void* a, void* b) { (void)ms, (void)a, (void)b; return HEAT_NO_CUDA; }
#endif

#ifndef HEAT_HAVE_NCCL
int heat_nccl_from_mpi(void** c, int m, int d) { (void)c, (void)m, (void)d; return HEAT_NO_NCCL; }
int heat_nccl_init_all(void** c, int n) { (void)c, (void)n; return HEAT_NO_NCCL; }
int heat_nccl_destroy(void* c) { (void)c; return HEAT_NO_NCCL; }
const char* heat_nccl_error_string(int code) {
  return code == HEAT_NO_NCCL ? "this heat build has no NCCL (gdap was installed without it)" : "unknown error";
}
#endif
