// Plans taken in turn on one communicator, shared by the in-process group suite
// (test_redistribute_group.cpp) and the MPI program (redistribute_mpi.cpp): a ring of layouts,
// plan k moving layout k's section into layout k + 1's, run k = 0, 1, ... again and again. Solvers
// do this (forward and backward transposes, a 3-D FFT's pencils), so an engine keeps what it
// builds per program for a few programs (Cache::recent); the communicator's build counter
// (Cache::builds, internal) tells whether it built anything again. Each call is checked element by
// element, as redistribute_check.hpp's cases are.
#pragma once

#include "redistribute_check.hpp"

#include "comm/comm.hpp"

namespace redist_test {

// A ring of `programs` distinct layouts of one 2-d global array over N ranks: rows, columns,
// cyclic rows, block-cyclic(3) columns, a 2-d grid of blocks.
inline std::vector<Layout> ring(int64_t N, size_t programs) {
  const auto [a, b] = grid2(N);
  constexpr int64_t rows = 24, cols = 10;
  std::vector<Layout> all = {
      {{mt::block(rows, N), mt::block(cols, 1)}},     {{mt::block(rows, 1), mt::block(cols, N)}},
      {{mt::cyclic(rows, N, 1), mt::block(cols, 1)}}, {{mt::block(rows, 1), mt::cyclic(cols, N, 3)}},
      {{mt::block(rows, a), mt::block(cols, b)}}};
  all.resize(programs);
  return all;
}

// Rule: `programs` plans in turn on one communicator, `rounds` times, each call right element by
// element (the destination reset to its sentinel first, the source unchanged). With at most 4
// programs (what an engine keeps), nothing is built again after `warmup` rounds: the first round
// builds each program's routes, and a second may rebuild what depends on every rank's buffers (a
// pack buffer grown for a larger program moves, and the addresses the peers read change once).
// With 5, every call evicts the least recently used: builds go on, and the results stay right.
// `storage` makes every section (each is a source in turn): Storage::shm for MPI's mapped path,
// whose mappings of the peers' segments count as builds too.
inline void run_alternating(gdap_comm* comm, int64_t rank, int64_t nranks, size_t programs, int rounds,
                            const std::string& context, Report& report, Storage storage = Storage::created) {
  constexpr int warmup = 2;
  const std::string what = cat(context, ": ", programs, " plans in turn, rank ", rank);
  const std::vector<Layout> layouts = ring(nranks, programs);
  const Dtype& f64 = dtypes()[0];
  std::vector<MapHandle> maps(programs);
  std::vector<PlanHandle> plans(programs);
  std::vector<Section> sections(programs);
  std::vector<std::vector<unsigned char>> painted(programs), blank(programs);
  for (size_t k = 0; k < programs; ++k) {
    build_map(maps[k], layouts[k], rank, comm, cat(what, ", map ", k), report);
    make_painted(sections[k], storage, f64, layouts[k], rank, true, kSentinel, cat(what, ", section ", k),
                 report);
    painted[k] = sections[k].image();
    paint(sections[k], f64, Oracle(layouts[k], rank), false, kSentinel);
    blank[k] = sections[k].image();
  }
  sections[0].restore(painted[0]);
  for (size_t k = 0; k < programs; ++k) {
    const size_t next = (k + 1) % programs;
    if (!maps[k].map || !maps[next].map) continue;  // reported
    if (gdap_plan_create(&plans[k].plan, maps[k].map, maps[next].map, f64.type, rank) != GDAP_SUCCESS) {
      report.fail(cat(what, ": gdap_plan_create: ", gdap_last_error()));
    }
  }
  int64_t builds_at_warmup = 0;
  for (int round = 0; round < rounds; ++round) {
    if (round == warmup) builds_at_warmup = comm->cache.builds;
    for (size_t k = 0; k < programs; ++k) {
      const size_t next = (k + 1) % programs;
      sections[next].restore(blank[next]);
      const std::string call = cat(what, ", round ", round, ", plan ", k);
      if (gdap_redistribute(comm, plans[k].plan, sections[k].array(), sections[next].array()) != GDAP_SUCCESS) {
        report.fail(cat(call, ": gdap_redistribute: ", gdap_last_error()));
        continue;
      }
      ++report.moves;
      expect_image(sections[next], painted[next], f64, call + ", destination", report);
      expect_image(sections[k], painted[k], f64, call + ", source changed", report);
    }
  }
  const int64_t later = comm->cache.builds - builds_at_warmup;
  if (programs <= 4 && later != 0) {
    report.fail(cat(what, ": ", later, " routes or plans built again in ", rounds - warmup,
                    " rounds after the first ", warmup, " (want none: each program's are kept)"));
  }
  if (programs > 4 && later == 0) {
    report.fail(cat(what, ": nothing built again with ", programs, " programs in turn (at most 4 are kept)"));
  }
}

}  // namespace redist_test
