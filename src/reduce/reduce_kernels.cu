// Kernels of the device reductions (device.hpp). A rank's owned elements form the product of
// per-axis index sets; a combination is decomposed in C order into one index per axis, whose
// offsets and flat contributions add up (affine axes by arithmetic, the others through tables).
// Each kept combination (one buffer element) is reduced over the reduced combinations either by
// a thread (when neighbouring kept elements are neighbours in memory, so a warp's loads are
// coalesced) or by a block (a strided loop per thread, then a shared-memory tree, so a block's
// loads are); when the reduced combinations of each kept one are one contiguous run in memory
// (a whole C-order section, its rows), the block reads them 16 bytes at a time instead of
// walking the axes. When few elements are kept, the reduced combinations are cut into slices
// reduced apart, then combined in slice order. The order depends on the shapes and strides only
// (never on the addresses), so results are reproducible. Float sums are carried in double (Accum
// below), so a thread's long serial loop loses no small addends.
#include "reduce/device.hpp"

#include "core/error.hpp"
#include "cuda/buffer.hpp"
#include "cuda/device.hpp"
#include "core/nan_order.hpp"
#include "reduce/compensated_sum.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
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

// A float32 sum carried in a plain double: each element converted exactly and added, one rounding
// of 2^-53 per addition. A thread adds at most kMostSerial elements (slices_for), so with the
// block's tree and the slices' second pass the error stays below about 2^-33 times the sum of the
// magnitudes: far under a float32 ulp of the result unless the sum cancels by 2^9 or more
// (docs/api.md, "Accuracy of float sums"). Half the work and registers of the compensated sum.
struct WideSum {
  double sum = 0;
  __device__ void add(double x) { sum += x; }
  __device__ void merge(const WideSum& other) { sum += other.sum; }
  __device__ double value() const { return sum; }
};

// float64 keeps the compensated sum (compensated_sum.hpp): a double running sum drops every 1.0
// added to 1e16.
template <typename T>
using FloatSum = std::conditional_t<std::is_same_v<T, float>, WideSum, CompensatedSum>;

// What a thread carries while it reduces: the op's running value in T, or for float sums a
// double (FloatSum): a float32 running sum loses every addend smaller than an ulp of it, and a
// thread may add a million.
template <typename T, int Op, bool Wide = Op == GDAP_REDUCE_SUM && std::is_floating_point_v<T>>
struct Accum {
  T value;
  __device__ static Accum from(T start) { return Accum{start}; }
  __device__ void add(T v) { value = apply<T, Op>(value, v); }
  __device__ void merge(const Accum& other) { add(other.value); }
  __device__ T result() const { return value; }
};

template <typename T, int Op>
struct Accum<T, Op, true> {
  FloatSum<T> sum;
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

// A group of elements that one 16-byte load brings.
template <typename T>
constexpr int kGroup = 16 / static_cast<int>(sizeof(T));

template <typename T>
struct alignas(16) Group {
  T v[kGroup<T>];
};

// The group at p: one 16-byte load when p is 16-byte aligned, else element by element (the same
// values, so the sum's order and bits do not depend on the address).
template <typename T>
__device__ Group<T> load_group(const T* p, bool aligned) {
  Group<T> g;
  if (aligned) {
    const uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
    memcpy(&g, &u, sizeof g);
  } else {
    for (int i = 0; i < kGroup<T>; ++i) g.v[i] = p[i];
  }
  return g;
}

// Reduces elements [a, b) of a contiguous run into acc, a being a multiple of the group size:
// this thread takes the groups at a + threadIdx.x groups, then every kBlock groups, kUnroll at
// a time, each added in index order; then the elements past the last whole group, one per thread.
template <typename T, int Op>
__device__ Accum<T, Op> reduce_run(const T* run, int64_t a, int64_t b, Accum<T, Op> acc) {
  constexpr int W = kGroup<T>;
  const bool aligned = reinterpret_cast<uintptr_t>(run) % 16 == 0;
  const int64_t whole = a + (b - a) / W * W, step = int64_t{kBlock} * W;
  int64_t g = a + threadIdx.x * int64_t{W};
  for (; g + (kUnroll - 1) * step < whole; g += kUnroll * step) {
    Group<T> v[kUnroll];
    for (int u = 0; u < kUnroll; ++u) v[u] = load_group(run + g + u * step, aligned);
    for (int u = 0; u < kUnroll; ++u) {
      for (int i = 0; i < W; ++i) acc.add(v[u].v[i]);
    }
  }
  for (; g < whole; g += step) {
    const Group<T> v = load_group(run + g, aligned);
    for (int i = 0; i < W; ++i) acc.add(v.v[i]);
  }
  for (int64_t i = whole + threadIdx.x; i < b; i += kBlock) acc.add(run[i]);
  return acc;
}

// What both modes share: the kept combinations, the reduced ones, and where results go. With one
// slice a kept combination's result goes to buffer[flat]; with more, slice s's goes to
// partial[s * nkept + c] and combine_slices finishes. When `run`, each kept combination's reduced
// ones are the contiguous elements from its offset + run0, and slices start at multiples of
// `grain` (a group) so that a slice's groups are aligned wherever the run is.
struct Job {
  Axes kept, reduced;
  Tables t;
  int64_t nkept, nreduced, slices;
  bool run = false;
  int64_t run0 = 0, grain = 1;
  __device__ int64_t q0(int64_t s) const {  // slice s's first reduced combination
    if (s >= slices) return nreduced;
    int64_t q = nreduced * s;
    split(q, slices);
    return q - q % grain;
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

// The block's shared slots, one per thread.
template <typename A>
__device__ A* block_slots() {
  __shared__ alignas(A) unsigned char storage[kBlock * sizeof(A)];  // raw: a __shared__ array takes no initialiser
  return reinterpret_cast<A*>(storage);
}

// The block's threads' values combined by a tree (the same pairs on every run) into part[0].
template <typename A>
__device__ void combine_in_block(A* part) {
  __syncthreads();
  for (int h = kBlock / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) part[threadIdx.x].merge(part[threadIdx.x + h]);
    __syncthreads();
  }
}

template <typename T, int Op, bool Run>
__global__ void reduce_by_block(const T* source, T* buffer, Accum<T, Op>* partial, Job j, T start) {
  using A = Accum<T, Op>;
  A* part = block_slots<A>();
  for (int64_t b = blockIdx.x; b < j.nkept * j.slices; b += gridDim.x) {
    const int64_t c = b / j.slices, s = b % j.slices;
    int64_t base = 0, flat = 0;
    locate(j.kept, j.t, c, base, flat);
    if constexpr (Run) {
      part[threadIdx.x] = reduce_run<T, Op>(source + base + j.run0, j.q0(s), j.q0(s + 1), A::from(start));
    } else {
      part[threadIdx.x] = reduce_range<T, Op>(source, j.reduced, j.t, base, j.q0(s), j.q0(s + 1), threadIdx.x, kBlock,
                                              A::from(start));
    }
    combine_in_block(part);
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

// The same with many slices (few kept combinations): a block per kept combination, each thread
// combining every kBlock-th slice, then the block's tree. One thread reading a thousand slices in
// turn waits on each load.
template <typename T, int Op>
__global__ void combine_slices_by_block(const Accum<T, Op>* partial, T* buffer, Job j, T start) {
  using A = Accum<T, Op>;
  A* part = block_slots<A>();
  for (int64_t c = blockIdx.x; c < j.nkept; c += gridDim.x) {
    int64_t unused = 0, flat = 0;
    locate(j.kept, j.t, c, unused, flat);
    A acc = A::from(start);
    for (int64_t s = threadIdx.x; s < j.slices; s += kBlock) acc.merge(partial[s * j.nkept + c]);
    part[threadIdx.x] = acc;
    combine_in_block(part);
    if (threadIdx.x == 0) buffer[flat] = part[0].result();
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

// The most elements one thread adds in turn: the float32 sums' bound (WideSum) assumes no more.
constexpr int64_t kMostSerial = int64_t{1} << 20;

// How many slices the reduced combinations of each kept one are cut into: enough threads or
// blocks to fill any GPU when few elements are kept (`target` of them), none of fewer than
// `least` combinations, and at most `most` (1024 where the second pass reads a kept element's
// slices one after another), unless a thread (one of `lanes` reading a slice) would then add
// more than kMostSerial elements.
// It depends on the shapes only, so a reduction's order (and its rounding) is the same on every run.
// At least one, so that a kept element with nothing to reduce (a rank holding none of a reduced
// axis) still gets the identity. (nkept > 0: launch_reduce returns before when nothing is kept.)
int64_t slices_for(int64_t nkept, int64_t nreduced, int64_t target, int64_t least, int64_t most, int64_t lanes) {
  const int64_t serial = std::max<int64_t>(1, (nreduced + kMostSerial * lanes - 1) / (kMostSerial * lanes));
  if (nkept >= target) return serial;
  const int64_t wanted = (target + nkept - 1) / nkept, fewest = (nreduced + least - 1) / least;
  return std::max<int64_t>(serial, std::min({wanted, fewest, most}));
}

// Where the reduced combinations start from a kept one's offset, when they are one contiguous run
// in C order (every axis affine, the last of step 1, each other stepping over the axes after it):
// a whole C-order section, or its rows when the last axes are reduced.
std::optional<int64_t> contiguous_run(const std::vector<AxisTable>& reduced) {
  int64_t start = 0, step = 1;
  for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
    if (!it->affine) return std::nullopt;
    start += it->offset0;
    if (it->count == 1) continue;
    if (it->offset_step != step) return std::nullopt;
    step *= it->count;
  }
  if (reduced.empty()) return std::nullopt;
  return start;
}

template <typename T, int Op>
void launch_reduce(const DeviceReduction& r, T* buffer, const std::vector<Axes>& axes, Tables t, cudaStream_t stream) {
  using A = Accum<T, Op>;
  Job j{axes[0], axes[1], t, combinations(axes[0]), combinations(axes[1]), 1};
  // A rank holding none of a kept axis adds nothing: its buffer holds the identity (filled before).
  // Before, slices_for divided by its zero kept elements.
  if (j.nkept == 0) return;
  const T* source = static_cast<const T*>(r.source);
  const T start = identity<T>(r.op);
  const bool threads = by_thread(r, j.nkept, j.nreduced);
  const std::optional<int64_t> run = threads ? std::nullopt : contiguous_run(r.reduced);
  j.run = run.has_value();
  j.run0 = run.value_or(0);
  j.grain = j.run ? kGroup<T> : 1;
  // Runs: blocks of 64 KiB of float32 or more, 4096 of them for a whole-array sum, so that the last
  // wave of blocks on the GPU is a small part of the time (the second pass is then a block's).
  j.slices = threads ? slices_for(j.nkept, j.nreduced, 2048 * int64_t{kBlock}, 1024, 1024, 1)
             : j.run ? slices_for(j.nkept, j.nreduced, 4096, 16384, 4096, kBlock)
                     : slices_for(j.nkept, j.nreduced, 2048, 8192, 1024, kBlock);
  const int64_t work = j.nkept * j.slices;
  const cuda::StreamBuffer partial(j.slices > 1 ? work * int64_t{sizeof(A)} : 0, stream);
  auto* p = static_cast<A*>(partial.data());
  const int grid = static_cast<int>(std::min<int64_t>(work, 65535));
  if (threads) {
    reduce_by_thread<T, Op><<<blocks_for(work), kBlock, 0, stream>>>(source, buffer, p, j, start);
  } else if (j.run) {
    reduce_by_block<T, Op, true><<<grid, kBlock, 0, stream>>>(source, buffer, p, j, start);
  } else {
    reduce_by_block<T, Op, false><<<grid, kBlock, 0, stream>>>(source, buffer, p, j, start);
  }
  constexpr int64_t kManySlices = 64;
  if (j.slices >= kManySlices) {
    combine_slices_by_block<T, Op><<<static_cast<int>(std::min<int64_t>(j.nkept, 65535)), kBlock, 0, stream>>>(p, buffer, j, start);
  } else if (j.slices > 1) {
    combine_slices<T, Op><<<blocks_for(j.nkept), kBlock, 0, stream>>>(p, buffer, j, start);
  }
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
