// A Zarr v3 array's metadata (zarr.json) and its chunk files, as gdap reads and writes them: the
// regular chunk grid, the "bytes" and "zstd" codecs, and the "default" and "v2" chunk keys. Any
// other codec or grid is refused by name, never guessed at.
#pragma once

#include "io/files.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gdap::io {

struct ZarrMeta {
  std::vector<int64_t> shape;
  std::vector<int64_t> chunk;  // chunk_shape, each >= 1
  gdap_dtype dtype{};
  std::string data_type;       // the Zarr name ("float32", ...)
  int64_t itemsize = 0;
  bool big_endian = false;     // the "bytes" codec's endian
  bool zstd = false;
  int zstd_level = 0;
  bool v2_keys = false;        // chunk_key_encoding "v2"
  char separator = '/';
  std::vector<unsigned char> fill;  // one element, host byte order
  int64_t chunk_bytes = 0;          // product of chunk * itemsize (checked)
};

// The largest chunk gdap reads or writes, decoded: a declared chunk is allocated whole when its file
// is decoded, so a store cannot make a small read allocate more than this.
inline constexpr int64_t kMaxChunkBytes = int64_t{1} << 31;  // 2 GiB
// The largest zarr.json gdap reads.
inline constexpr int64_t kMaxMetaBytes = int64_t{1} << 24;  // 16 MiB

// The Zarr name of a dtype, or nullptr if Zarr v3 has none gdap writes.
const char* zarr_type_name(gdap_dtype dtype);

// Reads and checks `<path>/zarr.json`. GDAP_ERR_IO (absent, unreadable, malformed: the key and
// what was wrong), GDAP_ERR_UNSUPPORTED (a codec, grid, dtype or key encoding gdap does not read).
ZarrMeta read_meta(const std::string& path);

// The metadata gdap writes for an array of `shape` and `dtype` in chunks of `chunk`.
ZarrMeta make_meta(const std::vector<int64_t>& shape, const std::vector<int64_t>& chunk, gdap_dtype dtype,
                   const gdap_zarr_options& options);
std::string meta_json(const ZarrMeta& meta);

// The key of chunk `index` (one per dimension) inside a store, as its path components ("c", "1",
// "3" for c/1/3), and the file it names inside the store at `path`.
std::vector<std::string> chunk_key(const ZarrMeta& meta, const std::vector<int64_t>& index);
std::string chunk_path(const std::string& path, const ZarrMeta& meta, const std::vector<int64_t>& index);

// A chunk's bytes in C order and host byte order (meta.chunk_bytes long), or nothing when its file
// is absent (the chunk is all fill value). GDAP_ERR_IO for an unreadable or corrupt file, or a
// directory, FIFO or device where the file should be.
std::optional<std::vector<unsigned char>> read_chunk(const std::string& file, const ZarrMeta& meta);

// Encodes and writes a chunk (meta.chunk_bytes in host byte order) under `key` in the store `store`
// through a temporary file renamed into place, creating the key's folders (never through a link).
void write_chunk(const Dir& store, const std::vector<std::string>& key, const ZarrMeta& meta,
                 const std::vector<unsigned char>& bytes);

}  // namespace gdap::io
