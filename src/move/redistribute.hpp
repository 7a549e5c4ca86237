// gdap_plan (one rank's part of a redistribution, with what its arrays must look like) and the
// executors that run it over each kind of communicator.
#pragma once

#include "comm/comm.hpp"
#include "move/copy.hpp"
#include "move/plan.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <optional>
#include <vector>

struct gdap_plan {
  gdap::move::RankPlan plan;
  gdap_dtype dtype{};
  int64_t element_size = 0;
  // This rank's local shapes (padding included), if it is part of each map.
  std::optional<std::vector<int64_t>> src_shape, dst_shape;
  gdap::move::RankStats stats;
  uint64_t serial = 0;  // unique per plan made in this process: a cache key that never recurs
  // The digest of the two maps and the dtype: every rank's plan of one redistribution has the
  // same, which the agreement checks before anything moves (a mismatch would hang an exchange).
  uint64_t fingerprint = 0;
};

namespace gdap::move {

// What every rank says when rank r's plan is not rank 0's (other maps or another dtype).
std::string plan_mismatch(size_t r);

// The plan's fingerprint as the token of the agreement (empty without a plan).
std::string plan_token(const gdap_plan* plan);

// Declares a section this rank's call reads or writes (comm/collective.hpp: the in-process group
// refuses a call in which a rank writes memory that any rank's call touches); NULL declares nothing.
void touches(gdap_comm& comm, const char* what, const gdap_array* a, bool written);

// GDAP_ERR_INVALID_ARGUMENT when `written` may share memory with `read` (array.hpp: overlapping
// byte spans, not only equal pointers): `call` works out of place.
void check_apart(const gdap_array& written, const char* written_name, const gdap_array& read, const char* read_name,
                 const char* call);

// Where a rank's two sections live, as the executors group memories.
enum class Memory { none, host, device };
Memory memory_of(const gdap_array* array);

// The checked arguments of one rank's call.
struct Call {
  gdap_comm& comm;
  const gdap_plan* plan;  // NULL is refused by check_call (after which it is never NULL)
  const gdap_array* src;  // NULL when the rank is outside the source map
  gdap_array* dst;        // NULL when the rank is outside the destination map
  Memory memory() const;  // host or device (checked to agree between src and dst)
};

// This rank's own checks of a call (a plan matching the communicator, arrays matching the plan).
// Executors run it inside their agreement step, so a rank that fails it still meets its peers.
void check_call(const Call& call);

// Copies of one part of the plan between two sides, for executors that need them on the host.
std::vector<Copy2D> part_copies(const RankPlan& plan, Part part, const Side& from, const Side& to, int64_t element_size);

// Executors; each assumes check_call passed on this rank and performs the agreement itself.
void run_group(const Call& call);
void run_mpi(const Call& call);
void run_nccl(const Call& call);

}  // namespace gdap::move
