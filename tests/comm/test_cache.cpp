// The per-communicator cache (comm/cache.hpp): what its entries' lives are. A communicator that
// broke over MPI calls abandon(): it must free every entry except those other processes may still
// read in place, which it leaves alive to the end of the process. Left alive, every entry of every
// broken communicator made a long-running job grow by a few KiB per timeout (tests/move/soak.cpp).
// Counted by Scratch::alive(), the process's live entries, deterministically.
// Cache::recent (below): what an engine keeps per program, for the last 4 programs of a kind.
#include "comm/cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
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

// ---- Cache::recent: what an engine keeps per program, for the last 4 programs of a kind ----

namespace {

struct Program {
  int id;
};

// Looks program `id` up under "kind", building it when none is kept; returns what it found or built.
int use(gdap::Cache& cache, int id, std::vector<int>* built = nullptr) {
  return cache.recent<Program>("kind", [&](const Program& p) { return p.id == id; }, [&] {
    if (built) built->push_back(id);
    return std::make_unique<Program>(Program{id});
  }).id;
}

TEST(CacheRecent, TwoProgramsInTurnAreBuiltOnceEach) {
  gdap::Cache cache;
  std::vector<int> built;
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(use(cache, 1, &built), 1);
    EXPECT_EQ(use(cache, 2, &built), 2);
  }
  EXPECT_EQ(built, (std::vector<int>{1, 2}));
  EXPECT_EQ(cache.builds, 2);
}

TEST(CacheRecent, FourAreKeptAndAFifthEvictsTheLeastRecentlyUsed) {
  gdap::Cache cache;
  std::vector<int> built;
  for (int id : {1, 2, 3, 4, 1}) use(cache, id, &built);  // 1 used again: 2 is now the oldest
  use(cache, 5, &built);                                    // evicts 2
  for (int id : {1, 3, 4, 5}) use(cache, id, &built);       // all kept
  EXPECT_EQ(built, (std::vector<int>{1, 2, 3, 4, 5}));
  use(cache, 2, &built);                                    // built again
  EXPECT_EQ(built.back(), 2);
  EXPECT_EQ(cache.builds, 6);
}

TEST(CacheRecent, FivePlansInTurnRebuildEveryCall) {
  gdap::Cache cache;
  for (int round = 0; round < 3; ++round) {
    for (int id = 1; id <= 5; ++id) EXPECT_EQ(use(cache, id), id);
  }
  EXPECT_EQ(cache.builds, 15);  // least recently used first out: a ring of 5 always misses
}

TEST(CacheRecent, ABuildThatThrowsKeepsWhatWasKept) {
  gdap::Cache cache;
  for (int id : {1, 2, 3, 4}) use(cache, id);
  EXPECT_THROW(cache.recent<Program>("kind", [](const Program&) { return false; },
                                     []() -> std::unique_ptr<Program> { throw std::runtime_error("out of memory"); }),
               std::runtime_error);
  std::vector<int> built;
  for (int id : {1, 2, 3, 4}) use(cache, id, &built);
  EXPECT_TRUE(built.empty());
  EXPECT_EQ(cache.builds, 4);
}

TEST(CacheRecent, KindsUnderOtherKeysDoNotEvictEachOther) {
  gdap::Cache cache;
  auto other = [&](int id) {
    return cache.recent<Program>("other", [&](const Program& p) { return p.id == id; },
                                 [&] { return std::make_unique<Program>(Program{id}); }).id;
  };
  for (int id = 1; id <= 4; ++id) use(cache, id), other(id + 10);
  std::vector<int> built;
  for (int id = 1; id <= 4; ++id) use(cache, id, &built);
  EXPECT_TRUE(built.empty());
  EXPECT_EQ(cache.builds, 8);
}

}  // namespace
