// gdap_reduce_scatter and gdap_reduce_axes: reductions of distributed arrays whose results have a
// distribution of their own. Both run the same three steps (on host memory here; on device
// memory with device.cpp and reduce_kernels.cu): each rank reduces the owned elements of its
// source section into a buffer laid out by the result's distribution (the op's identity where it
// holds nothing; reduce_buffer.hpp), the ranks reduce that buffer (all-reduce of the whole result,
// or reduce-scatter of one segment per owner: the communicator's engine), and each rank copies out
// the elements its result section owns. Ownership comes from the
// two distributions gathered over the communicator, so padding is never read or written, and
// gdap_reduce_axes reads a replicated element on its lowest holder only.
#include "reduce/device.hpp"

#include "array/array.hpp"
#include "array/layout.hpp"
#include "array/memory.hpp"
#include "comm/map_gather.hpp"
#include "core/checked.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "exchange/engine.hpp"
#include "maps/axis_side.hpp"
#include "maps/map.hpp"
#include "core/nan_order.hpp"
#include "reduce/compensated_sum.hpp"
#include "reduce/reduction.hpp"
#include "reduce/reduce_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace gdap::reduce {
namespace {

// The elements of the product of the axes' owned indices, as rows along the last axis: per axis,
// each owned index's offset (local * stride) and term of the buffer index (none: 0). A 0-d
// section is one row of one element.
struct OwnedRows {
  std::vector<std::vector<int64_t>> offset, term;

  OwnedRows(const std::vector<Owned>& owned, const std::vector<int64_t>& strides,
            const std::vector<std::vector<TermRun>>& terms) {
    for (size_t i = 0; i < owned.size(); ++i) {
      offset.push_back(owned[i].each(false));
      for (int64_t& x : offset.back()) x *= strides[i];
      term.push_back(expand(terms[i]));
    }
    if (owned.empty()) {
      offset.push_back({0});
      term.push_back({0});
    }
  }

  // Calls f(offset, flat index) for every element, a row along the last axis at a time.
  template <typename F>
  void for_each(F&& f) const {
    const std::vector<int64_t>& lo = offset.back();
    const std::vector<int64_t>& lt = term.back();
    for_each_row([&](int64_t off, int64_t flat) {
      for (size_t k = 0; k < lo.size(); ++k) f(off + lo[k], flat + lt[k]);
    });
  }

  // True if a row's elements, one or more, all land in one slot (the last axis is reduced).
  bool row_in_one_slot() const {
    const std::vector<int64_t>& lt = term.back();
    return !lt.empty() && std::all_of(lt.begin(), lt.end(), [&](int64_t t) { return t == lt.front(); });
  }

  // Calls f(offset, flat index) of each row's first element minus the last axis's own.
  template <typename F>
  void for_each_row(F&& f) const {
    const size_t n = offset.size() - 1;
    for (const auto& o : offset) {
      if (o.empty()) return;
    }
    std::vector<size_t> at(n, 0);
    for (;;) {
      int64_t off = 0, flat = 0;
      for (size_t i = 0; i < n; ++i) {
        off += offset[i][at[i]];
        flat += term[i][at[i]];
      }
      f(off, flat);
      size_t i = n;
      while (i > 0 && at[i - 1] + 1 == offset[i - 1].size()) at[--i] = 0;
      if (i == 0) return;
      ++at[i - 1];
    }
  }
};

template <gdap_reduce_op Op, typename T>
T apply(T a, T b) {
  if constexpr (Op == GDAP_REDUCE_PROD) return static_cast<T>(a * b);
  if constexpr (Op == GDAP_REDUCE_MIN) return nan_min(a, b);  // NaN wins (nan_order.hpp)
  if constexpr (Op == GDAP_REDUCE_MAX) return nan_max(a, b);
  return static_cast<T>(a + b);
}

// How a source element meets its slot: combined with what is there, or stored (its own slot).
enum class Combine { reduce, store };

template <typename T>
T load(const char* source, int64_t offset) {
  T v;
  std::memcpy(&v, source + offset * int64_t{sizeof(T)}, sizeof v);  // sections need no alignment
  return v;
}

// partial[flat] = op(partial[flat], source element), or = source element, for every element of
// `rows` (mean: sum).
template <typename T>
void reduce_rows(Combine how, gdap_reduce_op op, const OwnedRows& rows, const char* source, T* partial) {
  auto each = [&](auto meet) {  // a lambda type per way: the loop inlines it
    rows.for_each([&](int64_t offset, int64_t flat) { partial[flat] = meet(partial[flat], load<T>(source, offset)); });
  };
  if (how == Combine::store) return each([](T, T v) { return v; });
  switch (op) {
    case GDAP_REDUCE_PROD: return each([](T a, T b) { return apply<GDAP_REDUCE_PROD>(a, b); });
    case GDAP_REDUCE_MIN: return each([](T a, T b) { return apply<GDAP_REDUCE_MIN>(a, b); });
    case GDAP_REDUCE_MAX: return each([](T a, T b) { return apply<GDAP_REDUCE_MAX>(a, b); });
    default: return each([](T a, T b) { return apply<GDAP_REDUCE_SUM>(a, b); });
  }
}

// partial[flat] = the sum of `rows`' elements of each of the `count` slots, compensated
// (compensated_sum.hpp: the error of a slot's sum stays about an ulp however many elements it
// has). A row that lands in one slot (the last axis reduced) is summed on its own first, in
// registers.
template <typename T>
void sum_rows_compensated(const OwnedRows& rows, const char* source, T* partial, int64_t count) {
  std::vector<CompensatedSum> slot(static_cast<size_t>(count));
  if (rows.row_in_one_slot()) {
    const std::vector<int64_t>& lo = rows.offset.back();
    const int64_t lt = rows.term.back().front();
    rows.for_each_row([&](int64_t off, int64_t flat) {
      CompensatedSum row;
      for (int64_t o : lo) row.add(static_cast<double>(load<T>(source, off + o)));
      slot[static_cast<size_t>(flat + lt)].merge(row);
    });
  } else {
    rows.for_each([&](int64_t offset, int64_t flat) {
      slot[static_cast<size_t>(flat)].add(static_cast<double>(load<T>(source, offset)));
    });
  }
  for (size_t k = 0; k < slot.size(); ++k) partial[k] = static_cast<T>(slot[k].value());
}

int64_t product(const std::vector<int64_t>& shape, const char* what) {
  int64_t n = 1;
  for (int64_t e : shape) n = checked_mul(n, e, what);
  return n;
}

// One reduction, after every check passed on every rank.
struct Reduction {
  gdap_comm& comm;
  exchange::Engine& engine;
  gdap_reduce_op op;             // mean: summed here, divided by `mean_count`
  const gdap_array& source;
  std::vector<Owned> from;       // per source axis, what this rank reads
  std::vector<int64_t> to_axis;  // per source axis, the result axis it becomes (-1: reduced)
  gdap_array& result;
  const gdap_map* result_map;    // NULL for a 0-d result
  std::vector<int64_t> shape;    // the result's global shape
  double mean_count = 1;

  void run() const {
    const gdap_dtype t = source.section.dtype;
    const int64_t es = t.bits / 8;
    product(shape, "elements of the result");  // the layouts count on a size that fits
    const BufferLayout layout = buffer_layout(result_map, shape);
    const gdap_reduce_op engine_op = op == GDAP_REDUCE_MEAN ? GDAP_REDUCE_SUM : op;
    if (memory_of(&source) == Memory::device) return reduce_on_device(engine, comm, on_device(engine_op, layout));
    const Direct direct = direct_parts(layout);
    if (direct.source || direct.result) return reduce_scatter_direct(layout, direct, engine_op);
    HostBuffer buffer;
    // Agreed: a rank that cannot allocate the buffer stops every rank, rather than leave them waiting.
    agree(comm, [&] {
      buffer = reduction_buffer(comm, bytes_of(layout.elements));
      fill(buffer->data(), layout, engine_op);
    });
    int64_t at = 0;  // the reduced part's first element
    const exchange::Reduce with = reduce_with(t, engine_op, Memory::host, buffer);
    if (layout.segment > 0) {
      at = engine.reduce_scatter_in_place(buffer->data(), layout.segment, with);
    } else {
      engine.allreduce(buffer->data(), layout.elements, with);
    }
    const char* reduced = buffer->data() + at * es;
    if (op == GDAP_REDUCE_MEAN) {
      with_type(t, [&](auto zero) {
        using T = decltype(zero);
        auto* partial = reinterpret_cast<T*>(buffer->data() + at * es);
        if constexpr (std::is_floating_point_v<T>) {  // mean is refused for integer dtypes
          for (int64_t k = 0; k < layout.reduced_elements(); ++k) partial[k] = static_cast<T>(partial[k] / mean_count);
        }
      });
    }
    write(reduced, es, layout);
  }

  size_t bytes_of(int64_t elements) const {
    return static_cast<size_t>(checked_mul(elements, int64_t{source.section.dtype.bits / 8}, "bytes of the reduction buffer"));
  }

  // The buffer (`layout.elements` at `data`) with this rank's source elements reduced into it.
  void fill(char* data, const BufferLayout& layout, gdap_reduce_op engine_op) const {
    with_type(source.section.dtype, [&](auto zero) {
      using T = decltype(zero);
      auto* partial = reinterpret_cast<T*>(data);
      // With no axis reduced each element lands in its own slot: stored, not combined; and
      // when they fill the whole buffer, no slot needs the identity first.
      const bool store = nothing_reduced();
      if (!store || !covers(layout)) std::fill(partial, partial + layout.elements, identity<T>(engine_op));
      const OwnedRows rows(from, source.section.strides, source_terms(layout));
      const auto* elements = static_cast<const char*>(source.data());
      if constexpr (std::is_floating_point_v<T>) {
        if (!store && engine_op == GDAP_REDUCE_SUM) return sum_rows_compensated(rows, elements, partial, layout.elements);
      }
      reduce_rows(store ? Combine::store : Combine::reduce, engine_op, rows, elements, partial);
    });
  }

  // Which side of a segmented reduction needs no buffer (not mean, which divides after): the
  // source, when its owned elements already lie in buffer order at its data (a replicated C-order
  // source into row blocks), and the result, when this rank's segment is its memory as it is (no
  // padding, C order).
  struct Direct {
    bool source = false, result = false;
  };
  Direct direct_parts(const BufferLayout& layout) const {
    Direct d;
    if (layout.segment == 0 || op == GDAP_REDUCE_MEAN) return d;
    const std::vector<std::vector<TermRun>> terms = source_terms(layout);
    d.source = nothing_reduced() && covers(layout);
    for (size_t i = 0; i < from.size(); ++i) d.source = d.source && same_as_offsets(from[i], source.section.strides[i], terms[i]);
    const std::vector<Owned> to = owned_result();
    int64_t owned = 1;
    d.result = true;
    for (size_t j = 0; j < to.size(); ++j) {
      d.result = d.result && same_as_offsets(to[j], result.section.strides[j], layout.result_terms(j, to[j]));
      owned *= to[j].count;
    }
    d.result = d.result && owned == layout.segment;
    return d;
  }

  // Segmented, with the source sent as it is or the result receiving its part in place (or both):
  // the group's rendezvous or MPI_Ireduce_scatter_block, out of place, the buffer holding only the
  // other side. Over MPI an abandoned operation (a timeout) may then still read the source or write
  // the result: after GDAP_ERR_TIMEOUT the policy is to end the job (docs/api.md), as for
  // gdap_allreduce's in-place section.
  void reduce_scatter_direct(const BufferLayout& layout, Direct direct, gdap_reduce_op engine_op) const {
    const int64_t es = source.section.dtype.bits / 8;
    HostBuffer buffer;
    agree(comm, [&] {
      buffer = reduction_buffer(comm, bytes_of(direct.source ? (direct.result ? 0 : layout.segment) : layout.elements));
      if (!direct.source) fill(buffer->data(), layout, engine_op);
    });
    const void* send = direct.source ? source.data() : buffer->data();
    void* recv = direct.result ? result.data() : buffer->data();  // send is the source here: out of place
    engine.reduce_scatter(send, recv, layout.segment, reduce_with(source.section.dtype, engine_op, Memory::host, buffer));
    if (!direct.result) write(static_cast<const char*>(recv), es, layout);
  }

  // True if every source axis is kept (a reduce-scatter): each element has a slot of its own.
  bool nothing_reduced() const { return std::find(to_axis.begin(), to_axis.end(), -1) == to_axis.end(); }

  // True if this rank's source elements fill every slot of the buffer (a replicated source into
  // a buffer without slack).
  bool covers(const BufferLayout& layout) const {
    int64_t held = 1;
    for (const Owned& o : from) held *= o.count;  // at most the result's size: each index owned once
    return held == layout.elements;
  }

  // Per source axis, its owned indices' terms of the buffer index (0 for a reduced axis).
  std::vector<std::vector<TermRun>> source_terms(const BufferLayout& layout) const {
    std::vector<std::vector<TermRun>> terms;
    for (size_t i = 0; i < from.size(); ++i) {
      const int64_t j = to_axis[i];
      terms.push_back(j < 0 ? std::vector<TermRun>{{from[i].count, 0, 0}}
                            : layout.source_terms(static_cast<size_t>(j), from[i]));
    }
    return terms;
  }

  // The same reduction as tables for the device kernels.
  DeviceReduction on_device(gdap_reduce_op engine_op, const BufferLayout& layout) const {
    DeviceReduction d;
    d.device = source.section.device.id;
    d.dtype = source.section.dtype;
    d.op = engine_op;
    d.mean = op == GDAP_REDUCE_MEAN;
    d.mean_count = mean_count;
    d.source = source.data();
    d.result = result.data();
    d.count = layout.elements;
    d.segment = layout.segment;
    const std::vector<std::vector<TermRun>> terms = source_terms(layout);
    for (size_t i = 0; i < from.size(); ++i) {
      (to_axis[i] < 0 ? d.reduced : d.kept).push_back(table(from[i], source.section.strides[i], terms[i]));
    }
    for (const Owned& o : owned_result()) {
      const size_t j = d.out.size();
      d.out.push_back(table(o, result.section.strides[j], layout.result_terms(j, o)));
    }
    const Direct direct = direct_parts(layout);
    d.source_is_buffer = direct.source;
    d.result_is_segment = direct.result;
    return d;
  }

  // True if every owned index's offset (local * stride) is its term: walks the owned runs and the
  // term runs side by side, comparing where each shared stretch starts and how it steps.
  static bool same_as_offsets(const Owned& o, int64_t stride, const std::vector<TermRun>& terms) {
    size_t t = 0;
    int64_t into = 0;  // indices of terms[t] already matched
    for (const Owned::Run& r : o.runs) {
      for (int64_t k = 0; k < r.length;) {
        while (t < terms.size() && into == terms[t].length) {
          ++t;
          into = 0;
        }
        if (t == terms.size()) return false;
        const TermRun& x = terms[t];
        const int64_t n = std::min(r.length - k, x.length - into);
        if ((r.local + k) * stride != x.first + into * x.step || (n > 1 && stride != x.step)) return false;
        k += n;
        into += n;
      }
    }
    return true;
  }

  static bool steps_evenly(const std::vector<int64_t>& v) {
    for (size_t k = 2; k < v.size(); ++k) {
      if (v[k] - v[k - 1] != v[1] - v[0]) return false;
    }
    return true;
  }

  // One axis's offsets and terms as a table, affine when both step evenly (a run of owned indices
  // in one run of terms, as for a block or an undistributed axis, costs no host work per index;
  // other lists are checked, and cyclic blocks of one into the global layout pass) so that the
  // kernels need no table.
  static AxisTable table(const Owned& o, int64_t stride, const std::vector<TermRun>& terms) {
    AxisTable t;
    t.count = o.count;
    t.stride = stride;
    t.offset_step = stride;
    if (o.runs.size() <= 1 && terms.size() <= 1) {
      t.affine = true;
      if (!o.runs.empty()) t.offset0 = o.runs[0].local * stride;
      if (!terms.empty()) {
        t.flat0 = terms[0].first;
        t.flat_step = terms[0].step;
      }
      return t;
    }
    std::vector<int64_t> offset = o.each(false);
    for (int64_t& x : offset) x *= stride;
    std::vector<int64_t> flat = expand(terms);
    if (steps_evenly(offset) && steps_evenly(flat)) {
      t.affine = true;
      t.offset0 = offset[0];  // two runs or more: not empty
      t.offset_step = offset[1] - offset[0];
      t.flat0 = flat[0];
      t.flat_step = flat[1] - flat[0];
      return t;
    }
    t.offset = std::move(offset);
    t.flat = std::move(flat);
    return t;
  }

  // Per result axis, what this rank's result section owns (none for a 0-d result).
  std::vector<Owned> owned_result() const {
    std::vector<Owned> to;
    if (result_map == nullptr) return to;
    for (int64_t j = 0; j < result.ndim(); ++j) to.push_back(owned_along(*result_map, j, comm.rank, false));
    return to;
  }

  // The result's owned elements from the reduced part of the buffer.
  void write(const char* reduced, int64_t es, const BufferLayout& layout) const {
    char* base = static_cast<char*>(result.data());
    if (result_map == nullptr) {  // 0-d: the one element on every rank
      std::memcpy(base, reduced, static_cast<size_t>(es));
      return;
    }
    const std::vector<Owned> to = owned_result();
    std::vector<std::vector<TermRun>> terms;
    for (size_t j = 0; j < to.size(); ++j) terms.push_back(layout.result_terms(j, to[j]));
    const OwnedRows rows(to, result.section.strides, terms);
    with_type(result.section.dtype, [&](auto zero) {  // a copy of a known size: inlined, not a call
      using T = decltype(zero);
      rows.for_each([&](int64_t offset, int64_t flat) {
        std::memcpy(base + offset * es, reduced + flat * es, sizeof(T));
      });
    });
  }
};
// This rank's checks shared by both calls: the arrays, their dtypes and memory (the engine's).
void check_pair(gdap_comm& comm, const exchange::Engine& engine, const gdap_array* source, const gdap_array* result, const char* function) {
  handle(source, "source");
  handle(result, "result");
  check_reducible(source->section.dtype, "source");
  const gdap_dtype s = source->section.dtype, r = result->section.dtype;
  if (!same_dtype(s, r)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "result's dtype {} differs from source's {}", dtype_text(r), dtype_text(s));
  }
  check_destination(*result, "result");
  check_apart(*result, "result", *source, "source", function);
  exchange::touches(comm, "source", source, false);
  exchange::touches(comm, "result", result, true);
  engine.check_section(*source, "source", function, true);
  engine.check_section(*result, "result", function, true);
}

void check_op(const OpArg& op) {
  if (op_name(op.op) == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "op {} is not a gdap_reduce_op", op.value);
}

// The agreement's error when rank r passed another `what` (a token) than rank 0.
// What every rank of a reduction must pass alike: rank 0's op (and axes), and a source of rank 0's
// dtype and memory, or one rank would combine bytes that another sent as another type (the
// distributions need no field: the ranks gather them from each other's sections).
std::string reduction_token(const char* op, std::string axes, const gdap_array& source) {
  return field_token({{"op", op}, {"axes", std::move(axes)}, {"a source of dimensions", std::to_string(source.ndim())},
                      {"source dtype", dtype_text(source.section.dtype)},
                      {"source memory", memory_name(memory_of(&source))}});
}

Mismatch differs(const char* call) {
  return field_mismatch("a source", fmt::format("every rank of {} must pass the same op and axes, and a source of the "
                                                "same dimensions, dtype and memory", call));
}

// This rank's part of gathering the arrays' distributions (null: none wanted).
void add_maps(MapGather& maps, const gdap_array* source, const gdap_array* result) {
  maps.add("source", source->ndim(), source->ndim() > 0 ? &source->dims[0] : nullptr);
  if (result != nullptr) maps.add("result", result->ndim(), result->ndim() > 0 ? &result->dims[0] : nullptr);
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

}  // namespace

void reduce_scatter(gdap_comm& comm, const gdap_array* source, gdap_array* result, const OpArg& arg) {
  const gdap_reduce_op op = arg.op;
  exchange::Engine& engine = exchange::engine_of(comm);
  MapGather maps(comm);
  const std::vector<std::string> offers = agree_gather(comm, [&] {
    check_op(arg);
    if (op == GDAP_REDUCE_MEAN) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "op mean is not an element-wise reduce-scatter: sum, prod, min and max are "
           "(gdap_reduce_axes takes mean)");
    }
    check_pair(comm, engine, source, result, "gdap_reduce_scatter");
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
    add_maps(maps, source, result);
    return Share{reduction_token(op_name(op), "all", *source), maps.offer()};
  }, differs("gdap_reduce_scatter"));
  const std::vector<SharedMap> got = maps.finish(offers);
  const gdap_map& from = *got[0];
  Reduction r{comm, engine, op, *source, {}, {}, *result, got[1].get(), from.global_shape};
  for (int64_t i = 0; i < source->ndim(); ++i) {
    r.from.push_back(owned_along(from, i, comm.rank, false));
    r.to_axis.push_back(i);
  }
  r.run();
}

void reduce_axes(gdap_comm& comm, const gdap_array* source, gdap_array* result, const OpArg& arg,
                 const int64_t* axes, int64_t naxes) {
  const gdap_reduce_op op = arg.op;
  exchange::Engine& engine = exchange::engine_of(comm);
  std::vector<bool> reduced;
  MapGather maps(comm);
  const std::vector<std::string> offers = agree_gather(comm, [&] {
    check_op(arg);
    check_pair(comm, engine, source, result, "gdap_reduce_axes");
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
    add_maps(maps, source, result->ndim() > 0 ? result : nullptr);
    return Share{reduction_token(op_name(op), axes_text(reduced), *source), maps.offer()};
  }, differs("gdap_reduce_axes"));
  const std::vector<SharedMap> got = maps.finish(offers);
  const gdap_map& from = *got[0];
  const gdap_map* to = got.size() > 1 ? got[1].get() : nullptr;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < source->ndim(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) shape.push_back(from.global_shape[static_cast<size_t>(i)]);
  }
  Reduction r{comm, engine, op, *source, {}, {}, *result, to, shape};
  double count = 1;
  for (int64_t i = 0, j = 0; i < source->ndim(); ++i) {
    r.from.push_back(owned_along(from, i, comm.rank, true));
    const bool gone = reduced[static_cast<size_t>(i)];
    r.to_axis.push_back(gone ? -1 : j++);
    if (gone) count *= static_cast<double>(from.global_shape[static_cast<size_t>(i)]);  // a valid map holds every index
  }
  r.mean_count = count;
  r.run();
}

}  // namespace gdap::reduce
