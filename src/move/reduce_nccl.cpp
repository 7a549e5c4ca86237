// gdap_reduce_scatter and gdap_reduce_axes on an NCCL communicator: device sections on the
// communicator's GPU; the buffer is all-reduced with ncclAllReduce, all queued on its stream.
#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "move/allreduce.hpp"
#include "move/device.hpp"
#include "move/redistribute.hpp"
#include "move/reduce.hpp"

#include <memory>
#include <utility>

namespace gdap::move {

void check_nccl_sections(gdap_comm& comm, const gdap_array* source, const gdap_array* result) {
  const auto& nccl = dynamic_cast<const NcclComm&>(comm);
  for (const auto& [which, a] : {std::pair{"source", source}, std::pair{"result", result}}) {
    if (memory_of(a) != Memory::device) {
      fail(GDAP_ERR_UNSUPPORTED, "{} is not in CUDA device memory: on an NCCL communicator the reductions take device "
           "sections (host sections reduce on an in-process group or MPI)", which);
    }
    if (a->section.device.id != nccl.device()) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "{} is on GPU {} but the NCCL communicator on GPU {}", which, a->section.device.id,
           nccl.device());
    }
  }
}

void reduce_nccl(gdap_comm& comm, const DeviceReduction& r) {
  set_device(dynamic_cast<const NcclComm&>(comm).device());
  void* stream = comm.stream;
  std::unique_ptr<StreamBuffer> buffer;
  // Agreed: a rank that cannot allocate the buffer stops every rank, rather than leave them waiting.
  agree(comm, [&] {
    buffer = std::make_unique<StreamBuffer>(checked_mul(r.count, int64_t{r.dtype.bits / 8}, "bytes of the reduction buffer"),
                                            stream);
  });
  if (r.count == 0) return;  // the same on every rank: nothing to reduce or write
  reduce_partial_on_device(r, buffer->data(), stream);
  allreduce_device_buffer(comm, r.dtype, r.op, buffer->data(), r.count);
  write_result_on_device(r, buffer->data(), stream);
}

}  // namespace gdap::move
