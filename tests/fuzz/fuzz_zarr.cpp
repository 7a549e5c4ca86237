// libFuzzer target: arbitrary bytes as a Zarr v3 store, split at the first NUL into zarr.json and
// the file of chunk (0, ..., 0), through the metadata reader, gdap_zarr_shape and the chunk
// decoder (raw or zstd, either endian). Any crash, leak or sanitizer report is a bug; errors are
// the expected outcome for most inputs. The store lives in a private temporary folder.
#include "core/error.hpp"
#include "io/zarr_store.hpp"

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
  const auto* bytes = reinterpret_cast<const char*>(data);
  size_t cut = 0;
  while (cut < size && bytes[cut] != '\0') ++cut;
  const std::string& path = store();
  put(path + "/zarr.json", bytes, cut);
  int64_t ndim = 0, shape[8] = {};
  gdap_dtype dtype{};
  gdap_zarr_shape(path.c_str(), &ndim, shape, 8, &dtype);
  try {
    const gdap::io::ZarrMeta meta = gdap::io::read_meta(path);
    if (meta.chunk_bytes > (int64_t{1} << 20)) return 0;  // a real store's chunk, not a fuzzing one
    const std::vector<int64_t> origin(meta.shape.size(), 0);
    const std::string chunk = gdap::io::chunk_path(path, meta, origin);
    std::filesystem::remove_all(path + "/c");
    if (cut < size) put(chunk, bytes + cut + 1, size - cut - 1);
    gdap::io::read_chunk(chunk, meta);
  } catch (const gdap::Error&) {
  }
  return 0;
}
