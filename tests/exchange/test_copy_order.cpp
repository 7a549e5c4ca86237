// The order a copy kernel moves several peers' messages in (exchange/copy.hpp's PeerOrder and
// order_device_copies, program.hpp's kernel_order), on the host: interleaving cuts every peer's
// copies into pieces that together cover exactly the same bytes, deals them out one peer after
// another and keeps each piece's alignment; the other orders leave the copies whole; a bad
// GDAP_PEER_ORDER is refused by name. Each case names the rule it checks.
#include "core/error.hpp"
#include "exchange/copy.hpp"
#include "exchange/program.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using gdap::cuda::DeviceCopy;
using gdap::exchange::order_device_copies;
using gdap::exchange::peer_order;
using gdap::exchange::PeerOrder;

// Sets GDAP_PEER_ORDER for one scope (unset when `value` is null), restoring nothing: every case sets
// what it needs.
struct Order {
  explicit Order(const char* value) { value ? ::setenv("GDAP_PEER_ORDER", value, 1) : ::unsetenv("GDAP_PEER_ORDER"); }
  ~Order() { ::unsetenv("GDAP_PEER_ORDER"); }
};

// Fake addresses: copies are never run here, only cut and ordered.
const char* at(int64_t offset) { return reinterpret_cast<const char*>(int64_t{1} << 40) + offset; }
char* to(int64_t peer, int64_t offset) { return reinterpret_cast<char*>((peer + 2) << 40) + offset; }

// Every byte a list of copies moves: destination address -> source address.
std::map<const char*, const char*> bytes_of(const std::vector<DeviceCopy>& copies) {
  std::map<const char*, const char*> out;
  for (const DeviceCopy& c : copies) {
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t b = 0; b < c.row_bytes; ++b) {
        const bool fresh = out.emplace(c.dst + r * c.dst_pitch + b, c.src + r * c.src_pitch + b).second;
        EXPECT_TRUE(fresh) << "a byte is written twice";
      }
    }
  }
  return out;
}

int64_t peer_of(const DeviceCopy& c) { return (reinterpret_cast<int64_t>(c.dst) >> 40) - 2; }

// Three peers' copies: many short rows (peer 0), a few long rows (peer 1), one odd-sized row (peer 2).
std::vector<std::vector<DeviceCopy>> three_peers() {
  return {{{at(0), to(0, 0), 300, 48, 4096, 64, true}},
          {{at(1 << 20), to(1, 0), 3, 5000, 8192, 5008, true}, {at(3 << 20), to(1, 1 << 20), 2, 16, 32, 16, true}},
          {{at(5 << 20), to(2, 8), 1, 1234, 0, 0, true}}};
}

TEST(PeerOrder, DefaultIsInterleaveAndNamesAreRead) {
  {
    Order o(nullptr);
    EXPECT_EQ(peer_order(), PeerOrder::interleave) << "rule: interleave unless GDAP_PEER_ORDER says otherwise";
  }
  {
    Order o("next");
    EXPECT_EQ(peer_order(), PeerOrder::next);
  }
  {
    Order o("increasing");
    EXPECT_EQ(peer_order(), PeerOrder::increasing);
  }
}

TEST(PeerOrder, BadValueIsRefusedByName) {
  for (const char* bad : {"Interleave", "random", "1", ""}) {  // "" used to mean the default
    Order o(bad);
    try {
      peer_order();
      ADD_FAILURE() << "rule: GDAP_PEER_ORDER='" << bad << "' is refused";
    } catch (const gdap::Error& e) {
      EXPECT_EQ(e.status(), GDAP_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(std::string("GDAP_PEER_ORDER='") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(OrderDeviceCopies, InterleavedPiecesMoveExactlyTheSameBytes) {
  Order o("interleave");
  const auto peers = three_peers();
  std::vector<DeviceCopy> whole;
  for (const auto& p : peers) whole.insert(whole.end(), p.begin(), p.end());
  const auto pieces = order_device_copies(peers, 1024);
  EXPECT_GT(pieces.size(), whole.size()) << "rule: copies bigger than a piece are cut";
  int64_t long_row_pieces = 0;
  for (const DeviceCopy& c : pieces) long_row_pieces += peer_of(c) == 1 && c.rows == 1 && c.row_bytes == 1024;
  EXPECT_EQ(long_row_pieces, 3 * 4) << "rule: each 5000-byte row becomes four 1024-byte slices and a tail";
  EXPECT_EQ(bytes_of(pieces), bytes_of(whole)) << "rule: the pieces move every byte once, from where it was";
  for (const DeviceCopy& c : pieces) {
    EXPECT_TRUE(c.remote) << "rule: a piece keeps its copy's remote flag";
    EXPECT_LE(c.rows * c.row_bytes, 1024) << "rule: a piece holds at most about `piece` bytes (1024 here)";
    const auto offset = reinterpret_cast<int64_t>(c.dst) & ((int64_t{1} << 40) - 1);
    if (peer_of(c) == 1 && c.rows == 1 && c.row_bytes != 5000) EXPECT_EQ(offset % 16, 0) << "rule: a long row is cut at multiples of 16 bytes";
  }
}

TEST(OrderDeviceCopies, InterleaveDealsOnePeerAfterAnother) {
  Order o("interleave");
  const auto pieces = order_device_copies(three_peers(), 1024);
  std::vector<int64_t> left(3, 0);
  for (const DeviceCopy& c : pieces) ++left[static_cast<size_t>(peer_of(c))];
  // Round robin: pieces go to peers 0, 1, 2, 0, 1, 2, ..., a peer out of pieces skipped.
  std::vector<int64_t> expected;
  for (bool any = true; any;) {
    any = false;
    for (int64_t p = 0; p < 3; ++p) {
      if (left[static_cast<size_t>(p)] > 0) expected.push_back(p), --left[static_cast<size_t>(p)], any = true;
    }
  }
  std::vector<int64_t> got;
  for (const DeviceCopy& c : pieces) got.push_back(peer_of(c));
  EXPECT_EQ(got, expected) << "rule: one piece per peer in turn, a peer out of pieces skipped";
  EXPECT_EQ(got[0], 0);
  EXPECT_EQ(got[1], 1);
  EXPECT_EQ(got[2], 2);
}

TEST(OrderDeviceCopies, EmptyCopiesAndTinyPiecesStayExact) {
  Order o("interleave");
  const std::vector<std::vector<DeviceCopy>> peers = {{{at(0), to(0, 8), 0, 64, 64, 64, true}},
                                                      {{at(8), to(1, 8), 3, 0, 16, 16, true}},
                                                      {{at(24), to(2, 8), 5, 40, 48, 40, true}}};
  std::vector<DeviceCopy> whole;
  for (const auto& p : peers) whole.insert(whole.end(), p.begin(), p.end());
  const auto pieces = order_device_copies(peers, 7);  // under 16: long rows are cut at 16 bytes
  EXPECT_EQ(bytes_of(pieces), bytes_of(whole)) << "rule: no rows, empty rows and tiny pieces lose or add no byte";
  for (const DeviceCopy& c : pieces) {
    if (c.row_bytes > 0 && peer_of(c) == 2) {
      const auto src_offset = (reinterpret_cast<int64_t>(c.src) - reinterpret_cast<int64_t>(at(24))) % 16;
      EXPECT_EQ(src_offset, 0) << "rule: slices start 16-byte steps from their row's start, keeping its alignment";
    }
  }
}

TEST(OrderDeviceCopies, NextAndIncreasingKeepCopiesWholeInPeerOrder) {
  for (const char* order : {"next", "increasing"}) {
    Order o(order);
    const auto copies = order_device_copies(three_peers(), 1024);
    ASSERT_EQ(copies.size(), 4U) << "rule: " << order << " leaves the copies whole";
    EXPECT_EQ(peer_of(copies[0]), 0);
    EXPECT_EQ(peer_of(copies[1]), 1);
    EXPECT_EQ(peer_of(copies[2]), 1);
    EXPECT_EQ(peer_of(copies[3]), 2) << "rule: the peers' lists one after another";
  }
}

TEST(KernelOrder, StartsAtTheNextRankUnlessIncreasing) {
  std::vector<gdap::exchange::Message> sends;
  for (int64_t peer : {0, 1, 3}) sends.push_back(gdap::exchange::Message{peer, 0, 0, 0, 0});
  {
    Order o(nullptr);
    const auto order = gdap::exchange::kernel_order(sends, 2, 4);
    ASSERT_EQ(order.size(), 3U);
    EXPECT_EQ(order[0]->peer, 3);
    EXPECT_EQ(order[1]->peer, 0);
    EXPECT_EQ(order[2]->peer, 1) << "rule: rank 2 of 4 starts at rank 3 and wraps round";
  }
  Order o("increasing");
  const auto order = gdap::exchange::kernel_order(sends, 2, 4);
  EXPECT_EQ(order[0]->peer, 0);
  EXPECT_EQ(order[2]->peer, 3) << "rule: increasing keeps the planner's order";
}

}  // namespace
