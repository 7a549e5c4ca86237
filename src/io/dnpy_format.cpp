// The .dnpy header and its .npy payload header, parsed without eval by a small recursive-descent
// reader of Python literals (bounded depth, ASCII only, every error at a file offset), and written
// byte for byte as DistArray 0.6 with NumPy 1.x writes them (keys in DistArray's order, the .dnpy
// dict padded to 16 bytes, the .npy dict to 64), so files from either side read the same.
#include "io/dnpy_format.hpp"

#include "array/array.hpp"
#include "core/checked.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "protocol/dim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

static_assert(std::endian::native == std::endian::little, "gdap's .dnpy writer stores host order as little endian");

namespace gdap::io {
namespace {

// A Python literal: what the header grammar allows.
struct Value {
  enum Kind { kInt, kStr, kBool, kNone, kSeq, kDict } kind = kNone;
  int64_t offset = 0;  // in the file, for messages
  int64_t i = 0;       // kInt, kBool
  std::string s;       // kStr
  std::vector<Value> items;                           // kSeq (tuple or list)
  // kDict, in file order: keys[i] holds values[i] (two vectors, as std::pair<std::string, Value>
  // would need Value complete here)
  std::vector<std::string> keys;
  std::vector<Value> values;

  const char* kind_name() const {
    switch (kind) {
      case kInt: return "an integer";
      case kStr: return "a string";
      case kBool: return "a bool";
      case kNone: return "None";
      case kSeq: return "a tuple or list";
      default: return "a dict";
    }
  }
};

class Reader {
 public:
  Reader(std::string_view text, int64_t base, const std::string& name, const char* what)
      : text_(text), base_(base), name_(name), what_(what) {}

  // The whole text: one literal, then only spaces and newlines.
  Value document() {
    Value v = value(0);
    skip_space();
    if (pos_ != text_.size()) error("unexpected '{}' after the {}", printable(text_[pos_]), what_);
    return v;
  }

  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> format, Args&&... args) const {
    fail(GDAP_ERR_IO, "{}: {} at byte {}: {}", name_, what_, base_ + static_cast<int64_t>(pos_),
         fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  static std::string printable(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  char peek() {
    skip_space();
    if (pos_ >= text_.size()) error("the {} ends early", what_);
    return text_[pos_];
  }

  Value value(int depth) {
    if (depth > kMaxDepth) error("literals nested deeper than {}", kMaxDepth);
    const char c = peek();
    Value v;
    v.offset = base_ + static_cast<int64_t>(pos_);
    if (c == '{') return dict(depth, v);
    if (c == '(' || c == '[') return sequence(depth, v);
    if (c == '\'' || c == '"') {
      v.kind = Value::kStr;
      v.s = string();
      return v;
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      v.kind = Value::kInt;
      v.i = integer();
      return v;
    }
    for (const auto& [word, kind, i] : {std::tuple{"True", Value::kBool, 1}, {"False", Value::kBool, 0}, {"None", Value::kNone, 0}}) {
      const std::string_view w(word);
      if (text_.substr(pos_, w.size()) == w) {
        pos_ += w.size();
        v.kind = kind;
        v.i = i;
        return v;
      }
    }
    error("expected a literal (dict, tuple, list, string, integer, True, False, None), found '{}'", printable(c));
  }

  Value dict(int depth, Value v) {
    v.kind = Value::kDict;
    ++pos_;
    while (!eat('}')) {
      if (peek() != '\'' && peek() != '"') error("expected a string key or '}}', found '{}'", printable(peek()));
      std::string key = string();
      if (std::find(v.keys.begin(), v.keys.end(), key) != v.keys.end()) error("key '{}' appears twice", key);
      if (!eat(':')) error("expected ':' after key '{}'", key);
      Value item = value(depth + 1);
      v.keys.push_back(std::move(key));
      v.values.push_back(std::move(item));
      if (!eat(',')) {
        if (!eat('}')) {
          if (at_end()) error("the {} ends early: the dict is not closed after the value of key '{}'", what_, v.keys.back());
          error("expected ',' or '}}' after the value of key '{}'", v.keys.back());
        }
        break;
      }
    }
    return v;
  }

  Value sequence(int depth, Value v) {
    v.kind = Value::kSeq;
    const char close = text_[pos_] == '(' ? ')' : ']';
    ++pos_;
    while (!eat(close)) {
      v.items.push_back(value(depth + 1));
      if (!eat(',')) {
        if (!eat(close)) {
          if (at_end()) error("the {} ends early: '{}' is missing after item {}", what_, close, v.items.size() - 1);
          error("expected ',' or '{}' after item {}", close, v.items.size() - 1);
        }
        break;
      }
    }
    return v;
  }

  std::string string() {
    const char quote = text_[pos_++];
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) error("a string is not closed");
      const char c = text_[pos_++];
      if (c == quote) return out;
      if (c == '\n' || static_cast<unsigned char>(c) >= 0x7f || static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        error("byte '{}' inside a string", printable(c));
      }
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) error("a string is not closed");
      const char e = text_[pos_++];
      if (e == '\\' || e == '\'' || e == '"') out.push_back(e);
      else if (e == 'n') out.push_back('\n');
      else if (e == 't') out.push_back('\t');
      else error("escape '\\{}' is not supported in a header string", printable(e));
    }
  }

  int64_t integer() {
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') error("expected digits after the sign");
    uint64_t magnitude = 0;
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (magnitude > (limit - digit) / 10) error("the integer does not fit in 64 bits");
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' || text_[pos_] == 'j')) {
      error("only integers are allowed here, not a float or complex number");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2 long suffix
    return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int64_t base_;
  const std::string& name_;
  const char* what_;
};

// Field access with messages naming the file, the offset and the key.
class Fields {
 public:
  Fields(const Value& dict, const std::string& name, std::string where) : dict_(dict), name_(name), where_(std::move(where)) {}

  const Value* find(const char* key) const {
    for (size_t i = 0; i < dict_.keys.size(); ++i) {
      if (dict_.keys[i] == key) return &dict_.values[i];
    }
    return nullptr;
  }
  const Value& need(const char* key) const {
    const Value* v = find(key);
    if (v == nullptr) fail(GDAP_ERR_IO, "{}: {} at byte {}: required key '{}' is missing", name_, where_, dict_.offset, key);
    return *v;
  }
  const Value& typed(const Value& v, const char* key, Value::Kind kind) const {
    if (v.kind != kind) {
      Value want;
      want.kind = kind;
      fail(GDAP_ERR_IO, "{}: {} at byte {}: key '{}' must be {}, not {}", name_, where_, v.offset, key, want.kind_name(),
           v.kind_name());
    }
    return v;
  }
  int64_t integer(const char* key) const { return typed(need(key), key, Value::kInt).i; }
  void only(std::initializer_list<const char*> keys) const {
    for (size_t i = 0; i < dict_.keys.size(); ++i) {
      const std::string& key = dict_.keys[i];
      if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
        fail(GDAP_ERR_IO, "{}: {} at byte {}: unknown key '{}'", name_, where_, dict_.values[i].offset, key);
      }
    }
  }

 private:
  const Value& dict_;
  const std::string& name_;
  std::string where_;
};

gdap_dim dim_from(const Value& v, int64_t index, std::vector<int64_t>& indices, const std::string& name) {
  const std::string where = fmt::format("dim_data[{}]", index);
  if (v.kind != Value::kDict) fail(GDAP_ERR_IO, "{}: {} at byte {}: must be a dict, not {}", name, where, v.offset, v.kind_name());
  gdap_dim d = GDAP_DIM_INIT;
  if (v.keys.empty()) return d;  // {}: undistributed, resolved from the payload's extent
  const Fields f(v, name, where);
  const std::string& type = f.typed(f.need("dist_type"), "dist_type", Value::kStr).s;
  d.size = f.integer("size");
  d.proc_grid_size = f.integer("proc_grid_size");
  d.proc_grid_rank = f.integer("proc_grid_rank");
  if (type == "b") {
    f.only({"dist_type", "size", "proc_grid_size", "proc_grid_rank", "start", "stop", "padding", "periodic"});
    d.dist_type = GDAP_DIST_BLOCK;
    d.start = f.integer("start");
    d.stop = f.integer("stop");
    if (const Value* p = f.find("padding")) {
      f.typed(*p, "padding", Value::kSeq);
      if (p->items.size() != 2 || p->items[0].kind != Value::kInt || p->items[1].kind != Value::kInt) {
        fail(GDAP_ERR_IO, "{}: {} at byte {}: key 'padding' must hold two integers", name, where, p->offset);
      }
      d.given |= GDAP_KEY_PADDING;
      d.padding[0] = p->items[0].i;
      d.padding[1] = p->items[1].i;
    }
    if (const Value* p = f.find("periodic")) {
      d.given |= GDAP_KEY_PERIODIC;
      d.periodic = static_cast<int32_t>(f.typed(*p, "periodic", Value::kBool).i);
    }
  } else if (type == "c") {
    f.only({"dist_type", "size", "proc_grid_size", "proc_grid_rank", "start", "block_size"});
    d.dist_type = GDAP_DIST_CYCLIC;
    d.start = f.integer("start");
    if (const Value* p = f.find("block_size")) {
      d.given |= GDAP_KEY_BLOCK_SIZE;
      d.block_size = f.typed(*p, "block_size", Value::kInt).i;
    }
  } else if (type == "u") {
    f.only({"dist_type", "size", "proc_grid_size", "proc_grid_rank", "indices", "one_to_one"});
    d.dist_type = GDAP_DIST_UNSTRUCTURED;
    const Value& list = f.typed(f.need("indices"), "indices", Value::kSeq);
    indices.clear();
    for (const Value& item : list.items) {
      if (item.kind != Value::kInt) {
        fail(GDAP_ERR_IO, "{}: {} at byte {}: key 'indices' holds {}, not an integer", name, where, item.offset, item.kind_name());
      }
      indices.push_back(item.i);
    }
    d.indices = indices.data();
    d.num_indices = static_cast<int64_t>(indices.size());
    if (const Value* p = f.find("one_to_one")) {
      d.given |= GDAP_KEY_ONE_TO_ONE;
      d.one_to_one = static_cast<int32_t>(f.typed(*p, "one_to_one", Value::kBool).i);
    }
  } else {
    fail(GDAP_ERR_PROTOCOL, "{}: {}: dist_type '{}' is not 'b', 'c' or 'u'{}", name, where, type,
         type == "n" ? kNotN : "");
  }
  return d;
}

struct NpyType {
  const char* descr;
  gdap_dtype dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"|b1", {GDAP_DTYPE_BOOL, 8, 1}},     {"|i1", {GDAP_DTYPE_INT, 8, 1}},      {"<i2", {GDAP_DTYPE_INT, 16, 1}},
    {"<i4", {GDAP_DTYPE_INT, 32, 1}},     {"<i8", {GDAP_DTYPE_INT, 64, 1}},     {"|u1", {GDAP_DTYPE_UINT, 8, 1}},
    {"<u2", {GDAP_DTYPE_UINT, 16, 1}},    {"<u4", {GDAP_DTYPE_UINT, 32, 1}},    {"<u8", {GDAP_DTYPE_UINT, 64, 1}},
    {"<f2", {GDAP_DTYPE_FLOAT, 16, 1}},   {"<f4", {GDAP_DTYPE_FLOAT, 32, 1}},   {"<f8", {GDAP_DTYPE_FLOAT, 64, 1}},
    {"<c8", {GDAP_DTYPE_COMPLEX, 64, 1}}, {"<c16", {GDAP_DTYPE_COMPLEX, 128, 1}},
};

const char* descr_of(gdap_dtype t) {
  for (const NpyType& n : kNpyTypes) {
    if (n.dtype.code == t.code && n.dtype.bits == t.bits && n.dtype.lanes == t.lanes) return n.descr;
  }
  return nullptr;
}

gdap_dtype dtype_of(const Value& descr, const std::string& name) {
  if (descr.kind != Value::kStr) {
    fail(GDAP_ERR_UNSUPPORTED, "{}: .npy header at byte {}: 'descr' is {} (a structured dtype?): gdap reads plain numeric dtypes only",
         name, descr.offset, descr.kind_name());
  }
  std::string d = descr.s;
  if (d.size() > 1 && d[0] == '=') d[0] = '<';  // native order, which gdap's hosts are
  const bool one_byte = d.size() == 3 && d[2] == '1';
  if (one_byte && d[0] != '|') d[0] = '|';  // a byte has no order: '<i1' and '>i1' mean '|i1'
  for (const NpyType& n : kNpyTypes) {
    if (d == n.descr) return n.dtype;
  }
  if (d.size() > 1 && d[0] == '>') {
    fail(GDAP_ERR_UNSUPPORTED, "{}: .npy header at byte {}: descr '{}' is big-endian: gdap reads little-endian payloads",
         name, descr.offset, descr.s);
  }
  fail(GDAP_ERR_UNSUPPORTED, "{}: .npy header at byte {}: descr '{}' is not a dtype gdap reads "
       "(bool, int8-64, uint8-64, float16/32/64, complex64/128)", name, descr.offset, descr.s);
}

uint32_t little(std::span<const unsigned char> b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(b[at + i]) << (8 * i);
  return v;
}

std::string repr_int_tuple(const std::vector<int64_t>& v) {
  if (v.size() == 1) return fmt::format("({},)", v[0]);
  return fmt::format("({})", fmt::join(v, ", "));
}

std::string dim_repr(const gdap_dim& d) {
  std::string s = fmt::format("{{'dist_type': '{}', 'size': {}, 'proc_grid_rank': {}, 'proc_grid_size': {}",
                              d.dist_type == GDAP_DIST_CYCLIC ? 'c' : d.dist_type == GDAP_DIST_UNSTRUCTURED ? 'u' : 'b',
                              d.size, d.proc_grid_rank, d.proc_grid_size);
  if (d.dist_type == GDAP_DIST_CYCLIC) {
    s += fmt::format(", 'start': {}", d.start);
    if ((d.given & GDAP_KEY_BLOCK_SIZE) != 0) s += fmt::format(", 'block_size': {}", d.block_size);
  } else if (d.dist_type == GDAP_DIST_UNSTRUCTURED) {
    s += fmt::format(", 'indices': [{}]", fmt::join(std::span(d.indices, static_cast<size_t>(d.num_indices)), ", "));
    if ((d.given & GDAP_KEY_ONE_TO_ONE) != 0) s += d.one_to_one != 0 ? ", 'one_to_one': True" : ", 'one_to_one': False";
  } else {
    s += fmt::format(", 'start': {}, 'stop': {}", d.start, d.stop);
    if ((d.given & GDAP_KEY_PADDING) != 0) s += fmt::format(", 'padding': ({}, {})", d.padding[0], d.padding[1]);
    if ((d.given & GDAP_KEY_PERIODIC) != 0) s += d.periodic != 0 ? ", 'periodic': True" : ", 'periodic': False";
  }
  return s + "}";
}

}  // namespace

DnpyHeader parse_dnpy(std::span<const unsigned char> head, int64_t file_size, const std::string& name) {
  const auto size = static_cast<int64_t>(head.size());
  if (size > file_size) fail(GDAP_ERR_INTERNAL, "{}: {} header bytes of a {}-byte file", name, size, file_size);
  if (size < kDnpyMagicLen + 4) {
    fail(GDAP_ERR_IO, "{}: truncated: {} bytes, shorter than the {}-byte .dnpy preamble", name, file_size, kDnpyMagicLen + 4);
  }
  if (std::memcmp(head.data(), kDnpyMagic, kDnpyMagicLen) != 0) {
    fail(GDAP_ERR_IO, "{}: bad magic at byte 0: not a .dnpy file (expected \\x93DARRY)", name);
  }
  if (head[6] != 1 || head[7] != 0) {
    fail(GDAP_ERR_UNSUPPORTED, "{}: .dnpy format version {}.{} at byte 6: gdap reads version 1.0", name, head[6], head[7]);
  }
  const int64_t hlen = little(head, 8, 2);
  const int64_t body = kDnpyMagicLen + 4;
  if (body + hlen > size) {
    fail(GDAP_ERR_IO, "{}: header length {} at byte 8 runs past the end of the file ({} bytes)", name, hlen, file_size);
  }
  const std::string_view text(reinterpret_cast<const char*>(head.data()) + body, static_cast<size_t>(hlen));
  Reader header(text, body, name, ".dnpy header");
  const Value dict = header.document();
  if (dict.kind != Value::kDict) fail(GDAP_ERR_IO, "{}: .dnpy header at byte {}: must be a dict, not {}", name, body, dict.kind_name());
  const Fields f(dict, name, ".dnpy header");
  f.only({"__version__", "dim_data"});
  DnpyHeader out;
  out.version = f.typed(f.need("__version__"), "__version__", Value::kStr).s;
  try {
    out.version = checked_version(out.version.c_str());
  } catch (const Error& e) {
    fail(e.status(), "{}: __version__: {}", name, e.what());
  }
  const Value& dim_data = f.typed(f.need("dim_data"), "dim_data", Value::kSeq);
  // The dictionaries are read here, before the .npy part, so that errors come in file order (the
  // first thing wrong in the file is the one reported); they are checked against the shape below.
  std::vector<gdap_dim> dims;
  std::vector<std::vector<int64_t>> indices(dim_data.items.size());
  for (size_t i = 0; i < dim_data.items.size(); ++i) dims.push_back(dim_from(dim_data.items[i], static_cast<int64_t>(i), indices[i], name));

  // The .npy file.
  const int64_t npy = body + hlen;
  if (size < npy + 10) fail(GDAP_ERR_IO, "{}: truncated at byte {}: the .npy preamble needs 10 bytes, {} are left", name, npy, file_size - npy);
  if (std::memcmp(head.data() + npy, "\x93NUMPY", 6) != 0) fail(GDAP_ERR_IO, "{}: bad magic at byte {}: not a .npy payload (expected \\x93NUMPY)", name, npy);
  const unsigned major = head[static_cast<size_t>(npy) + 6];
  const unsigned minor = head[static_cast<size_t>(npy) + 7];
  if (major < 1 || major > 3 || minor != 0) fail(GDAP_ERR_UNSUPPORTED, "{}: .npy format version {}.{} at byte {}: gdap reads 1.0, 2.0, 3.0", name, major, minor, npy + 6);
  const int64_t len_bytes = major == 1 ? 2 : 4;
  if (size < npy + 8 + len_bytes) fail(GDAP_ERR_IO, "{}: truncated at byte {}: the .npy header length is cut off", name, npy + 8);
  const int64_t nlen = little(head, static_cast<size_t>(npy + 8), static_cast<size_t>(len_bytes));
  if (nlen > kMaxNpyHeader) fail(GDAP_ERR_IO, "{}: .npy header length {} at byte {} is over gdap's limit of {} bytes", name, nlen, npy + 8, kMaxNpyHeader);
  const int64_t nbody = npy + 8 + len_bytes;
  if (nbody + nlen > size) fail(GDAP_ERR_IO, "{}: .npy header length {} at byte {} runs past the end of the file ({} bytes)", name, nlen, npy + 8, file_size);
  Reader npy_reader(std::string_view(reinterpret_cast<const char*>(head.data()) + nbody, static_cast<size_t>(nlen)), nbody, name, ".npy header");
  const Value nd = npy_reader.document();
  if (nd.kind != Value::kDict) fail(GDAP_ERR_IO, "{}: .npy header at byte {}: must be a dict, not {}", name, nbody, nd.kind_name());
  const Fields nf(nd, name, ".npy header");
  nf.only({"descr", "fortran_order", "shape"});
  out.dtype = dtype_of(nf.need("descr"), name);
  out.fortran_order = nf.typed(nf.need("fortran_order"), "fortran_order", Value::kBool).i != 0;
  const Value& shape = nf.typed(nf.need("shape"), "shape", Value::kSeq);
  int64_t count = 1;
  for (const Value& e : shape.items) {
    if (e.kind != Value::kInt || e.i < 0) fail(GDAP_ERR_IO, "{}: .npy header at byte {}: key 'shape' must hold integers >= 0", name, e.offset);
    out.shape.push_back(e.i);
    count = checked_mul(count, e.i, "the .npy element count");
  }
  out.payload_offset = nbody + nlen;
  out.payload_bytes = checked_mul(count, out.dtype.bits / 8, "the .npy payload size");
  const int64_t left = file_size - out.payload_offset;
  if (left < out.payload_bytes) {
    fail(GDAP_ERR_IO, "{}: truncated: the payload at byte {} needs {} bytes (shape {}), the file holds {}", name,
         out.payload_offset, out.payload_bytes, repr_int_tuple(out.shape), left);
  }
  if (left > out.payload_bytes) {
    fail(GDAP_ERR_IO, "{}: {} bytes after the payload (shape {} needs {} from byte {})", name, left - out.payload_bytes,
         repr_int_tuple(out.shape), out.payload_bytes, out.payload_offset);
  }

  // dim_data against the payload's shape.
  if (dim_data.items.size() != out.shape.size()) {
    fail(GDAP_ERR_PROTOCOL, "{}: dim_data has {} dictionaries, the payload's shape {} has {} dimensions", name,
         dim_data.items.size(), repr_int_tuple(out.shape), out.shape.size());
  }
  try {
    out.dims = dims_for_shape(dims.data(), static_cast<int64_t>(dims.size()), out.shape);
  } catch (const Error& e) {
    fail(e.status(), "{}: dim_data does not describe the payload (shape {}): {}", name, repr_int_tuple(out.shape), e.what());
  }
  return out;
}

std::string dnpy_heads(const std::string& version, const DimData& dims, gdap_dtype dtype, const std::vector<int64_t>& shape) {
  const char* descr = descr_of(dtype);
  if (descr == nullptr) {
    fail(GDAP_ERR_UNSUPPORTED, "dtype {} has no NumPy .npy code", dtype_text(dtype));
  }
  std::vector<std::string> reprs;
  for (int64_t i = 0; i < dims.ndim(); ++i) reprs.push_back(dim_repr(dims[i]));
  std::string dim_data = reprs.size() == 1 ? "(" + reprs[0] + ",)" : "(" + fmt::format("{}", fmt::join(reprs, ", ")) + ")";
  std::string dict = fmt::format("{{'__version__': '{}', 'dim_data': {}, }}", version, dim_data);
  const size_t pad = 16 - (static_cast<size_t>(kDnpyMagicLen) + 4 + dict.size() + 1) % 16;
  dict += std::string(pad, ' ') + "\n";
  if (dict.size() > 65535) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the .dnpy header would be {} bytes, over the format's 65535 (dim_data too long, "
         "e.g. many unstructured indices)", dict.size());
  }
  std::string out(kDnpyMagic, kDnpyMagicLen);
  out += {'\x01', '\x00', static_cast<char>(dict.size() & 0xff), static_cast<char>(dict.size() >> 8)};
  out += dict;

  std::string npy = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, repr_int_tuple(shape));
  const bool v2 = 10 + npy.size() + 1 > 65535;
  const size_t pre = v2 ? 12 : 10;
  npy += std::string(64 - (pre + npy.size() + 1) % 64, ' ') + "\n";
  out += std::string("\x93NUMPY", 6);
  out.push_back(v2 ? '\x02' : '\x01');
  out.push_back('\x00');
  for (size_t i = 0; i < pre - 8; ++i) out.push_back(static_cast<char>((npy.size() >> (8 * i)) & 0xff));
  out += npy;
  return out;
}

}  // namespace gdap::io
