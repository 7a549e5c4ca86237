// C entry points of the communicator layer and the collective construction of a global view.
#include "comm/comm.hpp"
#include "comm/group.hpp"
#include "comm/map_gather.hpp"
#include "core/error.hpp"
#include "maps/map.hpp"

#include <memory>
#include <string>
#include <vector>

using gdap::fail;
using gdap::guard;
using gdap::require;

namespace {

constexpr int64_t kMaxGroup = int64_t{1} << 20;  // threads: far beyond any machine

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
  return guard([&] { delete comm; });
}

GDAP_API gdap_status gdap_comm_rank(int64_t* rank, const gdap_comm* comm) {
  return guard([&] {
    require(rank, "rank");
    require(comm, "comm");
    *rank = comm->rank;
  });
}

GDAP_API gdap_status gdap_comm_size(int64_t* size, const gdap_comm* comm) {
  return guard([&] {
    require(size, "size");
    require(comm, "comm");
    *size = comm->size;
  });
}

GDAP_API gdap_status gdap_comm_kind_get(gdap_comm_kind* kind, const gdap_comm* comm) {
  return guard([&] {
    require(kind, "kind");
    require(comm, "comm");
    *kind = comm->kind();
  });
}

GDAP_API gdap_status gdap_comm_set_stream(gdap_comm* comm, void* stream) {
  return guard([&] { gdap::comm_ref(comm).set_stream(stream); });
}

GDAP_API gdap_status gdap_comm_set_timeout(gdap_comm* comm, double seconds) {
  return guard([&] { gdap::comm_ref(comm).set_timeout(seconds); });
}

GDAP_API gdap_status gdap_comm_set_interrupt(gdap_comm* comm, gdap_interrupt_check check, void* user) {
  return guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    c.interrupt_check = check;
    c.interrupt_user = user;
  });
}

GDAP_API gdap_status gdap_comm_barrier(gdap_comm* comm) {
  return guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    const gdap::CollectiveCall collective(c, "gdap_comm_barrier");
    c.barrier();
  });
}

GDAP_API gdap_status gdap_map_create_collective(gdap_map** out, gdap_comm* comm, int64_t ndim, const gdap_dim* dims) {
  return guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
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
