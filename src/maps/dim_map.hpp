// One dimension of one process: where a global index sits in the local buffer and back, and the
// runs of owned indices that are contiguous locally. Needs a valid dictionary (validate_dim).
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace gdap {

// Local position of global index g in this process's buffer, if held ('b': padding counts; every
// cell of [start, stop) holds its own index, periodic or not). O(1) for 'b' and 'c', O(n) for 'u'.
std::optional<int64_t> held_local(const gdap_dim& dim, int64_t global);

// Local position of g if this process OWNS it (padding excluded). O(1) for 'b' and 'c', O(n) for 'u'.
std::optional<int64_t> owned_local(const gdap_dim& dim, int64_t global);

// Global index at local position `local` (0 <= local < local_extent).
int64_t global_of_local(const gdap_dim& dim, int64_t local);

// The owned runs in increasing global order.
int64_t num_runs(const gdap_dim& dim);
std::vector<gdap_run> runs(const gdap_dim& dim, int64_t first, int64_t capacity);

}  // namespace gdap
