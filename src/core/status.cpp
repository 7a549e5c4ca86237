// Status names, the thread-local last error, and the version queries of the C ABI.
#include "core/error.hpp"

#include <string>

namespace gdap {
namespace {
thread_local std::string last_error;
}

void set_last_error(gdap_status status, const char* message) noexcept {
  try {
    last_error = message;
  } catch (...) {
    (void)status;  // keep the previous text rather than throw out of a noexcept path
  }
}

}  // namespace gdap

extern "C" {

GDAP_API const char* gdap_status_string(gdap_status status) {
  switch (status) {
    case GDAP_SUCCESS: return "GDAP_SUCCESS";
    case GDAP_ERR_INVALID_ARGUMENT: return "GDAP_ERR_INVALID_ARGUMENT";
    case GDAP_ERR_PROTOCOL: return "GDAP_ERR_PROTOCOL";
    case GDAP_ERR_VERSION: return "GDAP_ERR_VERSION";
    case GDAP_ERR_OVERFLOW: return "GDAP_ERR_OVERFLOW";
    case GDAP_ERR_OUT_OF_RANGE: return "GDAP_ERR_OUT_OF_RANGE";
    case GDAP_ERR_NOT_FOUND: return "GDAP_ERR_NOT_FOUND";
    case GDAP_ERR_BUFFER_TOO_SMALL: return "GDAP_ERR_BUFFER_TOO_SMALL";
    case GDAP_ERR_NO_MEMORY: return "GDAP_ERR_NO_MEMORY";
    case GDAP_ERR_UNSUPPORTED: return "GDAP_ERR_UNSUPPORTED";
    case GDAP_ERR_DEVICE: return "GDAP_ERR_DEVICE";
    case GDAP_ERR_COMM: return "GDAP_ERR_COMM";
    case GDAP_ERR_REMOTE: return "GDAP_ERR_REMOTE";
    case GDAP_ERR_TIMEOUT: return "GDAP_ERR_TIMEOUT";
    case GDAP_ERR_IO: return "GDAP_ERR_IO";
    case GDAP_ERR_INTERNAL: return "GDAP_ERR_INTERNAL";
    case GDAP_ERR_INTERRUPTED: return "GDAP_ERR_INTERRUPTED";
  }
  return "GDAP_ERR_UNKNOWN_STATUS";
}

GDAP_API const char* gdap_last_error(void) { return gdap::last_error.c_str(); }

GDAP_API gdap_status gdap_last_error_set(gdap_status status, const char* message) {
  gdap::set_last_error(status, message != nullptr ? message : "");
  return status;
}

GDAP_API int gdap_version(void) { return GDAP_VERSION_NUMBER; }

#define GDAP_STR2(x) #x
#define GDAP_STR(x) GDAP_STR2(x)
GDAP_API const char* gdap_version_string(void) {
  return GDAP_STR(GDAP_VERSION_MAJOR) "." GDAP_STR(GDAP_VERSION_MINOR) "." GDAP_STR(GDAP_VERSION_PATCH);
}

}  // extern "C"
