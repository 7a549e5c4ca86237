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
// fill part of its padding). At the end: no hang (ctest's limit), no gdap segment of this process
// left in /dev/shm, and no memory kept but what a broken communicator must leave: over MPI the
// buffers its abandoned operations hold, the MPI communicator, and the cache entries peers read in
// place (at most kReadInPlacePerComm per broken communicator, counted exactly with Scratch::alive();
// the group leaves none), and the heap in use (mallinfo2, from call min(CALLS/10, 500) to the end,
// the soak's own kits left out) grown by at most kHeapSlack + kHeapPerBroken per broken communicator.
// Each rank prints its heap, VmRSS and VmHWM, kits and entries left.
//
// Measured (seed 1, 4 ranks on 2 shared cores, Open MPI 4.1.4, per rank): broken communicators used
// to keep their whole cache (plans, copy lists, gathered maps: 6-7 entries, about 4.5 KiB each
// communicator over MPI): at 1,000 / 3,000 / 10,000 calls (9 / 35 / 106 rebuilt) the heap grew by
// 0.32 / 0.95 / 2.7 MB and VmRSS by about 0.4 / 1.0 / 2.6 MB, linearly in the timeouts, not a
// plateau, alike with GDAP_MPI_EXCHANGE=p2p and cma; of it, 0.30-0.37 MB at 3,000 calls and
// 0.7-0.9 MB at 10,000 were gdap's, the rest the kits this soak keeps for calls that timed out
// (about 18.6 KiB each: 0.64 MB / 2.0 MB). Now a broken communicator frees all but what peers
// read in place: at 10,000 calls gdap's heap moves by -67 to +86 KB (0 entries left with p2p,
// 224-243 of 318 allowed with cma) and VmRSS grows by 1.9 MB, the soak's kits. The group keeps
// nothing: VmRSS 9.4 MB at 1,000, 3,000 and 10,000 calls alike.
//
//   soak group SEED CALLS          4 threads of an in-process group
//   mpirun -np 4 soak_mpi mpi SEED CALLS
// Prints "soak <mode>: 4 ranks, <calls> calls, ... 0 failures" (rank 0), which ctest matches.
#include "call_kit.hpp"
#include "comm/cache.hpp"  // Scratch::alive(): the cache entries broken communicators left

#include <gdap/gdap.h>

#ifdef GDAP_SOAK_MPI
#include <mpi.h>

#include <gdap/gdap_mpi.h>
#endif

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
// Memory bounds (measured: the header). Cache entries a broken MPI communicator may leave: the cma
// exchange's probe word and a pack buffer per program (the redistribution's, the halo's).
constexpr long long kReadInPlacePerComm = 3;
constexpr long long kHeapSlack = 384 * 1024;   // bytes: caches filling, allocator bookkeeping
constexpr long long kHeapPerBroken = 2 * 1024;  // bytes per broken MPI communicator (abandoned buffers)

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

// The process's resident set now and at its peak (kB, /proc/self/status): the soak reports both per rank.
long status_kb(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kb = -1;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') kb = std::strtol(line + n + 1, nullptr, 10);
  }
  std::fclose(f);
  return kb;
}

// This process's gdap segments in /dev/shm ("gdap-<pid>-...", ipc/shm.cpp): other jobs on the
// machine make and remove their own meanwhile.
int gdap_segments() {
  const std::string mine = "gdap-" + std::to_string(static_cast<long>(getpid())) + "-";
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) n += e.path().filename().string().rfind(mine, 0) == 0;
  return n;
}

struct Report {
  int64_t calls = 0;
  size_t heap_before = 0, heap_after = 0;
  long rss_before = 0, rss_after = 0;  // kB, at the same points as the heap
  size_t kits = 0;           // bytes of the kits the MPI soak keeps after timeouts (its own, not gdap's)
  int64_t entries_left = 0;  // communicators' cache entries alive after the last communicator's end
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
          if (r == 0) report.heap_before = heap_in_use(), report.rss_before = status_kb("VmRSS");
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
  report.entries_left = gdap::Scratch::alive();
  report.heap_after = heap_in_use();
  report.rss_after = status_kb("VmRSS");
}

#ifdef GDAP_SOAK_MPI
// MPI: one process per rank. Of a communicator broken by a timeout gdap leaves to the end of the
// process what MPI or peers may still use (the MPI communicator, abandoned operations' buffers,
// memory peers read in place); the soak keeps the kits of calls that timed out until its last
// communicator's end (an abandoned operation may still use their sections: docs/api.md, faults).
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
    if (i == std::min<int64_t>(calls / 10, 500)) report.heap_before = heap_in_use(), report.rss_before = status_kb("VmRSS");
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
  report.entries_left = gdap::Scratch::alive();
  report.heap_after = heap_in_use();
  report.rss_after = status_kb("VmRSS");
  // The kits are the test's own: freed (after their communicators) and measured apart from gdap's heap.
  const size_t with_kits = report.heap_after;
  kept.clear();
  report.heap_after = heap_in_use();
  report.kits = with_kits - report.heap_after;
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
  // What a broken communicator may leave to the end of the process: over MPI the buffers of its
  // abandoned operations, the MPI communicator and the cache entries peers read in place (the cma
  // exchange's probe word and one pack buffer per program: the redistribution's and the halo's);
  // the group leaves nothing. Counted exactly (cache entries) and by the heap in use, the test's
  // own kits left out.
  const long long rebuilds = report.rebuilds;
  const long long entries_allowed = mode == "mpi" ? kReadInPlacePerComm * rebuilds : 0;
  if (report.entries_left > entries_allowed) {
    std::fprintf(stderr, "rank %d: %lld cache entries of communicators alive after the last one's end (allowed %lld: %lld broken)\n",
                 rank, static_cast<long long>(report.entries_left), entries_allowed, rebuilds);
    ++failures;
  }
  const long long growth = static_cast<long long>(report.heap_after) - static_cast<long long>(report.heap_before);
  const long long allowed = kHeapSlack + (mode == "mpi" ? kHeapPerBroken * rebuilds : 0);
  if (growth > allowed) {
    std::fprintf(stderr, "rank %d: the heap in use grew by %lld bytes (allowed %lld)\n", rank, growth, allowed);
    ++failures;
  }
  std::fprintf(stderr, "soak %s rank %d: heap in use %zu -> %zu bytes (%+lld; the soak's kits %zu more), VmRSS %ld -> %ld kB, "
               "VmHWM %ld kB, %lld communicators rebuilt, %lld cache entries left\n",
               mode.c_str(), rank, report.heap_before, report.heap_after, growth, report.kits, report.rss_before,
               report.rss_after, status_kb("VmHWM"), rebuilds, static_cast<long long>(report.entries_left));
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
