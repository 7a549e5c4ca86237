// gdap_allreduce: the section, C-contiguous or packed into C order, reduced in place by the
// communicator's engine; and what every reduction shares (see allreduce.hpp).
#include "reduce/reduction.hpp"

#include "array/array.hpp"
#include "array/layout.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/nan_order.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

namespace gdap::reduce {
namespace {

template <typename T>
void combine_as(gdap_reduce_op op, T* dst, const T* src, int64_t n) {
  switch (op) {
    case GDAP_REDUCE_SUM: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] + src[i]); break;
    case GDAP_REDUCE_PROD: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] * src[i]); break;
    case GDAP_REDUCE_MIN: for (int64_t i = 0; i < n; ++i) dst[i] = nan_min(dst[i], src[i]); break;
    case GDAP_REDUCE_MAX: for (int64_t i = 0; i < n; ++i) dst[i] = nan_max(dst[i], src[i]); break;
    case GDAP_REDUCE_MEAN: break;  // never combined element-wise (refused by the checks)
  }
}

// Calls f(element offset) for every element of a section in C order.
void for_each_offset(const gdap_array& a, const std::function<void(int64_t)>& f) {
  const auto& shape = a.section.shape;
  const auto& strides = a.section.strides;
  for (int64_t e : shape) {
    if (e == 0) return;
  }
  std::vector<int64_t> index(shape.size(), 0);
  for (;;) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); ++i) offset += index[i] * strides[i];
    f(offset);
    size_t i = shape.size();
    while (i > 0 && index[i - 1] + 1 == shape[i - 1]) index[--i] = 0;
    if (i == 0) return;
    ++index[i - 1];
  }
}

int64_t element_bytes(const gdap_array& a) { return a.section.dtype.bits / 8; }

int64_t count_of(const gdap_array& a) {
  int64_t n = 1;
  for (int64_t e : a.section.shape) n *= e;
  return n;
}

// What every rank's section must share with rank 0's, as text.
std::string layout_of(const gdap_array& a) {
  return fmt::format("shape ({}), dtype (code {}, {} bits), {} memory", fmt::join(a.section.shape, ", "),
                     a.section.dtype.code, a.section.dtype.bits, memory_name(memory_of(&a)));
}

// This rank's own checks: a section, a dtype and an op gdap reduces, writable, in memory the
// engine reduces (device memory C-contiguous: NCCL reduces it in place).
void check_own(gdap_comm& comm, const exchange::Engine& engine, const gdap_array* section, const OpArg& arg) {
  handle(section, "section");
  if (op_name(arg.op) == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "op {} is not a gdap_reduce_op", arg.value);
  if (arg.op == GDAP_REDUCE_MEAN) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "op mean is not an element-wise all-reduce: sum, prod, min and max are "
         "(gdap_reduce_axes takes mean)");
  }
  check_reducible(section->section.dtype, "the section");
  check_destination(*section, "the section");
  engine.check_section(*section, "the section", "gdap_allreduce", true);
  if (memory_of(section) == Memory::device && !contiguous(*section)) {
    fail(GDAP_ERR_UNSUPPORTED, "the section is a strided device section: an all-reduce of device memory needs a "
         "C-contiguous section");
  }
  exchange::touches(comm, "section", section, true);
}

// This rank's checks, then one exchange: every rank passed, passed rank 0's op (ranks reducing
// with different ops would end with different values), and has a section of rank 0's shape, dtype
// and kind of memory. The same exchange says whether any rank's section may hold a NaN: the
// reduction's nan_free.
bool agree_reduce(gdap_comm& comm, exchange::Engine& engine, const gdap_array* section, const OpArg& arg) {
  const std::vector<std::string> all = agree_gather(comm, [&] {
    check_own(comm, engine, section, arg);
    const exchange::Reduce with = reduce_with(section->section.dtype, arg.op, memory_of(section));
    const bool may = engine.may_hold_nan(section->data(), count_of(*section), with);
    return Share{fmt::format("op {}", op_name(arg.op)), nan_byte(may) + layout_of(*section)};
  }, [](size_t r, std::string_view theirs, std::string_view first) {
    return fmt::format("rank {} passed {} but rank 0 passed {}: every rank of an all-reduce must pass the same op",
                       r, theirs, first);
  });
  const auto layout = [&](size_t r) { return std::string_view(all[r]).substr(1); };
  for (size_t r = 1; r < all.size(); ++r) {
    if (layout(r) != layout(0)) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "rank {}'s section ({}) differs from rank 0's ({}): an all-reduce combines "
           "sections of one shape, dtype and memory", r, layout(r), layout(0));
    }
  }
  return nan_free(all);
}

}  // namespace

const char* op_name(gdap_reduce_op op) {
  switch (op) {
    case GDAP_REDUCE_SUM: return "sum";
    case GDAP_REDUCE_PROD: return "prod";
    case GDAP_REDUCE_MIN: return "min";
    case GDAP_REDUCE_MAX: return "max";
    case GDAP_REDUCE_MEAN: return "mean";
  }
  return nullptr;
}

bool reducible(gdap_dtype t) {
  if (t.lanes != 1) return false;
  if (t.code == GDAP_DTYPE_INT || t.code == GDAP_DTYPE_UINT) return t.bits == 8 || t.bits == 32 || t.bits == 64;
  return t.code == GDAP_DTYPE_FLOAT && (t.bits == 32 || t.bits == 64);
}

void check_reducible(gdap_dtype t, const char* which) {
  if (!reducible(t)) {
    fail(GDAP_ERR_UNSUPPORTED, "{}'s dtype {} cannot be reduced: int8/32/64, uint8/32/64, float32/64 can", which,
         dtype_text(t));
  }
}

bool contiguous(const gdap_array& a) {
  int64_t expected = 1;
  for (size_t i = a.section.shape.size(); i-- > 0;) {
    if (a.section.shape[i] > 1 && a.section.strides[i] != expected) return false;
    expected *= a.section.shape[i];
  }
  return true;
}

void combine(gdap_dtype t, gdap_reduce_op op, void* dst, const void* src, int64_t n) {
  const bool is_int = t.code == GDAP_DTYPE_INT, is_uint = t.code == GDAP_DTYPE_UINT;
  if (is_int && t.bits == 8) return combine_as(op, static_cast<int8_t*>(dst), static_cast<const int8_t*>(src), n);
  if (is_int && t.bits == 32) return combine_as(op, static_cast<int32_t*>(dst), static_cast<const int32_t*>(src), n);
  if (is_int && t.bits == 64) return combine_as(op, static_cast<int64_t*>(dst), static_cast<const int64_t*>(src), n);
  if (is_uint && t.bits == 8) return combine_as(op, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n);
  if (is_uint && t.bits == 32) return combine_as(op, static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), n);
  if (is_uint && t.bits == 64) return combine_as(op, static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), n);
  if (t.bits == 32) return combine_as(op, static_cast<float*>(dst), static_cast<const float*>(src), n);
  combine_as(op, static_cast<double*>(dst), static_cast<const double*>(src), n);
}

namespace {

// Copies a section's elements into a C-ordered buffer and back (host memory).
void pack(const gdap_array& a, void* out) {
  const int64_t es = element_bytes(a);
  const char* base = static_cast<const char*>(a.data());
  char* to = static_cast<char*>(out);
  for_each_offset(a, [&](int64_t offset) {
    std::memcpy(to, base + offset * es, static_cast<size_t>(es));
    to += es;
  });
}

void unpack(const void* in, gdap_array& a) {
  const int64_t es = element_bytes(a);
  char* base = static_cast<char*>(a.data());
  const char* from = static_cast<const char*>(in);
  for_each_offset(a, [&](int64_t offset) {
    std::memcpy(base + offset * es, from, static_cast<size_t>(es));
    from += es;
  });
}

}  // namespace

char nan_byte(bool may_hold_nan) { return may_hold_nan ? 'N' : '-'; }

bool nan_free(const std::vector<std::string>& shares) {
  return std::all_of(shares.begin(), shares.end(), [](const std::string& s) { return !s.empty() && s[0] == '-'; });
}

exchange::Reduce reduce_with(gdap_dtype dtype, gdap_reduce_op op, Memory memory, std::shared_ptr<void> keep) {
  return exchange::Reduce{dtype, op, memory, &combine, std::move(keep)};
}

HostBuffer reduction_buffer(gdap_comm& comm, size_t bytes) {
  struct Kept : Scratch {
    HostBuffer buffer;
  };
  HostBuffer& kept = comm.cache.get<Kept>(kBufferKey).buffer;
  if (!kept || kept.use_count() > 1 || kept->capacity < bytes) {
    kept.reset();  // freed before the new one is made, unless an abandoned operation holds it
    kept = std::make_shared<HostBytes>(bytes);
  }
  kept->count = bytes;
  return kept;
}

OpArg op_arg(const gdap_reduce_op& raw) {
  int value = 0;
  std::memcpy(&value, &raw, sizeof value);
  const bool known = value >= GDAP_REDUCE_SUM && value <= GDAP_REDUCE_MEAN;
  return {known ? static_cast<gdap_reduce_op>(value) : gdap_reduce_op{}, value};
}

// A C-contiguous section is reduced in place; a strided one (host memory: device sections are
// contiguous, checked) is packed into C order and back. Over MPI an abandoned operation (a timeout)
// may then still write the section in place: after GDAP_ERR_TIMEOUT the policy is to end the job
// (docs/api.md).
void allreduce(gdap_comm& comm, gdap_array* section, const OpArg& arg) {
  exchange::Engine& engine = exchange::engine_of(comm);
  const bool nan_free = agree_reduce(comm, engine, section, arg);
  gdap_array& a = *section;
  const int64_t count = count_of(a);
  const bool in_place = contiguous(a);
  auto packed = in_place ? nullptr : std::make_shared<HostBytes>(static_cast<size_t>(count * element_bytes(a)));
  exchange::Reduce with = reduce_with(a.section.dtype, arg.op, in_place ? memory_of(&a) : Memory::host, packed);
  with.nan_free = nan_free;
  if (in_place) return engine.allreduce(a.data(), count, with);
  pack(a, packed->data());
  engine.allreduce(packed->data(), count, with);
  unpack(packed->data(), a);
}

}  // namespace gdap::reduce
