// Zarr v3 metadata (see zarr_meta.hpp): zarr.json parsed into a ZarrMeta, every codec chain
// checked before any chunk is touched (the order of codec kinds, a transpose's permutation, inner
// chunks that divide their shard, an index of "bytes" and "crc32c" only, nesting), every product
// through checked_mul, and the largest piece a read decodes whole bounded by kMaxChunkBytes.
#include "io/zarr_meta.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "protocol/json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string_view>

namespace gdap::io {
namespace {

using json = nlohmann::json;

// IEEE binary16 bits of a double, rounded to nearest even, overflow to infinity, NaN kept quiet.
// Portable: clang before 15 has no _Float16 on x86.
uint16_t half_bits(double d) {
  uint64_t b = 0;
  std::memcpy(&b, &d, 8);
  const auto sign = static_cast<uint16_t>((b >> 48) & 0x8000);
  const int exp = static_cast<int>((b >> 52) & 0x7ff);
  uint64_t mant = b & ((uint64_t{1} << 52) - 1);
  if (exp == 0x7ff) return static_cast<uint16_t>(sign | 0x7c00 | (mant != 0 ? 0x200 : 0));
  if (exp == 0) return sign;  // a double subnormal is far below half's smallest subnormal
  const int e = exp - 1023 + 15;  // the biased half exponent
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  mant |= uint64_t{1} << 52;
  const int shift = e >= 1 ? 42 : 42 + (1 - e);  // significand bits dropped
  if (shift > 53) return sign;  // below half the smallest subnormal: rounds to zero
  uint64_t kept = mant >> shift;
  const uint64_t rest = mant & ((uint64_t{1} << shift) - 1), halfway = uint64_t{1} << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1) != 0)) ++kept;
  if (e < 1) return static_cast<uint16_t>(sign | kept);  // subnormal (2^10 after rounding: the smallest normal)
  int exp_h = e;
  if ((kept >> 11) != 0) {
    kept >>= 1;
    if (++exp_h >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  }
  return static_cast<uint16_t>(sign | (exp_h << 10) | (kept & 0x3ff));
}

struct TypeName {
  const char* name;
  gdap_dtype dtype;
};
constexpr TypeName kTypes[] = {
    {"bool", {GDAP_DTYPE_BOOL, 8, 1}},      {"int8", {GDAP_DTYPE_INT, 8, 1}},
    {"int16", {GDAP_DTYPE_INT, 16, 1}},     {"int32", {GDAP_DTYPE_INT, 32, 1}},
    {"int64", {GDAP_DTYPE_INT, 64, 1}},     {"uint8", {GDAP_DTYPE_UINT, 8, 1}},
    {"uint16", {GDAP_DTYPE_UINT, 16, 1}},   {"uint32", {GDAP_DTYPE_UINT, 32, 1}},
    {"uint64", {GDAP_DTYPE_UINT, 64, 1}},   {"float16", {GDAP_DTYPE_FLOAT, 16, 1}},
    {"float32", {GDAP_DTYPE_FLOAT, 32, 1}}, {"float64", {GDAP_DTYPE_FLOAT, 64, 1}},
    {"complex64", {GDAP_DTYPE_COMPLEX, 64, 1}}, {"complex128", {GDAP_DTYPE_COMPLEX, 128, 1}},
};

[[noreturn]] void bad(const std::string& file, const std::string& what) {
  fail(GDAP_ERR_IO, "{}: {}", file, what);
}

// An integer fill value outside its data type's range (300 for uint8) would wrap into another
// value (44) when stored: refused, as zarr-python refuses it.
void check_integer_fill(const json& v, const ZarrMeta& meta, const std::string& file) {
  const int bits = meta.dtype.bits;
  const bool is_signed = meta.dtype.code == GDAP_DTYPE_INT;
  bool fits = true;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    const uint64_t max = is_signed ? (uint64_t{1} << (bits - 1)) - 1 : bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
    fits = u <= max;
  } else {
    const int64_t i = v.get<int64_t>();
    if (!is_signed) {
      fits = i >= 0 && (bits == 64 || static_cast<uint64_t>(i) <= (uint64_t{1} << bits) - 1);
    } else if (bits < 64) {
      fits = i >= -(int64_t{1} << (bits - 1)) && i <= (int64_t{1} << (bits - 1)) - 1;
    }
  }
  if (!fits) bad(file, fmt::format("fill_value {} does not fit in {}", v.dump(), meta.data_type));
}

// A finite fill value that rounds to an infinity in its float type (1e39 for float32) would be
// stored as another value: refused.
double finite_fill(double d, int bits, const json& v, const ZarrMeta& meta, const std::string& file) {
  const bool overflows = bits == 16 ? (half_bits(d) & 0x7fff) == 0x7c00 : bits == 32 && std::isinf(static_cast<float>(d));
  if (std::isfinite(d) && overflows) bad(file, fmt::format("fill_value {} does not fit in {}", v.dump(), meta.data_type));
  return d;
}

// One element of `meta.dtype` holding the JSON fill value.
std::vector<unsigned char> parse_fill(const json& v, const ZarrMeta& meta, const std::string& file) {
  std::vector<unsigned char> out(static_cast<size_t>(meta.itemsize), 0);
  auto number = [&](const json& x) -> double {
    if (x.is_number()) return x.get<double>();
    if (x.is_string()) {
      const std::string s = x.get<std::string>();
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    }
    bad(file, fmt::format("fill_value {} is not a {} value", x.dump(), meta.data_type));
  };
  auto put_float = [&](double d, size_t at, int bits) {
    if (bits == 64) std::memcpy(out.data() + at, &d, 8);
    else if (bits == 32) {
      const float f = static_cast<float>(d);
      std::memcpy(out.data() + at, &f, 4);
    } else {
      const uint16_t h = half_bits(d);
      std::memcpy(out.data() + at, &h, 2);
    }
  };
  const gdap_dtype t = meta.dtype;
  if (v.is_string() && v.get<std::string>().rfind("0x", 0) == 0 && t.code != GDAP_DTYPE_COMPLEX) {
    const std::string hex = v.get<std::string>().substr(2);  // the value's bits, big-endian hex
    if (static_cast<int64_t>(hex.size()) != 2 * meta.itemsize) bad(file, fmt::format("fill_value {} has the wrong width", v.dump()));
    for (int64_t i = 0; i < meta.itemsize; ++i) {
      const std::string byte = hex.substr(static_cast<size_t>(2 * i), 2);
      if (byte.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) bad(file, fmt::format("fill_value {} is not hex", v.dump()));
      out[static_cast<size_t>(meta.itemsize - 1 - i)] = static_cast<unsigned char>(std::stoi(byte, nullptr, 16));
    }
    return out;
  }
  switch (t.code) {
    case GDAP_DTYPE_BOOL:
      if (!v.is_boolean()) bad(file, fmt::format("fill_value {} is not a bool", v.dump()));
      out[0] = v.get<bool>() ? 1 : 0;
      return out;
    case GDAP_DTYPE_INT:
    case GDAP_DTYPE_UINT: {
      if (!v.is_number_integer()) bad(file, fmt::format("fill_value {} is not an integer", v.dump()));
      check_integer_fill(v, meta, file);
      const uint64_t bits = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
      std::memcpy(out.data(), &bits, static_cast<size_t>(meta.itemsize));  // little-endian host
      return out;
    }
    case GDAP_DTYPE_FLOAT: put_float(finite_fill(number(v), t.bits, v, meta, file), 0, t.bits); return out;
    default:  // complex: [re, im]
      if (!v.is_array() || v.size() != 2) bad(file, fmt::format("fill_value {} is not [real, imag]", v.dump()));
      put_float(finite_fill(number(v[0]), t.bits / 2, v, meta, file), 0, t.bits / 2);
      put_float(finite_fill(number(v[1]), t.bits / 2, v, meta, file), static_cast<size_t>(meta.itemsize / 2), t.bits / 2);
      return out;
  }
}

std::vector<int64_t> extents(const json& v, const char* key, const std::string& file, int64_t minimum) {
  if (!v.is_array()) bad(file, fmt::format("\"{}\" is not a list", key));
  std::vector<int64_t> out;
  for (const json& e : v) {
    const bool fits = e.is_number_integer() && (!e.is_number_unsigned() || e.get<uint64_t>() <= uint64_t{INT64_MAX});
    if (!fits || e.get<int64_t>() < minimum) {
      bad(file, fmt::format("\"{}\" entry {} is not an integer >= {}", key, e.dump(), minimum));
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

const json& member(const json& obj, const char* key, const std::string& file) {
  if (!obj.is_object() || !obj.contains(key)) bad(file, fmt::format("no \"{}\"", key));
  return obj.at(key);
}

std::string text(const json& obj, const char* key, const std::string& file) {
  const json& v = member(obj, key, file);
  if (!v.is_string()) bad(file, fmt::format("\"{}\" is not a string", key));
  return v.get<std::string>();
}

int64_t bytes_of(const std::vector<int64_t>& shape, int64_t itemsize, const char* what) {
  int64_t bytes = itemsize;
  for (int64_t e : shape) bytes = checked_mul(bytes, e, what);
  return bytes;
}

const json& config_of(const json& codec) {
  static const json empty = json::object();
  return codec.is_object() && codec.contains("configuration") ? codec.at("configuration") : empty;
}

std::string endian_of(const json& config, const ZarrMeta& meta, const std::string& file) {
  if (!config.is_object() || !config.contains("endian")) {
    if (meta.itemsize > 1) bad(file, "the bytes codec has no \"endian\" for a multi-byte data type");
    return "little";
  }
  const std::string endian = text(config, "endian", file);
  if (endian != "little" && endian != "big") bad(file, fmt::format("bytes codec endian \"{}\"", endian));
  return endian;
}

// A transpose's order: a permutation of 0 .. ndim - 1.
std::vector<int64_t> permutation(const json& config, size_t ndim, const std::string& file) {
  const std::vector<int64_t> order = extents(member(config, "order", file), "order", file, 0);
  std::vector<bool> seen(ndim, false);
  bool ok = order.size() == ndim;
  for (int64_t o : order) {
    ok = ok && o < static_cast<int64_t>(ndim) && !seen[static_cast<size_t>(o)];
    if (ok) seen[static_cast<size_t>(o)] = true;
  }
  if (!ok) bad(file, fmt::format("transpose order {} is not a permutation of {} dimensions", config.at("order").dump(), ndim));
  return order;
}

Chain read_chain(const json& codecs, const std::vector<int64_t>& shape, const ZarrMeta& meta, const std::string& file,
                 int depth);

// A sharding_indexed configuration for shards of `shard` (the shape it encodes).
std::shared_ptr<const Sharding> read_sharding(const json& config, const std::vector<int64_t>& shard,
                                               const ZarrMeta& meta, const std::string& file, int depth) {
  if (depth >= kMaxShardNesting) fail(GDAP_ERR_UNSUPPORTED, "{}: shards nested deeper than {}", file, kMaxShardNesting);
  auto s = std::make_shared<Sharding>();
  s->inner = extents(member(config, "chunk_shape", file), "chunk_shape", file, 1);
  if (s->inner.size() != shard.size()) {
    bad(file, fmt::format("sharding chunk_shape has {} entries for {} dimensions", s->inner.size(), shard.size()));
  }
  for (size_t a = 0; a < shard.size(); ++a) {
    if (shard[a] % s->inner[a] != 0) {
      bad(file, fmt::format("sharding: dimension {}: the inner chunk ({}) does not divide the shard ({})", a, s->inner[a], shard[a]));
    }
  }
  s->codecs = read_chain(member(config, "codecs", file), s->inner, meta, file, depth + 1);
  const json& index = member(config, "index_codecs", file);
  if (!index.is_array() || index.empty()) bad(file, "sharding \"index_codecs\" is not a non-empty list");
  for (size_t i = 0; i < index.size(); ++i) {
    const std::string name = text(index[i], "name", file);
    if (i == 0 && name == "bytes") {
      s->index.big_endian = endian_of(config_of(index[i]), ZarrMeta{}, file) == "big";
    } else if (i > 0 && name == "crc32c") {
      s->index.codecs.push_back(bytes_codec(name, config_of(index[i]), file));
    } else {
      fail(GDAP_ERR_UNSUPPORTED, "{}: sharding index codec \"{}\" at position {} (gdap reads \"bytes\" then optionally \"crc32c\")",
           file, name, i);
    }
  }
  const std::string location = config.contains("index_location") ? text(config, "index_location", file) : "end";
  if (location != "start" && location != "end") bad(file, fmt::format("sharding index_location \"{}\"", location));
  s->index_at_start = location == "start";
  return s;
}

// One codec list for arrays of `shape`: array-to-array codecs ("transpose"), exactly one
// array-to-bytes codec ("bytes" or "sharding_indexed"), then bytes-to-bytes codecs.
Chain read_chain(const json& codecs, const std::vector<int64_t>& shape, const ZarrMeta& meta, const std::string& file,
                 int depth) {
  if (!codecs.is_array() || codecs.empty()) bad(file, "\"codecs\" is not a non-empty list");
  Chain chain;
  std::vector<int64_t> encoded = shape;  // the shape after the transposes so far
  bool to_bytes = false;
  for (const json& c : codecs) {
    const std::string name = text(c, "name", file);
    const json& config = config_of(c);
    if (!to_bytes && name == "transpose") {
      const std::vector<int64_t> order = permutation(config, shape.size(), file);
      std::vector<int64_t> composed(order.size()), shaped(order.size());
      for (size_t i = 0; i < order.size(); ++i) {
        composed[i] = chain.order.empty() ? order[i] : chain.order[static_cast<size_t>(order[i])];
        shaped[i] = encoded[static_cast<size_t>(order[i])];
      }
      chain.order = composed;
      encoded = shaped;
    } else if (!to_bytes && name == "bytes") {
      to_bytes = true;
      chain.big_endian = endian_of(config, meta, file) == "big" && meta.itemsize > 1;
    } else if (!to_bytes && name == "sharding_indexed") {
      to_bytes = true;
      chain.sharding = read_sharding(config, encoded, meta, file, depth);
    } else if (to_bytes && name != "transpose" && name != "bytes" && name != "sharding_indexed") {
      chain.codecs.push_back(bytes_codec(name, config, file));
    } else {
      fail(GDAP_ERR_UNSUPPORTED, "{}: codec \"{}\" {} is not one gdap reads", file, name,
           to_bytes ? "after the array-to-bytes codec" : "before an array-to-bytes codec (\"bytes\" or \"sharding_indexed\")");
    }
  }
  if (!to_bytes) bad(file, "no \"bytes\" or \"sharding_indexed\" codec");
  bool identity = true;
  for (size_t i = 0; i < chain.order.size(); ++i) identity = identity && chain.order[i] == static_cast<int64_t>(i);
  if (identity) chain.order.clear();
  return chain;
}

// The sizes every read relies on: the chunk's bytes, and the piece a read decodes whole.
void finish(ZarrMeta& meta, const std::string& file) {
  if (meta.chunk.size() != meta.shape.size()) {
    bad(file, fmt::format("chunk_shape has {} entries for {} dimensions", meta.chunk.size(), meta.shape.size()));
  }
  meta.chunk_bytes = bytes_of(meta.chunk, meta.itemsize, "chunk bytes");
  (void)bytes_of(meta.shape, meta.itemsize, "array bytes");
  meta.unit = meta.partial_shards() ? meta.codecs.sharding->inner : meta.chunk;
  const int64_t unit = bytes_of(meta.unit, meta.itemsize, "chunk bytes");
  if (unit > kMaxChunkBytes) {
    fail(GDAP_ERR_UNSUPPORTED, "{}: a {} of {} bytes is more than gdap's limit {}", file,
         meta.partial_shards() ? "shard's inner chunk" : "chunk", unit, kMaxChunkBytes);
  }
}

json chain_json(const Chain& chain) {
  json codecs = json::array();
  if (!chain.order.empty()) codecs.push_back({{"name", "transpose"}, {"configuration", {{"order", chain.order}}}});
  if (chain.sharding) {
    const Sharding& s = *chain.sharding;
    codecs.push_back({{"name", "sharding_indexed"},
                      {"configuration", {{"chunk_shape", s.inner}, {"codecs", chain_json(s.codecs)},
                                         {"index_codecs", chain_json(s.index)},
                                         {"index_location", s.index_at_start ? "start" : "end"}}}});
  } else {
    codecs.push_back({{"name", "bytes"}, {"configuration", {{"endian", chain.big_endian ? "big" : "little"}}}});
  }
  for (const BytesCodec& c : chain.codecs) codecs.push_back(codec_json(c));
  return codecs;
}

// The bytes-to-bytes codecs gdap_zarr_save writes for options `o` as they take effect (levels
// spelled out: zarr.cpp's effective_options): the one the caller picked, if any, then "crc32c", so
// that a flipped bit in any chunk is an error naming it rather than another value.
std::vector<BytesCodec> written_codecs(const gdap_zarr_options& o, int64_t itemsize) {
  std::vector<BytesCodec> out;
  BytesCodec c;
  if (o.codec == GDAP_ZARR_ZSTD) {
    c.kind = BytesCodec::Kind::zstd;
    c.level = o.zstd_level;
    out.push_back(c);
  } else if (o.codec == GDAP_ZARR_BLOSC_LZ4 || o.codec == GDAP_ZARR_BLOSC_ZSTD) {
    c.kind = BytesCodec::Kind::blosc;
    c.cname = o.codec == GDAP_ZARR_BLOSC_ZSTD ? "zstd" : "lz4";
    c.level = o.zstd_level;
    c.shuffle = o.shuffle == GDAP_ZARR_NOSHUFFLE ? 0 : o.shuffle == GDAP_ZARR_BITSHUFFLE ? 2 : 1;
    c.typesize = itemsize;
    out.push_back(c);
  }
  BytesCodec crc;
  crc.kind = BytesCodec::Kind::crc32c;
  out.push_back(crc);
  return out;
}

// nlohmann keeps only the last of a repeated key: one is refused, as the command-line tool does.
void refuse_repeated_keys(const std::string& bytes, const std::string& file) {
  if (const auto key = repeated_key(bytes)) bad(file, fmt::format("key {} appears twice in one object", json(*key).dump()));
}

// The Zarr v3 core spec: a top-level key an implementation does not know must make it refuse the
// array, unless the key's value is an object whose "must_understand" is false.
void refuse_unknown_keys(const json& j, const std::string& file) {
  static constexpr std::string_view kKnown[] = {"zarr_format", "node_type", "shape", "data_type", "chunk_grid",
                                                "chunk_key_encoding", "fill_value", "codecs", "attributes",
                                                "storage_transformers", "dimension_names"};
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) != std::end(kKnown)) continue;
    const auto flag = value.is_object() ? value.find("must_understand") : value.end();
    const bool ignorable = flag != value.end() && flag->is_boolean() && !flag->get<bool>();
    if (!ignorable) {
      fail(GDAP_ERR_UNSUPPORTED, "{}: key {} is not one gdap reads, and its value is not an object with "
           "\"must_understand\": false (Zarr v3 says to refuse it)", file, json(key).dump());
    }
  }
}

// A folder Zarr v2 wrote (.zarray or .zgroup, no zarr.json) is refused as such: "zarr.json: cannot
// open" sends its reader looking for a missing file, not at the format.
void refuse_zarr_v2(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path + "/zarr.json", ec)) return;
  for (const auto& [file, kind] : {std::pair{".zarray", "array"}, std::pair{".zgroup", "group"}}) {
    if (!std::filesystem::exists(path + "/" + file, ec)) continue;
    fail(GDAP_ERR_UNSUPPORTED, "{}: a Zarr v2 {} ({} and no zarr.json); gdap reads Zarr v3 arrays only: convert "
         "it with zarr-python, e.g. zarr.save_array(\"new.zarr\", zarr.open_array(\"{}\")[...], zarr_format=3)",
         path, kind, file, kind == std::string_view("group") ? path + "/<array>" : path);
  }
}

}  // namespace

const char* zarr_type_name(gdap_dtype dtype) {
  for (const TypeName& t : kTypes) {
    if (t.dtype.code == dtype.code && t.dtype.bits == dtype.bits && t.dtype.lanes == dtype.lanes) return t.name;
  }
  return nullptr;
}

ZarrMeta read_meta(const std::string& path) {
  const std::string file = path + "/zarr.json";
  refuse_zarr_v2(path);
  const std::string bytes = *read_regular(file, kMaxMetaBytes, false);
  if (const auto at = nul_in(bytes)) bad(file, fmt::format("a NUL byte at offset {}: not JSON text", *at));
  refuse_repeated_keys(bytes, file);
  json j;
  try {
    j = json::parse(bytes);
  } catch (const json::exception& e) {
    bad(file, fmt::format("not JSON: {}", e.what()));
  }
  const json& format = member(j, "zarr_format", file);
  if (!format.is_number_integer() || format.get<int64_t>() != 3) {
    fail(GDAP_ERR_UNSUPPORTED, "{}: zarr_format {} (gdap reads Zarr v3 stores)", file, format.dump());
  }
  if (text(j, "node_type", file) != "array") bad(file, "node_type is not \"array\" (a group has no data)");
  refuse_unknown_keys(j, file);
  ZarrMeta meta;
  meta.shape = extents(member(j, "shape", file), "shape", file, 0);
  meta.data_type = member(j, "data_type", file).is_string() ? text(j, "data_type", file) : member(j, "data_type", file).dump();
  const TypeName* type = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const TypeName& t) { return meta.data_type == t.name; });
  if (type == std::end(kTypes)) fail(GDAP_ERR_UNSUPPORTED, "{}: data_type {} is not one gdap reads", file, meta.data_type);
  meta.dtype = type->dtype;
  meta.itemsize = type->dtype.bits / 8;
  const json& grid = member(j, "chunk_grid", file);
  if (text(grid, "name", file) != "regular") fail(GDAP_ERR_UNSUPPORTED, "{}: chunk_grid \"{}\" (gdap reads \"regular\")", file, text(grid, "name", file));
  meta.chunk = extents(member(member(grid, "configuration", file), "chunk_shape", file), "chunk_shape", file, 1);
  if (meta.chunk.size() != meta.shape.size()) {
    bad(file, fmt::format("chunk_shape has {} entries for {} dimensions", meta.chunk.size(), meta.shape.size()));
  }
  const json& keys = member(j, "chunk_key_encoding", file);
  const std::string encoding = text(keys, "name", file);
  if (encoding != "default" && encoding != "v2") fail(GDAP_ERR_UNSUPPORTED, "{}: chunk_key_encoding \"{}\"", file, encoding);
  meta.v2_keys = encoding == "v2";
  meta.separator = meta.v2_keys ? '.' : '/';
  if (keys.contains("configuration") && keys.at("configuration").contains("separator")) {
    const std::string sep = text(keys.at("configuration"), "separator", file);
    if (sep != "/" && sep != ".") bad(file, fmt::format("chunk key separator \"{}\"", sep));
    meta.separator = sep[0];
  }
  meta.fill = parse_fill(member(j, "fill_value", file), meta, file);
  meta.codecs = read_chain(member(j, "codecs", file), meta.chunk, meta, file, 0);
  if (j.contains("storage_transformers") && !j.at("storage_transformers").empty()) {
    fail(GDAP_ERR_UNSUPPORTED, "{}: storage_transformers are not read by gdap", file);
  }
  finish(meta, file);
  return meta;
}

ZarrMeta make_meta(const std::vector<int64_t>& shape, const std::vector<int64_t>& chunk, const std::vector<int64_t>& inner,
                   gdap_dtype dtype, const gdap_zarr_options& options) {
  ZarrMeta meta;
  meta.shape = shape;
  meta.chunk = chunk;
  meta.dtype = dtype;
  meta.data_type = zarr_type_name(dtype);
  meta.itemsize = dtype.bits / 8;
  meta.fill.assign(static_cast<size_t>(meta.itemsize), 0);
  if (inner.empty()) {
    meta.codecs.codecs = written_codecs(options, meta.itemsize);
  } else {
    auto s = std::make_shared<Sharding>();
    s->inner = inner;
    s->codecs.codecs = written_codecs(options, meta.itemsize);
    BytesCodec crc;
    crc.kind = BytesCodec::Kind::crc32c;
    s->index.codecs.push_back(crc);
    meta.codecs.sharding = std::move(s);
  }
  finish(meta, "zarr.json");
  return meta;
}

std::string meta_json(const ZarrMeta& meta) {
  json fill;
  switch (meta.dtype.code) {
    case GDAP_DTYPE_BOOL: fill = false; break;
    case GDAP_DTYPE_FLOAT: fill = 0.0; break;
    case GDAP_DTYPE_COMPLEX: fill = json::array({0.0, 0.0}); break;
    default: fill = 0; break;
  }
  const json j = {{"zarr_format", 3},
                  {"node_type", "array"},
                  {"shape", meta.shape},
                  {"data_type", meta.data_type},
                  {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", meta.chunk}}}}},
                  {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
                  {"fill_value", fill},
                  {"codecs", chain_json(meta.codecs)},
                  {"attributes", {{"written_by", fmt::format("gdap {}", gdap_version_string())}}}};
  return j.dump(2) + "\n";
}

std::vector<std::string> chunk_key(const ZarrMeta& meta, const std::vector<int64_t>& index) {
  std::string key = meta.v2_keys ? "" : "c";
  for (size_t i = 0; i < index.size(); ++i) {
    if (!key.empty() || i > 0) key += meta.separator;
    key += std::to_string(index[i]);
  }
  if (key.empty()) key = "0";  // v2 keys of a 0-d array
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    const size_t slash = key.find('/', at);
    parts.push_back(key.substr(at, slash - at));
    if (slash == std::string::npos) return parts;
    at = slash + 1;
  }
}

std::string chunk_path(const std::string& path, const ZarrMeta& meta, const std::vector<int64_t>& index) {
  std::string out = path;
  for (const std::string& part : chunk_key(meta, index)) out += "/" + part;
  return out;
}

namespace {

// `text` is a chunk index of dimension d: a decimal without a leading zero, inside the grid.
bool grid_index(const ZarrMeta& meta, size_t d, const std::string& text) {
  if (text.empty() || text.size() > 18 || (text.size() > 1 && text[0] == '0')) return false;
  if (!std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return false;
  const int64_t chunks = meta.shape[d] / meta.chunk[d] + (meta.shape[d] % meta.chunk[d] != 0 ? 1 : 0);
  return std::stoll(text) < chunks;
}

}  // namespace

bool in_key_space(const ZarrMeta& meta, const std::string& relative, bool folder) {
  const size_t ndim = meta.shape.size();
  const bool nested = meta.separator == '/';
  if (!nested && relative.find('/') != std::string::npos) return false;
  std::string indices = relative;
  if (!meta.v2_keys) {  // "c", then the indices after a separator
    if (relative == "c") return ndim == 0 ? !folder : folder && nested;
    if (relative.size() < 2 || relative[0] != 'c' || relative[1] != meta.separator) return false;
    indices = relative.substr(2);
  } else if (ndim == 0) {
    return !folder && relative == "0";
  }
  std::vector<std::string> parts(1);
  for (char ch : indices) {
    if (ch == meta.separator) {
      parts.emplace_back();
    } else {
      parts.back() += ch;
    }
  }
  if (folder ? !nested || parts.size() >= ndim : parts.size() != ndim) return false;
  for (size_t d = 0; d < parts.size(); ++d) {
    if (!grid_index(meta, d, parts[d])) return false;
  }
  return true;
}

}  // namespace gdap::io
