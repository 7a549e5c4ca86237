// gdap_comm_fail_next on an in-process group (threads): the rank that says it fails its next
// collective call gets its own status and reason back from that call, every other rank
// GDAP_ERR_REMOTE quoting them, whatever the failing rank passed (NULLs); the failure is used once;
// bad statuses are refused. Each case names its rule.
#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/dims.hpp"
#include "support/group.hpp"
#include "support/rank_move.hpp"

#include <string>
#include <vector>

namespace {

constexpr int64_t kRanks = 3;

struct Outcome {
  gdap_status status = GDAP_SUCCESS;
  std::string text;
};

// Rule: at a barrier, the failing rank returns the status and reason it gave; the others return
// GDAP_ERR_REMOTE "rank 1 failed (GDAP_ERR_PROTOCOL): <reason>". The next barrier succeeds on every
// rank: the failure is used once.
TEST(FailNext, EveryRankReportsTheFailingRanksOwnStatusAndReason) {
  gdap_test::Group group(kRanks);
  const std::string reason = "owned count (8) != buffer shape (9)";
  ASSERT_EQ(gdap_comm_fail_next(group[1], GDAP_ERR_PROTOCOL, reason.c_str()), GDAP_SUCCESS) << gdap_last_error();
  std::vector<Outcome> first(kRanks), second(kRanks);
  gdap_test::on_threads(kRanks, [&](int64_t r) {
    first[r].status = gdap_comm_barrier(group[r]);
    first[r].text = gdap_last_error();
    second[r].status = gdap_comm_barrier(group[r]);
  });
  EXPECT_EQ(first[1].status, GDAP_ERR_PROTOCOL);
  EXPECT_EQ(first[1].text, reason);
  for (int64_t r : {0, 2}) {
    EXPECT_EQ(first[r].status, GDAP_ERR_REMOTE) << r;
    EXPECT_EQ(first[r].text, "rank 1 failed (GDAP_ERR_PROTOCOL): " + reason) << r;
  }
  for (int64_t r = 0; r < kRanks; ++r) EXPECT_EQ(second[r].status, GDAP_SUCCESS) << r << ": " << second[r].text;
}

// Rule: the failing rank's call reads none of its arguments: a redistribution where rank 0 passes
// NULL for the plan and both arrays reports rank 0's reason (not "plan is NULL") on every rank, and
// the other ranks' destinations are untouched.
TEST(FailNext, TheFailingRanksNullArgumentsAreNotWhatThePeersAreTold) {
  constexpr int64_t n = 2;
  gdap_test::Group group(n);
  gdap_test::RankMove move(n, 1);
  ASSERT_EQ(gdap_comm_fail_next(group[0], GDAP_ERR_OUT_OF_RANGE, "rank 0's layout has 3 ranks"), GDAP_SUCCESS);
  std::vector<Outcome> got(n);
  gdap_test::on_threads(n, [&](int64_t r) {
    got[r].status = r == 0 ? gdap_redistribute(group[0], nullptr, nullptr, nullptr) : gdap_redistribute(group[1], move.plan, move.a, move.b);
    got[r].text = gdap_last_error();
  });
  EXPECT_EQ(got[0].status, GDAP_ERR_OUT_OF_RANGE);
  EXPECT_EQ(got[0].text, "rank 0's layout has 3 ranks");
  EXPECT_EQ(got[1].status, GDAP_ERR_REMOTE);
  EXPECT_EQ(got[1].text, "rank 0 failed (GDAP_ERR_OUT_OF_RANGE): rank 0's layout has 3 ranks");
  EXPECT_EQ(move.to, std::vector<double>(4, -1.0)) << "no data moved";
}

// Rule: gdap_gemm_create after gdap_comm_fail_next reads none of its arguments either: rank 0
// passes NULL for `out` and every map, rank 1 valid ones; every rank gets rank 0's reason (not
// "out is NULL"), and no rank waits for the timeout (a 5 s timeout here would say GDAP_ERR_TIMEOUT).
TEST(FailNext, GemmCreateWithANullOutStillCarriesTheReason) {
  constexpr int64_t n = 2;
  gdap_test::Group group(n, 5);
  std::vector<gdap_dim> dims;  // 4 x 4: rows in blocks over 2 ranks, columns whole
  for (int64_t r = 0; r < n; ++r) {
    dims.push_back(gdap_test::block(4, n, r, 2 * r, 2 * r + 2));
    dims.push_back(gdap_test::undistributed(4));
  }
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, n, 2, dims.data()), GDAP_SUCCESS) << gdap_last_error();
  ASSERT_EQ(gdap_comm_fail_next(group[0], GDAP_ERR_IO, "cannot build args"), GDAP_SUCCESS);
  const gdap_dtype f64{GDAP_DTYPE_FLOAT, 64, 1};
  std::vector<Outcome> got(n);
  gdap_test::on_threads(n, [&](int64_t r) {
    gdap_gemm* g = nullptr;
    got[r].status = r == 0 ? gdap_gemm_create(nullptr, group[0], nullptr, nullptr, nullptr, f64, nullptr)
                           : gdap_gemm_create(&g, group[1], map, map, map, f64, nullptr);
    got[r].text = gdap_last_error();
    EXPECT_EQ(g, nullptr) << "rank " << r << " got a plan from a failed call";
    gdap_gemm_destroy(g);
  });
  EXPECT_EQ(got[0].status, GDAP_ERR_IO);
  EXPECT_EQ(got[0].text, "cannot build args");
  EXPECT_EQ(got[1].status, GDAP_ERR_REMOTE);
  EXPECT_EQ(got[1].text, "rank 0 failed (GDAP_ERR_IO): cannot build args");
  // The group still works: a broken group (after a timeout) would fail this barrier.
  gdap_test::on_threads(n, [&](int64_t r) { EXPECT_EQ(gdap_comm_barrier(group[r]), GDAP_SUCCESS) << gdap_last_error(); });
  gdap_map_destroy(map);
}

// Rule: a call that is not collective leaves the failure waiting; a later gdap_comm_fail_next
// replaces an earlier one; a NULL reason reads "no reason given".
TEST(FailNext, WaitsForTheNextCollectiveCallAndTheLastOneCounts) {
  gdap_test::Group group(kRanks);
  ASSERT_EQ(gdap_comm_fail_next(group[2], GDAP_ERR_IO, "first"), GDAP_SUCCESS);
  ASSERT_EQ(gdap_comm_fail_next(group[2], GDAP_ERR_NO_MEMORY, nullptr), GDAP_SUCCESS);
  int64_t rank = -1;
  ASSERT_EQ(gdap_comm_rank(&rank, group[2]), GDAP_SUCCESS);  // not collective: the failure still waits
  std::vector<Outcome> got(kRanks);
  gdap_test::on_threads(kRanks, [&](int64_t r) {
    got[r].status = gdap_comm_barrier(group[r]);
    got[r].text = gdap_last_error();
  });
  EXPECT_EQ(got[2].status, GDAP_ERR_NO_MEMORY);
  EXPECT_EQ(got[2].text, "no reason given");
  EXPECT_EQ(got[0].text, "rank 2 failed (GDAP_ERR_NO_MEMORY): no reason given");
}

// Rule: the status must be an error gdap knows, and the communicator not NULL; a refused call
// leaves nothing waiting.
TEST(FailNext, RefusesSuccessAnUnknownStatusAndANullComm) {
  gdap_test::Group group(1);
  EXPECT_EQ(gdap_comm_fail_next(group[0], GDAP_SUCCESS, "x"), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("GDAP_SUCCESS"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_comm_fail_next(group[0], static_cast<gdap_status>(99), "x"), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("status 99"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_comm_fail_next(nullptr, GDAP_ERR_IO, "x"), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_comm_barrier(group[0]), GDAP_SUCCESS) << gdap_last_error();
}

}  // namespace
