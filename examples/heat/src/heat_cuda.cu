// The heat solver's device kernels and the CUDA plumbing its drivers call (heat_kernels.h).
//
// A step launches one kernel per box (the boundary layer's slabs, then the interior), on a grid
// shaped to the box: a block is 256 threads, a tile as wide as the box's last extent allows (up to
// 256 cells of a row) and as many rows tall as that leaves, so a slab one cell thin along the last
// dimension still fills its threads; grid x, y, z walk the tiles along dimensions 2 and 1 and the
// planes of dimension 0, and no thread divides. Reductions run one block per row group and combine
// the blocks' partial results in a fixed order: the same inputs give the same bits.
#include "heat_kernels.h"
#include "heat_stencil.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr int kThreads = 256;
constexpr int kReduceBlocks = 1024;

using View3 = heat_view3;

// One box as the step kernel tiles it.
struct Tiled {
  int64_t lo[3];
  int64_t ext[3];  // the box's extents
  int width_log2;  // a tile is 2^width_log2 cells wide and kThreads >> width_log2 rows tall
};

template <typename T>
__device__ T cell(const T* u, int64_t i, const View3& w, T r);
template <>
__device__ double cell<double>(const double* u, int64_t i, const View3& w, double r) {
  return heat_cell_f64(u, i, w.s[0], w.s[1], 1, w.three, r);
}
template <>
__device__ float cell<float>(const float* u, int64_t i, const View3& w, float r) {
  return heat_cell_f32(u, i, w.s[0], w.s[1], 1, w.three, r);
}

template <typename T>
__global__ void step_kernel(View3 w, Tiled t, const T* __restrict__ u, T* __restrict__ v, T r) {
  const int64_t i2 = (static_cast<int64_t>(blockIdx.x) << t.width_log2) + (threadIdx.x & ((1 << t.width_log2) - 1));
  const int64_t i1 = static_cast<int64_t>(blockIdx.y) * (kThreads >> t.width_log2) + (threadIdx.x >> t.width_log2);
  if (i2 >= t.ext[2] || i1 >= t.ext[1]) return;
  const int64_t i = (t.lo[0] + blockIdx.z) * w.s[0] + (t.lo[1] + i1) * w.s[1] + t.lo[2] + i2;
  v[i] = cell<T>(u, i, w, r);
}

// Calls op(flat, local, global) for the rows of box [lo, hi) that this block takes (grid-stride over
// rows); `local` is the 3-d view's index, `global` the section's ndim global index.
template <typename Op>
__device__ void for_rows(const View3& w, int ndim, const int64_t* lo, const int64_t* hi, Op op) {
  const int64_t ext1 = hi[1] - lo[1], rows = (hi[0] - lo[0]) * ext1;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t i0 = lo[0] + row / ext1, i1 = lo[1] + row % ext1;
    for (int64_t i2 = lo[2] + threadIdx.x; i2 < hi[2]; i2 += blockDim.x) {
      const int64_t l3[3] = {i0, i1, i2};
      const int64_t g3[3] = {w.start[0] + i0, w.start[1] + i1, w.start[2] + i2};
      op(i0 * w.s[0] + i1 * w.s[1] + i2, l3, ndim == 3 ? g3 : g3 + 1);
    }
  }
}

// A block's partial results combined in shared memory, in a fixed order.
template <typename R, typename Combine>
__device__ void block_combine(R mine, R* partials, Combine combine) {
  __shared__ R slot[kThreads];
  slot[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) slot[threadIdx.x] = combine(slot[threadIdx.x], slot[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = slot[0];
}

template <typename R, typename Combine>
__global__ void finish_kernel(R* partials, int count, R* out, Combine combine) {
  R mine = R(0);  // the identity of both combinations used (sums, and maxima of values >= 0)
  for (int i = threadIdx.x; i < count; i += kThreads) mine = combine(mine, partials[i]);
  block_combine(mine, partials, combine);  // every read above precedes its first barrier
  if (threadIdx.x == 0) *out = partials[0];
}

struct Sum {
  template <typename R>
  __device__ R operator()(R a, R b) const { return a + b; }
};
struct Max {
  __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};

__device__ double load(const void* u, int bits, int64_t i) {
  return bits == 64 ? static_cast<const double*>(u)[i] : static_cast<double>(static_cast<const float*>(u)[i]);
}
__device__ uint64_t bits_of(const void* u, int bits, int64_t i) {
  if (bits == 64) return static_cast<uint64_t>(__double_as_longlong(static_cast<const double*>(u)[i]));
  return static_cast<uint32_t>(__float_as_uint(static_cast<const float*>(u)[i]));
}

struct Box3 {
  int64_t lo[3], hi[3];
};
Box3 box3_of(const heat_view* v, const heat_box* b) {
  Box3 x;
  heat_extents3(v->ndim, b->lo, 0, x.lo);
  heat_extents3(v->ndim, b->hi, 1, x.hi);
  return x;
}

__global__ void fill_kernel(View3 w, int ndim, int bits, void* u, Box3 owned, heat_problem p) {
  const int64_t all_lo[3] = {0, 0, 0};
  for_rows(w, ndim, all_lo, w.n, [&](int64_t flat, const int64_t* l, const int64_t* global) {
    const bool inside = l[0] >= owned.lo[0] && l[0] < owned.hi[0] && l[1] >= owned.lo[1] && l[1] < owned.hi[1] &&
                        l[2] >= owned.lo[2] && l[2] < owned.hi[2];
    const double x = inside ? heat_exact(&p, global, 1.0) : NAN;
    if (bits == 64) static_cast<double*>(u)[flat] = x;
    else static_cast<float*>(u)[flat] = static_cast<float>(x);
  });
}

__global__ void sqdiff_kernel(View3 w, int ndim, int bits, const void* u, const void* v, Box3 box, double* partials) {
  double sum = 0.0;
  for_rows(w, ndim, box.lo, box.hi, [&](int64_t flat, const int64_t*, const int64_t*) {
    const double d = load(v, bits, flat) - load(u, bits, flat);
    sum += d * d;
  });
  block_combine(sum, partials, Sum{});
}

__global__ void error_kernel(View3 w, int ndim, int bits, const void* u, Box3 box, heat_problem p, double decay,
                             double* partials) {
  double worst = 0.0;
  for_rows(w, ndim, box.lo, box.hi, [&](int64_t flat, const int64_t*, const int64_t* global) {
    double e = fabs(load(u, bits, flat) - heat_exact(&p, global, decay));
    if (!(e <= INFINITY)) e = INFINITY;
    worst = e > worst ? e : worst;
  });
  block_combine(worst, partials, Max{});
}

__global__ void fingerprint_kernel(View3 w, int ndim, int bits, const void* u, Box3 box, heat_problem p,
                                   uint64_t* partials) {
  uint64_t sum = 0;
  for_rows(w, ndim, box.lo, box.hi, [&](int64_t flat, const int64_t*, const int64_t* global) {
    uint64_t unknown = 0;
    for (int d = 0; d < ndim; ++d) unknown = unknown * static_cast<uint64_t>(p.n[d]) + static_cast<uint64_t>(global[d] - p.origin[d]);
    sum += heat_share(bits_of(u, bits, flat), unknown);
  });
  block_combine(sum, partials, Sum{});
}

int row_blocks(const Box3& b) {
  const int64_t rows = (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]);
  return static_cast<int>(rows < 1 ? 1 : rows < kReduceBlocks ? rows : kReduceBlocks);
}

int status() { return static_cast<int>(cudaGetLastError()); }

}  // namespace

extern "C" {

int heat_cuda_step(const heat_view* view, const void* u, void* v, const heat_boxes* boxes, double r, void* stream) {
  const View3 w = heat_view3_of(view);
  const auto s = static_cast<cudaStream_t>(stream);
  for (int b = 0; b < boxes->count; ++b) {
    const Box3 x = box3_of(view, &boxes->box[b]);
    Tiled t{};
    for (int d = 0; d < 3; ++d) {
      t.lo[d] = x.lo[d];
      t.ext[d] = x.hi[d] - x.lo[d];
    }
    if (t.ext[0] <= 0 || t.ext[1] <= 0 || t.ext[2] <= 0) continue;  // an empty box
    while ((int64_t{1} << t.width_log2) < t.ext[2] && (1 << t.width_log2) < kThreads) ++t.width_log2;
    const int64_t tall = kThreads >> t.width_log2;
    const dim3 grid(static_cast<unsigned>((t.ext[2] + (int64_t{1} << t.width_log2) - 1) >> t.width_log2),
                    static_cast<unsigned>((t.ext[1] + tall - 1) / tall), static_cast<unsigned>(t.ext[0]));
    if (view->bits == 64) {
      step_kernel<double><<<grid, kThreads, 0, s>>>(w, t, static_cast<const double*>(u), static_cast<double*>(v), r);
    } else {
      step_kernel<float><<<grid, kThreads, 0, s>>>(w, t, static_cast<const float*>(u), static_cast<float*>(v),
                                                     static_cast<float>(r));
    }
    const int e = status();
    if (e != 0) return e;
  }
  return 0;
}

int heat_cuda_fill(const heat_view* view, void* u, const heat_box* owned, const heat_problem* problem, void* stream) {
  const View3 w = heat_view3_of(view);
  const Box3 all{{0, 0, 0}, {w.n[0], w.n[1], w.n[2]}};
  fill_kernel<<<row_blocks(all), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      w, view->ndim, view->bits, u, box3_of(view, owned), *problem);
  return status();
}

int64_t heat_cuda_scratch_bytes(void) { return kReduceBlocks * sizeof(double); }

int heat_cuda_sqdiff(const heat_view* view, const void* u, const void* v, const heat_box* box, double* out,
                     void* scratch, void* stream) {
  const Box3 b = box3_of(view, box);
  const int blocks = row_blocks(b);
  const auto s = static_cast<cudaStream_t>(stream);
  auto* partials = static_cast<double*>(scratch);
  sqdiff_kernel<<<blocks, kThreads, 0, s>>>(heat_view3_of(view), view->ndim, view->bits, u, v, b, partials);
  finish_kernel<<<1, kThreads, 0, s>>>(partials, blocks, out, Sum{});
  return status();
}

int heat_cuda_error(const heat_view* view, const void* u, const heat_box* box, const heat_problem* problem,
                    double decay, double* out, void* scratch, void* stream) {
  const Box3 b = box3_of(view, box);
  const int blocks = row_blocks(b);
  const auto s = static_cast<cudaStream_t>(stream);
  auto* partials = static_cast<double*>(scratch);
  error_kernel<<<blocks, kThreads, 0, s>>>(heat_view3_of(view), view->ndim, view->bits, u, b, *problem, decay, partials);
  finish_kernel<<<1, kThreads, 0, s>>>(partials, blocks, out, Max{});
  return status();
}

int heat_cuda_fingerprint(const heat_view* view, const void* u, const heat_box* box, const heat_problem* problem,
                          uint64_t* out, void* scratch, void* stream) {
  const Box3 b = box3_of(view, box);
  const int blocks = row_blocks(b);
  const auto s = static_cast<cudaStream_t>(stream);
  auto* partials = static_cast<uint64_t*>(scratch);
  fingerprint_kernel<<<blocks, kThreads, 0, s>>>(heat_view3_of(view), view->ndim, view->bits, u, b, *problem, partials);
  finish_kernel<<<1, kThreads, 0, s>>>(partials, blocks, out, Sum{});
  return status();
}

const char* heat_cuda_error_string(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }
int heat_cuda_device_count(int* count) { return static_cast<int>(cudaGetDeviceCount(count)); }
int heat_cuda_set_device(int device) { return static_cast<int>(cudaSetDevice(device)); }
int heat_cuda_malloc(void** pointer, int64_t bytes) { return static_cast<int>(cudaMalloc(pointer, static_cast<size_t>(bytes))); }
int heat_cuda_free(void* pointer) { return static_cast<int>(cudaFree(pointer)); }

int heat_cuda_copy_sync(void* dst, const void* src, int64_t bytes, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const cudaError_t e = cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDefault, s);
  return static_cast<int>(e != cudaSuccess ? e : cudaStreamSynchronize(s));
}

int heat_cuda_stream_create(void** stream, int high) {
  int least = 0, greatest = 0;
  cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (e != cudaSuccess) return static_cast<int>(e);
  cudaStream_t s = nullptr;
  e = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high ? greatest : least);
  if (e == cudaSuccess) *stream = s;
  return static_cast<int>(e);
}
int heat_cuda_stream_destroy(void* stream) { return static_cast<int>(cudaStreamDestroy(static_cast<cudaStream_t>(stream))); }
int heat_cuda_stream_sync(void* stream) { return static_cast<int>(cudaStreamSynchronize(static_cast<cudaStream_t>(stream))); }

int heat_cuda_event_create(void** event) {
  cudaEvent_t e = nullptr;
  const cudaError_t s = cudaEventCreate(&e);
  if (s == cudaSuccess) *event = e;
  return static_cast<int>(s);
}
int heat_cuda_event_destroy(void* event) { return static_cast<int>(cudaEventDestroy(static_cast<cudaEvent_t>(event))); }
int heat_cuda_event_record(void* event, void* stream) {
  return static_cast<int>(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}
int heat_cuda_stream_wait(void* stream, void* event) {
  return static_cast<int>(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
}
int heat_cuda_event_elapsed(float* ms, void* start, void* stop) {
  const cudaError_t e = cudaEventSynchronize(static_cast<cudaEvent_t>(stop));
  if (e != cudaSuccess) return static_cast<int>(e);
  return static_cast<int>(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(stop)));
}

}  // extern "C"
