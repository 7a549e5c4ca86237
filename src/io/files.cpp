// Reading and writing callers' files without blocking on them or writing through links planted in
// them (see files.hpp). POSIX calls rather than streams: the checks need the descriptor (fstat of
// what was opened, O_NONBLOCK, O_NOFOLLOW, openat in a folder already checked).
#include "io/files.hpp"

#include "core/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

namespace gdap::io {
namespace {

std::string reason(int err) { return std::strerror(err); }

// What a file that is not regular is, for "'x' is a FIFO, not a regular file".
const char* what_it_is(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

void refuse_irregular(const std::string& path, mode_t mode) {
  if (!S_ISREG(mode)) fail(GDAP_ERR_IO, "{}: is {}, not a regular file: gdap reads only regular files", path, what_it_is(mode));
}

}  // namespace

SystemCalls& system_calls() {
  static SystemCalls calls{::renameat, ::renameat2, ::fsync, ::syncfs, ::lstat};
  return calls;
}

// (O_EXCL makes a link planted at a temporary name fail the open instead of being followed.)
std::string random_suffix() {
  thread_local std::mt19937_64 engine{(static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()};
  return fmt::format("{:016x}", engine());
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

std::optional<Regular> open_regular(const std::string& path, bool missing_ok) {
  // stat first, so that a device is never opened at all (opening some has effects); then open
  // without blocking (a FIFO swapped in meanwhile returns at once) and check what was opened.
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) {
    const int err = errno;
    if (err == ENOENT && missing_ok) return std::nullopt;
    fail(GDAP_ERR_IO, "{}: cannot open: {}", path, reason(err));
  }
  refuse_irregular(path, before.st_mode);
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) fail(GDAP_ERR_IO, "{}: cannot open: {}", path, reason(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail(GDAP_ERR_IO, "{}: cannot read its size: {}", path, reason(errno));
  refuse_irregular(path, st.st_mode);
  if (st.st_ino != before.st_ino || st.st_dev != before.st_dev) fail(GDAP_ERR_IO, "{}: was replaced while being opened", path);
  return Regular{std::move(fd), static_cast<int64_t>(st.st_size)};
}

void read_at(const Regular& file, void* out, int64_t bytes, int64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(out);
  int64_t done = 0;
  while (done < bytes) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(bytes - done, int64_t{1} << 30));
    const ssize_t n = ::pread(file.fd.get(), p + done, want, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(GDAP_ERR_IO, "{}: reading {} bytes at byte {} failed: {}", path, bytes, offset + done, reason(errno));
    if (n == 0) {
      fail(GDAP_ERR_IO, "{}: ends at byte {} while {} bytes from byte {} were to be read (the file changed while being read?)",
           path, offset + done, bytes, offset);
    }
    done += n;
  }
}

std::optional<std::string> read_regular(const std::string& path, int64_t limit, bool missing_ok) {
  std::optional<Regular> file = open_regular(path, missing_ok);
  if (!file) return std::nullopt;
  if (file->size > limit) fail(GDAP_ERR_IO, "{}: {} bytes, more than the {} a valid file can have", path, file->size, limit);
  std::string bytes(static_cast<size_t>(file->size), '\0');
  read_at(*file, bytes.data(), file->size, 0, path);
  return bytes;
}

std::string read_bounded(const std::string& path, int64_t limit) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail(GDAP_ERR_IO, "cannot open '{}': {}", path, reason(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) fail(GDAP_ERR_IO, "'{}' is a directory, not a JSON file", path);
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(GDAP_ERR_IO, "cannot read '{}': {}", path, reason(errno));
    if (n == 0) return text;
    if (static_cast<int64_t>(text.size()) + n > limit) {
      fail(GDAP_ERR_IO, "'{}' is longer than the {} bytes gdap reads as input (is it a device such as /dev/zero?)", path, limit);
    }
    text.append(buffer, static_cast<size_t>(n));
  }
}

std::optional<size_t> nul_in(std::string_view text) {
  const size_t at = text.find('\0');
  if (at == std::string_view::npos) return std::nullopt;
  return at;
}

Lock try_lock(int fd) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return Lock::taken;
  return errno == EWOULDBLOCK ? Lock::busy : Lock::unsupported;
}

bool locked_elsewhere(const std::string& path) {
  struct stat st {};
  // A symbolic link is followed, as the save that locks what it names follows it (a store reached
  // through a link); never open a FIFO or a device (O_NONBLOCK covers one swapped in after the stat).
  if (::stat(path.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return false;
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  return fd.get() >= 0 && ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

Dir Dir::open(const std::string& path, bool create) {
  if (create) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) fail(GDAP_ERR_IO, "{}: cannot create the folder: {}", path, ec.message());
  }
  Dir d;
  d.fd_ = Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.fd_.get() < 0) fail(GDAP_ERR_IO, "{}: cannot open the folder: {}", path, reason(errno));
  d.path_ = path;
  return d;
}

Dir Dir::sub(const std::string& name, bool create) const {
  const std::string where = path_ + "/" + name;
  if (create && ::mkdirat(fd(), name.c_str(), 0777) != 0 && errno != EEXIST) {
    fail(GDAP_ERR_IO, "{}: cannot create the folder: {}", where, reason(errno));
  }
  Dir d;
  d.fd_ = Fd(::openat(fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (d.fd_.get() < 0) {
    const int err = errno;
    struct stat st {};
    if (::fstatat(fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      fail(GDAP_ERR_IO, "{}: is a symbolic link: gdap never writes through a link inside a store", where);
    }
    fail(GDAP_ERR_IO, "{}: cannot open the folder: {}", where, reason(err));
  }
  d.path_ = where;
  return d;
}

Dir Dir::dup() const {
  Dir d;
  d.fd_ = Fd(::fcntl(fd(), F_DUPFD_CLOEXEC, 0));
  if (d.fd_.get() < 0) fail(GDAP_ERR_IO, "{}: cannot open the folder again: {}", path_, reason(errno));
  d.path_ = path_;
  return d;
}

NewFile::NewFile(const Dir& dir, std::string name) : dir_(dir.fd()), name_(std::move(name)), path_(dir.path() + "/" + name_) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    hex_ = random_suffix();
    temp_ = "." + name_ + "." + hex_ + ".tmp";
    fd_ = Fd(::openat(dir_, temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (fd_.get() >= 0) return;
    if (errno != EEXIST) fail(GDAP_ERR_IO, "{}: cannot create a temporary file in its folder: {}", path_, reason(errno));
  }
  fail(GDAP_ERR_IO, "{}: 64 temporary names in its folder were all taken", path_);
}

NewFile::~NewFile() {
  if (!committed_) ::unlinkat(dir_, temp_.c_str(), 0);
}

void NewFile::write(const void* data, int64_t bytes) {
  const auto* p = static_cast<const char*>(data);
  int64_t done = 0;
  while (done < bytes) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(bytes - done, int64_t{1} << 30));
    const ssize_t n = ::write(fd_.get(), p + done, want);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(GDAP_ERR_IO, "{}: write failed after {} bytes: {}", path_, done, reason(n < 0 ? errno : EIO));
    done += n;
  }
}

void NewFile::finish() {
  if (fd_.get() < 0) return;
  if (system_calls().fsync(fd_.get()) != 0) fail(GDAP_ERR_IO, "{}: writing to the disk failed: {}", path_, reason(errno));
  if (::close(fd_.release()) != 0) fail(GDAP_ERR_IO, "{}: write failed when closing: {}", path_, reason(errno));
}

void NewFile::commit() {
  if (fd_.get() >= 0 && ::close(fd_.release()) != 0) fail(GDAP_ERR_IO, "{}: write failed when closing: {}", path_, reason(errno));
  if (system_calls().renameat(dir_, temp_.c_str(), dir_, name_.c_str()) != 0) {
    fail(GDAP_ERR_IO, "{}: cannot move the written file into place: {}", path_, reason(errno));
  }
  committed_ = true;
}

Fd NewFile::commit_locked() {
  if (fd_.get() >= 0) finish();
  Fd held(::openat(dir_, temp_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (held.get() < 0) fail(GDAP_ERR_IO, "{}: cannot open its temporary again to lock it: {}", path_, reason(errno));
  if (try_lock(held.get()) == Lock::unsupported) held = Fd();  // no locks here: replaced as before
  Fd stale;  // a crashed save's marker, locked here until replaced
  for (int attempt = 0; attempt < 64; ++attempt) {
    if (system_calls().renameat2(dir_, temp_.c_str(), dir_, name_.c_str(), RENAME_NOREPLACE) == 0) {
      committed_ = true;
      return held;
    }
    if (errno != EEXIST) break;  // no RENAME_NOREPLACE here (or another failure): commit says which
    struct stat there {};
    if (::fstatat(dir_, name_.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (!S_ISREG(there.st_mode)) break;  // a link or a FIFO: replaced, never followed or opened
    Fd other(::openat(dir_, name_.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
    if (other.get() < 0) continue;
    if (try_lock(other.get()) == Lock::busy) {
      fail(GDAP_ERR_IO, "{}: another save is in progress (found its marker, locked by it): nothing was changed; try again "
           "once it has finished", path_);
    }
    struct stat opened {}, now {};
    if (::fstat(other.get(), &opened) != 0 || ::fstatat(dir_, name_.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 ||
        opened.st_ino != now.st_ino || opened.st_dev != now.st_dev) {
      continue;  // another save replaced the stale marker meanwhile: look at its own
    }
    stale = std::move(other);
    break;  // a crashed save's: replaced (its lock, taken here, keeps other saves off until then)
  }
  commit();
  return held;
}

// Keeps the entry at name_ (if any, and not a folder: a rename onto a folder fails anyway) under
// old_: a second hard link, so that the name never stands empty; renamed where links are refused.
void NewFile::keep_old() {
  struct stat st {};
  if (::fstatat(dir_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    fail(GDAP_ERR_IO, "{}: cannot look at the file there: {}", path_, reason(errno));
  }
  if (S_ISDIR(st.st_mode)) return;
  const std::string kept = "." + name_ + "." + hex_ + ".old";  // the temporary's digits: a save's marker names them
  if (::linkat(dir_, name_.c_str(), dir_, kept.c_str(), 0) == 0) {
    old_ = kept;
    return;
  }
  const int err = errno;
  if (err != EPERM && err != EMLINK && err != ENOTSUP && err != EOPNOTSUPP && err != ENOSYS) {
    fail(GDAP_ERR_IO, "{}: cannot keep the old file under {}: {}", path_, kept, reason(err));
  }
  if (::faccessat(dir_, kept.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0) {  // renameat would replace it
    fail(GDAP_ERR_IO, "{}: cannot keep the old file under {}: the name is taken", path_, kept);
  }
  if (system_calls().renameat(dir_, name_.c_str(), dir_, kept.c_str()) != 0) {
    fail(GDAP_ERR_IO, "{}: cannot move the old file aside to {}: {}", path_, kept, reason(errno));
  }
  old_ = kept;
  old_renamed_ = true;
}

bool NewFile::has_old() const {
  struct stat st {};
  return ::fstatat(dir_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode);
}

void NewFile::sync_folder() const {
  if (system_calls().fsync(dir_) != 0) fail(GDAP_ERR_IO, "{}: flushing its folder to the disk failed: {}", path_, reason(errno));
}

void NewFile::commit_keeping_old() {
  if (fd_.get() >= 0) finish();
  keep_old();
  if (system_calls().renameat(dir_, temp_.c_str(), dir_, name_.c_str()) != 0) {
    const int err = errno;
    unkeep_old();  // where this fails too, restore_old tries again
    fail(GDAP_ERR_IO, "{}: cannot move the written file into place: {}", path_, reason(err));
  }
  committed_ = true;
}

// Before the new file is in place, the old one is still at the name (its kept link removed) or
// was renamed aside (renamed back); 0 or the system's reason. A kept name already gone counts as done.
int NewFile::unkeep_old() {
  if (old_.empty()) return 0;
  const int done = old_renamed_ ? system_calls().renameat(dir_, old_.c_str(), dir_, name_.c_str()) : ::unlinkat(dir_, old_.c_str(), 0);
  if (done != 0 && errno != ENOENT) return errno;
  old_.clear();
  return 0;
}

void NewFile::restore_old() {
  if (!committed_) {  // the rename failed: the name holds the old file, unless it was renamed aside
    if (const int err = unkeep_old(); err != 0) {  // old_ still names it
      fail(GDAP_ERR_IO, "{}: cannot put the old file back from {}: {} (it is still there)", path_, old_, reason(err));
    }
    return;
  }
  if (old_.empty()) {
    if (::unlinkat(dir_, name_.c_str(), 0) != 0 && errno != ENOENT) {
      fail(GDAP_ERR_IO, "{}: cannot remove the new file again: {}", path_, reason(errno));
    }
  } else if (system_calls().renameat(dir_, old_.c_str(), dir_, name_.c_str()) != 0) {
    fail(GDAP_ERR_IO, "{}: cannot put the old file back from {}: {} (it is still there)", path_, old_, reason(errno));
  }
  old_.clear();
  committed_ = false;
}

void NewFile::drop_old() {
  if (old_.empty()) return;
  if (::unlinkat(dir_, old_.c_str(), 0) != 0 && errno != ENOENT) {
    fail(GDAP_ERR_IO, "{}: the new file is in place, but the old one kept as {} cannot be removed: {}", path_, old_,
         reason(errno));
  }
  old_.clear();
}

void write_new(const Dir& dir, const std::string& name, std::string_view bytes) {
  NewFile file(dir, name);
  file.write(bytes.data(), static_cast<int64_t>(bytes.size()));
  file.commit();
}

}  // namespace gdap::io
