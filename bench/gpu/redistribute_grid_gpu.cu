// Redistribution of a float64 N x N matrix (N = 32768, 8 GiB, or argv[1]) between 2-d layouts over
// every GPU of one process, one NCCL communicator per GPU (the engine for one process per GPU):
// 2-d blocks on a pr x pc grid (2 x 2 on 4 GPUs, 2 x 1 on 2) -> 2-d block-cyclic 256 x 256 on the
// same grid, and -> column blocks (1 x P). Beside it, in the same run, the floor the issue names:
// an all-to-all of the same bytes through NCCL (grouped ncclSend/ncclRecv, the bytes that cross
// split evenly over every ordered pair of ranks, contiguous buffers, no packing), and a second floor:
// the plan's own messages (each pair's bytes) as raw NCCL sends, which is what an uneven pattern (2-d
// blocks -> column blocks, where two ranks send twice what the others do) must take at least.
// Prints a markdown table:
// median ms of 10 runs after 2 warm-ups (every rank's stream synchronised), the bytes that cross
// between GPUs, the rate of each and gdap's share of the all-to-all's rate (issue 9 asks >= 0.8),
// and the destination elements that differ from the source's values (checked on the GPUs).
#include "bench.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
constexpr int kWarmup = 2, kRepeats = 10;
constexpr int64_t kBlock = 256;  // the block-cyclic block, both axes

// How one axis maps local indices to global ones: a block from `start`, or cyclic blocks of `bs`
// on `P` grid ranks starting at block `c`.
struct Axis {
  int64_t start = 0, P = 1, c = 0, bs = 0;  // bs == 0: a block
  __host__ __device__ int64_t global(int64_t l) const { return bs == 0 ? start + l : ((l / bs) * P + c) * bs + l % bs; }
};

__device__ double value_at(int64_t i, int64_t j) { return static_cast<double>((i * 7 + j * 13) % 1000003); }

__global__ void fill_section(double* x, int64_t rows, int64_t cols, Axis ra, Axis ca) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < rows * cols; k += int64_t{gridDim.x} * blockDim.x) {
    x[k] = value_at(ra.global(k / cols), ca.global(k % cols));
  }
}

__global__ void count_wrong(const double* x, int64_t rows, int64_t cols, Axis ra, Axis ca, unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < rows * cols; k += int64_t{gridDim.x} * blockDim.x) {
    mine += x[k] != value_at(ra.global(k / cols), ca.global(k % cols));
  }
  if (mine != 0) atomicAdd(wrong, mine);
}

struct Layout {
  std::string name;
  int64_t pr, pc;  // grid
  int64_t bs;      // 0: blocks; else block-cyclic blocks of bs x bs
};

gdap_dim dim_of(int64_t n, int64_t P, int64_t c, int64_t bs) {
  gdap_dim d = GDAP_DIM_INIT;
  if (P == 1) {
    gdap_dim_set_undistributed(&d, n);
  } else if (bs == 0) {
    gdap_dim_set_block(&d, n, P, c, c * n / P, (c + 1) * n / P);
  } else {
    gdap_dim_set_cyclic(&d, n, P, c, c * bs, bs);
  }
  return d;
}

std::vector<gdap_dim> dims_of(const Layout& l, int64_t n, int64_t r) {
  return {dim_of(n, l.pr, r / l.pc, l.bs), dim_of(n, l.pc, r % l.pc, l.bs)};
}

Axis axis_of(const Layout& l, int64_t n, int64_t P, int64_t c) {
  if (l.bs == 0) return Axis{P == 1 ? 0 : c * n / P, P, c, 0};
  return Axis{0, P, c, l.bs};
}

gdap_map* map_of(const Layout& l, int64_t n, int P) {
  std::vector<gdap_dim> all;
  for (int r = 0; r < P; ++r) {
    for (const gdap_dim& d : dims_of(l, n, r)) all.push_back(d);
  }
  gdap_map* map = nullptr;
  CK(gdap_map_create(&map, P, 2, all.data()));
  return map;
}

// True if global index i of an axis of n belongs to grid coordinate c of P (bs 0: blocks, as dim_of).
bool owns(int64_t n, int64_t P, int64_t c, int64_t bs, int64_t i) {
  if (P == 1) return true;
  if (bs == 0) return i >= c * n / P && i < (c + 1) * n / P;
  return (i / bs) % P == c;
}

// The bytes rank r of `from` sends rank q of `to`: the one message between them, counted from the
// layouts alone (the second floor sends exactly these).
int64_t pair_bytes(const Layout& from, const Layout& to, int64_t n, int64_t r, int64_t q) {
  auto shared = [&](int64_t P1, int64_t c1, int64_t bs1, int64_t P2, int64_t c2, int64_t bs2) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) k += owns(n, P1, c1, bs1, i) && owns(n, P2, c2, bs2, i);
    return k;
  };
  return shared(from.pr, r / from.pc, from.bs, to.pr, q / to.pc, to.bs) *
         shared(from.pc, r % from.pc, from.bs, to.pc, q % to.pc, to.bs) * int64_t{sizeof(double)};
}

struct Result {
  double gdap_ms = 0, floor_ms = 0, pairs_ms = 0;
  int64_t cross_bytes = 0;
  unsigned long long wrong = 0;
};

Result run(const Layout& from, const Layout& to, int64_t n, const std::vector<ncclComm_t>& nccl) {
  const int P = static_cast<int>(nccl.size());
  gdap_map* src_map = map_of(from, n, P);
  gdap_map* dst_map = map_of(to, n, P);
  std::barrier sync(P);
  std::vector<double> t_gdap, t_floor, t_pairs;
  std::vector<int64_t> cross(static_cast<size_t>(P));
  std::vector<unsigned long long> wrong(static_cast<size_t>(P));
  on_every_gpu(nccl, [&](int r, cudaStream_t stream, gdap_comm* comm) {
    gdap_plan* plan = nullptr;
    CK(gdap_plan_create(&plan, src_map, dst_map, kF64, r));
    gdap_plan_stats st = GDAP_PLAN_STATS_INIT;
    CK(gdap_plan_stats_get(&st, plan));
    cross[static_cast<size_t>(r)] = st.send_bytes;
    const std::vector<gdap_dim> sd = dims_of(from, n, r), dd = dims_of(to, n, r);
    gdap_array *src = nullptr, *dst = nullptr;
    CK(gdap_array_create(&src, kF64, gdap_device{GDAP_DEVICE_CUDA, r}, sd.data(), 2));
    CK(gdap_array_create(&dst, kF64, gdap_device{GDAP_DEVICE_CUDA, r}, dd.data(), 2));
    int64_t ss[2], ds[2];
    CK(gdap_array_shape(ss, src));
    CK(gdap_array_shape(ds, dst));
    void *s = nullptr, *d = nullptr;
    CK(gdap_array_data(&s, src));
    CK(gdap_array_data(&d, dst));
    fill_section<<<1024, 256, 0, stream>>>(static_cast<double*>(s), ss[0], ss[1], axis_of(from, n, from.pr, r / from.pc),
                                           axis_of(from, n, from.pc, r % from.pc));
    CK(cudaStreamSynchronize(stream));
    for (int it = 0; it < kWarmup + kRepeats; ++it) {
      const double ms = timed_ms(sync, stream, [&] { CK(gdap_redistribute(comm, plan, src, dst)); });
      if (r == 0 && it >= kWarmup) t_gdap.push_back(ms);
    }
    unsigned long long* bad = nullptr;
    CK(cudaMalloc(&bad, sizeof *bad));
    CK(cudaMemsetAsync(bad, 0, sizeof *bad, stream));
    count_wrong<<<1024, 256, 0, stream>>>(static_cast<const double*>(d), ds[0], ds[1], axis_of(to, n, to.pr, r / to.pc),
                                          axis_of(to, n, to.pc, r % to.pc), bad);
    CK(cudaMemcpyAsync(&wrong[static_cast<size_t>(r)], bad, sizeof *bad, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    cudaFree(bad);
    // The floor: the same crossing bytes as an all-to-all, even over the pairs (a rank's own share,
    // total / P, fits its sections, which serve as buffers).
    sync.arrive_and_wait();  // every rank's crossing bytes known
    int64_t total = 0;
    for (int64_t b : cross) total += b;
    const int64_t each = total / (int64_t{P} * (P - 1));
    for (int it = 0; it < kWarmup + kRepeats; ++it) {
      const double ms = timed_ms(sync, stream, [&] {
        CK(ncclGroupStart());
        for (int p = 0, k = 0; p < P; ++p) {
          if (p == r) continue;
          CK(ncclSend(static_cast<char*>(s) + k * each, static_cast<size_t>(each), ncclChar, p, nccl[static_cast<size_t>(r)], stream));
          CK(ncclRecv(static_cast<char*>(d) + k * each, static_cast<size_t>(each), ncclChar, p, nccl[static_cast<size_t>(r)], stream));
          ++k;
        }
        CK(ncclGroupEnd());
      });
      if (r == 0 && it >= kWarmup) t_floor.push_back(ms);
    }
    // The second floor: the plan's own messages (each pair's bytes, which the layouts fix) as raw
    // NCCL sends and receives from contiguous buffers. For uneven patterns (2-d blocks -> column
    // blocks: two ranks send twice what the others do) it is what any redistribution must take.
    std::vector<int64_t> to_peer(static_cast<size_t>(P)), from_peer(static_cast<size_t>(P));
    int64_t sent = 0;
    for (int p = 0; p < P; ++p) {
      if (p == r) continue;
      to_peer[static_cast<size_t>(p)] = pair_bytes(from, to, n, r, p);
      from_peer[static_cast<size_t>(p)] = pair_bytes(from, to, n, p, r);
      sent += to_peer[static_cast<size_t>(p)];
    }
    if (sent != st.send_bytes) {
      std::fprintf(stderr, "rank %d: the layouts give %lld bytes to send, the plan %lld\n", r, static_cast<long long>(sent),
                   static_cast<long long>(st.send_bytes));
    }
    for (int it = 0; it < kWarmup + kRepeats; ++it) {
      const double ms = timed_ms(sync, stream, [&] {
        CK(ncclGroupStart());
        int64_t so = 0, ro = 0;
        for (int p = 0; p < P; ++p) {
          const int64_t sb = to_peer[static_cast<size_t>(p)], rb = from_peer[static_cast<size_t>(p)];
          if (p == r || (sb == 0 && rb == 0)) continue;
          CK(ncclSend(static_cast<char*>(s) + so, static_cast<size_t>(sb), ncclChar, p, nccl[static_cast<size_t>(r)], stream));
          CK(ncclRecv(static_cast<char*>(d) + ro, static_cast<size_t>(rb), ncclChar, p, nccl[static_cast<size_t>(r)], stream));
          so += sb, ro += rb;
        }
        CK(ncclGroupEnd());
      });
      if (r == 0 && it >= kWarmup) t_pairs.push_back(ms);
    }
    sync.arrive_and_wait();  // every rank done with its sections
    gdap_array_destroy(dst);
    gdap_array_destroy(src);
    gdap_plan_destroy(plan);
  });
  gdap_map_destroy(dst_map);
  gdap_map_destroy(src_map);
  Result out{median(t_gdap), median(t_floor), median(t_pairs), 0, 0};
  for (int r = 0; r < P; ++r) out.cross_bytes += cross[static_cast<size_t>(r)], out.wrong += wrong[static_cast<size_t>(r)];
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 32768;
  const std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  const int P = static_cast<int>(nccl.size());
  if (P < 2 || n < 2 * kBlock) {
    std::fprintf(stderr, "redistribute_grid_gpu: needs 2 or more GPUs (found %d) and N >= %lld\n", P,
                 static_cast<long long>(2 * kBlock));
    return 1;
  }
  const int64_t pr = P % 2 == 0 && P > 2 ? 2 : P, pc = P / pr;  // 2 x 2 on 4 GPUs, 2 x 1 on 2
  const Layout blocks{"2-d blocks", pr, pc, 0}, cyclic{"2-d block-cyclic 256 x 256", pr, pc, kBlock},
      columns{"column blocks", 1, P, 0};
  std::printf("## redistribution, float64 %lld x %lld over %d GPUs (NCCL, one communicator per GPU)\n\n",
              static_cast<long long>(n), static_cast<long long>(n), P);
  std::printf("| case | grid | bytes across | gdap ms | all-to-all ms (floor) | same messages ms | gdap GB/s | all-to-all GB/s | "
              "gdap / all-to-all rate | gdap / same messages rate | wrong |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Layout* to : {&cyclic, &columns}) {
    const Result r = run(blocks, *to, n, nccl);
    std::printf("| %s -> %s | %lld x %lld -> %lld x %lld | %.2f GB | %.3f | %.3f | %.3f | %.1f | %.1f | %.2f | %.2f | %llu |\n",
                blocks.name.c_str(), to->name.c_str(), static_cast<long long>(blocks.pr), static_cast<long long>(blocks.pc),
                static_cast<long long>(to->pr), static_cast<long long>(to->pc), r.cross_bytes / 1e9, r.gdap_ms, r.floor_ms,
                r.pairs_ms, r.cross_bytes / r.gdap_ms / 1e6, r.cross_bytes / r.floor_ms / 1e6, r.floor_ms / r.gdap_ms,
                r.pairs_ms / r.gdap_ms, r.wrong);
    std::fflush(stdout);
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
  return 0;
}
