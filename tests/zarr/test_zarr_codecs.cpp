// The bytes-to-bytes codecs of Zarr v3 (io/zarr_codecs.hpp) and CRC-32C, one rule per case: each
// codec gives back what it encoded; decoding never passes the caller's limit (a small frame that
// would inflate past the chunk is an error, whatever the codec says it holds); checksums catch a
// flipped bit; framing that is no codec's is an error naming the chunk, never a crash.
#include "io/crc32c.hpp"
#include "io/zarr_codecs.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using gdap::io::Buffer;
using gdap::io::BytesCodec;

BytesCodec codec(BytesCodec::Kind kind, const char* cname = "lz4", int shuffle = 1) {
  BytesCodec c;
  c.kind = kind;
  c.cname = cname;
  c.shuffle = shuffle;
  c.typesize = 8;
  c.level = kind == BytesCodec::Kind::gzip ? 6 : kind == BytesCodec::Kind::blosc ? 5 : 3;
  return c;
}

std::string sample(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7) % 251);
  return s;
}

// Expects decoding `in` with `limit` to fail with GDAP_ERR_IO and `words` in the message.
void expect_refused(const BytesCodec& c, const std::string& in, int64_t limit, const std::string& words, const char* rule) {
  Buffer out;
  const gdap_status s = gdap::guard([&] { (void)gdap::io::decode(c, in, limit, out, "chunk c/0/1"); });
  EXPECT_EQ(s, GDAP_ERR_IO) << rule << ": " << gdap_last_error();
  const std::string message = gdap_last_error();
  EXPECT_NE(message.find("chunk c/0/1"), std::string::npos) << rule << ": the chunk is not named: " << message;
  EXPECT_NE(message.find(words), std::string::npos) << rule << ": '" << words << "' not in: " << message;
}

TEST(ZarrCodecs, Crc32cIsCastagnoli) {
  EXPECT_EQ(gdap::io::crc32c("123456789", 9), 0xE3069283u) << "rule: the check value of CRC-32C";
  EXPECT_EQ(gdap::io::crc32c("", 0), 0u);
  const std::string big = sample(100003);  // lengths not a multiple of 8 take the byte loop too
  EXPECT_NE(gdap::io::crc32c(big.data(), big.size()), gdap::io::crc32c(big.data(), big.size() - 1));
}

TEST(ZarrCodecs, EachCodecGivesBackWhatItEncoded) {
  const std::string data = sample(1 << 16);
  const BytesCodec codecs[] = {codec(BytesCodec::Kind::zstd), codec(BytesCodec::Kind::gzip), codec(BytesCodec::Kind::crc32c),
                               codec(BytesCodec::Kind::blosc, "lz4", 1), codec(BytesCodec::Kind::blosc, "zstd", 2),
                               codec(BytesCodec::Kind::blosc, "zlib", 0), codec(BytesCodec::Kind::blosc, "blosclz", 1)};
  Buffer a, b;
  for (const BytesCodec& c : codecs) {
    const std::string_view encoded = gdap::io::encode(c, data, a, "test");
    const std::string_view back = gdap::io::decode(c, encoded, static_cast<int64_t>(data.size()), b, "test");
    EXPECT_EQ(back, data) << "rule: decode(encode(x)) == x for " << gdap::io::codec_json(c).dump();
  }
}

TEST(ZarrCodecs, DecodingNeverPassesTheLimit) {
  const std::string zeros(1 << 20, '\0');  // compresses to a few hundred bytes
  for (BytesCodec::Kind kind : {BytesCodec::Kind::zstd, BytesCodec::Kind::gzip, BytesCodec::Kind::blosc}) {
    const BytesCodec c = codec(kind);
    Buffer out;
    const std::string bomb(gdap::io::encode(c, zeros, out, "test"));
    EXPECT_LT(bomb.size(), 20000u);
    expect_refused(c, bomb, 4096, "the 4096 bytes the chunk can hold", "a small frame that inflates past the chunk is refused");
  }
}

TEST(ZarrCodecs, ChecksumsCatchAFlippedBit) {
  const std::string data = sample(1000);
  Buffer out;
  std::string framed(gdap::io::encode(codec(BytesCodec::Kind::crc32c), data, out, "test"));
  framed[17] = static_cast<char>(framed[17] ^ 4);
  expect_refused(codec(BytesCodec::Kind::crc32c), framed, 1000, "crc32c checksum", "crc32c catches a flipped bit");
  BytesCodec zstd = codec(BytesCodec::Kind::zstd);
  zstd.checksum = true;
  std::string frame(gdap::io::encode(zstd, data, out, "test"));
  frame[frame.size() - 2] = static_cast<char>(frame[frame.size() - 2] ^ 1);  // inside the frame's checksum
  expect_refused(zstd, frame, 1000, "zstd", "zstd's own checksum catches a flipped bit");
  expect_refused(codec(BytesCodec::Kind::crc32c), "abc", 1000, "too short", "crc32c needs its 4 bytes");
}

TEST(ZarrCodecs, ForeignFramingIsRefused) {
  const std::string junk = "this is no compressed data at all";
  expect_refused(codec(BytesCodec::Kind::zstd), junk, 1000, "not a zstd frame", "zstd refuses junk");
  expect_refused(codec(BytesCodec::Kind::blosc), junk, 1000, "not a valid blosc buffer", "blosc's header is checked first");
  expect_refused(codec(BytesCodec::Kind::gzip), junk, 1000, "gzip", "gzip refuses junk");
  expect_refused(codec(BytesCodec::Kind::zstd), "", 1000, "not a zstd frame", "an empty zstd chunk");
  Buffer out;
  const std::string whole(gdap::io::encode(codec(BytesCodec::Kind::gzip), sample(5000), out, "test"));
  expect_refused(codec(BytesCodec::Kind::gzip), whole.substr(0, whole.size() / 2), 5000, "truncated", "a cut gzip stream");
}

TEST(ZarrCodecs, ConfigurationsAreChecked) {
  struct Case {
    const char* rule;
    const char* name;
    nlohmann::json config;
    gdap_status status;
    const char* words;
  };
  const Case cases[] = {
      {"an unknown codec is refused by name", "bz2", nlohmann::json::object(), GDAP_ERR_UNSUPPORTED, "codec \"bz2\""},
      {"blosc's shuffle is one of three", "blosc", {{"cname", "lz4"}, {"shuffle", "twice"}}, GDAP_ERR_IO, "shuffle \"twice\""},
      {"blosc's compressor must be one blosc has", "blosc", {{"cname", "brotli"}}, GDAP_ERR_UNSUPPORTED, "\"brotli\""},
      {"gzip levels are 0 to 9", "gzip", {{"level", 12}}, GDAP_ERR_IO, "\"level\" 12"},
      {"zstd's checksum is a bool", "zstd", {{"checksum", 1}}, GDAP_ERR_IO, "\"checksum\""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(gdap::guard([&] { (void)gdap::io::bytes_codec(c.name, c.config, "zarr.json"); }), c.status) << c.rule;
    EXPECT_NE(std::string(gdap_last_error()).find(c.words), std::string::npos) << c.rule << ": " << gdap_last_error();
  }
}

}  // namespace
