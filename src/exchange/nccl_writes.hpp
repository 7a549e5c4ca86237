// The NCCL engine's two paths that write into peers' device memory instead of sending through
// NCCL (nccl.cpp picks them; peer_reach.hpp says how a rank reaches its peers):
//  - peer_writes.cpp, per call: each rank writes its sends straight into its peers' receiving
//    sections with one copy kernel, bracketed by two one-element NCCL all-reduces;
//  - bound_writes.cpp, for a bound exchange: each start writes packed into the peers' staging,
//    mapped once at the binding, and orders itself by flags, with no NCCL call.
// Each is taken only when every rank can reach every peer (decided alike on every rank from the
// offers every rank made in the call's agreement); otherwise the engine sends through NCCL.
#pragma once

#include "comm/cache.hpp"
#include "exchange/engine.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gdap {
class NcclComm;
}

namespace gdap::exchange {

// This rank's offer for a call's agreement: where its receiving section is and how to reach it.
std::string peer_share(const Program& program, const Sections& sections, int device);
// Runs the call by direct writes and returns true, or returns false (having moved nothing) when
// the ranks' offers rule them out; collective. `key` identifies the program and this rank's
// sections (the send/receive path's cache key).
bool run_peer_writes(NcclComm& comm, const Program& program, const Sections& sections,
                     const std::vector<std::string>& shares, std::vector<int64_t> key);

// A bound exchange's direct writes: this rank's offer for the binding's agreement, once its
// checks passed (its staging kept in `state`); then, from every rank's offer, the bound state in
// `state`, or `state` emptied when the ranks keep NCCL send/receive (GDAP_NCCL_PEER=1 makes that
// an error). Collective; throws on every rank when the ranks' programs do not match.
std::string bound_offer(NcclComm& comm, const Program& program, std::unique_ptr<Scratch>& state);
void bind_writes(NcclComm& comm, const Program& program, const Sections& sections,
                 const std::vector<std::string>& offers, std::unique_ptr<Scratch>& state);
void start_writes(NcclComm& comm, Scratch& state);

}  // namespace gdap::exchange
