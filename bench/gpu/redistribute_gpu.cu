// Single-process, multi-GPU redistribution of a float32 16384 x 16384 matrix over every GPU (or the
// first GDAP_BENCH_GPUS): row blocks -> column blocks and -> row block-cyclic(256), and four
// fine-grained moves: cyclic rows, row block-cyclic(4) and unstructured (shuffled) rows -> column
// blocks, and row blocks -> column block-cyclic(16) (runs of 64 bytes); GDAP_BENCH_CASE=<name>
// times one case. Times gdap's in-process group (peer-copy kernels, pull and push) and gdap over
// NCCL (one communicator per GPU from ncclCommInitAll) in one run, beside two floors: an NCCL all-to-all
// of the same bytes (grouped ncclSend/ncclRecv, the bytes spread evenly over the ordered pairs), and
// the bytes that must cross between GPUs over the measured peer bandwidth (every GPU copying to every
// other at once). Prints a markdown table; bench/gpu/run.sh adds the cupyx.distributed.array figures.
#include "bench.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kN = 16384;
const gdap_dtype kF32{GDAP_DTYPE_FLOAT, 32, 1};
constexpr int kWarmup = 3, kRepeats = 20;

using Dims = std::function<std::vector<gdap_dim>(int64_t rank, int64_t P)>;

gdap_dim whole() { return whole_dim(kN); }
gdap_dim block(int64_t P, int64_t c) { return block_dim(kN, P, c); }
gdap_dim cyclic(int64_t P, int64_t c, int64_t bs) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_cyclic(&d, kN, P, c, c * bs, bs);
  return d;
}

// Unstructured rows: the rows dealt to the ranks in a shuffled order (fixed seed), each rank's
// indices unsorted, so that no two neighbouring local rows are neighbours globally.
const std::vector<int64_t>& shuffled_rows() {
  static const std::vector<int64_t> rows = [] {
    std::vector<int64_t> v(kN);
    for (int64_t i = 0; i < kN; ++i) v[static_cast<size_t>(i)] = i;
    std::mt19937_64 draw(25);
    std::shuffle(v.begin(), v.end(), draw);
    return v;
  }();
  return rows;
}
gdap_dim unstructured_rows(int64_t P, int64_t c) {
  gdap_dim d = GDAP_DIM_INIT;
  const int64_t lo = c * kN / P, hi = (c + 1) * kN / P;
  gdap_dim_set_unstructured(&d, kN, P, c, shuffled_rows().data() + lo, hi - lo, 1);
  return d;
}

struct Case {
  std::string name;
  Dims from, to;
};

const std::vector<Case> kCases = {
    {"rows -> cols", [](int64_t r, int64_t P) { return std::vector{block(P, r), whole()}; },
     [](int64_t r, int64_t P) { return std::vector{whole(), block(P, r)}; }},
    {"rows -> row block-cyclic(256)", [](int64_t r, int64_t P) { return std::vector{block(P, r), whole()}; },
     [](int64_t r, int64_t P) { return std::vector{cyclic(P, r, 256), whole()}; }},
    {"cyclic rows -> cols", [](int64_t r, int64_t P) { return std::vector{cyclic(P, r, 1), whole()}; },
     [](int64_t r, int64_t P) { return std::vector{whole(), block(P, r)}; }},
    {"rows -> col block-cyclic(16)", [](int64_t r, int64_t P) { return std::vector{block(P, r), whole()}; },
     [](int64_t r, int64_t P) { return std::vector{whole(), cyclic(P, r, 16)}; }},
    {"row block-cyclic(4) -> cols", [](int64_t r, int64_t P) { return std::vector{cyclic(P, r, 4), whole()}; },
     [](int64_t r, int64_t P) { return std::vector{whole(), block(P, r)}; }},
    {"unstructured rows -> cols", [](int64_t r, int64_t P) { return std::vector{unstructured_rows(P, r), whole()}; },
     [](int64_t r, int64_t P) { return std::vector{whole(), block(P, r)}; }},
};

// Fills a section with a value derived from each element's global index (on the device).
__global__ void fill_kernel(float* data, int64_t rows, int64_t cols, const int64_t* row_global, const int64_t* col_global) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < rows * cols; k += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = k / cols, j = k % cols;
    data[k] = static_cast<float>((row_global[i] * 7 + col_global[j] * 13) % 1000003);
  }
}

// Rank sections and maps for one case.
struct Rank {
  int device = 0;
  cudaStream_t stream = nullptr;
  gdap_map *src_map = nullptr, *dst_map = nullptr;
  gdap_plan* plan = nullptr;
  gdap_array *src = nullptr, *dst = nullptr;
};

// The global index of each local index along `axis` of a's section.
std::vector<int64_t> globals(gdap_array* a, int axis) {
  int64_t shape[2], g[2], l[2] = {0, 0};
  CK(gdap_array_shape(shape, a));
  std::vector<int64_t> out(static_cast<size_t>(shape[axis]));
  for (int64_t i = 0; i < shape[axis]; ++i) {
    l[axis] = i;
    CK(gdap_array_local_to_global(g, a, l));
    out[static_cast<size_t>(i)] = g[axis];
  }
  return out;
}

int64_t* on_device(const std::vector<int64_t>& v) {
  int64_t* d = nullptr;
  CK(cudaMalloc(&d, v.size() * sizeof(int64_t) + 8));
  CK(cudaMemcpy(d, v.data(), v.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  return d;
}

void fill(gdap_array* a) {
  const std::vector<int64_t> rows = globals(a, 0), cols = globals(a, 1);
  int64_t *d_rows = on_device(rows), *d_cols = on_device(cols);
  void* data = nullptr;
  CK(gdap_array_data(&data, a));
  fill_kernel<<<1024, 256>>>(static_cast<float*>(data), static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols.size()),
                             d_rows, d_cols);
  CK(cudaDeviceSynchronize());
  CK(cudaFree(d_rows));
  CK(cudaFree(d_cols));
}

// Every destination element equals the value its global index was given.
int64_t wrong_elements(gdap_array* a) {
  const std::vector<int64_t> rows = globals(a, 0), cols = globals(a, 1);
  std::vector<float> host(rows.size() * cols.size());
  void* data = nullptr;
  CK(gdap_array_data(&data, a));
  CK(cudaMemcpy(host.data(), data, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < cols.size(); ++j) {
      wrong += host[i * cols.size() + j] != static_cast<float>((rows[i] * 7 + cols[j] * 13) % 1000003);
    }
  }
  return wrong;
}

// Runs `P` rank threads; each builds its rank, then times `kRepeats` redistributions (each ended
// by a stream synchronisation on every rank); returns the median wall time in ms.
double time_mode(const Case& c, int P, const std::function<gdap_comm*(int rank, cudaStream_t)>& make_comm,
                 int64_t& wrong, int64_t& cross_bytes) {
  std::vector<double> times;
  std::barrier sync(P);
  std::vector<int64_t> wrong_of(static_cast<size_t>(P), 0), bytes_of(static_cast<size_t>(P), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < P; ++r) {
    threads.emplace_back([&, r] {
      Rank k;
      k.device = r;
      CK(cudaSetDevice(r));
      CK(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
      gdap_comm* comm = make_comm(r, k.stream);
      const auto s = c.from(r, P), d = c.to(r, P);
      CK(gdap_map_create_collective(&k.src_map, comm, 2, s.data()));
      CK(gdap_map_create_collective(&k.dst_map, comm, 2, d.data()));
      CK(gdap_plan_create(&k.plan, k.src_map, k.dst_map, kF32, r));
      gdap_plan_stats st = GDAP_PLAN_STATS_INIT;
      CK(gdap_plan_stats_get(&st, k.plan));
      bytes_of[static_cast<size_t>(r)] = st.send_bytes;
      CK(gdap_array_create(&k.src, kF32, gdap_device{GDAP_DEVICE_CUDA, r}, s.data(), 2));
      CK(gdap_array_create(&k.dst, kF32, gdap_device{GDAP_DEVICE_CUDA, r}, d.data(), 2));
      fill(k.src);
      for (int it = 0; it < kWarmup + kRepeats; ++it) {
        sync.arrive_and_wait();
        const auto t0 = std::chrono::steady_clock::now();
        CK(gdap_redistribute(comm, k.plan, k.src, k.dst));
        CK(cudaStreamSynchronize(k.stream));
        sync.arrive_and_wait();
        const auto t1 = std::chrono::steady_clock::now();
        if (r == 0 && it >= kWarmup) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      // One more call into a destination of NaNs (every byte 0xff), so that the check sees a call's work.
      void* dst_data = nullptr;
      int64_t dst_shape[2];
      CK(gdap_array_data(&dst_data, k.dst));
      CK(gdap_array_shape(dst_shape, k.dst));
      CK(cudaMemsetAsync(dst_data, 0xff, static_cast<size_t>(dst_shape[0] * dst_shape[1]) * sizeof(float), k.stream));
      sync.arrive_and_wait();
      CK(gdap_redistribute(comm, k.plan, k.src, k.dst));
      CK(cudaStreamSynchronize(k.stream));
      sync.arrive_and_wait();
      wrong_of[static_cast<size_t>(r)] = wrong_elements(k.dst);
      gdap_array_destroy(k.src);
      gdap_array_destroy(k.dst);
      gdap_plan_destroy(k.plan);
      gdap_map_destroy(k.src_map);
      gdap_map_destroy(k.dst_map);
      sync.arrive_and_wait();  // peers may still read this rank's sections until all are done
      gdap_comm_destroy(comm);
      cudaStreamDestroy(k.stream);
    });
  }
  for (auto& t : threads) t.join();
  wrong = 0, cross_bytes = 0;
  for (int r = 0; r < P; ++r) wrong += wrong_of[static_cast<size_t>(r)], cross_bytes += bytes_of[static_cast<size_t>(r)];
  return median(times);
}

// Two-way peer bandwidth: every GPU copies `bytes` to every other at once (GB/s, all directions).
double peer_bandwidth(int P, int64_t bytes) {
  std::vector<char*> buf(static_cast<size_t>(P) * 2);
  std::vector<cudaStream_t> streams(static_cast<size_t>(P) * P);
  for (int r = 0; r < P; ++r) {
    CK(cudaSetDevice(r));
    for (int p = 0; p < P; ++p) {
      if (p != r) cudaDeviceEnablePeerAccess(p, 0);
      CK(cudaStreamCreateWithFlags(&streams[static_cast<size_t>(r * P + p)], cudaStreamNonBlocking));
    }
    cudaGetLastError();
    CK(cudaMalloc(&buf[static_cast<size_t>(2 * r)], static_cast<size_t>(bytes) * P));
    CK(cudaMalloc(&buf[static_cast<size_t>(2 * r + 1)], static_cast<size_t>(bytes) * P));
  }
  std::vector<double> times;
  for (int it = 0; it < kWarmup + kRepeats; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < P; ++r) {
      CK(cudaSetDevice(r));  // each GPU's copies issued from its own device, as bench/gpu/links_gpu.cu does
      for (int p = 0; p < P; ++p) {
        if (p == r) continue;
        CK(cudaMemcpyPeerAsync(buf[static_cast<size_t>(2 * p + 1)] + r * bytes, p, buf[static_cast<size_t>(2 * r)] + p * bytes,
                               r, static_cast<size_t>(bytes), streams[static_cast<size_t>(r * P + p)]));
      }
    }
    for (cudaStream_t s : streams) CK(cudaStreamSynchronize(s));
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= kWarmup) times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  for (int r = 0; r < P; ++r) {
    CK(cudaSetDevice(r));
    cudaFree(buf[static_cast<size_t>(2 * r)]);
    cudaFree(buf[static_cast<size_t>(2 * r + 1)]);
  }
  return static_cast<double>(bytes) * P * (P - 1) / median(times) / 1e9;
}

// An NCCL all-to-all of `pair_bytes` between every ordered pair of GPUs (grouped ncclSend/ncclRecv
// from contiguous buffers, one thread driving every communicator): the median ms.
double alltoall_ms(const std::vector<ncclComm_t>& nccl, int64_t pair_bytes) {
  const int P = static_cast<int>(nccl.size());
  std::vector<char*> send(static_cast<size_t>(P)), recv(static_cast<size_t>(P));
  std::vector<cudaStream_t> streams(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) {
    CK(cudaSetDevice(r));
    CK(cudaStreamCreateWithFlags(&streams[static_cast<size_t>(r)], cudaStreamNonBlocking));
    CK(cudaMalloc(&send[static_cast<size_t>(r)], static_cast<size_t>(pair_bytes) * P));
    CK(cudaMalloc(&recv[static_cast<size_t>(r)], static_cast<size_t>(pair_bytes) * P));
  }
  std::vector<double> times;
  for (int it = 0; it < kWarmup + kRepeats; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    CK(ncclGroupStart());
    for (int r = 0; r < P; ++r) {
      for (int p = 0; p < P; ++p) {
        if (p == r) continue;
        const auto i = static_cast<size_t>(r);
        CK(ncclSend(send[i] + p * pair_bytes, static_cast<size_t>(pair_bytes), ncclChar, p, nccl[i], streams[i]));
        CK(ncclRecv(recv[i] + p * pair_bytes, static_cast<size_t>(pair_bytes), ncclChar, p, nccl[i], streams[i]));
      }
    }
    CK(ncclGroupEnd());
    for (cudaStream_t st : streams) CK(cudaStreamSynchronize(st));
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= kWarmup) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  for (int r = 0; r < P; ++r) {
    CK(cudaSetDevice(r));
    cudaFree(send[static_cast<size_t>(r)]);
    cudaFree(recv[static_cast<size_t>(r)]);
    cudaStreamDestroy(streams[static_cast<size_t>(r)]);
  }
  return median(times);
}

}  // namespace

int main() {
  int P = 0;
  CK(cudaGetDeviceCount(&P));
  if (const char* n = std::getenv("GDAP_BENCH_GPUS")) P = std::min(P, std::atoi(n));
  if (P < 2) {
    std::fprintf(stderr, "needs at least 2 GPUs, found %d\n", P);
    return 2;
  }
  const int64_t pair = kN * kN * 4 / P / P;  // bytes each GPU sends each other in rows -> cols
  const double bandwidth = peer_bandwidth(P, pair);
  const char* order = std::getenv("GDAP_PEER_ORDER");
  std::printf("%d GPUs; peer bandwidth, all copying to each other at once: %.0f GB/s; GDAP_PEER_ORDER=%s\n\n", P, bandwidth,
              order ? order : "(default)");
  std::vector<ncclComm_t> nccl(static_cast<size_t>(P));
  std::vector<int> devices(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) devices[static_cast<size_t>(r)] = r;
  CK(ncclCommInitAll(nccl.data(), P, devices.data()));
  std::printf("| case | engine | median ms | GB/s across | floor ms | x floor | all-to-all ms | gdap / all-to-all rate | wrong |\n"
              "|---|---|---|---|---|---|---|---|---|\n");
  const char* only = std::getenv("GDAP_BENCH_CASE");  // a case's name: time that case only
  for (const Case& c : kCases) {
    if (only != nullptr && *only != '\0' && c.name != only) continue;
    struct Mode {
      const char* name;
      const char* group_copy;  // GDAP_GROUP_COPY for the in-process group
      std::function<gdap_comm*(int, cudaStream_t)> make;
    };
    std::vector<gdap_comm*> group(static_cast<size_t>(P));
    auto group_comm = [&](int r, cudaStream_t s) {
      CK(gdap_comm_set_stream(group[static_cast<size_t>(r)], s));
      return group[static_cast<size_t>(r)];
    };
    auto nccl_comm = [&](int r, cudaStream_t s) {
      gdap_comm* comm = nullptr;
      CK(gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], s));
      return comm;
    };
    const std::vector<Mode> modes = {
        {"gdap group (pull)", "pull", group_comm}, {"gdap group (push)", "push", group_comm}, {"gdap NCCL", "pull", nccl_comm}};
    double a2a = 0;
    for (const Mode& m : modes) {
      setenv("GDAP_GROUP_COPY", m.group_copy, 1);
      CK(gdap_comm_create_group(group.data(), P));  // time_mode destroys every rank's communicator
      int64_t wrong = 0, bytes = 0;
      const double ms = time_mode(c, P, m.make, wrong, bytes);
      if (a2a == 0) a2a = alltoall_ms(nccl, bytes / P / (P - 1));
      const double floor_ms = static_cast<double>(bytes) / (bandwidth * 1e9) * 1e3;
      std::printf("| %s | %s | %.3f | %.0f | %.3f | %.2f | %.3f | %.2f | %lld |\n", c.name.c_str(), m.name, ms,
                  static_cast<double>(bytes) / (ms * 1e-3) / 1e9, floor_ms, ms / floor_ms, a2a, a2a / ms,
                  static_cast<long long>(wrong));
      std::fflush(stdout);
    }
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  return 0;
}
