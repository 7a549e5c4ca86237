#include "io/agreed.hpp"

#include "core/dtype.hpp"
#include "maps/map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <system_error>

namespace gdap::io {
namespace {

namespace fs = std::filesystem;

// `path` made absolute against this rank's working folder and free of '.' and '..', lexically: its
// symbolic links are not followed, since ranks on other hosts may reach one shared store through
// different links or mount points (following them refused such correct programs); where the
// working folder cannot be read, the path as written.
std::string resolved(const std::string& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

}  // namespace

void CallFields::add(std::string name, std::string value) { fields_.emplace_back(std::move(name), std::move(value)); }

void CallFields::add_path(const std::string& name, const std::string& path) {
  add(name, fmt::format("'{}'", path));
  add(name + " (resolved on that rank)", fmt::format("'{}'", resolved(path)));
}

void CallFields::add_dtype(gdap_dtype dtype) { add("dtype", dtype_text(dtype)); }

void CallFields::add_shape(const std::vector<int64_t>& shape) { add("global shape", fmt::format("({})", fmt::join(shape, ", "))); }

void CallFields::add_map(const gdap_map& map) {
  add_shape(map.global_shape);
  add("map", fmt::format("with digest {:016x}", digest(map)));
}

std::string CallFields::token() const {
  std::vector<Field> fields;
  for (const auto& [name, value] : fields_) fields.push_back(Field{name, value});
  return field_token(fields);
}

Share share_of(const CallFields& fields) { return Share{fields.token(), {}}; }

Mismatch fields_mismatch(const char* call) {
  return [call](size_t rank, std::string_view theirs, std::string_view first) {
    if (const auto d = first_difference(theirs, first)) {
      return fmt::format("{}: rank {} passed {} {}, rank 0 {}: every rank must pass the same", call, rank, d->name,
                         d->theirs, d->first);
    }
    return fmt::format("{}: rank {} passed arguments unlike rank 0's: every rank must pass the same", call, rank);
  };
}

}  // namespace gdap::io
