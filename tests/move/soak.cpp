// The soak test: 4 ranks make thousands of mixed collective calls (call_kit.hpp: barrier, map,
// redistribution, all-reduce, reduce-scatter, reduction over axes, halo exchange, bound exchange)
// with failures injected at random, and every call's outcome is checked:
//   none       every rank succeeds and holds the call's result, element by element;
//   mistake    one rank's own argument is wrong (NULL, a dtype, an output over its input, an op):
//              that rank fails, so does every other, and no element changes;
//   mismatch   one rank makes another call: every rank fails at once, no element changes;
//   leave      one rank skips the call: the others fail at their timeout, the communicator is
//              broken, the ranks build a new one;
//   late       one rank comes after the others' timeout: the same, and the late rank fails too
//              (over MPI its call may complete against the others' abandoned operations).
// Every rank knows the plan (the seed); a rank sets a short timeout only for the calls that are to
// time out, so a busy machine never makes a plain call time out. Failed and late calls leave each
// element at its old value or its result (a bound exchange over MPI, which has no agreement, may
// fill part of its padding). At the end: no hang (ctest's limit), the heap in use has not grown
// past the communicators gdap keeps after a timeout, and no gdap segment is left in /dev/shm.
//
//   soak group SEED CALLS          4 threads of an in-process group
//   mpirun -np 4 soak_mpi mpi SEED CALLS
// Prints "soak <mode>: 4 ranks, <calls> calls, ... 0 failures" (rank 0), which ctest matches.
#include "call_kit.hpp"

#include <gdap/gdap.h>

#ifdef GDAP_SOAK_MPI
#include <mpi.h>

#include <gdap/gdap_mpi.h>
#endif

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using call_kit::Call;
using call_kit::Kit;
using call_kit::Mistake;

constexpr int kRanks = 4;
constexpr double kPlainTimeout = 60;   // seconds: a plain call never waits this long
constexpr double kFaultTimeout = 0.1;  // seconds: what the others wait for a rank that leaves or is late

enum class Fault { none, mistake, mismatch, leave, late };
const char* fault_name(Fault f) {
  const char* names[] = {"none", "mistake", "mismatch", "leave", "late"};
  return names[static_cast<int>(f)];
}

// The mistakes a rank can make in its own arguments of a call (none for a barrier; a bound
// exchange's only argument is the exchange, and a NULL one cannot tell its peers).
std::vector<Mistake> mistakes_of(Call c) {
  switch (c) {
    case Call::map_collective: return {Mistake::null_section};
    case Call::redistribute: return {Mistake::null_section, Mistake::wrong_dtype, Mistake::aliased};
    case Call::allreduce: return {Mistake::null_section, Mistake::bad_op};
    case Call::reduce_scatter: return {Mistake::null_section, Mistake::aliased, Mistake::bad_op};
    case Call::reduce_axes: return {Mistake::null_section, Mistake::wrong_dtype, Mistake::bad_op};
    case Call::halo: return {Mistake::null_section, Mistake::wrong_dtype};
    default: return {};
  }
}

// One call of the plan: the same on every rank (drawn from the seed and the call's number).
struct Step {
  Call call = Call::barrier, other = Call::barrier;  // `other`: the odd rank's call (mismatch)
  Fault fault = Fault::none;
  Mistake mistake = Mistake::none;
  int odd = 0;  // the rank that errs, leaves, is late or makes the other call
};

Step plan(uint64_t seed, int64_t i, bool mpi) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(i));
  Step s;
  s.call = call_kit::kCalls[rng() % std::size(call_kit::kCalls)];
  s.odd = static_cast<int>(rng() % kRanks);
  const uint64_t roll = rng() % 1000;
  s.fault = roll < 880 ? Fault::none : roll < 960 ? Fault::mistake : roll < 990 ? Fault::mismatch
          : roll < 995 ? Fault::leave : Fault::late;
  if (s.fault == Fault::mistake) {
    const std::vector<Mistake> m = mistakes_of(s.call);
    if (m.empty()) {
      s.fault = Fault::none;
    } else {
      s.mistake = m[rng() % m.size()];
    }
  }
  if (s.fault == Fault::mismatch) {
    s.other = call_kit::kCalls[rng() % std::size(call_kit::kCalls)];
    // Over MPI a bound exchange has no meeting to compare (calls_mpi.cpp): that is a leave.
    const bool unmatched = mpi && (s.call == Call::exchange_start || s.other == Call::exchange_start);
    if (s.other == s.call || unmatched) s.fault = Fault::none;
  }
  return s;
}

struct Tally {
  std::atomic<int64_t> calls{0}, failures{0};
  std::atomic<int64_t> by_fault[5] = {};
};

class Rank {
 public:
  Rank(int rank, bool mpi, Tally& tally) : rank_(rank), mpi_(mpi), tally_(tally) {}

  void fail(int64_t i, const Step& s, const std::string& what) {
    if (tally_.failures++ < 40) {
      std::fprintf(stderr, "rank %d, call %lld (%s, %s, odd rank %d): %s (last error: %s)\n", rank_,
                   static_cast<long long>(i), call_kit::name(s.call), fault_name(s.fault), s.odd, what.c_str(),
                   gdap_last_error());
    }
  }

  // One call of the plan on this rank; true when the communicator must be built anew.
  bool run(Kit& kit, gdap_comm* comm, int64_t i, const Step& s) {
    const bool odd = rank_ == s.odd;
    const bool times_out = s.fault == Fault::leave || s.fault == Fault::late;
    gdap_comm_set_timeout(comm, times_out ? kFaultTimeout : kPlainTimeout);
    kit.fill(static_cast<double>(i % 1000));
    if (s.fault == Fault::leave && odd) return true;
    if (s.fault == Fault::late && odd) std::this_thread::sleep_for(std::chrono::duration<double>(kFaultTimeout + 0.15));
    const Call mine = s.fault == Fault::mismatch && odd ? s.other : s.call;
    const gdap_status got = kit.call(mine, s.fault == Fault::mistake && odd ? s.mistake : Mistake::none);
    switch (s.fault) {
      case Fault::none:
        if (got != GDAP_SUCCESS) fail(i, s, "a plain call failed");
        for (const std::string& w : kit.wrong(mine, true)) fail(i, s, "wrong result: " + w);
        return false;
      case Fault::mistake:
        if (got == GDAP_SUCCESS) fail(i, s, odd ? "a mistake was taken" : "a peer's mistake was not every rank's error");
        if (!odd && got != GDAP_ERR_REMOTE) fail(i, s, "a peer's mistake gives GDAP_ERR_REMOTE");
        for (const std::string& w : kit.wrong(mine, false)) fail(i, s, "changed: " + w);
        return false;
      case Fault::mismatch:
        if (got != GDAP_ERR_INVALID_ARGUMENT) fail(i, s, "ranks in different calls give GDAP_ERR_INVALID_ARGUMENT");
        for (const std::string& w : kit.wrong(mine, false)) fail(i, s, "changed: " + w);
        return false;
      case Fault::leave:
      case Fault::late: {
        // The late rank over MPI may complete against the others' abandoned operations; a bound
        // exchange over MPI lets ranks far from the missing one finish.
        const bool may_finish = (mpi_ && odd) || (mpi_ && s.call == Call::exchange_start);
        if (got == GDAP_SUCCESS && !may_finish) fail(i, s, "a call whose peer left or was late succeeded");
        if (got != GDAP_SUCCESS && got != GDAP_ERR_TIMEOUT && !(mpi_ && odd)) fail(i, s, "GDAP_ERR_TIMEOUT expected");
        for (const std::string& w : kit.mixed(mine)) fail(i, s, "neither old nor right: " + w);
        return true;
      }
    }
    return false;
  }

 private:
  int rank_;
  bool mpi_;
  Tally& tally_;
};

size_t heap_in_use() { return mallinfo2().uordblks; }

int gdap_segments() {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) n += e.path().filename().string().rfind("gdap", 0) == 0;
  return n;
}

struct Report {
  int64_t calls = 0;
  size_t heap_before = 0, heap_after = 0;
  int shm_before = 0, shm_after = 0;
  int rebuilds = 0;
};

// The in-process group: one thread per rank; after a call that broke the group, the ranks meet
// at a barrier of the test's own, rank 0 makes a new group, and every rank builds a new kit.
void soak_group(uint64_t seed, int64_t calls, Tally& tally, Report& report) {
  std::vector<gdap_comm*> comms(kRanks, nullptr);
  std::barrier sync(kRanks);
  auto make = [&] {
    if (gdap_comm_create_group(comms.data(), kRanks) != GDAP_SUCCESS) std::abort();
  };
  make();
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      Rank me(r, false, tally);
      auto kit = std::make_unique<Kit>(comms[static_cast<size_t>(r)], r, kRanks);
      for (int64_t i = 0; i < calls; ++i) {
        if (i == std::min<int64_t>(calls / 10, 500)) {
          sync.arrive_and_wait();
          if (r == 0) report.heap_before = heap_in_use();
          sync.arrive_and_wait();
        }
        const Step s = plan(seed, i, false);
        if (r == 0) tally.by_fault[static_cast<int>(s.fault)]++;
        if (!me.run(*kit, comms[static_cast<size_t>(r)], i, s)) continue;
        sync.arrive_and_wait();  // every rank is done with the broken group
        kit.reset();
        gdap_comm_destroy(comms[static_cast<size_t>(r)]);
        sync.arrive_and_wait();
        if (r == 0) {
          make();
          ++report.rebuilds;
        }
        sync.arrive_and_wait();
        kit = std::make_unique<Kit>(comms[static_cast<size_t>(r)], r, kRanks);
        if (!kit->ok()) me.fail(i, s, "a new kit");
      }
      kit.reset();
      gdap_comm_destroy(comms[static_cast<size_t>(r)]);
    });
  }
  for (auto& t : threads) t.join();
  tally.calls = calls;
  report.heap_after = heap_in_use();
}

#ifdef GDAP_SOAK_MPI
// MPI: one process per rank. A communicator broken by a timeout is left to the end of the process
// by gdap (MPI may still use its buffers), and so are the kits of calls that timed out (an
// abandoned operation may still use their sections: docs/api.md, faults).
// Every communicator the plan needs is made before the first call: Open MPI 4.1's MPI_Comm_dup,
// made after operations were abandoned, hung once in ompi_comm_nextcid on every rank (seed 1,
// 10,000 calls), which is MPI's state after a timeout, not gdap's (docs/api.md, faults).
void soak_mpi(uint64_t seed, int64_t calls, Tally& tally, Report& report, int rank) {
  std::vector<gdap_comm*> spare;
  for (int64_t i = -1; i < calls; ++i) {  // -1: the first communicator
    const Fault f = i < 0 ? Fault::leave : plan(seed, i, true).fault;
    if (f != Fault::leave && f != Fault::late) continue;
    gdap_comm* made = nullptr;
    if (gdap_comm_from_mpi(&made, MPI_Comm_c2f(MPI_COMM_WORLD)) != GDAP_SUCCESS) std::abort();
    spare.push_back(made);
  }
  std::reverse(spare.begin(), spare.end());
  auto make = [&] {
    gdap_comm* comm = nullptr;
    if (!spare.empty()) {
      comm = spare.back();
      spare.pop_back();
    } else if (gdap_comm_from_mpi(&comm, MPI_Comm_c2f(MPI_COMM_WORLD)) != GDAP_SUCCESS) {
      std::abort();
    }
    return comm;
  };
  gdap_comm* comm = make();
  Rank me(rank, true, tally);
  auto kit = std::make_unique<Kit>(comm, rank, kRanks);
  std::vector<std::unique_ptr<Kit>> kept;
  for (int64_t i = 0; i < calls; ++i) {
    if (i == std::min<int64_t>(calls / 10, 500)) report.heap_before = heap_in_use();
    const Step s = plan(seed, i, true);
    tally.by_fault[static_cast<int>(s.fault)]++;
    if (!me.run(*kit, comm, i, s)) continue;
    kept.push_back(std::move(kit));
    gdap_comm_destroy(comm);
    comm = make();
    ++report.rebuilds;
    kit = std::make_unique<Kit>(comm, rank, kRanks);
    if (!kit->ok()) me.fail(i, s, "a new kit");
  }
  kit.reset();
  gdap_comm_destroy(comm);
  tally.calls = calls;
  report.heap_after = heap_in_use();
  (void)kept;  // released at exit, after MPI_Finalize
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc != 4 || (mode != "group" && mode != "mpi")) {
    std::fprintf(stderr, "usage: soak group SEED CALLS | mpirun -np 4 soak_mpi mpi SEED CALLS\n");
    return 2;
  }
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  const int64_t calls = std::strtoll(argv[3], nullptr, 10);
  Tally tally;
  Report report;
  report.shm_before = gdap_segments();
  const auto start = std::chrono::steady_clock::now();
  int rank = 0;
  long long failures = 0;
  if (mode == "group") {
    soak_group(seed, calls, tally, report);
    failures = tally.failures;
  } else {
#ifdef GDAP_SOAK_MPI
    MPI_Init(&argc, &argv);
    int n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != kRanks) {
      if (rank == 0) std::fprintf(stderr, "soak mpi needs %d ranks, not %d\n", kRanks, n);
      MPI_Finalize();
      return 2;
    }
    soak_mpi(seed, calls, tally, report, rank);
    long long mine = tally.failures;
    MPI_Allreduce(&mine, &failures, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
#else
    std::fprintf(stderr, "this soak was built without MPI\n");
    return 2;
#endif
  }
  report.shm_after = gdap_segments();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Heap growth: the group keeps nothing; over MPI each rebuild leaves the broken communicator's
  // buffers and the call's kit (a few KiB each) to the end of the process.
  const long long growth = static_cast<long long>(report.heap_after) - static_cast<long long>(report.heap_before);
  const long long allowed = (1 << 20) + (mode == "mpi" ? 64 * 1024 * static_cast<long long>(report.rebuilds) : 0);
  if (growth > allowed) {
    std::fprintf(stderr, "rank %d: the heap in use grew by %lld bytes (allowed %lld)\n", rank, growth, allowed);
    ++failures;
  }
  if (report.shm_after > report.shm_before) {
    std::fprintf(stderr, "rank %d: %d gdap segments left in /dev/shm\n", rank, report.shm_after - report.shm_before);
    ++failures;
  }
  if (rank == 0) {
    std::printf("soak %s: %d ranks, %lld calls (faults: %lld mistakes, %lld mismatches, %lld leaves, %lld late; "
                "%d communicators rebuilt), heap %+lld bytes, %.1f s, %lld failures\n",
                mode.c_str(), kRanks, static_cast<long long>(tally.calls.load()),
                static_cast<long long>(tally.by_fault[1].load()), static_cast<long long>(tally.by_fault[2].load()),
                static_cast<long long>(tally.by_fault[3].load()), static_cast<long long>(tally.by_fault[4].load()),
                report.rebuilds, growth, took, failures);
  }
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
