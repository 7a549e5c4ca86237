// gdap_allreduce: every rank's section becomes the element-wise reduction of all ranks' sections,
// in place (the all-reduce of replicated or partial sections). The checks and the agreement are
// shared; each kind of communicator has its engine: the group reads its peers' sections directly,
// MPI runs MPI_Allreduce, NCCL ncclAllReduce on the communicator's stream.
#pragma once

#include "comm/comm.hpp"

#include <gdap/gdap.h>

namespace gdap::move {

struct ReduceCall {
  gdap_comm& comm;
  gdap_array* section;
  gdap_reduce_op op;  // a gdap_reduce_op value, or 0 when the caller's was none (see requested_op)
  int requested_op;   // the caller's value, read as an int: an out-of-range enum must not be loaded
};

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

void allreduce_group(const ReduceCall& call);
void allreduce_mpi(const ReduceCall& call);
void allreduce_nccl(const ReduceCall& call);

}  // namespace gdap::move
