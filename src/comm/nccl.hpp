// gdap communicators over NCCL: the caller's ncclComm_t and stream. Control collectives (the
// agreement of gdap_redistribute, gdap_map_create_collective) run on a stream of gdap's own with
// a small device buffer, so they wait for themselves only, never for the caller's queued work;
// most take one ncclAllGather of fixed slots staged through pinned memory (none on one rank).
// They wait at most the communicator's timeout (gdap_comm_set_timeout) and until the caller's
// interrupt check says stop (comm/wait.hpp), watching NCCL's
// asynchronous error: a rank that never joins costs the others GDAP_ERR_TIMEOUT, not a hang, and
// the communicator is broken from then on (the ncclComm_t is the caller's to ncclCommAbort).
// NCCL >= 2.22 connects to peers lazily, inside the first call that needs them: on a blocking
// communicator that call blocks in NCCL until the peer answers, beyond any timeout of gdap's; on a
// nonblocking one it returns ncclInProgress, which settle() bounds (docs/api.md, timeouts).
#pragma once

#include "comm/comm.hpp"
#include "comm/wait.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>

namespace gdap {

class NcclComm final : public gdap_comm {
 public:
  NcclComm(ncclComm_t comm, void* user_stream, int device, int64_t rank, int64_t size);
  ~NcclComm() override;
  gdap_comm_kind kind() const override { return GDAP_COMM_NCCL; }
  std::vector<std::string> allgather(std::string_view mine) override;
  void barrier() override;
  // The new stream waits for the work queued on the old one: the engines reuse their staging
  // buffers, tables and reduction buffer from call to call, each call ordered on its stream only.
  void set_stream(void* s) override;
  ncclComm_t handle() const { return comm_; }
  int device() const { return device_; }
  // What an NCCL call that queues work returned, settled: on a nonblocking communicator
  // (ncclConfig_t blocking = 0) a call may return ncclInProgress while NCCL connects to the peers
  // it needs; this polls until NCCL is done, at most the communicator's timeout (then the
  // communicator is broken and the call GDAP_ERR_TIMEOUT). Other errors throw as check_nccl does.
  void settle(ncclResult_t result, const char* what);
  // Throws what broke the communicator (GDAP_ERR_TIMEOUT, GDAP_ERR_INTERRUPTED, ...) if a call did.
  void check_usable() const;
  // Queues `scan` on the communicator's stream with a flag it may set to non-zero (pinned host
  // memory the device writes, 0 before), waits for the stream and says whether it did. The wait
  // is bounded as the control stream's is (timeout, interrupt check, NCCL's asynchronous error):
  // the caller's queued work, and any earlier call's NCCL kernels, come first.
  bool stream_flag(const std::function<void(int* flag)>& scan, const char* what);

 private:
  char* control_buffer(int64_t bytes);
  char* host_buffer(int64_t bytes);
  std::string gather_slots(std::string_view slot, const char* what);
  // Polls `s` until it is done, at most the timeout; `waiting_for` names what it waits for.
  void wait_stream(cudaStream_t s, const char* what, const char* waiting_for);
  // Breaks the communicator and throws why a wait for `waiting_for` ended.
  [[noreturn]] void give_up(WaitEnd end, const char* what, const char* waiting_for);
  ncclComm_t comm_;
  int device_;
  cudaStream_t control_ = nullptr;
  cudaEvent_t switched_ = nullptr;  // recorded on the old stream at a set_stream
  char* buffer_ = nullptr;
  int64_t buffer_bytes_ = 0;
  char* host_ = nullptr;  // pinned staging of control bytes
  int* flag_ = nullptr;   // pinned, for stream_flag
  int64_t host_bytes_ = 0;
  bool broken_ = false;
  gdap_status broken_status_ = GDAP_ERR_TIMEOUT;
  const char* broken_by_ = "";
};

// Throws GDAP_ERR_COMM naming `what` and NCCL's message when `result` is not ncclSuccess.
void check_nccl(ncclResult_t result, const char* what);

}  // namespace gdap
