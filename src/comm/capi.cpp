// C entry points of the communicator layer and the collective construction of a global view.
#include "comm/comm.hpp"
#include "comm/group.hpp"
#include "core/error.hpp"
#include "maps/map.hpp"
#include "protocol/dim.hpp"

#include <cstring>

using gdap::fail;
using gdap::guard;
using gdap::require;

namespace {

constexpr int64_t kMaxGroup = int64_t{1} << 20;  // threads: far beyond any machine

// Wire form of one rank's dictionaries: ndim, then per dimension the gdap_dim (indices zeroed)
// followed by its indices. Every rank runs the same build, so the struct's bytes are the format.
std::string pack_dims(int64_t ndim, const gdap_dim* dims) {
  if (ndim < 0 || ndim > 64) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim {} is not in [0, 64]", ndim);
  if (ndim > 0) require(dims, "dims");
  std::string out(reinterpret_cast<const char*>(&ndim), sizeof ndim);
  for (int64_t i = 0; i < ndim; ++i) {
    gdap_dim d = gdap::read_dim(dims, i);
    const int64_t* indices = d.indices;
    if (d.num_indices < 0 || (d.num_indices > 0 && indices == nullptr)) {
      fail(GDAP_ERR_PROTOCOL, "dimension {}: indices is NULL or num_indices {} is negative", i, d.num_indices);
    }
    d.indices = nullptr;
    out.append(reinterpret_cast<const char*>(&d), sizeof d);
    if (d.num_indices > 0) out.append(reinterpret_cast<const char*>(indices), sizeof(int64_t) * d.num_indices);
  }
  return out;
}

// Appends one rank's dictionaries to `dims`; their indices point into `storage`.
void unpack_dims(const std::string& bytes, int64_t rank, int64_t ndim, std::vector<gdap_dim>& dims,
                 std::vector<std::vector<int64_t>>& storage) {
  size_t at = 0;
  auto take = [&](void* to, size_t n) {
    if (bytes.size() - at < n) fail(GDAP_ERR_INTERNAL, "rank {}: truncated dictionaries", rank);
    std::memcpy(to, bytes.data() + at, n);
    at += n;
  };
  int64_t theirs = 0;
  take(&theirs, sizeof theirs);
  if (theirs != ndim) fail(GDAP_ERR_PROTOCOL, "rank {} has {} dimensions but rank 0 has {}", rank, theirs, ndim);
  for (int64_t i = 0; i < ndim; ++i) {
    gdap_dim d{};
    take(&d, sizeof d);
    if (d.num_indices > 0) {
      auto& held = storage.emplace_back(static_cast<size_t>(d.num_indices));
      take(held.data(), sizeof(int64_t) * held.size());
      d.indices = held.data();
    }
    dims.push_back(d);
  }
}

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

GDAP_API gdap_status gdap_comm_barrier(gdap_comm* comm) {
  return guard([&] { gdap::comm_ref(comm).barrier(); });
}

GDAP_API gdap_status gdap_map_create_collective(gdap_map** out, gdap_comm* comm, int64_t ndim, const gdap_dim* dims) {
  return guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    std::string mine;
    gdap::agree(c, [&] {
      require(out, "out");
      mine = pack_dims(ndim, dims);
    });
    const std::vector<std::string> all = c.allgather(mine);
    // Rank 0's dimension count is the reference, so every rank reports the same mismatch.
    int64_t ndim0 = 0;
    std::memcpy(&ndim0, all[0].data(), sizeof ndim0);  // agree() passed: every rank packed one
    std::vector<gdap_dim> every;
    std::vector<std::vector<int64_t>> storage;
    every.reserve(static_cast<size_t>(c.size * ndim0));
    for (int64_t r = 0; r < c.size; ++r) unpack_dims(all[static_cast<size_t>(r)], r, ndim0, every, storage);
    *out = new gdap_map(c.size, ndim0, every.data());
  });
}

}  // extern "C"
