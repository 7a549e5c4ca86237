// A Zarr save's new store is written into a hidden folder INSIDE its place and moved in entry by
// entry once every rank has written (and flushed) its chunks, so that a failed save (a full disk, a
// rank that cannot write, a device error while staging) leaves an old store exactly as it was. The
// place folder itself is never renamed or replaced: a mount point, a folder under a parent this
// process cannot write, and the folder's mode, owner, ACLs, xattrs and stripe settings all stay.
// Every rename is within the place folder, so each is atomic on one file system.
//
// The hidden names inside the place (each with 16 random hex digits), which tell a crash's state:
//   .gdap-new-X    the new store being written; complete once .gdap-aside-X or .gdap-old-X exists
//   .gdap-aside-X  the old store's top-level entries being moved out (zarr.json first)
//   .gdap-old-X    the old store wholly moved out (renamed from .gdap-aside-X, empty if there was
//                  none): the new entries are now being moved in, zarr.json last
//
// A save holds an exclusive lock (flock) on the place folder from rank 0's survey to the end of its
// swap: a second save to the same place is refused at once, and a load that finds .gdap-aside-X (or
// .gdap-old-X with .gdap-new-X not yet empty) under a held lock knows a swap is under way and waits
// for it; found under a free lock, they are a crashed save's leftovers.
#pragma once

#include "io/files.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace gdap::io {

// Where a save's store goes and what is there now (rank 0's survey, before any rank writes).
struct StorePlace {
  enum class Was { absent, folder, store };  // nothing; a folder without a store; a Zarr store
  std::string shown;                         // the caller's path, for messages
  std::filesystem::path place;               // that folder with links and dots resolved
  Was was = Was::absent;
  std::vector<std::string> old_top;          // the old store's top-level entries, zarr.json first
  Fd lock;                                   // the place's save lock, held until the save ends (none where unsupported)
};

// The place folder's save lock, taken without waiting; GDAP_ERR_IO "another save ... is in progress"
// naming `shown` when another save holds it. No lock (an empty Fd) where the file system has none.
Fd lock_place(const std::string& folder, const std::string& shown);

// The hidden folder (its name) that shows a save moving stores in the folder `path` right now:
// .gdap-aside-X, or .gdap-old-X while .gdap-new-X still holds entries, under a lock another save
// holds. Empty when there is none (a crashed save's leftovers included).
std::string swap_under_way(const std::string& path);
// The first .gdap-aside-X or .gdap-old-X in the folder `path`, live or a crashed save's; empty when none.
std::string swap_leftover(const std::string& path);

// True for the names of a save's hidden folders inside a place (`.gdap-new-...` and the like),
// which are never a store's data.
bool is_save_temporary(const std::string& name);

// The folder `<place>/.gdap-new-<16 hex digits>`, made by rank 0 (with the place and its parents
// where absent), where every rank writes; removed on destruction unless moved in (with the
// place and parents it made, when they are empty).
class NewStore {
 public:
  explicit NewStore(StorePlace where);
  ~NewStore();
  NewStore(const NewStore&) = delete;
  NewStore& operator=(const NewStore&) = delete;
  const std::string& path() const { return temp_; }
  // Moves the new store in: an old store's top-level entries into .gdap-aside-X (zarr.json first),
  // that folder renamed .gdap-old-X, the new entries moved in (zarr.json last), then the old entries
  // removed; the place folder flushed to the disk. A failure moves back what was moved and says
  // what state is left.
  void swap_in();

 private:
  void lock_made_place();
  void move_old_aside(const std::filesystem::path& aside);
  void move_new_in(const std::filesystem::path& old);
  void roll_back_aside(const std::filesystem::path& aside, size_t moved, int err, const std::string& what);
  std::vector<std::string> new_entries() const;
  void remove_made() const;

  StorePlace where_;
  std::string temp_;
  std::filesystem::path made_top_;  // the topmost folder (the place or a parent) this save created, if any
  bool swapped_ = false;
};

// Flushes to the disk what this rank writes under `folder` (syncfs: its whole file system). Opened
// before the writes, so that a writeback error the system records meanwhile is reported too.
class FolderFlush {
 public:
  FolderFlush(const std::string& folder, std::string shown);
  ~FolderFlush();
  FolderFlush(const FolderFlush&) = delete;
  FolderFlush& operator=(const FolderFlush&) = delete;
  // GDAP_ERR_IO naming the path when the system reports a failure.
  void now() const;

 private:
  int fd_;
  std::string folder_, shown_;
};

}  // namespace gdap::io
