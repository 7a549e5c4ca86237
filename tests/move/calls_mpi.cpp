// Ranks of an MPI communicator that make different collective calls at the same point (run with
// mpirun -np 2 and 4): every ordered pair of the calls a kit makes (call_kit.hpp), the last rank in
// one and the others in the other. Rules:
//   - every rank returns GDAP_ERR_INVALID_ARGUMENT naming both calls at their first meeting, no
//     element changes, and the communicator stays usable (a barrier then succeeds);
//   - gdap_exchange_start has no meeting of its own over MPI (a bound exchange skips the agreement
//     to save its round trip): against another call every rank ends within the timeout, each
//     element holds its old value or its result, and the ranks that timed out build a new
//     communicator;
//   - with every rank in the same call, each call's result is the kit's;
//   - a rank whose output overlaps its input (an aliased destination): that rank its own
//     GDAP_ERR_INVALID_ARGUMENT, the others GDAP_ERR_REMOTE, no element changes.
// Rank 0 prints "calls mpi: N ranks, F failures", which ctest matches.
#include "call_kit.hpp"

#include <mpi.h>

#include <gdap/gdap_mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

using call_kit::Call;
using call_kit::Kit;

constexpr double kTimeout = 2.0;  // seconds: only the exchange_start pairs wait for it

struct Rank {
  int rank = 0, n = 0;
  long long failures = 0;
  gdap_comm* comm = nullptr;
  std::unique_ptr<Kit> kit;

  void fail(const std::string& what) {
    if (failures++ < 40) std::fprintf(stderr, "rank %d: %s (last error: %s)\n", rank, what.c_str(), gdap_last_error());
  }

  // Collective: a new communicator and kit (the old ones dropped).
  void renew() {
    kit.reset();
    gdap_comm_destroy(comm);
    comm = nullptr;
    if (gdap_comm_from_mpi(&comm, MPI_Comm_c2f(MPI_COMM_WORLD)) != GDAP_SUCCESS) return fail("gdap_comm_from_mpi");
    gdap_comm_set_timeout(comm, kTimeout);
    kit = std::make_unique<Kit>(comm, rank, n);
    if (!kit->ok()) fail("the kit's handles");
  }

  void mismatched(Call most, Call odd) {
    const Call mine = rank == n - 1 ? odd : most;
    const std::string pair = std::string(call_kit::name(most)) + " vs " + call_kit::name(odd);
    kit->fill(100);
    const auto start = std::chrono::steady_clock::now();
    const gdap_status s = kit->call(mine);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string error = gdap_last_error();
    if (most == Call::exchange_start || odd == Call::exchange_start) {
      if (s != GDAP_SUCCESS && s != GDAP_ERR_TIMEOUT) fail(pair + ": neither done nor timed out");
      if (took > kTimeout + 10) fail(pair + ": took " + std::to_string(took) + " s");
      for (const std::string& w : kit->mixed(mine)) fail(pair + ": " + w);
      return renew();
    }
    if (s != GDAP_ERR_INVALID_ARGUMENT) fail(pair + ": status " + std::to_string(s));
    if (error.find("different collective calls") == std::string::npos || error.find(call_kit::name(most)) == std::string::npos ||
        error.find(call_kit::name(odd)) == std::string::npos) {
      fail(pair + ": the message names both calls");
    }
    if (took > kTimeout / 2) fail(pair + ": at once, not after " + std::to_string(took) + " s");
    for (const std::string& w : kit->wrong(mine, false)) fail(pair + ": changed " + w);
    if (gdap_comm_barrier(comm) != GDAP_SUCCESS) fail(pair + ": the communicator is still usable");
  }

  void aliased(Call c) {
    const std::string what = std::string(call_kit::name(c)) + " with an aliased output on the last rank";
    kit->fill(5);
    const gdap_status s = kit->call(c, rank == n - 1 ? call_kit::Mistake::aliased : call_kit::Mistake::none);
    const std::string error = gdap_last_error();
    if (rank == n - 1 && (s != GDAP_ERR_INVALID_ARGUMENT || error.find("shares memory with") == std::string::npos)) {
      fail(what + ": its own refusal");
    }
    if (rank != n - 1 && s != GDAP_ERR_REMOTE) fail(what + ": GDAP_ERR_REMOTE");
    for (const std::string& w : kit->wrong(c, false)) fail(what + ": changed " + w);
  }

  void matched(Call c) {
    kit->fill(7);
    if (kit->call(c) != GDAP_SUCCESS) fail(std::string(call_kit::name(c)) + " with every rank");
    for (const std::string& w : kit->wrong(c, true)) fail(std::string(call_kit::name(c)) + ": " + w);
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Rank me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &me.n);
  me.renew();
  for (Call c : call_kit::kCalls) me.matched(c);
  me.aliased(Call::redistribute);
  me.aliased(Call::reduce_scatter);
  for (Call a : call_kit::kCalls) {
    for (Call b : call_kit::kCalls) {
      if (a == b || a == Call::exchange_start || b == Call::exchange_start) continue;
      me.mismatched(a, b);
    }
  }
  me.mismatched(Call::exchange_start, Call::halo);
  me.mismatched(Call::barrier, Call::exchange_start);
  me.kit.reset();
  gdap_comm_destroy(me.comm);
  long long total = 0;
  MPI_Allreduce(&me.failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (me.rank == 0) std::printf("calls mpi: %d ranks, %lld failures\n", me.n, total);
  MPI_Finalize();
  return total == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
