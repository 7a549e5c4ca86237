// Two redistributions in turn on one communicator, as a solver's forward and backward transposes
// are: float32 16384 x 16384 row blocks -> column blocks (plan A) and back (plan B) over every GPU,
// one thread per GPU. Times each plan's call made alone (20 in a row) and the pair A then B made in
// turn, for the in-process group (push) and the NCCL engine (one communicator per GPU). A pair should
// cost what its two calls cost alone; a communicator that keeps one program's state at a time
// rebuilds it on every call of the pair. Median of 20 after 3 warm-ups; the rows are checked after the
// pairs (every element of both sections, values from the global index).
#include "bench.hpp"

#include <string>

namespace {

constexpr int64_t kN = 16384;
const gdap_dtype kF32{GDAP_DTYPE_FLOAT, 32, 1};
constexpr int kWarmup = 3, kRepeats = 20;

gdap_dim whole() { return whole_dim(kN); }
gdap_dim block(int64_t P, int64_t c) { return block_dim(kN, P, c); }

// value(i, j) = i * 7 + j * 13 modulo a prime: exact in float32, different for neighbours.
__device__ __host__ float value(int64_t i, int64_t j) { return static_cast<float>((i * 7 + j * 13) % 1000003); }

__global__ void fill_rows(float* x, int64_t row0, int64_t rows) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < rows * kN; k += int64_t{gridDim.x} * blockDim.x) {
    x[k] = value(row0 + k / kN, k % kN);
  }
}

// Wrong elements of a row block [row0, row0 + rows) x kN, or a column block kN x [col0, col0 + cols).
int64_t wrong(const float* d, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
  std::vector<float> h(static_cast<size_t>(rows * cols));
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int64_t bad = 0;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) bad += h[static_cast<size_t>(i * cols + j)] != value(row0 + i, col0 + j);
  }
  return bad;
}

struct Result {
  double a = 0, b = 0, pair = 0;
  int64_t wrong = 0;
};

// One engine's three timings; `make` gives rank r's communicator on `stream`.
template <typename Make>
Result time_engine(int P, Make&& make) {
  Result out;
  std::barrier sync(P);
  std::vector<int64_t> wrong_of(static_cast<size_t>(P), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < P; ++r) {
    threads.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      cudaStream_t stream = nullptr;
      CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      gdap_comm* comm = make(r, stream);
      const std::vector<gdap_dim> rows{block(P, r), whole()}, cols{whole(), block(P, r)};
      gdap_map *mr = nullptr, *mc = nullptr;
      CK(gdap_map_create_collective(&mr, comm, 2, rows.data()));
      CK(gdap_map_create_collective(&mc, comm, 2, cols.data()));
      gdap_plan *a = nullptr, *b = nullptr;
      CK(gdap_plan_create(&a, mr, mc, kF32, r));
      CK(gdap_plan_create(&b, mc, mr, kF32, r));
      gdap_array *xr = nullptr, *xc = nullptr;
      CK(gdap_array_create(&xr, kF32, gdap_device{GDAP_DEVICE_CUDA, r}, rows.data(), 2));
      CK(gdap_array_create(&xc, kF32, gdap_device{GDAP_DEVICE_CUDA, r}, cols.data(), 2));
      void *dr = nullptr, *dc = nullptr;
      CK(gdap_array_data(&dr, xr));
      CK(gdap_array_data(&dc, xc));
      const int64_t lo = r * kN / P, n = (r + 1) * kN / P - lo;
      fill_rows<<<1024, 256, 0, stream>>>(static_cast<float*>(dr), lo, n);
      CK(cudaStreamSynchronize(stream));
      std::vector<double> ta, tb, tp;
      auto series = [&](std::vector<double>& into, bool do_a, bool do_b) {
        for (int it = 0; it < kWarmup + kRepeats; ++it) {
          const double ms = timed_ms(sync, stream, [&] {
            if (do_a) CK(gdap_redistribute(comm, a, xr, xc));
            if (do_b) CK(gdap_redistribute(comm, b, xc, xr));
          });
          if (r == 0 && it >= kWarmup) into.push_back(ms);
        }
      };
      series(ta, true, false);
      series(tb, false, true);
      series(tp, true, true);
      wrong_of[static_cast<size_t>(r)] = wrong(static_cast<float*>(dr), lo, n, 0, kN) + wrong(static_cast<float*>(dc), 0, kN, lo, n);
      if (r == 0) out.a = median(ta), out.b = median(tb), out.pair = median(tp);
      sync.arrive_and_wait();  // peers may read this rank's sections until every rank is done
      gdap_array_destroy(xr), gdap_array_destroy(xc), gdap_plan_destroy(a), gdap_plan_destroy(b);
      gdap_map_destroy(mr), gdap_map_destroy(mc);
      sync.arrive_and_wait();
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  for (int64_t w : wrong_of) out.wrong += w;
  return out;
}

}  // namespace

int main() {
  std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  const int P = static_cast<int>(nccl.size());
  std::printf("## two plans in turn on one communicator, float32 %lld^2 rows -> columns -> rows, %d GPUs\n\n",
              static_cast<long long>(kN), P);
  std::printf("| engine | A alone ms | B alone ms | A + B ms | pair in turn ms | pair / (A + B) | wrong |\n|---|---|---|---|---|---|---|\n");
  std::vector<gdap_comm*> group(static_cast<size_t>(P));
  setenv("GDAP_GROUP_COPY", "push", 1);
  CK(gdap_comm_create_group(group.data(), P));
  const Result g = time_engine(P, [&](int r, cudaStream_t s) {
    CK(gdap_comm_set_stream(group[static_cast<size_t>(r)], s));
    return group[static_cast<size_t>(r)];
  });
  const Result n = time_engine(P, [&](int r, cudaStream_t s) {
    gdap_comm* comm = nullptr;
    CK(gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], s));
    return comm;
  });
  for (const auto& [name, x] : {std::pair{"gdap group (push)", g}, std::pair{"gdap NCCL", n}}) {
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %lld |\n", name, x.a, x.b, x.a + x.b, x.pair, x.pair / (x.a + x.b),
                static_cast<long long>(x.wrong));
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  return 0;
}
