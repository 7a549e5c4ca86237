// Zarr v3's bytes-to-bytes codecs (see zarr_codecs.hpp). Each decoder sizes its output from the
// data only after checking it against the caller's limit: zstd by its frames' declared content
// size (or, when a frame does not declare it, by streaming into a buffer that may not pass the
// limit), blosc by its validated header, gzip by streaming; so a small hostile chunk cannot make
// gdap allocate more than the chunk it claims to be.
#include "io/zarr_codecs.hpp"

#include "core/error.hpp"
#include "io/crc32c.hpp"

#include <fmt/format.h>
#ifdef GDAP_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef GDAP_HAVE_BLOSC
#include <blosc.h>
#endif
#ifdef GDAP_HAVE_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

namespace gdap::io {
namespace {

using json = nlohmann::json;

[[noreturn]] void corrupt(const std::string& what, const std::string& why) { fail(GDAP_ERR_IO, "{}: {}", what, why); }

int int_in(const json& config, const char* key, int low, int high, int fallback, const std::string& file,
           const char* codec) {
  if (!config.is_object() || !config.contains(key)) return fallback;
  const json& v = config.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > high) {
    fail(GDAP_ERR_IO, "{}: {} codec: \"{}\" {} is not an integer in {}..{}", file, codec, key, v.dump(), low, high);
  }
  return static_cast<int>(v.get<int64_t>());
}

constexpr std::array<const char*, 3> kShuffles = {"noshuffle", "shuffle", "bitshuffle"};

// Room for decoders that do not say their size: `out` doubled (keeping what it holds), never past
// `limit` bytes.
size_t grow_within(Buffer& out, size_t used, int64_t limit, const char* codec, const std::string& what) {
  if (static_cast<int64_t>(used) >= limit) {
    corrupt(what, fmt::format("{} data decodes to more than the {} bytes the chunk can hold", codec, limit));
  }
  const size_t room = static_cast<size_t>(std::min<int64_t>(limit, std::max<int64_t>(4096, static_cast<int64_t>(used) * 2)));
  out.grow(room);
  return room;
}

#ifdef GDAP_HAVE_ZSTD
// The content sizes the frames in `in` declare, summed (capped past `limit`); UNKNOWN when a frame
// does not declare its own, ERROR for bytes that are no zstd frames.
unsigned long long declared_size(std::string_view in, int64_t limit) {
  if (in.empty()) return ZSTD_CONTENTSIZE_ERROR;
  unsigned long long total = 0;
  for (size_t at = 0; at < in.size();) {
    const unsigned long long n = ZSTD_getFrameContentSize(in.data() + at, in.size() - at);
    if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN) return n;
    const size_t frame = ZSTD_findFrameCompressedSize(in.data() + at, in.size() - at);
    if (ZSTD_isError(frame)) return ZSTD_CONTENTSIZE_ERROR;
    total = std::min(total + std::min<unsigned long long>(n, static_cast<unsigned long long>(limit) + 1),
                     static_cast<unsigned long long>(limit) + 1);
    at += frame;
  }
  return total;
}

std::string_view zstd_decode(std::string_view in, int64_t limit, Buffer& out, const std::string& what) {
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) fail(GDAP_ERR_NO_MEMORY, "{}: zstd: no memory for a decompression context", what);
  const unsigned long long declared = declared_size(in, limit);
  if (declared == ZSTD_CONTENTSIZE_ERROR) corrupt(what, "not a zstd frame (or a truncated one)");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN) {
    if (declared > static_cast<unsigned long long>(limit)) {
      corrupt(what, fmt::format("zstd frames hold more than the {} bytes the chunk can hold", limit));
    }
    char* dst = out.resize(static_cast<size_t>(declared));
    const size_t got = ZSTD_decompressDCtx(ctx.get(), dst, out.size(), in.data(), in.size());
    if (ZSTD_isError(got)) corrupt(what, fmt::format("zstd: {}", ZSTD_getErrorName(got)));
    if (got != out.size()) corrupt(what, fmt::format("zstd gave {} bytes, its frames declared {}", got, declared));
    return out.view();
  }
  // Frames without their size (streaming writers): decode in steps, never past the limit.
  ZSTD_DCtx_reset(ctx.get(), ZSTD_reset_session_only);
  ZSTD_inBuffer src{in.data(), in.size(), 0};
  size_t used = 0, room = 0, left = 1;
  out.resize(0);
  while (src.pos < src.size || left != 0) {
    if (used == room) room = grow_within(out, used, limit, "zstd", what);
    ZSTD_outBuffer dst{out.data(), room, used};
    left = ZSTD_decompressStream(ctx.get(), &dst, &src);
    if (ZSTD_isError(left)) corrupt(what, fmt::format("zstd: {}", ZSTD_getErrorName(left)));
    used = dst.pos;
    if (src.pos == src.size && left != 0 && dst.pos < dst.size) corrupt(what, "zstd: the frame is truncated");
  }
  return {out.data(), used};
}

std::string_view zstd_encode(const BytesCodec& c, std::string_view in, Buffer& out, const std::string& what) {
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!ctx) fail(GDAP_ERR_NO_MEMORY, "{}: zstd: no memory for a compression context", what);
  ZSTD_CCtx_reset(ctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, c.level);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, c.checksum ? 1 : 0);
  char* dst = out.resize(ZSTD_compressBound(in.size()));
  const size_t n = ZSTD_compress2(ctx.get(), dst, out.size(), in.data(), in.size());
  if (ZSTD_isError(n)) fail(GDAP_ERR_IO, "{}: zstd: {}", what, ZSTD_getErrorName(n));
  return {dst, n};
}
#endif

#ifdef GDAP_HAVE_BLOSC
std::string_view blosc_decode(std::string_view in, int64_t limit, Buffer& out, const std::string& what) {
  size_t nbytes = 0;
  // The header's sizes against the bytes there are, before blosc reads past it.
  if (blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0) corrupt(what, "not a valid blosc buffer (header or sizes)");
  if (nbytes > static_cast<size_t>(limit)) {
    corrupt(what, fmt::format("blosc buffer holds {} bytes, more than the {} bytes the chunk can hold", nbytes, limit));
  }
  char* dst = out.resize(nbytes);
  if (nbytes == 0) return out.view();
  const int got = blosc_decompress_ctx(in.data(), dst, nbytes, 1);
  if (got <= 0 || static_cast<size_t>(got) != nbytes) corrupt(what, fmt::format("blosc: corrupt data (code {})", got));
  return out.view();
}

std::string_view blosc_encode(const BytesCodec& c, std::string_view in, Buffer& out, const std::string& what) {
  if (in.size() > static_cast<size_t>(BLOSC_MAX_BUFFERSIZE)) {
    fail(GDAP_ERR_UNSUPPORTED, "{}: a chunk of {} bytes is more than blosc's {}", what, in.size(), BLOSC_MAX_BUFFERSIZE);
  }
  char* dst = out.resize(in.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(c.level, c.shuffle, static_cast<size_t>(c.typesize), in.size(), in.data(), dst,
                                   out.size(), c.cname.c_str(), static_cast<size_t>(c.blocksize), 1);
  if (n <= 0) fail(GDAP_ERR_IO, "{}: blosc ({}) could not compress the chunk (code {})", what, c.cname, n);
  return {dst, static_cast<size_t>(n)};
}
#endif

#ifdef GDAP_HAVE_ZLIB
std::string_view gzip_decode(std::string_view in, int64_t limit, Buffer& out, const std::string& what) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) fail(GDAP_ERR_NO_MEMORY, "{}: gzip: no memory to inflate", what);
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, inflateEnd);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  size_t used = 0, room = 0, consumed = 0;
  out.resize(0);
  for (;;) {
    if (used == room) room = grow_within(out, used, limit, "gzip", what);
    z.avail_in = static_cast<uInt>(std::min<size_t>(in.size() - consumed, 1u << 30));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(std::min<size_t>(room - used, 1u << 30));
    const uInt before_in = z.avail_in, before_out = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    consumed += before_in - z.avail_in;
    used += before_out - z.avail_out;
    if (rc == Z_STREAM_END) {
      if (consumed == in.size()) break;
      if (inflateReset(&z) != Z_OK) corrupt(what, "gzip: cannot read the next member");  // another gzip member follows
      continue;
    }
    if (rc == Z_BUF_ERROR && consumed == in.size() && used < room) corrupt(what, "gzip: the stream is truncated");
    if (rc != Z_OK && rc != Z_BUF_ERROR) corrupt(what, fmt::format("gzip: {}", z.msg != nullptr ? z.msg : "corrupt data"));
  }
  return {out.data(), used};
}

std::string_view gzip_encode(const BytesCodec& c, std::string_view in, Buffer& out, const std::string& what) {
  z_stream z{};
  if (deflateInit2(&z, c.level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    fail(GDAP_ERR_NO_MEMORY, "{}: gzip: no memory to deflate", what);
  }
  const std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, deflateEnd);
  char* dst = out.resize(deflateBound(&z, static_cast<uLong>(in.size())) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(dst);
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) fail(GDAP_ERR_IO, "{}: gzip could not compress the chunk", what);
  return {dst, z.total_out};
}
#endif

std::string_view crc32c_decode(std::string_view b, const std::string& what) {
  if (b.size() < 4) corrupt(what, fmt::format("{} bytes, too short for the crc32c codec's 4-byte checksum", b.size()));
  const size_t n = b.size() - 4;
  uint32_t stored = 0;
  for (size_t i = 0; i < 4; ++i) stored |= static_cast<uint32_t>(static_cast<unsigned char>(b[n + i])) << (8 * i);
  const uint32_t actual = crc32c(b.data(), n);
  if (stored != actual) {
    corrupt(what, fmt::format("crc32c checksum {:#010x} does not match the bytes ({:#010x}): the chunk is corrupt", stored, actual));
  }
  return b.substr(0, n);
}

[[noreturn]] void not_built(const char* library, const std::string& where) {
  fail(GDAP_ERR_UNSUPPORTED, "{}: the {} codec needs a gdap built with {}", where, library, library);
}

}  // namespace

char* Buffer::resize(size_t n) {
  if (n > capacity_) {
    bytes_.reset(new char[n]);  // uninitialised: whoever fills it writes every byte handed out
    capacity_ = n;
  }
  size_ = n;
  return bytes_.get();
}

char* Buffer::grow(size_t n) {
  if (n > capacity_) {
    std::unique_ptr<char[]> bigger(new char[n]);
    if (size_ > 0) std::memcpy(bigger.get(), bytes_.get(), size_);
    bytes_ = std::move(bigger);
    capacity_ = n;
  }
  size_ = n;
  return bytes_.get();
}

BytesCodec bytes_codec(const std::string& name, const json& config, const std::string& file) {
  BytesCodec c;
  if (name == "zstd") {
#ifndef GDAP_HAVE_ZSTD
    not_built("zstd", file);
#endif
    c.kind = BytesCodec::Kind::zstd;
    c.level = int_in(config, "level", -131072, 22, 0, file, "zstd");
    if (config.is_object() && config.contains("checksum")) {
      if (!config.at("checksum").is_boolean()) fail(GDAP_ERR_IO, "{}: zstd codec: \"checksum\" is not true or false", file);
      c.checksum = config.at("checksum").get<bool>();
    }
  } else if (name == "gzip") {
#ifndef GDAP_HAVE_ZLIB
    not_built("zlib", file);
#endif
    c.kind = BytesCodec::Kind::gzip;
    c.level = int_in(config, "level", 0, 9, 6, file, "gzip");
  } else if (name == "crc32c") {
    c.kind = BytesCodec::Kind::crc32c;
  } else if (name == "blosc") {
#ifndef GDAP_HAVE_BLOSC
    not_built("blosc", file);
#endif
    c.kind = BytesCodec::Kind::blosc;
    c.level = int_in(config, "clevel", 0, 9, 5, file, "blosc");
    c.typesize = int_in(config, "typesize", 1, 255, 1, file, "blosc");
    c.blocksize = int_in(config, "blocksize", 0, 1 << 30, 0, file, "blosc");
    c.cname = config.is_object() && config.contains("cname") && config.at("cname").is_string() ? config.at("cname").get<std::string>() : "lz4";
    const std::string shuffle = config.is_object() && config.contains("shuffle") && config.at("shuffle").is_string()
                                    ? config.at("shuffle").get<std::string>() : "noshuffle";
    const auto* found = std::find_if(kShuffles.begin(), kShuffles.end(), [&](const char* s) { return shuffle == s; });
    if (found == kShuffles.end()) fail(GDAP_ERR_IO, "{}: blosc codec: shuffle \"{}\" is not noshuffle, shuffle or bitshuffle", file, shuffle);
    c.shuffle = static_cast<int>(found - kShuffles.begin());
#ifdef GDAP_HAVE_BLOSC
    if (blosc_compname_to_compcode(c.cname.c_str()) < 0) {
      fail(GDAP_ERR_UNSUPPORTED, "{}: blosc compressor \"{}\" is not one this blosc library has ({})", file, c.cname,
           blosc_list_compressors());
    }
#endif
  } else {
    fail(GDAP_ERR_UNSUPPORTED, "{}: codec \"{}\" is not one gdap reads", file, name);
  }
  return c;
}

json codec_json(const BytesCodec& c) {
  switch (c.kind) {
    case BytesCodec::Kind::zstd: return {{"name", "zstd"}, {"configuration", {{"level", c.level}, {"checksum", c.checksum}}}};
    case BytesCodec::Kind::gzip: return {{"name", "gzip"}, {"configuration", {{"level", c.level}}}};
    case BytesCodec::Kind::crc32c: return {{"name", "crc32c"}};
    default:
      return {{"name", "blosc"},
              {"configuration", {{"typesize", c.typesize}, {"cname", c.cname}, {"clevel", c.level},
                                 {"shuffle", kShuffles[static_cast<size_t>(c.shuffle)]}, {"blocksize", c.blocksize}}}};
  }
}

std::string_view decode(const BytesCodec& codec, std::string_view in, int64_t limit, Buffer& out, const std::string& what) {
  switch (codec.kind) {
    case BytesCodec::Kind::crc32c: return crc32c_decode(in, what);
#ifdef GDAP_HAVE_ZSTD
    case BytesCodec::Kind::zstd: return zstd_decode(in, limit, out, what);
#endif
#ifdef GDAP_HAVE_BLOSC
    case BytesCodec::Kind::blosc: return blosc_decode(in, limit, out, what);
#endif
#ifdef GDAP_HAVE_ZLIB
    case BytesCodec::Kind::gzip: return gzip_decode(in, limit, out, what);
#endif
    default: not_built("compression", what);
  }
}

std::string_view encode(const BytesCodec& codec, std::string_view in, Buffer& out, const std::string& what) {
  switch (codec.kind) {
    case BytesCodec::Kind::crc32c: {
      char* dst = out.resize(in.size() + 4);
      std::memcpy(dst, in.data(), in.size());
      const uint32_t sum = crc32c(in.data(), in.size());
      for (size_t i = 0; i < 4; ++i) dst[in.size() + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
      return out.view();
    }
#ifdef GDAP_HAVE_ZSTD
    case BytesCodec::Kind::zstd: return zstd_encode(codec, in, out, what);
#endif
#ifdef GDAP_HAVE_BLOSC
    case BytesCodec::Kind::blosc: return blosc_encode(codec, in, out, what);
#endif
#ifdef GDAP_HAVE_ZLIB
    case BytesCodec::Kind::gzip: return gzip_encode(codec, in, out, what);
#endif
    default: not_built("compression", what);
  }
}

}  // namespace gdap::io
