// Zarr v3 metadata and chunk files (see zarr_store.hpp). Sizes from a file are hostile until
// checked: every product goes through checked_mul, a chunk larger than kMaxChunkBytes is refused
// before anything is allocated for it, and a fill value must fit its data type.
#include "io/zarr_store.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#ifdef GDAP_HAVE_ZSTD
#include <zstd.h>
#endif

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

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

void read_codecs(const json& codecs, ZarrMeta& meta, const std::string& file) {
  if (!codecs.is_array() || codecs.empty()) bad(file, "\"codecs\" is not a non-empty list");
  bool bytes_seen = false;
  for (const json& c : codecs) {
    const std::string name = text(c, "name", file);
    const json config = c.contains("configuration") ? c.at("configuration") : json::object();
    if (name == "bytes" && !bytes_seen) {
      bytes_seen = true;
      const std::string endian = config.contains("endian") ? text(config, "endian", file) : "little";
      if (endian != "little" && endian != "big") bad(file, fmt::format("bytes codec endian \"{}\"", endian));
      meta.big_endian = endian == "big" && meta.itemsize > 1;
    } else if (name == "zstd" && bytes_seen && !meta.zstd) {
      meta.zstd = true;
    } else {
      fail(GDAP_ERR_UNSUPPORTED, "{}: codec \"{}\"{} is not one gdap reads (it reads \"bytes\" then optionally \"zstd\")",
           file, name, bytes_seen ? "" : " before \"bytes\"");
    }
  }
  if (!bytes_seen) bad(file, "no \"bytes\" codec");
#ifndef GDAP_HAVE_ZSTD
  if (meta.zstd) fail(GDAP_ERR_UNSUPPORTED, "{}: the zstd codec needs a gdap built with zstd", file);
#endif
}

void finish(ZarrMeta& meta, const std::string& file) {
  if (meta.chunk.size() != meta.shape.size()) {
    bad(file, fmt::format("chunk_shape has {} entries for {} dimensions", meta.chunk.size(), meta.shape.size()));
  }
  int64_t bytes = meta.itemsize;
  for (int64_t c : meta.chunk) bytes = checked_mul(bytes, c, "chunk bytes");
  if (bytes > kMaxChunkBytes) fail(GDAP_ERR_UNSUPPORTED, "{}: a chunk of {} bytes is more than gdap's limit {}", file, bytes, kMaxChunkBytes);
  int64_t elements = 1;
  for (int64_t e : meta.shape) elements = checked_mul(elements, e, "array elements");
  meta.chunk_bytes = bytes;
}

void byteswap_elements(std::vector<unsigned char>& bytes, int64_t width) {
  for (size_t at = 0; at + static_cast<size_t>(width) <= bytes.size(); at += static_cast<size_t>(width)) {
    std::reverse(bytes.begin() + static_cast<ptrdiff_t>(at), bytes.begin() + static_cast<ptrdiff_t>(at) + width);
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
  const std::string bytes = *read_regular(file, kMaxMetaBytes, false);
  if (const auto at = nul_in(bytes)) bad(file, fmt::format("a NUL byte at offset {}: not JSON text", *at));
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
  read_codecs(member(j, "codecs", file), meta, file);
  if (j.contains("storage_transformers") && !j.at("storage_transformers").empty()) {
    fail(GDAP_ERR_UNSUPPORTED, "{}: storage_transformers are not read by gdap", file);
  }
  finish(meta, file);
  return meta;
}

ZarrMeta make_meta(const std::vector<int64_t>& shape, const std::vector<int64_t>& chunk, gdap_dtype dtype,
                   const gdap_zarr_options& options) {
  ZarrMeta meta;
  meta.shape = shape;
  meta.chunk = chunk;
  meta.dtype = dtype;
  meta.data_type = zarr_type_name(dtype);
  meta.itemsize = dtype.bits / 8;
  meta.zstd = options.codec == GDAP_ZARR_ZSTD;
  meta.zstd_level = options.zstd_level;
  meta.fill.assign(static_cast<size_t>(meta.itemsize), 0);
  finish(meta, "zarr.json");
  return meta;
}

std::string meta_json(const ZarrMeta& meta) {
  json codecs = json::array();
  codecs.push_back({{"name", "bytes"}, {"configuration", {{"endian", "little"}}}});
  if (meta.zstd) codecs.push_back({{"name", "zstd"}, {"configuration", {{"level", meta.zstd_level}, {"checksum", false}}}});
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
                  {"codecs", codecs},
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

std::optional<std::vector<unsigned char>> read_chunk(const std::string& file, const ZarrMeta& meta) {
#ifdef GDAP_HAVE_ZSTD
  const int64_t limit = meta.zstd ? static_cast<int64_t>(ZSTD_compressBound(static_cast<size_t>(meta.chunk_bytes))) + 1024 : meta.chunk_bytes;
#else
  const int64_t limit = meta.chunk_bytes;
#endif
  const std::optional<std::string> read = read_regular(file, limit, true);
  if (!read) return std::nullopt;
  const std::string& raw = *read;
  std::vector<unsigned char> bytes(static_cast<size_t>(meta.chunk_bytes));
  if (meta.zstd) {
#ifdef GDAP_HAVE_ZSTD
    const unsigned long long declared = ZSTD_getFrameContentSize(raw.data(), raw.size());
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != static_cast<unsigned long long>(meta.chunk_bytes)) {
      bad(file, fmt::format("zstd frame holds {} bytes, a chunk has {}", declared, meta.chunk_bytes));
    }
    const size_t got = ZSTD_decompress(bytes.data(), bytes.size(), raw.data(), raw.size());
    if (ZSTD_isError(got)) bad(file, fmt::format("zstd: {}", ZSTD_getErrorName(got)));
    if (got != bytes.size()) bad(file, fmt::format("zstd gave {} bytes, a chunk has {}", got, bytes.size()));
#endif
  } else {
    if (static_cast<int64_t>(raw.size()) != meta.chunk_bytes) {
      bad(file, fmt::format("{} bytes, a chunk has {}", raw.size(), meta.chunk_bytes));
    }
    std::memcpy(bytes.data(), raw.data(), raw.size());
  }
  if (meta.big_endian) {
    byteswap_elements(bytes, meta.dtype.code == GDAP_DTYPE_COMPLEX ? meta.itemsize / 2 : meta.itemsize);
  }
  return bytes;
}

void write_chunk(const Dir& store, const std::vector<std::string>& key, const ZarrMeta& meta,
                 const std::vector<unsigned char>& bytes) {
  std::optional<Dir> folder;  // the key's folders, entered one by one without following links
  for (size_t i = 0; i + 1 < key.size(); ++i) folder = (folder ? *folder : store).sub(key[i], true);
  const Dir& dir = folder ? *folder : store;
  if (!meta.zstd) {
    write_new(dir, key.back(), std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    return;
  }
#ifdef GDAP_HAVE_ZSTD
  std::string packed(ZSTD_compressBound(bytes.size()), '\0');
  const size_t n = ZSTD_compress(packed.data(), packed.size(), bytes.data(), bytes.size(), meta.zstd_level);
  if (ZSTD_isError(n)) bad(dir.path() + "/" + key.back(), fmt::format("zstd: {}", ZSTD_getErrorName(n)));
  packed.resize(n);
  write_new(dir, key.back(), packed);
#else
  fail(GDAP_ERR_UNSUPPORTED, "{}: the zstd codec needs a gdap built with zstd", store.path());
#endif
}

}  // namespace gdap::io
