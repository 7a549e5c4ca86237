// The bytes-to-bytes codecs of Zarr v3 that gdap reads and writes: "zstd" (c-zstd), "blosc"
// (c-blosc 1), "gzip" (zlib) and "crc32c". Decoding trusts nothing in the bytes: every output is
// bounded by a limit the caller gives (a chunk's declared size), checksums are verified, and
// blosc's header is validated against the bytes before anything is decompressed.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gdap::io {

struct BytesCodec {
  enum class Kind { zstd, blosc, gzip, crc32c };
  Kind kind = Kind::zstd;
  int level = 0;            // zstd (0: its default), gzip (0-9), blosc's clevel (0-9)
  bool checksum = false;    // zstd: the frame carries its content's checksum
  std::string cname;        // blosc: lz4, lz4hc, blosclz, zstd, zlib, snappy
  int shuffle = 0;          // blosc: 0 noshuffle, 1 shuffle, 2 bitshuffle
  int64_t typesize = 1;     // blosc
  int64_t blocksize = 0;    // blosc: 0 lets blosc choose
};

// The codec named `name` with its JSON `config`. GDAP_ERR_UNSUPPORTED for a name gdap does not read
// (or a library this build lacks), GDAP_ERR_IO for a bad configuration, both naming `file`.
BytesCodec bytes_codec(const std::string& name, const nlohmann::json& config, const std::string& file);

// The {"name": ..., "configuration": ...} object zarr-python writes for `codec`.
nlohmann::json codec_json(const BytesCodec& codec);

// Bytes owned here, reused from one chunk to the next and never initialised: whoever fills them
// writes every byte it hands out. Growing may move them (grow() keeps what is there).
class Buffer {
 public:
  // Room for `n` bytes; what was there is not kept when it has to move.
  char* resize(size_t n);
  // Room for `n` bytes, keeping the first size() of them.
  char* grow(size_t n);
  char* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  std::string_view view() const { return {bytes_.get(), size_}; }
  // True when `v` points into these bytes.
  bool holds(std::string_view v) const { return v.data() >= data() && v.data() < data() + capacity_; }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t size_ = 0, capacity_ = 0;
};

// Undoes `codec` on `in`: the bytes it encoded, at most `limit` of them, as a view into `out` (or,
// for crc32c, into `in`). GDAP_ERR_IO naming `what`, the chunk, when the data would decode to more,
// is corrupt, or its checksum does not match. `out` must not hold `in`.
std::string_view decode(const BytesCodec& codec, std::string_view in, int64_t limit, Buffer& out, const std::string& what);

// Applies `codec` to `in`, into `out` (which must not hold `in`); returns a view of the result.
std::string_view encode(const BytesCodec& codec, std::string_view in, Buffer& out, const std::string& what);

}  // namespace gdap::io
