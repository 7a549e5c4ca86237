// Renames that fail as at a mount point (EXDEV, EBUSY) or in a folder this process may not write
// (EACCES), which a test run as root cannot provoke: through io::system_calls, the library's internal
// seam (src/io/files.hpp), each case fails one rename of a save on purpose and checks that the error
// names the path and the reason, that the old array still loads whole, that no hidden file or folder
// is left, and that the next save succeeds. Through the same seam, a .dnpy save's marker vanishes
// between a load's two looks at it: the load reads again.
#include "io/files.hpp"
#include "io/save_helpers.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace save_test;  // NOLINT: the helpers of every save test

// Fails the renames `fails(from, to)` picks with `err`, on purpose, while in scope; every other
// rename is the system's. One at a time (a global, as the seam is).
class FailingRenames {
 public:
  using Pick = bool (*)(const std::string& from, const std::string& to);
  FailingRenames(Pick fails, int err) : saved_(gdap::io::system_calls()) {
    fails_ = fails;
    err_ = err;
    hits_ = 0;
    gdap::io::system_calls().renameat = [](int a, const char* from, int b, const char* to) {
      return hit(from, to) ? -1 : ::renameat(a, from, b, to);
    };
    gdap::io::system_calls().renameat2 = [](int a, const char* from, int b, const char* to, unsigned flags) {
      return hit(from, to) ? -1 : ::renameat2(a, from, b, to, flags);
    };
  }
  ~FailingRenames() { gdap::io::system_calls() = saved_; }
  static int hits() { return hits_; }

 private:
  static bool hit(const char* from, const char* to) {
    if (!fails_(from, to)) return false;
    ++hits_;
    errno = err_;
    return true;
  }
  static inline Pick fails_ = nullptr;
  static inline int err_ = 0;
  static inline std::atomic<int> hits_{0};
  gdap::io::SystemCalls saved_;
};

bool in_place(const std::string& from) { return from.find("/.gdap-") == std::string::npos; }  // not in a save's hidden folder

// The hidden names a save leaves in `dir` (none after a failure that undid itself).
std::vector<std::string> hidden_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with(".")) names.push_back(n);
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += n + " ";
  return s;
}

// Rule: an overwrite whose rename fails (a mount point at the store's zarr.json or c: EXDEV, EBUSY;
// a folder it may not write: EACCES) is GDAP_ERR_IO naming the path and the system's reason, leaves
// the old store whole (it loads, every rank) and no hidden folder, and the next save succeeds.
TEST(ZarrFaults, AFailingRenameLeavesTheOldStoreAndNoLeftovers) {
  struct Case {
    FailingRenames::Pick fails;  // the old store's entry whose move aside fails
    int err;
    const char* said;  // what the message says was being done
  };
  const auto old_c = [](const std::string& from, const std::string&) { return in_place(from) && from.ends_with("/c"); };
  const auto old_meta = [](const std::string& from, const std::string&) { return in_place(from) && from.ends_with("/zarr.json"); };
  const Case cases[] = {{old_c, EBUSY, "cannot move c of the old store aside"},
                        {old_meta, EXDEV, "cannot move zarr.json of the old store aside"},
                        {old_c, EACCES, "cannot move c of the old store aside"}};
  for (const Case& c : cases) {
    const fs::path dir = fresh("fault");
    ASSERT_EQ(zarr_save(2, 1, dir.string()).status, GDAP_SUCCESS);
    Outcome got;
    {
      FailingRenames failing(c.fails, c.err);
      got = zarr_save(2, 2, dir.string());
      EXPECT_GT(FailingRenames::hits(), 0) << c.said << ": the seam was not reached";
    }
    EXPECT_EQ(got.status, GDAP_ERR_IO) << got.message;
    EXPECT_TRUE(has(got.message, dir.string()) && has(got.message, c.said) && has(got.message, std::strerror(c.err)) &&
                has(got.message, "the old store is back as it was")) << got.message;
    EXPECT_EQ(hidden_in(dir), std::vector<std::string>{}) << joined(hidden_in(dir));
    Outcome loaded = zarr_load(2, dir.string());
    EXPECT_EQ(loaded.status, GDAP_SUCCESS) << loaded.message;
    EXPECT_EQ(loaded.tag(), 1) << "rule: the old store, whole";
    EXPECT_EQ(zarr_save(2, 3, dir.string()).status, GDAP_SUCCESS) << "the next save";
    loaded = zarr_load(2, dir.string());
    EXPECT_EQ(loaded.tag(), 3);
    fs::remove_all(dir);
  }
}

// Rule: a failure while the new store's entries move in (its zarr.json refused: EXDEV) moves them
// back and the old store back in: GDAP_ERR_IO "nothing there changed", the old store loads.
TEST(ZarrFaults, AFailingMoveInPutsTheOldStoreBack) {
  const fs::path dir = fresh("fault_in");
  ASSERT_EQ(zarr_save(2, 1, dir.string()).status, GDAP_SUCCESS);
  Outcome got;
  {
    // The new store's zarr.json moves in last, after c, from its hidden folder .gdap-new-X.
    FailingRenames failing([](const std::string& from, const std::string&) {
      return from.find("/.gdap-new-") != std::string::npos && from.ends_with("/zarr.json");
    }, EXDEV);
    got = zarr_save(2, 2, dir.string());
  }
  EXPECT_EQ(got.status, GDAP_ERR_IO) << got.message;
  EXPECT_TRUE(has(got.message, "cannot move zarr.json of the new store into the folder") && has(got.message, std::strerror(EXDEV)) &&
              has(got.message, "nothing there changed")) << got.message;
  EXPECT_EQ(hidden_in(dir), std::vector<std::string>{}) << joined(hidden_in(dir));
  const Outcome loaded = zarr_load(2, dir.string());
  EXPECT_EQ(loaded.status, GDAP_SUCCESS) << loaded.message;
  EXPECT_EQ(loaded.tag(), 1);
  EXPECT_EQ(zarr_save(2, 3, dir.string()).status, GDAP_SUCCESS);
  fs::remove_all(dir);
}

// Rule: a .dnpy save whose rename onto a rank's file fails (rank 1's: EXDEV, EBUSY, EACCES) fails on
// every rank naming that file and the reason, puts every rank's previous file back (they load,
// whole), leaves no temporary, kept file or marker, and the next save succeeds.
TEST(DnpyFaults, AFailingRenameLeavesThePreviousFilesAndNoLeftovers) {
  for (const int err : {EXDEV, EBUSY, EACCES}) {
    const fs::path dir = fresh("dfault");
    fs::create_directories(dir);
    const std::string prefix = (dir / "x").string();
    ASSERT_EQ(dnpy_save(2, 1, prefix).status, GDAP_SUCCESS);
    Outcome got;
    {
      FailingRenames failing([](const std::string& from, const std::string& to) { return from.ends_with(".tmp") && to.ends_with("x_1.dnpy"); },
                             err);
      got = dnpy_save(2, 2, prefix);
      EXPECT_GT(FailingRenames::hits(), 0);
    }
    EXPECT_NE(got.status, GDAP_SUCCESS);
    EXPECT_TRUE(has(got.message, prefix + "_1.dnpy") && has(got.message, std::strerror(err)) &&
                has(got.message, "every rank's previous file is back in place")) << got.message;
    EXPECT_EQ(hidden_in(dir), std::vector<std::string>{}) << joined(hidden_in(dir));
    EXPECT_FALSE(fs::exists(prefix + ".gdap-saving"));
    Outcome loaded = dnpy_load(2, prefix);
    EXPECT_EQ(loaded.status, GDAP_SUCCESS) << loaded.message;
    EXPECT_EQ(loaded.tag(), 1) << "rule: every rank's previous file";
    EXPECT_EQ(dnpy_save(2, 3, prefix).status, GDAP_SUCCESS) << "the next save";
    loaded = dnpy_load(2, prefix);
    EXPECT_EQ(loaded.tag(), 3);
    fs::remove_all(dir);
  }
}

// Rule: the marker's own rename failing (EACCES) fails the save before any file changed, naming the
// marker and the reason; nothing is left and the previous files load.
TEST(DnpyFaults, AFailingMarkerLeavesTheFilesAsTheyWere) {
  const fs::path dir = fresh("mfault");
  fs::create_directories(dir);
  const std::string prefix = (dir / "x").string();
  ASSERT_EQ(dnpy_save(2, 1, prefix).status, GDAP_SUCCESS);
  Outcome got;
  {
    FailingRenames failing([](const std::string&, const std::string& to) { return to.ends_with("x.gdap-saving"); }, EACCES);
    got = dnpy_save(2, 2, prefix);
  }
  EXPECT_EQ(got.status, GDAP_ERR_IO);
  EXPECT_TRUE(has(got.message, prefix + ".gdap-saving") && has(got.message, std::strerror(EACCES))) << got.message;
  EXPECT_EQ(hidden_in(dir), std::vector<std::string>{}) << joined(hidden_in(dir));
  const Outcome loaded = dnpy_load(2, prefix);
  EXPECT_EQ(loaded.tag(), 1);
  fs::remove_all(dir);
}

// Fails fsync of a folder with EIO, once, when the marker `marker_` is there (the flush after a .dnpy
// save's marker is placed), while in scope; every other fsync is the system's.
class FailingMarkerFlush {
 public:
  explicit FailingMarkerFlush(std::string marker) : saved_(gdap::io::system_calls()) {
    marker_ = std::move(marker);
    hits_ = 0;
    gdap::io::system_calls().fsync = [](int fd) {
      struct stat st {};
      if (hits_ == 0 && ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && fs::exists(marker_)) {
        ++hits_;
        errno = EIO;
        return -1;
      }
      return ::fsync(fd);
    };
  }
  ~FailingMarkerFlush() { gdap::io::system_calls() = saved_; }
  static int hits() { return hits_; }

 private:
  static inline std::string marker_;
  static inline std::atomic<int> hits_{0};
  gdap::io::SystemCalls saved_;
};

// Rule: a .dnpy save whose folder flush fails right after its marker is placed (before any rank's
// file changed) removes the marker and says nothing was changed: the previous files still load and
// the next save succeeds. Before, the marker stayed and every later load failed "did not finish".
TEST(DnpyFaults, AFailingFlushAfterTheMarkerRemovesIt) {
  const fs::path dir = fresh("flushfault");
  fs::create_directories(dir);
  const std::string prefix = (dir / "x").string();
  ASSERT_EQ(dnpy_save(2, 1, prefix).status, GDAP_SUCCESS);
  Outcome got;
  {
    FailingMarkerFlush failing(prefix + ".gdap-saving");
    got = dnpy_save(2, 2, prefix);
    EXPECT_EQ(FailingMarkerFlush::hits(), 1);
  }
  EXPECT_EQ(got.status, GDAP_ERR_IO);
  EXPECT_TRUE(has(got.message, std::strerror(EIO)) && has(got.message, "no file was changed") &&
              has(got.message, "the marker is removed")) << got.message;
  EXPECT_FALSE(fs::exists(prefix + ".gdap-saving"));
  EXPECT_EQ(hidden_in(dir), std::vector<std::string>{}) << joined(hidden_in(dir));
  Outcome loaded = dnpy_load(2, prefix);
  EXPECT_EQ(loaded.status, GDAP_SUCCESS) << loaded.message;
  EXPECT_EQ(loaded.tag(), 1);
  EXPECT_EQ(dnpy_save(2, 3, prefix).status, GDAP_SUCCESS) << "the next save";
  loaded = dnpy_load(2, prefix);
  EXPECT_EQ(loaded.tag(), 3);
  fs::remove_all(dir);
}

// Makes the marker `marker_` vanish once, in a load's look at it, while in scope: right after the
// first look of a rank found it (before the load asks whether a save holds it), or right before a
// rank's second look (after it found the marker held by no save). As when a save finishes between
// the load's looks; every other lstat is the system's.
class VanishingMarker {
 public:
  enum When { after_first_look, before_second_look };
  VanishingMarker(std::string marker, When when) : saved_(gdap::io::system_calls()) {
    marker_ = std::move(marker);
    when_ = when;
    done_ = false;
    gdap::io::system_calls().lstat = [](const char* path, struct stat* st) {
      if (marker_ != path) return ::lstat(path, st);
      // One rank's look at a time: a rank that took `done_` and was preempted before its remove
      // let another rank's second look see the marker still there ("did not finish", under load).
      static std::mutex one_look;
      const std::lock_guard<std::mutex> hold(one_look);
      thread_local int looks = 0;  // this rank's looks at the marker in the current try
      looks = looks % 2 + 1;
      if (when_ == before_second_look && looks == 2 && !done_.exchange(true)) fs::remove(marker_);
      const int got = ::lstat(path, st);
      if (got != 0) looks = 0;  // no marker: the next look is a try's first
      if (when_ == after_first_look && looks == 1 && got == 0 && !done_.exchange(true)) fs::remove(marker_);
      return got;
    };
  }
  ~VanishingMarker() { gdap::io::system_calls() = saved_; }
  static bool vanished() { return done_; }

 private:
  static inline std::string marker_;
  static inline When when_ = after_first_look;
  static inline std::atomic<bool> done_{false};
  gdap::io::SystemCalls saved_;
};

// Rule: a .dnpy load that finds a save's marker, which then vanishes before its second look (the
// save finished), reads again and gets the saved array: never "a save did not finish", never a
// crash. The marker here is held by no save, so without the vanish the load refuses it.
TEST(DnpyFaults, AMarkerThatVanishesBetweenALoadsLooksMeansReadAgain) {
  for (const auto when : {VanishingMarker::after_first_look, VanishingMarker::before_second_look}) {
    SCOPED_TRACE(when == VanishingMarker::after_first_look ? "after the first look" : "before the second look");
    const fs::path dir = fresh("vanish");
    fs::create_directories(dir);
    const std::string prefix = (dir / "x").string(), marker = prefix + ".gdap-saving";
    ASSERT_EQ(dnpy_save(2, 4, prefix).status, GDAP_SUCCESS);
    std::ofstream(marker) << "a marker no save holds\n";
    Outcome loaded;
    {
      VanishingMarker vanishing(marker, when);
      loaded = dnpy_load(2, prefix);
      EXPECT_TRUE(VanishingMarker::vanished()) << "the load never looked at the marker";
    }
    EXPECT_EQ(loaded.status, GDAP_SUCCESS) << loaded.message;
    EXPECT_EQ(loaded.tag(), 4);
    EXPECT_FALSE(fs::exists(marker));
    // Without the vanish the same marker is a crashed save's: a clear error naming it.
    std::ofstream(marker) << "a marker no save holds\n";
    loaded = dnpy_load(2, prefix);
    EXPECT_EQ(loaded.status, GDAP_ERR_IO);
    EXPECT_TRUE(has(loaded.message, "did not finish") && has(loaded.message, marker)) << loaded.message;
    fs::remove_all(dir);
  }
}

}  // namespace
