// Settings read from the environment (GDAP_*): the whole-number ones parsed one way everywhere, so
// that " 5", "+5", "1e3", "12abc", "" or a number beyond int64 is refused alike, naming the variable,
// its value and what it must be.
#pragma once

#include <cstdint>
#include <optional>

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

}  // namespace gdap
