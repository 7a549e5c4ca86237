// Redistribution: gdap_plan (one rank's part of moving arrays between two distributions, with what
// its arrays must look like) and the C++ API behind gdap_plan_create and gdap_redistribute, which
// the C shell (capi.cpp), GEMM and I/O call: the plan's checks and the agreement, then the
// communicator's engine runs the plan's exchange program. Gather, scatter, allgather and broadcast
// are redistributions to or from gdap_map_create_root's and gdap_map_create_replicated's maps.
#pragma once

#include "comm/comm.hpp"
#include "core/handle.hpp"
#include "exchange/program.hpp"
#include "plan/planner.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

struct gdap_plan : gdap::Tagged<gdap_plan> {
  gdap::plan::RankPlan plan;
  gdap::exchange::Program program;  // what the engines run
  gdap_dtype dtype{};
  int64_t element_size = 0;
  // This rank's local shapes (padding included), if it is part of each map.
  std::optional<std::vector<int64_t>> src_shape, dst_shape;
  gdap::plan::RankStats stats;
  // The digest of the two maps and the dtype: every rank's plan of one redistribution has the
  // same, which the agreement checks before anything moves (a mismatch would hang an exchange).
  uint64_t fingerprint = 0;
};

namespace gdap::plan {

// Rank `rank`'s plan of moving arrays of `dtype` from `src` to `dst` (both borrowed for the call).
// GDAP_ERR_OUT_OF_RANGE for a rank outside [0, the larger map's rank count). `roles`: empty, or
// the destination role of every rank (planner.hpp, "Roles"): this rank's destination section is
// then role roles[rank]'s.
std::unique_ptr<gdap_plan> make_plan(const gdap_map& src, const gdap_map& dst, gdap_dtype dtype, int64_t rank,
                                     std::vector<int64_t> roles = {});

// Collective: every rank's `src` section moves into the `dst` sections as its plan says (NULL
// where the rank is outside that map). Checks and agrees first: nothing moves unless every rank's
// arguments are good and every rank's plan is of the same redistribution.
void redistribute(gdap_comm& comm, const gdap_plan* plan, const gdap_array* src, gdap_array* dst);

}  // namespace gdap::plan
