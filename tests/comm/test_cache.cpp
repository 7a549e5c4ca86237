// The per-communicator cache (comm/cache.hpp): what its entries' lives are. A communicator that
// broke over MPI calls abandon(): it must free every entry except those other processes may still
// read in place, which it leaves alive to the end of the process. Left alive, every entry of every
// broken communicator made a long-running job grow by a few KiB per timeout (tests/move/soak.cpp).
// Counted by Scratch::alive(), the process's live entries, deterministically.
#include "comm/cache.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

// Every Published entry alive: what abandon() leaves stays reachable, so that each test frees it at
// its end (and LeakSanitizer sees no leak).
std::vector<gdap::Scratch*>& published_alive() {
  static std::vector<gdap::Scratch*> alive;
  return alive;
}

struct Plain final : gdap::Scratch {};  // plans, copy lists, gathered maps: this process's alone
struct Published final : gdap::Scratch {
  Published() { published_alive().push_back(this); }
  ~Published() override { std::erase(published_alive(), this); }
  bool read_in_place() const override { return true; }  // a pack buffer peers read (cross-memory attach)
};

// Frees what abandon() left, as the end of the process would.
void free_left() {
  while (!published_alive().empty()) delete published_alive().back();
}

// Fills `cache` with `plain` entries nobody else reads and `published` ones peers read in place.
void fill(gdap::Cache& cache, int plain, int published) {
  for (int i = 0; i < plain; ++i) cache.get<Plain>("plain." + std::to_string(i));
  for (int i = 0; i < published; ++i) cache.get<Published>("published." + std::to_string(i));
}

TEST(Cache, AbandonFreesEveryEntryNoPeerReadsInPlace) {
  const int64_t before = gdap::Scratch::alive();
  gdap::Cache cache;
  fill(cache, 5, 0);
  EXPECT_EQ(gdap::Scratch::alive(), before + 5);
  cache.abandon();
  EXPECT_EQ(gdap::Scratch::alive(), before);
}

TEST(Cache, AbandonLeavesEntriesPeersReadInPlaceAlive) {
  const int64_t before = gdap::Scratch::alive();
  {
    gdap::Cache cache;
    fill(cache, 4, 2);
    cache.abandon();
    EXPECT_EQ(gdap::Scratch::alive(), before + 2);
    EXPECT_EQ(cache.find<Published>("published.0"), nullptr) << "an abandoned entry is no longer the cache's";
  }  // the cache's end frees nothing it abandoned
  EXPECT_EQ(gdap::Scratch::alive(), before + 2);
  free_left();
  EXPECT_EQ(gdap::Scratch::alive(), before);
}

TEST(Cache, RepeatedBreaksLeaveOnlyWhatPeersRead) {
  // A soak's pattern: a communicator per timeout, each filled then broken.
  const int64_t before = gdap::Scratch::alive();
  for (int broken = 0; broken < 100; ++broken) {
    gdap::Cache cache;
    fill(cache, 6, 1);
    cache.abandon();
  }
  EXPECT_EQ(gdap::Scratch::alive(), before + 100);
  free_left();
}

TEST(Cache, ReplacingAnEntryOfAnotherKindFreesTheOldOne) {
  const int64_t before = gdap::Scratch::alive();
  gdap::Cache cache;
  cache.get<Plain>("key");
  cache.get<Published>("key");
  EXPECT_EQ(gdap::Scratch::alive(), before + 1);
  EXPECT_NE(cache.find<Published>("key"), nullptr);
}

TEST(Cache, ClearAndTheCachesEndFreeEverything) {
  const int64_t before = gdap::Scratch::alive();
  {
    gdap::Cache cache;
    fill(cache, 3, 2);
    cache.clear();
    EXPECT_EQ(gdap::Scratch::alive(), before);
    fill(cache, 3, 2);
  }
  EXPECT_EQ(gdap::Scratch::alive(), before);
}

}  // namespace
