// disagreeing_ranks.hpp's table on an in-process group of 2 and of 3 ranks; and a GDAP_GROUP_COPY
// other than push or pull, which used to mean push silently.
#include "disagreeing_ranks.hpp"

#include <gtest/gtest.h>

#include "support/group.hpp"

#include <cstdlib>

#include <string>
#include <vector>

namespace {

TEST(DisagreeingRanks, EveryRankRefusedNamingWhatDiffersAndNothingMoves) {
  for (int64_t n : {2, 3}) {
    for (const std::string& f : rank_runs::run_group(n, disagreeing::body)) ADD_FAILURE() << n << " ranks: " << f;
  }
}

TEST(DisagreeingRanks, BadGroupCopyIsRefusedNamingVariableAndValue) {
  for (const char* bad : {"Pull", "garbage", ""}) {
    ::setenv("GDAP_GROUP_COPY", bad, 1);
    gdap_test::Group group(2, 10);
    std::vector<gdap_status> got(2);
    std::vector<std::string> errors(2);
    gdap_test::on_threads(2, [&](int64_t r) {
      using namespace disagreeing;
      const MapPtr map = map_of(2, 1, [](int64_t q) { return std::vector<gdap_dim>{block(8, 2, q, 1)}; });
      gdap_halo* halo = nullptr;
      EXPECT_EQ(gdap_halo_create(&halo, map.get(), kF64, r, nullptr), GDAP_SUCCESS) << gdap_last_error();
      Section local(kF64, {block(8, 2, r, 1)}, static_cast<double>(r + 1));  // 4 owned, 1 padding
      got[static_cast<size_t>(r)] = gdap_halo_exchange(group[r], halo, local.get());
      errors[static_cast<size_t>(r)] = gdap_last_error();
      EXPECT_TRUE(local.changed(0, 5, static_cast<double>(r + 1)).empty()) << "rank " << r << ": the padding changed";
      gdap_halo_destroy(halo);
    });
    ::unsetenv("GDAP_GROUP_COPY");
    for (size_t r = 0; r < 2; ++r) {
      EXPECT_EQ(got[r], GDAP_ERR_INVALID_ARGUMENT) << "rank " << r << ": " << errors[r];
      EXPECT_NE(errors[r].find(std::string("GDAP_GROUP_COPY='") + bad + "': not one of push, pull"), std::string::npos)
          << errors[r];
    }
  }
}

}  // namespace
