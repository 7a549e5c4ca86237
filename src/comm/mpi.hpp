// gdap communicators over MPI: a duplicate of the caller's communicator, so gdap's messages never
// match the caller's, with errors returned (not fatal) and turned into GDAP_ERR_COMM.
//
// Every wait is bounded: gdap posts nonblocking operations and polls them (comm/wait.hpp) until the
// communicator's timeout (gdap_comm_set_timeout, 300 s by default) or the caller's interrupt check.
// A rank that never makes the matching call then costs the others GDAP_ERR_TIMEOUT, not a hang; the
// communicator is broken from then on (every later call fails at once), since abandoned operations
// may still be pending in MPI.
// gdap never calls MPI_Abort: the application decides (see docs/api.md, "Faults").
#pragma once

#include "comm/comm.hpp"

#include <mpi.h>

#include <span>

namespace gdap {

class MpiComm final : public gdap_comm {
 public:
  MpiComm(MPI_Comm comm, int64_t my_rank, int64_t ranks) : gdap_comm(my_rank, ranks), comm_(comm) {}
  ~MpiComm() override;
  gdap_comm_kind kind() const override { return GDAP_COMM_MPI; }
  std::vector<std::string> allgather(std::string_view mine) override;
  void barrier() override;
  MPI_Comm handle() const { return comm_; }

  // Throws what broke the communicator (GDAP_ERR_TIMEOUT or GDAP_ERR_INTERRUPTED) if a call did.
  void check_usable() const;
  // Polls `requests` until all complete, or until the timeout or the caller's interrupt check ends
  // the wait (wait.hpp): then what can be cancelled is (receives, so that nothing lands in a
  // caller's buffer later), point-to-point requests are freed, collective ones are left to MPI,
  // `keep` is kept alive with the communicator (buffers MPI may still use), the communicator breaks
  // and GDAP_ERR_TIMEOUT or GDAP_ERR_INTERRUPTED names `what`.
  void wait(std::span<MPI_Request> requests, const char* what, bool point_to_point,
            std::shared_ptr<void> keep = nullptr);

 private:
  MPI_Comm comm_;
  bool broken_ = false;
  gdap_status broken_status_ = GDAP_ERR_TIMEOUT;
  const char* broken_by_ = "";  // "timed out", "was interrupted", "failed in MPI"
  std::vector<std::shared_ptr<void>> abandoned_;  // what abandoned operations may still touch
};

// Throws GDAP_ERR_COMM naming `what` and MPI's message when `code` is not MPI_SUCCESS.
void check_mpi(int code, const char* what);

}  // namespace gdap
