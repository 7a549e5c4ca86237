// The process-wide registry of live communicators. A flag inside a communicator cannot tell a call
// on another thread that gdap_comm_destroy freed it (reading the flag is the use-after-free), so every
// C entry point that takes a gdap_comm pins it here first: the lookup reads only the registry, and
// gdap_comm_destroy unregisters under the same lock, only while no call holds a pin.
#pragma once

#include <cstdint>

struct gdap_comm;

namespace gdap {

// Called by gdap_comm's constructor and destructor (a destructor finding it gone does nothing).
void register_comm(const gdap_comm* comm);
void unregister_comm(const gdap_comm* comm);

// The communicator `comm`, pinned for the object's lifetime: destroy refuses it meanwhile. Throws
// GDAP_ERR_INVALID_ARGUMENT "<what> is NULL", or "<what>: not a live gdap_comm handle (...)" for a
// pointer that is no live communicator (destroyed, never created, another kind), reading no byte of it.
class CommPin {
 public:
  CommPin(const gdap_comm* comm, const char* what);
  ~CommPin();
  CommPin(const CommPin&) = delete;
  CommPin& operator=(const CommPin&) = delete;
  gdap_comm& operator*() const { return *comm_; }

 private:
  gdap_comm* comm_;
};

// gdap_comm_destroy's check: unregisters `comm` and returns it for deleting, if it is live and no
// call pins it; NULL for NULL; otherwise throws GDAP_ERR_INVALID_ARGUMENT and changes nothing.
gdap_comm* unregister_for_destroy(const gdap_comm* comm, const char* what);

}  // namespace gdap
