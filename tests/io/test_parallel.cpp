// io/parallel.hpp, the threads a rank's Zarr chunks are decoded and encoded on: every task runs
// once, each worker number is used by one thread at a time, the error rethrown is the first
// failing task's in order (what a serial walk would report) whichever thread failed first, and
// GDAP_IO_THREADS is read as documented (1 keeps the serial path; a bad value is named), and by
// default a rank takes its share of the cores among the ranks on its machine.
#include "io/parallel.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using gdap::io::io_threads;
using gdap::io::parallel_for;

TEST(IoThreads, EveryTaskRunsOnceAndWorkersAreNotShared) {
  for (int workers : {1, 2, 4, 8}) {
    const int64_t n = 1000;
    std::vector<std::atomic<int>> runs(n);
    std::vector<std::atomic<int>> busy(static_cast<size_t>(workers));
    std::atomic<bool> shared{false};
    parallel_for(n, workers, [&](int64_t i, int w) {
      if (w < 0 || w >= workers) throw std::runtime_error("worker out of range");
      if (busy[static_cast<size_t>(w)]++ != 0) shared = true;
      ++runs[static_cast<size_t>(i)];
      --busy[static_cast<size_t>(w)];
    });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)], 1) << "rule: task " << i << " runs once (" << workers << " workers)";
    EXPECT_FALSE(shared) << "rule: a worker number (its scratch) is used by one thread at a time";
  }
}

TEST(IoThreads, TheFirstFailingTaskInOrderIsReported) {
  for (int round = 0; round < 20; ++round) {
    std::vector<std::atomic<int>> ran(64);
    try {
      parallel_for(64, 4, [&](int64_t i, int) {
        ++ran[static_cast<size_t>(i)];
        if (i == 3) {  // fails last in time: the later failure is seen first
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          gdap::fail(GDAP_ERR_IO, "task 3 failed");
        }
        if (i == 5) gdap::fail(GDAP_ERR_IO, "task 5 failed");
      });
      FAIL() << "rule: a failing task's error reaches the caller";
    } catch (const gdap::Error& e) {
      EXPECT_EQ(std::string(e.what()), "task 3 failed") << "rule: the first failing task in order is reported, not the first in time";
      EXPECT_EQ(e.status(), GDAP_ERR_IO);
    }
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(ran[static_cast<size_t>(i)], 1) << "rule: every task before the failing one runs";
  }
}

TEST(IoThreads, NoTasksAndOneWorker) {
  int calls = 0;
  parallel_for(0, 4, [&](int64_t, int) { ++calls; });
  EXPECT_EQ(calls, 0) << "rule: no tasks, no calls";
  std::vector<int64_t> order;
  parallel_for(5, 1, [&](int64_t i, int w) {
    EXPECT_EQ(w, 0);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4})) << "rule: one worker is the serial path, in order";
}

TEST(IoThreads, EnvironmentOverride) {
  ::setenv("GDAP_IO_THREADS", "1", 1);
  EXPECT_EQ(io_threads(), 1) << "rule: GDAP_IO_THREADS=1 keeps the serial path";
  ::setenv("GDAP_IO_THREADS", "12", 1);
  EXPECT_EQ(io_threads(), 12) << "rule: the override is taken as given, past the default cap";
  // Digits alone (core/setting.hpp): " 5" and "+5" used to be taken as 5 and "" as unset.
  for (const char* bad : {"0", "65", "-2", "4x", "many", "", "-1", "1e3", "12abc", "1180591620717411303424", " 5", "+5"}) {
    ::setenv("GDAP_IO_THREADS", bad, 1);
    try {
      io_threads();
      ADD_FAILURE() << "rule: GDAP_IO_THREADS='" << bad << "' is refused";
    } catch (const gdap::Error& e) {
      EXPECT_EQ(e.status(), GDAP_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(std::string(e.what()), std::string("GDAP_IO_THREADS='") + bad + "': not a whole number from 1 to 64");
    }
  }
  ::unsetenv("GDAP_IO_THREADS");
  EXPECT_GE(io_threads(), 1);
  EXPECT_LE(io_threads(), 8) << "rule: by default at most 8";
}

TEST(IoThreads, DefaultIsThisRanksShareOfItsCores) {
  ::unsetenv("GDAP_IO_THREADS");
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int cores = CPU_COUNT(&set);
  EXPECT_EQ(io_threads(1), std::clamp(cores, 1, 8)) << "rule: one rank on the machine: the cores it may run on, at most 8";
  EXPECT_EQ(io_threads(2), std::clamp(cores / 2, 1, 8)) << "rule: two ranks on the machine share its cores";
  EXPECT_EQ(io_threads(int64_t{cores} * 4), 1) << "rule: more ranks than cores: one thread each, never none";
  ::setenv("GDAP_IO_THREADS", "3", 1);
  EXPECT_EQ(io_threads(int64_t{cores} * 4), 3) << "rule: the override wins over the share";
  ::unsetenv("GDAP_IO_THREADS");
}

}  // namespace
