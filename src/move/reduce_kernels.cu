// Kernels of the device reductions (reduce.hpp). A rank's owned elements form the product of
// per-axis index tables; a combination is decomposed in C order into one entry per axis, whose
// offsets and flat contributions add up. Each kept combination (one buffer element) is reduced
// over the reduced combinations by one thread when they are few, else by one block (a strided
// loop per thread, then a shared-memory tree): the order is fixed, so results are reproducible.
#include "move/reduce.hpp"

#include "core/error.hpp"
#include "move/device.hpp"

#include <cuda_runtime.h>

#include <type_traits>

namespace gdap::move {
namespace {

constexpr int kMaxAxes = 32;
constexpr int kBlock = 256;
constexpr int64_t kFewReduced = 64;  // up to this many reduced combinations: one thread each

// A list of axis tables as the kernels see them: counts and where each axis starts in the
// concatenated offset/flat arrays.
struct Axes {
  int n = 0;
  int64_t count[kMaxAxes];
  int64_t start[kMaxAxes];
};

struct Tables {
  const int64_t* offset;
  const int64_t* flat;
};

__device__ void locate(const Axes& a, Tables t, int64_t c, int64_t& offset, int64_t& flat) {
  for (int i = a.n - 1; i >= 0; --i) {
    const int64_t k = c % a.count[i];
    c /= a.count[i];
    offset += t.offset[a.start[i] + k];
    flat += t.flat[a.start[i] + k];
  }
}

template <typename T, int Op>
__device__ T apply(T a, T b) {
  if constexpr (Op == GDAP_REDUCE_PROD) return static_cast<T>(a * b);
  if constexpr (Op == GDAP_REDUCE_MIN) return b < a ? b : a;
  if constexpr (Op == GDAP_REDUCE_MAX) return a < b ? b : a;
  return static_cast<T>(a + b);
}

template <typename T>
__global__ void fill(T* buffer, int64_t count, T value) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < count; k += int64_t{gridDim.x} * blockDim.x) {
    buffer[k] = value;
  }
}

template <typename T, int Op>
__global__ void reduce_by_thread(const T* source, T* buffer, Axes kept, Axes reduced, Tables t, int64_t nkept,
                                 int64_t nreduced, T start) {
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < nkept; c += int64_t{gridDim.x} * blockDim.x) {
    int64_t base = 0, flat = 0;
    locate(kept, t, c, base, flat);
    T acc = start;
    for (int64_t q = 0; q < nreduced; ++q) {
      int64_t offset = base, unused = 0;
      locate(reduced, t, q, offset, unused);
      acc = apply<T, Op>(acc, source[offset]);
    }
    buffer[flat] = acc;
  }
}

template <typename T, int Op>
__global__ void reduce_by_block(const T* source, T* buffer, Axes kept, Axes reduced, Tables t, int64_t nkept,
                                int64_t nreduced, T start) {
  __shared__ T part[kBlock];
  for (int64_t c = blockIdx.x; c < nkept; c += gridDim.x) {
    int64_t base = 0, flat = 0;
    locate(kept, t, c, base, flat);
    T acc = start;
    for (int64_t q = threadIdx.x; q < nreduced; q += blockDim.x) {
      int64_t offset = base, unused = 0;
      locate(reduced, t, q, offset, unused);
      acc = apply<T, Op>(acc, source[offset]);
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kBlock / 2; s > 0; s /= 2) {
      if (threadIdx.x < s) part[threadIdx.x] = apply<T, Op>(part[threadIdx.x], part[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) buffer[flat] = part[0];
    __syncthreads();
  }
}

template <typename T>
__global__ void divide(T* buffer, int64_t count, double by) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < count; k += int64_t{gridDim.x} * blockDim.x) {
    buffer[k] = static_cast<T>(buffer[k] / by);
  }
}

template <typename T>
__global__ void write_out(T* result, const T* buffer, Axes out, Tables t, int64_t nout) {
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < nout; c += int64_t{gridDim.x} * blockDim.x) {
    int64_t offset = 0, flat = 0;
    locate(out, t, c, offset, flat);
    result[offset] = buffer[flat];
  }
}

int blocks_for(int64_t work) {
  const int64_t b = (work + kBlock - 1) / kBlock;
  return static_cast<int>(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

// The tables of some lists of axes, concatenated and uploaded; Axes describe each list.
struct Uploaded {
  StreamBuffer buffer;
  Tables tables{};
  Uploaded(const std::vector<const std::vector<AxisTable>*>& lists, std::vector<Axes>& axes, void* stream)
      : buffer(bytes_of(lists), stream) {
    std::vector<int64_t> offset, flat;
    for (const auto* list : lists) {
      if (list->size() > static_cast<size_t>(kMaxAxes)) {
        fail(GDAP_ERR_UNSUPPORTED, "a device reduction handles up to {} axes, not {}", kMaxAxes, list->size());
      }
      Axes a;
      a.n = static_cast<int>(list->size());
      for (int i = 0; i < a.n; ++i) {
        const AxisTable& table = (*list)[static_cast<size_t>(i)];
        a.count[i] = static_cast<int64_t>(table.offset.size());
        a.start[i] = static_cast<int64_t>(offset.size());
        offset.insert(offset.end(), table.offset.begin(), table.offset.end());
        flat.insert(flat.end(), table.flat.begin(), table.flat.end());
      }
      axes.push_back(a);
    }
    auto* d = static_cast<int64_t*>(buffer.data());
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    if (!offset.empty()) {
      // From pageable memory: the call returns once the bytes are staged, so the vectors may go.
      check_cuda(cudaMemcpyAsync(d, offset.data(), offset.size() * 8, cudaMemcpyHostToDevice, cuda_stream), "cudaMemcpyAsync");
      check_cuda(cudaMemcpyAsync(d + offset.size(), flat.data(), flat.size() * 8, cudaMemcpyHostToDevice, cuda_stream),
                 "cudaMemcpyAsync");
    }
    tables = Tables{d, d + offset.size()};
  }
  static int64_t bytes_of(const std::vector<const std::vector<AxisTable>*>& lists) {
    int64_t n = 0;
    for (const auto* list : lists) {
      for (const AxisTable& t : *list) n += static_cast<int64_t>(t.offset.size());
    }
    return 16 * (n > 0 ? n : 1);
  }
};

int64_t combinations(const Axes& a) {
  int64_t n = 1;
  for (int i = 0; i < a.n; ++i) n *= a.count[i];
  return n;
}

template <typename T, int Op>
void launch_reduce(const DeviceReduction& r, T* buffer, const std::vector<Axes>& axes, Tables t, cudaStream_t stream) {
  const Axes &kept = axes[0], &reduced = axes[1];
  const int64_t nkept = combinations(kept), nreduced = combinations(reduced);
  const T* source = static_cast<const T*>(r.source);
  const T start = identity<T>(r.op);
  if (nreduced <= kFewReduced) {
    reduce_by_thread<T, Op><<<blocks_for(nkept), kBlock, 0, stream>>>(source, buffer, kept, reduced, t, nkept, nreduced,
                                                                       start);
  } else {
    const int blocks = static_cast<int>(nkept < 1 ? 1 : nkept < 65535 ? nkept : 65535);
    reduce_by_block<T, Op><<<blocks, kBlock, 0, stream>>>(source, buffer, kept, reduced, t, nkept, nreduced, start);
  }
}

}  // namespace

StreamBuffer::StreamBuffer(int64_t bytes, void* stream) : stream_(stream) {
  if (bytes <= 0) return;
  const cudaError_t e = cudaMallocAsync(&data_, static_cast<size_t>(bytes), static_cast<cudaStream_t>(stream));
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(GDAP_ERR_NO_MEMORY, "no device memory for a {}-byte reduction buffer", bytes);
  }
  check_cuda(e, "cudaMallocAsync");
}

StreamBuffer::~StreamBuffer() {
  if (data_ != nullptr) cudaFreeAsync(data_, static_cast<cudaStream_t>(stream_));
}

void reduce_partial_on_device(const DeviceReduction& r, void* buffer, void* stream) {
  std::vector<Axes> axes;
  const Uploaded up({&r.kept, &r.reduced}, axes, stream);
  const auto s = static_cast<cudaStream_t>(stream);
  with_type(r.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* b = static_cast<T*>(buffer);
    fill<T><<<blocks_for(r.count), kBlock, 0, s>>>(b, r.count, identity<T>(r.op));
    switch (r.op) {
      case GDAP_REDUCE_PROD: launch_reduce<T, GDAP_REDUCE_PROD>(r, b, axes, up.tables, s); break;
      case GDAP_REDUCE_MIN: launch_reduce<T, GDAP_REDUCE_MIN>(r, b, axes, up.tables, s); break;
      case GDAP_REDUCE_MAX: launch_reduce<T, GDAP_REDUCE_MAX>(r, b, axes, up.tables, s); break;
      default: launch_reduce<T, GDAP_REDUCE_SUM>(r, b, axes, up.tables, s); break;
    }
  });
  check_cuda(cudaGetLastError(), "the device reduction kernels");
}

void write_result_on_device(const DeviceReduction& r, const void* buffer, void* stream) {
  std::vector<Axes> axes;
  const Uploaded up({&r.out}, axes, stream);
  const auto s = static_cast<cudaStream_t>(stream);
  with_type(r.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* b = static_cast<T*>(const_cast<void*>(buffer));
    if constexpr (std::is_floating_point_v<T>) {
      if (r.mean) divide<T><<<blocks_for(r.count), kBlock, 0, s>>>(b, r.count, r.mean_count);
    }
    const int64_t nout = combinations(axes[0]);
    write_out<T><<<blocks_for(nout), kBlock, 0, s>>>(static_cast<T*>(r.result), b, axes[0], up.tables, nout);
  });
  check_cuda(cudaGetLastError(), "the device reduction kernels");
}

}  // namespace gdap::move
