// The reductions' C++ API (gdap_allreduce: allreduce.cpp; gdap_reduce_scatter and
// gdap_reduce_axes: reduce.cpp, with device.hpp for device sections) and what they share: ops and
// dtypes, the host combine step and the buffer a communicator keeps for them. The collective step itself is the
// communicator's engine's (exchange/engine.hpp: the group combines at its rendezvous with
// combine() below, MPI and NCCL reduce with their own operations).
#pragma once

#include "array/memory.hpp"
#include "comm/comm.hpp"
#include "exchange/engine.hpp"

#include <gdap/gdap.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gdap::reduce {

// "sum", "prod", "min", "max", "mean"; NULL for a value that is no gdap_reduce_op.
const char* op_name(gdap_reduce_op op);

// The caller's op read as an int (loading an enum from a value outside its range is undefined
// behaviour, and a C caller may pass any int), and the op itself: gdap_reduce_op{} (no op) when
// the value names none, so that the checks refuse it naming `value`.
struct OpArg {
  gdap_reduce_op op;
  int value;
};
OpArg op_arg(const gdap_reduce_op& raw);

// True for the dtypes gdap reduces: int8/32/64, uint8/32/64, float32/64.
bool reducible(gdap_dtype t);

// GDAP_ERR_UNSUPPORTED naming `which` (and the dtypes gdap reduces) unless reducible(t).
void check_reducible(gdap_dtype t, const char* which);

// True if the section is C-contiguous (its elements one after another in C order).
bool contiguous(const gdap_array& a);

// dst[i] = op(dst[i], src[i]) for `count` elements of the section's dtype, on the host: the
// combine step of the engines that reduce by copying.
void combine(gdap_dtype dtype, gdap_reduce_op op, void* dst, const void* src, int64_t count);

// How the engines reduce elements of `dtype` in `memory` with `op`; `keep`: what an MPI operation
// abandoned at a timeout may still use.
exchange::Reduce reduce_with(gdap_dtype dtype, gdap_reduce_op op, Memory memory, std::shared_ptr<void> keep = nullptr);

// A reduction's agreement also tells the ranks whether any one's data may hold a NaN
// (Engine::may_hold_nan), so that it costs no round of its own: this rank's answer as the first
// byte of its share, and from every rank's shares, whether none may (Reduce::nan_free).
char nan_byte(bool may_hold_nan);
bool nan_free(const std::vector<std::string>& shares);

// A host buffer for a reduction, shared: an MPI operation abandoned on a timeout keeps it alive.
struct HostBytes {
  explicit HostBytes(size_t n) : bytes(new char[n]), count(n), capacity(n) {}  // uninitialised: the owner fills them
  char* data() const { return bytes.get(); }
  size_t size() const { return count; }
  std::unique_ptr<char[]> bytes;
  size_t count;     // in use
  size_t capacity;  // allocated: a buffer kept for reuse may hold more than its call uses
};
using HostBuffer = std::shared_ptr<HostBytes>;

// A host buffer of `bytes` for a reduction on `comm`: the one the communicator kept from an
// earlier reduction when it is large enough and no abandoned MPI operation still holds it, else a
// new one, kept in its place. A fresh buffer costs a page fault per page on first touch, about
// the time of filling it, so keeping it makes repeated reductions cheaper (freed with the
// communicator).
HostBuffer reduction_buffer(gdap_comm& comm, size_t bytes);

// The cache key of the buffer a communicator keeps for its reductions (host or device).
constexpr const char* kBufferKey = "reduce.buffer";

// Collective, in place: every rank's section becomes the element-wise `op` of all ranks' sections
// (gdap_allreduce). Checks and agrees first: every rank's section has rank 0's shape, dtype and
// kind of memory, one the communicator's engine reduces.
void allreduce(gdap_comm& comm, gdap_array* section, const OpArg& op);

// Collective (gdap_reduce_scatter): the element-wise `op` of every rank's source section, each
// rank receiving what its result section owns. Both distributions are gathered and checked.
void reduce_scatter(gdap_comm& comm, const gdap_array* source, gdap_array* result, const OpArg& op);

// Collective (gdap_reduce_axes): `source` reduced with `op` over `naxes` axes (`axes` borrowed;
// NULL with naxes 0: every axis) into `result`, distributed as its dictionaries say.
void reduce_axes(gdap_comm& comm, const gdap_array* source, gdap_array* result, const OpArg& op, const int64_t* axes,
                 int64_t naxes);

}  // namespace gdap::reduce
