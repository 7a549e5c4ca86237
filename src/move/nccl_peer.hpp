// Redistribution over an NCCL communicator whose ranks share one host's NVLink: instead of packing,
// sending through NCCL and unpacking, each rank writes its sends straight into its peers'
// destination sections with one copy kernel, as the in-process group's push does. Peers in another
// process are reached through CUDA IPC (their destination's memory handle, opened once and kept
// while it stays the same); peers in this process through their own pointers.
//
// Every rank offers how it can be reached in the call's agreement (peer_share). The first call
// with new offers maps every peer's destination and lets the ranks vote; if any rank cannot reach a
// peer (another host, no peer access, memory CUDA IPC cannot export such as stream-ordered pools or
// VMM allocations, or GDAP_NCCL_PEER=0 on any rank), every rank takes the NCCL path. Within a call
// two one-element NCCL all-reduces on the communicator's stream bracket the copy kernel: after
// the first, every rank's earlier work on its sections is done; after the second, every rank's
// writes are.
#pragma once

#include "move/redistribute.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gdap {
class NcclComm;
}

namespace gdap::move {

// This rank's offer for the agreement: where its destination section is and how to reach it.
std::string peer_share(const Call& call, int device);

// Runs the call by direct writes and returns true, or returns false (having moved nothing) when
// the ranks' offers rule the direct path out; collective over the communicator. `key` identifies
// the plan and this rank's sections (the executor's cache key).
bool run_nccl_peer(const Call& call, NcclComm& comm, const std::vector<std::string>& shares, std::vector<int64_t> key);

}  // namespace gdap::move
