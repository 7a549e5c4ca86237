#include "comm/wait.hpp"

#include "comm/comm.hpp"

#include <algorithm>
#include <thread>

namespace gdap {

namespace {
constexpr std::chrono::microseconds kSpin{50}, kYield{1000}, kLongestSleep{1000};
}  // namespace

void Backoff::pause() {
  const auto age = Clock::now() - start_;
  if (age < kSpin) return;
  if (age < kYield) return std::this_thread::yield();
  std::this_thread::sleep_for(sleep_);
  sleep_ = std::min(sleep_ * 2, kLongestSleep);
}

void Backoff::reset() {
  start_ = Clock::now();
  sleep_ = std::chrono::microseconds{20};
}

Waiting::Waiting(double limit, const gdap_comm* interruptible)
    : limit_(limit),
      interruptible_(interruptible),
      next_check_(start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kInterruptEvery))) {}

Waiting::Waiting(const gdap_comm& comm) : Waiting(comm.timeout, &comm) {}

WaitEnd Waiting::after_poll(bool progressed) {
  const auto now = Clock::now();
  if (std::chrono::duration<double>(now - start_).count() > limit_) return WaitEnd::timed_out;
  if (interruptible_ != nullptr && now >= next_check_) {
    if (interruptible_->interrupted()) return WaitEnd::interrupted;
    next_check_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kInterruptEvery));
  }
  if (progressed) {
    backoff_.reset();
  } else {
    backoff_.pause();
  }
  return WaitEnd::going_on;
}

}  // namespace gdap
