// The halo exchange's C entry points, the checks every executor shares, and the in-process group's
// executor. The group works as gdap_redistribute's (exec_group.cpp): one rendezvous publishes every
// rank's section and check result (the agreement), then each rank copies straight between
// sections: on the host it pulls its halos from its neighbours' owned elements; on devices one copy
// kernel per rank pushes its owned elements into its neighbours' halos (GDAP_GROUP_COPY=pull
// pulls), its stream first waiting for every peer's and every peer's stream waiting for it after.
// Kept elements are only read and padding only written (halo.hpp), so ranks never race.
#include "array/array.hpp"
#include "array/layout.hpp"
#include "comm/group.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "move/device.hpp"
#include "move/group_copies.hpp"
#include "move/halo.hpp"
#include "move/redistribute.hpp"
#include "protocol/dim.hpp"

#include <atomic>
#include <memory>
#include <cstring>
#include <optional>

namespace gdap::move {

namespace {

bool same_dtype(gdap_dtype a, gdap_dtype b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t n : shape) text += (text.empty() ? "" : " x ") + std::to_string(n);
  return text.empty() ? "0-d" : text;
}

// The local array's dictionary along `i` must be the map's for this rank (padding included).
void check_dim(const gdap_dim& mine, const gdap_dim& map, int64_t i) {
  const bool same = mine.dist_type == map.dist_type && mine.size == map.size && mine.start == map.start &&
                    mine.proc_grid_rank == map.proc_grid_rank && mine.proc_grid_size == map.proc_grid_size &&
                    (mine.dist_type != GDAP_DIST_BLOCK ||
                     (mine.stop == map.stop && mine.padding[0] == map.padding[0] &&
                      mine.padding[1] == map.padding[1] && is_periodic(mine) == is_periodic(map)));
  if (!same) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} of the local array differs from the halo's map for this rank (start {} vs {}, "
         "stop {} vs {}, padding ({}, {}) vs ({}, {}))", dim_label(mine, i), mine.start, map.start, mine.stop, map.stop,
         mine.padding[0], mine.padding[1], map.padding[0], map.padding[1]);
  }
}

}  // namespace

void check_halo_call(const HaloCall& call) {
  if (call.halo == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "halo is NULL");
  const gdap_halo& h = *call.halo;
  if (h.plan.rank != call.comm.rank) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the halo is rank {}'s but the communicator is rank {}'s", h.plan.rank, call.comm.rank);
  }
  if (h.plan.nranks != call.comm.size) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the halo is for {} ranks but the communicator has {}", h.plan.nranks, call.comm.size);
  }
  if (call.local == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "local is NULL");
  const gdap_array& a = *call.local;
  const gdap_dtype d = a.section.dtype;
  if (!same_dtype(d, h.dtype)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "local has dtype (code {}, {} bits, {} lanes) but the halo was made for (code {}, {} "
         "bits, {} lanes)", d.code, d.bits, d.lanes, h.dtype.code, h.dtype.bits, h.dtype.lanes);
  }
  if (a.section.shape != h.shape) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "local has shape {} but the halo's map gives this rank {}", shape_text(a.section.shape),
         shape_text(h.shape));
  }
  for (int64_t i = 0; i < a.ndim(); ++i) check_dim(a.dims[i], h.dims[static_cast<size_t>(i)], i);
  if (a.readonly) fail(GDAP_ERR_INVALID_ARGUMENT, "local is read-only; a halo exchange writes its padding");
  if (memory_of(&a) == Memory::none) {
    fail(GDAP_ERR_UNSUPPORTED, "local lives on device type {}, which gdap cannot move", a.section.device.type);
  }
  touches(call.comm, "local", call.local, true);
}

namespace {

struct Published {
  std::string error;
  gdap_status status = GDAP_SUCCESS;
  Memory memory = Memory::none;
  gdap_array* local = nullptr;
  const DeviceEvent* ready = nullptr;
  const DeviceEvent* done = nullptr;
};

// The same verdict on every rank: the first failing rank's error, or mixed memories.
std::optional<Error> verdict(const std::vector<const Published*>& all, int64_t self) {
  const Published& mine = *all[static_cast<size_t>(self)];
  if (!mine.error.empty()) return Error(mine.status, mine.error);
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r]->error.empty()) continue;
    return Error(GDAP_ERR_REMOTE, fmt::format("rank {} failed ({}): {}", r, gdap_status_string(all[r]->status), all[r]->error));
  }
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r]->memory != all[0]->memory) {
      return Error(GDAP_ERR_UNSUPPORTED, fmt::format("rank {}'s section is in {} memory but rank 0's in {}; an in-process "
                                                     "group exchanges halos host-to-host or device-to-device", r,
                                                     all[r]->memory == Memory::host ? "host" : "device",
                                                     all[0]->memory == Memory::host ? "host" : "device"));
    }
  }
  return std::nullopt;
}

// Calls f(copies, from, to) per message this rank copies: its own wrap-around, then its receives
// (pull) or its sends (push).
template <typename F>
void for_each_transfer(const HaloCall& call, const std::vector<const Published*>& all, bool push, F&& f) {
  const HaloPlan& plan = call.halo->plan;
  const int64_t es = call.halo->element_size;
  auto one = [&](const HaloMessage& m, const gdap_array* from, const gdap_array* to) {
    std::vector<Copy2D> copies;
    halo_copies(m, HaloEnd{HaloEnd::sender, from->section.strides}, HaloEnd{HaloEnd::receiver, to->section.strides}, es,
                copies);
    f(copies, from, to);
  };
  for (const HaloMessage& m : plan.local) one(m, call.local, call.local);
  if (push) {
    for (const HaloMessage& m : plan.sends) one(m, call.local, all[static_cast<size_t>(m.peer)]->local);
  } else {
    for (const HaloMessage& m : plan.recvs) one(m, all[static_cast<size_t>(m.peer)]->local, call.local);
  }
}

std::vector<int64_t> batch_key(const HaloCall& call, const std::vector<const Published*>& all, bool push) {
  std::vector<int64_t> key{static_cast<int64_t>(call.halo->serial), push ? 1 : 0};
  for (const Published* p : all) {
    key.push_back(reinterpret_cast<int64_t>(p->local->data()));
    key.insert(key.end(), p->local->section.strides.begin(), p->local->section.strides.end());
  }
  return key;
}

}  // namespace

void halo_group(const HaloCall& call) {
  auto& comm = dynamic_cast<GroupComm&>(call.comm);
  Published mine;
  GroupDeviceScratch* scratch = nullptr;
  try {
    check_halo_call(call);
    mine.memory = memory_of(call.local);
    mine.local = call.local;
    if (mine.memory == Memory::device) {
      const int device = call.local->section.device.id;
      set_device(device);
      scratch = &group_device_scratch(call.comm.halo_scratch, device);
      scratch->ready.record(call.comm.stream);
      mine.ready = &scratch->ready;
      mine.done = &scratch->done;
    }
  } catch (const Error& e) {
    mine.error = e.what();
    mine.status = e.status();
  }
  // Copies run inside the rendezvous while every publication is alive; nothing may throw out of it.
  std::optional<Error> failure;
  bool refused = false;
  comm.exchange(&mine, [&](const std::vector<const void*>& raw) {
    std::vector<const Published*> all;
    for (const void* p : raw) all.push_back(static_cast<const Published*>(p));
    failure = verdict(all, comm.rank);
    refused = failure.has_value();
    if (refused) return;
    try {
      if (mine.memory == Memory::host) {
        for_each_transfer(call, all, false, [](const std::vector<Copy2D>& copies, const gdap_array* from, const gdap_array* to) {
          run_host_copies(copies, static_cast<const char*>(from->data()), static_cast<char*>(to->data()));
        });
      } else {
        const bool push = push_mode();
        queue_copies(*scratch, call.comm.stream, all, push, batch_key(call, all, push),
                     [&](auto&& f) { for_each_transfer(call, all, push, f); });
      }
    } catch (const Error& e) {
      failure = e;
    } catch (const std::bad_alloc&) {
      failure = Error(GDAP_ERR_NO_MEMORY, "out of host memory while copying halos");
    }
  });
  if (!refused && mine.memory == Memory::device) {
    // Every rank's stream waits for its peers' kernels before the caller's later work on it.
    comm.exchange(&mine, [&](const std::vector<const void*>& raw) {
      for (const void* p : raw) {
        const auto* peer = static_cast<const Published*>(p);
        if (peer != &mine && peer->done != nullptr) peer->done->wait_on(call.comm.stream);
      }
    });
  }
  if (failure) throw *failure;
}

}  // namespace gdap::move

// ---- C entry points ----

using gdap::fail;
using gdap::guard;
using gdap::require;

namespace {


// The caller's options (NULL: the defaults), as core/versioned.hpp reads them.
gdap_halo_options read_options(const gdap_halo_options* options) {
  if (options == nullptr) return GDAP_HALO_OPTIONS_INIT;
  return gdap::read_versioned(options, gdap_halo_options GDAP_HALO_OPTIONS_INIT, "options", "GDAP_HALO_OPTIONS_INIT");
}

int64_t bytes_of(const std::vector<gdap::move::HaloMessage>& messages, int64_t element_size) {
  int64_t total = 0;
  for (const auto& m : messages) {
    total = gdap::checked_add(total, gdap::checked_mul(m.elements, element_size, "halo bytes (elements * element size)"),
                              "halo bytes");
  }
  return total;
}

}  // namespace

extern "C" {

GDAP_API gdap_status gdap_halo_create(gdap_halo** out, const gdap_map* map, gdap_dtype dtype, int64_t rank,
                                      const gdap_halo_options* options) {
  return guard([&] {
    require(out, "out");
    require(map, "map");
    const gdap_halo_options o = read_options(options);
    const int64_t element_size = gdap::element_size(dtype);
    if (rank < 0 || rank >= map->nranks) fail(GDAP_ERR_OUT_OF_RANGE, "rank {} is not in [0, {})", rank, map->nranks);
    std::span<const int64_t> widths;
    if (o.widths != nullptr) widths = std::span<const int64_t>(o.widths, static_cast<size_t>(map->ndim()));
    if (!gdap::move::map_has_halo(*map, widths)) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "no rank of the map has padding to exchange into (only 'b' dimensions have "
                                      "halos: communication padding between neighbours and, on a periodic dimension, "
                                      "the edge ranks' boundary padding)");
    }
    static std::atomic<uint64_t> serials{0};
    auto halo = std::make_unique<gdap_halo>();
    halo->plan = gdap::move::plan_halo(*map, rank, o.corners != 0, widths);
    halo->dtype = dtype;
    halo->element_size = element_size;
    halo->corners = o.corners != 0;
    for (int64_t i = 0; i < map->ndim(); ++i) {
      halo->dims.push_back(map->dim(rank, i));
      halo->shape.push_back(gdap::local_extent(map->dim(rank, i)));
    }
    halo->send_bytes = bytes_of(halo->plan.sends, element_size);
    halo->recv_bytes = bytes_of(halo->plan.recvs, element_size);
    halo->local_bytes = bytes_of(halo->plan.local, element_size);
    halo->serial = ++serials;
    *out = halo.release();
  });
}

GDAP_API gdap_status gdap_halo_destroy(gdap_halo* halo) {
  return guard([&] { delete halo; });
}

GDAP_API gdap_status gdap_halo_stats_get(gdap_halo_stats* stats, const gdap_halo* halo) {
  return guard([&] {
    require(halo, "halo");
    const gdap::move::HaloPlan& p = halo->plan;
    gdap::write_versioned(stats,
                          gdap_halo_stats{sizeof(gdap_halo_stats), 0, p.rank, p.nranks,
                                          static_cast<int64_t>(p.sends.size()), static_cast<int64_t>(p.recvs.size()),
                                          halo->send_bytes, halo->recv_bytes, halo->local_bytes},
                          "stats", "GDAP_HALO_STATS_INIT");
  });
}

namespace {

void run_halo(const gdap::move::HaloCall& call) {
  switch (call.comm.kind()) {
    case GDAP_COMM_GROUP: return gdap::move::halo_group(call);
    case GDAP_COMM_MPI: return gdap::move::halo_mpi(call);
    case GDAP_COMM_NCCL: return gdap::move::halo_nccl(call);
  }
  fail(GDAP_ERR_INTERNAL, "communicator of unknown kind {}", static_cast<int>(call.comm.kind()));
}

// This rank's checks of an exchange on its communicator's engine.
void check_halo_engine(const gdap::move::HaloCall& call) {
  switch (call.comm.kind()) {
    case GDAP_COMM_MPI: return gdap::move::check_halo_mpi(call);
    case GDAP_COMM_NCCL: return gdap::move::check_halo_nccl(call);
    default: return gdap::move::check_halo_call(call);  // the group checks memories at each rendezvous
  }
}

}  // namespace

GDAP_API gdap_status gdap_halo_exchange(gdap_comm* comm, const gdap_halo* halo, gdap_array* local) {
  return guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    const gdap::CollectiveCall collective(c, "gdap_halo_exchange");
    run_halo(gdap::move::HaloCall{c, halo, local});
  });
}

// A persistent halo exchange: the arguments gdap_halo_exchange_init checked and agreed on (borrowed),
// and over NCCL the direct writes' state when the ranks took them (owned).
struct gdap_exchange {
  gdap_comm* comm;
  const gdap_halo* halo;
  gdap_array* local;
  std::unique_ptr<gdap::Scratch> direct;
};

GDAP_API gdap_status gdap_halo_exchange_init(gdap_exchange** out, gdap_comm* comm, const gdap_halo* halo,
                                             gdap_array* local) {
  return guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    const gdap::CollectiveCall collective(c, "gdap_halo_exchange_init");
    const gdap::move::HaloCall call{c, halo, local};
    const bool nccl = c.kind() == GDAP_COMM_NCCL;
    std::unique_ptr<gdap::Scratch> direct;
    // Every check on every rank, so that a bad argument is every rank's error; over NCCL the
    // ranks' offers for direct writes travel in the same allgather.
    const std::vector<std::string> offers = gdap::agree_gather(c, [&] {
      require(out, "out");
      check_halo_engine(call);
      return gdap::Share{"", nccl ? gdap::move::halo_peer_offer(call, direct) : std::string()};
    }, [](size_t, std::string_view, std::string_view) { return std::string(); });
    if (nccl) gdap::move::halo_peer_bind(call, offers, direct);
    *out = new gdap_exchange{comm, halo, local, std::move(direct)};
  });
}

GDAP_API gdap_status gdap_exchange_start(gdap_exchange* exchange) {
  return guard([&] {
    require(exchange, "exchange");
    const gdap::CollectiveCall collective(*exchange->comm, "gdap_exchange_start");
    run_halo(gdap::move::HaloCall{*exchange->comm, exchange->halo, exchange->local, true, exchange->direct.get()});
  });
}

GDAP_API gdap_status gdap_exchange_destroy(gdap_exchange* exchange) {
  return guard([&] { delete exchange; });
}

}  // extern "C"
