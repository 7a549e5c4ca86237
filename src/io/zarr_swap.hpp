// A Zarr save's new store is written into a hidden folder beside its place and swapped in whole
// once every rank has written its chunks, so that a failed save (a full disk, a rank that cannot
// write, a device error while staging) leaves an old store exactly as it was and nothing behind.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gdap::io {

// Where a save's store goes and what is there now (rank 0's survey, before any rank writes).
struct StorePlace {
  enum class Was { absent, folder, store };  // nothing; a folder without a store; a Zarr store
  std::string shown;                         // the caller's path, for messages
  std::filesystem::path place;               // that folder with links and dots resolved: what is renamed
  Was was = Was::absent;
  std::vector<std::filesystem::path> old_entries;  // the old store's entries under `shown`, in removal order
};

// The hidden folder `.<name>.gdap-new-<16 hex digits>` beside the place, made by rank 0, where
// every rank writes; removed on destruction unless swapped in (with the place's parents it made).
class NewStore {
 public:
  explicit NewStore(StorePlace where);
  ~NewStore();
  NewStore(const NewStore&) = delete;
  NewStore& operator=(const NewStore&) = delete;
  const std::string& path() const { return temp_; }
  // Puts the new store at the place: renamed there (nothing was there), its entries moved into the
  // folder (zarr.json last), or the old store renamed aside, the new one renamed in and the old one
  // removed. Every failure before the new store is in place leaves the place as it was.
  void swap_in();

 private:
  void move_entries_in();
  void replace_old();
  void remove_aside(const std::filesystem::path& aside) const;

  StorePlace where_;
  std::string temp_;
  std::filesystem::path made_parents_;  // the topmost parent folder this save created, if any
  bool swapped_ = false;
};

}  // namespace gdap::io
