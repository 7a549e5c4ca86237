// Element types and shapes (see dtype.hpp).
#include "core/dtype.hpp"

#include "core/error.hpp"

namespace gdap {

bool same_dtype(gdap_dtype a, gdap_dtype b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

std::string dtype_text(gdap_dtype d) { return fmt::format("(code {}, {} bits, {} lanes)", d.code, d.bits, d.lanes); }

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
  return static_cast<int64_t>(dtype.bits / 8) * dtype.lanes;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t n : shape) text += (text.empty() ? "" : " x ") + std::to_string(n);
  return text.empty() ? "0-d" : text;
}

}  // namespace gdap
