// Which collective call each rank is in. Every meeting of the ranks on a communicator (an
// allgather, a barrier, an in-process rendezvous) carries the C entry point the rank is in and how
// many meetings of that call came before, and the ranks compare them before they use what they
// exchanged: ranks that made different calls (one gdap_comm_barrier, another gdap_allreduce) all
// get the same clear error at that meeting, instead of reading each other's data as their own
// (the in-process group crashed so) or waiting for a message that never comes.
#pragma once

#include "core/footprint.hpp"
#include "cuda/device.hpp"

#include <array>
#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

struct gdap_comm;

namespace gdap {

// Where a rank is when it meets the others. Plain bytes: MPI and NCCL gather it as it is (every
// rank runs the same build).
struct Meeting {
  std::array<char, 40> call{};  // the entry point's name, NUL-padded; "" outside any
  int64_t step = 0;             // meetings of this call before this one
  // By hand, not defaulted: CUDA sources that include this header compile as C++17.
  bool operator==(const Meeting& o) const { return call == o.call && step == o.step; }
};

// Memory a rank's collective call touches (a section's strided bytes, core/footprint.hpp),
// declared by the call's own checks, so that the in-process group, whose ranks share one address
// space, refuses a call in which a rank writes memory that another rank reads or writes, or that
// it reads itself. Sections that only interleave (even and odd columns of one buffer) share no
// byte and pass.
struct Region {
  const char* what;  // the argument's name: "dst", "section"
  Footprint bytes;   // in this process's address space
  bool written;
  // Where these bytes lie in a shared-memory segment that other processes may map too (gdap's own,
  // array/shared_segment.hpp), so that ranks in different processes can compare them: the segment's
  // name, device and inode, and the footprint with its base as an offset in the segment. An empty
  // name: in no such segment.
  std::string segment{};
  uint64_t segment_device = 0, segment_inode = 0;
  Footprint segment_bytes{};
};

// Marks one collective C call on `comm` while it lives. Only the outermost counts: the
// redistributions inside gdap_gemm_execute are meetings of gdap_gemm_execute, and the memory they
// touch is gdap's own or what gdap_gemm_execute declared. It also leaves the caller's current CUDA
// device as it found it (cuda::CallerDevice): every collective call that may switch devices (the
// engines, NCCL's control collectives) has one.
class CollectiveCall {
 public:
  CollectiveCall(gdap_comm& comm, const char* name);
  ~CollectiveCall();
  CollectiveCall(const CollectiveCall&) = delete;
  CollectiveCall& operator=(const CollectiveCall&) = delete;

 private:
  cuda::CallerDevice device_;
  gdap_comm& comm_;
  bool outermost_;
};

// This rank's next meeting on `comm` (and counts it).
Meeting next_meeting(gdap_comm& comm);

// Declares memory this rank's call touches (ignored inside a nested call, see CollectiveCall).
void touches(gdap_comm& comm, const Region& region);

// The ranks' verdict on the memory their call touches (every rank's regions, in rank order): "" when
// no written region shares a byte with another region, else the text every rank reports.
std::string regions_clash(const std::vector<const std::vector<Region>*>& by_rank);

// The same verdict for ranks in different processes (MPI, NCCL), from every rank's regions that lie
// in a shared-memory segment: "" when no rank writes bytes of a segment that another rank's call
// touches, else the text every rank reports (both ranks, the segment and the bytes). The regions
// travel in the agreement (packed_segment_regions / unpack_segment_regions).
std::string segments_clash(const std::vector<std::vector<Region>>& by_rank);
std::string packed_segment_regions(const std::vector<Region>& touched);
std::vector<Region> unpack_segment_regions(std::string_view bytes);

// The ranks' verdict on their meetings (every rank's, in rank order): "" when all are rank 0's,
// else the text every rank reports, naming the first rank that differs.
std::string meetings_differ(const std::vector<Meeting>& all);

// Throws GDAP_ERR_INVALID_ARGUMENT with a verdict that is not "".
void check_verdict(const std::string& verdict);

}  // namespace gdap
