// libFuzzer target: arbitrary bytes as a Zarr v3 store: the first two bytes (little endian) give
// the length of zarr.json, which follows (NUL bytes included: a NUL and garbage after the document
// must be refused, not ignored); the rest is the file of chunk (0, ..., 0). Through the metadata
// reader (every codec chain: transpose, bytes, sharding_indexed, zstd, blosc, gzip, crc32c),
// gdap_zarr_shape_read and the chunk decoder, or for a shard read in parts its index and first inner
// chunks. Any crash, leak or sanitizer report is a bug; errors are the expected outcome for most
// inputs. The store lives in a private temporary folder.
#include "core/error.hpp"
#include "io/zarr_chunks.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

const std::string& store() {
  static const std::string path = [] {
    std::string p = (std::filesystem::temp_directory_path() / ("gdap_fuzz_zarr_" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(p);
    return p;
  }();
  return path;
}

void put(const std::string& file, const char* data, size_t size) {
  std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(data, static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const auto* bytes = reinterpret_cast<const char*>(data) + 2;
  const size_t rest = size - 2;
  const size_t meta_size = std::min<size_t>(rest, static_cast<size_t>(data[0]) | static_cast<size_t>(data[1]) << 8);
  const std::string& path = store();
  put(path + "/zarr.json", bytes, meta_size);
  int64_t ndim = 0, shape[8] = {};
  gdap_dtype dtype{};
  gdap_zarr_shape_read(shape, &ndim, &dtype, path.c_str(), 8);
  try {
    const gdap::io::ZarrMeta meta = gdap::io::read_meta(path);
    int64_t unit = meta.itemsize;
    for (int64_t e : meta.unit) unit *= e;
    if (unit > (int64_t{1} << 20)) return 0;  // a real store's chunk, not a fuzzing one
    const std::vector<int64_t> origin(meta.shape.size(), 0);
    const std::string chunk = gdap::io::chunk_path(path, meta, origin);
    std::filesystem::remove_all(path + "/c");
    if (meta_size < rest) put(chunk, bytes + meta_size, rest - meta_size);
    gdap::io::Scratch scratch;
    if (!meta.partial_shards()) {
      if (meta.chunk_bytes <= (int64_t{1} << 20)) gdap::io::read_chunk(chunk, meta, scratch);
      return 0;
    }
    const gdap::io::ShardReader shard(chunk, meta);
    std::vector<int64_t> within(meta.shape.size(), 0);
    for (int k = 0; k < 4; ++k) {  // the first inner chunks along the last dimension
      if (!within.empty()) within.back() = k;
      if (within.empty() ? k > 0 : k >= meta.chunk.back() / meta.unit.back()) break;
      (void)shard.inner(within, scratch);
    }
  } catch (const gdap::Error&) {
  }
  return 0;
}
