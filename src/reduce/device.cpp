// gdap_reduce_scatter and gdap_reduce_axes on device sections (on an NCCL communicator's GPU, as
// its engine checked): the buffer is all-reduced or reduce-scattered by the engine
// (reduce_buffer.hpp), all queued on the communicator's stream.
#include "reduce/device.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"
#include "exchange/engine.hpp"
#include "reduce/reduction.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <utility>

namespace gdap::reduce {

namespace {

// The reduction buffer, kept on the communicator between calls and freed with it: allocating a
// large buffer anew maps fresh device memory, milliseconds per GiB on every call. A later call's
// use is ordered after an earlier one's by the communicator's stream (NcclComm::set_stream orders
// a new stream after the old); `done`, recorded after each call's last use, lets the destructor
// wait for it on whatever stream it was.
struct KeptDeviceBuffer : Scratch {
  void* data = nullptr;
  int64_t bytes = 0;
  int device = 0;
  cudaEvent_t done = nullptr;
  ~KeptDeviceBuffer() override {
    if (data == nullptr && done == nullptr) return;
    const cuda::DeviceScope on(device);
    if (done != nullptr) cudaEventSynchronize(done);  // the caller's streams may be gone: wait, then free
    if (data != nullptr) cudaFreeAsync(data, nullptr);
    if (done != nullptr) cudaEventDestroy(done);
  }
};

// This call's buffer of `bytes` on the communicator's device (set by the caller).
KeptDeviceBuffer& reduction_buffer_on_device(gdap_comm& comm, int device, int64_t bytes) {
  auto* kept = &comm.cache.get<KeptDeviceBuffer>(kBufferKey);
  kept->device = device;
  if (kept->bytes < bytes) {
    // From the stream-ordered pool, like the kernels' small per-call buffers, which then find room
    // beside it instead of mapping memory of their own on every call (measured: 0.1 to 0.25 ms a call).
    const auto stream = static_cast<cudaStream_t>(comm.stream);
    if (kept->data != nullptr) cuda::check_cuda(cudaFreeAsync(kept->data, stream), "cudaFreeAsync");  // after its last use
    kept->data = nullptr;
    kept->bytes = 0;
    const cudaError_t e = cudaMallocAsync(&kept->data, static_cast<size_t>(bytes), stream);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      fail(GDAP_ERR_NO_MEMORY, "no device memory for a {}-byte reduction buffer", bytes);
    }
    cuda::check_cuda(e, "cudaMallocAsync");
    kept->bytes = bytes;
  }
  return *kept;
}

// Records the buffer's last use on the communicator's stream when the call ends, however it ends.
struct UseEnds {
  KeptDeviceBuffer& kept;
  void* stream;
  ~UseEnds() {
    if (kept.done == nullptr && cudaEventCreateWithFlags(&kept.done, cudaEventDisableTiming) != cudaSuccess) return;
    cudaEventRecord(kept.done, static_cast<cudaStream_t>(stream));
  }
};

// The buffer's elements: the whole buffer, unless the source is read in place (then this rank's
// segment, or nothing when it is received into the result).
int64_t buffer_elements(const DeviceReduction& r) {
  if (r.segment == 0 || !r.source_is_buffer) return r.count;
  return r.result_is_segment ? 0 : r.segment;
}

}  // namespace

void reduce_on_device(exchange::Engine& engine, gdap_comm& comm, const DeviceReduction& r) {
  const int device = r.device;
  cuda::set_device(device);
  void* stream = comm.stream;
  const int64_t es = r.dtype.bits / 8;
  KeptDeviceBuffer* kept = nullptr;
  // Agreed: a rank that cannot allocate the buffer stops every rank, rather than leave them waiting.
  agree(comm, [&] {
    kept = &reduction_buffer_on_device(comm, device, checked_mul(buffer_elements(r), es, "bytes of the reduction buffer"));
  });
  const UseEnds ends{*kept, stream};
  const exchange::Reduce with = reduce_with(r.dtype, r.op, Memory::device);
  void* buffer = kept->data;
  if (r.count == 0) return;  // the same on every rank: nothing to reduce or write
  if (r.segment == 0) {
    reduce_partial_on_device(r, buffer, stream);
    engine.allreduce(buffer, r.count, with);
    write_result_on_device(r, buffer, stream);
    return;
  }
  if (!r.source_is_buffer) reduce_partial_on_device(r, buffer, stream);
  const void* send = r.source_is_buffer ? r.source : buffer;
  void* recv = r.result_is_segment ? r.result
               : r.source_is_buffer ? buffer
                                    : static_cast<char*>(buffer) + comm.rank * r.segment * es;  // in place
  engine.reduce_scatter(send, recv, r.segment, with);
  if (!r.result_is_segment) write_result_on_device(r, recv, stream);
}

}  // namespace gdap::reduce
