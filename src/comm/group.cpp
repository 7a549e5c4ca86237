#include "comm/group.hpp"

#include "comm/wait.hpp"
#include "core/error.hpp"

#include <chrono>

namespace gdap {

namespace {
constexpr double kForever = 1e9;  // seconds: longer timeouts wait without a limit

// The ranks' regions that lie in a gdap shared-memory segment, for segments_clash: regions_clash
// compares addresses, and two mappings of one segment in this process are the same bytes at two.
std::vector<std::vector<Region>> in_segments(const std::vector<const std::vector<Region>*>& by_rank) {
  std::vector<std::vector<Region>> out(by_rank.size());
  for (size_t r = 0; r < by_rank.size(); ++r) {
    if (by_rank[r] == nullptr) continue;
    for (const Region& g : *by_rank[r]) {
      if (!g.segment.empty()) out[r].push_back(g);
    }
  }
  return out;
}
}  // namespace

std::string Group::verdict() const {
  std::vector<Meeting> meetings;
  std::vector<const std::vector<Region>*> touched;
  for (const Arrival& a : arrivals_) {
    meetings.push_back(a.meeting);
    touched.push_back(a.touched);
  }
  std::string text = meetings_differ(meetings);
  if (text.empty()) text = regions_clash(touched);
  if (text.empty()) text = segments_clash(in_segments(touched));
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

void Group::fail_broken(int64_t rank) const {
  throw Error(broken_status_, fmt::format("rank {}: the in-process group is broken: {}", rank, broken_why_));
}

void Group::break_group(gdap_status status, std::string why) {
  broken_ = true;
  broken_status_ = status;
  broken_why_ = why;
  changed_.notify_all();
  throw Error(status, std::move(why));
}

void Group::barrier(int64_t rank, const Arrival& arrival, const gdap_comm& waiter) { meet(rank, arrival, &waiter); }

void Group::meet(int64_t rank, const Arrival& arrival, const gdap_comm* waiter) {
  std::unique_lock lock(mutex_);
  if (broken_) fail_broken(rank);
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
  const auto released = [&] { return generation_ != generation || broken_; };
  if (waiter == nullptr) {
    changed_.wait(lock, released);
    if (generation_ == generation) fail_broken(rank);
    return check_verdict(verdict_);
  }
  // Waits in slices, between which the caller's interrupt check runs (without the lock: it may
  // take its time, and its peers must be able to arrive meanwhile).
  const auto start = std::chrono::steady_clock::now();
  const bool checks = waiter->interrupt_check != nullptr;
  bool interrupted = false;
  for (;;) {
    const double left = waiter->timeout - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left <= 0) break;
    const double slice = checks ? std::min(left, kInterruptEvery) : left;
    if (slice > kForever) {
      changed_.wait(lock, released);  // INFINITY (or years): a duration that long overflows the clock
    } else {
      changed_.wait_for(lock, std::chrono::duration<double>(slice), released);
    }
    if (released() || !checks) break;
    lock.unlock();
    interrupted = waiter->interrupted();
    lock.lock();
    if (released() || interrupted) break;
  }
  if (generation_ != generation) return check_verdict(verdict_);
  if (broken_) {
    throw Error(broken_status_, fmt::format("rank {}: the in-process group broke while this rank waited at a "
                                            "collective call: {}", rank, broken_why_));
  }
  if (interrupted) {
    break_group(GDAP_ERR_INTERRUPTED,
                fmt::format("rank {} was interrupted (its interrupt check returned non-zero) while it waited at a "
                            "collective call with {} of {} ranks arrived; the group is broken from now on",
                            rank, arrived_, size_));
  }
  break_group(GDAP_ERR_TIMEOUT,
              fmt::format("rank {}: waited {} s at a collective call of the in-process group but only {} of {} ranks "
                          "arrived (the others are late, failed or in no collective call); the group is broken from "
                          "now on", rank, waiter->timeout, arrived_, size_));
}

std::vector<const void*> Group::exchange(int64_t rank, const Arrival& mine, const gdap_comm& waiter,
                                        const Reader& read) {
  barrier(rank, mine, waiter);
  std::vector<const void*> all;
  {
    std::lock_guard lock(mutex_);
    for (const Arrival& a : arrivals_) all.push_back(a.pointer);
  }
  if (read) read(all);
  // Nobody may overwrite an arrival for the next meeting (or free a pointee `read` uses) before
  // every rank is done with this one. Without a timeout or an interrupt: every rank passed the
  // first meeting and only finishes its own `read` before it comes, and a rank that left early
  // would free its publication under a peer still reading it.
  meet(rank, mine, nullptr);
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

}  // namespace gdap
