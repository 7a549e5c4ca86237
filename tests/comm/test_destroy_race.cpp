// gdap_comm_destroy racing calls that other threads start on the same communicator, and calls with
// a communicator that is no longer (or never was) live. Rule: every call either runs on the live
// communicator or is refused naming the argument, and destroy never frees one a call uses; no
// call reads freed memory (the AddressSanitizer build checks that, the plain build the statuses).
#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

const std::string kNotLive = "comm: not a live gdap_comm handle (destroyed, or never a communicator)";

// A call with `comm` that succeeded, or was refused because the communicator is gone.
void expect_ran_or_refused(gdap_status status, const char* call) {
  if (status == GDAP_SUCCESS) return;
  EXPECT_EQ(status, GDAP_ERR_INVALID_ARGUMENT) << call << ": " << gdap_last_error();
  EXPECT_EQ(std::string(gdap_last_error()), kNotLive) << call;
}

// Threads that read `comm` (rank, size, kind: safe from any thread) and one that makes its
// collective calls, each calling until it has been refused a few times.
std::vector<std::thread> start_callers(gdap_comm* comm, const std::atomic<bool>& go) {
  constexpr int kReaders = 6;
  constexpr int kRefusalsEach = 3;
  std::vector<std::thread> threads;
  for (int t = 0; t < kReaders; ++t) {
    threads.emplace_back([comm, &go, t] {
      while (!go.load()) std::this_thread::yield();
      for (int refused = 0; refused < kRefusalsEach;) {
        int64_t n = 0;
        gdap_comm_kind kind{};
        const gdap_status s = t % 3 == 0 ? gdap_comm_rank(&n, comm)
                              : t % 3 == 1 ? gdap_comm_size(&n, comm)
                                           : gdap_comm_kind_get(&kind, comm);
        expect_ran_or_refused(s, "a read");
        refused += s != GDAP_SUCCESS;
      }
    });
  }
  threads.emplace_back([comm, &go] {
    while (!go.load()) std::this_thread::yield();
    for (int refused = 0; refused < kRefusalsEach;) {
      const gdap_status s = gdap_comm_barrier(comm);
      expect_ran_or_refused(s, "gdap_comm_barrier");
      refused += s != GDAP_SUCCESS;
    }
  });
  return threads;
}

TEST(DestroyRace, DestroyNeverFreesACommunicatorACallIsAboutToUse) {
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    gdap_comm* comm = nullptr;
    ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS) << gdap_last_error();
    std::atomic<bool> go{false};
    std::vector<std::thread> callers = start_callers(comm, go);
    go.store(true);
    // Refused while a call holds it; each refusal must say so and free nothing.
    gdap_status destroyed;
    while ((destroyed = gdap_comm_destroy(comm)) != GDAP_SUCCESS) {
      ASSERT_EQ(destroyed, GDAP_ERR_INVALID_ARGUMENT);
      const std::string error = gdap_last_error();
      ASSERT_NE(error.find("comm (rank 0) is in a call on another thread"), std::string::npos) << error;
      std::this_thread::yield();
    }
    for (std::thread& t : callers) t.join();
    if (testing::Test::HasFailure()) FAIL() << "round " << round;
  }
}

TEST(DestroyRace, EveryCallWithADestroyedCommunicatorIsRefusedNamingIt) {
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS) << gdap_last_error();
  ASSERT_EQ(gdap_comm_destroy(comm), GDAP_SUCCESS) << gdap_last_error();
  int64_t n = -1;
  EXPECT_EQ(gdap_comm_size(&n, comm), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_last_error(), kNotLive);
  EXPECT_EQ(n, -1) << "the caller's output is untouched";
  EXPECT_EQ(gdap_comm_barrier(comm), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_last_error(), kNotLive);
  EXPECT_EQ(gdap_comm_set_timeout(comm, 1.0), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_last_error(), kNotLive);
  EXPECT_EQ(gdap_comm_fail_next(comm, GDAP_ERR_IO, "x"), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_last_error(), kNotLive);
}

TEST(DestroyRace, ASecondDestroyIsRefusedNotFreedTwice) {
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS) << gdap_last_error();
  ASSERT_EQ(gdap_comm_destroy(comm), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(gdap_comm_destroy(comm), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_last_error(), kNotLive);
}

TEST(DestroyRace, APointerThatWasNeverACommunicatorIsRefusedUnread) {
  // An address no process maps: reading it (a tag check) would crash.
  auto* never = reinterpret_cast<gdap_comm*>(uintptr_t{64});
  int64_t n = -1;
  EXPECT_EQ(gdap_comm_rank(&n, never), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_last_error(), kNotLive);
  EXPECT_EQ(gdap_comm_destroy(never), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_last_error(), kNotLive);
}

}  // namespace
