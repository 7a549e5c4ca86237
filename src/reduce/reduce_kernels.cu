// Kernels of the device reductions (device.hpp). A rank's owned elements form the product of
// per-axis index sets; a combination is decomposed in C order into one index per axis, whose
// offsets and flat contributions add up (affine axes by arithmetic, the others through tables).
// Each kept combination (one buffer element) is reduced over the reduced combinations either by
// a thread (when neighbouring kept elements are neighbours in memory, so a warp's loads are
// coalesced) or by a block (a strided loop per thread, then a shared-memory tree, so a block's
// loads are); when few elements are kept, the reduced combinations are cut into slices reduced
// apart, then combined in slice order. The order depends on the shapes and strides only, so
// results are reproducible. Float sums are carried compensated in double (Accum below), so a
// thread's long serial loop loses no small addends.
#include "reduce/device.hpp"

#include "core/error.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "core/nan_order.hpp"
#include "reduce/compensated_sum.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

namespace gdap::reduce {
namespace {

constexpr int kMaxAxes = 32;
constexpr int kBlock = 256;
constexpr int kUnroll = 4;  // loads a thread issues before combining them

// One axis as the kernels see it: index k has offset offset0 + k * offset_step and flat index
// flat0 + k * flat_step when affine (start < 0), else entries start + k of the tables.
struct Axis {
  int64_t count, start, offset0, offset_step, flat0, flat_step;
};

struct Axes {
  int n = 0;
  Axis axis[kMaxAxes];
};

struct Tables {
  const int64_t* offset;
  const int64_t* flat;
};

__device__ int64_t offset_at(const Axis& x, Tables t, int64_t k) {
  return x.start < 0 ? x.offset0 + k * x.offset_step : t.offset[x.start + k];
}

// c % n, leaving c / n in c; in 32 bits when both fit: a 64-bit division is a long emulated sequence, and
// a copy-like reduction (nothing reduced, every element kept) divides once per axis per element.
__device__ inline int64_t split(int64_t& c, int64_t n) {
  if (((c | n) >> 32) == 0) {
    const auto a = static_cast<uint32_t>(c), b = static_cast<uint32_t>(n), q = a / b;
    c = q;
    return a - q * b;
  }
  const int64_t q = c / n, k = c - q * n;
  c = q;
  return k;
}

// Adds combination c of the first n axes of `a` to offset and flat.
__device__ void locate(const Axes& a, int n, Tables t, int64_t c, int64_t& offset, int64_t& flat) {
  for (int i = n - 1; i >= 0; --i) {
    const Axis& x = a.axis[i];
    const int64_t k = split(c, x.count);
    offset += offset_at(x, t, k);
    flat += x.start < 0 ? x.flat0 + k * x.flat_step : t.flat[x.start + k];
  }
}

__device__ void locate(const Axes& a, Tables t, int64_t c, int64_t& offset, int64_t& flat) { locate(a, a.n, t, c, offset, flat); }

template <typename T, int Op>
__device__ T apply(T a, T b) {
  if constexpr (Op == GDAP_REDUCE_PROD) return static_cast<T>(a * b);
  if constexpr (Op == GDAP_REDUCE_MIN) return nan_min(a, b);  // NaN wins (nan_order.hpp)
  if constexpr (Op == GDAP_REDUCE_MAX) return nan_max(a, b);
  return static_cast<T>(a + b);
}

// What a thread carries while it reduces: the op's running value in T, or for float sums a
// compensated sum in double (compensated_sum.hpp): a float32 running sum loses every addend
// smaller than an ulp of it, and a thread may add millions.
template <typename T, int Op, bool Compensated = Op == GDAP_REDUCE_SUM && std::is_floating_point_v<T>>
struct Accum {
  T value;
  __device__ static Accum from(T start) { return Accum{start}; }
  __device__ void add(T v) { value = apply<T, Op>(value, v); }
  __device__ void merge(const Accum& other) { add(other.value); }
  __device__ T result() const { return value; }
};

template <typename T, int Op>
struct Accum<T, Op, true> {
  CompensatedSum sum;
  __device__ static Accum from(T start) {
    Accum a;
    a.sum.add(static_cast<double>(start));
    return a;
  }
  __device__ void add(T v) { sum.add(static_cast<double>(v)); }
  __device__ void merge(const Accum& other) { sum.merge(other.sum); }
  __device__ T result() const { return static_cast<T>(sum.value()); }
};

template <typename T>
__global__ void fill(T* buffer, int64_t count, T value) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < count; k += int64_t{gridDim.x} * blockDim.x) {
    buffer[k] = value;
  }
}

// A walk over the reduced combinations from q with a fixed step: q splits into an outer part
// (every reduced axis but the last) and k, the index on the last axis, which advances by
// addition, and so does the offset when that axis is affine; the outer offset is looked up again
// only when k wraps. A few additions and a compare per element instead of a division per axis.
struct Walk {
  const Axes& reduced;
  Tables t;
  int64_t o, k, base, outer = 0, pos = 0, step, dpos;
  bool affine;
  __device__ Walk(const Axes& r, Tables tables, int64_t kept_base, int64_t q, int64_t stride)
      : reduced(r), t(tables), base(kept_base), step(stride) {
    const Axis& x = inner();
    o = q / x.count;
    k = q % x.count;
    affine = x.start < 0;
    dpos = affine ? step * x.offset_step : 0;
    relocate();
  }
  __device__ const Axis& inner() const { return reduced.axis[reduced.n - 1]; }
  __device__ void relocate() {
    int64_t unused = 0;
    outer = base;
    locate(reduced, reduced.n - 1, t, o, outer, unused);
    pos = outer + offset_at(inner(), t, k);
  }
  __device__ int64_t offset() const { return pos; }
  __device__ void advance() {
    k += step;
    if (k >= inner().count) {
      o += k / inner().count;
      k %= inner().count;
      relocate();
    } else {
      pos = affine ? pos + dpos : outer + t.offset[inner().start + k];
    }
  }
};

// Reduces the reduced combinations [q0, q1) of the kept one at `base` into acc, stepping by `step` from
// q0 + first: kUnroll loads at a time, combined in order.
template <typename T, int Op>
__device__ Accum<T, Op> reduce_range(const T* source, const Axes& reduced, Tables t, int64_t base, int64_t q0, int64_t q1,
                                     int64_t first, int64_t step, Accum<T, Op> acc) {
  int64_t q = q0 + first;
  if (q >= q1) return acc;
  if (reduced.n == 0) {  // one combination: the kept element itself
    acc.add(source[base]);
    return acc;
  }
  Walk w(reduced, t, base, q, step);
  for (; q + (kUnroll - 1) * step < q1; q += kUnroll * step) {
    T v[kUnroll];
    for (int u = 0; u < kUnroll; ++u) {
      v[u] = source[w.offset()];
      w.advance();
    }
    for (int u = 0; u < kUnroll; ++u) acc.add(v[u]);
  }
  for (; q < q1; q += step) {
    acc.add(source[w.offset()]);
    w.advance();
  }
  return acc;
}

// What both modes share: the kept combinations, the reduced ones, and where results go. With one
// slice a kept combination's result goes to buffer[flat]; with more, slice s's goes to
// partial[s * nkept + c] and combine_slices finishes.
struct Job {
  Axes kept, reduced;
  Tables t;
  int64_t nkept, nreduced, slices;
  __device__ int64_t q0(int64_t s) const {  // slice s's first reduced combination
    if (slices == 1) return s == 0 ? 0 : nreduced;
    int64_t q = nreduced * s;
    split(q, slices);
    return q;
  }
};

template <typename T, int Op>
__global__ void reduce_by_thread(const T* source, T* buffer, Accum<T, Op>* partial, Job j, T start) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < j.nkept * j.slices; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t s = i;
    const int64_t c = split(s, j.nkept);  // neighbouring threads: neighbouring kept elements
    int64_t base = 0, flat = 0;
    locate(j.kept, j.t, c, base, flat);
    const Accum<T, Op> acc = reduce_range<T, Op>(source, j.reduced, j.t, base, j.q0(s), j.q0(s + 1), 0, 1,
                                                 Accum<T, Op>::from(start));
    if (j.slices == 1) {
      buffer[flat] = acc.result();
    } else {
      partial[s * j.nkept + c] = acc;
    }
  }
}

template <typename T, int Op>
__global__ void reduce_by_block(const T* source, T* buffer, Accum<T, Op>* partial, Job j, T start) {
  using A = Accum<T, Op>;
  __shared__ alignas(A) unsigned char storage[kBlock * sizeof(A)];  // raw: a __shared__ array takes no initialiser
  A* part = reinterpret_cast<A*>(storage);
  for (int64_t b = blockIdx.x; b < j.nkept * j.slices; b += gridDim.x) {
    const int64_t c = b / j.slices, s = b % j.slices;
    int64_t base = 0, flat = 0;
    locate(j.kept, j.t, c, base, flat);
    part[threadIdx.x] = reduce_range<T, Op>(source, j.reduced, j.t, base, j.q0(s), j.q0(s + 1), threadIdx.x, kBlock,
                                            A::from(start));
    __syncthreads();
    for (int h = kBlock / 2; h > 0; h /= 2) {
      if (threadIdx.x < h) part[threadIdx.x].merge(part[threadIdx.x + h]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (j.slices == 1) {
        buffer[flat] = part[0].result();
      } else {
        partial[s * j.nkept + c] = part[0];
      }
    }
    __syncthreads();
  }
}

// The second pass when the reduced combinations were sliced: one thread per kept combination
// combines its slices' results in slice order.
template <typename T, int Op>
__global__ void combine_slices(const Accum<T, Op>* partial, T* buffer, Job j, T start) {
  for (int64_t c = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; c < j.nkept; c += int64_t{gridDim.x} * blockDim.x) {
    int64_t unused = 0, flat = 0;
    locate(j.kept, j.t, c, unused, flat);
    Accum<T, Op> acc = Accum<T, Op>::from(start);
    for (int64_t s = 0; s < j.slices; ++s) acc.merge(partial[s * j.nkept + c]);
    buffer[flat] = acc.result();
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
  cuda::StreamBuffer buffer;
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
        a.axis[i] = Axis{table.count, table.affine ? -1 : static_cast<int64_t>(offset.size()), table.offset0,
                         table.offset_step, table.flat0, table.flat_step};
        offset.insert(offset.end(), table.offset.begin(), table.offset.end());
        flat.insert(flat.end(), table.flat.begin(), table.flat.end());
      }
      axes.push_back(a);
    }
    auto* d = static_cast<int64_t*>(buffer.data());
    const auto cuda_stream = static_cast<cudaStream_t>(stream);
    if (!offset.empty()) {
      // From pageable memory: the call returns once the bytes are staged, so the vectors may go.
      cuda::check_cuda(cudaMemcpyAsync(d, offset.data(), offset.size() * 8, cudaMemcpyHostToDevice, cuda_stream), "cudaMemcpyAsync");
      cuda::check_cuda(cudaMemcpyAsync(d + offset.size(), flat.data(), flat.size() * 8, cudaMemcpyHostToDevice, cuda_stream),
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
  for (int i = 0; i < a.n; ++i) n *= a.axis[i].count;
  return n;
}

// A thread per kept element when the reduced combinations are few, or when the last kept axis
// is closer in memory than the last reduced one (a warp then reads neighbouring elements); a
// block per kept element otherwise.
bool by_thread(const DeviceReduction& r, int64_t nkept, int64_t nreduced) {
  constexpr int64_t kFewReduced = 64;
  if (nreduced <= kFewReduced) return true;
  if (r.kept.empty() || nkept < 32) return false;
  return std::llabs(r.kept.back().stride) < std::llabs(r.reduced.back().stride);
}

// How many slices the reduced combinations of each kept one are cut into: enough threads or
// blocks to fill any GPU when few elements are kept, none of fewer than `least` combinations, and
// at most kMaxSlices (the second pass reads a kept element's slices one after another).
// It depends on the shapes only, so a reduction's order (and its rounding) is the same on every run.
int64_t slices_for(int64_t nkept, int64_t nreduced, int64_t target, int64_t least) {
  constexpr int64_t kMaxSlices = 1024;
  if (nkept >= target) return 1;
  const int64_t wanted = (target + nkept - 1) / nkept, most = (nreduced + least - 1) / least;
  return std::max<int64_t>(1, std::min({wanted, most, kMaxSlices}));
}

template <typename T, int Op>
void launch_reduce(const DeviceReduction& r, T* buffer, const std::vector<Axes>& axes, Tables t, cudaStream_t stream) {
  Job j{axes[0], axes[1], t, combinations(axes[0]), combinations(axes[1]), 1};
  const T* source = static_cast<const T*>(r.source);
  const T start = identity<T>(r.op);
  const bool threads = by_thread(r, j.nkept, j.nreduced);
  j.slices = threads ? slices_for(j.nkept, j.nreduced, 2048 * int64_t{kBlock}, 1024) : slices_for(j.nkept, j.nreduced, 2048, 8192);
  const int64_t work = j.nkept * j.slices;
  const cuda::StreamBuffer partial(j.slices > 1 ? work * int64_t{sizeof(Accum<T, Op>)} : 0, stream);
  auto* p = static_cast<Accum<T, Op>*>(partial.data());
  if (threads) {
    reduce_by_thread<T, Op><<<blocks_for(work), kBlock, 0, stream>>>(source, buffer, p, j, start);
  } else {
    reduce_by_block<T, Op><<<static_cast<int>(std::min<int64_t>(work, 65535)), kBlock, 0, stream>>>(source, buffer, p, j, start);
  }
  if (j.slices > 1) combine_slices<T, Op><<<blocks_for(j.nkept), kBlock, 0, stream>>>(p, buffer, j, start);
}

}  // namespace

void reduce_partial_on_device(const DeviceReduction& r, void* buffer, void* stream) {
  std::vector<Axes> axes;
  const Uploaded up({&r.kept, &r.reduced}, axes, stream);
  const auto s = static_cast<cudaStream_t>(stream);
  with_type(r.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* b = static_cast<T*>(buffer);
    // Each kept combination stores its own slot: when they fill the buffer (a replicated source
    // without slack), no slot needs the identity first.
    if (combinations(axes[0]) != r.count) fill<T><<<blocks_for(r.count), kBlock, 0, s>>>(b, r.count, identity<T>(r.op));
    switch (r.op) {
      case GDAP_REDUCE_PROD: launch_reduce<T, GDAP_REDUCE_PROD>(r, b, axes, up.tables, s); break;
      case GDAP_REDUCE_MIN: launch_reduce<T, GDAP_REDUCE_MIN>(r, b, axes, up.tables, s); break;
      case GDAP_REDUCE_MAX: launch_reduce<T, GDAP_REDUCE_MAX>(r, b, axes, up.tables, s); break;
      default: launch_reduce<T, GDAP_REDUCE_SUM>(r, b, axes, up.tables, s); break;
    }
  });
  cuda::check_cuda(cudaGetLastError(), "the device reduction kernels");
}

void write_result_on_device(const DeviceReduction& r, const void* reduced, void* stream) {
  std::vector<Axes> axes;
  const Uploaded up({&r.out}, axes, stream);
  const auto s = static_cast<cudaStream_t>(stream);
  with_type(r.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* b = static_cast<T*>(const_cast<void*>(reduced));
    if constexpr (std::is_floating_point_v<T>) {
      const int64_t n = r.segment > 0 ? r.segment : r.count;
      if (r.mean) divide<T><<<blocks_for(n), kBlock, 0, s>>>(b, n, r.mean_count);
    }
    const int64_t nout = combinations(axes[0]);
    write_out<T><<<blocks_for(nout), kBlock, 0, s>>>(static_cast<T*>(r.result), b, axes[0], up.tables, nout);
  });
  cuda::check_cuda(cudaGetLastError(), "the device reduction kernels");
}

}  // namespace gdap::reduce
