// What the links between every pair of GPUs carry, every GPU sending to every other at once: the
// ceiling under any redistribution, whatever moves the bytes. Every GPU sends `B` bytes (contiguous)
// to each peer and receives as much from each, all at the same time, by:
//   sm push   one kernel per GPU whose blocks load its own memory and store into the peers' (16-byte
//             stores, 32 KiB tiles dealt round-robin over the peers: gdap's copy kernel's pattern);
//   sm pull   the same kernel loading the peers' memory and storing into its own;
//   tma push  the blocks stage each tile in shared memory and store it with one bulk asynchronous
//             copy (Hopper's cp.async.bulk), off the SMs' load/store path;
//   ce        the copy engines: cudaMemcpyPeerAsync, one stream per peer (also as 1024 calls per peer,
//             and as 2-d copies of 512, 2048 or 16384-byte runs every other run of the sender's memory);
//   ce f + sm a share f of each peer's bytes by the copy engines, the rest by `sm push`, at once;
//   nccl      grouped ncclSend/ncclRecv of the same bytes (NCCL's all-to-all).
// Median of 10 after 3 warm-ups, from every GPU starting to every GPU's streams done (bench.hpp's
// timed_ms); GB/s per GPU is the bytes it sends over that time, "% line" against 450 GB/s one way
// (NV18: 18 NVLink 4 links of 25 GB/s). Every method's result is checked (each received region holds
// its sender's tag) before it is timed. GDAP_LINKS_MIB sets B (default 256 MiB per peer).
#include "bench.hpp"

#include <cstring>
#include <functional>
#include <string>

namespace {

constexpr int kThreads = 256, kWarmup = 3, kRepeats = 10;
constexpr int64_t kTile = 32 * 1024, kTmaTile = 16 * 1024;
constexpr double kLineGBs = 450.0;

// Tile t of a GPU's sends: peer slot t % peers, at byte (t / peers) * tile of that peer's region.
struct Route {
  const char* src[8];
  char* dst[8];
  int peers;
  int64_t bytes;  // per peer (a multiple of the tile)
};

__global__ void sm_copy(Route r, int64_t begin) {
  const int64_t tiles = (r.bytes - begin) / kTile * r.peers;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int q = static_cast<int>(t % r.peers);
    const int64_t at = begin + t / r.peers * kTile;
    const uint4* s = reinterpret_cast<const uint4*>(r.src[q] + at);
    uint4* d = reinterpret_cast<uint4*>(r.dst[q] + at);
    uint4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = s[threadIdx.x + u * kThreads];
#pragma unroll
    for (int u = 0; u < 8; ++u) d[threadIdx.x + u * kThreads] = v[u];
  }
}

// Each block stages a tile in one of two shared buffers and stores it with one bulk copy; a buffer
// is refilled once the bulk copy issued from it two tiles ago has read it.
__global__ void tma_push(Route r) {
  extern __shared__ __align__(128) unsigned char smem[];
  const int64_t tiles = r.bytes / kTmaTile * r.peers;
  int k = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x, k ^= 1) {
    unsigned char* buf = smem + k * kTmaTile;
    const int q = static_cast<int>(t % r.peers);
    const int64_t at = t / r.peers * kTmaTile;
    if (threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    __syncthreads();
    const uint4* s = reinterpret_cast<const uint4*>(r.src[q] + at);
    for (int i = threadIdx.x; i < kTmaTile / 16; i += kThreads) reinterpret_cast<uint4*>(buf)[i] = s[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
      const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(buf));
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(r.dst[q] + at), "r"(shared),
                   "r"(static_cast<unsigned>(kTmaTile))
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
  }
  if (threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

__global__ void tag(float* x, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) x[i] = v;
}

struct Gpu {
  int rank = 0, sms = 0;
  cudaStream_t stream = nullptr;
  cudaStream_t ce[8] = {};
  char* send = nullptr;  // region q: what goes to peer slot q
  char* recv = nullptr;  // region s: what came from rank s
};

}  // namespace

int main() {
  int P = 0;
  CK(cudaGetDeviceCount(&P));
  if (P < 2 || P > 8) {
    std::fprintf(stderr, "links_gpu needs 2 to 8 GPUs, found %d\n", P);
    return 1;
  }
  const char* mib = std::getenv("GDAP_LINKS_MIB");
  const int64_t B = (mib ? std::atoll(mib) : 256) << 20;
  std::vector<ncclComm_t> nccl = nccl_on_every_gpu();
  std::vector<Gpu> gpus(static_cast<size_t>(P));
  for (int r = 0; r < P; ++r) {
    Gpu& g = gpus[static_cast<size_t>(r)];
    g.rank = r;
    CK(cudaSetDevice(r));
    for (int j = 0; j < P; ++j) {
      if (j != r) CK(cudaDeviceEnablePeerAccess(j, 0));
    }
    CK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, r));
    CK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    for (int q = 0; q < P - 1; ++q) CK(cudaStreamCreateWithFlags(&g.ce[q], cudaStreamNonBlocking));
    CK(cudaMalloc(&g.send, 2 * B * (P - 1)));  // region q: 2B, for the strided methods
    CK(cudaMalloc(&g.recv, B * P));
    CK(cudaFuncSetAttribute(tma_push, cudaFuncAttributeMaxDynamicSharedMemorySize, 2 * kTmaTile));
  }
  // peer slot q of rank r is rank (r + 1 + q) % P: every slot a permutation of the ranks.
  auto peer = [P](int r, int q) { return (r + 1 + q) % P; };
  auto push_route = [&](const Gpu& g) {
    Route route{{}, {}, P - 1, B};
    for (int q = 0; q < P - 1; ++q) {
      route.src[q] = g.send + q * 2 * B;
      route.dst[q] = gpus[static_cast<size_t>(peer(g.rank, q))].recv + g.rank * B;
    }
    return route;
  };
  auto pull_route = [&](const Gpu& g) {  // slot q reads from rank (r - 1 - q) what it sent to r
    Route route{{}, {}, P - 1, B};
    for (int q = 0; q < P - 1; ++q) {
      const int s = ((g.rank - 1 - q) % P + P) % P;
      const int slot = ((g.rank - s - 1) % P + P) % P;  // r is slot `slot` of s
      route.src[q] = gpus[static_cast<size_t>(s)].send + slot * 2 * B;
      route.dst[q] = g.recv + s * B;
    }
    return route;
  };
  auto ce_part = [&](const Gpu& g, int64_t bytes) {
    for (int q = 0; q < P - 1 && bytes > 0; ++q) {
      const int to = peer(g.rank, q);
      CK(cudaMemcpyPeerAsync(gpus[static_cast<size_t>(to)].recv + g.rank * B, to, g.send + q * 2 * B, g.rank, bytes, g.ce[q]));
    }
  };
  auto sync_ce = [&](const Gpu& g) {
    for (int q = 0; q < P - 1; ++q) CK(cudaStreamSynchronize(g.ce[q]));
  };
  struct Method {
    std::string name;
    std::function<void(Gpu&)> run;
  };
  std::vector<Method> methods;
  methods.push_back({"sm push", [&](Gpu& g) { sm_copy<<<g.sms * 32, kThreads, 0, g.stream>>>(push_route(g), 0); }});
  methods.push_back({"sm pull", [&](Gpu& g) { sm_copy<<<g.sms * 32, kThreads, 0, g.stream>>>(pull_route(g), 0); }});
  methods.push_back({"tma push", [&](Gpu& g) { tma_push<<<g.sms * 6, kThreads, 2 * kTmaTile, g.stream>>>(push_route(g)); }});
  methods.push_back({"ce", [&](Gpu& g) {
                       ce_part(g, B);
                       sync_ce(g);
                     }});
  for (int percent : {15, 30, 50}) {
    methods.push_back({"ce " + std::to_string(percent) + "% + sm push", [&, percent](Gpu& g) {
                         const int64_t split = B * percent / 100 / kTile * kTile;
                         ce_part(g, split);
                         sm_copy<<<g.sms * 32, kThreads, 0, g.stream>>>(push_route(g), split);
                         sync_ce(g);
                       }});
  }
  // The copy engines on runs of `width` bytes every 2 x width in the sender's memory, packed at the
  // receiver (a 2-d block-cyclic layout's pattern), as `calls` 2-d copies per peer.
  for (int64_t width : {int64_t{512}, int64_t{2048}, int64_t{16384}}) {
    methods.push_back({"ce 2-d, " + std::to_string(width) + "-byte runs", [&, width](Gpu& g) {
                         const int64_t calls = 16, rows = B / width / calls;
                         for (int q = 0; q < P - 1; ++q) {
                           char* to = gpus[static_cast<size_t>(peer(g.rank, q))].recv + g.rank * B;
                           for (int64_t k = 0; k < calls; ++k) {
                             CK(cudaMemcpy2DAsync(to + k * rows * width, width, g.send + q * 2 * B + k * rows * 2 * width,
                                                  2 * width, width, rows, cudaMemcpyDefault, g.ce[q]));
                           }
                         }
                         sync_ce(g);
                       }});
  }
  methods.push_back({"ce, 1024 calls per peer", [&](Gpu& g) {
                       const int64_t calls = 1024, piece = B / calls;
                       for (int q = 0; q < P - 1; ++q) {
                         char* to = gpus[static_cast<size_t>(peer(g.rank, q))].recv + g.rank * B;
                         for (int64_t k = 0; k < calls; ++k) {
                           CK(cudaMemcpyAsync(to + k * piece, g.send + q * 2 * B + k * piece, piece, cudaMemcpyDefault, g.ce[q]));
                         }
                       }
                       sync_ce(g);
                     }});
  methods.push_back({"nccl all-to-all", [&](Gpu& g) {
                       ncclComm_t c = nccl[static_cast<size_t>(g.rank)];
                       CK(ncclGroupStart());
                       for (int q = 0; q < P - 1; ++q) {
                         const int to = peer(g.rank, q), from = ((g.rank - 1 - q) % P + P) % P;
                         CK(ncclSend(g.send + q * 2 * B, B, ncclChar, to, c, g.stream));
                         CK(ncclRecv(g.recv + from * B, B, ncclChar, from, c, g.stream));
                       }
                       CK(ncclGroupEnd());
                     }});

  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("## every GPU to every other at once: %d x %s, %lld MiB per peer\n\n", P, prop.name,
              static_cast<long long>(B >> 20));
  std::printf("| method | median ms | min ms | GB/s per GPU | %% of %.0f GB/s line | checked |\n|---|---|---|---|---|---|\n",
              kLineGBs);
  std::barrier<> sync(P);
  for (const Method& m : methods) {
    std::vector<double> medians(static_cast<size_t>(P)), mins(static_cast<size_t>(P));
    std::vector<int> bad(static_cast<size_t>(P), 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < P; ++r) {
      threads.emplace_back([&, r] {
        Gpu& g = gpus[static_cast<size_t>(r)];
        CK(cudaSetDevice(r));
        for (int q = 0; q < P - 1; ++q) {
          tag<<<g.sms * 4, kThreads, 0, g.stream>>>(reinterpret_cast<float*>(g.send + q * 2 * B), 2 * B / 4, 100.0f * r + peer(r, q));
        }
        CK(cudaMemsetAsync(g.recv, 0, B * P, g.stream));
        CK(cudaStreamSynchronize(g.stream));
        std::vector<double> times;
        for (int it = 0; it < kWarmup + kRepeats; ++it) {
          const double ms = timed_ms(sync, g.stream, [&] { m.run(g); });
          CK(cudaGetLastError());
          if (it == 0) {  // every peer's region, first and last word, after the first run
            for (int s = 0; s < P; ++s) {
              if (s == r) continue;
              float first = 0, last = 0;
              CK(cudaMemcpy(&first, g.recv + s * B, 4, cudaMemcpyDeviceToHost));
              CK(cudaMemcpy(&last, g.recv + (s + 1) * B - 4, 4, cudaMemcpyDeviceToHost));
              const float want = 100.0f * s + r;
              if (first != want || last != want) ++bad[static_cast<size_t>(r)];
            }
          }
          if (it >= kWarmup) times.push_back(ms);
        }
        medians[static_cast<size_t>(r)] = median(times);
        mins[static_cast<size_t>(r)] = *std::min_element(times.begin(), times.end());
      });
    }
    for (auto& t : threads) t.join();
    int wrong = 0;
    for (int b : bad) wrong += b;
    const double ms = *std::max_element(medians.begin(), medians.end());
    const double low = *std::max_element(mins.begin(), mins.end());
    const double rate = static_cast<double>(B) * (P - 1) / (ms * 1e-3) / 1e9;
    std::printf("| %s | %.3f | %.3f | %.1f | %.1f | %s |\n", m.name.c_str(), ms, low, rate, 100.0 * rate / kLineGBs,
                wrong == 0 ? "ok" : (std::to_string(wrong) + " regions wrong").c_str());
    std::fflush(stdout);
  }
  for (int r = 0; r < P; ++r) {
    CK(cudaSetDevice(r));
    cudaFree(gpus[static_cast<size_t>(r)].send);
    cudaFree(gpus[static_cast<size_t>(r)].recv);
    ncclCommDestroy(nccl[static_cast<size_t>(r)]);
  }
  return 0;
}
