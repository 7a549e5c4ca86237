// C entry points of redistribution: plans and gdap_redistribute (the C++ API is redistribute.hpp).
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "plan/redistribute.hpp"

#include <algorithm>
#include <vector>

using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_plan_create(gdap_plan** out, const gdap_map* src, const gdap_map* dst, gdap_dtype dtype,
                                      int64_t rank) {
  return guard([&] {
    require(out, "out");
    *out = gdap::plan::make_plan(gdap::handle(src, "src"), gdap::handle(dst, "dst"), dtype, rank).release();
  });
}

GDAP_API gdap_status gdap_plan_roles_keeping(int64_t* roles, int64_t nroles, const gdap_map* src, const gdap_map* dst) {
  return guard([&] {
    require(roles, "roles");
    const std::vector<int64_t> keeping =
        gdap::plan::Planner(gdap::handle(src, "src"), gdap::handle(dst, "dst")).keeping_roles();
    if (nroles != static_cast<int64_t>(keeping.size())) {
      gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "nroles is {} but the plan has {} ranks (one role per rank)", nroles,
                 keeping.size());
    }
    std::copy(keeping.begin(), keeping.end(), roles);
  });
}

GDAP_API gdap_status gdap_plan_create_with_roles(gdap_plan** out, const gdap_map* src, const gdap_map* dst,
                                                 gdap_dtype dtype, int64_t rank, const int64_t* roles, int64_t nroles) {
  return guard([&] {
    require(out, "out");
    const gdap_map& s = gdap::handle(src, "src");
    const gdap_map& d = gdap::handle(dst, "dst");
    require(roles, "roles");
    const int64_t nranks = std::max(s.nranks, d.nranks);
    if (nroles != nranks) {
      gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "nroles is {} but the plan has {} ranks (one role per rank)", nroles, nranks);
    }
    *out = gdap::plan::make_plan(s, d, dtype, rank, std::vector<int64_t>(roles, roles + nroles)).release();
  });
}

GDAP_API gdap_status gdap_plan_destroy(gdap_plan* plan) {
  return guard([&] { delete gdap::handle_or_null(plan, "plan"); });
}

GDAP_API gdap_status gdap_plan_stats_get(gdap_plan_stats* stats, const gdap_plan* plan) {
  return guard([&] {
    const gdap_plan& p = gdap::handle(plan, "plan");
    const gdap::plan::RankStats& s = p.stats;
    gdap::write_versioned(stats,
                          gdap_plan_stats{sizeof(gdap_plan_stats), 0, p.plan.rank(), p.plan.nranks(),
                                          s.send_messages, s.recv_messages, s.send_bytes, s.recv_bytes, s.local_bytes,
                                          s.send_runs, s.recv_runs, s.local_runs},
                          "stats", "GDAP_PLAN_STATS_INIT");
  });
}

GDAP_API gdap_status gdap_redistribute(gdap_comm* comm, const gdap_plan* plan, const gdap_array* src, gdap_array* dst) {
  return guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_redistribute");
    gdap::plan::redistribute(c, plan, src, dst);
  });
}

}  // extern "C"
