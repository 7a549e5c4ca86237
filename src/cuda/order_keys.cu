// Kernels of order_keys.hpp: one grid-stride pass over the elements each way.
#include "cuda/order_keys.hpp"

#include "cuda/device.hpp"

#include <cuda_runtime.h>

#include <algorithm>

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
__global__ void to_keys(const U* from, U* to, int64_t count, bool nan_high) {
  const U sign = top_bit<U>(), exponent_and_mantissa = ~sign;
  const U inf = sizeof(U) == 4 ? U(0x7f800000u) : U(0x7ff0000000000000ull);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    const U bits = from[i];
    if ((bits & exponent_and_mantissa) > inf) {  // NaN, either sign
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

int blocks_for(int64_t count) { return static_cast<int>(std::min<int64_t>(kMaxBlocks, (count + kThreads - 1) / kThreads)); }

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

}  // namespace gdap::cuda
