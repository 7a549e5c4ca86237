// The .dnpy file (DistArray's per-rank save format, version 1.0) as bytes: its header (a Python
// literal dict with '__version__' and 'dim_data') and the .npy file that follows it. The parser is
// strict and bounded (no eval: a small grammar of dicts, tuples, lists, strings, integers, True,
// False and None, nesting at most kMaxDepth), and every error names the file, the byte offset and
// the key or value that was wrong.
#pragma once

#include "protocol/dim_data.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gdap::io {

// DistArray writes "\x93DARRY" (six bytes: its format.py), then the major and minor bytes.
inline constexpr char kDnpyMagic[] = "\x93" "DARRY";
inline constexpr int64_t kDnpyMagicLen = 6;
// The .npy header of format 2.0 and 3.0 has a 4-byte length; gdap reads at most this many bytes of it.
inline constexpr int64_t kMaxNpyHeader = int64_t{1} << 20;
inline constexpr int kMaxDepth = 16;
// Bytes of a file that can hold both headers: what a reader must have in memory to parse them.
inline constexpr int64_t kMaxDnpyHeads = kDnpyMagicLen + 4 + 65535 + 12 + kMaxNpyHeader;

// The parsed headers of one .dnpy file.
struct DnpyHeader {
  std::string version;  // the protocol version string, checked
  DimData dims;         // validated against the payload's shape
  gdap_dtype dtype{};
  std::vector<int64_t> shape;  // the .npy shape (equal to the local extents of dims)
  bool fortran_order = false;
  int64_t payload_offset = 0;  // bytes from the start of the file to the first element
  int64_t payload_bytes = 0;   // product(shape) * itemsize
};

// Parses the headers of a .dnpy file whose first bytes are `head` (all of the file, or at least
// its first kMaxDnpyHeads bytes) and whose total length is `file_size`; checks that the payload is
// exactly as long as the shape says. Throws GDAP_ERR_IO naming `name`, the offset and the key for
// a malformed file; GDAP_ERR_UNSUPPORTED for a dtype or byte order gdap does not read;
// GDAP_ERR_PROTOCOL / GDAP_ERR_VERSION for dim_data or a version the protocol refuses.
DnpyHeader parse_dnpy(std::span<const unsigned char> head, int64_t file_size, const std::string& name);

// The .dnpy header (magic, version 1.0, length, dict padded to 16) and the .npy header (format 1.0,
// or 2.0 when its dict is longer than 65535 bytes) of a C-ordered section of `shape` and `dtype`.
// GDAP_ERR_INVALID_ARGUMENT when the dict is longer than the format's 65535 bytes (many unstructured
// indices), GDAP_ERR_UNSUPPORTED for a dtype NumPy has no code for (bfloat16, lanes > 1).
std::string dnpy_heads(const std::string& version, const DimData& dims, gdap_dtype dtype,
                       const std::vector<int64_t>& shape);

}  // namespace gdap::io
