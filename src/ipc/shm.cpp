// Host sections shared through POSIX shared memory: the segment gdap_array_create_shm makes, and the
// export / open halves of an IPC handle for host memory. A section is shareable when it lies in a
// mapping of a file under /dev/shm; which one is read from /proc/self/maps, so no registry of
// segments is kept and a section in a segment made by someone else (Python's
// multiprocessing.shared_memory, another library) is shareable too.
#include "ipc/shm.hpp"

#include "ipc/handle.hpp"

#include "array/array.hpp"
#include "core/error.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

namespace gdap::ipc {
namespace {

std::string system_error(int err) { return fmt::format("{} (errno {})", std::strerror(err), err); }

void check_name(const std::string& name) {
  if (name.size() < 2 || name[0] != '/' || name.find('/', 1) != std::string::npos || name.size() > 255) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory name '{}' must be '/' followed by 1 to 254 characters and no "
         "other '/'", name);
  }
  // "/." and "/.." name /dev/shm itself and its parent, never a segment; glibc's named semaphores
  // live in the same folder as "sem.NAME", so a segment so named could be taken for (or take) one.
  if (name == "/." || name == "/..") {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory name '{}' names a folder, not a segment", name);
  }
  if (name.rfind("/sem.", 0) == 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory name '{}' starts with 'sem.', which glibc keeps for named "
         "semaphores", name);
  }
  // /proc/self/maps, where an export finds the segment, escapes a newline (and the kernel other
  // control characters): a segment so named could be made but never exported.
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory name holds the control character {:#04x} at position {}: "
           "names are printable characters", c, i);
    }
  }
}

// A segment any user of the node may write is no section to trust: its data can change under
// both processes. Refused at export and at open.
void refuse_world_writable(const std::string& name, mode_t mode) {
  if ((mode & S_IWOTH) != 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory segment '{}' has mode {:04o}: every user of the node may write "
         "it (chmod o-w it, or allocate with gdap_array_create_shm, whose segments are 0600)", name, mode & 07777);
  }
}

uint64_t free_bytes_in_dev_shm() {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return 0;
  return static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
}

std::string fresh_name() {
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  return fmt::format("/gdap-{}-{}-{:08x}", static_cast<long>(getpid()), counter.fetch_add(1), random());
}

// One line of /proc/self/maps.
struct Mapping {
  uintptr_t start = 0, end = 0;
  uint64_t file_offset = 0;
  uint64_t inode = 0;
  bool writable = false;
  std::string path;
};

bool find_mapping(uintptr_t address, Mapping& out) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    char perms[8] = {};
    int consumed = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %llu%n", &start, &end, perms, &offset, &inode,
                    &consumed) < 5) {
      continue;
    }
    if (address < start || address >= end) continue;
    size_t p = static_cast<size_t>(consumed);
    while (p < line.size() && line[p] == ' ') ++p;
    out = {static_cast<uintptr_t>(start), static_cast<uintptr_t>(end), offset, inode, perms[1] == 'w',
           line.substr(p)};
    return true;
  }
  return false;
}

void unmap(void* base, int64_t bytes, int32_t) {
  forget_mapping(base);
  munmap(base, static_cast<size_t>(bytes));
}

}  // namespace

SegmentMapping create_segment(const char* name, int64_t bytes) {
  const std::string chosen = name != nullptr && name[0] != '\0' ? std::string(name) : fresh_name();
  check_name(chosen);
  const int fd = shm_open(chosen.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    const int err = errno;
    fail(err == EEXIST ? GDAP_ERR_INVALID_ARGUMENT : GDAP_ERR_IO, "shm_open('{}') to create the segment failed: {}",
         chosen, system_error(err));
  }
  const int64_t length = bytes > 0 ? bytes : 1;  // mmap refuses 0 bytes; an empty section still has a segment
  void* p = MAP_FAILED;
  int err = 0;
  // Reserved whole now: a segment only sized (ftruncate) is sparse, and the first write past what
  // /dev/shm holds (64 MiB in a default container) would kill the process with SIGBUS.
  if (ftruncate(fd, static_cast<off_t>(length)) != 0) {
    err = errno;
  } else if ((err = posix_fallocate(fd, 0, static_cast<off_t>(length))) != 0) {
    close(fd);
    shm_unlink(chosen.c_str());
    fail(err == ENOSPC ? GDAP_ERR_NO_MEMORY : GDAP_ERR_IO, "shared-memory segment '{}' of {} bytes cannot be reserved "
         "in /dev/shm ({} bytes free): {}", chosen, length, free_bytes_in_dev_shm(), system_error(err));
  } else {
    p = mmap(nullptr, static_cast<size_t>(length), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) err = errno;
  }
  struct stat st {};
  if (p != MAP_FAILED && fstat(fd, &st) != 0) {  // the identity a peer's mapping checks (shared_segment.hpp)
    err = errno;
    munmap(p, static_cast<size_t>(length));
    p = MAP_FAILED;
  }
  close(fd);  // the mapping keeps the segment
  if (p == MAP_FAILED) {
    shm_unlink(chosen.c_str());
    fail(err == ENOMEM || err == ENOSPC ? GDAP_ERR_NO_MEMORY : GDAP_ERR_IO,
         "sizing and mapping shared-memory segment '{}' ({} bytes) failed: {}", chosen, length, system_error(err));
  }
  SegmentMapping made{p, {chosen, static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev), length}};
  note_mapping(p, made.identity);
  return made;
}

void release_segment(const SegmentMapping& segment) {
  forget_mapping(segment.base);
  munmap(const_cast<void*>(segment.base), static_cast<size_t>(segment.identity.bytes));
  shm_unlink(segment.identity.name.c_str());
}

void export_shm(HandleData& h, const gdap_array& array) {
  const Span s = span(array);
  const auto data = reinterpret_cast<uintptr_t>(array.data());
  Mapping m;
  const bool found = data != 0 && find_mapping(data + static_cast<uintptr_t>(s.low), m);
  if (!found || m.path.rfind("/dev/shm/", 0) != 0) {
    fail(GDAP_ERR_UNSUPPORTED,
         "the section at {:#x} is in ordinary host memory ({}), which no other process can map: allocate it with "
         "gdap_array_create_shm (or place it in a POSIX shared-memory segment) to share it",
         data, !found ? std::string("no mapping") : m.path.empty() ? std::string("anonymous memory") : "'" + m.path + "'");
  }
  const std::string deleted = " (deleted)";
  if (m.path.size() > deleted.size() && m.path.compare(m.path.size() - deleted.size(), deleted.size(), deleted) == 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the section's shared-memory segment '{}' has been unlinked: no other process "
         "can open it any more", m.path.substr(8, m.path.size() - 8 - deleted.size()));
  }
  if (data + static_cast<uintptr_t>(s.high) > m.end) {
    fail(GDAP_ERR_UNSUPPORTED, "the section's bytes run past the end of its mapping of '{}' ({} bytes past)", m.path,
         data + static_cast<uintptr_t>(s.high) - m.end);
  }
  const std::string name = m.path.substr(8);  // "/dev/shm/x" -> "/x"
  struct stat st {};
  if (stat(m.path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_ino) != m.inode) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory segment '{}' was unlinked or replaced since it was mapped", name);
  }
  refuse_world_writable(name, st.st_mode);
  std::snprintf(h.shm_name, sizeof h.shm_name, "%s", name.c_str());
  h.shm_uid = static_cast<uint32_t>(st.st_uid);
  h.shm_mode = static_cast<uint32_t>(st.st_mode & 07777);
  h.shm_inode = m.inode;
  h.shm_device = static_cast<uint64_t>(st.st_dev);
  h.allocation_bytes = static_cast<int64_t>(st.st_size);
  h.offset = static_cast<int64_t>(m.file_offset + (data - m.start));
  if (!m.writable) h.readonly = 1;
}

namespace {

// A descriptor closed with its scope.
struct Closer {
  int fd;
  ~Closer() { close(fd); }
};

// What the segment open at `fd` must be for `h`: the same file (inode), the same owner and mode as
// at export, writable by no one else, large enough for the section. Returns its size.
int64_t check_segment(int fd, const HandleData& h, const std::string& name) {
  struct stat st {};
  if (fstat(fd, &st) != 0) fail(GDAP_ERR_IO, "fstat of shared-memory segment '{}' failed: {}", name, system_error(errno));
  if (static_cast<uint64_t>(st.st_ino) != h.shm_inode || static_cast<uint64_t>(st.st_dev) != h.shm_device) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory segment '{}' is not the one the handle was made for (inode {} != "
         "{}): the exporter's segment was freed and the name reused", name, st.st_ino, h.shm_inode);
  }
  const auto mode = static_cast<uint32_t>(st.st_mode & 07777);
  if (static_cast<uint32_t>(st.st_uid) != h.shm_uid || mode != h.shm_mode) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory segment '{}' now has owner {} and mode {:04o}, but owner {} and "
         "mode {:04o} when it was exported: someone changed it since", name, st.st_uid, mode, h.shm_uid, h.shm_mode);
  }
  refuse_world_writable(name, st.st_mode);
  const auto bytes = static_cast<int64_t>(st.st_size);
  if (h.offset + span(h).high > bytes) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory segment '{}' is {} bytes but the section needs {}", name, bytes,
         h.offset + span(h).high);
  }
  return bytes;
}

}  // namespace

Opened open_shm(const HandleData& h) {
  if (strnlen(h.shm_name, sizeof h.shm_name) == sizeof h.shm_name) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle: field shm_name is not NUL-terminated");
  }
  const std::string name = h.shm_name;
  check_name(name);
  // A killed exporter never unlinked its segment: the name still opens, onto data nobody owns.
  check_exporter_alive(h, "shared-memory segment");
  const Closer fd{shm_open(name.c_str(), h.readonly ? O_RDONLY : O_RDWR, 0)};
  if (fd.fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "shared-memory segment '{}' no longer exists: its exporter destroyed the "
           "array (which unlinks it) or the segment was removed", name);
    }
    fail(GDAP_ERR_IO, "shm_open('{}') failed: {}", name, system_error(err));
  }
  const int64_t length = std::max<int64_t>(check_segment(fd.fd, h, name), 1);
  void* p = mmap(nullptr, static_cast<size_t>(length), PROT_READ | (h.readonly ? 0 : PROT_WRITE), MAP_SHARED, fd.fd, 0);
  if (p == MAP_FAILED) fail(GDAP_ERR_IO, "mapping shared-memory segment '{}' failed: {}", name, system_error(errno));
  SegmentIdentity identity{name, h.shm_inode, 0, length};
  struct stat st {};
  if (fstat(fd.fd, &st) == 0) identity.device = static_cast<uint64_t>(st.st_dev);
  note_mapping(p, identity);
  Opened o;
  o.base = p;
  o.bytes = length;
  o.data = static_cast<char*>(p) + h.offset;
  o.device = {GDAP_DEVICE_CPU, 0};
  o.release = unmap;
  return o;
}

}  // namespace gdap::ipc
