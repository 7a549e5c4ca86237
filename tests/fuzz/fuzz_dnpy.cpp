// libFuzzer target: arbitrary bytes as a .dnpy file, through the header parser (the .dnpy dict and
// the .npy header that follows it: a literal grammar without eval, bounded depth) and, for what it
// accepts, the writer of the same headers, whose output must parse again to the same description.
// Any crash, leak, sanitizer report or failed round trip is a bug; errors are the expected outcome
// for most inputs. In memory: no file is written.
#include "core/error.hpp"
#include "io/dnpy_format.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto file_size = static_cast<int64_t>(size);
  const std::span<const unsigned char> head(data, static_cast<size_t>(std::min(file_size, gdap::io::kMaxDnpyHeads)));
  gdap::io::DnpyHeader h;
  try {
    h = gdap::io::parse_dnpy(head, file_size, "fuzz.dnpy");
  } catch (const gdap::Error&) {
    return 0;
  }
  if (h.payload_bytes > (int64_t{1} << 20)) return 0;
  std::string again;
  try {
    again = gdap::io::dnpy_heads(h.version, h.dims, h.dtype, h.shape);
  } catch (const gdap::Error&) {
    return 0;  // a header too long for the format once rewritten (e.g. indices written as a list)
  }
  again.append(static_cast<size_t>(h.payload_bytes), '\0');
  const std::span<const unsigned char> bytes(reinterpret_cast<const unsigned char*>(again.data()), again.size());
  const gdap::io::DnpyHeader back = gdap::io::parse_dnpy(bytes, static_cast<int64_t>(again.size()), "rewritten.dnpy");
  if (back.shape != h.shape || back.dims.ndim() != h.dims.ndim() || back.payload_bytes != h.payload_bytes ||
      back.dtype.code != h.dtype.code || back.dtype.bits != h.dtype.bits) {
    std::abort();  // gdap wrote a file it reads differently
  }
  return 0;
}
