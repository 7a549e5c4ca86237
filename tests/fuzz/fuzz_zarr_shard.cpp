// libFuzzer target: arbitrary bytes as one shard file of a sharded Zarr v3 array (uint16, shards of
// 4 x 4 elements, inner chunks of 2 x 2 encoded as "bytes" then "zstd"). The first byte picks the
// index's place (start or end) and whether it carries a crc32c; the rest is the file. Through the
// shard reader: the index checked against the file's size and its checksum, then every inner
// chunk. Any crash, leak or sanitizer report is a bug; errors are the expected outcome. The shard
// lives in a private temporary folder.
#include "core/error.hpp"
#include "io/zarr_chunks.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

gdap::io::ZarrMeta meta(bool at_start, bool crc) {
  gdap::io::ZarrMeta m;
  m.shape = {8, 8};
  m.chunk = {4, 4};
  m.unit = {2, 2};
  m.dtype = {GDAP_DTYPE_UINT, 16, 1};
  m.data_type = "uint16";
  m.itemsize = 2;
  m.fill = {0, 0};
  m.chunk_bytes = 32;
  auto s = std::make_shared<gdap::io::Sharding>();
  s->inner = {2, 2};
  gdap::io::BytesCodec zstd;
  s->codecs.codecs.push_back(zstd);
  if (crc) {
    gdap::io::BytesCodec c;
    c.kind = gdap::io::BytesCodec::Kind::crc32c;
    s->index.codecs.push_back(c);
  }
  s->index_at_start = at_start;
  m.codecs.sharding = s;
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const std::string file =
      (std::filesystem::temp_directory_path() / ("gdap_fuzz_shard_" + std::to_string(getpid()))).string();
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data) + 1,
                                                                static_cast<std::streamsize>(size - 1));
  const gdap::io::ZarrMeta m = meta((data[0] & 1) != 0, (data[0] & 2) != 0);
  try {
    const gdap::io::ShardReader shard(file, m);
    gdap::io::Scratch scratch;
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) (void)shard.inner({i, j}, scratch);
    }
  } catch (const gdap::Error&) {
  }
  return 0;
}
