// The protocol version string "major.minor.patch": which ones gdap reads.
#pragma once

namespace gdap {

// Throws GDAP_ERR_INVALID_ARGUMENT for a malformed string and GDAP_ERR_VERSION for another major
// or another minor than GDAP_PROTOCOL_MINOR (any patch is read).
void check_protocol_version(const char* version);

}  // namespace gdap
