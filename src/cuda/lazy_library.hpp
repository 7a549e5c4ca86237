// Shared libraries that gdap loads on first use (dlopen) instead of linking: cuBLAS and NCCL, which only
// device paths call. A gdap built with CUDA then loads and runs its host paths on a machine where they
// are missing, and a device path that needs one is refused with GDAP_ERR_UNSUPPORTED naming it.
// lazy_cublas.cpp and lazy_nccl.cpp define exactly the functions gdap calls, each forwarding to the
// loaded library (the CUDA runtime itself is linked statically: it finds the driver at run time).
// LazyLibrary needs no CUDA: it is built, and unit-tested, in every configuration.
#pragma once

#include <mutex>
#include <string>

namespace gdap::cuda {

class LazyLibrary {
 public:
  // `soname` is looked up as the dynamic loader does (LD_LIBRARY_PATH, the run path, ldconfig's
  // cache); when that fails and `fallback` is not empty, the file `fallback` (the path where the
  // build found the library, as a linked library's run path would have found it).
  explicit LazyLibrary(const char* soname, const char* fallback = "") : soname_(soname), fallback_(fallback) {}
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // Loads the library on the first call (thread-safe); throws GDAP_ERR_UNSUPPORTED "<soname> could not
  // be loaded: <dlerror>[; nor from the build's path (<dlerror of fallback>)]; <user> needs it" when it
  // cannot be, on this call and every later one.
  void require(const char* user);
  // The address of function `name` (nullptr when the library or the function is missing).
  void* symbol(const char* name);

 private:
  bool load();

  const char* soname_;
  const char* fallback_;
  std::once_flag once_;
  void* handle_ = nullptr;
  std::string error_;  // dlerror's reason when the load failed
};

// Calls `fn`, a function of the loaded library taking `args` (their types are those of the forwarding
// function's own parameters, so the signature is exact), or returns `fallback` when it is missing.
template <typename R, typename... Args>
R call(void* fn, R fallback, Args... args) {
  return fn != nullptr ? reinterpret_cast<R (*)(Args...)>(fn)(args...) : fallback;
}

// Loads cuBLAS / NCCL, or throws GDAP_ERR_UNSUPPORTED naming the library, why it could not be loaded and
// `user`, the public function that needs it. The device paths call these before their first cuBLAS or
// NCCL call.
void require_cublas(const char* user);
void require_nccl(const char* user);

}  // namespace gdap::cuda
