// Halo exchange of a 3-d float64 512^3 array over P GPUs of one process (P = every GPU, or argv[1]):
// gdap_halo_exchange over NCCL (one communicator per GPU from ncclCommInitAll), the persistent
// exchange over NCCL (gdap_halo_exchange_init once, then gdap_exchange_start: no agreement per
// call), by direct writes into the neighbours' staging and, bound with GDAP_NCCL_PEER=0, by NCCL
// send/receive, and gdap_halo_exchange over the in-process group (peer-copy kernels), beside the
// floor: raw NCCL grouped ncclSend/ncclRecv of the same bytes to the same peers from contiguous
// buffers (no packing), timed in the same run.
// Decompositions: slabs split along axis 0 (faces contiguous: sent without packing), slabs split
// along axis 2 (faces strided: packed and unpacked by copy kernels), and on 4 GPUs a 2 x 2 grid
// over axes 0 and 1 (faces, edges and corners). Each split axis is periodic with halos of width
// 1 and 4 (the issue's "1-cell and 4-cell halos"). Prints a markdown table: median ms of 20 runs
// after 3 warm-ups (every rank's stream synchronised), gdap / raw NCCL ratio, GB/s.
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
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kN = 512;
const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
constexpr int kWarmup = 3, kRepeats = 20;

struct Case {
  std::string name;
  std::vector<int64_t> grid;  // ranks along each of the 3 axes
  int64_t width;
};

// Rank r's dictionaries: split axes are periodic blocks with `width` cells of padding each side: the
// kN interior cells with `width` cells of boundary padding at each end (DAP 0.10: size kN + 2 width,
// start >= 0), which the exchange fills from the far end, and halos of `width` between ranks.
std::vector<gdap_dim> dims_of(const Case& c, int64_t r) {
  std::vector<gdap_dim> dims(3);
  int64_t rest = r;
  for (int i = 2; i >= 0; --i) {
    const int64_t P = c.grid[static_cast<size_t>(i)], g = rest % P;
    rest /= P;
    gdap_dim d = GDAP_DIM_INIT;
    if (P == 1) {
      gdap_dim_set_undistributed(&d, kN);
    } else {
      const int64_t lo = g * kN / P, hi = (g + 1) * kN / P;
      gdap_dim_set_block(&d, kN + 2 * c.width, P, g, lo, hi + 2 * c.width);
      gdap_dim_set_padding(&d, c.width, c.width);
      gdap_dim_set_periodic(&d, 1);
    }
    dims[static_cast<size_t>(i)] = d;
  }
  return dims;
}

// The ranks whose grid coordinates differ from r's by at most one (periodic) on every axis.
std::vector<int> neighbours(const Case& c, int r) {
  std::set<int> out;
  std::vector<int64_t> coord(3);
  int64_t rest = r;
  for (int i = 2; i >= 0; --i) coord[static_cast<size_t>(i)] = rest % c.grid[static_cast<size_t>(i)], rest /= c.grid[static_cast<size_t>(i)];
  for (int a = -1; a <= 1; ++a) {
    for (int b = -1; b <= 1; ++b) {
      for (int e = -1; e <= 1; ++e) {
        const int d[3] = {a, b, e};
        int64_t n = 0;
        for (int i = 0; i < 3; ++i) {
          const int64_t P = c.grid[static_cast<size_t>(i)];
          n = n * P + (coord[static_cast<size_t>(i)] + d[i] + P) % P;
        }
        if (n != r) out.insert(static_cast<int>(n));
      }
    }
  }
  return {out.begin(), out.end()};
}

struct Result {
  double gdap_nccl = 0, gdap_bound = 0, gdap_sends = 0, gdap_group = 0, raw = 0;
  int64_t bytes = 0;  // bytes sent by rank 0
};

// Times `body(rank)` on P threads, each repetition ended by a stream synchronisation on every rank.
double time_ranks(int P, std::barrier<>& sync, int r, std::vector<double>& times, const std::function<void()>& body,
                  cudaStream_t stream) {
  for (int it = 0; it < kWarmup + kRepeats; ++it) {
    sync.arrive_and_wait();
    const auto t0 = std::chrono::steady_clock::now();
    body();
    CK(cudaStreamSynchronize(stream));
    sync.arrive_and_wait();
    const auto t1 = std::chrono::steady_clock::now();
    if (r == 0 && it >= kWarmup) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  (void)P;
  return 0;
}

Result run_case(const Case& c, int P, const std::vector<ncclComm_t>& nccl) {
  Result result;
  std::barrier sync(P);
  std::vector<double> t_nccl, t_bound, t_sends, t_group, t_raw;
  std::vector<gdap_comm*> group(static_cast<size_t>(P));
  CK(gdap_comm_create_group(group.data(), P));
  std::vector<std::thread> threads;
  for (int r = 0; r < P; ++r) {
    threads.emplace_back([&, r] {
      CK(cudaSetDevice(r));
      cudaStream_t stream = nullptr;
      CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      gdap_comm* comm = nullptr;
      CK(gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream));
      gdap_comm* member = group[static_cast<size_t>(r)];
      CK(gdap_comm_set_stream(member, stream));
      const std::vector<gdap_dim> dims = dims_of(c, r);
      gdap_map* map = nullptr;
      CK(gdap_map_create_collective(&map, comm, 3, dims.data()));
      gdap_halo* halo = nullptr;
      CK(gdap_halo_create(&halo, map, kF64, r, nullptr));
      gdap_halo_stats st = GDAP_HALO_STATS_INIT;
      CK(gdap_halo_stats_get(&st, halo));
      if (r == 0) result.bytes = st.send_bytes;
      gdap_array* a = nullptr;
      CK(gdap_array_create(&a, kF64, gdap_device{GDAP_DEVICE_CUDA, r}, dims.data(), 3));
      time_ranks(P, sync, r, t_nccl, [&] { CK(gdap_halo_exchange(comm, halo, a)); }, stream);
      gdap_exchange* bound = nullptr;  // persistent: checked and agreed once
      CK(gdap_halo_exchange_init(&bound, comm, halo, a));
      time_ranks(P, sync, r, t_bound, [&] { CK(gdap_exchange_start(bound)); }, stream);
      CK(gdap_exchange_destroy(bound));
      sync.arrive_and_wait();  // the environment changes while no thread reads it
      if (r == 0) setenv("GDAP_NCCL_PEER", "0", 1);
      sync.arrive_and_wait();
      CK(gdap_halo_exchange_init(&bound, comm, halo, a));  // NCCL send/receive
      sync.arrive_and_wait();
      if (r == 0) unsetenv("GDAP_NCCL_PEER");
      time_ranks(P, sync, r, t_sends, [&] { CK(gdap_exchange_start(bound)); }, stream);
      CK(gdap_exchange_destroy(bound));
      time_ranks(P, sync, r, t_group, [&] { CK(gdap_halo_exchange(member, halo, a)); }, stream);
      // Raw NCCL: the same bytes to the same peers, one contiguous message each.
      const std::vector<int> peers = neighbours(c, r);
      const int64_t each = st.send_bytes / std::max<int64_t>(1, static_cast<int64_t>(peers.size()));
      char *send = nullptr, *recv = nullptr;
      CK(cudaMalloc(&send, static_cast<size_t>(each * peers.size() + 1)));
      CK(cudaMalloc(&recv, static_cast<size_t>(each * peers.size() + 1)));
      time_ranks(P, sync, r, t_raw, [&] {
        CK(ncclGroupStart());
        for (size_t k = 0; k < peers.size(); ++k) {
          CK(ncclRecv(recv + k * each, static_cast<size_t>(each), ncclChar, peers[k], nccl[static_cast<size_t>(r)], stream));
          CK(ncclSend(send + k * each, static_cast<size_t>(each), ncclChar, peers[k], nccl[static_cast<size_t>(r)], stream));
        }
        CK(ncclGroupEnd());
      }, stream);
      cudaFree(send);
      cudaFree(recv);
      gdap_array_destroy(a);
      gdap_halo_destroy(halo);
      gdap_map_destroy(map);
      sync.arrive_and_wait();  // group peers may still read this rank's section until all are done
      gdap_comm_destroy(comm);
      gdap_comm_destroy(member);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  result.gdap_nccl = median(t_nccl);
  result.gdap_bound = median(t_bound);
  result.gdap_sends = median(t_sends);
  result.gdap_group = median(t_group);
  result.raw = median(t_raw);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  int gpus = 0;
  CK(cudaGetDeviceCount(&gpus));
  const int P = argc > 1 ? std::atoi(argv[1]) : gpus;
  if (P < 2 || P > gpus) {
    std::fprintf(stderr, "halo_gpu: needs 2 or more GPUs (asked %d, found %d)\n", P, gpus);
    return 1;
  }
  std::vector<ncclComm_t> nccl(static_cast<size_t>(P));
  CK(ncclCommInitAll(nccl.data(), P, nullptr));
  std::vector<Case> cases;
  for (int64_t w : {1, 4}) {
    cases.push_back({"slabs along axis 0 (contiguous faces)", {P, 1, 1}, w});
    cases.push_back({"slabs along axis 2 (strided faces)", {1, 1, P}, w});
    if (P == 4) cases.push_back({"2 x 2 over axes 0, 1 (faces, edges, corners)", {2, 2, 1}, w});
  }
  std::printf("## halo exchange, float64 %lld^3 over %d GPUs, one process\n\n", static_cast<long long>(kN), P);
  std::printf("| decomposition | halo | bytes sent per rank | gdap NCCL ms | gdap NCCL persistent ms | persistent, NCCL "
              "sends ms | gdap group ms | raw NCCL ms (floor) | NCCL ratio | persistent ratio | persistent sends ratio | "
              "group ratio | persistent GB/s |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Case& c : cases) {
    const Result r = run_case(c, P, nccl);
    std::printf("| %s | %lld | %.1f MB | %.3f | %.3f | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.2fx | %.2fx | %.1f |\n",
                c.name.c_str(), static_cast<long long>(c.width), r.bytes / 1e6, r.gdap_nccl, r.gdap_bound, r.gdap_sends,
                r.gdap_group, r.raw, r.gdap_nccl / r.raw, r.gdap_bound / r.raw, r.gdap_sends / r.raw, r.gdap_group / r.raw,
                r.bytes / r.gdap_bound / 1e6);
    std::fflush(stdout);
  }
  for (ncclComm_t comm : nccl) ncclCommDestroy(comm);
  return 0;
}
