#include "core/setting.hpp"

#include "core/error.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <system_error>
#include <string_view>

namespace gdap {
namespace {

bool digits_alone(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// `text`'s digits as a number, or nullopt beyond int64.
std::optional<int64_t> digits_value(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int64_t> whole_setting(const WholeSetting& setting) {
  const char* env = std::getenv(setting.name);
  if (env == nullptr) return std::nullopt;
  const std::string_view text(env);
  if (setting.negative != nullptr && text.size() > 1 && text[0] == '-' && digits_alone(text.substr(1))) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}='{}': {}", setting.name, text, setting.negative);
  }
  const std::optional<int64_t> value = digits_alone(text) ? digits_value(text) : std::nullopt;
  if (!value || *value < setting.least || *value > setting.most) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}='{}': not {}", setting.name, text, setting.rule);
  }
  return value;
}

std::optional<size_t> choice_setting(const char* name, std::initializer_list<std::string_view> choices) {
  const char* env = std::getenv(name);
  if (env == nullptr) return std::nullopt;
  size_t i = 0;
  for (const std::string_view choice : choices) {
    if (choice == env) return i;
    ++i;
  }
  fail(GDAP_ERR_INVALID_ARGUMENT, "{}='{}': not one of {}", name, env, fmt::join(choices, ", "));
}

}  // namespace gdap
