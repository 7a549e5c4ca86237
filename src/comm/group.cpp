#include "comm/group.hpp"

#include "core/error.hpp"

#include <chrono>

namespace gdap {

namespace {
constexpr double kForever = 1e9;  // seconds: longer timeouts wait without a limit
}  // namespace

void Group::barrier(int64_t rank, double timeout) {
  std::unique_lock lock(mutex_);
  if (broken_) {
    fail(GDAP_ERR_TIMEOUT, "rank {}: the in-process group is broken: an earlier collective call timed out", rank);
  }
  const uint64_t generation = generation_;
  if (++arrived_ == size_) {
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
    return;
  }
  const auto arrived = [&] { return generation_ != generation || broken_; };
  bool released = true;
  if (timeout > kForever) {
    changed_.wait(lock, arrived);  // INFINITY (or years): a duration that long overflows the clock
  } else {
    released = changed_.wait_for(lock, std::chrono::duration<double>(timeout), arrived);
  }
  if (released && generation_ != generation) return;
  const int64_t waiting = arrived_;
  broken_ = true;
  changed_.notify_all();
  if (!released) {
    fail(GDAP_ERR_TIMEOUT,
         "rank {}: waited {} s at a collective call of the in-process group but only {} of {} ranks arrived", rank,
         timeout, waiting, size_);
  }
  fail(GDAP_ERR_TIMEOUT, "rank {}: the in-process group broke (another rank timed out) during a collective call",
       rank);
}

std::vector<const void*> Group::exchange(int64_t rank, const void* mine, double timeout, const Reader& read) {
  {
    std::lock_guard lock(mutex_);
    slots_[static_cast<size_t>(rank)] = mine;
  }
  barrier(rank, timeout);
  std::vector<const void*> all;
  {
    std::lock_guard lock(mutex_);
    all = slots_;
  }
  if (read) read(all);
  // Nobody may overwrite a slot for the next exchange (or free a pointee `read` uses) before
  // every rank is done with this one.
  barrier(rank, timeout);
  return all;
}

std::vector<std::string> GroupComm::allgather(std::string_view mine) {
  const std::string copy(mine);
  std::vector<std::string> out;
  exchange(&copy, [&](const std::vector<const void*>& all) {
    out.reserve(all.size());
    for (const void* p : all) out.push_back(*static_cast<const std::string*>(p));
  });
  return out;
}

void GroupComm::set_timeout(double seconds) {
  gdap_comm::set_timeout(seconds);
  timeout_ = seconds;
}

}  // namespace gdap
