// The batched strided copy kernel (see copy_kernel.hpp).
#include "cuda/copy_kernel.hpp"

#include "core/error.hpp"
#include "cuda/device.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace gdap::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 8;  // a tile is one round: every thread's 8 loads in flight at once
constexpr int64_t kTileBytes = 32 * 1024;  // bytes per tile: 8 x 16-byte loads per thread

// A copy as the kernel sees it: tiles are either several short rows or a slice of one long row.
struct Tiled {
  const char* src;
  char* dst;
  int64_t rows, row_bytes, src_pitch, dst_pitch;
  int64_t first_tile;      // tiles of the batch before this copy
  int64_t rows_per_tile;   // > 1: a tile is that many whole rows
  int64_t chunks_per_row;  // > 1: a tile is one kTileBytes slice of a row
  int32_t width;           // bytes per load: 16, 8, 4 or 1
  int32_t reserved;
};

template <typename T>
__device__ void copy_rows(const Tiled& c, int64_t row, int64_t rows, int64_t first_byte, int64_t bytes) {
  const int64_t per_row = bytes / static_cast<int64_t>(sizeof(T));
  const int64_t total = per_row * rows;  // <= kTileBytes / sizeof(T): fits int
  const int n = static_cast<int>(per_row), all = static_cast<int>(total);
  for (int base = threadIdx.x; base < all; base += kThreads * kUnroll) {
    T v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kThreads;
      if (i < all) {
        const int64_t r = row + i / n, k = i % n;
        v[u] = *reinterpret_cast<const T*>(c.src + r * c.src_pitch + first_byte + k * sizeof(T));
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kThreads;
      if (i < all) {
        const int64_t r = row + i / n, k = i % n;
        *reinterpret_cast<T*>(c.dst + r * c.dst_pitch + first_byte + k * sizeof(T)) = v[u];
      }
    }
  }
}

// The flags of a launch as the kernel sees them (BatchFlags, the addresses in device memory).
struct Hooks {
  uint32_t* const* wait = nullptr;
  uint32_t* const* signal = nullptr;
  uint32_t* done = nullptr;
  uint32_t* gave_up = nullptr;
  int32_t* timed_out = nullptr;
  uint64_t timeout_ns = 0;
  int32_t waits = 0, signals = 0;
};

__device__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ uint32_t load_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ void store_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Thread 0 of each block waits for every flag, polling this GPU's memory only (a poll of the
// host-mapped word over PCIe from every block slowed the flags' arrival by 0.1-0.3 ms); false (in
// every thread) when the time ran out, here or in an earlier block or launch (`gave_up`).
__device__ bool wait_flags(const Hooks& h, uint32_t count) {
  __shared__ int ok;
  if (threadIdx.x == 0) {
    ok = 1;
    const uint64_t start = now_ns();
    volatile uint32_t* gave_up = h.gave_up;
    for (int i = 0; i < h.waits && ok; ++i) {
      while (static_cast<int32_t>(load_acquire(h.wait[i]) - count) < 0) {
        if (*gave_up != 0 || now_ns() - start > h.timeout_ns) {
          *gave_up = 1;
          *reinterpret_cast<volatile int32_t*>(h.timed_out) = 1;
          ok = 0;
          break;
        }
        __nanosleep(100);
      }
    }
    if (*gave_up != 0) ok = 0;  // another block gave up while this one waited
  }
  __syncthreads();
  return ok != 0;
}

// The last block to finish writes the count into every flag. One fence per block, after the
// barrier, covers the whole block's copies (fences are cumulative; cooperative groups' grid sync is
// built so); a fence in every thread cost up to 0.3 ms per launch on 4 x H200.
__device__ void signal_flags(const Hooks& h, uint32_t count) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence_system();
  if (atomicAdd(h.done, 1u) == gridDim.x - 1) {
    __threadfence_system();
    *h.done = 0;  // for the next launch, which follows this one on the stream
    for (int i = 0; i < h.signals; ++i) store_release(h.signal[i], count);
  }
}

__global__ void batched_copy(const Tiled* __restrict__ copies, int64_t count, int64_t tiles, Hooks hooks, uint32_t value) {
  if (hooks.gave_up != nullptr) {  // once a wait gave up, nothing more is copied or signalled
    __shared__ int broken;
    if (threadIdx.x == 0) broken = *reinterpret_cast<volatile uint32_t*>(hooks.gave_up) != 0;
    __syncthreads();
    if (broken) return;
  }
  if (hooks.waits > 0 && !wait_flags(hooks, value)) return;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int64_t lo = 0, hi = count - 1;  // the last copy whose first tile is <= tile
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (copies[mid].first_tile <= tile) lo = mid; else hi = mid - 1;
    }
    const Tiled& c = copies[lo];
    const int64_t t = tile - c.first_tile;
    int64_t row, rows, first_byte, bytes;
    if (c.chunks_per_row > 1) {
      row = t / c.chunks_per_row;
      rows = 1;
      first_byte = t % c.chunks_per_row * kTileBytes;
      bytes = min(kTileBytes, c.row_bytes - first_byte);
    } else {
      row = t * c.rows_per_tile;
      rows = min(c.rows_per_tile, c.rows - row);
      first_byte = 0;
      bytes = c.row_bytes;
    }
    switch (c.width) {
      case 16: copy_rows<uint4>(c, row, rows, first_byte, bytes); break;
      case 8: copy_rows<uint2>(c, row, rows, first_byte, bytes); break;
      case 4: copy_rows<uint32_t>(c, row, rows, first_byte, bytes); break;
      default: copy_rows<unsigned char>(c, row, rows, first_byte, bytes); break;
    }
  }
  if (hooks.signals > 0) signal_flags(hooks, value);
}

// The widest load every address of the copy is aligned to.
int32_t width_of(const DeviceCopy& c) {
  const auto bits = reinterpret_cast<uintptr_t>(c.src) | reinterpret_cast<uintptr_t>(c.dst) |
                    static_cast<uintptr_t>(c.row_bytes) | static_cast<uintptr_t>(c.src_pitch) |
                    static_cast<uintptr_t>(c.dst_pitch);
  for (int32_t w : {16, 8, 4}) {
    if (bits % static_cast<uintptr_t>(w) == 0) return w;
  }
  return 1;
}

Tiled tiled(const DeviceCopy& c, int64_t first_tile, int64_t& tiles) {
  Tiled t{c.src, c.dst, c.rows, c.row_bytes, c.src_pitch, c.dst_pitch, first_tile, 1, 1, width_of(c), 0};
  if (c.row_bytes > kTileBytes) {
    t.chunks_per_row = (c.row_bytes + kTileBytes - 1) / kTileBytes;
    tiles = c.rows * t.chunks_per_row;
  } else {
    // One round of loads per tile (kThreads x kUnroll of the copy's width): rows narrower than 16
    // bytes (a strided face's single elements) then spread over more blocks, more loads in flight.
    const int64_t round = int64_t{kThreads} * kUnroll * t.width;
    t.rows_per_tile = std::max<int64_t>(1, round / std::max<int64_t>(c.row_bytes, 1));
    tiles = (c.rows + t.rows_per_tile - 1) / t.rows_per_tile;
  }
  return t;
}

int sm_count() {
  int device = 0, count = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return count;
}

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Blocks per SM the kernel launches at most: 32 beat 16 by 1-10% on 4 x H100 for every
// redistribution measured (docs/PERFORMANCE.md), more than one wave of resident blocks keeping the
// links busy while the tails of earlier tiles drain.
constexpr int64_t kBlocksPerSm = 32;

}  // namespace

struct DeviceBatch::Impl {
  std::vector<int64_t> key;
  Tiled* device = nullptr;
  Tiled* host = nullptr;  // pinned mirror the upload copies from
  int64_t capacity = 0, count = 0, tiles = 0;
  int blocks = 0;
  cudaEvent_t uploaded = nullptr;  // the last upload has read `host`
  Hooks hooks;                     // with its flag addresses in `flag_table`
  uint32_t** flag_table = nullptr;
  ~Impl() {
    if (uploaded) cudaEventSynchronize(uploaded), cudaEventDestroy(uploaded);
    cudaFree(device);
    cudaFreeHost(host);
    cudaFree(flag_table);
  }
  void set_flags(const BatchFlags* flags);
};

// Copies the flags' addresses to the device (synchronously: a batch with flags is set up once).
void DeviceBatch::Impl::set_flags(const BatchFlags* flags) {
  hooks = Hooks{};
  cudaFree(flag_table);
  flag_table = nullptr;
  if (flags == nullptr || (flags->wait.empty() && flags->signal.empty())) return;
  std::vector<uint32_t*> table(flags->wait);
  table.insert(table.end(), flags->signal.begin(), flags->signal.end());
  check_cuda(cudaMalloc(&flag_table, table.size() * sizeof(uint32_t*)), "cudaMalloc (flag addresses)");
  check_cuda(cudaMemcpy(flag_table, table.data(), table.size() * sizeof(uint32_t*), cudaMemcpyHostToDevice),
             "cudaMemcpy (flag addresses)");
  hooks.wait = flag_table;
  hooks.signal = flag_table + flags->wait.size();
  hooks.waits = static_cast<int32_t>(flags->wait.size());
  hooks.signals = static_cast<int32_t>(flags->signal.size());
  hooks.done = flags->done;
  hooks.gave_up = flags->gave_up;
  hooks.timed_out = flags->timed_out;
  hooks.timeout_ns = flags->timeout_ns;
}

DeviceBatch::DeviceBatch() : impl_(std::make_unique<Impl>()) {}
DeviceBatch::~DeviceBatch() = default;

bool DeviceBatch::holds(const std::vector<int64_t>& key) const { return impl_->count >= 0 && impl_->key == key && !key.empty(); }
int64_t DeviceBatch::size() const { return impl_->count; }

void DeviceBatch::upload(std::vector<int64_t> key, const std::vector<DeviceCopy>& copies, void* stream,
                         const BatchFlags* flags) {
  Impl& b = *impl_;
  b.key.clear();  // invalid until the upload is queued
  b.set_flags(flags);
  if (b.uploaded) check_cuda(cudaEventSynchronize(b.uploaded), "cudaEventSynchronize");
  else check_cuda(cudaEventCreateWithFlags(&b.uploaded, cudaEventDisableTiming), "cudaEventCreate");
  const auto n = static_cast<int64_t>(copies.size());
  if (n > b.capacity) {
    const int64_t capacity = std::max<int64_t>(n, 2 * b.capacity);
    Tiled *device = nullptr, *host = nullptr;
    check_cuda(cudaMalloc(&device, sizeof(Tiled) * capacity), "cudaMalloc (copy descriptors)");
    if (cudaMallocHost(&host, sizeof(Tiled) * capacity) != cudaSuccess) {
      cudaFree(device);
      fail(GDAP_ERR_DEVICE, "cudaMallocHost of {} copy descriptors failed", capacity);
    }
    // The old device array may still be read by a queued launch on `stream`: free it after.
    check_cuda(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
    cudaFree(b.device);
    cudaFreeHost(b.host);
    b.device = device, b.host = host, b.capacity = capacity;
  }
  // Remote copies first, then local ones.
  int64_t tiles = 0, at = 0;
  for (bool remote : {true, false}) {
    for (const DeviceCopy& c : copies) {
      if (c.remote != remote) continue;
      int64_t these = 0;
      b.host[at++] = tiled(c, tiles, these);
      tiles += these;
    }
  }
  if (n > 0) {
    check_cuda(cudaMemcpyAsync(b.device, b.host, sizeof(Tiled) * n, cudaMemcpyHostToDevice, as_stream(stream)),
               "cudaMemcpyAsync (copy descriptors)");
  }
  check_cuda(cudaEventRecord(b.uploaded, as_stream(stream)), "cudaEventRecord");
  b.count = n, b.tiles = tiles;
  // One set of blocks walks every tile, remote ones first so the link is busy from the start:
  // measured on 2 x H200 against giving the local copies blocks of their own (docs/PERFORMANCE.md).
  b.blocks = static_cast<int>(std::min<int64_t>(tiles, int64_t{sm_count()} * kBlocksPerSm));
  b.key = std::move(key);
}

void DeviceBatch::launch(void* stream, uint32_t count) const {
  const Impl& b = *impl_;
  const bool flags = b.hooks.waits > 0 || b.hooks.signals > 0;
  if (!flags && (b.count == 0 || b.tiles == 0)) return;
  batched_copy<<<std::max(b.blocks, 1), kThreads, 0, as_stream(stream)>>>(b.device, b.count, b.tiles, b.hooks, count);
  check_cuda(cudaGetLastError(), "launching the copy kernel");
}

}  // namespace gdap::cuda
