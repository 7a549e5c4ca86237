// LazyLibrary: dlopen on first use (see lazy_library.hpp).
#include "cuda/lazy_library.hpp"

#include "core/error.hpp"

#include <dlfcn.h>

namespace gdap::cuda {

namespace {
// dlopen's handle for `name`, or nullptr with dlerror's reason in `reason`.
void* open_library(const char* name, std::string& reason) {
  // RTLD_LOCAL: the library's symbols stay out of the global namespace. If the program already
  // loaded it (a caller's own NCCL), dlopen returns that same copy, so communicators are shared.
  void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    reason = why != nullptr ? why : "dlopen gave no reason";
  }
  return handle;
}
}  // namespace

bool LazyLibrary::load() {
  std::call_once(once_, [this] {
    handle_ = open_library(soname_, error_);
    std::string fallback_error;
    if (handle_ == nullptr && fallback_[0] != '\0') {
      handle_ = open_library(fallback_, fallback_error);
      // Both reasons: the soname's alone would hide why the build's own path failed too.
      if (handle_ == nullptr) error_ += "; nor from the build's path (" + fallback_error + ")";
    }
    if (handle_ != nullptr) error_.clear();
  });
  return handle_ != nullptr;
}

void LazyLibrary::require(const char* user) {
  if (!load()) fail(GDAP_ERR_UNSUPPORTED, "{} could not be loaded: {}; {} needs it", soname_, error_, user);
}

void* LazyLibrary::symbol(const char* name) { return load() ? dlsym(handle_, name) : nullptr; }

}  // namespace gdap::cuda
