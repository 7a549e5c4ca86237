// C entry points of the distributed GEMM (the C++ API is gemm.hpp).
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "gemm/gemm.hpp"

namespace {

// 2 m n k of this rank's products, INT64_MAX past int64's range (M = N = 2^22, K = 2^21 gave 0).
int64_t flops_of(const gdap_gemm& g) {
  using gdap::saturating_mul;
  return saturating_mul(saturating_mul(saturating_mul(2, g.local_m), g.local_n), g.k);
}

}  // namespace

extern "C" {

GDAP_API gdap_status gdap_gemm_create(gdap_gemm** out, gdap_comm* comm, const gdap_map* a, const gdap_map* b,
                                      const gdap_map* c, gdap_dtype dtype, const gdap_gemm_options* options) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& cm = *pinned;
    const gdap::CollectiveCall collective(cm, "gdap_gemm_create");
    *out = gdap::gemm::create(cm, a, b, c, dtype, options, [&] { gdap::require(out, "out"); }).release();
  });
}

GDAP_API gdap_status gdap_gemm_destroy(gdap_gemm* gemm) {
  return gdap::guard([&] { delete gdap::handle_or_null(gemm, "gemm"); });
}

GDAP_API gdap_status gdap_gemm_stats_get(gdap_gemm_stats* stats, const gdap_gemm* gemm) {
  return gdap::guard([&] {
    const gdap_gemm& g = gdap::handle(gemm, "gemm");
    gdap::write_versioned(stats,
                          gdap_gemm_stats{sizeof(gdap_gemm_stats), 0, g.rank, g.nranks, g.grid_rows, g.grid_cols,
                                          g.a.in != nullptr, g.b.in != nullptr, g.c.in != nullptr,
                                          g.a.bytes + g.b.bytes + g.c.bytes, static_cast<int64_t>(g.panels.size()),
                                          g.panel_bytes, g.local_m, g.local_n, flops_of(g)},
                          "stats", "GDAP_GEMM_STATS_INIT");
  });
}

GDAP_API gdap_status gdap_gemm_execute(gdap_comm* comm, gdap_gemm* gemm, double alpha, const gdap_array* a,
                                       const gdap_array* b, double beta, gdap_array* c) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& cm = *pinned;
    const gdap::CollectiveCall collective(cm, "gdap_gemm_execute");
    gdap::gemm::execute(cm, gemm, alpha, a, b, beta, c);  // checks the handle in its one agreement
  });
}

}  // extern "C"
