// Which collective call each rank is in. Every meeting of the ranks on a communicator (an
// allgather, a barrier, an in-process rendezvous) carries the C entry point the rank is in and how
// many meetings of that call came before, and the ranks compare them before they use what they
// exchanged: ranks that made different calls (one gdap_comm_barrier, another gdap_allreduce) all
// get the same clear error at that meeting, instead of reading each other's data as their own
// (the in-process group crashed so) or waiting for a message that never comes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

struct gdap_comm;

namespace gdap {

// Where a rank is when it meets the others. Plain bytes: MPI and NCCL gather it as it is (every
// rank runs the same build).
struct Meeting {
  std::array<char, 40> call{};  // the entry point's name, NUL-padded; "" outside any
  int64_t step = 0;             // meetings of this call before this one
  bool operator==(const Meeting&) const = default;
};

// Marks one collective C call on `comm` while it lives. Only the outermost counts: the
// redistributions inside gdap_gemm_execute are meetings of gdap_gemm_execute.
class CollectiveCall {
 public:
  CollectiveCall(gdap_comm& comm, const char* name);
  ~CollectiveCall();
  CollectiveCall(const CollectiveCall&) = delete;
  CollectiveCall& operator=(const CollectiveCall&) = delete;

 private:
  gdap_comm& comm_;
  bool outermost_;
};

// This rank's next meeting on `comm` (and counts it).
Meeting next_meeting(gdap_comm& comm);

// The ranks' verdict on their meetings (every rank's, in rank order): "" when all are rank 0's,
// else the text every rank reports, naming the first rank that differs.
std::string meetings_differ(const std::vector<Meeting>& all);

// Throws GDAP_ERR_INVALID_ARGUMENT with a verdict that is not "".
void check_verdict(const std::string& verdict);

}  // namespace gdap
