// The reduction buffer's layouts (reduce/reduce_buffer.hpp): which one a result distribution gets,
// and that what a source writes is where the result's owner reads. For every global element of
// a result, the buffer index a source rank writes it to (the sum of its source_terms) must be the
// owner's segment start plus the index the owner reads it from (the sum of its result_terms),
// inside the buffer, and no two elements may share an index. Ownership comes from the test's
// oracle (move_layouts.hpp), written from the protocol text, not from the library.
#include "move_layouts.hpp"

#include "maps/map.hpp"
#include "reduce/reduce_buffer.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

using gdap::reduce::BufferLayout;
using gdap::reduce::Owned;
using move_test::Layout;

// Every index of an axis, as a rank holding all of it would own them.
Owned whole_axis(int64_t size) {
  Owned o;
  if (size > 0) o.runs.push_back({0, size, 0});
  o.count = size;
  return o;
}

// The owner rank of a global index under `layout` (the oracle), or -1 if none or several.
int64_t owner_of(const Layout& layout, const std::vector<int64_t>& global) {
  int64_t owner = -1;
  for (int64_t r = 0; r < layout.nranks(); ++r) {
    bool owns = true;
    for (int64_t i = 0; i < layout.ndim() && owns; ++i) {
      const auto held = move_test::owned_globals(layout.dim(r, i));
      owns = std::find(held.begin(), held.end(), std::optional<int64_t>(global[static_cast<size_t>(i)])) != held.end();
    }
    if (owns && owner >= 0) return -1;
    if (owns) owner = r;
  }
  return owner;
}

// Checks the invariant of the file's comment for every element of a result of `shape`
// distributed as `layout`; returns the layout for the caller's own checks.
BufferLayout check_meeting(const Layout& layout, const std::vector<int64_t>& shape) {
  const move_test::MapHandle map(layout);
  const BufferLayout b = gdap::reduce::buffer_layout(map.map, shape);
  const size_t n = shape.size();
  std::vector<std::vector<int64_t>> written(n);  // per axis and global index, the source's term
  for (size_t j = 0; j < n; ++j) written[j] = gdap::reduce::expand(b.source_terms(j, whole_axis(shape[j])));
  // Per rank, per axis: global index -> the term the owner reads it with.
  std::vector<std::vector<std::map<int64_t, int64_t>>> read(static_cast<size_t>(layout.nranks()));
  for (int64_t r = 0; r < layout.nranks(); ++r) {
    for (size_t j = 0; j < n; ++j) {
      const Owned o = gdap::reduce::owned_along(*map.map, static_cast<int64_t>(j), r, false);
      const std::vector<int64_t> globals = o.each(true), terms = gdap::reduce::expand(b.result_terms(j, o));
      read[static_cast<size_t>(r)].emplace_back();
      for (size_t k = 0; k < globals.size(); ++k) read[static_cast<size_t>(r)][j][globals[k]] = terms[k];
    }
  }
  std::set<int64_t> used;
  move_test::for_each_index(shape, [&](const std::vector<int64_t>& g) {
    int64_t at = 0;
    for (size_t j = 0; j < n; ++j) at += written[j][static_cast<size_t>(g[j])];
    EXPECT_GE(at, 0);
    EXPECT_LT(at, b.elements);
    EXPECT_TRUE(used.insert(at).second) << "two elements share buffer index " << at;
    const int64_t owner = owner_of(layout, g);
    if (owner < 0) return;  // replicated: every holder reads the global index (checked below)
    int64_t from = 0;
    for (size_t j = 0; j < n; ++j) from += read[static_cast<size_t>(owner)][j].at(g[j]);
    EXPECT_EQ(at, owner * b.segment + from) << "element " << ::testing::PrintToString(g);
  });
  return b;
}

// 11 over 4 ranks in blocks (2, 3, 3, 3): segments of the largest extent, 3.
TEST(ReduceBuffer, BlockResultsGetOneSegmentPerRank) {
  Layout l;
  l.axes = {move_test::block(11, 4)};
  const BufferLayout b = check_meeting(l, {11});
  EXPECT_EQ(b.segment, 3);
  EXPECT_EQ(b.elements, 12);
  EXPECT_EQ(b.reduced_elements(), 3);
}

TEST(ReduceBuffer, CyclicBlockCyclicIrregularAndUnstructuredResultsAreSegmented) {
  for (const auto& [name, axis] : std::vector<std::pair<std::string, move_test::Axis>>{
           {"cyclic", move_test::cyclic(11, 4, 1)},
           {"block-cyclic", move_test::cyclic(11, 3, 2)},
           {"irregular with an empty section", move_test::irregular(11, {0, 5, 6})},
           {"unstructured, one owner each", move_test::shuffled(11, 3, 7, false)}}) {
    SCOPED_TRACE(name);
    Layout l;
    l.axes = {axis};
    EXPECT_GT(check_meeting(l, {11}).segment, 0);
  }
}

// A 2 x 2 grid: the segment of rank (r0, r1) is rank 2 r0 + r1's, C order over the grid.
TEST(ReduceBuffer, TwoDimensionalGridsNumberSegmentsInCOrder) {
  Layout l;
  l.axes = {move_test::block(7, 2), move_test::cyclic(5, 2, 1)};
  const BufferLayout b = check_meeting(l, {7, 5});
  EXPECT_EQ(b.segment, 4 * 3);
  Layout u;
  u.axes = {move_test::shuffled(6, 2, 3, false), move_test::cyclic(9, 3, 2), move_test::block(2, 1)};
  EXPECT_GT(check_meeting(u, {6, 9, 2}).segment, 0);
}

TEST(ReduceBuffer, ReplicasAndWideSlackTakeTheGlobalLayout) {
  Layout replicas;
  replicas.axes = {move_test::shuffled(11, 3, 5, true)};
  EXPECT_EQ(check_meeting(replicas, {11}).segment, 0);
  Layout one;  // one rank: its segment is the whole result, as on many ranks
  one.axes = {move_test::block(11, 1)};
  EXPECT_EQ(check_meeting(one, {11}).segment, 11);
  // Padding of 4 between two 4-element blocks: 2 segments of 8 for 8 elements.
  Layout padded;
  padded.axes = {move_test::padded(8, {4, 4}, 4, true)};
  EXPECT_EQ(check_meeting(padded, {8}).segment, 0);
  // Uneven blocks, 1 and 9 of 10: 2 segments of 9 reach 2 x 10 - 2.
  Layout uneven;
  uneven.axes = {move_test::irregular(10, {1, 9})};
  EXPECT_GT(check_meeting(uneven, {10}).segment, 0);
  Layout worse;
  worse.axes = {move_test::irregular(10, {0, 0, 10})};  // 3 segments of 10
  EXPECT_EQ(check_meeting(worse, {10}).segment, 0);
}

// A source that owns a part of an axis (cyclic blocks of 2 over 3) writes each index where a
// source owning the whole axis would.
TEST(ReduceBuffer, PartialSourcesWriteWhereWholeOnesDo) {
  Layout result, source;
  result.axes = {move_test::block(13, 4)};
  source.axes = {move_test::cyclic(13, 3, 2)};
  const move_test::MapHandle rmap(result), smap(source);
  const BufferLayout b = gdap::reduce::buffer_layout(rmap.map, {13});
  ASSERT_GT(b.segment, 0);
  const std::vector<int64_t> whole = gdap::reduce::expand(b.source_terms(0, whole_axis(13)));
  for (int64_t r = 0; r < 3; ++r) {
    const Owned o = gdap::reduce::owned_along(*smap.map, 0, r, false);
    const std::vector<int64_t> globals = o.each(true), terms = gdap::reduce::expand(b.source_terms(0, o));
    ASSERT_EQ(terms.size(), globals.size());
    for (size_t k = 0; k < globals.size(); ++k) EXPECT_EQ(terms[k], whole[static_cast<size_t>(globals[k])]);
  }
}

}  // namespace
