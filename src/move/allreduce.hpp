// gdap_allreduce: every rank's section becomes the element-wise reduction of all ranks' sections,
// in place (the all-reduce of replicated or partial sections). The checks and the agreement are
// shared; each kind of communicator has its engine: the group reads its peers' sections directly,
// MPI runs MPI_Allreduce, NCCL ncclAllReduce on the communicator's stream.
#pragma once

#include "comm/comm.hpp"

#include <gdap/gdap.h>

#include <memory>
#include <vector>

namespace gdap::move {

struct ReduceCall {
  gdap_comm& comm;
  gdap_array* section;
  gdap_reduce_op op;  // a gdap_reduce_op value, or 0 when the caller's was none (see requested_op)
  int requested_op;   // the caller's value, read as an int: an out-of-range enum must not be loaded
};

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

// ncclAllReduce in place of `count` elements of device memory on an NCCL communicator's stream.
void allreduce_device_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, void* data, int64_t count);

// True for the dtypes gdap reduces: int8/32/64, uint8/32/64, float32/64.
bool reducible(gdap_dtype t);

// GDAP_ERR_UNSUPPORTED naming `which` (and the dtypes gdap reduces) unless reducible(t).
void check_reducible(gdap_dtype t, const char* which);

// This rank's own checks (a section, a dtype and an op gdap reduces, writable), then the agreement:
// every rank passed, and every rank's section has rank 0's shape, dtype and kind of memory.
void agree_reduce(const ReduceCall& call);

// True if the section is C-contiguous (its elements one after another in C order).
bool contiguous(const gdap_array& a);

// dst[i] = op(dst[i], src[i]) for `count` elements of the section's dtype, on the host.
void combine(gdap_dtype dtype, gdap_reduce_op op, void* dst, const void* src, int64_t count);

// Copies a section's elements into a C-ordered buffer and back (host memory).
void pack(const gdap_array& a, void* out);
void unpack(const void* in, gdap_array& a);

// Collective, in place: the host buffer's elements of `dtype` become the element-wise `op` (not
// mean) of every rank's buffer, bitwise the same on every rank. Group or MPI communicators (NCCL:
// GDAP_ERR_UNSUPPORTED, it reduces device memory). Shared: an MPI operation abandoned on a timeout
// keeps it alive.
using HostBuffer = std::shared_ptr<std::vector<char>>;
void allreduce_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const HostBuffer& buffer);
// MPI_Iallreduce in place on `count` elements at `data`, in pieces of at most INT_MAX; `keep` is
// what an abandoned operation may still write.
void allreduce_mpi_in_place(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, void* data, int64_t count,
                            std::shared_ptr<void> keep);

void allreduce_group(const ReduceCall& call);
void allreduce_mpi(const ReduceCall& call);
void allreduce_nccl(const ReduceCall& call);

}  // namespace gdap::move
