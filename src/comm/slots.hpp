// An allgather of messages of any length over a transport that gathers equal slots only (NCCL's
// ncclAllGather). One round of kSlot-byte slots (the rank's meeting, its message's length, then as
// many of its bytes as fit) carries the short messages that most control traffic is, whole; when
// some rank's is longer, a second round gathers every rank's bytes padded to the longest. Every
// rank sees the same meetings and lengths after the first round, so all stop there (meetings that
// differ: collective.hpp), or all take the second round, or none does.
#pragma once

#include "comm/collective.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gdap {

// Gathers this rank's slot with every rank's (all of one size): their concatenation in rank order.
using SlotGather = std::function<std::string(std::string_view slot)>;

constexpr size_t kSlot = 256;

std::vector<std::string> allgather_in_slots(const Meeting& meeting, std::string_view mine, size_t ranks,
                                            const SlotGather& gather);

}  // namespace gdap
