// Where a section lives (see memory.hpp).
#include "array/memory.hpp"

#include "array/array.hpp"
#include "array/shared_segment.hpp"
#include "core/error.hpp"

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

// Where a section's bytes lie in a gdap shared-memory segment; nullopt when in none (or empty).
std::optional<SegmentPlace> segment_place(const gdap_array& a) {
  const ByteSpan span = byte_span(a);
  if (span.empty()) return std::nullopt;
  return place_in_segment(span.first, span.last);
}

// Refuses two sections in the same bytes of one segment seen through two of this process's
// mappings of it (gdap_ipc_open of its own export): one memory at two addresses, which comparing
// addresses cannot see. The segment's identity and byte offsets are compared, as ranks in different
// processes compare them (comm/collective.hpp's segments_clash).
void check_segments_apart(const gdap_array& written, const char* written_name, const gdap_array& read,
                          const char* read_name, const char* call) {
  const std::optional<SegmentPlace> w = segment_place(written);
  if (!w) return;
  const std::optional<SegmentPlace> r = segment_place(read);
  if (!r || w->identity.device != r->identity.device || w->identity.inode != r->identity.inode) return;
  if (w->last < r->first || r->last < w->first) return;
  fail(GDAP_ERR_INVALID_ARGUMENT, "{} (bytes {}..{} of shared-memory segment '{}') and {} (bytes {}..{} of it, through "
       "another mapping of it in this process) overlap: {} works out of place, reading {} while it writes {}; pass "
       "separate arrays", written_name, w->first, w->last, w->identity.name, read_name, r->first, r->last, call,
       read_name, written_name);
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
