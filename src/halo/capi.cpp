// C entry points of the halo exchange (the C++ API is halo.hpp).
#include "core/error.hpp"
#include "halo/halo.hpp"

using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_halo_create(gdap_halo** out, const gdap_map* map, gdap_dtype dtype, int64_t rank,
                                      const gdap_halo_options* options) {
  return guard([&] {
    require(out, "out");
    require(map, "map");
    *out = gdap::halo::make_halo(*map, dtype, rank, options).release();
  });
}

GDAP_API gdap_status gdap_halo_destroy(gdap_halo* halo) {
  return guard([&] { delete halo; });
}

GDAP_API gdap_status gdap_halo_stats_get(gdap_halo_stats* stats, const gdap_halo* halo) {
  return guard([&] {
    require(halo, "halo");
    using gdap::exchange::Part;
    const gdap::exchange::Program& p = halo->program;
    gdap::fill_struct(stats,
                      gdap_halo_stats{static_cast<int64_t>(sizeof(gdap_halo_stats)), p.rank(), p.nranks(),
                                      static_cast<int64_t>(p.messages(Part::send).size()),
                                      static_cast<int64_t>(p.messages(Part::recv).size()), p.bytes(Part::send),
                                      p.bytes(Part::recv), p.bytes(Part::local)},
                      "stats", "gdap_halo_stats");
  });
}

GDAP_API gdap_status gdap_halo_exchange(gdap_comm* comm, const gdap_halo* halo, gdap_array* local) {
  return guard([&] { gdap::halo::exchange(gdap::comm_ref(comm), halo, local); });
}

GDAP_API gdap_status gdap_halo_exchange_init(gdap_exchange** out, gdap_comm* comm, const gdap_halo* halo,
                                             gdap_array* local) {
  return guard([&] {
    *out = gdap::halo::bind(gdap::comm_ref(comm), halo, local, [&] { require(out, "out"); }).release();
  });
}

GDAP_API gdap_status gdap_exchange_start(gdap_exchange* exchange) {
  return guard([&] {
    require(exchange, "exchange");
    gdap::halo::start(*exchange);
  });
}

GDAP_API gdap_status gdap_exchange_destroy(gdap_exchange* exchange) {
  return guard([&] { delete exchange; });
}

}  // extern "C"
