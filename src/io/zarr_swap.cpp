// Swapping a new Zarr store into place (see zarr_swap.hpp). Every rename is within the place's
// parent folder, so each is atomic on one file system.
#include "io/zarr_swap.hpp"

#include "core/error.hpp"
#include "io/files.hpp"

#include <fmt/format.h>
#include <fmt/std.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace gdap::io {
namespace {

namespace fs = std::filesystem;

std::string reason(int err) { return std::strerror(err); }

// An unused hidden name beside `place`: `.<name>.gdap-<what>-<16 hex digits>`.
fs::path hidden_beside(const fs::path& place, const char* what) {
  std::error_code ec;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const fs::path p = place.parent_path() / fmt::format(".{}.gdap-{}-{}", place.filename().string(), what, random_suffix());
    if (!fs::exists(fs::symlink_status(p, ec))) return p;
  }
  fail(GDAP_ERR_IO, "{}: 64 hidden names beside it were all taken", place.string());
}

// Renames `from` to `to` unless something is at `to` (a user's file beside a store in a folder is
// never replaced); the system's reason otherwise.
int move_without_replacing(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  std::error_code ec;  // a file system without RENAME_NOREPLACE: look first
  if (fs::exists(fs::symlink_status(to, ec))) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

}  // namespace

NewStore::NewStore(StorePlace where) : where_(std::move(where)) {
  const fs::path parent = where_.place.parent_path();
  std::error_code ec;
  if (!fs::exists(fs::status(parent, ec))) {
    for (fs::path p = parent; !p.empty() && !fs::exists(fs::status(p, ec)); p = p.parent_path()) made_parents_ = p;
    fs::create_directories(parent, ec);
    if (ec) fail(GDAP_ERR_IO, "{}: cannot create the folder {}: {}", where_.shown, parent.string(), ec.message());
  }
  for (int attempt = 0; attempt < 64 && temp_.empty(); ++attempt) {
    const fs::path p = hidden_beside(where_.place, "new");
    if (::mkdir(p.c_str(), 0777) == 0) temp_ = p.string();
    else if (errno != EEXIST) fail(GDAP_ERR_IO, "{}: cannot create the folder {} to write the new store in: {}", where_.shown, p.string(), reason(errno));
  }
  if (temp_.empty()) fail(GDAP_ERR_IO, "{}: 64 hidden names beside it were all taken", where_.shown);
}

NewStore::~NewStore() {
  if (swapped_) return;
  std::error_code ec;
  fs::remove_all(temp_, ec);  // the save's own folder: links in it are removed, never followed
  if (made_parents_.empty()) return;
  for (fs::path p = where_.place.parent_path(); p.string().size() >= made_parents_.string().size(); p = p.parent_path()) {
    if (!fs::remove(p, ec)) break;  // only empty folders: one that got other contents stays
  }
}

void NewStore::swap_in() {
  switch (where_.was) {
    case StorePlace::Was::absent:
      if (::rename(temp_.c_str(), where_.place.c_str()) != 0) {
        fail(GDAP_ERR_IO, "{}: cannot move the new store into place from {}: {}; nothing there changed", where_.shown, temp_, reason(errno));
      }
      swapped_ = true;
      return;
    case StorePlace::Was::folder: move_entries_in(); return;
    case StorePlace::Was::store: replace_old(); return;
  }
}

// A folder without a store: the new store's entries moved into it (zarr.json last, so that the
// folder holds a store only once every chunk is there); a failure moves back those already moved.
void NewStore::move_entries_in() {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (auto it = fs::directory_iterator(temp_, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) entries.push_back(it->path());
  if (ec) fail(GDAP_ERR_IO, "{}: cannot list the new store in {}: {}; nothing there changed", where_.shown, temp_, ec.message());
  std::stable_partition(entries.begin(), entries.end(), [](const fs::path& p) { return p.filename() != "zarr.json"; });
  for (size_t i = 0; i < entries.size(); ++i) {
    const int err = move_without_replacing(entries[i], where_.place / entries[i].filename());
    if (err == 0) continue;
    for (size_t j = i; j-- > 0;) static_cast<void>(::rename((where_.place / entries[j].filename()).c_str(), entries[j].c_str()));
    fail(GDAP_ERR_IO, "{}: cannot move {} of the new store into the folder: {}; nothing there changed", where_.shown,
         entries[i].filename().string(), reason(err));
  }
  swapped_ = true;
  fs::remove(temp_, ec);
}

// A store there: renamed aside, the new one renamed in (the old one renamed back if that fails),
// then the old one removed entry by entry as listed when the save was checked.
void NewStore::replace_old() {
  const fs::path aside = hidden_beside(where_.place, "old");
  if (::rename(where_.place.c_str(), aside.c_str()) != 0) {
    fail(GDAP_ERR_IO, "{}: cannot move the old store aside to {}: {}; it is untouched", where_.shown, aside.string(), reason(errno));
  }
  if (::rename(temp_.c_str(), where_.place.c_str()) != 0) {
    const int err = errno;
    if (::rename(aside.c_str(), where_.place.c_str()) != 0) {
      fail(GDAP_ERR_IO, "{}: cannot move the new store into place: {}; and the old store, moved aside to {}, cannot be "
           "moved back: {}", where_.shown, reason(err), aside.string(), reason(errno));
    }
    fail(GDAP_ERR_IO, "{}: cannot move the new store into place: {}; the old store is untouched", where_.shown, reason(err));
  }
  swapped_ = true;
  remove_aside(aside);
}

void NewStore::remove_aside(const fs::path& aside) const {
  std::error_code ec, first;
  for (const fs::path& entry : where_.old_entries) {
    if (!fs::remove(aside / entry.lexically_relative(where_.shown), ec) && ec && !first) first = ec;
  }
  if (!fs::remove(aside, ec) && !first) first = ec ? ec : std::make_error_code(std::errc::directory_not_empty);
  if (first) {
    fail(GDAP_ERR_IO, "{}: the new store is in place, but the old one, moved aside to {}, could not be removed: {}",
         where_.shown, aside.string(), first.message());
  }
}

}  // namespace gdap::io
