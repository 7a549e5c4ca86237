// What the layers above keep on a communicator between calls (an engine, its staging buffers and
// uploaded copies, the reductions' buffer, the global views last gathered): one entry per key,
// each freed with the communicator. Keys are the users' own names ("exchange.engine",
// "redistribution", "reduce.buffer"), so a layer never evicts another's entry.
// A broken MPI communicator frees its entries too, except those other processes may still read in
// place (Scratch::read_in_place): what an abandoned MPI operation may still use is kept by that
// operation (MpiComm::wait's `keep`), not by the cache.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

namespace gdap {

// An entry of the cache: whatever a user keeps, destroyed with the communicator.
struct Scratch {
  Scratch() { alive_.fetch_add(1, std::memory_order_relaxed); }
  Scratch(const Scratch&) : Scratch() {}
  Scratch& operator=(const Scratch&) = default;
  virtual ~Scratch() { alive_.fetch_sub(1, std::memory_order_relaxed); }
  // Whether other processes may read this entry's memory in place after this rank gave up on a
  // call (its address was published for cross-memory attach): then a broken communicator leaves it
  // to the end of the process rather than free it under a late peer's reads.
  virtual bool read_in_place() const { return false; }
  // Entries alive in this process, the ones broken communicators left behind included (tests).
  static int64_t alive() { return alive_.load(std::memory_order_relaxed); }

 private:
  inline static std::atomic<int64_t> alive_{0};
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
  // The T of a program kept under `key` (Recent below): the first whose match(t) holds, else one
  // make() built (a unique_ptr<T>), kept in place of the least recently used. The reference stays
  // valid until the next call under `key`.
  template <typename T, typename Match, typename Make>
  T& recent(std::string_view key, Match&& match, Make&& make) {
    if (T* kept = find_recent<T>(key, match)) return *kept;
    return keep_recent<T>(key, make());
  }
  // recent()'s two halves, for a caller that may decide not to keep what it built.
  template <typename T, typename Match>
  T* find_recent(std::string_view key, Match&& match);
  template <typename T>
  T& keep_recent(std::string_view key, std::unique_ptr<T> made);
  // How many entries were kept by keep_recent on this communicator (tests: alternating programs
  // build each once).
  int64_t builds = 0;
  // A broken communicator's end: leaves the entries other processes may still read in place to the
  // end of the process, unfreed, and frees the others (plans, copy lists, gathered maps), the last
  // made first. Leaving them all grew a process by a few KiB per broken communicator (soak.cpp).
  void abandon() {
    while (!entries_.empty()) {
      std::unique_ptr<Scratch>& entry = entries_.back().second;
      if (entry && entry->read_in_place()) static_cast<void>(entry.release());
      entries_.pop_back();
    }
  }
  // Frees every entry, the last made first.
  void clear() {
    while (!entries_.empty()) entries_.pop_back();
  }

 private:
  std::deque<std::pair<std::string, std::unique_ptr<Scratch>>> entries_;  // a deque: slots never move
};

// What an engine keeps per program (its routes, copy lists, uploaded batches), for up to kPrograms
// programs of one kind per communicator, the most recently used first: solvers alternate a few
// plans on one communicator (forward and backward transposes, a 3-D FFT's 4 pencils), and each must
// not evict the other's. The large buffers the calls fill are kept once per kind, not here.
template <typename T>
struct Recent final : Scratch {
  static constexpr size_t kPrograms = 4;
  std::vector<std::unique_ptr<T>> kept;  // most recently used first
};

template <typename T, typename Match>
T* Cache::find_recent(std::string_view key, Match&& match) {
  auto& kept = get<Recent<T>>(key).kept;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (!match(static_cast<const T&>(*kept[i]))) continue;
    std::rotate(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(i), kept.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return kept.front().get();
  }
  return nullptr;
}

template <typename T>
T& Cache::keep_recent(std::string_view key, std::unique_ptr<T> made) {
  auto& kept = get<Recent<T>>(key).kept;
  ++builds;
  if (kept.size() == Recent<T>::kPrograms) kept.pop_back();
  kept.insert(kept.begin(), std::move(made));
  return *kept.front();
}

}  // namespace gdap
