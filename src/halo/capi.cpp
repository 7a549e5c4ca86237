// C entry points of the halo exchange (the C++ API is halo.hpp).
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "halo/halo.hpp"
#include "maps/map.hpp"

using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_halo_create(gdap_halo** out, const gdap_map* map, gdap_dtype dtype, int64_t rank,
                                      const gdap_halo_options* options) {
  return guard([&] {
    require(out, "out");
    *out = gdap::halo::make_halo(gdap::handle(map, "map"), dtype, rank, options).release();
  });
}

GDAP_API gdap_status gdap_halo_destroy(gdap_halo* halo) {
  return guard([&] { delete gdap::handle_or_null(halo, "halo"); });
}

GDAP_API gdap_status gdap_halo_stats_get(gdap_halo_stats* stats, const gdap_halo* halo) {
  return guard([&] {
    using gdap::exchange::Part;
    const gdap::exchange::Program& p = gdap::handle(halo, "halo").program;
    gdap::write_versioned(stats,
                          gdap_halo_stats{sizeof(gdap_halo_stats), 0, p.rank(), p.nranks(),
                                          static_cast<int64_t>(p.messages(Part::send).size()),
                                          static_cast<int64_t>(p.messages(Part::recv).size()), p.bytes(Part::send),
                                          p.bytes(Part::recv), p.bytes(Part::local)},
                          "stats", "GDAP_HALO_STATS_INIT");
  });
}

GDAP_API gdap_status gdap_halo_exchange(gdap_comm* comm, const gdap_halo* halo, gdap_array* local) {
  return guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_halo_exchange");
    gdap::halo::exchange(c, halo, local);
  });
}

GDAP_API gdap_status gdap_halo_exchange_init(gdap_exchange** out, gdap_comm* comm, const gdap_halo* halo,
                                             gdap_array* local) {
  return guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_halo_exchange_init");
    *out = gdap::halo::bind(c, halo, local, [&] { require(out, "out"); }).release();
  });
}

GDAP_API gdap_status gdap_exchange_start(gdap_exchange* exchange) {
  return guard([&] {
    gdap_exchange& e = gdap::handle(exchange, "exchange");
    const gdap::CommPin pinned(e.comm, "the exchange's comm");  // borrowed: refused once destroyed
    const gdap::CollectiveCall collective(*pinned, "gdap_exchange_start");
    const gdap::Error given = gdap::take_call_failure(*pinned);  // no agreement: this rank alone fails
    if (given.status() != GDAP_SUCCESS) throw given;
    gdap::halo::start(e);
  });
}

GDAP_API gdap_status gdap_exchange_destroy(gdap_exchange* exchange) {
  return guard([&] { delete gdap::handle_or_null(exchange, "exchange"); });
}

}  // extern "C"
