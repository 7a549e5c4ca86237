// gdap_reduce_scatter and gdap_reduce_axes on device sections (on an NCCL communicator's GPU, as
// its engine checked): the buffer is all-reduced or reduce-scattered by the engine
// (reduce_buffer.hpp), all queued on the communicator's stream. This rank's partial is queued
// before the agreement, so that a float min or max can say there whether it holds a NaN (the
// engine's scan, waited for on the host: NCCL then skips its order keys when no rank's does).
#include "reduce/device.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"
#include "exchange/engine.hpp"
#include "reduce/reduction.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  UseEnds(KeptDeviceBuffer& buffer, void* on) : kept(buffer), stream(on) {}
  UseEnds(const UseEnds&) = delete;
  UseEnds& operator=(const UseEnds&) = delete;
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

// Whether the engine's step reads the buffer (this rank's partial reduced into it) rather than the
// source as it is.
bool reads_buffer(const DeviceReduction& r) { return r.segment == 0 || !r.source_is_buffer; }

// This rank's part of the agreement: the buffer, this rank's partial in it, and whether what the
// engine's step reads may hold a NaN (the engine's answer, which waits for the partial when it looks).
bool prepare(exchange::Engine& engine, gdap_comm& comm, const DeviceReduction& r, KeptDeviceBuffer*& kept,
             std::optional<UseEnds>& ends) {
  const int64_t es = r.dtype.bits / 8;
  kept = &reduction_buffer_on_device(comm, r.device, checked_mul(buffer_elements(r), es, "bytes of the reduction buffer"));
  ends.emplace(*kept, comm.stream);
  if (r.count == 0) return false;  // the same on every rank: nothing is reduced
  if (reads_buffer(r)) reduce_partial_on_device(r, kept->data, comm.stream);
  const void* read = reads_buffer(r) ? kept->data : r.source;
  const int64_t elements = r.segment == 0 ? r.count : r.segment * comm.size;  // what the engine reads
  return engine.may_hold_nan(read, elements, reduce_with(r.dtype, r.op, Memory::device));
}

}  // namespace

void reduce_on_device(exchange::Engine& engine, gdap_comm& comm, const DeviceReduction& r) {
  cuda::set_device(r.device);
  void* stream = comm.stream;
  const int64_t es = r.dtype.bits / 8;
  KeptDeviceBuffer* kept = nullptr;
  std::optional<UseEnds> ends;  // from the buffer's first use, however the call ends
  // Agreed: a rank that cannot allocate the buffer stops every rank, rather than leave them
  // waiting; and the ranks learn whether any one's data may hold a NaN, in the same round.
  const std::vector<std::string> shares = agree_gather(comm, [&] {
    return Share{{}, std::string(1, nan_byte(prepare(engine, comm, r, kept, ends)))};
  }, [](size_t, std::string_view, std::string_view) { return std::string(); });
  exchange::Reduce with = reduce_with(r.dtype, r.op, Memory::device);
  with.nan_free = nan_free(shares);
  void* buffer = kept->data;
  if (r.count == 0) return;  // the same on every rank: nothing to reduce or write
  if (r.segment == 0) {
    engine.allreduce(buffer, r.count, with);
    write_result_on_device(r, buffer, stream);
    return;
  }
  const void* send = r.source_is_buffer ? r.source : buffer;
  void* recv = r.result_is_segment ? r.result
               : r.source_is_buffer ? buffer
                                    : static_cast<char*>(buffer) + comm.rank * r.segment * es;  // in place
  engine.reduce_scatter(send, recv, r.segment, with);
  if (!r.result_is_segment) write_result_on_device(r, recv, stream);
}

}  // namespace gdap::reduce
