// The one policy by which gdap reads and writes the ABI's versioned structs: those that begin with
// `uint32_t struct_size` (gdap_dim, the options and the stats structs), so that a caller compiled
// against another release works (docs/abi.md):
//  - a struct_size below the struct's size in the first release that had it, or not a multiple of
//    8 (the structs' alignment), is refused: no caller ever compiled such a struct (it is a field
//    left uninitialised);
//  - an older caller's smaller struct is read as far as it goes, the fields it lacks taking their
//    defaults (the _INIT macro's values); a stats struct is written as far as it goes;
//  - a newer caller's larger struct is read and written up to this release's size only, and its
//    claim is bounded: a struct_size over kMaxStructSize is refused (0x7FFFFFF8 was taken as a newer
//    struct, and an array of gdap_dim read 2 GiB past the caller's memory).
#pragma once

#include "core/error.hpp"

#include <gdap/gdap.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace gdap {

// No versioned struct of gdap will ever be larger: a claim above this is not a struct_size.
constexpr uint32_t kMaxStructSize = GDAP_MAX_STRUCT_SIZE;

// The size of each versioned struct in the first release that had it: the least a caller may
// claim. A struct that grows keeps its entry; a new struct adds one.
template <typename T>
constexpr uint32_t kFirstSize = 0;
template <>
inline constexpr uint32_t kFirstSize<gdap_dim> = 104;
template <>
inline constexpr uint32_t kFirstSize<gdap_plan_stats> = 88;
template <>
inline constexpr uint32_t kFirstSize<gdap_halo_options> = 16;
template <>
inline constexpr uint32_t kFirstSize<gdap_halo_stats> = 64;
template <>
inline constexpr uint32_t kFirstSize<gdap_zarr_options> = 24;
template <>
inline constexpr uint32_t kFirstSize<gdap_gemm_options> = 16;
template <>
inline constexpr uint32_t kFirstSize<gdap_gemm_stats> = 112;
template <>
inline constexpr uint32_t kFirstSize<gdap_axis_layout> = 56;

// Throws GDAP_ERR_INVALID_ARGUMENT, naming `field` (the caller's struct_size, as "dims[0].struct_size")
// and `init` (what sets it), unless `claimed` is a struct_size the policy takes for a T. Returns the
// bytes to read or write: the caller's size, at most this release's.
template <typename T>
size_t struct_bytes(uint32_t claimed, const std::string& field, const char* init) {
  static_assert(kFirstSize<T> != 0 && kFirstSize<T> <= sizeof(T) && sizeof(T) <= kMaxStructSize);
  if (claimed < kFirstSize<T>) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} is {}; set it with {} (it must be at least {}, the size of the first "
         "release's struct, and a multiple of 8)", field, claimed, init, kFirstSize<T>);
  }
  if (claimed % 8 != 0) fail(GDAP_ERR_INVALID_ARGUMENT, "{} is {}, not a multiple of 8; set it with {}", field, claimed, init);
  if (claimed > kMaxStructSize) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} is {} ({:#x}), more than any gdap struct will ever be ({} bytes): not a "
         "struct_size; set it with {}", field, claimed, claimed, kMaxStructSize, init);
  }
  return std::min<size_t>(claimed, sizeof(T));
}

// A caller's in-struct `*caller` (named `name` in messages): `defaults` with as many of the caller's
// bytes over it as its struct_size covers; struct_size set to this release's.
template <typename T>
T read_versioned(const T* caller, T defaults, const char* name, const char* init) {
  require(caller, name);
  std::memcpy(&defaults, caller, struct_bytes<T>(caller->struct_size, std::string(name) + "->struct_size", init));
  defaults.struct_size = sizeof(T);
  return defaults;
}

// Writes `value` to a caller's out-struct as far as its struct_size covers; the struct_size written
// is the number of bytes written.
template <typename T>
void write_versioned(T* caller, T value, const char* name, const char* init) {
  require(caller, name);
  const size_t bytes = struct_bytes<T>(caller->struct_size, std::string(name) + "->struct_size", init);
  value.struct_size = static_cast<uint32_t>(bytes);
  std::memcpy(caller, &value, bytes);
}

}  // namespace gdap
