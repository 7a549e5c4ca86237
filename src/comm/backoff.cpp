#include "comm/backoff.hpp"

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

}  // namespace gdap
