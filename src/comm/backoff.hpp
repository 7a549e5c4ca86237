// How a rank polls while it waits for its peers (MPI requests, NCCL's control stream): at full
// speed for the first 50 us, within which a collective whose ranks all arrived answers; then
// yielding the core until 1 ms has passed; then sleeping, 20 us at first and twice as long each
// time up to 1 ms. A rank waiting out a late peer then costs about a thousand polls a second
// instead of a whole core (which, on an oversubscribed node, the late peer needed), and notices
// its peer at most about a millisecond late. Progress (a request completing) starts it over.
#pragma once

#include <chrono>

namespace gdap {

class Backoff {
 public:
  // After a poll that found the wait not over: pause as the wait's age says.
  void pause();
  // After a poll that found progress: poll at full speed again.
  void reset();

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
  std::chrono::microseconds sleep_{20};
};

}  // namespace gdap
