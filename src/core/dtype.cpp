// Element types and shapes (see dtype.hpp).
#include "core/dtype.hpp"

#include "core/error.hpp"

namespace gdap {

namespace {

// The codes of gdap.h's enum, each with the widths DLPack gives it; anything else is refused, so
// that a garbage code never passes as "some type of this many bytes".
void check_code(gdap_dtype dtype) {
  const int bits = dtype.bits;
  const char* name = nullptr;
  bool known_width = false;
  switch (dtype.code) {
    case GDAP_DTYPE_INT:
    case GDAP_DTYPE_UINT:
      name = dtype.code == GDAP_DTYPE_INT ? "int" : "uint";
      known_width = bits == 8 || bits == 16 || bits == 32 || bits == 64;
      break;
    case GDAP_DTYPE_FLOAT: name = "float", known_width = bits == 16 || bits == 32 || bits == 64; break;
    case GDAP_DTYPE_BFLOAT: name = "bfloat", known_width = bits == 16; break;
    case GDAP_DTYPE_COMPLEX: name = "complex", known_width = bits == 32 || bits == 64 || bits == 128; break;
    case GDAP_DTYPE_BOOL: name = "bool", known_width = bits == 8; break;
    default:
      fail(GDAP_ERR_UNSUPPORTED, "dtype code {} ({} bits) is not one gdap knows: int (0), uint (1), float (2), "
           "bfloat (4), complex (5) or bool (6)", dtype.code, bits);
  }
  if (!known_width) {
    fail(GDAP_ERR_UNSUPPORTED, "dtype (code {}, {} bits): {} is not {} bits wide (int and uint: 8, 16, 32, 64; "
         "float: 16, 32, 64; bfloat: 16; complex: 32, 64, 128; bool: 8)", dtype.code, bits, name, bits);
  }
}

}  // namespace

bool same_dtype(gdap_dtype a, gdap_dtype b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

std::string dtype_text(gdap_dtype d) {
  const char* kind = nullptr;
  switch (d.code) {
    case GDAP_DTYPE_INT: kind = "int"; break;
    case GDAP_DTYPE_UINT: kind = "uint"; break;
    case GDAP_DTYPE_FLOAT: kind = "float"; break;
    case GDAP_DTYPE_BFLOAT: kind = "bfloat"; break;
    case GDAP_DTYPE_COMPLEX: kind = "complex"; break;
    case GDAP_DTYPE_BOOL: kind = d.bits == 8 ? "bool" : nullptr; break;
    default: break;
  }
  if (kind == nullptr || d.bits == 0 || d.lanes < 1) {  // no name: the raw codes say what it was
    return fmt::format("(code {}, {} bits, {} lanes)", d.code, d.bits, d.lanes);
  }
  const std::string bits = d.code == GDAP_DTYPE_BOOL ? "" : std::to_string(d.bits);
  return d.lanes == 1 ? fmt::format("{}{}", kind, bits) : fmt::format("{}{}x{}", kind, bits, d.lanes);
}

int64_t element_size(gdap_dtype dtype) {
  if (dtype.lanes < 1) {
    fail(GDAP_ERR_UNSUPPORTED, "dtype (code {}, {} bits) with {} lanes: at least 1 is needed", dtype.code, dtype.bits,
         dtype.lanes);
  }
  if (dtype.bits == 0 || dtype.bits % 8 != 0) {
    fail(GDAP_ERR_UNSUPPORTED, "dtype (code {}, {} bits): only whole-byte element types are supported", dtype.code,
         dtype.bits);
  }
  if (dtype.code == GDAP_DTYPE_BOOL && dtype.bits != 8) {
    fail(GDAP_ERR_UNSUPPORTED, "bool dtype of {} bits: only 8-bit bool is supported", dtype.bits);
  }
  check_code(dtype);
  return static_cast<int64_t>(dtype.bits / 8) * dtype.lanes;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t n : shape) text += (text.empty() ? "" : " x ") + std::to_string(n);
  return text.empty() ? "0-d" : text;
}

}  // namespace gdap
