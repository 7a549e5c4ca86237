// Making redistribution plans, and gdap_redistribute's checks before its engine runs.
#include "plan/redistribute.hpp"

#include "array/array.hpp"
#include "array/layout.hpp"
#include "array/memory.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "exchange/engine.hpp"
#include "maps/map.hpp"
#include "protocol/dim.hpp"

#include <cstring>
#include <string>

namespace gdap::plan {

namespace {

// What the engines do with a redistribution's messages: MPI on one node reads them from the peers
// (cma), elsewhere sends them packed or whole (no datatypes); NCCL on one host writes them straight
// into the peers' sections.
constexpr exchange::Style kStyle{.name = "redistribution", .direct_writes = true, .cma_default = true};

std::optional<std::vector<int64_t>> local_shape(const gdap_map& map, int64_t rank) {
  if (rank >= map.nranks) return std::nullopt;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < map.ndim(); ++i) shape.push_back(local_extent(map.dim(rank, i)));
  return shape;
}

// What every rank says when rank r's plan is not rank 0's (other maps or another dtype).
std::string plan_mismatch(size_t r, std::string_view, std::string_view) {
  return fmt::format("the ranks' plans are of different redistributions: rank {}'s differs from rank 0's (made from "
                     "other maps or another dtype; every rank's plan of one redistribution comes from the same two "
                     "distributions and dtype); nothing moved", r);
}

// The plan's fingerprint as the token of the agreement (empty without a plan).
std::string plan_token(const gdap_plan* plan) {
  if (plan == nullptr) return {};
  std::string token(sizeof plan->fingerprint, '\0');
  std::memcpy(token.data(), &plan->fingerprint, sizeof plan->fingerprint);
  return token;
}

void check_array(const gdap_array* array, const std::optional<std::vector<int64_t>>& shape, const gdap_plan& plan,
                 const char* which) {
  if (!shape) return;  // outside this map: the rank holds nothing on this side, the array is ignored
  if (array == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "{} is NULL but this rank holds part of the {} map", which, which);
  const gdap_dtype d = handle(array, which).section.dtype;
  if (!same_dtype(d, plan.dtype)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} has dtype {} but the plan was made for {}", which, dtype_text(d),
         dtype_text(plan.dtype));
  }
  if (array->section.shape != *shape) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} has local shape {} but the {} map gives this rank {}", which,
         shape_text(array->section.shape), which, shape_text(*shape));
  }
}

// This rank's own checks of a call: a plan matching the communicator, arrays matching the plan.
void check_call(gdap_comm& comm, const gdap_plan* plan, const gdap_array* src, const gdap_array* dst) {
  const RankPlan& p = handle(plan, "plan").plan;
  if (p.rank() != comm.rank) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the plan is rank {}'s but the communicator is rank {}'s", p.rank(), comm.rank);
  }
  if (p.nranks() != comm.size) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the plan is for {} ranks but the communicator has {}", p.nranks(), comm.size);
  }
  check_array(src, plan->src_shape, *plan, "src");
  check_array(dst, plan->dst_shape, *plan, "dst");
  if (plan->dst_shape) check_destination(*dst, "dst");
  // A rank outside a map holds nothing on that side: its array there is neither checked nor touched.
  const gdap_array* src_held = plan->src_shape ? src : nullptr;
  const gdap_array* dst_held = plan->dst_shape ? dst : nullptr;
  if (src_held != nullptr && dst_held != nullptr) check_apart(*dst_held, "dst", *src_held, "src", "gdap_redistribute");
  exchange::touches(comm, "src", src_held, false);
  exchange::touches(comm, "dst", dst_held, true);
}

}  // namespace

std::unique_ptr<gdap_plan> make_plan(const gdap_map& src, const gdap_map& dst, gdap_dtype dtype, int64_t rank,
                                     std::vector<int64_t> roles) {
  const int64_t element_size = gdap::element_size(dtype);
  uint64_t roles_digest = 0;  // 0 for the identity, given or implied, so that both plan alike
  for (size_t r = 0; r < roles.size(); ++r) {
    if (roles[r] != static_cast<int64_t>(r)) roles_digest = roles_digest * 1000003 + static_cast<uint64_t>(roles[r]) + r + 1;
  }
  const Planner planner(src, dst, std::move(roles));
  if (rank < 0 || rank >= planner.nranks()) {
    fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is not in [0, {}) (the larger map's rank count)", rank, planner.nranks());
  }
  auto plan = std::make_unique<gdap_plan>();
  try {
    plan->plan = planner.plan_rank(rank);
  } catch (const std::bad_alloc&) {  // e.g. block to cyclic over INT64_MAX elements: that many runs
    fail(GDAP_ERR_NO_MEMORY, "rank {}: the plan's runs and segments do not fit in memory (global shape of {} "
         "dimensions, {} ranks)", rank, src.global_shape.size(), planner.nranks());
  }
  plan->program = plan->plan.program(element_size, kStyle);
  plan->dtype = dtype;
  plan->element_size = element_size;
  plan->src_shape = local_shape(src, rank);
  plan->dst_shape = local_shape(dst, planner.role(rank));
  plan->stats = plan->plan.stats(element_size);
  plan->fingerprint = digest(src) * 31 + digest(dst) * 7 + roles_digest * 131 +
                      ((uint64_t{dtype.code} << 32) | (uint64_t{dtype.bits} << 16) | dtype.lanes);
  return plan;
}

void redistribute(gdap_comm& comm, const gdap_plan* plan, const gdap_array* src, gdap_array* dst) {
  // Read before the agreement: a NULL or wrong-kind plan reads as none (the checks refuse it).
  const gdap_plan* tagged = if_tagged(plan);
  // A rank outside a map holds nothing on that side: its array there is ignored.
  exchange::Sections sections;
  if (tagged != nullptr) {
    sections.src = tagged->src_shape ? src : nullptr;
    sections.dst = tagged->dst_shape ? dst : nullptr;
  }
  static const exchange::Program none;  // what a rank without a plan names (its checks refuse it)
  exchange::engine_of(comm).run(tagged != nullptr ? tagged->program : none, sections,
                                exchange::Agreement{[&] { check_call(comm, plan, src, dst); }, plan_token(tagged), plan_mismatch});
}

}  // namespace gdap::plan
