// Protocol version strings (see version.hpp): "major.minor.patch", three non-empty runs of ASCII
// digits, each fitting in int. gdap reads 0.10.x only: a newer minor may add rules gdap does not
// know, and 0.9 means other things by the same keys (its dist_type 'n'; its periodic padding is
// communication padding where 0.10's is boundary padding), which SemVer allows below 1.0.
#include "protocol/version.hpp"

#include "core/error.hpp"

#include <climits>
#include <string>
#include <string_view>

namespace gdap {
namespace {

// Parses one part at `p`; false unless it is 1+ ASCII digits whose value fits in int.
bool parse_part(const char*& p, int& value) {
  if (*p < '0' || *p > '9') return false;
  long long v = 0;
  while (*p >= '0' && *p <= '9') {
    v = v * 10 + (*p - '0');
    if (v > INT_MAX) return false;
    ++p;
  }
  value = static_cast<int>(v);
  return true;
}

// The caller's string for a message: the first 40 bytes, non-printable ones as \xNN.
std::string quoted(const char* version) {
  std::string out;
  size_t n = 0;
  for (const char* p = version; *p != '\0'; ++p, ++n) {
    if (n == 40) return out + "...";
    const auto c = static_cast<unsigned char>(*p);
    out += (c >= 0x20 && c < 0x7f) ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  return out;
}

}  // namespace

void check_protocol_version(const char* version) {
  require(version, "version");
  const char* p = version;
  int major = 0, minor = 0, patch = 0;
  const bool ok = parse_part(p, major) && *p++ == '.' && parse_part(p, minor) && *p++ == '.' &&
                  parse_part(p, patch) && *p == '\0';
  if (!ok) {
    fail(GDAP_ERR_INVALID_ARGUMENT,
         "protocol version '{}' is not 'major.minor.patch' (three dot-separated decimal numbers, each fitting in int)",
         quoted(version));
  }
  if (major != GDAP_PROTOCOL_MAJOR) {
    fail(GDAP_ERR_VERSION, "protocol version {} has major {}; gdap knows major {} up to {}.{}", quoted(version), major,
         GDAP_PROTOCOL_MAJOR, GDAP_PROTOCOL_MAJOR, GDAP_PROTOCOL_MINOR);
  }
  if (minor > GDAP_PROTOCOL_MINOR) {
    fail(GDAP_ERR_VERSION, "protocol version {} has minor {}, newer than gdap knows ({}.{})", quoted(version), minor,
         GDAP_PROTOCOL_MAJOR, GDAP_PROTOCOL_MINOR);
  }
  if (minor < GDAP_PROTOCOL_MINOR) {
    fail(GDAP_ERR_VERSION,
         "protocol version {} is older than {}.{}, the only minor gdap reads: before 1.0 a minor may change what a "
         "dictionary means (SemVer 2.0.0, item 4), and 0.9 did (dist_type 'n'; periodic padding read as communication "
         "padding), so gdap refuses it rather than read it as {}.{}",
         quoted(version), GDAP_PROTOCOL_MAJOR, GDAP_PROTOCOL_MINOR, GDAP_PROTOCOL_MAJOR, GDAP_PROTOCOL_MINOR);
  }
}

}  // namespace gdap
