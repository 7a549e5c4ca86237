// gdap_halo_exchange over MPI (run with mpirun -np 2 or 4): the cases of halo_check.hpp for a
// group of MPI_Comm_size ranks and larger ones of its own (large_cases), element by element, each rank checking its own section, with
// gdap_halo_exchange and with a persistent exchange (gdap_halo_exchange_init, two starts); then one
// rank's bad dtype (every rank fails, in both, and no padding changes); then bound exchanges whose
// ranks pick different modes (GDAP_MPI_EXCHANGE) at binding or change it before starting.
//
// A plain program rather than gtest: an assertion that returned early on one rank would leave the
// others waiting in a collective. The exit code is non-zero if any rank failed.
#include "halo/halo_check.hpp"

#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

namespace ht = halo_test;

struct Rank {
  gdap_comm* comm;
  int64_t rank;
  std::vector<std::string> failures;

  void fail(const std::string& what) { failures.push_back(what); }
};

// One case: map, this rank's halo and section; `bad_dtype`: rank 1 plans float32 (refused).
void run_case(Rank& me, const ht::Case& c, bool bad_dtype) {
  const std::vector<gdap_dim> all = ht::all_dims(c);
  gdap_map* map = nullptr;
  if (gdap_map_create(&map, c.nranks(), static_cast<int64_t>(c.axes.size()), all.data()) != GDAP_SUCCESS) {
    return me.fail(c.name + ": gdap_map_create: " + gdap_last_error());
  }
  gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
  options.corners = c.corners ? 1 : 0;
  options.widths = c.caps.empty() ? nullptr : c.caps.data();
  const bool bad = bad_dtype && me.rank == 1;
  const gdap_dtype dtype = bad ? gdap_dtype{GDAP_DTYPE_FLOAT, 32, 1} : ht::float64();
  gdap_halo* halo = nullptr;
  if (gdap_halo_create(&halo, map, dtype, me.rank, &options) != GDAP_SUCCESS) {
    me.fail(c.name + ": gdap_halo_create: " + gdap_last_error());
  }
  const auto wrap = [&](ht::Section& s) {
    gdap_array* array = nullptr;
    if (gdap_array_wrap(&array, s.data.data(), ht::float64(), gdap_device{GDAP_DEVICE_CPU, 0}, s.strides.data(),
                        s.dims.data(), static_cast<int64_t>(s.dims.size())) != GDAP_SUCCESS) {
      me.fail(c.name + ": gdap_array_wrap: " + gdap_last_error());
    }
    return array;
  };
  const gdap_status want = !bad_dtype ? GDAP_SUCCESS : bad ? GDAP_ERR_INVALID_ARGUMENT : GDAP_ERR_REMOTE;
  ht::Section s = ht::make_section(c, map, me.rank);
  gdap_array* array = wrap(s);
  for (int round = 0; round < 2; ++round) {
    const gdap_status st = gdap_halo_exchange(me.comm, halo, array);
    if (st != want) {
      me.fail(c.name + ": gdap_halo_exchange returned " + gdap_status_string(st) + ": " + gdap_last_error());
    }
    for (const std::string& f : ht::check(c, map, me.rank, s, !bad_dtype)) me.fail(f);
  }
  gdap_array_destroy(array);
  // The persistent exchange, on a fresh section: checked and agreed once, then started twice.
  ht::Section fresh = ht::make_section(c, map, me.rank);
  gdap_array* bound = wrap(fresh);
  gdap_exchange* exchange = nullptr;
  const gdap_status st = gdap_halo_exchange_init(&exchange, me.comm, halo, bound);
  if (st != want || (exchange != nullptr) != (want == GDAP_SUCCESS)) {
    me.fail(c.name + ": gdap_halo_exchange_init returned " + gdap_status_string(st) + ": " + gdap_last_error());
  }
  for (int round = 0; round < 2 && exchange != nullptr; ++round) {
    if (gdap_exchange_start(exchange) != GDAP_SUCCESS) me.fail(c.name + ": gdap_exchange_start: " + gdap_last_error());
    for (const std::string& f : ht::check(c, map, me.rank, fresh, true)) me.fail("persistent: " + f);
  }
  if (exchange == nullptr) {
    for (const std::string& f : ht::check(c, map, me.rank, fresh, false)) me.fail("persistent, refused: " + f);
  }
  gdap_exchange_destroy(exchange);
  gdap_array_destroy(bound);
  gdap_halo_destroy(halo);
  gdap_map_destroy(map);
}

// A bound exchange of case `c` on a fresh section, with GDAP_MPI_EXCHANGE=`at_bind` (NULL: unset)
// on this rank while it binds and `at_start` (NULL: unset) while it starts twice; `refused`: the
// binding must fail on every rank with GDAP_ERR_INVALID_ARGUMENT at once, naming `refused` and the
// ranks' modes (`names`), and leave the padding untouched; otherwise both starts fill it.
struct BoundModes {
  const char* at_bind;
  const char* at_start;
  std::vector<std::string> names;  // what the refusal's text must hold (empty: accepted)
};

void setenv_or_unset(const char* name, const char* value) {
  if (value != nullptr) setenv(name, value, 1);
  else unsetenv(name);
}

void run_bound_modes(Rank& me, const ht::Case& c, const std::string& what, const BoundModes& m) {
  gdap_map* map = nullptr;
  const std::vector<gdap_dim> all = ht::all_dims(c);
  if (gdap_map_create(&map, c.nranks(), static_cast<int64_t>(c.axes.size()), all.data()) != GDAP_SUCCESS) {
    return me.fail(what + ": gdap_map_create: " + gdap_last_error());
  }
  gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
  options.corners = c.corners ? 1 : 0;
  gdap_halo* halo = nullptr;
  if (gdap_halo_create(&halo, map, ht::float64(), me.rank, &options) != GDAP_SUCCESS) {
    me.fail(what + ": gdap_halo_create: " + gdap_last_error());
  }
  ht::Section s = ht::make_section(c, map, me.rank);
  gdap_array* array = nullptr;
  if (gdap_array_wrap(&array, s.data.data(), ht::float64(), gdap_device{GDAP_DEVICE_CPU, 0}, s.strides.data(),
                      s.dims.data(), static_cast<int64_t>(s.dims.size())) != GDAP_SUCCESS) {
    me.fail(what + ": gdap_array_wrap: " + gdap_last_error());
  }
  // A short timeout: a start that waits on a peer of another exchange fails in seconds, not minutes.
  gdap_comm_set_timeout(me.comm, 5);
  setenv_or_unset("GDAP_MPI_EXCHANGE", m.at_bind);
  const double began = MPI_Wtime();
  gdap_exchange* exchange = nullptr;
  const gdap_status st = gdap_halo_exchange_init(&exchange, me.comm, halo, array);
  const double took = MPI_Wtime() - began;
  const std::string text = gdap_last_error();
  setenv_or_unset("GDAP_MPI_EXCHANGE", m.at_start);
  const bool refuse = !m.names.empty();
  if (st != (refuse ? GDAP_ERR_INVALID_ARGUMENT : GDAP_SUCCESS)) {
    me.fail(what + ": gdap_halo_exchange_init returned " + gdap_status_string(st) + ": " + text);
  }
  for (const std::string& n : m.names) {
    if (text.find(n) == std::string::npos) me.fail(what + ": the error does not say '" + n + "': " + text);
  }
  if (refuse && took > 4) me.fail(what + ": the refusal took " + std::to_string(took) + " s");
  for (int round = 0; round < 2 && exchange != nullptr && !refuse; ++round) {
    if (gdap_exchange_start(exchange) != GDAP_SUCCESS) {
      me.fail(what + ": gdap_exchange_start " + std::to_string(round) + ": " + gdap_last_error());
    }
    for (const std::string& f : ht::check(c, map, me.rank, s, true)) me.fail(what + ": " + f);
  }
  if (refuse) {
    for (const std::string& f : ht::check(c, map, me.rank, s, false)) me.fail(what + ", refused: " + f);
  }
  unsetenv("GDAP_MPI_EXCHANGE");
  gdap_comm_set_timeout(me.comm, 60);
  gdap_exchange_destroy(exchange);
  gdap_array_destroy(array);
  gdap_halo_destroy(halo);
  gdap_map_destroy(map);
}

// Rule: a bound exchange keeps the mode (GDAP_MPI_EXCHANGE) read at its binding, where the ranks
// agree on it as gdap_redistribute's agreement does: ranks of modes that move different messages
// are refused there, every rank at once, naming two of them (they used to bind, then wait out the
// timeout at the first start); an environment changed between binding and start changes nothing
// (a start used to read it again, with no agreement).
void run_bound_mode_cases(Rank& me, const ht::Case& c) {
  const bool one = me.rank == 1;
  run_bound_modes(me, c, "bound: alltoallv on rank 1, p2p elsewhere",
                  {one ? "alltoallv" : "p2p", nullptr,
                   {"alltoallv on rank 1", "p2p on rank ", "every rank must pick the same exchange"}});
  run_bound_modes(me, c, "bound: p2p on rank 1, alltoallv elsewhere",
                  {one ? "p2p" : "alltoallv", nullptr,
                   {"p2p on rank 1", "alltoallv on rank ", "every rank must pick the same exchange"}});
  run_bound_modes(me, c, "bound: datatype on rank 1, p2p elsewhere (they mix)", {one ? "datatype" : "p2p", nullptr, {}});
  run_bound_modes(me, c, "bound: cma on rank 1, unset elsewhere (bound cma is p2p)", {one ? "cma" : nullptr, nullptr, {}});
  run_bound_modes(me, c, "bound p2p, then alltoallv on rank 1 at the starts", {"p2p", one ? "alltoallv" : "p2p", {}});
  run_bound_modes(me, c, "bound alltoallv, then p2p on rank 1 at the starts",
                  {"alltoallv", one ? "p2p" : "alltoallv", {}});
  run_bound_modes(me, c, "bound p2p, then a bad value on rank 1 at the starts", {"p2p", one ? "bogus" : "p2p", {}});
}

// Cases larger than the shared table's, for what only sizes reach on MPI: a box of 64 KiB or more
// travels as an MPI message of its own (several to one peer, matched in order), a part of runs of
// 32 bytes or more as an MPI datatype over the section, one of single cells packed.
std::vector<ht::Case> large_cases(int64_t nranks) {
  std::vector<ht::Case> all = {
      // 2 x 2: axis-0 faces one run of 73 KiB (direct), axis-1 faces 20 runs of 8 KiB (datatype),
      // edges and corners packed together.
      {"3d_2x2_large_corners", {ht::b({20, 17}, 1, true, 1), ht::b({18, 19}, 2, true, 2), ht::b({520}, 0)}},
      // Both faces to the one peer (a halo and the periodic boundary padding), each a run of 66 KiB: two
      // direct messages each way.
      {"3d_2x1_large_contiguous_faces", {ht::b({33, 31}, 1, true, 1), ht::b({64}, 0), ht::b({130}, 0)}},
      // Strided faces of 4 cells (32-byte runs: a datatype) and of 1 cell (packed).
      {"3d_1x2_strided_width4", {ht::b({24}, 0), ht::b({20}, 0), ht::b({40, 41}, 4, true, 4)}, false},
      {"3d_1x2_strided_width1", {ht::b({24}, 0), ht::b({20}, 0), ht::b({40, 41}, 1, true, 1)}, false},
  };
  std::vector<ht::Case> out;
  for (ht::Case& k : all) {
    if (k.nranks() == nranks) out.push_back(std::move(k));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Rank me{nullptr, rank, {}};
  if (gdap_comm_from_mpi_comm(&me.comm, MPI_COMM_WORLD) != GDAP_SUCCESS) {
    std::fprintf(stderr, "rank %d: gdap_comm_from_mpi: %s\n", rank, gdap_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  gdap_comm_set_timeout(me.comm, 60);
  const std::vector<ht::Case> table = ht::cases(size);
  for (const ht::Case& c : table) run_case(me, c, false);
  const std::vector<ht::Case> large = large_cases(size);
  for (const ht::Case& c : large) run_case(me, c, false);
  if (!table.empty()) run_case(me, table[0], true);
  if (!table.empty()) run_bound_mode_cases(me, table[0]);
  for (const std::string& f : me.failures) std::fprintf(stderr, "rank %d: %s\n", rank, f.c_str());
  int mine = me.failures.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("halo_mpi: %zu cases on %d ranks: %s\n", table.size() + large.size(), size, any ? "FAILED" : "ok");
  }
  gdap_comm_destroy(me.comm);
  MPI_Finalize();
  return any || table.empty() ? 1 : 0;
}
