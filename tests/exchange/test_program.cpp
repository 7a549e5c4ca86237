// The exchange program (exchange/program.hpp) and the communicator's cache (comm/cache.hpp), on
// their own: how a message is cut for the wire, where its parts lie in the packed buffer, how a
// broadcast shares its bytes, that copies between any two ends move exactly the planned elements,
// and how cache entries are made, kept and replaced. Each case names the rule it checks.
#include "comm/cache.hpp"
#include "exchange/program.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {

using gdap::exchange::End;
using gdap::exchange::Message;
using gdap::exchange::Part;
using gdap::exchange::Program;
using gdap::exchange::Segment;

// A 1-d program of one send message to rank 1 whose block sets have these lengths (elements of
// `es` bytes), each set at its own place in a section of `section` elements.
struct OneMessage {
  std::vector<Segment> segments;
  Program program;
  OneMessage(const std::vector<int64_t>& lengths, int64_t es, gdap::exchange::Style style = {}) {
    int64_t at = 0;
    for (int64_t n : lengths) {
      segments.push_back({at, n, at, at});
      at += n + 1;  // a gap between sets: no two merge into one run
    }
    program = Program(0, 2, 1, es, style);
    program.add_message(Part::send, 1);
    for (const Segment& s : segments) {
      const std::span<const Segment> list[] = {{&s, 1}};
      program.add_set(list, s.length);
    }
    program.finish();
  }
};

TEST(Program, ASetOf64KiBOrMoreIsAWireMessageOfItsOwnAndSmallerNeighboursGoTogether) {
  constexpr int64_t kBig = (int64_t{1} << 16) / 8;  // 64 KiB of float64
  struct Case {
    const char* rule;
    std::vector<int64_t> lengths;
    std::vector<std::pair<int64_t, int64_t>> wire;  // (offset, elements) of each wire message
  };
  const Case cases[] = {
      {"one small set: one wire message", {10}, {{0, 10}}},
      {"small sets travel together", {10, 20, 30}, {{0, 60}}},
      {"a big set alone, the small ones around it together", {10, kBig, 20, 30}, {{0, 10}, {10, kBig}, {10 + kBig, 50}}},
      {"two big sets: two messages", {kBig, kBig + 1}, {{0, kBig}, {kBig, kBig + 1}}},
      {"just under 64 KiB is small", {kBig - 1, 5}, {{0, kBig + 4}}},
  };
  for (const Case& c : cases) {
    const OneMessage m(c.lengths, 8);
    const auto wire = m.program.wire(Part::send);
    ASSERT_EQ(wire.size(), c.wire.size()) << c.rule;
    int64_t total = 0;
    for (size_t k = 0; k < wire.size(); ++k) {
      EXPECT_EQ(wire[k].peer, 1) << c.rule;
      EXPECT_EQ(wire[k].offset, c.wire[k].first) << c.rule << ", wire message " << k;
      EXPECT_EQ(wire[k].elements, c.wire[k].second) << c.rule << ", wire message " << k;
      total += wire[k].elements;
    }
    EXPECT_EQ(m.program.messages(Part::send)[0].elements, total) << c.rule << ": the wire carries the message whole";
    EXPECT_EQ(m.program.bytes(Part::send), total * 8) << c.rule;
  }
}

TEST(Program, PackingAndUnpackingThroughEveryWireMessageMovesExactlyTheMessage) {
  constexpr int64_t kBig = (int64_t{1} << 16) / 4;
  const OneMessage m({3, kBig, 7, 1, kBig + 2}, 4);
  const int64_t span = std::accumulate(m.segments.begin(), m.segments.end(), int64_t{0},
                                       [](int64_t a, const Segment& s) { return a + s.length + 1; });
  std::vector<int32_t> source(static_cast<size_t>(span)), target(static_cast<size_t>(span), -1);
  std::iota(source.begin(), source.end(), 0);
  const std::vector<int64_t> unit{1};
  std::vector<int32_t> packed(static_cast<size_t>(m.program.bytes(Part::send) / 4), -1);
  for (const Message& w : m.program.wire(Part::send)) {
    std::vector<gdap::exchange::Copy2D> pack, unpack;
    m.program.copies(w, End{End::sender, unit}, End{End::packed, {}}, pack);
    m.program.copies(w, End{End::packed, {}}, End{End::receiver, unit}, unpack);
    gdap::exchange::run_host_copies(pack, reinterpret_cast<const char*>(source.data()), reinterpret_cast<char*>(packed.data()));
    gdap::exchange::run_host_copies(unpack, reinterpret_cast<const char*>(packed.data()), reinterpret_cast<char*>(target.data()));
  }
  for (const Segment& s : m.segments) {
    for (int64_t i = s.src_local; i < s.src_local + s.length; ++i) {
      ASSERT_EQ(target[static_cast<size_t>(i)], source[static_cast<size_t>(i)]) << "element " << i << " of a set";
    }
    if (s.src_local + s.length < span) {
      EXPECT_EQ(target[static_cast<size_t>(s.src_local + s.length)], -1) << "the gap after a set is not written";
    }
  }
}

TEST(Program, ABroadcastsSendsAllCarryTheLocalCopyAtOffsetZero) {
  gdap::exchange::Style broadcast;
  broadcast.broadcast = true;
  const Segment s{0, 12, 0, 0};
  const std::span<const Segment> list[] = {{&s, 1}};
  Program p(0, 4, 1, 8, broadcast);
  p.add_message(Part::local, 0);
  p.add_set(list, 12);
  for (int64_t peer : {1, 2, 3}) {
    p.add_message(Part::send, peer);
    p.add_set(list, 12);
  }
  p.finish();
  for (const Message& m : p.messages(Part::send)) EXPECT_EQ(m.offset, 0) << "send to rank " << m.peer;
  EXPECT_EQ(p.bytes(Part::send), 12 * 8) << "one packed copy serves every receiver";
  Program q(0, 4, 1, 8, {});
  for (int64_t peer : {1, 2, 3}) {
    q.add_message(Part::send, peer);
    q.add_set(list, 12);
  }
  q.finish();
  EXPECT_EQ(q.messages(Part::send)[2].offset, 24) << "without broadcast, sends lie one after another";
  EXPECT_EQ(q.bytes(Part::send), 36 * 8);
}

TEST(Program, EveryProgramHasASerialOfItsOwn) {
  const Program a(0, 1, 1, 8, {}), b(0, 1, 1, 8, {});
  EXPECT_NE(a.serial(), b.serial()) << "engines key their kept state by it";
}

struct Counted : gdap::Scratch {
  explicit Counted(std::vector<std::string>* log = nullptr, std::string name = {}) : log_(log), name_(std::move(name)) {}
  ~Counted() override {
    if (log_ != nullptr) log_->push_back(name_);
  }
  std::vector<std::string>* log_;
  std::string name_;
  int value = 0;
};
struct Other : gdap::Scratch {};

TEST(Cache, EntriesAreKeptPerKeyAndReplacedWhenOfAnotherKind) {
  gdap::Cache cache;
  cache.get<Counted>("a").value = 7;
  cache.get<Counted>("b").value = 8;
  EXPECT_EQ(cache.get<Counted>("a").value, 7) << "an entry stays between calls";
  EXPECT_EQ(cache.find<Counted>("b")->value, 8) << "each key has its own entry";
  EXPECT_EQ(cache.find<Other>("a"), nullptr) << "find names the kind it wants";
  cache.get<Other>("a");
  EXPECT_EQ(cache.find<Counted>("a"), nullptr) << "another kind replaces the entry";
  EXPECT_EQ(cache.find<Counted>("missing"), nullptr) << "a missing key has no entry";
}

TEST(Cache, ASlotStaysWhereItIsWhileOthersAreAdded) {
  gdap::Cache cache;
  std::unique_ptr<gdap::Scratch>& first = cache.slot("first");
  for (int k = 0; k < 100; ++k) cache.slot("key " + std::to_string(k));
  first = std::make_unique<Other>();
  EXPECT_NE(cache.find<Other>("first"), nullptr) << "a reference to a slot survives later keys";
}

TEST(Cache, EntriesAreFreedLastMadeFirst) {
  std::vector<std::string> freed;
  {
    gdap::Cache cache;
    cache.slot("engine") = std::make_unique<Counted>(&freed, "engine");
    cache.slot("staging") = std::make_unique<Counted>(&freed, "staging");
  }
  EXPECT_EQ(freed, (std::vector<std::string>{"staging", "engine"})) << "what was made last may use what came before";
}

}  // namespace
