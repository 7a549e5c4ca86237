// gdap communicators over MPI: a duplicate of the caller's communicator, so gdap's messages never
// match the caller's, with errors returned (not fatal) and turned into GDAP_ERR_COMM.
#pragma once

#include "comm/comm.hpp"

#include <mpi.h>

namespace gdap {

class MpiComm final : public gdap_comm {
 public:
  MpiComm(MPI_Comm comm, int64_t my_rank, int64_t ranks) : gdap_comm(my_rank, ranks), comm_(comm) {}
  ~MpiComm() override;
  gdap_comm_kind kind() const override { return GDAP_COMM_MPI; }
  std::vector<std::string> allgather(std::string_view mine) override;
  void barrier() override;
  MPI_Comm handle() const { return comm_; }

 private:
  MPI_Comm comm_;
};

// Throws GDAP_ERR_COMM naming `what` and MPI's message when `code` is not MPI_SUCCESS.
void check_mpi(int code, const char* what);

}  // namespace gdap
