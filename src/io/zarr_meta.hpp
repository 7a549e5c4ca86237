// A Zarr v3 array's metadata (zarr.json) as gdap reads and writes it: the regular chunk grid, the
// "default" and "v2" chunk keys, fill values, and the codec chain: "transpose", then "bytes" (either
// endian) or "sharding_indexed" (inner chunks with their own chain, an index with "bytes" and
// optionally "crc32c", at the start or the end), then any of "zstd", "blosc", "gzip", "crc32c".
// Anything else is refused by name, never guessed at. Sizes from the file are hostile until checked.
#pragma once

#include "io/zarr_codecs.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gdap::io {

// The largest piece gdap decodes whole (a chunk, or an inner chunk of a shard read in parts): a
// store cannot make a small read allocate more than this.
inline constexpr int64_t kMaxChunkBytes = int64_t{1} << 31;  // 2 GiB
// The largest zarr.json gdap reads.
inline constexpr int64_t kMaxMetaBytes = int64_t{1} << 24;  // 16 MiB
// The largest inner chunk gdap writes in a shard unless the caller says otherwise.
inline constexpr int64_t kDefaultInnerBytes = int64_t{1} << 21;  // 2 MiB
// Shards inside shards deeper than this are refused.
inline constexpr int kMaxShardNesting = 4;

struct Sharding;

// One codec list: of the array, of a shard's inner chunks, or of a shard's index.
struct Chain {
  std::vector<int64_t> order;                 // "transpose": encoded dimension i is decoded order[i]; empty: none
  bool big_endian = false;                    // "bytes"
  std::shared_ptr<const Sharding> sharding;   // "sharding_indexed" in place of "bytes"
  std::vector<BytesCodec> codecs;             // bytes to bytes, in encoding order
};

struct Sharding {
  std::vector<int64_t> inner;  // the inner chunks' shape; it divides the shard's
  Chain codecs;                // the inner chunks' chain
  Chain index;                 // the index's: "bytes", then optionally "crc32c"
  bool index_at_start = false;
};

struct ZarrMeta {
  std::vector<int64_t> shape;
  std::vector<int64_t> chunk;  // chunk_shape (a shard's shape when sharded), each >= 1
  gdap_dtype dtype{};
  std::string data_type;       // the Zarr name ("float32", ...)
  int64_t itemsize = 0;
  bool v2_keys = false;        // chunk_key_encoding "v2"
  char separator = '/';
  std::vector<unsigned char> fill;  // one element, host byte order
  int64_t chunk_bytes = 0;          // product of chunk * itemsize (checked)
  Chain codecs;
  std::vector<int64_t> unit;        // what one read decodes: a shard's inner chunk when it is read in parts, else the chunk

  // A shard is read in parts (its index, then only the inner chunks needed) when nothing but
  // sharding_indexed encodes it.
  bool partial_shards() const { return codecs.sharding && codecs.order.empty() && codecs.codecs.empty(); }
};

// The Zarr name of a dtype, or nullptr if Zarr v3 has none gdap writes.
const char* zarr_type_name(gdap_dtype dtype);

// Reads and checks `<path>/zarr.json`. GDAP_ERR_IO (absent, unreadable, malformed: the key and
// what was wrong), GDAP_ERR_UNSUPPORTED (a codec, grid, dtype or key encoding gdap does not read,
// or a piece decoded whole larger than kMaxChunkBytes).
ZarrMeta read_meta(const std::string& path);

// What gdap writes: the codec (and its level and blosc's shuffle) the caller picked, `options` as
// they take effect (zarr.cpp's effective_options: no level 0), and either chunks of `chunk` or,
// with `inner` not empty, shards of `chunk` holding inner chunks of `inner`.
ZarrMeta make_meta(const std::vector<int64_t>& shape, const std::vector<int64_t>& chunk, const std::vector<int64_t>& inner,
                   gdap_dtype dtype, const gdap_zarr_options& options);
std::string meta_json(const ZarrMeta& meta);

// The key of chunk `index` (one per dimension) inside a store, as its path components ("c", "1",
// "3" for c/1/3), and the file it names inside the store at `path`.
std::vector<std::string> chunk_key(const ZarrMeta& meta, const std::vector<int64_t>& index);
std::string chunk_path(const std::string& path, const ZarrMeta& meta, const std::vector<int64_t>& index);

// Whether `relative` (a '/'-separated path inside a store) is the key of one of meta's chunks, or
// with `folder` a folder on the way to one ("c", "c/1" of a 3-d store's "c/1/3"): what an
// overwrite may remove. Indices are canonical decimals inside the chunk grid.
bool in_key_space(const ZarrMeta& meta, const std::string& relative, bool folder);

}  // namespace gdap::io
