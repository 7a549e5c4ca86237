// Moving a new Zarr store into its place (see zarr_swap.hpp). Every rename is within the place
// folder, so each is atomic on one file system, a mount point included.
#include "io/zarr_swap.hpp"

#include "core/error.hpp"
#include "io/files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fmt/std.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace gdap::io {
namespace {

namespace fs = std::filesystem;

std::string reason(int err) { return std::strerror(err); }

constexpr const char* kNew = ".gdap-new-";
constexpr const char* kAside = ".gdap-aside-";
constexpr const char* kOld = ".gdap-old-";

// Renames `from` to `to` unless something is at `to` (a user's file in a folder is never
// replaced); the system's reason otherwise.
int move_without_replacing(const fs::path& from, const fs::path& to) {
  if (system_calls().renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  std::error_code ec;  // a file system without RENAME_NOREPLACE: look first
  if (fs::exists(fs::symlink_status(to, ec))) return EEXIST;
  return system_calls().renameat(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str()) == 0 ? 0 : errno;
}

// Moves back the first `count` of `names` from `to` into `from`, last first (so zarr.json, moved
// first, goes back last); the names that could not be moved back.
std::vector<std::string> move_back(const std::vector<std::string>& names, size_t count, const fs::path& from, const fs::path& to) {
  std::vector<std::string> stuck;
  for (size_t j = count; j-- > 0;) {
    if (system_calls().renameat(AT_FDCWD, (to / names[j]).c_str(), AT_FDCWD, (from / names[j]).c_str()) != 0) stuck.push_back(names[j]);
  }
  return stuck;
}

// Flushes the folder's own entries (renames in it) to the disk; the system's reason, or 0.
int sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int err = system_calls().fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

}  // namespace

Fd lock_place(const std::string& folder, const std::string& shown) {
  Fd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) fail(GDAP_ERR_IO, "{}: cannot open the folder {} to lock it: {}", shown, folder, reason(errno));
  const Lock got = try_lock(fd.get());
  if (got == Lock::busy) {
    fail(GDAP_ERR_IO, "{}: another save of this store is in progress (it holds the lock on the folder {}): nothing was "
         "changed; try again once it has finished", shown, folder);
  }
  return got == Lock::taken ? std::move(fd) : Fd();
}

namespace {

// The first hidden folder of a swap in `path`: .gdap-aside-X, or .gdap-old-X (only while .gdap-new-X
// still holds entries unless `any_old`).
std::string swap_folder(const std::string& path, bool any_old) {
  std::error_code ec;
  std::string found;
  for (auto it = fs::directory_iterator(path, ec); !ec && it != fs::directory_iterator() && found.empty(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(kAside)) found = name;
    if (name.starts_with(kOld)) {  // step 3 while the new store's folder still holds entries
      const fs::path fresh = fs::path(path) / (kNew + name.substr(std::string(kOld).size()));
      std::error_code gone;
      if (any_old || (fs::is_directory(fs::symlink_status(fresh, gone)) && !fs::is_empty(fresh, gone))) found = name;
    }
  }
  return found;
}

}  // namespace

std::string swap_under_way(const std::string& path) {
  const std::string found = swap_folder(path, false);
  return !found.empty() && locked_elsewhere(path) ? found : std::string();
}

std::string swap_leftover(const std::string& path) { return swap_folder(path, true); }

bool is_save_temporary(const std::string& name) {
  return name.starts_with(kNew) || name.starts_with(kAside) || name.starts_with(kOld);
}

FolderFlush::FolderFlush(const std::string& folder, std::string shown)
    : fd_(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), folder_(folder), shown_(std::move(shown)) {
  if (fd_ < 0) fail(GDAP_ERR_IO, "{}: cannot open {} to flush it to the disk: {}", shown_, folder_, reason(errno));
}

FolderFlush::~FolderFlush() { ::close(fd_); }

void FolderFlush::now() const {
  if (system_calls().syncfs(fd_) != 0) fail(GDAP_ERR_IO, "{}: flushing the new store in {} to the disk failed: {}", shown_, folder_, reason(errno));
}

NewStore::NewStore(StorePlace where) : where_(std::move(where)) {
  const fs::path& place = where_.place;
  std::error_code ec;
  if (!fs::exists(fs::status(place, ec))) {
    for (fs::path p = place; !p.empty() && !fs::exists(fs::status(p, ec)); p = p.parent_path()) made_top_ = p;
    fs::create_directories(place, ec);
    if (ec) fail(GDAP_ERR_IO, "{}: cannot create the folder {}: {}", where_.shown, place.string(), ec.message());
  }
  if (where_.lock.get() < 0) lock_made_place();
  for (int attempt = 0; attempt < 64 && temp_.empty(); ++attempt) {
    const fs::path p = place / (kNew + random_suffix());
    if (::mkdir(p.c_str(), 0777) == 0) {
      temp_ = p.string();
    } else if (errno != EEXIST) {
      const int err = errno;
      remove_made();
      fail(GDAP_ERR_IO, "{}: cannot create the folder {} to write the new store in: {}", where_.shown, p.string(), reason(err));
    }
  }
  if (temp_.empty()) fail(GDAP_ERR_IO, "{}: 64 hidden names in it were all taken", where_.shown);
}

// The place was absent at the survey: locked now that it exists, and a store that another save put
// there meanwhile is refused (this one's survey did not see it), changing nothing. Where another
// save holds the lock, the folders stay: that save may have found them made and be about to write
// in them.
void NewStore::lock_made_place() {
  where_.lock = lock_place(where_.place.string(), where_.shown);
  std::error_code ec;
  if (where_.was != StorePlace::Was::store &&
      (fs::exists(fs::symlink_status(where_.place / "zarr.json", ec)) || fs::exists(fs::symlink_status(where_.place / "c", ec)))) {
    fail(GDAP_ERR_IO, "{}: another save put a store there while this one was starting: nothing was changed", where_.shown);
  }
}

NewStore::~NewStore() {
  if (swapped_) return;
  std::error_code ec;
  fs::remove_all(temp_, ec);  // the save's own folder: links in it are removed, never followed
  remove_made();
}

void NewStore::remove_made() const {
  std::error_code ec;
  if (made_top_.empty()) return;
  for (fs::path p = where_.place; p.string().size() >= made_top_.string().size(); p = p.parent_path()) {
    if (!fs::remove(p, ec)) break;  // only empty folders: one that got other contents stays
  }
}

std::vector<std::string> NewStore::new_entries() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(temp_, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) fail(GDAP_ERR_IO, "{}: cannot list the new store in {}: {}; nothing there changed", where_.shown, temp_, ec.message());
  std::stable_partition(names.begin(), names.end(), [](const std::string& n) { return n != "zarr.json"; });
  return names;
}

void NewStore::roll_back_aside(const fs::path& aside, size_t moved, int err, const std::string& what) {
  const std::vector<std::string> stuck = move_back(where_.old_top, moved, where_.place, aside);
  std::error_code ec;
  if (stuck.empty() && fs::remove(aside, ec)) {
    fail(GDAP_ERR_IO, "{}: {}: {}; the old store is back as it was", where_.shown, what, reason(err));
  }
  fail(GDAP_ERR_IO, "{}: {}: {}; and {} of the old store could not be moved back from {}: move them back by hand", where_.shown,
       what, reason(err), fmt::join(stuck, ", "), aside.string());
}

// The old store's top-level entries into `aside`, zarr.json first (the place stops being a store at once).
void NewStore::move_old_aside(const fs::path& aside) {
  if (::mkdir(aside.c_str(), 0700) != 0) {
    fail(GDAP_ERR_IO, "{}: cannot create the folder {} for the old store: {}; nothing there changed", where_.shown,
         aside.string(), reason(errno));
  }
  const std::vector<std::string>& top = where_.old_top;
  for (size_t i = 0; i < top.size(); ++i) {
    const int err = move_without_replacing(where_.place / top[i], aside / top[i]);
    if (err != 0) roll_back_aside(aside, i, err, fmt::format("cannot move {} of the old store aside", top[i]));
  }
}

// The new store's entries into the place, zarr.json last (the place holds a store again only once
// every chunk is there); a failure moves the moved ones back and the old store back from `old`.
void NewStore::move_new_in(const fs::path& old) {
  const std::vector<std::string> names = new_entries();
  for (size_t i = 0; i < names.size(); ++i) {
    const int err = move_without_replacing(fs::path(temp_) / names[i], where_.place / names[i]);
    if (err == 0) continue;
    std::vector<std::string> stuck = move_back(names, i, temp_, where_.place);
    std::error_code ec;
    const std::vector<std::string> old_stuck = stuck.empty() ? move_back(where_.old_top, where_.old_top.size(), where_.place, old)
                                                             : where_.old_top;
    if (stuck.empty() && old_stuck.empty() && fs::remove(old, ec)) {
      fail(GDAP_ERR_IO, "{}: cannot move {} of the new store into the folder: {}; nothing there changed", where_.shown, names[i],
           reason(err));
    }
    swapped_ = true;  // keep the new store's folder: it may hold the only copy of entries
    fail(GDAP_ERR_IO, "{}: cannot move {} of the new store into the folder: {}; moving back failed for {}{}: the new store's "
         "entries are in {} and the place, the old store's in {} (see docs/zarr.md, crash recovery)", where_.shown, names[i],
         reason(err), fmt::join(stuck, ", "), stuck.empty() ? fmt::format("{}", fmt::join(old_stuck, ", ")) : " (the old store was left aside)",
         temp_, old.string());
  }
}

void NewStore::swap_in() {
  const std::string suffix = fs::path(temp_).filename().string().substr(std::string(kNew).size());
  const fs::path aside = where_.place / (kAside + suffix);
  const fs::path old = where_.place / (kOld + suffix);
  move_old_aside(aside);
  if (system_calls().renameat(AT_FDCWD, aside.c_str(), AT_FDCWD, old.c_str()) != 0) {
    roll_back_aside(aside, where_.old_top.size(), errno, fmt::format("cannot rename {} to {}", aside.string(), old.string()));
  }
  move_new_in(old);
  swapped_ = true;
  std::error_code ec;
  fs::remove_all(old, ec);  // the save's own folder: links in it are removed, never followed
  const std::error_code removing = ec;
  fs::remove(temp_, ec);
  int err = 0;  // the renames in the place (and the folders this save made) to the disk
  for (fs::path p = where_.place; err == 0; p = p.parent_path()) {
    err = sync_folder(p);
    if (made_top_.empty() || p.string().size() < made_top_.string().size() || p == p.parent_path()) break;
  }
  if (removing) {
    fail(GDAP_ERR_IO, "{}: the new store is in place, but the old one, moved aside to {}, could not be removed: {}",
         where_.shown, old.string(), removing.message());
  }
  if (err != 0) fail(GDAP_ERR_IO, "{}: the new store is in place, but flushing the folder to the disk failed: {}", where_.shown, reason(err));
}

}  // namespace gdap::io
