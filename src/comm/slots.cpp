#include "comm/slots.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gdap {

std::vector<std::string> allgather_in_slots(const Meeting& meeting, std::string_view mine, size_t ranks,
                                            const SlotGather& gather) {
  constexpr size_t kHead = sizeof(Meeting) + sizeof(int64_t);
  constexpr size_t kFits = kSlot - kHead;
  std::string slot(kSlot, '\0');
  const auto length = static_cast<int64_t>(mine.size());
  std::memcpy(slot.data(), &meeting, sizeof meeting);
  std::memcpy(slot.data() + sizeof meeting, &length, sizeof length);
  std::memcpy(slot.data() + kHead, mine.data(), std::min(mine.size(), kFits));
  const std::string first = gather(slot);
  std::vector<Meeting> meetings(ranks);
  std::vector<size_t> lengths(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    int64_t n = 0;
    std::memcpy(&meetings[r], first.data() + r * kSlot, sizeof(Meeting));
    std::memcpy(&n, first.data() + r * kSlot + sizeof(Meeting), sizeof n);
    lengths[r] = static_cast<size_t>(n);
  }
  check_verdict(meetings_differ(meetings));
  const size_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::string> out;
  if (longest <= kFits) {
    for (size_t r = 0; r < ranks; ++r) out.push_back(first.substr(r * kSlot + kHead, lengths[r]));
    return out;
  }
  std::string padded(longest, '\0');
  std::memcpy(padded.data(), mine.data(), mine.size());
  const std::string all = gather(padded);
  for (size_t r = 0; r < ranks; ++r) out.push_back(all.substr(r * longest, lengths[r]));
  return out;
}

}  // namespace gdap
