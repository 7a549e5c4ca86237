// Every GPU of a ring exchanging strided halo faces at once: what a 1-cell face costs when its cells
// are written straight into the neighbours' padding over NVLink, beside the staged route gdap's
// persistent exchange takes today and beside raw NCCL. The sections are halo_gpu.cu's slabs along
// axis 2: float64 512 x 512 x (512/P + 2w) per GPU, periodic, each row holding one face of w cells
// at each end. Methods, all GPUs at once, median of 20 after 3 warm-ups, from the first launch to
// every GPU's stream done:
//   staged   one kernel per GPU gathers both faces and writes them, packed, into the neighbours'
//            staging (contiguous remote stores); each GPU's stream waits on its neighbours' events,
//            then one kernel unpacks its staging into its padding;
//   direct   one kernel per GPU reads each face cell and stores it straight into the neighbour's
//            padding (remote stores of w cells a row, strided);
//   nccl     grouped ncclSend/ncclRecv of each face between contiguous buffers (the floor
//            halo_gpu.cu's ratios use).
// Every received cell is checked after the staged and direct runs. No gdap call: this measures the
// links and the memory, not the library.
#include "bench.hpp"

#include <cstring>
#include <string>

namespace {

constexpr int64_t kN = 512, kRows = kN * kN;
constexpr int kWarmup = 3, kRepeats = 20, kThreads = 256;

struct Slab {
  int64_t n, w;
  __host__ __device__ int64_t row() const { return n + 2 * w; }
  __host__ __device__ int64_t face() const { return kRows * w; }  // cells in one face
  __host__ __device__ int64_t cell(int64_t j, int64_t column) const { return j / w * row() + column + j % w; }
};

// The value rank r's interior cell (row, column) holds: unique across ranks, exact in a double.
__host__ __device__ double value(int64_t r, int64_t row, int64_t column) { return static_cast<double>((r << 40) | (row << 12) | column); }

__global__ void fill(Slab s, int64_t r, double* x) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < kRows * s.row(); k += int64_t{gridDim.x} * blockDim.x) {
    const int64_t column = k % s.row();
    x[k] = column >= s.w && column < s.w + s.n ? value(r, k / s.row(), column) : -1.0;
  }
}

// Cell i of both faces: the low face (first w interior cells, to the left neighbour's high padding)
// then the high face (last w, to the right neighbour's low padding).
__global__ void push_packed(Slab s, const double* x, double* left_staging, double* right_staging) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= 2 * s.face()) return;
  if (i < s.face()) {
    left_staging[s.face() + i] = x[s.cell(i, s.w)];  // the left neighbour's second half: from its right
  } else {
    right_staging[i - s.face()] = x[s.cell(i - s.face(), s.n)];  // the right neighbour's first half: from its left
  }
}

__global__ void unpack(Slab s, const double* staging, double* x) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= 2 * s.face()) return;
  // First half: from the left neighbour, into the low padding; second: from the right, the high.
  x[i < s.face() ? s.cell(i, 0) : s.cell(i - s.face(), s.n + s.w)] = staging[i];
}

__global__ void push_direct(Slab s, const double* x, double* left, double* right) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= 2 * s.face()) return;
  if (i < s.face()) {
    left[s.cell(i, s.n + s.w)] = x[s.cell(i, s.w)];
  } else {
    const int64_t j = i - s.face();
    right[s.cell(j, 0)] = x[s.cell(j, s.n)];
  }
}

int blocks_for(int64_t items) { return static_cast<int>((items + kThreads - 1) / kThreads); }

struct Gpu {
  cudaStream_t stream = nullptr;
  cudaEvent_t pushed = nullptr;
  double *x = nullptr, *staging = nullptr, *send = nullptr, *recv = nullptr;
};

// Wrong padding cells of rank r (its neighbours' faces expected there).
int64_t wrong(Slab s, int P, int r, const Gpu& g) {
  std::vector<double> host(static_cast<size_t>(kRows * s.row()));
  CK(cudaSetDevice(r));
  CK(cudaMemcpy(host.data(), g.x, host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  const int64_t left = (r + P - 1) % P, right = (r + 1) % P;
  int64_t bad = 0;
  for (int64_t row = 0; row < kRows; ++row) {
    for (int64_t c = 0; c < s.w; ++c) {
      bad += host[static_cast<size_t>(row * s.row() + c)] != value(left, row, s.n + c);            // left's last w
      bad += host[static_cast<size_t>(row * s.row() + s.n + s.w + c)] != value(right, row, s.w + c);  // right's first w
    }
  }
  return bad;
}

template <typename F>
double time_all(std::vector<Gpu>& gpus, F&& once) {
  std::vector<double> times;
  for (int it = 0; it < kWarmup + kRepeats; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    for (size_t r = 0; r < gpus.size(); ++r) {
      CK(cudaSetDevice(static_cast<int>(r)));
      CK(cudaStreamSynchronize(gpus[r].stream));
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= kWarmup) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return median(times);
}

}  // namespace

int main() {
  std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  const int P = static_cast<int>(nccl.size());
  if (P < 2) {
    std::fprintf(stderr, "halo_links_gpu needs 2 or more GPUs\n");
    return 2;
  }
  for (int r = 0; r < P; ++r) {
    CK(cudaSetDevice(r));
    for (int q = 0; q < P; ++q) {
      if (q != r) cudaDeviceEnablePeerAccess(q, 0);
    }
    cudaGetLastError();
  }
  std::printf("## strided halo faces over a ring of %d GPUs, float64 512 x 512 x (512/%d + 2w), periodic\n\n", P, P);
  std::printf("| w | face bytes per GPU (both) | staged ms | direct ms | nccl ms | staged / nccl | direct / nccl | wrong |\n"
              "|---|---|---|---|---|---|---|---|\n");
  for (int64_t w : {1, 4}) {
    const Slab s{kN / P, w};
    const int64_t faces = 2 * s.face();
    std::vector<Gpu> gpus(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r) {
      Gpu& g = gpus[static_cast<size_t>(r)];
      CK(cudaSetDevice(r));
      CK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
      CK(cudaEventCreateWithFlags(&g.pushed, cudaEventDisableTiming));
      CK(cudaMalloc(&g.x, kRows * s.row() * sizeof(double)));
      CK(cudaMalloc(&g.staging, faces * sizeof(double)));
      CK(cudaMalloc(&g.send, faces * sizeof(double)));
      CK(cudaMalloc(&g.recv, faces * sizeof(double)));
      fill<<<1024, kThreads, 0, g.stream>>>(s, r, g.x);
      CK(cudaStreamSynchronize(g.stream));
    }
    auto at = [&](int r) -> Gpu& { return gpus[static_cast<size_t>((r + P) % P)]; };
    auto reset_padding = [&] {
      for (int r = 0; r < P; ++r) {
        CK(cudaSetDevice(r));
        fill<<<1024, kThreads, 0, at(r).stream>>>(s, r, at(r).x);
        CK(cudaStreamSynchronize(at(r).stream));
      }
    };
    const double staged = time_all(gpus, [&] {
      for (int r = 0; r < P; ++r) {
        CK(cudaSetDevice(r));
        push_packed<<<blocks_for(faces), kThreads, 0, at(r).stream>>>(s, at(r).x, at(r - 1).staging, at(r + 1).staging);
        CK(cudaEventRecord(at(r).pushed, at(r).stream));
      }
      for (int r = 0; r < P; ++r) {
        CK(cudaSetDevice(r));
        CK(cudaStreamWaitEvent(at(r).stream, at(r - 1).pushed, 0));
        CK(cudaStreamWaitEvent(at(r).stream, at(r + 1).pushed, 0));
        unpack<<<blocks_for(faces), kThreads, 0, at(r).stream>>>(s, at(r).staging, at(r).x);
      }
    });
    int64_t bad = 0;
    for (int r = 0; r < P; ++r) bad += wrong(s, P, r, at(r));
    reset_padding();
    const double direct = time_all(gpus, [&] {
      for (int r = 0; r < P; ++r) {
        CK(cudaSetDevice(r));
        push_direct<<<blocks_for(faces), kThreads, 0, at(r).stream>>>(s, at(r).x, at(r - 1).x, at(r + 1).x);
      }
    });
    for (int r = 0; r < P; ++r) bad += wrong(s, P, r, at(r));
    const size_t face_bytes = static_cast<size_t>(s.face()) * sizeof(double);
    const double raw = time_all(gpus, [&] {
      CK(ncclGroupStart());
      for (int r = 0; r < P; ++r) {
        const auto i = static_cast<size_t>(r);
        char* send = reinterpret_cast<char*>(at(r).send);
        char* recv = reinterpret_cast<char*>(at(r).recv);
        CK(ncclSend(send, face_bytes, ncclChar, (r + P - 1) % P, nccl[i], at(r).stream));
        CK(ncclSend(send + face_bytes, face_bytes, ncclChar, (r + 1) % P, nccl[i], at(r).stream));
        CK(ncclRecv(recv, face_bytes, ncclChar, (r + P - 1) % P, nccl[i], at(r).stream));
        CK(ncclRecv(recv + face_bytes, face_bytes, ncclChar, (r + 1) % P, nccl[i], at(r).stream));
      }
      CK(ncclGroupEnd());
    });
    std::printf("| %lld | %.1f MB | %.3f | %.3f | %.3f | %.2f | %.2f | %lld |\n", static_cast<long long>(w),
                2.0 * static_cast<double>(face_bytes) / 1e6, staged, direct, raw, staged / raw, direct / raw,
                static_cast<long long>(bad));
    std::fflush(stdout);
    for (int r = 0; r < P; ++r) {
      CK(cudaSetDevice(r));
      cudaFree(at(r).x), cudaFree(at(r).staging), cudaFree(at(r).send), cudaFree(at(r).recv);
      cudaEventDestroy(at(r).pushed), cudaStreamDestroy(at(r).stream);
    }
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  return 0;
}
