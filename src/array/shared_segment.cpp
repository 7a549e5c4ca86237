// Segment identities and read-only mappings of peers' segments (shared_segment.hpp).
#include "array/shared_segment.hpp"

#include "core/error.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace gdap {

SegmentIdentity identity_of(int fd, const std::string& name) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    fail(GDAP_ERR_IO, "fstat of shared-memory segment '{}' failed: {} (errno {})", name, std::strerror(err), err);
  }
  return {name, static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev), static_cast<int64_t>(st.st_size)};
}

namespace {

// Tests only (GDAP_TEST_CMA_REFUSED=map, or map-gone: mpi_cma.cpp): mapping fails here as if the
// segment could not be opened.
bool test_refuses_map() {
  const char* refused = std::getenv("GDAP_TEST_CMA_REFUSED");
  return refused != nullptr && (std::strcmp(refused, "map") == 0 || std::strcmp(refused, "map-gone") == 0);
}

[[noreturn]] void refuse(const SegmentIdentity& want, int64_t owner, const std::string& why) {
  fail(GDAP_ERR_COMM, "shared-memory segment '{}' of rank {} cannot be mapped: {}", want.name, owner, why);
}

}  // namespace

// O_NONBLOCK: a FIFO put under the name opens at once (and then fails the identity check) instead
// of waiting forever for a writer; glibc's shm_open adds O_NOFOLLOW, so a symlink there is refused.
// A "/proc/<pid>/fd/<n>" name (an unnamed memfd the owner holds open) is opened through /proc, which
// the kernel allows only where this process may inspect the owner (as for process_vm_readv).
SegmentMapping map_segment_readonly(const SegmentIdentity& want, int64_t owner, MapRefusal* refused) {
  const bool by_proc = want.name.rfind("/proc/", 0) == 0;
  const int fd = test_refuses_map()  ? (errno = EACCES, -1)
                 : by_proc           ? open(want.name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                                     : shm_open(want.name.c_str(), O_RDONLY | O_NONBLOCK, 0);
  // A shm_open name is gone once unlinked; a memfd, never unlinked, once its owner closed it or exited.
  const auto refused_by_system = [&](int err, const char* call) {
    std::string why = err != ENOENT ? fmt::format("{} failed: {} (errno {})", call, std::strerror(err), err)
                      : by_proc     ? std::string("it is no longer open: its owner closed it or exited")
                                    : std::string("it no longer exists (unlinked by its owner)");
    if (refused == nullptr) refuse(want, owner, why);
    *refused = MapRefusal{err, std::move(why)};
  };
  if (fd < 0) {
    refused_by_system(errno, by_proc ? "open" : "shm_open");
    return {nullptr, want};
  }
  void* p = MAP_FAILED;
  try {
    const SegmentIdentity found = identity_of(fd, want.name);
    if (found.inode != want.inode || found.device != want.device || found.bytes != want.bytes) {
      refuse(want, owner, fmt::format("the name now opens another file (inode {}, {} bytes; rank {} published inode {}, "
                                      "{} bytes): it was re-created or resized", found.inode, found.bytes, owner,
                                      want.inode, want.bytes));
    }
    if (want.bytes <= 0) refuse(want, owner, "it is empty");
    p = mmap(nullptr, static_cast<size_t>(want.bytes), PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) refused_by_system(errno, "mmap");
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);  // the mapping keeps the file
  return {p == MAP_FAILED ? nullptr : p, want};
}

void unmap_segment(const SegmentMapping& m) {
  if (m.base != nullptr) munmap(const_cast<void*>(m.base), static_cast<size_t>(m.identity.bytes));
}

namespace {

// Noted mappings by base address (any thread may map, unmap or look up).
struct Noted {
  std::mutex lock;
  std::map<uintptr_t, SegmentIdentity> by_base;
};

Noted& noted() {
  static Noted* n = new Noted;  // never destroyed: arrays may be released during exit
  return *n;
}

}  // namespace

void note_mapping(const void* base, const SegmentIdentity& identity) {
  Noted& n = noted();
  const std::lock_guard<std::mutex> hold(n.lock);
  n.by_base[reinterpret_cast<uintptr_t>(base)] = identity;
}

void forget_mapping(const void* base) {
  Noted& n = noted();
  const std::lock_guard<std::mutex> hold(n.lock);
  n.by_base.erase(reinterpret_cast<uintptr_t>(base));
}

std::optional<SegmentPlace> place_in_segment(uintptr_t first, uintptr_t last) {
  Noted& n = noted();
  const std::lock_guard<std::mutex> hold(n.lock);
  auto it = n.by_base.upper_bound(first);
  if (it == n.by_base.begin()) return std::nullopt;
  --it;
  const uintptr_t base = it->first;
  const auto bytes = static_cast<uintptr_t>(it->second.bytes);
  if (first - base >= bytes || last - base >= bytes) return std::nullopt;  // mappings do not overlap
  return SegmentPlace{it->second, first - base, last - base};
}

}  // namespace gdap
