// The registry of live communicators (see live.hpp).
#include "comm/live.hpp"

#include "comm/comm.hpp"
#include "core/error.hpp"

#include <mutex>
#include <unordered_set>

namespace gdap {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_set<const gdap_comm*> live;
};

// Never destroyed: a communicator freed by a static destructor after this one still finds it.
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

[[noreturn]] void refuse_not_live(const char* what) {
  fail(GDAP_ERR_INVALID_ARGUMENT, "{}: not a live gdap_comm handle (destroyed, or never a communicator)", what);
}

// The live communicator `comm`, found under the held registry lock; refuses NULL and strangers.
gdap_comm* live_locked(const Registry& r, const gdap_comm* comm, const char* what) {
  if (comm == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "{} is NULL", what);
  if (!r.live.contains(comm)) refuse_not_live(what);
  return const_cast<gdap_comm*>(comm);  // every communicator is made non-const by gdap
}

}  // namespace

void register_comm(const gdap_comm* comm) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.live.insert(comm);
}

void unregister_comm(const gdap_comm* comm) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.live.erase(comm);
}

CommPin::CommPin(const gdap_comm* comm, const char* what) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  comm_ = live_locked(r, comm, what);
  ++comm_->busy;  // under the lock: a destroy either ran before (the lookup failed) or sees this
}

// The pin's last touch of the communicator: once busy drops, a destroy may free it.
CommPin::~CommPin() { --comm_->busy; }

gdap_comm* unregister_for_destroy(const gdap_comm* comm, const char* what) {
  if (comm == nullptr) return nullptr;
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  gdap_comm* c = live_locked(r, comm, what);
  if (c->busy.load() > 0) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} (rank {}) is in a call on another thread: destroy it after that call "
         "returns (nothing was freed)", what, c->rank);
  }
  r.live.erase(c);
  return c;
}

}  // namespace gdap
