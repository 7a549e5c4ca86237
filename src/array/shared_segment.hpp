// A POSIX shared-memory segment behind a local section, and the read-only mapping of one made by
// another process: what gdap_array_create_shm records (array layer, so that both the IPC layer,
// which makes segments, and the exchange layer, whose cross-memory attach exchange reads peers'
// sections through such mappings, may use it). A segment is identified by its name and, since a
// name can be unlinked and reused, by its file's inode, device and size (fstat).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gdap {

// Which file a segment is: a name re-created, or resized, is another one.
struct SegmentIdentity {
  std::string name;  // "/name" as shm_open takes it
  uint64_t inode = 0, device = 0;
  int64_t bytes = 0;  // the file's size, as mapped
  auto operator<=>(const SegmentIdentity&) const = default;
};

// The identity of the segment open at `fd` under `name`; throws GDAP_ERR_IO if fstat fails.
SegmentIdentity identity_of(int fd, const std::string& name);

// One of this process's mappings of a segment: where, and of which.
struct SegmentMapping {
  const void* base = nullptr;
  SegmentIdentity identity;
};

// Why the system refused to open or map a segment: its errno, and the message's reason.
struct MapRefusal {
  int err = 0;
  std::string why;
};

// A read-only mapping (PROT_READ, MAP_SHARED) of the segment `want` names (a shm_open name, or
// "/proc/<pid>/fd/<n>" for a memfd another process holds open), after checking that the name still
// opens that very file (inode, device, size). Throws GDAP_ERR_COMM naming `owner` (a
// rank, in the messages) when it is gone, replaced, resized or cannot be mapped; but where
// `refused` is given, an open or mmap that fails (the caller may reach the bytes another way)
// fills it and returns a mapping whose base is null instead.
SegmentMapping map_segment_readonly(const SegmentIdentity& want, int64_t owner, MapRefusal* refused = nullptr);

// Unmaps what map_segment_readonly mapped. Never throws.
void unmap_segment(const SegmentMapping& m);

// This process's mappings of segments that may hold callers' sections (gdap_array_create_shm's and
// gdap_ipc_open's), so that a collective call over processes can name the segment and the bytes of
// it that a section lies in, whatever view of the mapping the caller passed (a NumPy slice of it),
// and refuse one rank writing what another reads. Noted when mapped, forgotten before unmapping.
void note_mapping(const void* base, const SegmentIdentity& identity);
void forget_mapping(const void* base);

// Where bytes first..last of this process lie in a noted segment: its identity and their offsets
// in it; nullopt when they lie in no noted mapping.
struct SegmentPlace {
  SegmentIdentity identity;
  uint64_t first = 0, last = 0;
};
std::optional<SegmentPlace> place_in_segment(uintptr_t first, uintptr_t last);

}  // namespace gdap
