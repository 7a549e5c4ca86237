// The files gdap reads and writes for a caller (.dnpy files, Zarr stores, the CLI's JSON), opened so
// that a hostile or careless path can neither block a rank nor steer a write: reads take regular
// files only, opened without blocking (a FIFO or a device is refused by name, never waited on) and
// bounded by a size limit the caller states; writes go to a fresh temporary name in the target
// folder (O_CREAT|O_EXCL|O_NOFOLLOW, an unpredictable suffix) that is renamed into place, or removed
// when anything fails, and folders inside a store are entered without following symbolic links.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gdap::io {

// The system calls through which gdap's saves move and flush files, and a .dnpy load looks at a
// save's marker: the system's own, replaced only by tests (to fail one step on purpose: EXDEV,
// EBUSY, EACCES, which a test run as root cannot provoke; to make a marker vanish between a load's
// looks) and by bench/io (to time a save without its flushes). Internal: the library exports only
// gdap_* (abi/gdap.map), and nothing in the C ABI reaches this.
struct SystemCalls {
  int (*renameat)(int, const char*, int, const char*);
  int (*renameat2)(int, const char*, int, const char*, unsigned);
  int (*fsync)(int);
  int (*syncfs)(int);
  int (*lstat)(const char*, struct stat*);
};
SystemCalls& system_calls();

// A file descriptor closed with its scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Gives the descriptor up (the caller closes it).
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// A regular file open for reading, and its size when opened.
struct Regular {
  Fd fd;
  int64_t size = 0;
};

// Opens `path` for reading when it is a regular file (a symbolic link to one is followed). Nothing
// when it does not exist and `missing_ok`; otherwise GDAP_ERR_IO naming the path and what it is
// instead (a directory, a FIFO, a device, a socket) or the system's reason.
std::optional<Regular> open_regular(const std::string& path, bool missing_ok);

// Reads exactly `bytes` bytes at `offset`; GDAP_ERR_IO naming the path when the file ends first
// (it changed while being read) or the read fails.
void read_at(const Regular& file, void* out, int64_t bytes, int64_t offset, const std::string& path);

// The whole of a regular file of at most `limit` bytes (GDAP_ERR_IO naming both sizes past it);
// nothing when it does not exist and `missing_ok`.
std::optional<std::string> read_regular(const std::string& path, int64_t limit, bool missing_ok);

// The whole of whatever `path` names that can be read as a stream (a regular file, a pipe, a FIFO,
// standard input's /dev/stdin), at most `limit` bytes: the command-line tool's input. A directory
// is refused; a stream longer than `limit` (/dev/zero) is refused once `limit` bytes are read.
std::string read_bounded(const std::string& path, int64_t limit);

// The offset of the first NUL byte of `text`, if any. JSON never holds a raw NUL, and nlohmann's
// parser takes one as the end of the input: the text after it would be silently ignored.
std::optional<size_t> nul_in(std::string_view text);

// 16 hexadecimal digits no one can guess: the suffix of gdap's hidden temporary names, so that
// nobody plants a link at one in advance and a stale one from a crashed call never collides.
std::string random_suffix();

// A lock (flock) that marks a save in progress: taken exclusively by the save, looked at by loads and
// by other saves. A crashed process's lock goes with it, so a lock found free means a stale leftover.
enum class Lock { taken, busy, unsupported };
// Tries to take an exclusive lock on the open file or folder `fd` without waiting: taken; busy when
// another open description holds one (another save, in this process or another); unsupported where
// the file system has no such locks (some NFS setups: the save goes on unguarded, as before).
Lock try_lock(int fd);
// True when another open description holds a lock on what `path` names now (a save in progress),
// following a symbolic link as the save does; false when it is absent, free (a crashed save's
// leftover) or cannot be looked at.
bool locked_elsewhere(const std::string& path);

// A folder open for creating files in it.
class Dir {
 public:
  // The folder at `path` (the caller's own path: symbolic links in it are followed), created with its
  // parents when `create`.
  static Dir open(const std::string& path, bool create);
  // The folder `name` (one path component) inside this one, created when absent and `create`;
  // a symbolic link there is refused, never followed.
  Dir sub(const std::string& name, bool create) const;
  // This folder again, through a descriptor of its own.
  Dir dup() const;
  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }

 private:
  Fd fd_;
  std::string path_;  // for messages
};

// A new file `name` in `dir`: written under a temporary name made for it alone (O_CREAT|O_EXCL|
// O_NOFOLLOW, an unpredictable suffix), renamed onto `name` by commit (replacing a file or a
// symbolic link there, never writing through it), and removed if it is destroyed before commit.
class NewFile {
 public:
  NewFile(const Dir& dir, std::string name);
  ~NewFile();
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;
  void write(const void* data, int64_t bytes);
  // Flushes the written bytes to the disk (fsync) and closes the temporary: an error the system
  // reports only then (ENOSPC, EDQUOT, EIO, as on NFS) is GDAP_ERR_IO naming the path. Nothing is
  // in place yet.
  void finish();
  // Closes the temporary (unless finished) and renames it onto the name.
  void commit();
  // As commit, for a save's marker: locked (try_lock) before it appears at the name, and put there
  // only over nothing, something not a regular file, or a crashed save's marker (one whose lock is
  // free). GDAP_ERR_IO "another save ... is in progress" naming the marker when a live save holds
  // one there; nothing is changed then. The lock, held until the returned descriptor closes.
  Fd commit_locked();
  // As commit, keeping what was at the name (a file or a link; not a folder) under a second hidden
  // name `.<name>.<suffix>.old` (a hard link, or where the file system has none, the entry renamed)
  // until restore_old or drop_old. A failed rename leaves the name as it was.
  void commit_keeping_old();
  // After commit_keeping_old: puts the old entry back at the name (or, where there was none,
  // removes the new file); when the rename itself failed, removes an old entry's kept link left
  // behind (or renames it back); a no-op when nothing was kept or committed. GDAP_ERR_IO naming both paths if
  // the system refuses.
  void restore_old();
  // After commit_keeping_old: removes the kept old entry. GDAP_ERR_IO naming it if that fails.
  void drop_old();
  // The 16 hex digits of this file's hidden names: `.<name>.<hex>.tmp`, and `.<name>.<hex>.old`
  // for the old entry commit_keeping_old keeps.
  const std::string& hex() const { return hex_; }
  // True when something (not a folder) is at the name now: a file commit_keeping_old would keep.
  bool has_old() const;
  // Flushes the folder's entries (renames, removals) to the disk. GDAP_ERR_IO naming it if that fails.
  void sync_folder() const;

 private:
  void keep_old();
  int unkeep_old();

  int dir_;
  std::string name_, hex_, temp_, path_, old_;  // old_: the kept entry's name, empty when none is kept
  Fd fd_;
  bool committed_ = false;
  bool old_renamed_ = false;  // the old entry was renamed away (no hard links), not linked
};

// Writes `bytes` to `name` in `dir` through a NewFile.
void write_new(const Dir& dir, const std::string& name, std::string_view bytes);

}  // namespace gdap::io
