// The IPC handle's checks (see handle.hpp): everything an importer verifies from the bytes alone,
// before it maps or opens any memory, so that a truncated, foreign, stale-format or altered handle
// is refused with a message naming the field, and nothing is touched.
#include "ipc/handle.hpp"

#include "array/array.hpp"
#include "array/layout.hpp"
#include "core/error.hpp"
#include "protocol/dim.hpp"
#include "protocol/version.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gdap::ipc {

uint64_t checksum(const HandleData& h) {
  HandleData copy = h;
  copy.checksum = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(&copy);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < sizeof copy; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return std::string(name).substr(0, 63);
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id.substr(0, 47);
}

uint64_t process_start(int64_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return 0;
  // "pid (comm) state ppid ...": comm may hold spaces and ')', so count fields after the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return 0;
  }
  return std::strtoull(field.c_str(), nullptr, 10);
}

void check_exporter_alive(const HandleData& h, const char* memory) {
  const bool gone = kill(static_cast<pid_t>(h.exporter_pid), 0) != 0 && errno == ESRCH;
  if (gone || process_start(h.exporter_pid) != h.exporter_start) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the process that exported the IPC handle (pid {}) has exited{}: its {} is no "
         "longer its data", h.exporter_pid, gone ? "" : " (the pid now belongs to another process)", memory);
  }
}

namespace {

Span span_of(const int64_t* shape, const int64_t* strides, int64_t ndim, int64_t element_bytes) {
  Span s;
  for (int64_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) return {};
  }
  for (int64_t i = 0; i < ndim; ++i) {
    // The layout was checked when the array was made (or by parse): no product here overflows.
    const int64_t reach = (shape[i] - 1) * strides[i] * element_bytes;
    (reach < 0 ? s.low : s.high) += reach;
  }
  s.high += element_bytes;
  return s;
}

std::string field(const char* text, size_t capacity) { return std::string(text, strnlen(text, capacity)); }

void require_terminated(const char* text, size_t capacity, const char* name) {
  if (strnlen(text, capacity) == capacity) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle: field {} is not NUL-terminated within its {} bytes", name, capacity);
  }
}

void check_node(const HandleData& h) {
  const std::string host = field(h.hostname, sizeof h.hostname), boot = field(h.boot_id, sizeof h.boot_id);
  const std::string here_host = hostname(), here_boot = boot_id();
  if (host != here_host || boot != here_boot) {
    fail(GDAP_ERR_INVALID_ARGUMENT,
         "IPC handle comes from node '{}' (boot id '{}') but this process runs on '{}' (boot id '{}'): a section "
         "can only be shared between processes of one node (and one boot)",
         host, boot, here_host, here_boot);
  }
}

}  // namespace

gdap_dim dim_of(const DimRecord& r) {
  gdap_dim d = GDAP_DIM_INIT;
  for_each_field(r, d, [](const auto& from, auto& to) { to = from; });
  return d;
}

Span span(const gdap_array& array) {
  return span_of(array.section.shape.data(), array.section.strides.data(), array.ndim(),
                 element_size(array.section.dtype));
}

Span span(const HandleData& h) { return span_of(h.shape, h.strides, h.ndim, element_size(h.dtype)); }

HandleData parse(const void* bytes, int64_t size) {
  require(bytes, "handle");
  if (size != GDAP_IPC_HANDLE_SIZE) {
    fail(GDAP_ERR_INVALID_ARGUMENT,
         "IPC handle is {} bytes but a gdap IPC handle is exactly {} (GDAP_IPC_HANDLE_SIZE): truncated, padded or "
         "not a handle",
         size, GDAP_IPC_HANDLE_SIZE);
  }
  HandleData h;
  std::memcpy(&h, bytes, sizeof h);
  if (std::memcmp(h.magic, GDAP_IPC_MAGIC, 8) != 0) {
    std::string found;
    for (char c : h.magic) found += fmt::format("{:02x}", static_cast<unsigned char>(c));
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle does not start with the magic '{}' (found bytes {}): not a gdap "
         "IPC handle", GDAP_IPC_MAGIC, found);
  }
  if (h.format_version != GDAP_IPC_FORMAT_VERSION) {
    fail(GDAP_ERR_VERSION, "IPC handle format version {} is not the one this gdap reads ({}): export and open "
         "with the same gdap release", h.format_version, GDAP_IPC_FORMAT_VERSION);
  }
  if (h.handle_size != GDAP_IPC_HANDLE_SIZE) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle says it is {} bytes, expected {}", h.handle_size, GDAP_IPC_HANDLE_SIZE);
  }
  if (const uint64_t sum = checksum(h); sum != h.checksum) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle checksum {:#018x} does not match its bytes ({:#018x}): the handle "
         "was altered or corrupted on its way", h.checksum, sum);
  }
  require_terminated(h.hostname, sizeof h.hostname, "hostname");
  require_terminated(h.boot_id, sizeof h.boot_id, "boot_id");
  check_node(h);
  require_terminated(h.protocol_version, sizeof h.protocol_version, "protocol_version");
  check_protocol_version(h.protocol_version);
  if (h.kind != static_cast<uint32_t>(Kind::shm) && h.kind != static_cast<uint32_t>(Kind::cuda)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle: memory kind {} is neither 1 (shm) nor 2 (CUDA)", h.kind);
  }
  if (h.ndim < 0 || h.ndim > GDAP_IPC_MAX_NDIM) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle: ndim {} outside [0, {}] (GDAP_IPC_MAX_NDIM)", h.ndim,
         GDAP_IPC_MAX_NDIM);
  }
  const int64_t element_bytes = element_size(h.dtype);
  const std::vector<int64_t> shape(h.shape, h.shape + h.ndim), strides(h.strides, h.strides + h.ndim);
  check_layout(shape, strides, element_bytes, 0, "IPC handle section");
  std::vector<gdap_dim> dims(static_cast<size_t>(h.ndim));
  for (int32_t i = 0; i < h.ndim; ++i) {
    const DimRecord& r = h.dims[i];
    gdap_dim& d = dims[static_cast<size_t>(i)];
    d = dim_of(r);
    if (d.dist_type != GDAP_DIST_BLOCK && d.dist_type != GDAP_DIST_CYCLIC) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle: dimension {} has dist_type {}, but handles carry only 'b' and 'c'",
           i, d.dist_type);
    }
  }
  (void)dims_for_shape(dims.data(), h.ndim, shape);  // every per-process rule, against the shape
  if (h.readonly == 0) check_distinct_elements(shape, strides, "IPC handle: the writable section");
  const Span s = span(h);
  if (h.offset >= 0) check_aligned(static_cast<uint64_t>(h.offset), h.dtype, "IPC handle: offset");
  if (h.offset < 0 || h.allocation_bytes < 0 || s.low < -h.offset || s.high > h.allocation_bytes - h.offset) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "IPC handle: the section's bytes [{}, {}) around offset {} fall outside its "
         "{}-byte allocation", h.offset + s.low, h.offset + s.high, h.offset, h.allocation_bytes);
  }
  return h;
}

}  // namespace gdap::ipc
