// Copies: an exchange program's blocks turned into strided 2-d byte copies between two memories,
// the one form every engine runs (memcpy loops on the host, one batched kernel on a GPU). A Copy2D
// is `rows` rows of `row_bytes`, row r at src + r * src_pitch and dst + r * dst_pitch.
//
// A block of N dimensions becomes one Copy2D per index of its outer dimensions after merging:
// dimensions whose extent is 1 vanish, neighbours that are contiguous on both sides fuse, and the
// innermost contiguous dimension becomes the row. So a block that is contiguous on both sides is
// a single row, whatever its rank.
#pragma once

#include "cuda/copy_kernel.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace gdap::exchange {

struct Copy2D {
  int64_t src, dst;  // byte offsets of row 0 from each side's base (may be negative)
  int64_t rows, row_bytes, src_pitch, dst_pitch;
};

// Copies for an N-d box of `extent` elements of `element_size` bytes from element offsets
// `src` / `dst` with element strides `src_strides` / `dst_strides`; appended to `out`.
void box_copies(std::span<const int64_t> extent, int64_t src, std::span<const int64_t> src_strides, int64_t dst,
                std::span<const int64_t> dst_strides, int64_t element_size, std::vector<Copy2D>& out);

// Appends `c` to `out`, folded into the last copy when it continues it (one longer row, or one
// more row at the same pitches): how a message's consecutive blocks stay one copy.
void append_merged(std::vector<Copy2D>& out, const Copy2D& c);

// True if the copies are one row: the message is contiguous on both sides.
inline bool single_run(const std::vector<Copy2D>& copies) { return copies.size() == 1 && copies[0].rows == 1; }

// The bytes of `copies` whose packed offsets (the source side's if `packed_source`, else the
// destination side's; the packed side of a copy is dense, pitch >= row_bytes) lie in [lo, hi),
// appended to `out`: the rows wholly inside stay one copy, and a row cut by an end becomes a copy of
// its own. How a message too big for one NCCL round is cut into pieces (nccl_staging.cpp).
void clip_packed(std::span<const Copy2D> copies, bool packed_source, int64_t lo, int64_t hi, std::vector<Copy2D>& out);

// Appends `copies` to `out` as device copies between absolute addresses: their offsets counted from
// `src` and `dst`, `remote` when either side is another GPU's memory.
void append_device_copies(std::vector<cuda::DeviceCopy>& out, std::span<const Copy2D> copies, const char* src, char* dst,
                          bool remote = false);

// How a copy kernel orders the messages of several peers (GDAP_PEER_ORDER, read at each call):
// `interleave` (the default) deals the peers' copies out in pieces of about a MiB, one peer's piece
// after another's, so that every rank writes to all its peers at once; `next` moves one peer's
// copies after another's, starting at the next rank (from_next_peer), so that the ranks write a
// permutation of each other; `increasing` keeps the planner's increasing peer order (what the
// in-process group did before 2026-11-27). On 4 x H100 interleaving took rows -> columns from
// 0.80-0.83 ms to 0.61-0.65 ms (docs/PERFORMANCE.md); the others stay for measuring beside it.
// Throws GDAP_ERR_INVALID_ARGUMENT for any other value. The persistent halo's direct writes
// (bound_writes.cpp) keep next-rank-first: small faces, not measured with interleaving.
enum class PeerOrder { interleave, next, increasing };
PeerOrder peer_order();

// The device copies of each peer's messages (`per_peer`, in the order peer_order() walks the
// peers) as one list in that order: concatenated, or for `interleave` cut into pieces of about
// `piece` bytes (whole rows, or slices of one long row at multiples of 16 bytes, so that no piece
// loses its alignment) and dealt round-robin.
std::vector<cuda::DeviceCopy> order_device_copies(std::vector<std::vector<cuda::DeviceCopy>> per_peer,
                                                  int64_t piece = int64_t{1} << 20);

// Runs copies on host-accessible memory.
void run_host_copies(std::span<const Copy2D> copies, const char* src, char* dst);

// A copy from one of several sources: `source` indexes the bases run_sweep is given.
struct SourcedCopy {
  Copy2D copy;
  int source = 0;
};

// Copies from several sources into one destination, in the order that writes the destination row
// after row. A receiver's messages tile its section: where peers' blocks lie side by side along a
// destination row (block-cyclic layouts), copying one block after another walks down a column of
// short runs, each on another page of both sides, which the hardware prefetchers do not follow.
// A sweep instead takes row r of every copy beside it before row r + 1, so the destination is
// written sequentially and each source is read in order. The copies are sorted by destination
// offset; a band is a run of them with the same rows (more than one), the same destination pitch,
// and their first rows within one pitch of the band's first copy: it is swept row by row. Any
// other copy is a band of its own, run as run_host_copies runs it. Correct in any order because
// the copies' destination bytes are disjoint and no source overlaps the destination.
//
// A sweep that writes more than kStreamAbove bytes in all (`stream`) writes its bands' rows with
// non-temporal stores where the CPU has them (x86 SSE2): its destination cannot stay in the caches
// anyway, and plain stores would first read every destination line (read for ownership), a third
// more memory traffic than the copy itself.
struct Sweep {
  std::vector<SourcedCopy> copies;
  std::vector<size_t> band_ends;  // band k is copies [band_ends[k - 1] (0 for k = 0), band_ends[k])
  bool stream = false;
};
constexpr int64_t kStreamAbove = int64_t{16} << 20;
// `along` the source instead, the copies are sorted and banded by their source offsets and pitches:
// a gather from one strided source (a sender packing its messages) then reads the source row after
// row, each band's rows landing in as many dense pieces of the destination.
enum class SweepAlong { destination, source };
Sweep sweep_of(std::vector<SourcedCopy> copies, SweepAlong along = SweepAlong::destination);

// Runs `sweep`, source i's offsets counted from sources[i] and every destination offset from `dst`.
void run_sweep(const Sweep& sweep, std::span<const char* const> sources, char* dst);

}  // namespace gdap::exchange
