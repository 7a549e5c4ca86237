#include "comm/group.hpp"

#include "core/error.hpp"

#include <chrono>

namespace gdap {

namespace {
constexpr double kForever = 1e9;  // seconds: longer timeouts wait without a limit
}  // namespace

std::string Group::verdict() const {
  std::vector<Meeting> meetings;
  for (const Arrival& a : arrivals_) meetings.push_back(a.meeting);
  std::string text = meetings_differ(meetings);
  if (!text.empty()) return text;
  for (size_t r = 1; r < arrivals_.size(); ++r) {
    const std::type_info* first = arrivals_[0].payload;
    const std::type_info* theirs = arrivals_[r].payload;
    if (first == theirs || (first != nullptr && theirs != nullptr && *first == *theirs)) continue;
    return fmt::format("rank {} published something else than rank 0 at the same step of the same collective call "
                       "(the ranks took different paths through it: an internal error of gdap, please report it)", r);
  }
  return {};
}

void Group::barrier(int64_t rank, const Arrival& arrival, double timeout) {
  std::unique_lock lock(mutex_);
  if (broken_) {
    fail(GDAP_ERR_TIMEOUT, "rank {}: the in-process group is broken: an earlier collective call timed out", rank);
  }
  arrivals_[static_cast<size_t>(rank)] = arrival;
  const uint64_t generation = generation_;
  if (++arrived_ == size_) {
    verdict_ = verdict();
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
    check_verdict(verdict_);
    return;
  }
  const auto arrived = [&] { return generation_ != generation || broken_; };
  bool released = true;
  if (timeout > kForever) {
    changed_.wait(lock, arrived);  // INFINITY (or years): a duration that long overflows the clock
  } else {
    released = changed_.wait_for(lock, std::chrono::duration<double>(timeout), arrived);
  }
  if (released && generation_ != generation) return check_verdict(verdict_);
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

std::vector<const void*> Group::exchange(int64_t rank, const Arrival& mine, double timeout, const Reader& read) {
  barrier(rank, mine, timeout);
  std::vector<const void*> all;
  {
    std::lock_guard lock(mutex_);
    for (const Arrival& a : arrivals_) all.push_back(a.pointer);
  }
  if (read) read(all);
  // Nobody may overwrite an arrival for the next meeting (or free a pointee `read` uses) before
  // every rank is done with this one.
  barrier(rank, mine, timeout);
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
