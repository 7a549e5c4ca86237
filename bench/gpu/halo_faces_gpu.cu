// One GPU: what a strided face costs by itself, the floor under halo_gpu.cu's rows whose faces are
// strided (slabs along axis 2). A rank's float64 section there is 512 x 512 x (512/P + 2w): its
// slab of the 512^3 array over P GPUs with halos of width w. Each row holds one face of w cells at
// each end, and the next row is 512/P + 2w cells further on, so a face is 262,144 runs of w cells.
// Timed on the same section, each a kernel of its own, CUDA events around one launch, median of 20
// after 3 warm-ups:
//   pack      hand-written: both faces (the first and last w interior cells of every row) into a
//             contiguous buffer, as any sender must before a contiguous NCCL send;
//   unpack    hand-written: a contiguous buffer into both faces' padding, as any receiver must;
//   contig    hand-written: a contiguous copy of the same bytes (what the faces would cost if they
//             were contiguous: the bandwidth floor of pack and unpack);
//   gdap      gdap's periodic exchange on a one-rank NCCL communicator (persistent): its copy kernel
//             reads each face and writes it into the opposite padding, a pack and an unpack in one
//             pass, as halo_gpu.cu's push and unpack kernels together do on one rank.
// `halo_faces_gpu once` runs each kernel once after one warm-up, for Nsight Compute (ncu), which
// then reports each kernel's DRAM traffic (tests/gpu notes: --clock-control none).
#include "bench.hpp"

#include <cstring>
#include <string>

namespace {

constexpr int64_t kN = 512, kRows = kN * kN;
constexpr int kWarmup = 3, kRepeats = 20, kThreads = 256;
const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};

// The section's shape: rows of `row` cells, interior cells [w, w + n) of each.
struct Slab {
  int64_t n, w;
  __host__ __device__ int64_t row() const { return n + 2 * w; }
  __host__ __device__ int64_t face() const { return kRows * w; }  // cells in one face
};

int blocks_for(int64_t items) { return static_cast<int>((items + kThreads - 1) / kThreads); }

// Cell i of the two faces (low face first) in the section, where the low face's cells of a row
// start at column `low` and the high face's at `high`.
__device__ int64_t face_cell(Slab s, int64_t i, int64_t low, int64_t high) {
  const bool upper = i >= s.face();
  const int64_t j = upper ? i - s.face() : i;
  return j / s.w * s.row() + (upper ? high : low) + j % s.w;
}

__global__ void pack(Slab s, const double* x, double* buf) {  // the first and last w interior cells
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < 2 * s.face()) buf[i] = x[face_cell(s, i, s.w, s.n)];
}

__global__ void unpack(Slab s, const double* buf, double* x) {  // the padding before and after
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < 2 * s.face()) x[face_cell(s, i, 0, s.n + s.w)] = buf[i];
}

__global__ void contig(const double2* src, double2* dst, int64_t n) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// Median milliseconds of one launch of `body` on `stream`.
template <typename F>
double time_ms(cudaStream_t stream, bool once, F&& body) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> times;
  for (int it = 0; it < (once ? 2 : kWarmup + kRepeats); ++it) {
    CK(cudaEventRecord(a, stream));
    body();
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (it >= (once ? 1 : kWarmup)) times.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(times);
}

// gdap's exchange of the slab with itself: one rank, axis 2 periodic with w cells of boundary padding
// at each end of its n interior cells (size n + 2w).
struct SelfHalo {
  gdap_comm* comm = nullptr;
  gdap_map* map = nullptr;
  gdap_halo* halo = nullptr;
  gdap_array* array = nullptr;
  gdap_exchange* bound = nullptr;
  SelfHalo(ncclComm_t nccl, cudaStream_t stream, Slab s) {
    CK(gdap_comm_from_nccl(&comm, nccl, stream));
    gdap_dim dims[3] = {GDAP_DIM_INIT, GDAP_DIM_INIT, GDAP_DIM_INIT};
    CK(gdap_dim_set_undistributed(&dims[0], kN));
    CK(gdap_dim_set_undistributed(&dims[1], kN));
    CK(gdap_dim_set_block(&dims[2], s.n + 2 * s.w, 1, 0, 0, s.n + 2 * s.w));
    CK(gdap_dim_set_padding(&dims[2], s.w, s.w));
    CK(gdap_dim_set_periodic(&dims[2], 1));
    CK(gdap_map_create_collective(&map, comm, 3, dims));
    CK(gdap_halo_create(&halo, map, kF64, 0, nullptr));
    CK(gdap_array_create(&array, kF64, gdap_device{GDAP_DEVICE_CUDA, 0}, dims, 3));
    CK(gdap_halo_exchange_init(&bound, comm, halo, array));
  }
  ~SelfHalo() {
    gdap_exchange_destroy(bound);
    gdap_array_destroy(array);
    gdap_halo_destroy(halo);
    gdap_map_destroy(map);
    gdap_comm_destroy(comm);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::strcmp(argv[1], "once") == 0;
  CK(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ncclComm_t nccl = nullptr;
  int device = 0;
  CK(ncclCommInitAll(&nccl, 1, &device));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("## strided faces on one GPU (%s): float64 512 x 512 x (512/P + 2w)\n\n", prop.name);
  std::printf("| P | w | face bytes (both) | pack ms | unpack ms | contiguous copy ms | pack + unpack - 2 x copy ms | "
              "gdap self-exchange ms |\n|---|---|---|---|---|---|---|---|\n");
  for (int64_t P : {2, 4}) {
    for (int64_t w : {1, 4}) {
      const Slab s{kN / P, w};
      double *x = nullptr, *buf = nullptr, *other = nullptr;
      const int64_t cells = kRows * s.row(), faces = 2 * s.face();
      CK(cudaMalloc(&x, cells * sizeof(double)));
      CK(cudaMalloc(&buf, faces * sizeof(double)));
      CK(cudaMalloc(&other, faces * sizeof(double)));
      CK(cudaMemset(x, 0, cells * sizeof(double)));
      CK(cudaMemset(buf, 0, faces * sizeof(double)));
      const double t_pack = time_ms(stream, once, [&] { pack<<<blocks_for(faces), kThreads, 0, stream>>>(s, x, buf); });
      const double t_unpack = time_ms(stream, once, [&] { unpack<<<blocks_for(faces), kThreads, 0, stream>>>(s, buf, x); });
      const int64_t pairs = faces / 2;
      const double t_copy = time_ms(stream, once, [&] {
        contig<<<blocks_for(pairs), kThreads, 0, stream>>>(reinterpret_cast<const double2*>(buf),
                                                           reinterpret_cast<double2*>(other), pairs);
      });
      CK(cudaGetLastError());
      cudaFree(x), cudaFree(buf), cudaFree(other);
      SelfHalo self(nccl, stream, s);
      const double t_gdap = time_ms(stream, once, [&] { CK(gdap_exchange_start(self.bound)); });
      std::printf("| %lld | %lld | %.1f MB | %.4f | %.4f | %.4f | %.4f | %.4f |\n", static_cast<long long>(P),
                  static_cast<long long>(w), faces * 8 / 1e6, t_pack, t_unpack, t_copy, t_pack + t_unpack - 2 * t_copy,
                  t_gdap);
      std::fflush(stdout);
    }
  }
  ncclCommDestroy(nccl);
  cudaStreamDestroy(stream);
  return 0;
}
