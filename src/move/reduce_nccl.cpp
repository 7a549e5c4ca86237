// gdap_reduce_scatter and gdap_reduce_axes on an NCCL communicator: device sections on the
// communicator's GPU; the buffer is all-reduced with ncclAllReduce or reduce-scattered with
// ncclReduceScatter (reduce_buffer.hpp), all queued on its stream.
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

namespace {

// The reduction buffer, kept on the communicator between calls and freed with it: allocating a
// large buffer anew maps fresh device memory, milliseconds per GiB on every call. A communicator
// queues all its work on its one stream, so a later call's use is ordered after an earlier one's.
struct KeptDeviceBuffer : Scratch {
  std::unique_ptr<StreamBuffer> buffer;
  int64_t bytes = 0;
};

void* reduction_buffer_on_device(gdap_comm& comm, int64_t bytes) {
  auto* kept = dynamic_cast<KeptDeviceBuffer*>(comm.reduce_scratch.get());
  if (kept == nullptr) {
    comm.reduce_scratch = std::make_unique<KeptDeviceBuffer>();
    kept = static_cast<KeptDeviceBuffer*>(comm.reduce_scratch.get());
  }
  if (kept->bytes < bytes) {
    kept->buffer.reset();  // freed in stream order, after the work that used it
    kept->bytes = 0;
    kept->buffer = std::make_unique<StreamBuffer>(bytes, comm.stream);
    kept->bytes = bytes;
  }
  return kept->buffer ? kept->buffer->data() : nullptr;
}

}  // namespace

// The buffer's elements: the whole buffer, unless the source is read in place (then this rank's
// segment, or nothing when it is received into the result).
int64_t buffer_elements(const DeviceReduction& r) {
  if (r.segment == 0 || !r.source_is_buffer) return r.count;
  return r.result_is_segment ? 0 : r.segment;
}

void reduce_nccl(gdap_comm& comm, const DeviceReduction& r) {
  set_device(dynamic_cast<const NcclComm&>(comm).device());
  void* stream = comm.stream;
  const int64_t es = r.dtype.bits / 8;
  void* buffer = nullptr;
  // Agreed: a rank that cannot allocate the buffer stops every rank, rather than leave them waiting.
  agree(comm, [&] {
    buffer = reduction_buffer_on_device(comm, checked_mul(buffer_elements(r), es, "bytes of the reduction buffer"));
  });
  if (r.count == 0) return;  // the same on every rank: nothing to reduce or write
  if (r.segment == 0) {
    reduce_partial_on_device(r, buffer, stream);
    allreduce_device_buffer(comm, r.dtype, r.op, buffer, r.count);
    write_result_on_device(r, buffer, stream);
    return;
  }
  if (!r.source_is_buffer) reduce_partial_on_device(r, buffer, stream);
  const void* send = r.source_is_buffer ? r.source : buffer;
  void* recv = r.result_is_segment ? r.result
               : r.source_is_buffer ? buffer
                                    : static_cast<char*>(buffer) + comm.rank * r.segment * es;  // in place
  reduce_scatter_device_buffer(comm, r.dtype, r.op, send, recv, r.segment);
  if (!r.result_is_segment) write_result_on_device(r, recv, stream);
}

}  // namespace gdap::move
