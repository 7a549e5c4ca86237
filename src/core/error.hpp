// Errors inside gdap: C++ code throws gdap::Error; every C entry point runs its body through
// gdap::guard, which turns any exception into a gdap_status and the thread's last-error text.
// No exception ever crosses the C ABI.
#pragma once

#include <gdap/gdap.h>

#include <fmt/format.h>

#include <exception>
#include <new>
#include <string>
#include <utility>

namespace gdap {

class Error : public std::exception {
 public:
  Error(gdap_status status, std::string message) : status_(status), message_(std::move(message)) {}
  gdap_status status() const noexcept { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  gdap_status status_;
  std::string message_;
};

// Throws Error(status, fmt::format(...)).
template <typename... Args>
[[noreturn]] void fail(gdap_status status, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(status, fmt::format(format, std::forward<Args>(args)...));
}

// Throws GDAP_ERR_INVALID_ARGUMENT naming `what` when `pointer` is NULL.
inline void require(const void* pointer, const char* what) {
  if (pointer == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "{} is NULL", what);
}

// Records the detail of a failure on this thread (what gdap_last_error returns).
void set_last_error(gdap_status status, const char* message) noexcept;

// Runs `body` and converts whatever it throws into a status; the boundary of every C function.
template <typename Body>
gdap_status guard(Body&& body) noexcept {
  try {
    body();
    return GDAP_SUCCESS;
  } catch (const Error& e) {
    set_last_error(e.status(), e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error(GDAP_ERR_NO_MEMORY, "out of host memory");
    return GDAP_ERR_NO_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(GDAP_ERR_INTERNAL, e.what());
    return GDAP_ERR_INTERNAL;
  } catch (...) {
    set_last_error(GDAP_ERR_INTERNAL, "unknown exception");
    return GDAP_ERR_INTERNAL;
  }
}

}  // namespace gdap
