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
// every rank passed, passed rank 0's op, and has a section of rank 0's shape, dtype and memory.
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
void allreduce_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const HostBuffer& buffer);
// MPI_Iallreduce in place on `count` elements at `data`, in pieces of at most INT_MAX; `keep` is
// what an abandoned operation may still write.
void allreduce_mpi_in_place(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, void* data, int64_t count,
                            std::shared_ptr<void> keep);

// Collective, in place: the host buffer holds one segment of `segment` elements per rank, in rank
// order; this rank's segment of every rank's buffer is reduced element-wise with `op` (not mean)
// into `segment` elements of its own buffer, at the element offset returned (the rest of the
// buffer is then undefined): MPI leaves it at the start, the group in the rank's own segment.
// Group or MPI communicators; `segment` <= INT_MAX. Shared for the reason allreduce_buffer's is.
int64_t reduce_scatter_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const HostBuffer& buffer,
                              int64_t segment);
// The group's reduce-scatter: this rank's segment of every rank's `send` (one segment of `segment`
// elements per rank, in rank order) reduced into `recv` (which may be this rank's own segment of
// its `send`), at the rendezvous.
void reduce_scatter_group(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const char* send, char* recv,
                          int64_t segment);
// MPI_Ireduce_scatter_block of `segment` (<= INT_MAX) elements per rank: this rank's segment of
// every rank's `send` (one segment per rank, in rank order) reduced into `recv`; in place when
// `send` is NULL (`recv` then holds every segment and receives into its first). `keep` is what an
// abandoned operation may still use.
void reduce_scatter_mpi(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const void* send, void* recv,
                        int64_t segment, std::shared_ptr<void> keep);
// ncclReduceScatter on device memory: this rank's segment of every rank's `send` (one segment per
// rank, in rank order) reduced into `recv` (in place when recv is send + rank * segment elements;
// one rank copies). Queued on the communicator's stream.
void reduce_scatter_device_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const void* send, void* recv,
                                  int64_t segment);

void allreduce_group(const ReduceCall& call);
void allreduce_mpi(const ReduceCall& call);
void allreduce_nccl(const ReduceCall& call);

}  // namespace gdap::move
