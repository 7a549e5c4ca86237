// Ranks of an in-process group that make different collective calls at the same point: every
// ordered pair of the calls a kit makes (call_kit.hpp), two ranks in one and the third in the
// other. Rule: every rank returns GDAP_ERR_INVALID_ARGUMENT naming both calls, at once (no
// timeout, no crash: this used to be a SIGSEGV in comm/group.cpp), no element of any section
// changes, and the group stays usable (a barrier of every rank then succeeds).
#include "call_kit.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/group.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace {

using call_kit::Call;
using call_kit::Kit;

struct Pair {
  Call most, odd;  // ranks 0 and 1 make `most`, rank 2 makes `odd`
};

std::vector<Pair> pairs() {
  std::vector<Pair> out;
  for (Call a : call_kit::kCalls) {
    for (Call b : call_kit::kCalls) {
      if (a != b) out.push_back({a, b});
    }
  }
  return out;
}

class Mismatched : public ::testing::TestWithParam<Pair> {};

TEST_P(Mismatched, EveryRankFailsAtOnceNamingBothCallsAndNothingChanges) {
  constexpr int64_t n = 3;
  const Pair p = GetParam();
  gdap_test::Group group(n, 20);
  std::vector<std::unique_ptr<Kit>> kits(n);
  gdap_test::on_threads(n, [&](int64_t r) { kits[static_cast<size_t>(r)] = std::make_unique<Kit>(group[r], r, n); });
  for (const auto& k : kits) ASSERT_TRUE(k->ok()) << gdap_last_error();
  std::vector<gdap_status> got(n);
  std::vector<std::string> errors(n);
  const auto start = std::chrono::steady_clock::now();
  gdap_test::on_threads(n, [&](int64_t r) {
    Kit& kit = *kits[static_cast<size_t>(r)];
    kit.fill(100);
    got[static_cast<size_t>(r)] = kit.call(r == 2 ? p.odd : p.most);
    errors[static_cast<size_t>(r)] = gdap_last_error();
  });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10) << "not a timeout";
  for (int64_t r = 0; r < n; ++r) {
    const std::string& e = errors[static_cast<size_t>(r)];
    EXPECT_EQ(got[static_cast<size_t>(r)], GDAP_ERR_INVALID_ARGUMENT) << "rank " << r << ": " << e;
    EXPECT_NE(e.find("different collective calls"), std::string::npos) << e;
    EXPECT_NE(e.find(call_kit::name(p.most)), std::string::npos) << e;
    EXPECT_NE(e.find(call_kit::name(p.odd)), std::string::npos) << e;
    for (const std::string& w : kits[static_cast<size_t>(r)]->wrong(p.most, false)) ADD_FAILURE() << "changed: " << w;
  }
  std::vector<gdap_status> after(n);
  gdap_test::on_threads(n, [&](int64_t r) { after[static_cast<size_t>(r)] = gdap_comm_barrier(group[r]); });
  for (gdap_status s : after) EXPECT_EQ(s, GDAP_SUCCESS) << "the group is still usable";
  gdap_test::on_threads(n, [&](int64_t r) { kits[static_cast<size_t>(r)].reset(); });
}

std::string pair_name(const ::testing::TestParamInfo<Pair>& info) {
  auto bare = [](Call c) { return std::string(call_kit::name(c)).substr(5); };  // drop "gdap_"
  return bare(info.param.most) + "_vs_" + bare(info.param.odd);
}

INSTANTIATE_TEST_SUITE_P(Calls, Mismatched, ::testing::ValuesIn(pairs()), pair_name);

// The same kit with every rank in the same call: each call's result is what the kit expects (so
// that the mismatch cases above, and the soak, check against right answers).
class Matched : public ::testing::TestWithParam<Call> {};

TEST_P(Matched, EveryRankSucceedsWithTheKnownResult) {
  constexpr int64_t n = 3;
  gdap_test::Group group(n, 20);
  std::vector<std::unique_ptr<Kit>> kits(n);
  gdap_test::on_threads(n, [&](int64_t r) { kits[static_cast<size_t>(r)] = std::make_unique<Kit>(group[r], r, n); });
  std::vector<gdap_status> got(n);
  gdap_test::on_threads(n, [&](int64_t r) {
    kits[static_cast<size_t>(r)]->fill(7);
    got[static_cast<size_t>(r)] = kits[static_cast<size_t>(r)]->call(GetParam());
  });
  for (int64_t r = 0; r < n; ++r) {
    EXPECT_EQ(got[static_cast<size_t>(r)], GDAP_SUCCESS) << gdap_last_error();
    for (const std::string& w : kits[static_cast<size_t>(r)]->wrong(GetParam(), true)) ADD_FAILURE() << w;
  }
  gdap_test::on_threads(n, [&](int64_t r) { kits[static_cast<size_t>(r)].reset(); });
}

INSTANTIATE_TEST_SUITE_P(Calls, Matched, ::testing::ValuesIn(call_kit::kCalls),
                         [](const ::testing::TestParamInfo<Call>& info) {
                           return std::string(call_kit::name(info.param)).substr(5);
                         });

}  // namespace
