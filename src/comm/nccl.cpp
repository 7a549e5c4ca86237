#include "comm/nccl.hpp"

#include "comm/wait.hpp"
#include "comm/slots.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"
#include "cuda/lazy_library.hpp"

#include <gdap/gdap_cuda.h>

#include <algorithm>
#include <cstring>

namespace gdap {

using cuda::check_cuda;

void check_nccl(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return;
  fail(GDAP_ERR_COMM, "{} failed: {}", what, ncclGetErrorString(result));
}

NcclComm::NcclComm(ncclComm_t comm, void* user_stream, int device, int64_t rank_, int64_t size_)
    : gdap_comm(rank_, size_), comm_(comm), device_(device) {
  stream = user_stream;
  cuda::set_device(device);
  check_cuda(cudaStreamCreateWithFlags(&control_, cudaStreamNonBlocking), "cudaStreamCreate");
}

NcclComm::~NcclComm() {
  cudaSetDevice(device_);
  // After a timeout a control collective may still be queued on the buffer: cudaFree would wait
  // for it (for ever, unless the caller aborted the NCCL communicator), so the buffers are left
  // to the end of the process.
  if (!broken_) {
    cudaFree(buffer_);
    cudaFreeHost(host_);
    cudaFreeHost(flag_);
  }
  cudaStreamDestroy(control_);
  if (switched_ != nullptr) cudaEventDestroy(switched_);
}

void NcclComm::set_stream(void* s) {
  if (s == stream) return;
  cuda::set_device(device_);
  if (switched_ == nullptr) check_cuda(cudaEventCreateWithFlags(&switched_, cudaEventDisableTiming), "cudaEventCreate");
  check_cuda(cudaEventRecord(switched_, static_cast<cudaStream_t>(stream)), "cudaEventRecord");
  check_cuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(s), switched_, 0), "cudaStreamWaitEvent");
  stream = s;
}

void NcclComm::check_usable() const {
  if (broken_) {
    fail(broken_status_, "rank {}: the NCCL communicator is broken: an earlier collective call {}", rank, broken_by_);
  }
}

void NcclComm::give_up(WaitEnd end, const char* what, const char* waiting_for) {
  broken_ = true;
  if (end == WaitEnd::interrupted) {
    broken_status_ = GDAP_ERR_INTERRUPTED;
    broken_by_ = "was interrupted";
    fail(GDAP_ERR_INTERRUPTED, "rank {}: {} was interrupted (the communicator's interrupt check returned non-zero) "
         "while it waited for {}; the communicator is broken from now on: call ncclCommAbort on the NCCL "
         "communicator before gdap_comm_destroy", rank, what, waiting_for);
  }
  broken_status_ = GDAP_ERR_TIMEOUT;
  broken_by_ = "timed out";
  fail(GDAP_ERR_TIMEOUT,
       "rank {}: {} did not complete within the communicator's timeout ({} s) waiting for {}: another rank did not "
       "make the same call (it failed, returned early or hangs); the communicator is broken from now on: call "
       "ncclCommAbort on the NCCL communicator before gdap_comm_destroy",
       rank, what, timeout, waiting_for);
}

// Waits for a stream up to the timeout. Polls rather than blocks so that it can give up: a peer
// that never joins leaves NCCL's kernel spinning, which cudaStreamSynchronize would wait for
// without end. NCCL's asynchronous error (a peer's abort, a network failure) ends the wait too.
void NcclComm::wait_stream(cudaStream_t s, const char* what, const char* waiting_for) {
  Waiting waiting(*this);
  for (;;) {
    const cudaError_t done = cudaStreamQuery(s);
    if (done == cudaSuccess) return;
    if (done != cudaErrorNotReady) check_cuda(done, what);
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) {
      broken_ = true;
      broken_status_ = async == ncclRemoteError ? GDAP_ERR_REMOTE : GDAP_ERR_COMM;
      broken_by_ = "met an asynchronous NCCL error";
      fail(async == ncclRemoteError ? GDAP_ERR_REMOTE : GDAP_ERR_COMM,
           "rank {}: {}: NCCL reported an asynchronous error: {}; the communicator is broken from now on", rank, what,
           ncclGetErrorString(async));
    }
    const WaitEnd end = waiting.after_poll();  // spins first: control is short
    if (end != WaitEnd::going_on) give_up(end, what, waiting_for);
  }
}

bool NcclComm::stream_flag(const std::function<void(int* flag)>& scan, const char* what) {
  check_usable();
  cuda::set_device(device_);
  if (flag_ == nullptr) check_cuda(cudaMallocHost(reinterpret_cast<void**>(&flag_), sizeof(int)), "cudaMallocHost (flag)");
  volatile int* flag = flag_;  // the device writes it: read it anew
  *flag = 0;
  scan(flag_);
  wait_stream(static_cast<cudaStream_t>(stream), what, "the work queued before it on the communicator's stream");
  return *flag != 0;
}

void NcclComm::settle(ncclResult_t result, const char* what) {
  Waiting waiting(*this);
  while (result == ncclInProgress) {
    check_nccl(ncclCommGetAsyncError(comm_, &result), "ncclCommGetAsyncError");
    if (result != ncclInProgress) break;
    const WaitEnd end = waiting.after_poll();
    if (end != WaitEnd::going_on) give_up(end, what, "NCCL to connect to a peer (ncclInProgress)");
  }
  if (result != ncclSuccess) {  // NCCL's communicator is unusable after an error
    broken_ = true;
    broken_status_ = GDAP_ERR_COMM;
    broken_by_ = "failed in NCCL";
  }
  check_nccl(result, what);
}

namespace {

// Grows a buffer of gdap's own to at least `bytes` (its contents are not kept).
template <typename Alloc, typename Release>
char* grow(char*& data, int64_t& have, int64_t bytes, Alloc alloc, Release release, const char* what) {
  if (bytes > have) {
    release(data);
    data = nullptr, have = 0;
    check_cuda(alloc(reinterpret_cast<void**>(&data), static_cast<size_t>(bytes)), what);
    have = bytes;
  }
  return data;
}

}  // namespace

char* NcclComm::control_buffer(int64_t bytes) {
  return grow(buffer_, buffer_bytes_, bytes, [](void** p, size_t n) { return cudaMalloc(p, n); }, cudaFree,
              "cudaMalloc (control buffer)");
}

char* NcclComm::host_buffer(int64_t bytes) {
  return grow(host_, host_bytes_, bytes, [](void** p, size_t n) { return cudaMallocHost(p, n); }, cudaFreeHost,
              "cudaMallocHost (control staging)");
}

// One ncclAllGather of equal slots: this rank's `slot` in, every rank's slots (rank order) out.
std::string NcclComm::gather_slots(std::string_view slot, const char* what) {
  const auto n = size;
  const auto bytes = static_cast<int64_t>(slot.size());
  char* h = host_buffer(bytes * (n + 1));
  char* d = control_buffer(bytes * (n + 1));
  std::memcpy(h + bytes * n, slot.data(), slot.size());
  check_cuda(cudaMemcpyAsync(d + bytes * n, h + bytes * n, slot.size(), cudaMemcpyHostToDevice, control_), "cudaMemcpyAsync");
  settle(ncclAllGather(d + bytes * n, d, slot.size(), ncclChar, comm_, control_), "ncclAllGather");
  check_cuda(cudaMemcpyAsync(h, d, static_cast<size_t>(bytes * n), cudaMemcpyDeviceToHost, control_), "cudaMemcpyAsync");
  wait_stream(control_, what, "its peers");
  return std::string(h, static_cast<size_t>(bytes * n));
}

// Every rank's bytes: gathered in slots (slots.hpp), none to gather on one rank.
std::vector<std::string> NcclComm::allgather(std::string_view mine) {
  check_usable();
  if (size == 1) return {std::string(mine)};  // nobody to meet: every call of one rank agrees with itself
  cuda::set_device(device_);
  return allgather_in_slots(next_meeting(*this), mine, static_cast<size_t>(size),
                            [&](std::string_view slot) { return gather_slots(slot, "the NCCL allgather of control bytes"); });
}

void NcclComm::barrier() { allgather({}); }

}  // namespace gdap

extern "C" GDAP_API gdap_status gdap_comm_from_nccl(gdap_comm** out, void* nccl_comm, void* stream) {
  return gdap::guard([&] {
    gdap::require(out, "out");
    gdap::require(nccl_comm, "nccl_comm");
    gdap::cuda::require_nccl("gdap_comm_from_nccl");  // loaded on first use (cuda/lazy_library.hpp)
    auto* comm = static_cast<ncclComm_t>(nccl_comm);
    int rank = 0, size = 0, device = 0;
    gdap::check_nccl(ncclCommUserRank(comm, &rank), "ncclCommUserRank");
    gdap::check_nccl(ncclCommCount(comm, &size), "ncclCommCount");
    gdap::check_nccl(ncclCommCuDevice(comm, &device), "ncclCommCuDevice");
    *out = new gdap::NcclComm(comm, stream, device, rank, size);
  });
}
