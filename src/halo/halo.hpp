// Halo exchange: gdap_halo (one rank's compiled exchange and what its local array must look like),
// gdap_exchange (a bound, persistent exchange) and the C++ API behind their C functions: the
// checks every rank makes and agrees on, then the communicator's engine runs the exchange program.
#pragma once

#include "comm/comm.hpp"
#include "core/handle.hpp"
#include "exchange/engine.hpp"
#include "exchange/program.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct gdap_halo : gdap::Tagged<gdap_halo> {
  gdap::exchange::Program program;  // what the engines run
  gdap_dtype dtype{};
  bool corners = true;
  std::vector<gdap_dim> dims;  // this rank's dictionaries, which the local array must match
  std::vector<int64_t> shape;  // this rank's local shape
  // What every rank's halo of one exchange must share (its agreement compares it): the map's
  // digest, dtype, corners and width caps, as "name<tab>value" fields (comm.hpp's field_token).
  std::string token;
};

// A persistent halo exchange: the arguments gdap_halo_exchange_init checked and agreed on
// (borrowed: they must outlive it), and the engine's binding of them (owned).
struct gdap_exchange : gdap::Tagged<gdap_exchange> {
  gdap_comm* comm = nullptr;
  std::unique_ptr<gdap::exchange::Bound> bound;
};

namespace gdap::halo {

// Rank `rank`'s halo exchange on `map` for arrays of `dtype`; `options` (borrowed, may be NULL)
// read as far as its struct_size covers.
std::unique_ptr<gdap_halo> make_halo(const gdap_map& map, gdap_dtype dtype, int64_t rank,
                                     const gdap_halo_options* options);

// Collective: fills `local`'s communication padding from its neighbours (gdap_halo_exchange).
void exchange(gdap_comm& comm, const gdap_halo* halo, gdap_array* local);

// Collective: checks and agrees once (gdap_halo_exchange_init), `also` (the caller's own checks)
// among the checks; start() then runs the exchange without an agreement (gdap_exchange_start).
std::unique_ptr<gdap_exchange> bind(gdap_comm& comm, const gdap_halo* halo, gdap_array* local,
                                    const std::function<void()>& also);
void start(gdap_exchange& exchange);

}  // namespace gdap::halo
