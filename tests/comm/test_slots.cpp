// allgather_in_slots (comm/slots.hpp) over simulated ranks: threads whose equal-slot gather is a
// shared table and a barrier, as ncclAllGather behaves. Every rank must get every rank's message
// exactly, for messages that fit a slot, reach its edge, pass it, or are empty or binary.
#include "comm/slots.hpp"

#include <gtest/gtest.h>

#include <barrier>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Run {
  std::vector<std::vector<std::string>> got;  // per rank, what it gathered
  int rounds = 0;                             // equal-slot gathers rank 0 made
};

Run gather_all(const std::vector<std::string>& messages) {
  const size_t n = messages.size();
  std::vector<std::string> table(n);
  std::barrier sync(static_cast<std::ptrdiff_t>(n));
  Run run;
  run.got.resize(n);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      const gdap::SlotGather gather = [&](std::string_view slot) {
        table[r] = std::string(slot);
        sync.arrive_and_wait();
        std::string all;
        for (const std::string& s : table) {
          EXPECT_EQ(s.size(), slot.size()) << "ranks gathered slots of different sizes";
          all += s;
        }
        sync.arrive_and_wait();
        if (r == 0) ++run.rounds;
        return all;
      };
      run.got[r] = gdap::allgather_in_slots(messages[r], n, gather);
    });
  }
  for (auto& t : threads) t.join();
  return run;
}

void expect_everyone_got(const std::vector<std::string>& messages, int rounds) {
  const Run run = gather_all(messages);
  EXPECT_EQ(run.rounds, rounds);
  for (size_t r = 0; r < messages.size(); ++r) EXPECT_EQ(run.got[r], messages) << "rank " << r;
}

constexpr size_t kFits = gdap::kSlot - 8;

TEST(Slots, ShortMessagesTakeOneRound) { expect_everyone_got({"S0123456789abcdef", "", "E3 rank 2 failed", "x"}, 1); }

TEST(Slots, AMessageFillingItsSlotTakesOneRound) { expect_everyone_got({std::string(kFits, 'a'), "b", std::string(kFits, 'c')}, 1); }

TEST(Slots, OneLongMessageTakesEveryRankToASecondRound) {
  expect_everyone_got({"short", std::string(kFits + 1, 'L'), "", std::string(5000, 'M')}, 2);
}

TEST(Slots, BinaryBytesAndOneRankSurvive) {
  const std::string binary("\0\1\2\0\xff", 5);
  expect_everyone_got({binary}, 1);
  expect_everyone_got({binary + std::string(300, '\0'), binary}, 2);
}

}  // namespace
