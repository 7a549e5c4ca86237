// A file-size limit for a forked test child: writes past it fail for real (EFBIG), as on a full
// disk, without a test hook in the library. The limit is the child's own.
#pragma once

#include <sys/resource.h>

#include <csignal>

namespace gdap_test {

// Writes of more than `bytes` per file fail with EFBIG in this process (SIGXFSZ, which would
// kill it, is ignored). Call it in a forked child only.
inline void limit_file_size(rlim_t bytes) {
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit small{bytes, bytes};
  setrlimit(RLIMIT_FSIZE, &small);
}

}  // namespace gdap_test
