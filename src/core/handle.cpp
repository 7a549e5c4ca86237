#include "core/handle.hpp"

#include <array>

namespace gdap {

Handle::~Handle() {
  // Volatile: the store precedes the free, and a compiler may drop a plain store to an object
  // whose lifetime is ending.
  *static_cast<volatile uint64_t*>(&tag_) = 0;
}

namespace {

constexpr std::array<std::string_view, 7> kKinds = {
    handle_name<gdap_map>,  handle_name<gdap_array>,    handle_name<gdap_comm>, handle_name<gdap_plan>,
    handle_name<gdap_halo>, handle_name<gdap_exchange>, handle_name<gdap_gemm>};

std::string_view kind_of(uint64_t tag) {
  for (std::string_view k : kKinds) {
    if (handle_tag(k) == tag) return k;
  }
  return {};
}

}  // namespace

void refuse_handle(const char* what, std::string_view expected, uint64_t found) {
  const std::string_view kind = kind_of(found);
  if (kind.empty()) fail(GDAP_ERR_INVALID_ARGUMENT, "{}: not a {} handle (destroyed or not a gdap handle)", what, expected);
  fail(GDAP_ERR_INVALID_ARGUMENT, "{}: not a {} handle (it is a {})", what, expected, kind);
}

}  // namespace gdap
