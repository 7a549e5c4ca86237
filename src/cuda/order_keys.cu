// Kernels of order_keys.hpp: one grid-stride pass over the elements each way, and the NaN scan.
#include "cuda/order_keys.hpp"

#include "cuda/device.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace gdap::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

template <typename U>
__device__ U top_bit() {
  return U(1) << (sizeof(U) * 8 - 1);
}

// U: the unsigned integer of the float's width; the float's bits arrive as U.
template <typename U>
__device__ bool nan_bits(U bits) {
  const U inf = sizeof(U) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  return (bits & ~top_bit<U>()) > inf;  // NaN, either sign
}

template <typename U>
__global__ void to_keys(const U* from, U* to, int64_t count, bool nan_high) {
  const U sign = top_bit<U>();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    const U bits = from[i];
    if (nan_bits(bits)) {
      to[i] = nan_high ? ~U(0) : U(0);
    } else {
      to[i] = (bits & sign) != 0 ? ~bits : (bits | sign);
    }
  }
}

template <typename U>
__global__ void from_keys(U* data, int64_t count) {
  const U sign = top_bit<U>();
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    const U key = data[i];
    data[i] = (key & sign) != 0 ? (key ^ sign) : ~key;  // ~0 -> 0x7f..f, 0 -> 0xff..f: both NaN
  }
}

// Sets *flag when any of `count` floats is NaN: `vectors` 16-byte loads from the start first (0
// unless `data` is 16-byte aligned), then the elements after them one by one. Writes only on a
// NaN: the flag is the caller's to clear.
template <typename U>
__global__ void scan_nan(const U* data, int64_t count, int64_t vectors, int* flag) {
  constexpr int kLanes = 16 / sizeof(U);
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x, step = int64_t{gridDim.x} * blockDim.x;
  const auto* vector = reinterpret_cast<const uint4*>(data);
  bool nan = false;
  for (int64_t i = first; i < vectors; i += step) {
    const uint4 v = vector[i];
    U lanes[kLanes];
    memcpy(lanes, &v, sizeof v);
    for (int k = 0; k < kLanes; ++k) nan |= nan_bits(lanes[k]);
  }
  for (int64_t i = vectors * kLanes + first; i < count; i += step) nan |= nan_bits(data[i]);
  if (nan) *flag = 1;
}

int blocks_for(int64_t count) { return static_cast<int>(std::min<int64_t>(kMaxBlocks, (count + kThreads - 1) / kThreads)); }

template <typename U>
void launch_scan(const void* data, int64_t count, int* flag, cudaStream_t stream) {
  const bool aligned = reinterpret_cast<uintptr_t>(data) % 16 == 0;
  const int64_t vectors = aligned ? count / (16 / int64_t{sizeof(U)}) : 0;
  scan_nan<<<blocks_for(vectors > 0 ? vectors : count), kThreads, 0, stream>>>(static_cast<const U*>(data), count,
                                                                               vectors, flag);
}

}  // namespace

void to_order_keys(const void* from, void* to, int64_t count, int bits, bool nan_high, void* stream) {
  if (count == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (bits == 32) {
    to_keys<<<blocks_for(count), kThreads, 0, s>>>(static_cast<const uint32_t*>(from), static_cast<uint32_t*>(to), count, nan_high);
  } else {
    to_keys<<<blocks_for(count), kThreads, 0, s>>>(static_cast<const uint64_t*>(from), static_cast<uint64_t*>(to), count, nan_high);
  }
  check_cuda(cudaGetLastError(), "the order-key kernel");
}

void from_order_keys(void* data, int64_t count, int bits, void* stream) {
  if (count == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (bits == 32) from_keys<<<blocks_for(count), kThreads, 0, s>>>(static_cast<uint32_t*>(data), count);
  else from_keys<<<blocks_for(count), kThreads, 0, s>>>(static_cast<uint64_t*>(data), count);
  check_cuda(cudaGetLastError(), "the order-key kernel");
}

void has_nan(const void* data, int64_t count, int bits, int* flag, void* stream) {
  if (count == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (bits == 32) launch_scan<uint32_t>(data, count, flag, s);
  else launch_scan<uint64_t>(data, count, flag, s);
  check_cuda(cudaGetLastError(), "the NaN scan kernel");
}

}  // namespace gdap::cuda
