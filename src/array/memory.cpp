// Where a section lives (see memory.hpp).
#include "array/memory.hpp"

#include "array/array.hpp"
#include "array/shared_segment.hpp"
#include "core/error.hpp"
#include "core/footprint.hpp"

#include <optional>

namespace gdap {

Memory memory_of(const gdap_array* array) {
  if (array == nullptr) return Memory::none;
  switch (array->section.device.type) {
    case GDAP_DEVICE_CPU:
    case GDAP_DEVICE_CUDA_HOST:
    case GDAP_DEVICE_CUDA_MANAGED:
      return Memory::host;
    case GDAP_DEVICE_CUDA:
      return Memory::device;
    default:
      return Memory::none;
  }
}

const char* memory_name(Memory memory) {
  switch (memory) {
    case Memory::host: return "host";
    case Memory::device: return "device";
    case Memory::none: break;
  }
  return "unsupported";
}

namespace {

// A section's place in a gdap shared-memory segment: the segment, its exact footprint rebased to
// the segment's byte offsets, and the address at which this process's mapping holds the segment's
// byte 0 (which mapping reaches it). nullopt when in none (or empty).
struct SegmentFootprint {
  SegmentPlace place;
  Footprint bytes;
  uint64_t mapping = 0;
};

std::optional<SegmentFootprint> segment_footprint(const gdap_array& a) {
  Footprint bytes = footprint_of(a);
  const ByteSpan span = span_of(bytes);
  if (span.empty()) return std::nullopt;
  const std::optional<SegmentPlace> place = place_in_segment(span.first, span.last);
  if (!place) return std::nullopt;
  const uint64_t mapping = span.first - place->first;
  bytes.base -= mapping;
  return SegmentFootprint{*place, std::move(bytes), mapping};
}

// Refuses two sections sharing a byte of one segment seen through two of this process's mappings
// of it (gdap_ipc_open of its own export): one memory at two addresses, which comparing addresses
// cannot see. Through one mapping, may_share_memory decides on the addresses. The footprints are
// compared at the segment's offsets, byte for byte, so interleaved views (even and odd columns)
// pass, as ranks in different processes compare them (comm/collective.hpp's segments_clash).
void check_segments_apart(const gdap_array& written, const char* written_name, const gdap_array& read,
                          const char* read_name, const char* call) {
  const std::optional<SegmentFootprint> w = segment_footprint(written);
  if (!w) return;
  const std::optional<SegmentFootprint> r = segment_footprint(read);
  if (!r || w->mapping == r->mapping) return;
  if (w->place.identity.device != r->place.identity.device || w->place.identity.inode != r->place.identity.inode) return;
  if (!may_share_bytes(w->bytes, r->bytes)) return;
  fail(GDAP_ERR_INVALID_ARGUMENT, "{} (bytes {}..{} of shared-memory segment '{}') and {} (bytes {}..{} of it, through "
       "another mapping of it in this process) share a byte: {} works out of place, reading {} while it writes {}; "
       "pass separate arrays", written_name, w->place.first, w->place.last, w->place.identity.name, read_name,
       r->place.first, r->place.last, call, read_name, written_name);
}

}  // namespace

void check_apart(const gdap_array& written, const char* written_name, const gdap_array& read, const char* read_name,
                 const char* call) {
  check_segments_apart(written, written_name, read, read_name, call);
  if (!may_share_memory(written, read)) return;
  fail(GDAP_ERR_INVALID_ARGUMENT, "{} shares memory with {} (their bytes overlap): {} works out of place, reading {} "
       "while it writes {}; pass separate arrays", written_name, read_name, call, read_name, written_name);
}

}  // namespace gdap
