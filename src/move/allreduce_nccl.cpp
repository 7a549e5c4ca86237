// gdap_allreduce over NCCL: ncclAllReduce in place on a C-contiguous device section, queued on the
// communicator's stream (the call returns once it is queued).
#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "move/allreduce.hpp"
#include "move/device.hpp"
#include "move/redistribute.hpp"

namespace gdap::move {
namespace {

ncclDataType_t nccl_type(gdap_dtype t) {
  if (t.code == GDAP_DTYPE_FLOAT) return t.bits == 32 ? ncclFloat32 : ncclFloat64;
  const bool is_int = t.code == GDAP_DTYPE_INT;
  if (t.bits == 8) return is_int ? ncclInt8 : ncclUint8;
  if (t.bits == 32) return is_int ? ncclInt32 : ncclUint32;
  return is_int ? ncclInt64 : ncclUint64;
}

ncclRedOp_t nccl_op(gdap_reduce_op op) {
  switch (op) {
    case GDAP_REDUCE_SUM: return ncclSum;
    case GDAP_REDUCE_PROD: return ncclProd;
    case GDAP_REDUCE_MIN: return ncclMin;
    case GDAP_REDUCE_MAX: return ncclMax;
    case GDAP_REDUCE_MEAN: break;  // not element-wise: refused before any engine runs
  }
  return ncclSum;
}

}  // namespace

void allreduce_nccl(const ReduceCall& call) {
  gdap_array& a = *call.section;
  // Checked on every rank alike (the agreement made every rank's section match rank 0's layout,
  // strides aside): a refusal here is the same on every rank whose section is strided.
  if (memory_of(&a) != Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "an NCCL communicator reduces device sections; this one is in host memory");
  }
  if (!contiguous(a)) fail(GDAP_ERR_UNSUPPORTED, "an NCCL all-reduce needs a C-contiguous section");
  int64_t count = 1;
  for (int64_t e : a.section.shape) count *= e;
  allreduce_device_buffer(call.comm, a.section.dtype, call.op, a.data(), count);
}

void allreduce_device_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, void* data, int64_t count) {
  if (comm.size == 1) return;  // in place on one rank: nothing to combine
  auto& nccl = dynamic_cast<NcclComm&>(comm);
  nccl.settle(ncclAllReduce(data, data, static_cast<size_t>(count), nccl_type(dtype), nccl_op(op), nccl.handle(),
                            static_cast<cudaStream_t>(comm.stream)),
              "ncclAllReduce");
}

void reduce_scatter_device_buffer(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const void* send, void* recv,
                                  int64_t segment) {
  const auto stream = static_cast<cudaStream_t>(comm.stream);
  if (comm.size == 1) {  // one rank's segment is its buffer
    if (send != recv) {
      check_cuda(cudaMemcpyAsync(recv, send, static_cast<size_t>(segment * (dtype.bits / 8)), cudaMemcpyDeviceToDevice,
                                 stream),
                 "cudaMemcpyAsync");
    }
    return;
  }
  auto& nccl = dynamic_cast<NcclComm&>(comm);
  nccl.settle(ncclReduceScatter(send, recv, static_cast<size_t>(segment), nccl_type(dtype), nccl_op(op), nccl.handle(),
                                stream),
              "ncclReduceScatter");
}

}  // namespace gdap::move
