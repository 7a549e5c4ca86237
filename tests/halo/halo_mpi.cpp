// gdap_halo_exchange over MPI (run with mpirun -np 2 or 4): the cases of halo_check.hpp for a
// group of MPI_Comm_size ranks and larger ones of its own (large_cases), element by element, each rank checking its own section, with
// gdap_halo_exchange and with a persistent exchange (gdap_halo_exchange_init, two starts); then one
// rank's bad dtype (every rank fails, in both, and no padding changes).
//
// A plain program rather than gtest: an assertion that returned early on one rank would leave the
// others waiting in a collective. The exit code is non-zero if any rank failed.
#include "halo/halo_check.hpp"

#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include <cstdio>
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
