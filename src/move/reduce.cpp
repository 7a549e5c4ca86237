// gdap_reduce_scatter and gdap_reduce_axes: reductions of distributed arrays whose results have a
// distribution of their own. Both run the same three steps (on host memory here; on device
// memory over NCCL with reduce_nccl.cpp and reduce_kernels.cu): each rank reduces the
// owned elements of its source section into a buffer indexed by the result's global index (the
// op's identity where it holds nothing), the ranks all-reduce that buffer (the group's rendezvous
// or MPI_Allreduce, as gdap_allreduce), and each rank copies out the elements its result section
// owns. Ownership comes from the two distributions gathered over the communicator, so padding is
// never read or written, and gdap_reduce_axes reads a replicated element on its lowest holder only.
#include "array/array.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "maps/map.hpp"
#include "move/allreduce.hpp"
#include "move/axis_side.hpp"
#include "move/redistribute.hpp"
#include "move/reduce.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace gdap::move {
namespace {

struct MapDeleter {
  void operator()(gdap_map* map) const { gdap_map_destroy(map); }
};
using MapPtr = std::unique_ptr<gdap_map, MapDeleter>;

// The distribution of `a` on every rank, gathered and checked as gdap_map_create_collective does
// (the same verdict on every rank: each builds it from the same gathered dictionaries).
MapPtr gather_map(gdap_comm& comm, const gdap_array& a, const char* which) {
  gdap_map* out = nullptr;
  const gdap_status s = gdap_map_create_collective(&out, &comm, a.ndim(), a.ndim() > 0 ? &a.dims[0] : nullptr);
  if (s != GDAP_SUCCESS) fail(s, "{}'s distribution: {}", which, gdap_last_error());
  return MapPtr(out);
}

// The indices one rank owns along one axis, as runs in increasing global order.
struct Owned {
  struct Run {
    int64_t global, length, local;
  };
  std::vector<Run> runs;
  int64_t count = 0;
  // Per owned index, its local (global = false) or global index.
  std::vector<int64_t> each(bool global) const {
    std::vector<int64_t> out;
    out.reserve(static_cast<size_t>(count));
    for (const Run& r : runs) {
      for (int64_t k = 0; k < r.length; ++k) out.push_back((global ? r.global : r.local) + k);
    }
    return out;
  }
};

// `primary_only`: for unstructured replicas, only where this rank's coordinate is the lowest holder.
Owned owned_along(const gdap_map& map, int64_t axis, int64_t rank, bool primary_only) {
  const AxisSide side(map.axes[static_cast<size_t>(axis)], primary_only);
  Owned o;
  side.for_each_run(map.coord(rank, axis), [&](int64_t global, int64_t length, int64_t local) {
    if (length <= 0) return;
    o.count += length;
    if (!o.runs.empty()) {  // 'c' gives a run per block: merge those that continue one another
      Owned::Run& last = o.runs.back();
      if (last.global + last.length == global && last.local + last.length == local) {
        last.length += length;
        return;
      }
    }
    o.runs.push_back({global, length, local});
  });
  return o;
}

// Calls f(element offset, flat index) for every element of the product of the axes' owned
// indices, where the offset is sum(local * stride) and the flat index sum(global * weight).
template <typename F>
void for_each_owned(const std::vector<Owned>& owned, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& weights, F&& f) {
  const size_t n = owned.size();
  std::vector<std::vector<int64_t>> local, global;
  for (const Owned& a : owned) {
    if (a.count == 0) return;
    local.push_back(a.each(false));
    global.push_back(a.each(true));
  }
  std::vector<size_t> at(n, 0);
  for (;;) {
    int64_t offset = 0, flat = 0;
    for (size_t i = 0; i < n; ++i) {
      offset += local[i][at[i]] * strides[i];
      flat += global[i][at[i]] * weights[i];
    }
    f(offset, flat);
    size_t i = n;
    while (i > 0 && at[i - 1] + 1 == local[i - 1].size()) at[--i] = 0;
    if (i == 0) return;
    ++at[i - 1];
  }
}

template <typename T>
T apply(gdap_reduce_op op, T a, T b) {
  switch (op) {
    case GDAP_REDUCE_PROD: return static_cast<T>(a * b);
    case GDAP_REDUCE_MIN: return std::min(a, b);
    case GDAP_REDUCE_MAX: return std::max(a, b);
    default: return static_cast<T>(a + b);
  }
}

// C-order weights of a shape (the flat index of a global index).
std::vector<int64_t> c_weights(const std::vector<int64_t>& shape) {
  std::vector<int64_t> w(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) w[i - 1] = w[i] * shape[i];
  return w;
}

int64_t product(const std::vector<int64_t>& shape, const char* what) {
  int64_t n = 1;
  for (int64_t e : shape) n = checked_mul(n, e, what);
  return n;
}

// One reduction, after every check passed on every rank.
struct Reduction {
  gdap_comm& comm;
  gdap_reduce_op op;               // mean: summed here, divided by `mean_count`
  const gdap_array& source;
  std::vector<Owned> from;         // per source axis, what this rank reads
  std::vector<int64_t> from_weights;  // per source axis, its weight in the flat result index (0: reduced)
  gdap_array& result;
  const gdap_map* result_map;      // NULL for a 0-d result
  std::vector<int64_t> shape;      // the result's global shape
  double mean_count = 1;

  void run() const {
    const gdap_dtype t = source.section.dtype;
    const int64_t es = t.bits / 8;
    const int64_t count = product(shape, "elements of the result");
    const gdap_reduce_op engine_op = op == GDAP_REDUCE_MEAN ? GDAP_REDUCE_SUM : op;
    if (comm.kind() == GDAP_COMM_NCCL) return reduce_nccl(comm, on_device(engine_op, count));
    HostBuffer buffer;
    // Agreed: a rank that cannot allocate the buffer stops every rank, rather than leave them waiting.
    agree(comm, [&] {
      buffer = std::make_shared<std::vector<char>>(
          static_cast<size_t>(checked_mul(count, es, "bytes of the reduction buffer")));
      with_type(t, [&](auto zero) {
        using T = decltype(zero);
        auto* partial = reinterpret_cast<T*>(buffer->data());
        std::fill(partial, partial + count, identity<T>(engine_op));
        const char* base = static_cast<const char*>(source.data());
        for_each_owned(from, source.section.strides, from_weights, [&](int64_t offset, int64_t flat) {
          T v;
          std::memcpy(&v, base + offset * es, sizeof v);
          partial[flat] = apply(engine_op, partial[flat], v);
        });
      });
    });
    allreduce_buffer(comm, t, engine_op, buffer);
    if (op == GDAP_REDUCE_MEAN) {
      with_type(t, [&](auto zero) {
        using T = decltype(zero);
        auto* partial = reinterpret_cast<T*>(buffer->data());
        if constexpr (std::is_floating_point_v<T>) {  // mean is refused for integer dtypes
          for (int64_t k = 0; k < count; ++k) partial[k] = static_cast<T>(partial[k] / mean_count);
        }
      });
    }
    write(*buffer, es);
  }

  // The same reduction as tables for the device kernels (a weight of 0 marks a reduced axis; with
  // count > 0 no kept axis has one).
  DeviceReduction on_device(gdap_reduce_op engine_op, int64_t count) const {
    DeviceReduction d;
    d.dtype = source.section.dtype;
    d.op = engine_op;
    d.mean = op == GDAP_REDUCE_MEAN;
    d.mean_count = mean_count;
    d.source = source.data();
    d.result = result.data();
    d.count = count;
    for (size_t i = 0; i < from.size(); ++i) {
      (from_weights[i] == 0 ? d.reduced : d.kept).push_back(table(from[i], source.section.strides[i], from_weights[i]));
    }
    for (const Owned& o : owned_result()) {
      const size_t j = d.out.size();
      d.out.push_back(table(o, result.section.strides[j], c_weights(shape)[j]));
    }
    return d;
  }

  static AxisTable table(const Owned& o, int64_t stride, int64_t weight) {
    AxisTable t;
    t.count = o.count;
    t.stride = stride;
    if (o.runs.size() <= 1) {
      t.affine = true;
      if (!o.runs.empty()) {
        t.offset0 = o.runs[0].local * stride;
        t.flat0 = o.runs[0].global * weight;
      }
      t.offset_step = stride;
      t.flat_step = weight;
      return t;
    }
    for (const Owned::Run& r : o.runs) {
      for (int64_t k = 0; k < r.length; ++k) {
        t.offset.push_back((r.local + k) * stride);
        t.flat.push_back((r.global + k) * weight);
      }
    }
    return t;
  }

  // Per result axis, what this rank's result section owns (none for a 0-d result).
  std::vector<Owned> owned_result() const {
    std::vector<Owned> to;
    if (result_map == nullptr) return to;
    for (int64_t j = 0; j < result.ndim(); ++j) to.push_back(owned_along(*result_map, j, comm.rank, false));
    return to;
  }

  void write(const std::vector<char>& buffer, int64_t es) const {
    char* base = static_cast<char*>(result.data());
    if (result_map == nullptr) {  // 0-d: the one element on every rank
      std::memcpy(base, buffer.data(), static_cast<size_t>(es));
      return;
    }
    for_each_owned(owned_result(), result.section.strides, c_weights(shape), [&](int64_t offset, int64_t flat) {
      std::memcpy(base + offset * es, buffer.data() + flat * es, static_cast<size_t>(es));
    });
  }
};

bool same_dtype(gdap_dtype a, gdap_dtype b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

// This rank's checks shared by both calls: the arrays, their dtypes and memory, the communicator.
void check_pair(gdap_comm& comm, const gdap_array* source, const gdap_array* result, const char* function) {
  require(source, "source");
  require(result, "result");
  check_reducible(source->section.dtype, "source");
  const gdap_dtype s = source->section.dtype, r = result->section.dtype;
  if (!same_dtype(s, r)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "result's dtype (code {}, {} bits, {} lanes) differs from source's (code {}, {} "
         "bits, {} lanes)", r.code, r.bits, r.lanes, s.code, s.bits, s.lanes);
  }
  if (result->readonly) fail(GDAP_ERR_INVALID_ARGUMENT, "result is read-only");
  if (comm.kind() == GDAP_COMM_NCCL) return check_nccl_sections(comm, source, result);
  for (const auto& [which, a] : {std::pair{"source", source}, std::pair{"result", result}}) {
    const Memory m = memory_of(a);
    if (m == Memory::device) {
      fail(GDAP_ERR_UNSUPPORTED, "{} is in CUDA device memory: on an in-process group or MPI communicator {} reduces "
           "host-accessible sections (host, pinned or managed memory); device sections reduce over NCCL", which, function);
    }
    if (m == Memory::none) fail(GDAP_ERR_UNSUPPORTED, "{} lives on device type {}, which gdap cannot reduce", which, a->section.device.type);
  }
}

void check_op(const OpArg& op) {
  if (op_name(op.op) == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "op {} is not a gdap_reduce_op", op.value);
}

// After every rank's own checks passed: every rank must have passed the same `what` (the same text).
void agree_same(gdap_comm& comm, const std::string& mine, const char* what) {
  const std::vector<std::string> all = comm.allgather(mine);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "rank {} passed {} but rank 0 passed {}: every rank must pass the same {}", r,
           all[r], all[0], what);
    }
  }
}

// Every axis's reduced flag from the caller's list (NULL: all), checked.
std::vector<bool> reduced_axes(const int64_t* axes, int64_t naxes, int64_t ndim) {
  std::vector<bool> reduced(static_cast<size_t>(ndim), axes == nullptr);
  if (axes == nullptr) {
    if (naxes != 0) fail(GDAP_ERR_INVALID_ARGUMENT, "axes is NULL but naxes is {} (NULL with naxes 0 reduces every axis)", naxes);
    return reduced;
  }
  if (naxes < 0 || naxes > ndim) fail(GDAP_ERR_INVALID_ARGUMENT, "naxes {} is not in [0, {}] (source's ndim)", naxes, ndim);
  for (int64_t k = 0; k < naxes; ++k) {
    const int64_t a = axes[k];
    if (a < -ndim || a >= ndim) {
      fail(GDAP_ERR_OUT_OF_RANGE, "axes[{}] = {} is not an axis of the {}-d source (valid: -{} to {})", k, a, ndim,
           ndim, ndim - 1);
    }
    const auto n = static_cast<size_t>(a < 0 ? a + ndim : a);
    if (reduced[n]) fail(GDAP_ERR_INVALID_ARGUMENT, "axes[{}] = {} repeats axis {}", k, a, n);
    reduced[n] = true;
  }
  return reduced;
}

std::string axes_text(const std::vector<bool>& reduced) {
  std::vector<size_t> list;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i]) list.push_back(i);
  }
  return fmt::format("({})", fmt::join(list, ", "));
}

// The number of global indices some rank holds along one axis.
int64_t held(const gdap_map& map, int64_t axis) {
  const AxisMap& a = map.axes[static_cast<size_t>(axis)];
  if (a.dist_type() != GDAP_DIST_UNSTRUCTURED) return a.size();
  return static_cast<int64_t>(AxisSide(a, true).distinct().size());
}

void reduce_scatter(gdap_comm& comm, const gdap_array* source, gdap_array* result, const OpArg& arg) {
  const gdap_reduce_op op = arg.op;
  agree(comm, [&] {
    check_op(arg);
    if (op == GDAP_REDUCE_MEAN) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "op mean is not an element-wise reduce-scatter: sum, prod, min and max are "
           "(gdap_reduce_axes takes mean)");
    }
    check_pair(comm, source, result, "gdap_reduce_scatter");
    if (result->ndim() != source->ndim()) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "result has {} dimensions but source has {}: a reduce-scatter keeps the global "
           "shape", result->ndim(), source->ndim());
    }
    for (int64_t i = 0; i < source->ndim(); ++i) {
      if (result->dims[i].size != source->dims[i].size) {
        fail(GDAP_ERR_INVALID_ARGUMENT, "result dimension {} has size {} but source dimension {} has size {}", i,
             result->dims[i].size, i, source->dims[i].size);
      }
    }
  });
  agree_same(comm, fmt::format("op {} on a {}-d source", op_name(op), source->ndim()), "op");
  const MapPtr from = gather_map(comm, *source, "source");
  const MapPtr to = gather_map(comm, *result, "result");
  Reduction r{comm, op, *source, {}, c_weights(from->global_shape), *result, to.get(), from->global_shape};
  for (int64_t i = 0; i < source->ndim(); ++i) r.from.push_back(owned_along(*from, i, comm.rank, false));
  r.run();
}

void reduce_axes(gdap_comm& comm, const gdap_array* source, gdap_array* result, const OpArg& arg,
                 const int64_t* axes, int64_t naxes) {
  const gdap_reduce_op op = arg.op;
  std::vector<bool> reduced;
  agree(comm, [&] {
    check_op(arg);
    check_pair(comm, source, result, "gdap_reduce_axes");
    const gdap_dtype t = source->section.dtype;
    if (op == GDAP_REDUCE_MEAN && t.code != GDAP_DTYPE_FLOAT) {
      fail(GDAP_ERR_UNSUPPORTED, "op mean needs a float32 or float64 source; source's dtype is (code {}, {} bits): "
           "sum it and divide, or convert it first", t.code, t.bits);
    }
    reduced = reduced_axes(axes, naxes, source->ndim());
    int64_t j = 0;
    for (int64_t i = 0; i < source->ndim(); ++i) {
      if (reduced[static_cast<size_t>(i)]) continue;
      if (j < result->ndim() && result->dims[j].size != source->dims[i].size) {
        fail(GDAP_ERR_INVALID_ARGUMENT, "result dimension {} has size {} but the source dimension it keeps ({}) has "
             "size {}", j, result->dims[j].size, i, source->dims[i].size);
      }
      ++j;
    }
    if (result->ndim() != j) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "result has {} dimensions but reducing the {}-d source over axes {} leaves {}",
           result->ndim(), source->ndim(), axes_text(reduced), j);
    }
  });
  agree_same(comm, fmt::format("op {} over axes {} of a {}-d source", op_name(op), axes_text(reduced), source->ndim()),
             "op and axes");
  const MapPtr from = gather_map(comm, *source, "source");
  const MapPtr to = result->ndim() > 0 ? gather_map(comm, *result, "result") : nullptr;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < source->ndim(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) shape.push_back(from->global_shape[static_cast<size_t>(i)]);
  }
  Reduction r{comm, op, *source, {}, {}, *result, to.get(), shape};
  const std::vector<int64_t> weights = c_weights(shape);
  double count = 1;
  for (int64_t i = 0, j = 0; i < source->ndim(); ++i) {
    r.from.push_back(owned_along(*from, i, comm.rank, true));
    const bool gone = reduced[static_cast<size_t>(i)];
    r.from_weights.push_back(gone ? 0 : weights[static_cast<size_t>(j++)]);
    if (gone) count *= static_cast<double>(held(*from, i));
  }
  r.mean_count = count;
  r.run();
}

}  // namespace
}  // namespace gdap::move

extern "C" GDAP_API gdap_status gdap_reduce_scatter(gdap_comm* comm, const gdap_array* source, gdap_array* result,
                                                    gdap_reduce_op op) {
  return gdap::guard([&] { gdap::move::reduce_scatter(gdap::comm_ref(comm), source, result, gdap::move::op_arg(op)); });
}

extern "C" GDAP_API gdap_status gdap_reduce_axes(gdap_comm* comm, const gdap_array* source, gdap_array* result,
                                                 gdap_reduce_op op, const int64_t* axes, int64_t naxes) {
  return gdap::guard([&] { gdap::move::reduce_axes(gdap::comm_ref(comm), source, result, gdap::move::op_arg(op), axes, naxes); });
}

#ifndef GDAP_HAVE_NCCL
void gdap::move::check_nccl_sections(gdap_comm&, const gdap_array*, const gdap_array*) {
  fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL");
}
void gdap::move::reduce_nccl(gdap_comm&, const DeviceReduction&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); }
#endif
