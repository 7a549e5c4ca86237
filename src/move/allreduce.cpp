#include "move/allreduce.hpp"

#include "array/array.hpp"
#include "comm/group.hpp"
#include "core/error.hpp"
#include "move/redistribute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

namespace gdap::move {
namespace {

void check_own(const ReduceCall& call) {
  require(call.section, "section");
  if (op_name(call.op) == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "op {} is not a gdap_reduce_op", call.requested_op);
  if (call.op == GDAP_REDUCE_MEAN) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "op mean is not an element-wise all-reduce: sum, prod, min and max are "
         "(gdap_reduce_axes takes mean)");
  }
  check_reducible(call.section->section.dtype, "the section");
  if (call.section->readonly) fail(GDAP_ERR_INVALID_ARGUMENT, "the section is read-only");
  if (memory_of(call.section) == Memory::none) fail(GDAP_ERR_UNSUPPORTED, "the section's memory cannot be reduced");
  touches(call.comm, "section", call.section, true);
}

// What every rank's section must share with rank 0's, as text.
std::string layout_of(const gdap_array& a) {
  return fmt::format("shape ({}), dtype (code {}, {} bits), {} memory", fmt::join(a.section.shape, ", "),
                     a.section.dtype.code, a.section.dtype.bits, memory_of(&a) == Memory::host ? "host" : "device");
}

template <typename T>
void combine_as(gdap_reduce_op op, T* dst, const T* src, int64_t n) {
  switch (op) {
    case GDAP_REDUCE_SUM: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] + src[i]); break;
    case GDAP_REDUCE_PROD: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] * src[i]); break;
    case GDAP_REDUCE_MIN: for (int64_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], src[i]); break;
    case GDAP_REDUCE_MAX: for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]); break;
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
    fail(GDAP_ERR_UNSUPPORTED, "{}'s dtype (code {}, {} bits, {} lanes) cannot be reduced: int8/32/64, "
         "uint8/32/64, float32/64 can", which, t.code, t.bits, t.lanes);
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

// One exchange: the ranks' checks, their ops (every rank must pass rank 0's: ranks reducing with
// different ops would end with different values) and their sections' layouts.
void agree_reduce(const ReduceCall& call) {
  const std::vector<std::string> all = agree_gather(call.comm, [&] {
    check_own(call);
    return Share{fmt::format("op {}", op_name(call.op)), layout_of(*call.section)};
  }, [](size_t r, std::string_view theirs, std::string_view first) {
    return fmt::format("rank {} passed {} but rank 0 passed {}: every rank of an all-reduce must pass the same op",
                       r, theirs, first);
  });
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "rank {}'s section ({}) differs from rank 0's ({}): an all-reduce combines "
           "sections of one shape, dtype and memory", r, all[r], all[0]);
    }
  }
}

// The in-process group behind a host reduction that is not MPI's (NCCL: refused).
GroupComm& host_group(gdap_comm& comm) {
  if (comm.kind() != GDAP_COMM_GROUP) {
    fail(GDAP_ERR_UNSUPPORTED, "an NCCL communicator reduces device memory; this reduction runs on host buffers "
         "(use an in-process group or MPI)");
  }
  return dynamic_cast<GroupComm&>(comm);
}

// Every rank reads every peer's buffer into its own result, in rank order (so every rank's
// result is bitwise the same), at the group's rendezvous; it writes its own buffer only after
// the rendezvous, when no peer reads any more.
void allreduce_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const HostBuffer& buffer) {
  const int64_t count = static_cast<int64_t>(buffer->size()) / (dtype.bits / 8);
  if (count == 0) return;  // every rank's buffer has the same size: every rank returns here
  if (comm.kind() == GDAP_COMM_MPI) return allreduce_mpi_in_place(comm, dtype, op, buffer->data(), count, buffer);
  GroupComm& group = host_group(comm);
  HostBytes result(buffer->size());
  group.exchange(buffer->data(), [&](const std::vector<const void*>& buffers) {
    std::memcpy(result.data(), buffers[0], result.size());
    for (size_t r = 1; r < buffers.size(); ++r) combine(dtype, op, result.data(), buffers[r], count);
  });
  std::memcpy(buffer->data(), result.data(), result.size());
}

int64_t reduce_scatter_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const HostBuffer& buffer,
                              int64_t segment) {
  if (segment == 0) return 0;
  if (comm.kind() == GDAP_COMM_MPI) {
    reduce_scatter_mpi(comm, dtype, op, nullptr, buffer->data(), segment, buffer);
    return 0;
  }
  const size_t bytes = static_cast<size_t>(segment) * static_cast<size_t>(dtype.bits / 8);
  reduce_scatter_group(comm, dtype, op, buffer->data(), buffer->data() + static_cast<size_t>(comm.rank) * bytes, segment);
  return comm.rank * segment;
}

// Each rank combines its segment of every peer's `send`, in rank order (the order allreduce_buffer
// combines in), at the group's rendezvous, a chunk at a time, and writes each chunk's result to
// `recv`. In place, `recv` is the rank's own segment of its `send`: the peers read only their
// segments, so no one reads what it overwrites.
void reduce_scatter_group(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const char* send, char* recv,
                          int64_t segment) {
  GroupComm& group = host_group(comm);
  const size_t es = static_cast<size_t>(dtype.bits / 8), bytes = static_cast<size_t>(segment) * es;
  const size_t mine = static_cast<size_t>(group.rank) * bytes;
  constexpr size_t kChunk = size_t{1} << 16;  // stays in cache while every peer's part is added
  std::vector<char> acc(std::min(kChunk, bytes));
  group.exchange(send, [&](const std::vector<const void*>& sends) {
    for (size_t at = 0; at < bytes; at += kChunk) {
      const size_t n = std::min(kChunk, bytes - at);
      std::memcpy(acc.data(), static_cast<const char*>(sends[0]) + mine + at, n);
      for (size_t r = 1; r < sends.size(); ++r) {
        combine(dtype, op, acc.data(), static_cast<const char*>(sends[r]) + mine + at, static_cast<int64_t>(n / es));
      }
      std::memcpy(recv + at, acc.data(), n);
    }
  });
}

HostBuffer reduction_buffer(gdap_comm& comm, size_t bytes) {
  struct Kept : Scratch {
    HostBuffer buffer;
  };
  HostBuffer& kept = kept_scratch<Kept>(comm.reduce_scratch).buffer;
  if (!kept || kept.use_count() > 1 || kept->capacity < bytes) {
    kept.reset();  // freed before the new one is made, unless an abandoned operation holds it
    kept = std::make_shared<HostBytes>(bytes);
  }
  kept->count = bytes;
  return kept;
}

// The section packed into a C-ordered buffer, all-reduced, unpacked back.
void allreduce_group(const ReduceCall& call) {
  if (memory_of(call.section) == Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "an in-process group reduces host sections; for device sections use an NCCL "
         "communicator (gdap_comm_from_nccl)");
  }
  const gdap_array& a = *call.section;
  auto buffer = std::make_shared<HostBytes>(static_cast<size_t>(count_of(a) * element_bytes(a)));
  pack(a, buffer->data());
  allreduce_buffer(call.comm, a.section.dtype, call.op, buffer);
  unpack(buffer->data(), *call.section);
}

OpArg op_arg(const gdap_reduce_op& raw) {
  int value = 0;
  std::memcpy(&value, &raw, sizeof value);
  const bool known = value >= GDAP_REDUCE_SUM && value <= GDAP_REDUCE_MEAN;
  return {known ? static_cast<gdap_reduce_op>(value) : gdap_reduce_op{}, value};
}

}  // namespace gdap::move

extern "C" GDAP_API gdap_status gdap_allreduce(gdap_comm* comm, gdap_array* section, gdap_reduce_op op) {
  return gdap::guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    const gdap::CollectiveCall collective(c, "gdap_allreduce");
    const gdap::move::OpArg arg = gdap::move::op_arg(op);
    const gdap::move::ReduceCall call{c, section, arg.op, arg.value};
    gdap::move::agree_reduce(call);
    switch (c.kind()) {
      case GDAP_COMM_GROUP: return gdap::move::allreduce_group(call);
      case GDAP_COMM_MPI: return gdap::move::allreduce_mpi(call);
      case GDAP_COMM_NCCL: return gdap::move::allreduce_nccl(call);
    }
  });
}

#ifndef GDAP_HAVE_MPI
void gdap::move::allreduce_mpi(const ReduceCall&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without MPI"); }
void gdap::move::allreduce_mpi_in_place(gdap_comm&, gdap_dtype, gdap_reduce_op, void*, int64_t, std::shared_ptr<void>) {
  fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without MPI");
}
void gdap::move::reduce_scatter_mpi(gdap_comm&, gdap_dtype, gdap_reduce_op, const void*, void*, int64_t,
                                    std::shared_ptr<void>) {
  fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without MPI");
}
#endif
#ifndef GDAP_HAVE_NCCL
void gdap::move::allreduce_nccl(const ReduceCall&) { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without NCCL"); }
#endif
