#include "comm/nccl.hpp"

#include "core/error.hpp"
#include "move/device.hpp"

#include <gdap/gdap_cuda.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace gdap {

using move::check_cuda;

void check_nccl(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return;
  fail(GDAP_ERR_COMM, "{} failed: {}", what, ncclGetErrorString(result));
}

NcclComm::NcclComm(ncclComm_t comm, void* user_stream, int device, int64_t rank_, int64_t size_)
    : gdap_comm(rank_, size_), comm_(comm), device_(device) {
  stream = user_stream;
  move::set_device(device);
  check_cuda(cudaStreamCreateWithFlags(&control_, cudaStreamNonBlocking), "cudaStreamCreate");
}

NcclComm::~NcclComm() {
  cudaSetDevice(device_);
  // After a timeout a control collective may still be queued on the buffer: cudaFree would wait
  // for it (for ever, unless the caller aborted the NCCL communicator), so the buffer is left to
  // the end of the process.
  if (!broken_) cudaFree(buffer_);
  cudaStreamDestroy(control_);
}

void NcclComm::set_timeout(double seconds) {
  gdap_comm::set_timeout(seconds);
  timeout_ = seconds;
}

void NcclComm::check_usable() const {
  if (broken_) {
    fail(GDAP_ERR_TIMEOUT, "rank {}: the NCCL communicator is broken: an earlier collective call timed out", rank);
  }
}

// Waits for the control stream up to the timeout. Polls rather than blocks so that it can give up:
// a peer that never joins leaves NCCL's kernel spinning, which cudaStreamSynchronize would wait
// for without end. NCCL's asynchronous error (a peer's abort, a network failure) ends the wait too.
void NcclComm::wait_control(const char* what) {
  const auto start = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    const cudaError_t done = cudaStreamQuery(control_);
    if (done == cudaSuccess) return;
    if (done != cudaErrorNotReady) check_cuda(done, what);
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) {
      broken_ = true;
      fail(async == ncclRemoteError ? GDAP_ERR_REMOTE : GDAP_ERR_COMM,
           "rank {}: {}: NCCL reported an asynchronous error: {}; the communicator is broken from now on", rank, what,
           ncclGetErrorString(async));
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_) break;
    if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(100));  // spin first: control is short
  }
  broken_ = true;
  fail(GDAP_ERR_TIMEOUT,
       "rank {}: {} did not complete within the communicator's timeout ({} s): another rank did not make the same "
       "call (it failed, returned early or hangs); the communicator is broken from now on: call ncclCommAbort on "
       "the NCCL communicator before gdap_comm_destroy",
       rank, what, timeout_);
}

char* NcclComm::control_buffer(int64_t bytes) {
  if (bytes > buffer_bytes_) {
    cudaFree(buffer_);
    buffer_ = nullptr, buffer_bytes_ = 0;
    check_cuda(cudaMalloc(&buffer_, static_cast<size_t>(bytes)), "cudaMalloc (control buffer)");
    buffer_bytes_ = bytes;
  }
  return buffer_;
}

// Two NCCL allgathers: every rank's length, then every rank's bytes padded to the longest.
std::vector<std::string> NcclComm::allgather(std::string_view mine) {
  check_usable();
  move::set_device(device_);
  const auto n = static_cast<size_t>(size);
  std::vector<int64_t> lengths(n);
  int64_t* d_lengths = reinterpret_cast<int64_t*>(control_buffer(static_cast<int64_t>(sizeof(int64_t) * (n + 1))));
  const auto length = static_cast<int64_t>(mine.size());
  check_cuda(cudaMemcpyAsync(d_lengths + n, &length, sizeof length, cudaMemcpyHostToDevice, control_), "cudaMemcpyAsync");
  check_nccl(ncclAllGather(d_lengths + n, d_lengths, 1, ncclInt64, comm_, control_), "ncclAllGather");
  check_cuda(cudaMemcpyAsync(lengths.data(), d_lengths, sizeof(int64_t) * n, cudaMemcpyDeviceToHost, control_),
             "cudaMemcpyAsync");
  wait_control("the NCCL allgather of lengths");
  const int64_t longest = std::max<int64_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  char* d = control_buffer(longest * static_cast<int64_t>(n + 1));
  std::string padded(static_cast<size_t>(longest), '\0');
  std::memcpy(padded.data(), mine.data(), mine.size());
  std::string all(static_cast<size_t>(longest) * n, '\0');
  check_cuda(cudaMemcpyAsync(d + longest * static_cast<int64_t>(n), padded.data(), padded.size(), cudaMemcpyHostToDevice, control_),
             "cudaMemcpyAsync");
  check_nccl(ncclAllGather(d + longest * static_cast<int64_t>(n), d, static_cast<size_t>(longest), ncclChar, comm_, control_),
             "ncclAllGather");
  check_cuda(cudaMemcpyAsync(all.data(), d, all.size(), cudaMemcpyDeviceToHost, control_), "cudaMemcpyAsync");
  wait_control("the NCCL allgather of control bytes");
  std::vector<std::string> out;
  for (size_t r = 0; r < n; ++r) out.push_back(all.substr(r * static_cast<size_t>(longest), static_cast<size_t>(lengths[r])));
  return out;
}

void NcclComm::barrier() { allgather({}); }

}  // namespace gdap

extern "C" GDAP_API gdap_status gdap_comm_from_nccl(gdap_comm** out, void* nccl_comm, void* stream) {
  return gdap::guard([&] {
    gdap::require(out, "out");
    gdap::require(nccl_comm, "nccl_comm");
    auto* comm = static_cast<ncclComm_t>(nccl_comm);
    int rank = 0, size = 0, device = 0;
    gdap::check_nccl(ncclCommUserRank(comm, &rank), "ncclCommUserRank");
    gdap::check_nccl(ncclCommCount(comm, &size), "ncclCommCount");
    gdap::check_nccl(ncclCommCuDevice(comm, &device), "ncclCommCuDevice");
    *out = new gdap::NcclComm(comm, stream, device, rank, size);
  });
}
