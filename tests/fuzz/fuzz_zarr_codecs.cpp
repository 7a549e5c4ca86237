// libFuzzer target: arbitrary bytes as the framing of one of Zarr's bytes-to-bytes codecs. The
// first byte picks the codec (zstd, blosc, gzip, crc32c); the rest is decoded with a limit of
// 1 MiB, as a chunk of that size would be. Any crash, leak, sanitizer report or output past the
// limit is a bug; errors are the expected outcome for most inputs. In memory.
#include "core/error.hpp"
#include "io/zarr_codecs.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  constexpr int64_t kLimit = int64_t{1} << 20;
  gdap::io::BytesCodec codec;
  const gdap::io::BytesCodec::Kind kinds[] = {gdap::io::BytesCodec::Kind::zstd, gdap::io::BytesCodec::Kind::blosc,
                                              gdap::io::BytesCodec::Kind::gzip, gdap::io::BytesCodec::Kind::crc32c};
  codec.kind = kinds[data[0] % 4];
  try {
    gdap::io::Buffer buffer;
    const std::string_view out =
        gdap::io::decode(codec, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), kLimit, buffer, "fuzz");
    if (out.size() > static_cast<size_t>(kLimit)) std::abort();  // decoded past the limit
  } catch (const gdap::Error&) {
  }
  return 0;
}
