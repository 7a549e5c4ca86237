// Saves and loads of one path at the same time (session 14): a load during a save reads the old
// array or the new one whole, never the moment of the swap (no zarr.json) nor files of two saves
// across ranks; two saves racing for one path give one a clear "another save is in progress"
// (GDAP_ERR_IO) and leave the other's array whole. The in-progress states are made by hand here
// (the lock a save holds, its hidden folders or marker), finished by a thread while the load waits.
#include "io/save_helpers.hpp"
#include "io/settle.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

namespace {

using namespace save_test;  // NOLINT: the helpers of every save test
using Clock = std::chrono::steady_clock;

constexpr const char* kHex = "0123456789abcdef";

void must_rename(const fs::path& from, const fs::path& to) { ASSERT_EQ(std::rename(from.c_str(), to.c_str()), 0) << from << " -> " << to; }

// The store a swap replaces (tag 1, at dir) and the new one it moves in (tag 2, at next), on 2 ranks.
void save_old_and_new(const fs::path& dir, const fs::path& next) {
  ASSERT_EQ(zarr_save(2, 1, dir).status, GDAP_SUCCESS);
  ASSERT_EQ(zarr_save(2, 2, next).status, GDAP_SUCCESS);
}

// Step 1 of an overwrite under way, by hand: the store's folder locked, .gdap-aside-X made and
// zarr.json moved into it (the folder holds no store now), the new store whole in .gdap-new-X.
struct SwapUnderWay {
  fs::path dir, aside, old, fresh;
  HeldLock lock;
  SwapUnderWay(const fs::path& store, const fs::path& next)
      : dir(store), aside(store / (std::string(".gdap-aside-") + kHex)), old(store / (std::string(".gdap-old-") + kHex)),
        fresh(store / (std::string(".gdap-new-") + kHex)), lock(store) {
    must_rename(next, fresh);
    fs::create_directory(aside);
    must_rename(dir / "zarr.json", aside / "zarr.json");
  }
  // Steps 1 (the rest) to 4, as NewStore::swap_in takes them; then the lock goes.
  void finish() {
    must_rename(dir / "c", aside / "c");
    must_rename(aside, old);
    must_rename(fresh / "c", dir / "c");
    must_rename(fresh / "zarr.json", dir / "zarr.json");
    fs::remove_all(old);
    fs::remove(fresh);
    lock.release();
  }
};

// Rule: a load that meets the moment of an overwrite (the old zarr.json moved aside, the new one not
// in yet) waits for the swap and reads the new store whole on every rank; it never fails with
// "cannot open zarr.json" (what it did before session 14).
TEST(ZarrConcurrent, ALoadDuringASwapWaitsAndReadsTheNewStore) {
  const fs::path dir = fresh("swap"), next = fresh("swap_next");
  ASSERT_NO_FATAL_FAILURE(save_old_and_new(dir, next));
  SwapUnderWay swap(dir, next);
  std::thread saver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    swap.finish();
  });
  const Outcome got = zarr_load(2, dir.string());
  saver.join();
  EXPECT_EQ(got.status, GDAP_SUCCESS) << got.message;
  EXPECT_EQ(got.tag(), 2) << "rule: the new store whole, on every rank";
  fs::remove_all(dir);
}

// Rule: a swap that stays under way (a save's lock held) past the load's wait is GDAP_ERR_IO naming
// the path and the hidden folder, saying a save is in progress; a crashed save's state (no lock)
// is named as one, with the way to recover, instead of a bare "cannot open zarr.json".
TEST(ZarrConcurrent, ASwapThatDoesNotEndOrCrashedIsNamed) {
  const fs::path dir = fresh("stuck"), next = fresh("stuck_next");
  ASSERT_NO_FATAL_FAILURE(save_old_and_new(dir, next));
  SwapUnderWay swap(dir, next);
  const auto t0 = Clock::now();
  Outcome got = zarr_load(2, dir.string());
  EXPECT_EQ(got.status, GDAP_ERR_IO);
  EXPECT_TRUE(has(got.message, dir.string()) && has(got.message, "a save was still moving a new store in") &&
              has(got.message, ".gdap-aside-0123456789abcdef")) << got.message;
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(8));
  swap.lock.release();  // the saving process died: its lock went with it
  got = zarr_load(2, dir.string());
  EXPECT_EQ(got.status, GDAP_ERR_IO);
  EXPECT_TRUE(has(got.message, "a save that did not finish left .gdap-aside-0123456789abcdef") && has(got.message, "crash recovery"))
      << got.message;
  swap.finish();
  got = zarr_load(2, dir.string());
  EXPECT_EQ(got.status, GDAP_SUCCESS) << got.message;
  EXPECT_EQ(got.tag(), 2);
  fs::remove_all(dir);
}

// Rule: gdap_zarr_shape_read (what Python's load_zarr without a section and GlobalArray.load_zarr
// call first) waits out a swap as a load does and reads the new store's shape; before, it failed at
// once with "zarr.json: cannot open".
TEST(ZarrConcurrent, AShapeReadDuringASwapWaits) {
  const fs::path dir = fresh("shape"), next = fresh("shape_next");
  ASSERT_NO_FATAL_FAILURE(save_old_and_new(dir, next));
  SwapUnderWay swap(dir, next);
  std::thread saver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    swap.finish();
  });
  int64_t shape[1] = {0}, ndim = 0;
  const gdap_status st = gdap_zarr_shape_read(shape, &ndim, nullptr, dir.c_str(), 1);
  const std::string message = st == GDAP_SUCCESS ? "" : gdap_last_error();
  saver.join();
  EXPECT_EQ(st, GDAP_SUCCESS) << message;
  EXPECT_EQ(ndim, 1);
  EXPECT_EQ(shape[0], kN);
  fs::remove_all(dir);
}

// Rule: a load through a symbolic link to the store waits out a live swap (the save locks the folder
// the link names) and reads the new store; before, the link was never "locked" and the live swap was
// reported at once as a crashed save's leftover.
TEST(ZarrConcurrent, ALoadThroughALinkWaitsForTheSwap) {
  const fs::path dir = fresh("linked"), next = fresh("linked_next"), link = fresh("link");
  ASSERT_NO_FATAL_FAILURE(save_old_and_new(dir, next));
  fs::create_directory_symlink(dir, link);
  SwapUnderWay swap(dir, next);
  std::thread saver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    swap.finish();
  });
  const Outcome got = zarr_load(2, link.string());
  saver.join();
  EXPECT_EQ(got.status, GDAP_SUCCESS) << got.message;
  EXPECT_EQ(got.tag(), 2);
  fs::remove(link);
  fs::remove_all(dir);
}

// Rule: the wait starts when the ranks first see a save, not when each entered the call: a rank that
// arrives after the others have waited longer than the limit still reads again until the swap ends.
// Here rank 1 enters 3.5 s after rank 0, the swap ends 0.3 s after that (the saver starts its clock
// only once rank 1 is in, so a loaded machine delays both alike); before, the first vote was "late"
// and the load failed without reading again.
TEST(ZarrConcurrent, ARankThatArrivesLateStillWaitsForTheSwap) {
  const fs::path dir = fresh("late"), next = fresh("late_next");
  ASSERT_NO_FATAL_FAILURE(save_old_and_new(dir, next));
  SwapUnderWay swap(dir, next);
  std::atomic<bool> entering{false};
  std::thread saver([&] {
    while (!entering) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    swap.finish();
  });
  Group group(2);
  gdap_map* map = map_of(2);
  gdap_status status[2] = {GDAP_SUCCESS, GDAP_SUCCESS};
  std::string message;
  double tags[2] = {-1, -1};
  on_threads(2, [&](int64_t r) {
    gdap_array* a = section(2, r, 0);
    if (r == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3500));
      entering = true;
    }
    status[r] = gdap_zarr_load(group[r], map, a, dir.c_str());
    if (r == 0 && status[r] != GDAP_SUCCESS) message = gdap_last_error();
    if (status[r] == GDAP_SUCCESS) tags[r] = tag_of(a, 2, r);
    gdap_array_destroy(a);
  });
  saver.join();
  gdap_map_destroy(map);
  EXPECT_EQ(status[0], GDAP_SUCCESS) << message;
  EXPECT_EQ(status[1], GDAP_SUCCESS);
  EXPECT_EQ(tags[0], 2);
  EXPECT_EQ(tags[1], 2);
  fs::remove_all(dir);
}

// Rule: the ranks' votes compare only what every host sees alike: two ranks whose stat of one
// zarr.json differs only in st_dev (a network file system numbers devices per client) read one
// store; a different inode, size or change time is still a different save's.
TEST(SettleVotes, RanksOnHostsWithOtherDeviceNumbersAgree) {
  struct stat a {};
  a.st_dev = 41;
  a.st_ino = 123456;
  a.st_size = 789;
  a.st_ctim = {1700000000, 42};
  struct stat b = a;
  b.st_dev = 97;
  const std::vector<gdap::io::Settled> same{{"", gdap::io::shared_identity(a)}, {"", gdap::io::shared_identity(b)}};
  EXPECT_EQ(gdap::io::unsettled(same), std::nullopt);
  for (auto change : {+[](struct stat& s) { s.st_ino += 1; }, +[](struct stat& s) { s.st_size += 1; },
                      +[](struct stat& s) { s.st_ctim.tv_nsec += 1; }}) {
    struct stat c = a;
    change(c);
    const std::vector<gdap::io::Settled> two{{"", gdap::io::shared_identity(a)}, {"", gdap::io::shared_identity(c)}};
    EXPECT_NE(gdap::io::unsettled(two), std::nullopt);
  }
}

// Rule: two saves racing for one store (two communicators, here two in-process groups) never report
// a misleading error (before session 14: "cannot move zarr.json of the old store aside", "holds c but
// no zarr.json", "File exists"): each succeeds or is GDAP_ERR_IO "another save of this store is in
// progress" (or, where both made the folder, "another save put a store there"), and the store left
// is whole, one successful save's, on every rank.
TEST(ZarrConcurrent, TwoRacingSavesGiveOneAClearRefusal) {
  const fs::path dir = fresh("race");
  ASSERT_EQ(zarr_save(2, 9, dir).status, GDAP_SUCCESS);
  const auto t0 = Clock::now();
  int refusals = 0, rounds = 0;
  for (; rounds < 60 && Clock::now() - t0 < std::chrono::seconds(6); ++rounds) {
    if (rounds % 2 == 1) fs::remove_all(dir);  // every other round, both saves make the folder
    Outcome a, b;
    std::thread other([&] { b = zarr_save(2, 2, dir.string()); });
    a = zarr_save(2, 1, dir.string());
    other.join();
    for (const Outcome* o : {&a, &b}) {
      if (o->status == GDAP_SUCCESS) continue;
      ++refusals;
      EXPECT_EQ(o->status, GDAP_ERR_IO) << o->message;
      EXPECT_TRUE((has(o->message, "another save of this store is in progress") ||
                   has(o->message, "another save put a store there while this one was starting")) &&
                  has(o->message, dir.string())) << o->message;
    }
    const Outcome got = zarr_load(2, dir.string());
    ASSERT_EQ(got.status, GDAP_SUCCESS) << "round " << rounds << ": " << got.message;
    const double t = got.tag();
    EXPECT_TRUE((t == 1 && a.status == GDAP_SUCCESS) || (t == 2 && b.status == GDAP_SUCCESS)) << "round " << rounds << ": tag " << t;
    if (HasFailure()) break;
  }
  std::printf("%d rounds, %d saves refused as racing\n", rounds, refusals);
  fs::remove_all(dir);
}

// A .dnpy save under way, by hand: its marker locked; rank 0's file already the new save's.
struct DnpySaveUnderWay {
  std::string prefix, next;
  fs::path marker;
  std::unique_ptr<HeldLock> lock;
  DnpySaveUnderWay(const std::string& p, const std::string& n) : prefix(p), next(n), marker(p + ".gdap-saving") {
    FILE* f = std::fopen(marker.c_str(), "w");
    std::fputs("gdap .dnpy save in progress\n", f);
    std::fclose(f);
    lock = std::make_unique<HeldLock>(marker);
    must_rename(next + "_0.dnpy", prefix + "_0.dnpy");
  }
  void finish() {
    must_rename(next + "_1.dnpy", prefix + "_1.dnpy");
    fs::remove(marker);
    lock->release();
  }
};

// Rule: a .dnpy load while a save is replacing the files (rank 0's new, rank 1's still old) waits
// for the save and reads the new files on every rank; before session 14 it read one rank's new
// file and the other's old one, a silent mix.
TEST(DnpyConcurrent, ALoadDuringASaveNeverMixesTwoSaves) {
  const std::string prefix = fresh("d").string(), next = fresh("d_next").string();
  ASSERT_EQ(dnpy_save(2, 1, prefix).status, GDAP_SUCCESS);
  ASSERT_EQ(dnpy_save(2, 2, next).status, GDAP_SUCCESS);
  DnpySaveUnderWay save(prefix, next);
  std::thread saver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    save.finish();
  });
  const Outcome got = dnpy_load(2, prefix);
  saver.join();
  EXPECT_EQ(got.status, GDAP_SUCCESS) << got.message;
  EXPECT_EQ(got.tag(), 2) << "rule: every rank reads the new save's file (rank tags " << got.tags[0] << ", " << got.tags[1] << ")";
}

// Rule: a save still under way past the wait is GDAP_ERR_IO naming the prefix and the marker; a
// crashed save's marker (no lock) refuses the load: the files may be of two saves.
TEST(DnpyConcurrent, ASaveThatDoesNotEndOrCrashedIsNamed) {
  const std::string prefix = fresh("e").string(), next = fresh("e_next").string();
  ASSERT_EQ(dnpy_save(2, 1, prefix).status, GDAP_SUCCESS);
  ASSERT_EQ(dnpy_save(2, 2, next).status, GDAP_SUCCESS);
  DnpySaveUnderWay save(prefix, next);
  Outcome got = dnpy_load(2, prefix);
  EXPECT_EQ(got.status, GDAP_ERR_IO);
  EXPECT_TRUE(has(got.message, prefix) && has(got.message, "a save of these files was still in progress") &&
              has(got.message, prefix + ".gdap-saving")) << got.message;
  save.lock->release();  // the saving process died
  got = dnpy_load(2, prefix);
  EXPECT_EQ(got.status, GDAP_ERR_IO);
  EXPECT_TRUE(has(got.message, "did not finish") && has(got.message, "two saves")) << got.message;
  ASSERT_EQ(dnpy_save(2, 3, prefix).status, GDAP_SUCCESS) << "a later save replaces a crashed save's marker";
  got = dnpy_load(2, prefix);
  EXPECT_EQ(got.status, GDAP_SUCCESS) << got.message;
  EXPECT_EQ(got.tag(), 3);
}

// Rule: two .dnpy saves racing for one prefix: each succeeds or is GDAP_ERR_IO "another save is in
// progress" naming the marker (before session 14: "cannot remove the save's marker"), no marker is
// left, and the files are of one successful save on every rank.
TEST(DnpyConcurrent, TwoRacingSavesGiveOneAClearRefusal) {
  const std::string prefix = fresh("f").string();
  const auto t0 = Clock::now();
  int refusals = 0, rounds = 0;
  for (; rounds < 100 && Clock::now() - t0 < std::chrono::seconds(6); ++rounds) {
    Outcome a, b;
    std::thread other([&] { b = dnpy_save(2, 2, prefix); });
    a = dnpy_save(2, 1, prefix);
    other.join();
    for (const Outcome* o : {&a, &b}) {
      if (o->status == GDAP_SUCCESS) continue;
      ++refusals;
      EXPECT_EQ(o->status, GDAP_ERR_IO) << o->message;
      EXPECT_TRUE(has(o->message, "another save is in progress") && has(o->message, ".gdap-saving")) << o->message;
    }
    EXPECT_FALSE(fs::exists(fs::symlink_status(prefix + ".gdap-saving"))) << "round " << rounds;
    const Outcome got = dnpy_load(2, prefix);
    ASSERT_EQ(got.status, GDAP_SUCCESS) << "round " << rounds << ": " << got.message;
    const double t = got.tag();
    EXPECT_TRUE((t == 1 && a.status == GDAP_SUCCESS) || (t == 2 && b.status == GDAP_SUCCESS)) << "round " << rounds << ": tag " << t;
    if (HasFailure()) break;
  }
  std::printf("%d rounds, %d saves refused as racing\n", rounds, refusals);
}

}  // namespace
