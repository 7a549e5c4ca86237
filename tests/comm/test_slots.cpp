// allgather_in_slots (comm/slots.hpp) over simulated ranks: threads whose equal-slot gather is a
// shared table and a barrier, as ncclAllGather behaves. Every rank must get every rank's message
// exactly, for messages that fit a slot, reach its edge, pass it, or are empty or binary; ranks at
// different meetings (collective.hpp) must all get the same error after the first round.
#include "comm/slots.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Run {
  std::vector<std::vector<std::string>> got;  // per rank, what it gathered
  std::vector<std::string> errors;            // per rank, what it threw ("" if nothing)
  int rounds = 0;                             // equal-slot gathers rank 0 made
};

gdap::Meeting meeting(const char* call, int64_t step) {
  gdap::Meeting m;
  std::strncpy(m.call.data(), call, m.call.size() - 1);
  m.step = step;
  return m;
}

Run gather_all(const std::vector<std::string>& messages, std::vector<gdap::Meeting> meetings = {}) {
  meetings.resize(messages.size(), meeting("gdap_test", 0));
  const size_t n = messages.size();
  std::vector<std::string> table(n);
  std::barrier sync(static_cast<std::ptrdiff_t>(n));
  Run run;
  run.got.resize(n);
  run.errors.resize(n);
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
      try {
        run.got[r] = gdap::allgather_in_slots(meetings[r], messages[r], n, gather);
      } catch (const gdap::Error& e) {
        run.errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return run;
}

void expect_everyone_got(const std::vector<std::string>& messages, int rounds) {
  const auto run = gather_all(messages);
  EXPECT_EQ(run.rounds, rounds);
  for (size_t r = 0; r < messages.size(); ++r) EXPECT_EQ(run.got[r], messages) << "rank " << r;
}

constexpr size_t kFits = gdap::kSlot - sizeof(gdap::Meeting) - 8;

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

TEST(Slots, RanksInDifferentCallsAllFailAfterTheFirstRound) {
  // Rank 2 is in another call (a long message would otherwise take everyone to a second round).
  const auto run = gather_all({"a", std::string(1000, 'L'), "c"},
                             {meeting("gdap_allreduce", 0), meeting("gdap_allreduce", 0), meeting("gdap_comm_barrier", 0)});
  EXPECT_EQ(run.rounds, 1);
  for (const std::string& e : run.errors) {
    EXPECT_NE(e.find("rank 0 is in gdap_allreduce (its meeting 1) but rank 2 in gdap_comm_barrier"), std::string::npos) << e;
    EXPECT_EQ(e, run.errors[0]) << "every rank reports the same";
  }
}

TEST(Slots, RanksAtDifferentStepsOfOneCallAllFail) {
  const auto run = gather_all({"a", "b"}, {meeting("gdap_gemm_execute", 3), meeting("gdap_gemm_execute", 2)});
  for (const std::string& e : run.errors) EXPECT_NE(e.find("(its meeting 4) but rank 1 in gdap_gemm_execute (its meeting 3)"), std::string::npos) << e;
}

}  // namespace
