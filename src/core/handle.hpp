// Kind tags on the opaque C handles. Every handle type derives from Tagged<itself>, whose base
// Handle holds a 64-bit tag naming the kind; handle() checks it at each C entry point, so that a
// gdap_array passed where a gdap_map is expected (a mistake that type(c_ptr) in Fortran and
// Ptr{Cvoid} in Julia let through without a warning) is refused instead of read as a map.
//
// Handle is polymorphic on purpose: gdap_comm has virtual functions, so its vtable pointer comes
// first; a virtual destructor in the common base puts the vtable pointer first in every handle
// and the tag at one offset for all kinds (Handle is each kind's primary base, at offset 0).
//
// What this catches is best effort, not a guarantee:
// - Reading the tag of a wrong-kind gdap handle is sound in practice: every handle has at least
//   Handle's bytes readable at its address. Reading the tag through a pointer that is not a gdap
//   handle at all is undefined behaviour (it may be unmapped memory); nothing can check that.
// - A destroyed handle's tag is cleared before its memory is freed, so a use after destroy, or a
//   second destroy, is refused while the allocator has not yet given the memory to a new handle
//   of the same kind. The read itself touches freed memory (AddressSanitizer reports it).
#pragma once

#include "core/error.hpp"

#include <cstdint>
#include <string_view>
#include <type_traits>

struct gdap_map;
struct gdap_array;
struct gdap_comm;
struct gdap_plan;
struct gdap_halo;
struct gdap_exchange;
struct gdap_gemm;

namespace gdap {

// The C name of each handle kind (empty: not a handle); the tag is derived from it.
template <typename T>
inline constexpr std::string_view handle_name{};
template <> inline constexpr std::string_view handle_name<gdap_map> = "gdap_map";
template <> inline constexpr std::string_view handle_name<gdap_array> = "gdap_array";
template <> inline constexpr std::string_view handle_name<gdap_comm> = "gdap_comm";
template <> inline constexpr std::string_view handle_name<gdap_plan> = "gdap_plan";
template <> inline constexpr std::string_view handle_name<gdap_halo> = "gdap_halo";
template <> inline constexpr std::string_view handle_name<gdap_exchange> = "gdap_exchange";
template <> inline constexpr std::string_view handle_name<gdap_gemm> = "gdap_gemm";

template <typename T>
inline constexpr bool is_handle = !handle_name<std::remove_cv_t<T>>.empty();

// FNV-1a of the kind's name: distinct per kind, and unlike 0 (a destroyed handle's tag).
constexpr uint64_t handle_tag(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  return h;
}

class Handle {
 public:
  Handle(const Handle&) = default;
  Handle& operator=(const Handle&) = default;
  virtual ~Handle();  // clears the tag
  uint64_t tag() const { return tag_; }

 protected:
  explicit Handle(uint64_t tag) : tag_(tag) {}

 private:
  uint64_t tag_;
};

template <typename T>
class Tagged : public Handle {
 protected:
  Tagged() : Handle(handle_tag(handle_name<T>)) {}
};

// Throws GDAP_ERR_INVALID_ARGUMENT: "<what>: not a <expected> handle (it is a <kind>)", or
// "(destroyed or not a gdap handle)" when `found` is no kind's tag.
[[noreturn]] void refuse_handle(const char* what, std::string_view expected, uint64_t found);

// The tag at a non-NULL `pointer`, read through T's Handle base (at offset 0 in every kind).
template <typename T>
uint64_t tag_at(T* pointer) {
  static_assert(is_handle<T>);
  return static_cast<const Handle&>(*pointer).tag();
}

template <typename T>
inline constexpr uint64_t tag_of = handle_tag(handle_name<std::remove_cv_t<T>>);

// The handle `pointer` refers to, after checking it is not NULL and carries T's tag (one compare).
template <typename T>
T& handle(T* pointer, const char* what) {
  if (pointer == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "{} is NULL", what);
  const uint64_t tag = tag_at(pointer);
  if (tag != tag_of<T>) refuse_handle(what, handle_name<std::remove_cv_t<T>>, tag);
  return *pointer;
}

// `pointer` if it is a T handle, else NULL, without throwing: for what a collective call reads
// before its agreement, whose checks then refuse the handle through handle().
template <typename T>
T* if_tagged(T* pointer) {
  return pointer != nullptr && tag_at(pointer) == tag_of<T> ? pointer : nullptr;
}

// As handle(), but NULL is allowed and returned as is (optional arguments, destroy functions).
template <typename T>
T* handle_or_null(T* pointer, const char* what) {
  return pointer != nullptr ? &handle(pointer, what) : nullptr;
}

// A handle's NULL check alone would skip its tag: use handle() (a compile error, not a silent gap).
// enable_if rather than requires: CUDA sources including this header are C++17.
template <typename T, std::enable_if_t<is_handle<T>, int> = 0>
void require(const T* pointer, const char* what) = delete;

}  // namespace gdap
