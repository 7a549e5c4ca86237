// The chunk threads of Zarr save and load (see parallel.hpp): threads started for the call and
// joined before it returns, taking task numbers from one counter in increasing order.
#include "io/parallel.hpp"

#include "core/error.hpp"
#include "core/setting.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace gdap::io {

namespace {

// The cores this process may run on (its affinity mask; the hardware's threads if unknown).
int64_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace

int io_threads(int64_t node_ranks) {
  if (const std::optional<int64_t> n = whole_setting({"GDAP_IO_THREADS", 1, 64, "a whole number from 1 to 64"})) {
    return static_cast<int>(*n);
  }
  return static_cast<int>(std::clamp<int64_t>(usable_cores() / std::max<int64_t>(node_ranks, 1), 1, 8));
}

void parallel_for(int64_t n, int workers, const std::function<void(int64_t, int)>& task) {
  workers = static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(workers, n), 1, 64));
  if (workers == 1) {
    for (int64_t i = 0; i < n; ++i) task(i, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> stop{n};  // the first failing task seen so far: none after it starts
  std::mutex guard;
  std::exception_ptr error;
  auto work = [&](int worker) {
    for (int64_t i = next++; i < stop.load(); i = next++) {
      try {
        task(i, worker);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(guard);
        if (i < stop.load()) {
          stop = i;
          error = std::current_exception();
        }
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(workers - 1));
  try {
    for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started and this one do the work.
  }
  work(0);
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace gdap::io
