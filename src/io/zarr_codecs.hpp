// The bytes-to-bytes codecs of Zarr v3 that gdap reads and writes: "zstd" (c-zstd), "blosc"
// (c-blosc 1), "gzip" (zlib) and "crc32c". Decoding trusts nothing in the bytes: every output is
// bounded by a limit the caller gives (a chunk's declared size), checksums are verified, and
// blosc's header is validated against the bytes before anything is decompressed.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
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

// Bytes that are either a view of someone else's or owned here (decoding crc32c only cuts 4 off).
class Bytes {
 public:
  Bytes() = default;
  explicit Bytes(std::string owned) : owned_(std::move(owned)), view_(owned_) {}
  static Bytes view(std::string_view v) {
    Bytes b;
    b.view_ = v;
    return b;
  }
  Bytes(Bytes&& other) noexcept { *this = std::move(other); }
  Bytes& operator=(Bytes&& other) noexcept;
  std::string_view get() const { return view_; }
  // Keeps only the first `n` bytes.
  void cut(size_t n) { view_ = view_.substr(0, n); }

 private:
  std::string owned_;
  std::string_view view_;
};

// Undoes `codec` on `in`: the bytes it encoded, at most `limit` of them (GDAP_ERR_IO naming `what`,
// the chunk, when the data would decode to more, is corrupt, or its checksum does not match).
Bytes decode(const BytesCodec& codec, Bytes in, int64_t limit, const std::string& what);

// Applies `codec` to `in`.
std::string encode(const BytesCodec& codec, std::string_view in, const std::string& what);

}  // namespace gdap::io
