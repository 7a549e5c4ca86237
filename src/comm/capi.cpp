// C entry points of the communicator layer and the collective construction of a global view.
#include "comm/comm.hpp"
#include "comm/group.hpp"
#include "comm/map_gather.hpp"
#include "core/error.hpp"
#include "maps/map.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using gdap::fail;
using gdap::guard;
using gdap::require;

namespace {

constexpr int64_t kMaxGroup = int64_t{1} << 20;  // threads: far beyond any machine
constexpr size_t kMaxReason = 4096;  // bytes of a gdap_comm_fail_next reason kept

}  // namespace

extern "C" {

GDAP_API gdap_status gdap_comm_create_group(gdap_comm** comms, int64_t nranks) {
  return guard([&] {
    require(comms, "comms");
    if (nranks < 1 || nranks > kMaxGroup) fail(GDAP_ERR_INVALID_ARGUMENT, "nranks {} is not in [1, {}]", nranks, kMaxGroup);
    auto group = std::make_shared<gdap::Group>(nranks);
    std::vector<std::unique_ptr<gdap_comm>> made;
    for (int64_t r = 0; r < nranks; ++r) made.push_back(std::make_unique<gdap::GroupComm>(group, r));
    for (int64_t r = 0; r < nranks; ++r) comms[r] = made[static_cast<size_t>(r)].release();
  });
}

GDAP_API gdap_status gdap_comm_destroy(gdap_comm* comm) {
  // Refused while any call on another thread holds it (hunt 15a #7), and unregistered before it is
  // freed, so that a call starting later is refused instead of reading freed memory (live.hpp).
  return guard([&] { delete gdap::unregister_for_destroy(comm, "comm"); });
}

GDAP_API gdap_status gdap_comm_rank(int64_t* rank, const gdap_comm* comm) {
  return guard([&] {
    require(rank, "rank");
    *rank = (*gdap::CommPin(comm, "comm")).rank;
  });
}

GDAP_API gdap_status gdap_comm_size(int64_t* size, const gdap_comm* comm) {
  return guard([&] {
    require(size, "size");
    *size = (*gdap::CommPin(comm, "comm")).size;
  });
}

GDAP_API gdap_status gdap_comm_kind_get(gdap_comm_kind* kind, const gdap_comm* comm) {
  return guard([&] {
    require(kind, "kind");
    *kind = (*gdap::CommPin(comm, "comm")).kind();
  });
}

GDAP_API gdap_status gdap_comm_set_stream(gdap_comm* comm, void* stream) {
  return guard([&] { (*gdap::CommPin(comm, "comm")).set_stream(stream); });
}

GDAP_API gdap_status gdap_comm_set_timeout(gdap_comm* comm, double seconds) {
  return guard([&] { (*gdap::CommPin(comm, "comm")).set_timeout(seconds); });
}

GDAP_API gdap_status gdap_comm_set_interrupt(gdap_comm* comm, gdap_interrupt_check check, void* user) {
  return guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    c.interrupt_check = check;
    c.interrupt_user = user;
  });
}

GDAP_API gdap_status gdap_comm_fail_next(gdap_comm* comm, gdap_status status, const char* reason) {
  return guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    // Read as an integer first: a caller (a binding) may pass any int, and loading one that is no
    // gdap_status as the enum is undefined behaviour.
    int32_t code = 0;
    static_assert(sizeof code == sizeof status);
    std::memcpy(&code, &status, sizeof code);
    if (code == GDAP_SUCCESS) fail(GDAP_ERR_INVALID_ARGUMENT, "status is GDAP_SUCCESS: gdap_comm_fail_next takes an error status");
    if (code < GDAP_ERR_INVALID_ARGUMENT || code > GDAP_ERR_INTERRUPTED) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "status {} is not a gdap_status", code);
    }
    std::string text = reason != nullptr ? std::string(reason, strnlen(reason, kMaxReason)) : "no reason given";
    c.fail_next = static_cast<gdap_status>(code);
    c.fail_next_reason = std::move(text);
  });
}

GDAP_API gdap_status gdap_comm_barrier(gdap_comm* comm) {
  return guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_comm_barrier");
    gdap::agree(c, [] {});  // an allgather of a few bytes: a barrier that also carries gdap_comm_fail_next's cause
  });
}

GDAP_API gdap_status gdap_map_create_collective(gdap_map** out, gdap_comm* comm, int64_t ndim, const gdap_dim* dims) {
  return guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_map_create_collective");
    std::string mine;
    gdap::agree(c, [&] {
      require(out, "out");
      mine = gdap::pack_dims(ndim, dims);
    });
    *out = gdap::map_from_packed(c.allgather(mine), c.size);
  });
}

}  // extern "C"
