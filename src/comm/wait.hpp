// How a rank waits for its peers at a collective call, for the engines that poll (MPI requests,
// NCCL's control stream); the in-process group waits on a condition variable in slices instead
// (group.cpp) under the same limits.
//
// Limits: the communicator's timeout, and the caller's interrupt check (gdap_comm_set_interrupt),
// asked every kInterruptEvery seconds.
//
// Pace: at full speed for the first 50 us, within which a collective whose ranks all arrived
// answers; then yielding the core until 1 ms has passed; then sleeping, 20 us at first and twice as
// long each time up to 1 ms. A rank waiting out a late peer then costs about a thousand polls a
// second instead of a whole core (which, on an oversubscribed node, the late peer needed), and
// notices its peer at most about a millisecond late. Progress (a request completing) starts the
// pace over.
#pragma once

#include <chrono>

struct gdap_comm;

namespace gdap {

constexpr double kInterruptEvery = 0.1;  // seconds between two calls of the caller's interrupt check

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

// How a wait ended.
enum class WaitEnd { going_on, done, timed_out, interrupted };

// One wait of a rank, polled by its engine: up to `limit` seconds, and, with `interruptible`, until
// that communicator's interrupt check says stop. Waiting(comm) is a wait at a collective call.
class Waiting {
 public:
  Waiting(double limit, const gdap_comm* interruptible);
  explicit Waiting(const gdap_comm& comm);
  // After a poll that found the wait not over (`progressed`: something completed): going_on after
  // a pause before the next poll, or the limit that ended it.
  WaitEnd after_poll(bool progressed = false);

 private:
  using Clock = std::chrono::steady_clock;
  double limit_;
  const gdap_comm* interruptible_;
  Clock::time_point start_ = Clock::now(), next_check_;
  Backoff backoff_;
};

}  // namespace gdap
