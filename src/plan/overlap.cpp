// One-dimensional overlaps by a merge sweep (see overlap.hpp): walk one coordinate's runs in
// global order, ask the other side which coordinates own each run's pieces, then group the pieces
// by peer coordinate (stable, so each group stays in global order) and merge neighbours that
// continue one another in both local buffers.
#include "plan/overlap.hpp"

#include "core/error.hpp"

#include <algorithm>

namespace gdap::plan {
namespace {

struct Tagged {
  int64_t peer;
  Segment segment;
};

// Groups pieces by peer, merges each group into maximal segments and marks whole peers.
// `src_extent(peer)` / `dst_extent(peer)` give the buffer extents on either side of a pair.
template <typename SrcExtent, typename DstExtent>
AxisOverlap group(std::vector<Tagged>& pieces, SrcExtent&& src_extent, DstExtent&& dst_extent) {
  std::stable_sort(pieces.begin(), pieces.end(), [](const Tagged& a, const Tagged& b) { return a.peer < b.peer; });
  AxisOverlap out;
  out.segments.reserve(pieces.size());
  for (const Tagged& t : pieces) {
    const Segment& s = t.segment;
    if (!out.peers.empty() && out.peers.back().coord == t.peer) {
      AxisPeer& peer = out.peers.back();
      Segment& last = out.segments.back();
      peer.elements += s.length;
      // Local continuity is all a copy needs: segments that are one run on both sides merge even
      // where the global index jumps (block-cyclic to the same block-cyclic: one run, not one per block).
      if (last.src_local + last.length == s.src_local && last.dst_local + last.length == s.dst_local) {
        last.length += s.length;
      } else {
        out.segments.push_back(s);
        ++peer.count;
      }
      continue;
    }
    out.peers.push_back({t.peer, static_cast<int64_t>(out.segments.size()), 1, s.length, false});
    out.segments.push_back(s);
  }
  for (AxisPeer& peer : out.peers) {
    const Segment& s = out.segments[static_cast<size_t>(peer.first)];
    peer.whole = peer.count == 1 && s.src_local == 0 && s.dst_local == 0 && s.length == src_extent(peer.coord) &&
                 s.length == dst_extent(peer.coord);
  }
  return out;
}

}  // namespace

AxisOverlap send_overlap(const AxisSide& src, const AxisSide& dst, int64_t src_coord) {
  std::vector<Tagged> pieces;
  src.for_each_run(src_coord, [&](int64_t g, int64_t len, int64_t local) {
    dst.for_each_piece(g, g + len, [&](int64_t pg, int64_t plen, int64_t coord, int64_t plocal) {
      pieces.push_back({coord, {pg, plen, local + (pg - g), plocal}});
    });
  });
  return group(
      pieces, [&](int64_t) { return src.extent(src_coord); }, [&](int64_t peer) { return dst.extent(peer); });
}

AxisOverlap recv_overlap(const AxisSide& src, const AxisSide& dst, int64_t dst_coord) {
  std::vector<Tagged> pieces;
  int64_t received = 0;
  dst.for_each_run(dst_coord, [&](int64_t g, int64_t len, int64_t local) {
    src.for_each_piece(g, g + len, [&](int64_t pg, int64_t plen, int64_t coord, int64_t plocal) {
      pieces.push_back({coord, {pg, plen, plocal, local + (pg - g)}});
      received += plen;
    });
  });
  // The planner checked that the source holds every destination index; this is its proof.
  if (received != dst.owned(dst_coord)) {
    fail(GDAP_ERR_INTERNAL, "destination grid coordinate {} receives {} of the {} indices it owns", dst_coord,
         received, dst.owned(dst_coord));
  }
  return group(
      pieces, [&](int64_t peer) { return src.extent(peer); }, [&](int64_t) { return dst.extent(dst_coord); });
}

}  // namespace gdap::plan
