// POSIX shared-memory segments for gdap_array_create_shm: created exclusively under a name, mapped
// read-write, zero-filled by the kernel; released by unmapping and unlinking the name.
#pragma once

#include "array/shared_segment.hpp"

#include <cstdint>

namespace gdap::ipc {

// `name` NULL or "" picks a fresh "/gdap-<pid>-<n>-<random>". Throws GDAP_ERR_INVALID_ARGUMENT for a bad or
// existing name, GDAP_ERR_NO_MEMORY / GDAP_ERR_IO (with the system's reason) when sizing or mapping fails.
// Returns the read-write mapping and the segment's identity (its length at least 1).
SegmentMapping create_segment(const char* name, int64_t bytes);

// Unmaps this process's mapping and unlinks the name; mappings of other processes stay valid. Never throws.
void release_segment(const SegmentMapping& segment);

}  // namespace gdap::ipc
