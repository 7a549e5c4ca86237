// Runs one rank's part of a table test (a function of (comm, rank, nranks) returning a description
// of each failure) on every rank: as threads of an in-process group (run_group), or as the
// processes of MPI_COMM_WORLD (mpi_main, in an MPI program). Every rank runs to its end, so a
// failure never leaves a peer waiting in a collective call.
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace rank_runs {

using Body = std::function<std::vector<std::string>(gdap_comm* comm, int64_t rank, int64_t nranks)>;

// Every rank's failures, in rank order (the group itself failing is one failure).
inline std::vector<std::string> run_group(int64_t n, const Body& body) {
  std::vector<gdap_comm*> comms(static_cast<size_t>(n));
  if (gdap_comm_create_group(comms.data(), n) != GDAP_SUCCESS) return {"gdap_comm_create_group: " + std::string(gdap_last_error())};
  std::vector<std::vector<std::string>> failures(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { failures[static_cast<size_t>(r)] = body(comms[static_cast<size_t>(r)], r, n); });
  }
  for (auto& t : threads) t.join();
  for (gdap_comm* c : comms) gdap_comm_destroy(c);
  std::vector<std::string> all;
  for (const auto& f : failures) all.insert(all.end(), f.begin(), f.end());
  return all;
}

}  // namespace rank_runs
