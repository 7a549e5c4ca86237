// An exchange program: what one rank of a collective move sends to each peer, receives from each
// peer and copies within itself. Every planner compiles to it (redistribution: plan/, halo
// exchange: halo/) and every engine runs it (engine.hpp), so that what moves and how it moves are
// written once each.
//
// Model. A message is a list of block sets; a block set is the Cartesian product of one list of
// segments per dimension (a segment: `length` consecutive indices at `src_local` in the sender's
// section and at `dst_local` in the receiver's). A set's blocks come in C order over the product
// (the last dimension's segment fastest), each block's elements in C order, and a packed message is
// its blocks one after another, compact; both ends enumerate the same sets in the same order, so a
// packed message needs no metadata. A redistribution message is one set (the per-dimension
// overlaps of its two ranks); a halo message is one set per box, of one segment per dimension.
// Only the sets' segments say where elements sit, so one program serves any sections of the
// planned local shapes, whatever their strides.
//
// Wire. MPI and NCCL send a message as one or more wire messages: a block set of kOwnMessageBytes
// or more alone, each run of smaller sets between them together. Both ends cut a message alike (the
// cut reads only the sets' sizes, which both ends share), so a set that is one run in the section
// (a slab's face) goes from and into the section without packing, even when the same peer gets
// smaller sets too. A message of one set (any redistribution's) is its own single wire message.
#pragma once

#include "exchange/copy.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <vector>

namespace gdap::exchange {

// `length` indices, the first of them global index global_start (the others need not follow it
// globally), sit at [src_local, src_local + length) of the sender's section and at
// [dst_local, dst_local + length) of the receiver's (local indices count from the section's first
// element, padding included).
struct Segment {
  int64_t global_start;
  int64_t length;
  int64_t src_local;
  int64_t dst_local;
  bool operator==(const Segment&) const = default;
};

// Which messages of a rank: to other ranks, from other ranks, or its own copies (at most one).
enum class Part : int { send = 0, recv = 1, local = 2 };

struct Message {
  int64_t peer = 0;      // the receiver (send, local) or the sender (recv)
  int64_t elements = 0;  // elements moved
  int64_t offset = 0;    // elements before it in the rank's packed buffer of its part
  size_t first = 0;      // its block sets: the program's sets [first, first + sets)
  size_t sets = 0;
};

// One N-d block, as for_each_block hands it out; the spans (ndim each) live for the callback only.
struct Block {
  std::span<const int64_t> global;     // first global index
  std::span<const int64_t> src_local;  // first local index in the sender's section
  std::span<const int64_t> dst_local;  // first local index in the receiver's section
  std::span<const int64_t> extent;     // elements along each dimension, >= 1
  int64_t offset;                      // elements before it in its set's packed order
  int64_t elements;                    // product of extent
};

// Calls f(const Block&) for each block of the product of `lists` (one segment list per
// dimension, none empty), in packed order.
template <typename F>
void for_each_block(std::span<const std::span<const Segment>> lists, F&& f);

// One end of a copy: the sending section (the blocks' src_local), the receiving section
// (dst_local), or the packed buffer of the message's part.
struct End {
  enum Kind { sender, receiver, packed } kind;
  std::span<const int64_t> strides;  // sections: element strides
};

// How the engines treat a program's messages, as its planner chose.
struct Style {
  const char* name = "exchange";  // what it moves ("redistribution"): in errors, and the engines' cache key
  int tag = 0;                    // MPI tag of its messages
  int64_t typed_run = 0;          // MPI: a wire message whose runs average this many bytes or more (and
                                  // that fits one MPI count) goes as a derived datatype over the
                                  // section rather than through a staging buffer; 0: never
  bool direct_writes = false;     // NCCL on one host may write straight into the peers' receiving
                                  // sections (not where runs are a few bytes: each would cross
                                  // the link alone)
  bool broadcast = false;         // every send message carries the same bytes, the rank's local copy
                                  // packed (at offset 0): a broadcast from the rank that has one
  bool cma_default = false;       // MPI on one node: the ranks read each other's memory unless
                                  // GDAP_MPI_EXCHANGE says otherwise (mpi_cma.hpp); measured faster
                                  // than point-to-point for redistributions, not for halo exchanges,
                                  // whose neighbour messages beat cma's meetings of every rank
};

constexpr int64_t kOwnMessageBytes = int64_t{1} << 16;  // a block set this large is a wire message of its own

class Program {
 public:
  Program() = default;
  Program(int64_t rank, int64_t nranks, int64_t ndim, int64_t element_size, Style style);

  // Building (planners). add_message starts a message of `part` to or from `peer` (sends and
  // receives in increasing peer order, never to this rank; at most one local message); add_set
  // appends a block set to it: `lists` holds ndim segment lists (borrowed: the segments must live
  // as long as the program; keep() holds their owner) whose product has `elements` elements.
  // finish() places the messages in their packed buffers and cuts them for the wire.
  void add_message(Part part, int64_t peer);
  void add_set(std::span<const std::span<const Segment>> lists, int64_t elements);
  void keep(std::shared_ptr<const void> owner) { keep_.push_back(std::move(owner)); }
  void finish();

  int64_t rank() const { return rank_; }
  int64_t nranks() const { return nranks_; }
  int64_t ndim() const { return ndim_; }
  int64_t element_size() const { return element_size_; }
  const Style& style() const { return style_; }
  // Unique per program made in this process: a cache key that never recurs.
  uint64_t serial() const { return serial_; }

  std::span<const Message> messages(Part part) const { return messages_[index(part)]; }
  // The messages as MPI and NCCL send them (see "Wire" above), in the same order.
  std::span<const Message> wire(Part part) const { return wire_[index(part)]; }
  // Bytes of a part's packed buffer.
  int64_t bytes(Part part) const { return bytes_[index(part)]; }

  // The segment lists of block set `k` (ndim of them).
  std::span<const std::span<const Segment>> set(size_t k) const {
    return {lists_.data() + k * static_cast<size_t>(ndim_), static_cast<size_t>(ndim_)};
  }
  // Copies that move message `m` (of messages() or wire()) from `from` to `to`, appended to
  // `out`; copies that continue one another (consecutive blocks) are merged.
  void copies(const Message& m, const End& from, const End& to, std::vector<Copy2D>& out) const;
  // The copies of every message of a part, between two sections.
  std::vector<Copy2D> part_copies(Part part, const End& from, const End& to) const;

 private:
  static size_t index(Part part) { return static_cast<size_t>(part); }
  void cut(Part part);

  int64_t rank_ = 0, nranks_ = 0, ndim_ = 0, element_size_ = 1;
  Style style_;
  uint64_t serial_ = 0;
  std::array<std::vector<Message>, 3> messages_, wire_;
  std::array<int64_t, 3> bytes_{};
  std::vector<std::span<const Segment>> lists_;  // ndim per block set
  std::vector<int64_t> set_elements_;
  std::vector<std::shared_ptr<const void>> keep_;
  Message* building_ = nullptr;  // the message add_set appends to (until finish)
};

template <typename F>
void for_each_block(std::span<const std::span<const Segment>> lists, F&& f) {
  const size_t n = lists.size();
  std::vector<size_t> pos(n, 0);
  std::vector<int64_t> fields(4 * n);  // global, src_local, dst_local, extent
  std::span<int64_t> global(fields.data(), n), src(fields.data() + n, n), dst(fields.data() + 2 * n, n),
      extent(fields.data() + 3 * n, n);
  auto load = [&](size_t i) {
    const Segment& s = lists[i][pos[i]];
    global[i] = s.global_start;
    src[i] = s.src_local;
    dst[i] = s.dst_local;
    extent[i] = s.length;
  };
  for (size_t i = 0; i < n; ++i) load(i);
  int64_t offset = 0;
  for (;;) {
    int64_t elements = 1;
    for (size_t i = 0; i < n; ++i) elements *= extent[i];  // <= the set's elements, which were checked
    f(Block{global, src, dst, extent, offset, elements});
    offset += elements;
    size_t i = n;
    while (i > 0 && pos[i - 1] + 1 == lists[i - 1].size()) {
      pos[i - 1] = 0;
      load(i - 1);
      --i;
    }
    if (i == 0) return;
    ++pos[i - 1];
    load(i - 1);
  }
}

// Rank `me`'s messages (anything with a `peer`) in the order its copy kernel moves them: to or from
// me + 1 first, then me + 2, ... (mod `ranks`). A kernel walks its copies in order, so every rank
// starting at the same peer would crowd that peer's links while the others idle (on 4 GPUs in
// increasing peer order, three ranks first all write into rank 0).
template <typename Messages>
auto from_next_peer(const Messages& messages, int64_t me, int64_t ranks) {
  std::vector<const std::ranges::range_value_t<Messages>*> out;
  for (const auto& m : messages) out.push_back(&m);
  std::stable_sort(out.begin(), out.end(), [&](const auto* a, const auto* b) {
    return (a->peer - me + ranks) % ranks < (b->peer - me + ranks) % ranks;
  });
  return out;
}

// The order a copy kernel moves a rank's messages in: from_next_peer, or increasing peer order
// under GDAP_PEER_ORDER=increasing (copy.hpp's PeerOrder).
inline std::vector<const Message*> kernel_order(std::span<const Message> messages, int64_t me, int64_t ranks) {
  std::vector<const Message*> order = from_next_peer(messages, me, ranks);
  if (peer_order() == PeerOrder::increasing) std::ranges::sort(order, {}, &Message::peer);
  return order;
}

}  // namespace gdap::exchange
