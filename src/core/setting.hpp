// Settings read from the environment (GDAP_*), parsed one way everywhere: the whole-number ones so
// that " 5", "+5", "1e3", "12abc", "" or a number beyond int64 is refused alike, the named choices
// so that "", "Pull" or "garbage" is refused alike (not taken as the default), each naming the
// variable, its value and what it must be.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace gdap {

// A whole-number setting: decimal digits alone, from `least` to `most`.
struct WholeSetting {
  const char* name;                // the variable, e.g. "GDAP_IO_THREADS"
  int64_t least, most;             // the values allowed
  const char* rule;                // what it must be, e.g. "a whole number from 1 to 64"
  const char* negative = nullptr;  // what a negative number is told instead, where it has words of its own
};

// The setting's value, or nullopt where the variable is unset. Anything else (the empty string
// too: set, but to no number) throws GDAP_ERR_INVALID_ARGUMENT "NAME='value': not RULE", or
// "NAME='value': NEGATIVE" for a negative whole number where `negative` is given.
std::optional<int64_t> whole_setting(const WholeSetting& setting);

// A setting of named choices: the index in `choices` of the variable's value (exactly, case
// included), or nullopt where the variable is unset. Anything else, the empty string too, throws
// GDAP_ERR_INVALID_ARGUMENT "NAME='value': not one of a, b, c".
std::optional<size_t> choice_setting(const char* name, std::initializer_list<std::string_view> choices);

}  // namespace gdap
