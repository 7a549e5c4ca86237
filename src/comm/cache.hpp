// What the layers above keep on a communicator between calls (an engine, its staging buffers and
// uploaded copies, the reductions' buffer, the global views last gathered): one entry per key,
// each freed with the communicator. Keys are the users' own names ("exchange.engine",
// "redistribution", "reduce.buffer"), so a layer never evicts another's entry.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

namespace gdap {

// An entry of the cache: whatever a user keeps, destroyed with the communicator.
struct Scratch {
  virtual ~Scratch() = default;
};

class Cache {
 public:
  Cache() = default;
  ~Cache() { clear(); }
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // The entry under `key` (empty when none was kept): the caller may replace it. The reference
  // stays valid while the cache lives.
  std::unique_ptr<Scratch>& slot(std::string_view key) {
    for (auto& [k, entry] : entries_) {
      if (k == key) return entry;
    }
    return entries_.emplace_back(std::string(key), nullptr).second;
  }
  // The entry under `key` if it is an S, else NULL.
  template <typename S>
  S* find(std::string_view key) {
    Scratch* entry = slot(key).get();
    return entry != nullptr && typeid(*entry) == typeid(S) ? static_cast<S*>(entry) : nullptr;
  }
  // The S under `key`: made (value-initialised) when there is none or another kind, which is freed first.
  template <typename S>
  S& get(std::string_view key) {
    if (S* s = find<S>(key)) return *s;
    std::unique_ptr<Scratch>& entry = slot(key);
    entry.reset();
    entry = std::make_unique<S>();
    return static_cast<S&>(*entry);
  }
  // Leaves every entry to the end of the process, unfreed: what operations abandoned at a timeout
  // may still use (a broken MPI communicator's buffers).
  void abandon() {
    for (auto& entry : entries_) static_cast<void>(entry.second.release());
    entries_.clear();
  }
  // Frees every entry, the last made first.
  void clear() {
    while (!entries_.empty()) entries_.pop_back();
  }

 private:
  std::deque<std::pair<std::string, std::unique_ptr<Scratch>>> entries_;  // a deque: slots never move
};

}  // namespace gdap
