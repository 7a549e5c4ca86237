// Making halo exchanges, and the checks every rank makes before its engine runs one.
#include "halo/halo.hpp"

#include "array/array.hpp"
#include "array/layout.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "halo/planner.hpp"
#include "maps/map.hpp"
#include "protocol/dim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <span>

namespace gdap::halo {

namespace {

// The local array's dictionary along `i` must be the map's for this rank (padding included).
void check_dim(const gdap_dim& mine, const gdap_dim& map, int64_t i) {
  const bool same = mine.dist_type == map.dist_type && mine.size == map.size && mine.start == map.start &&
                    mine.proc_grid_rank == map.proc_grid_rank && mine.proc_grid_size == map.proc_grid_size &&
                    (mine.dist_type != GDAP_DIST_BLOCK ||
                     (mine.stop == map.stop && mine.padding[0] == map.padding[0] &&
                      mine.padding[1] == map.padding[1] && is_periodic(mine) == is_periodic(map)));
  if (!same) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} of the local array differs from the halo's map for this rank (start {} vs {}, "
         "stop {} vs {}, padding ({}, {}) vs ({}, {}))", dim_label(mine, i), mine.start, map.start, mine.stop, map.stop,
         mine.padding[0], mine.padding[1], map.padding[0], map.padding[1]);
  }
}

// This rank's own checks of an exchange: a halo matching the communicator, an array matching the halo.
void check_call(gdap_comm& comm, const gdap_halo* halo, const gdap_array* local) {
  const gdap_halo& h = handle(halo, "halo");
  if (h.program.rank() != comm.rank) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the halo is rank {}'s but the communicator is rank {}'s", h.program.rank(), comm.rank);
  }
  if (h.program.nranks() != comm.size) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the halo is for {} ranks but the communicator has {}", h.program.nranks(), comm.size);
  }
  const gdap_array& a = handle(local, "local");
  if (!same_dtype(a.section.dtype, h.dtype)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "local has dtype {} but the halo was made for {}", dtype_text(a.section.dtype),
         dtype_text(h.dtype));
  }
  if (a.section.shape != h.shape) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "local has shape {} but the halo's map gives this rank {}", shape_text(a.section.shape),
         shape_text(h.shape));
  }
  for (int64_t i = 0; i < a.ndim(); ++i) check_dim(a.dims[i], h.dims[static_cast<size_t>(i)], i);
  check_destination(a, "local", "; a halo exchange writes its padding");
  exchange::touches(comm, "local", local, true);
}

// The halo's program, or an empty one for a NULL or wrong-kind halo (which the checks refuse).
const exchange::Program& program_of(const gdap_halo* halo) {
  static const exchange::Program none;
  const gdap_halo* tagged = if_tagged(halo);
  return tagged != nullptr ? tagged->program : none;
}

// The halo's token, or none for a NULL or wrong-kind halo (which the checks refuse).
std::string token_of(const gdap_halo* halo) {
  const gdap_halo* tagged = if_tagged(halo);
  return tagged != nullptr ? tagged->token : std::string();
}

// What every rank says when rank r's halo is not rank 0's: each would send cells that its peers
// read at other places or as another type.
Mismatch halo_mismatch() {
  return field_mismatch("halo", "every rank's halo of one exchange is made from the same map with the same dtype and "
                                "options (corners, widths)");
}

std::string widths_text(const gdap_map& map, const int64_t* widths) {
  if (widths == nullptr) return "all padding";
  return fmt::format("({})", fmt::join(std::span<const int64_t>(widths, static_cast<size_t>(map.ndim())), ", "));
}

// The local section as both ends of the exchange: owned elements are read, padding written.
exchange::Sections sections_of(gdap_array* local) { return exchange::Sections{local, local, "local", "local"}; }

// The caller's options (NULL: the defaults), as core/versioned.hpp reads them.
gdap_halo_options read_options(const gdap_halo_options* options) {
  if (options == nullptr) return GDAP_HALO_OPTIONS_INIT;
  return read_versioned(options, gdap_halo_options GDAP_HALO_OPTIONS_INIT, "options", "GDAP_HALO_OPTIONS_INIT");
}

}  // namespace

std::unique_ptr<gdap_halo> make_halo(const gdap_map& map, gdap_dtype dtype, int64_t rank,
                                     const gdap_halo_options* options) {
  const gdap_halo_options o = read_options(options);
  const int64_t element_size = gdap::element_size(dtype);
  if (rank < 0 || rank >= map.nranks) fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is not in [0, {})", rank, map.nranks);
  std::span<const int64_t> widths;
  if (o.widths != nullptr) widths = std::span<const int64_t>(o.widths, static_cast<size_t>(map.ndim()));
  if (!map_has_halo(map, widths)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "no rank of the map has padding to exchange into (only 'b' dimensions have "
                                    "halos: communication padding between neighbours and, on a periodic dimension, "
                                    "the edge ranks' boundary padding)");
  }
  auto halo = std::make_unique<gdap_halo>();
  halo->program = compile(plan_halo(map, rank, o.corners != 0, widths), element_size);
  halo->dtype = dtype;
  halo->corners = o.corners != 0;
  halo->token = field_token({{"halo map digest", fmt::format("{:#018x}", digest(map))}, {"halo dtype", dtype_text(dtype)},
                             {"halo corners", halo->corners ? "on" : "off"}, {"halo widths", widths_text(map, o.widths)}});
  for (int64_t i = 0; i < map.ndim(); ++i) {
    halo->dims.push_back(map.dim(rank, i));
    halo->shape.push_back(local_extent(map.dim(rank, i)));
  }
  return halo;
}

void exchange(gdap_comm& comm, const gdap_halo* halo, gdap_array* local) {
  exchange::engine_of(comm).run(program_of(halo), sections_of(local),
                                exchange::Agreement{[&] { check_call(comm, halo, local); }, token_of(halo), halo_mismatch()});
}

// Every check on every rank, so that a bad argument is every rank's error.
std::unique_ptr<gdap_exchange> bind(gdap_comm& comm, const gdap_halo* halo, gdap_array* local,
                                    const std::function<void()>& also) {
  auto bound = std::make_unique<gdap_exchange>();
  bound->comm = &comm;
  const auto checks = [&] {
    also();
    check_call(comm, halo, local);
  };
  bound->bound = exchange::engine_of(comm).bind(program_of(halo), sections_of(local), exchange::Agreement{checks, token_of(halo), halo_mismatch()});
  return bound;
}

// Declares the section again (each start is a collective call of its own, comm/collective.hpp),
// then runs without an agreement.
void start(gdap_exchange& exchange) {
  exchange::touches(*exchange.comm, "local", exchange.bound->sections.dst, true);
  exchange::engine_of(*exchange.comm).start(*exchange.bound);
}

}  // namespace gdap::halo
