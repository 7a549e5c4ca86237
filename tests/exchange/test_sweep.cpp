// The sweep (exchange/copy.hpp's Sweep, sweep_of, run_sweep): copies from several sources into one
// destination, regrouped so that copies side by side along the destination's rows are run row by
// row, with non-temporal stores past kStreamAbove bytes. Whatever the grouping and the stores, the
// destination must end up byte for byte as running every copy on its own leaves it, with no byte
// outside the copies touched. Each case names the rule it checks.
#include "exchange/copy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using gdap::exchange::Copy2D;
using gdap::exchange::run_host_copies;
using gdap::exchange::run_sweep;
using gdap::exchange::SourcedCopy;
using gdap::exchange::Sweep;
using gdap::exchange::sweep_of;

constexpr int kSources = 3;
constexpr int64_t kTiles = 40;  // tiles side by side along a destination row
constexpr int64_t kDstPitch = 6400;

// Odd widths from 1 to 300 bytes, so that runs start and end anywhere in a cache line.
int64_t width(int64_t k) { return 1 + (k * 37) % 300; }
int64_t source_pitch(int s) { return 6151 + 13 * s; }  // odd: no source row starts aligned

// A destination of tiles: bands of `heights` rows, each cut into kTiles tiles of odd widths, every
// tile from one of three sources at an unaligned offset. Returns the copies in a shuffled order.
std::vector<SourcedCopy> tiles(const std::vector<int64_t>& heights, int64_t& rows) {
  std::vector<SourcedCopy> out;
  rows = 0;
  for (const int64_t h : heights) {
    int64_t col = 0;
    for (int64_t k = 0; k < kTiles; ++k) {
      const int s = static_cast<int>((k + rows) % kSources);
      const int64_t src = 3 + s + rows * source_pitch(s) + col;
      out.push_back({Copy2D{src, rows * kDstPitch + col, h, width(k), source_pitch(s), kDstPitch}, s});
      col += width(k);
    }
    EXPECT_LT(col, kDstPitch);
    rows += h;
  }
  std::shuffle(out.begin(), out.end(), std::mt19937(7));
  return out;
}

struct Buffers {
  std::vector<std::vector<char>> sources;
  std::vector<const char*> bases;
  explicit Buffers(int64_t rows) {
    for (int s = 0; s < kSources; ++s) {
      std::vector<char> b(static_cast<size_t>((rows + 1) * source_pitch(s)));
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(i * 31 + static_cast<size_t>(s) * 7 + 1);
      sources.push_back(std::move(b));
    }
    for (const auto& b : sources) bases.push_back(b.data());
  }
};

// What running every copy on its own writes: the reference the sweep must match.
std::vector<char> one_by_one(const std::vector<SourcedCopy>& copies, const Buffers& b, int64_t rows) {
  std::vector<char> dst(static_cast<size_t>(rows * kDstPitch), '\x5a');
  for (const SourcedCopy& c : copies) run_host_copies({&c.copy, 1}, b.bases[static_cast<size_t>(c.source)], dst.data());
  return dst;
}

// Runs the sweep of `copies`, with non-temporal stores or without, and compares it byte by byte.
void expect_as_one_by_one(const std::vector<SourcedCopy>& copies, int64_t rows, bool stream) {
  const Buffers b(rows);
  const std::vector<char> want = one_by_one(copies, b, rows);
  std::vector<char> got(want.size(), '\x5a');
  Sweep sweep = sweep_of(copies);
  EXPECT_FALSE(sweep.stream) << "a sweep of a few KiB is not streamed";
  sweep.stream = stream;
  run_sweep(sweep, b.bases, got.data());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << "byte " << i << " (row " << i / kDstPitch << ", column " << i % kDstPitch << ")";
  }
  // The padding past each row's tiles is untouched (the reference left it so too).
  EXPECT_EQ(got[kDstPitch - 1], '\x5a');
}

TEST(Sweep, WritesEveryByteAsCopyingOneByOneDoes_OddWidthsUnalignedStarts) {
  int64_t rows = 0;
  const std::vector<SourcedCopy> copies = tiles({1, 5, 8, 2, 10, 1}, rows);
  expect_as_one_by_one(copies, rows, false);
}

TEST(Sweep, StreamedStoresWriteEveryByteAsCopyingOneByOneDoes_OddWidthsUnalignedStarts) {
  int64_t rows = 0;
  const std::vector<SourcedCopy> copies = tiles({1, 5, 8, 2, 10, 1}, rows);
  expect_as_one_by_one(copies, rows, true);
}

TEST(Sweep, StreamsOnlyPastKStreamAboveBytes) {
  const int64_t rows = gdap::exchange::kStreamAbove / 4096;
  EXPECT_FALSE(sweep_of({{Copy2D{0, 0, rows, 4096, 4096, 4096}, 0}}).stream) << "exactly kStreamAbove bytes";
  EXPECT_TRUE(sweep_of({{Copy2D{0, 0, rows, 4096, 4096, 4096}, 0}, {Copy2D{0, rows * 4096, 1, 1, 1, 1}, 1}}).stream);
}

TEST(Sweep, TilesSideBySideOfOneHeightAreOneBand_SingleRowsAreBandsOfTheirOwn) {
  int64_t rows = 0;
  const Sweep sweep = sweep_of(tiles({1, 5, 8, 1}, rows));
  // Two bands of several rows (all kTiles tiles beside each other), and every single-row copy alone.
  ASSERT_EQ(sweep.band_ends.size(), static_cast<size_t>(2 + 2 * kTiles));
  size_t first = 0, swept = 0;
  for (const size_t end : sweep.band_ends) {
    if (end - first > 1) {
      EXPECT_EQ(end - first, static_cast<size_t>(kTiles));
      ++swept;
    }
    for (size_t i = first + 1; i < end; ++i) {
      EXPECT_LT(sweep.copies[i - 1].copy.dst, sweep.copies[i].copy.dst) << "a band runs in destination order";
    }
    first = end;
  }
  EXPECT_EQ(swept, 2u);
}

TEST(Sweep, CopiesOfOtherHeightsOrPitchesOrRowsAreNotBandedTogether) {
  const std::vector<SourcedCopy> copies = {
      {Copy2D{0, 0, 4, 16, 64, 256}, 0},         // rows 0-3
      {Copy2D{0, 16, 6, 16, 64, 256}, 1},        // beside it, 6 rows: another band
      {Copy2D{0, 32, 6, 16, 64, 512}, 2},        // beside that, another pitch: another band
      {Copy2D{0, 4 * 256, 4, 16, 64, 256}, 0},   // below the first, same shape: another band
      {Copy2D{0, 4 * 256 + 16, 4, 16, 64, 256}, 1},  // beside it: the same band as it
  };
  const Sweep sweep = sweep_of(copies);
  EXPECT_EQ(sweep.band_ends, (std::vector<size_t>{1, 2, 3, 5}));
}

TEST(Sweep, EmptyCopiesAreDropped) {
  const Sweep sweep = sweep_of({{Copy2D{0, 0, 0, 16, 16, 16}, 0}, {Copy2D{0, 64, 2, 0, 16, 16}, 1}, {Copy2D{0, 128, 1, 8, 8, 8}, 0}});
  ASSERT_EQ(sweep.copies.size(), 1u);
  EXPECT_EQ(sweep.copies[0].copy.dst, 128);
}

}  // namespace
