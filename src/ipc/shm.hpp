// POSIX shared-memory segments for gdap_array_create_shm: created exclusively under a name, mapped
// read-write, zero-filled by the kernel; released by unmapping and unlinking the name.
#pragma once

#include <cstdint>
#include <string>

namespace gdap::ipc {

struct Segment {
  void* base = nullptr;
  int64_t bytes = 0;  // mapped length (at least 1)
  std::string name;   // "/name" as shm_open takes it
};

// `name` NULL or "" picks a fresh "/gdap-<pid>-<n>-<random>". Throws GDAP_ERR_INVALID_ARGUMENT for a bad or
// existing name, GDAP_ERR_NO_MEMORY / GDAP_ERR_IO (with the system's reason) when sizing or mapping fails.
Segment create_segment(const char* name, int64_t bytes);

// Unmaps this process's mapping and unlinks the name; mappings of other processes stay valid. Never throws.
void release_segment(void* base, int64_t bytes, const std::string& name);

}  // namespace gdap::ipc
