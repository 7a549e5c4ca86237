// gdap_comm_set_interrupt on an in-process group (threads): the caller's check, asked every
// 100 ms or so while a rank waits, ends the wait and breaks the group; a check that says no, or a
// call that does not wait, changes nothing. Each case names its rule.
#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/group.hpp"
#include "support/rank_move.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A check that says stop once `stop` is set, counting its calls.
struct Flag {
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  static int check(void* user) {
    auto* f = static_cast<Flag*>(user);
    f->calls++;
    return f->stop ? 1 : 0;
  }
};

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

// Rule: an interrupt ends a rank's wait within about 0.1 s of the check saying so, and every rank
// waiting with it returns at once too (GDAP_ERR_INTERRUPTED naming it); the group is broken from
// then on, and a rank that comes later fails at once. The destination of an interrupted
// redistribution is untouched. Rank 2 never comes; the timeout (30 s) is far away.
TEST(Interrupt, EndsTheWaitOfEveryWaitingRankAndBreaksTheGroup) {
  constexpr int64_t n = 3;
  gdap_test::Group group(n, 30);
  Flag flag;
  ASSERT_EQ(gdap_comm_set_interrupt(group[0], Flag::check, &flag), GDAP_SUCCESS);
  gdap_test::RankMove move(n, 1);
  gdap_status got[2] = {GDAP_SUCCESS, GDAP_SUCCESS};
  std::string said[2];
  Clock::time_point returned[2], stopped;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stopped = Clock::now();
    flag.stop = true;
  });
  gdap_test::on_threads(2, [&](int64_t r) {
    if (r == 0) {
      got[0] = gdap_comm_barrier(group[0]);
    } else {
      got[1] = gdap_redistribute(group[1], move.plan, move.a, move.b);
    }
    returned[r] = Clock::now();
    said[r] = gdap_last_error();
  });
  stopper.join();
  EXPECT_EQ(got[0], GDAP_ERR_INTERRUPTED) << said[0];
  EXPECT_TRUE(contains(said[0], "rank 0 was interrupted")) << said[0];
  EXPECT_EQ(got[1], GDAP_ERR_INTERRUPTED) << said[1];
  EXPECT_TRUE(contains(said[1], "rank 1: the in-process group broke")) << said[1];
  EXPECT_TRUE(contains(said[1], "rank 0 was interrupted")) << said[1];
  for (const auto& t : returned) {
    EXPECT_LT(std::chrono::duration<double>(t - stopped).count(), 1.0) << "within a second of the check saying stop";
  }
  for (double v : move.to) EXPECT_EQ(v, -1.0) << "an interrupted redistribution moves nothing";
  const auto later = Clock::now();
  EXPECT_EQ(gdap_comm_barrier(group[2]), GDAP_ERR_INTERRUPTED);
  EXPECT_TRUE(contains(gdap_last_error(), "rank 2: the in-process group is broken")) << gdap_last_error();
  EXPECT_EQ(gdap_comm_barrier(group[0]), GDAP_ERR_INTERRUPTED);
  EXPECT_LT(since(later), 1.0) << "at once";
}

// Rule: a check that says no changes nothing: it is asked about every 100 ms while the rank waits,
// and the collective completes when the late rank comes.
TEST(Interrupt, ACheckThatSaysNoIsAskedAndTheCallCompletes) {
  constexpr int64_t n = 2;
  gdap_test::Group group(n, 30);
  Flag flag;
  ASSERT_EQ(gdap_comm_set_interrupt(group[0], Flag::check, &flag), GDAP_SUCCESS);
  gdap_status got[2] = {GDAP_ERR_INTERNAL, GDAP_ERR_INTERNAL};
  gdap_test::on_threads(n, [&](int64_t r) {
    if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    got[r] = gdap_comm_barrier(group[r]);
  });
  EXPECT_EQ(got[0], GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(got[1], GDAP_SUCCESS);
  EXPECT_GE(flag.calls, 2) << "asked while rank 0 waited half a second";
  EXPECT_LE(flag.calls, 10) << "about every 100 ms, not in a loop";
}

// Rule: a call that does not wait never calls the check (rank 0 arrives last).
TEST(Interrupt, ACallThatDoesNotWaitNeverAsks) {
  constexpr int64_t n = 2;
  gdap_test::Group group(n, 30);
  Flag flag;
  flag.stop = true;  // would interrupt, were it asked
  ASSERT_EQ(gdap_comm_set_interrupt(group[0], Flag::check, &flag), GDAP_SUCCESS);
  gdap_status got[2] = {GDAP_ERR_INTERNAL, GDAP_ERR_INTERNAL};
  gdap_test::on_threads(n, [&](int64_t r) {
    if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    got[r] = gdap_comm_barrier(group[r]);
  });
  EXPECT_EQ(got[0], GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(got[1], GDAP_SUCCESS);
  EXPECT_EQ(flag.calls, 0);
}

// Rule: the check is the caller's to clear (NULL: none), and a NULL communicator is refused.
TEST(Interrupt, ANullCheckClearsItAndANullCommIsRefused) {
  gdap_test::Group group(2, 30);
  Flag flag;
  flag.stop = true;
  ASSERT_EQ(gdap_comm_set_interrupt(group[0], Flag::check, &flag), GDAP_SUCCESS);
  ASSERT_EQ(gdap_comm_set_interrupt(group[0], nullptr, nullptr), GDAP_SUCCESS);
  gdap_status got[2] = {GDAP_ERR_INTERNAL, GDAP_ERR_INTERNAL};
  gdap_test::on_threads(2, [&](int64_t r) {
    if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    got[r] = gdap_comm_barrier(group[r]);
  });
  EXPECT_EQ(got[0], GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(flag.calls, 0);
  EXPECT_EQ(gdap_comm_set_interrupt(nullptr, Flag::check, &flag), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "comm is NULL")) << gdap_last_error();
}

}  // namespace
