// Protocol version strings (see version.hpp).
#include "protocol/version.hpp"

#include "core/error.hpp"

#include <string>

namespace gdap {
namespace {

// Parses one dot-separated part of "major.minor.patch"; false if it is not a small decimal.
bool parse_part(const char*& p, int& value) {
  if (*p < '0' || *p > '9') return false;
  long long v = 0;
  while (*p >= '0' && *p <= '9') {
    v = v * 10 + (*p - '0');
    if (v > 1000000) return false;
    ++p;
  }
  value = static_cast<int>(v);
  return true;
}

}  // namespace

void check_protocol_version(const char* version) {
  require(version, "version");
  const char* p = version;
  int major = 0, minor = 0, patch = 0;
  const bool ok = parse_part(p, major) && *p++ == '.' && parse_part(p, minor) && *p++ == '.' &&
                  parse_part(p, patch) && *p == '\0';
  if (!ok) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "protocol version '{}' is not 'major.minor.patch' with decimal numbers",
         std::string(version).substr(0, 40));
  }
  if (major != GDAP_PROTOCOL_MAJOR || minor > GDAP_PROTOCOL_MINOR) {
    fail(GDAP_ERR_VERSION, "protocol version {} is not one gdap knows: it reads major {} up to {}.{}", version, GDAP_PROTOCOL_MAJOR,
         GDAP_PROTOCOL_MAJOR, GDAP_PROTOCOL_MINOR);
  }
}

}  // namespace gdap
