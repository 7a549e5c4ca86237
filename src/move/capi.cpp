// C entry points of the data-movement layer: plans and gdap_redistribute.
#include "array/array.hpp"
#include "array/layout.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "maps/map.hpp"
#include "move/redistribute.hpp"
#include "protocol/dim.hpp"

#include <atomic>

using gdap::fail;
using gdap::guard;
using gdap::require;

namespace {

std::optional<std::vector<int64_t>> local_shape(const gdap_map& map, int64_t rank) {
  if (rank >= map.nranks) return std::nullopt;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < map.ndim(); ++i) shape.push_back(gdap::local_extent(map.dim(rank, i)));
  return shape;
}

}  // namespace

extern "C" {

GDAP_API gdap_status gdap_plan_create(gdap_plan** out, const gdap_map* src, const gdap_map* dst, gdap_dtype dtype,
                                      int64_t rank) {
  return guard([&] {
    require(out, "out");
    require(src, "src");
    require(dst, "dst");
    const int64_t element_size = gdap::element_size(dtype);
    const gdap::move::Planner planner(*src, *dst);
    if (rank < 0 || rank >= planner.nranks()) {
      fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is not in [0, {}) (the larger map's rank count)", rank, planner.nranks());
    }
    static std::atomic<uint64_t> serials{0};
    gdap::move::RankPlan rank_plan;
    try {
      rank_plan = planner.plan_rank(rank);
    } catch (const std::bad_alloc&) {  // e.g. block to cyclic over INT64_MAX elements: that many runs
      fail(GDAP_ERR_NO_MEMORY, "rank {}: the plan's runs and segments do not fit in memory (global shape of {} "
           "dimensions, {} ranks)", rank, src->global_shape.size(), planner.nranks());
    }
    auto plan = std::make_unique<gdap_plan>(gdap_plan{std::move(rank_plan), dtype, element_size,
                                                      local_shape(*src, rank), local_shape(*dst, rank), {}, ++serials});
    plan->stats = plan->plan.stats(element_size);
    plan->fingerprint = gdap::digest(*src) * 31 + gdap::digest(*dst) * 7 +
                        ((uint64_t{dtype.code} << 32) | (uint64_t{dtype.bits} << 16) | dtype.lanes);
    *out = plan.release();
  });
}

GDAP_API gdap_status gdap_plan_destroy(gdap_plan* plan) {
  return guard([&] { delete plan; });
}

GDAP_API gdap_status gdap_plan_stats_get(gdap_plan_stats* stats, const gdap_plan* plan) {
  return guard([&] {
    require(plan, "plan");
    const gdap::move::RankStats& s = plan->stats;
    gdap::write_versioned(stats,
                          gdap_plan_stats{sizeof(gdap_plan_stats), 0, plan->plan.rank(), plan->plan.nranks(),
                                          s.send_messages, s.recv_messages, s.send_bytes, s.recv_bytes, s.local_bytes,
                                          s.send_runs, s.recv_runs, s.local_runs},
                          "stats", "GDAP_PLAN_STATS_INIT");
  });
}

GDAP_API gdap_status gdap_redistribute(gdap_comm* comm, const gdap_plan* plan, const gdap_array* src, gdap_array* dst) {
  return guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    const gdap::CollectiveCall collective(c, "gdap_redistribute");
    const gdap::move::Call call{c, plan, src, dst};
    switch (c.kind()) {
      case GDAP_COMM_GROUP: return gdap::move::run_group(call);
      case GDAP_COMM_MPI: return gdap::move::run_mpi(call);
      case GDAP_COMM_NCCL: return gdap::move::run_nccl(call);
    }
    fail(GDAP_ERR_INTERNAL, "communicator of unknown kind {}", static_cast<int>(c.kind()));
  });
}

}  // extern "C"

