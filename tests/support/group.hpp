// An in-process group of n ranks for tests (one communicator per rank, destroyed together) and a
// helper that runs one thread per rank.
#pragma once

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

namespace gdap_test {

class Group {
 public:
  explicit Group(int64_t n, double timeout = 30) : comms_(static_cast<size_t>(n), nullptr) {
    EXPECT_EQ(gdap_comm_create_group(comms_.data(), n), GDAP_SUCCESS) << gdap_last_error();
    for (gdap_comm* c : comms_) gdap_comm_set_timeout(c, timeout);
  }
  ~Group() {
    for (gdap_comm* c : comms_) gdap_comm_destroy(c);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  gdap_comm* operator[](int64_t rank) const { return comms_[static_cast<size_t>(rank)]; }

 private:
  std::vector<gdap_comm*> comms_;
};

// Runs body(rank) on one thread per rank and waits for all of them.
inline void on_threads(int64_t n, const std::function<void(int64_t)>& body) {
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

}  // namespace gdap_test
