// MapGather (comm/map_gather.hpp) over an in-process group: a repeated distribution is taken from
// the communicator's memory, a changed one is gathered anew, an invalid one fails on every rank
// with its name, and ranks whose memories diverged (one forgot, then filled its slots in another
// order) never combine different maps. Also agree_gather's shares and token check.
#include "comm/comm.hpp"
#include "comm/map_gather.hpp"
#include "core/error.hpp"
#include "maps/map.hpp"
#include "support/dims.hpp"
#include "support/group.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using gdap_test::block;
using gdap_test::Group;
using gdap_test::on_threads;

constexpr int64_t kRanks = 3;

// Block of 12 rows over the ranks with rank 1's block ending at `split` (rank 1: [4, split),
// rank 2: [split, 12)).
gdap_dim rows(int64_t r, int64_t split) {
  const int64_t starts[] = {0, 4, split, 12};
  return block(12, kRanks, r, starts[r], starts[r + 1]);
}

// The maps each rank gets for `dims` (one list per rank), gathered in one call per rank.
std::vector<std::vector<gdap::SharedMap>> gather(const Group& g, const std::vector<std::vector<gdap_dim>>& dims) {
  std::vector<std::vector<gdap::SharedMap>> got(kRanks);
  on_threads(kRanks, [&](int64_t r) {
    gdap_comm& comm = *g[r];
    gdap::MapGather maps(comm);
    const auto offers = gdap::agree_gather(comm, [&] {
      for (size_t k = 0; k < dims[static_cast<size_t>(r)].size(); ++k) maps.add("map " + std::to_string(k), 1, &dims[static_cast<size_t>(r)][k]);
      return gdap::Share{"same", maps.offer()};
    }, [](size_t, std::string_view, std::string_view) { return std::string("mismatch"); });
    got[static_cast<size_t>(r)] = maps.finish(offers);
  });
  return got;
}

// Every rank's dims: one map, rows split at `split`.
std::vector<std::vector<gdap_dim>> split_at(int64_t split) {
  std::vector<std::vector<gdap_dim>> dims;
  for (int64_t r = 0; r < kRanks; ++r) dims.push_back({rows(r, split)});
  return dims;
}

int64_t stop_of(const gdap::SharedMap& map, int64_t rank) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_map_dim(&d, map.get(), rank, 0), GDAP_SUCCESS) << gdap_last_error();
  return d.stop;
}

TEST(MapGather, ARepeatedDistributionIsTakenFromMemory) {
  Group g(kRanks);
  const auto first = gather(g, split_at(8));
  const auto again = gather(g, split_at(8));
  for (int64_t r = 0; r < kRanks; ++r) {
    const auto k = static_cast<size_t>(r);
    ASSERT_EQ(again[k].size(), 1u);
    EXPECT_EQ(again[k][0].get(), first[k][0].get()) << "rank " << r << " built the map again";
    EXPECT_EQ(stop_of(again[k][0], 1), 8);
  }
}

TEST(MapGather, OneCallBuildsADistributionOnce) {
  Group g(kRanks);
  std::vector<std::vector<gdap_dim>> twice;
  for (int64_t r = 0; r < kRanks; ++r) twice.push_back({rows(r, 8), rows(r, 8)});
  const auto got = gather(g, twice);
  for (int64_t r = 0; r < kRanks; ++r) EXPECT_EQ(got[static_cast<size_t>(r)][0].get(), got[static_cast<size_t>(r)][1].get());
  const auto one = gather(g, split_at(8));
  EXPECT_EQ(one[0][0].get(), got[0][0].get());
}

TEST(MapGather, AChangedDistributionIsGatheredAnew) {
  Group g(kRanks);
  const auto first = gather(g, split_at(8));
  const auto changed = gather(g, split_at(6));  // ranks 1 and 2 changed; rank 0's bytes are the same
  for (int64_t r = 0; r < kRanks; ++r) {
    const auto k = static_cast<size_t>(r);
    EXPECT_NE(changed[k][0].get(), first[k][0].get());
    EXPECT_EQ(stop_of(changed[k][0], 1), 6) << "rank " << r;
  }
  const auto back = gather(g, split_at(8));  // still remembered
  for (int64_t r = 0; r < kRanks; ++r) EXPECT_EQ(back[static_cast<size_t>(r)][0].get(), first[static_cast<size_t>(r)][0].get());
}

TEST(MapGather, AnInvalidDistributionFailsOnEveryRankWithItsName) {
  Group g(kRanks);
  gather(g, split_at(8));
  std::vector<std::vector<gdap_dim>> dims = split_at(8);
  dims[1][0] = rows(1, 7);  // rank 1 stops at 7, rank 2 starts at 8: index 7 has no owner
  dims[1].insert(dims[1].begin(), rows(1, 8));
  dims[0].insert(dims[0].begin(), rows(0, 8));
  dims[2].insert(dims[2].begin(), rows(2, 8));
  std::vector<std::string> errors(kRanks);
  on_threads(kRanks, [&](int64_t r) {
    gdap_comm& comm = *g[r];
    gdap::MapGather maps(comm);
    const auto k = static_cast<size_t>(r);
    try {
      const auto offers = gdap::agree_gather(comm, [&] {
        maps.add("source", 1, &dims[k][0]);
        maps.add("result", 1, &dims[k][1]);
        return gdap::Share{"same", maps.offer()};
      }, [](size_t, std::string_view, std::string_view) { return std::string("mismatch"); });
      maps.finish(offers);
    } catch (const gdap::Error& e) {
      errors[k] = e.what();
    }
  });
  for (int64_t r = 0; r < kRanks; ++r) {
    EXPECT_EQ(errors[static_cast<size_t>(r)].rfind("result's distribution: ", 0), 0u) << errors[static_cast<size_t>(r)];
    EXPECT_EQ(errors[static_cast<size_t>(r)], errors[0]);
  }
  const auto valid = gather(g, split_at(8));  // the invalid one was not remembered; the valid one is
  EXPECT_EQ(stop_of(valid[0][0], 1), 8);
}

// Rank 1 forgets (as after a failure of its own), then every rank gathers a second distribution
// in which only rank 1's part differs: ranks 0 and 2 file it in a new slot, rank 1 in its first
// slot, where ranks 0 and 2 keep the first distribution. Their dictionaries match that slot on
// every rank, so only the fingerprints keep ranks 0 and 2 from taking the first distribution.
TEST(MapGather, RanksWhoseMemoriesDivergedDoNotCombineDifferentMaps) {
  Group g(kRanks);
  // Unstructured, replicas allowed: rank 1 holds {0} or {0, 1}, a replica either way.
  const int64_t low[] = {0, 1, 2, 3, 4, 5}, high[] = {6, 7, 8, 9, 10, 11};
  auto held = [&](int64_t extra) {
    std::vector<std::vector<gdap_dim>> dims(kRanks, std::vector<gdap_dim>(1, GDAP_DIM_INIT));
    EXPECT_EQ(gdap_dim_set_unstructured(&dims[0][0], 12, kRanks, 0, low, 6, 0), GDAP_SUCCESS);
    EXPECT_EQ(gdap_dim_set_unstructured(&dims[1][0], 12, kRanks, 1, low, extra, 0), GDAP_SUCCESS);
    EXPECT_EQ(gdap_dim_set_unstructured(&dims[2][0], 12, kRanks, 2, high, 6, 0), GDAP_SUCCESS);
    return dims;
  };
  gather(g, held(1));
  g[1]->cache.slot("comm.maps").reset();  // rank 1 forgets what it gathered
  gather(g, held(2));
  const auto again = gather(g, held(2));
  for (int64_t r = 0; r < kRanks; ++r) {
    gdap_dim d = GDAP_DIM_INIT;
    ASSERT_EQ(gdap_map_dim(&d, again[static_cast<size_t>(r)][0].get(), 1, 0), GDAP_SUCCESS);
    EXPECT_EQ(d.num_indices, 2) << "rank " << r << " took the other distribution";
  }
}

TEST(MapGather, TheLeastRecentlyUsedMapMakesRoom) {
  Group g(kRanks);
  const auto first = gather(g, split_at(4));
  for (int64_t split = 5; split <= 12; ++split) gather(g, split_at(split));  // 8 more: 9 in all
  const auto newest = gather(g, split_at(12));
  const auto oldest = gather(g, split_at(4));
  EXPECT_EQ(stop_of(oldest[0][0], 1), 4);
  EXPECT_NE(oldest[0][0].get(), first[0][0].get()) << "9 maps fit in 8 slots";
  EXPECT_EQ(newest[0][0].get(), gather(g, split_at(12))[0][0].get());
}

TEST(AgreeGather, SharesComeInRankOrderAndTokensMustMatch) {
  Group g(kRanks);
  std::vector<std::vector<std::string>> shares(kRanks);
  on_threads(kRanks, [&](int64_t r) {
    shares[static_cast<size_t>(r)] = gdap::agree_gather(*g[r], [&] { return gdap::Share{"t", std::string(static_cast<size_t>(r), 'x')}; },
                                                        [](size_t, std::string_view, std::string_view) { return std::string(); });
  });
  for (const auto& s : shares) EXPECT_EQ(s, (std::vector<std::string>{"", "x", "xx"}));
  std::vector<std::string> errors(kRanks);
  on_threads(kRanks, [&](int64_t r) {
    try {
      gdap::agree_gather(*g[r], [&] { return gdap::Share{r == 2 ? "op max" : "op sum", {}}; },
                         [](size_t rank, std::string_view theirs, std::string_view first) {
                           return std::to_string(rank) + ": " + std::string(theirs) + " / " + std::string(first);
                         });
    } catch (const gdap::Error& e) {
      errors[static_cast<size_t>(r)] = e.what();
    }
  });
  for (const std::string& e : errors) EXPECT_EQ(e, "2: op max / op sum");
}

}  // namespace
