// The in-process group: N ranks as threads of one process. Ranks meet at a barrier with a
// timeout; a rank that times out, or whose wait its caller interrupts, breaks the group, so every
// rank waiting with it returns at once, and every later collective call fails at once instead of
// waiting for a rank that will never come. At every meeting the ranks also compare
// where they are (collective.hpp) and what they publish: ranks in different collective calls all
// fail there, before any rank reads another's publication as something it is not.
#pragma once

#include "comm/collective.hpp"
#include "comm/comm.hpp"

#include <condition_variable>
#include <mutex>
#include <typeinfo>

namespace gdap {

class Group {
 public:
  explicit Group(int64_t size) : size_(size), arrivals_(static_cast<size_t>(size)) {}

  // What a rank brings to a meeting: where it is, the memory its call touches, and the type and
  // address of what it publishes (none for a barrier).
  struct Arrival {
    Meeting meeting;
    const std::vector<Region>* touched = nullptr;
    const std::type_info* payload = nullptr;
    const void* pointer = nullptr;
  };

  int64_t size() const { return size_; }
  // Waits for every rank, as `waiter` (rank `rank`) allows: after its timeout, or when its interrupt
  // check says so (asked every kInterruptEvery seconds), throws GDAP_ERR_TIMEOUT or
  // GDAP_ERR_INTERRUPTED and breaks the group, which every waiting rank then leaves with that status
  // and every later meeting fails at once. Throws GDAP_ERR_INVALID_ARGUMENT on every rank when their
  // arrivals differ.
  void barrier(int64_t rank, const Arrival& arrival, const gdap_comm& waiter);
  using Reader = std::function<void(const std::vector<const void*>&)>;
  // Collective: every rank's pointer, in rank order, handed to `read` (if any) while every
  // pointee is still valid; returns once every rank's `read` is done. The returned pointers are
  // only good for identity after that, unless the caller keeps the pointees alive otherwise.
  std::vector<const void*> exchange(int64_t rank, const Arrival& mine, const gdap_comm& waiter, const Reader& read);

 private:
  // The barrier; a NULL `waiter` waits without limit (see exchange).
  void meet(int64_t rank, const Arrival& arrival, const gdap_comm* waiter);
  std::string verdict() const;
  [[noreturn]] void break_group(gdap_status status, std::string why);
  [[noreturn]] void fail_broken(int64_t rank) const;
  const int64_t size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t arrived_ = 0;
  uint64_t generation_ = 0;
  bool broken_ = false;
  gdap_status broken_status_ = GDAP_SUCCESS;  // why it broke: GDAP_ERR_TIMEOUT or GDAP_ERR_INTERRUPTED
  std::string broken_why_;
  std::vector<Arrival> arrivals_;
  // The last meeting's verdict on the arrivals ("" when they agree). It stays until every rank of
  // that meeting has read it: the next meeting cannot end before they have all left this one.
  std::string verdict_;
};

class GroupComm final : public gdap_comm {
 public:
  GroupComm(std::shared_ptr<Group> group, int64_t my_rank) : gdap_comm(my_rank, group->size()), group_(std::move(group)) {
    node_ranks = size;  // every rank is a thread of this process
  }
  gdap_comm_kind kind() const override { return GDAP_COMM_GROUP; }
  std::vector<std::string> allgather(std::string_view mine) override;
  void barrier() override { group_->barrier(rank, {next_meeting(*this), &touched}, *this); }
  // Every rank's pointer (see Group::exchange); the engines' rendezvous. Every rank must publish
  // the same type at a meeting.
  template <typename T>
  std::vector<const void*> exchange(const T* mine, const Group::Reader& read) {
    return group_->exchange(rank, {next_meeting(*this), &touched, &typeid(T), mine}, *this, read);
  }

 private:
  std::shared_ptr<Group> group_;
};

}  // namespace gdap
