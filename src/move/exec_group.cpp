// The in-process group's executor. Ranks are threads sharing one address space, so nothing is
// packed or sent: every rank publishes its sections at one rendezvous and then copies its part
// straight between sections: pulling what it receives from its peers' sources (host, and device
// GDAP_GROUP_COPY=pull), or pushing what it sends into its peers' destinations (device, the default).
//
// The rendezvous doubles as the agreement: each rank publishes its own check's error, and no
// rank copies anything unless every rank passed. On devices, copies are one kernel per rank on
// the rank's own stream, which first waits for every peer's stream (so peers' earlier work on
// the sections is done) and which every peer's stream waits for afterwards (so their later work
// cannot overwrite what is still being read or written).
#include "array/array.hpp"
#include "comm/group.hpp"
#include "core/error.hpp"
#include "move/device.hpp"
#include "move/group_copies.hpp"
#include "move/redistribute.hpp"


namespace gdap::move {

namespace {

struct Published {
  std::string error;  // this rank's check failure ("" if none)
  gdap_status status = GDAP_SUCCESS;
  Memory memory = Memory::none;
  const gdap_array* src = nullptr;
  gdap_array* dst = nullptr;
  int device = -1;                    // the CUDA device of a device rank
  uint64_t fingerprint = 0;           // the plan's: every rank's must be rank 0's
  const DeviceEvent* ready = nullptr;  // device: recorded when the rank's earlier work is queued
  const DeviceEvent* done = nullptr;   // device: recorded after the rank's copy kernel
};

// The first failing rank's error, or a disagreement about memories: the same verdict on every
// rank, since each reads the same publications. Empty if the call may go ahead.
std::optional<Error> verdict(const std::vector<const Published*>& all, int64_t self) {
  const Published& mine = *all[static_cast<size_t>(self)];
  if (!mine.error.empty()) return Error(mine.status, mine.error);  // a failing rank reports its own error
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r]->error.empty()) continue;
    return Error(GDAP_ERR_REMOTE, fmt::format("rank {} failed ({}): {}", r, gdap_status_string(all[r]->status), all[r]->error));
  }
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r]->fingerprint != all[0]->fingerprint) return Error(GDAP_ERR_INVALID_ARGUMENT, plan_mismatch(r));
  }
  Memory memory = Memory::none;
  for (size_t r = 0; r < all.size(); ++r) {
    const Memory m = all[r]->memory;
    if (m == Memory::none) continue;
    if (memory != Memory::none && m != memory) {
      return Error(GDAP_ERR_UNSUPPORTED, fmt::format("rank {}'s sections are in {} memory but another rank's in {}; an "
                                                     "in-process group moves host-to-host or device-to-device",
                                                     r, m == Memory::host ? "host" : "device",
                                                     m == Memory::host ? "device" : "host"));
    }
    memory = m;
  }
  return std::nullopt;
}

// Calls f(copies, from_array, to_array) for each message this rank copies: pull walks receives
// (peer source -> own destination), push walks sends (own source -> peer destination); both
// add the local copy.
template <typename F>
void for_each_transfer(const Call& call, const std::vector<const Published*>& all, bool push, F&& f) {
  const RankPlan& plan = call.plan->plan;
  const int64_t es = call.plan->element_size;
  auto one = [&](Part part, const Message& m, const gdap_array* from, const gdap_array* to) {
    std::vector<Copy2D> copies;
    message_copies(plan, part, m, Side{Side::source, from->section.strides}, Side{Side::destination, to->section.strides},
                   es, copies);
    f(copies, from, to);
  };
  for (const Message& m : plan.messages(Part::local)) one(Part::local, m, call.src, call.dst);
  if (push) {
    for (const Message& m : plan.messages(Part::send)) one(Part::send, m, call.src, all[m.peer]->dst);
  } else {
    for (const Message& m : plan.messages(Part::recv)) one(Part::recv, m, all[m.peer]->src, call.dst);
  }
}

void copy_host(const Call& call, const std::vector<const Published*>& all) {
  for_each_transfer(call, all, false, [](const std::vector<Copy2D>& copies, const gdap_array* from, const gdap_array* to) {
    run_host_copies(copies, static_cast<const char*>(from->data()), static_cast<char*>(to->data()));
  });
}

// Identifies the copies a device batch holds: the plan and every section's address and strides.
std::vector<int64_t> batch_key(const Call& call, const std::vector<const Published*>& all, bool push) {
  std::vector<int64_t> key{static_cast<int64_t>(call.plan->serial), push ? 1 : 0};
  for (const Published* p : all) {
    for (const gdap_array* a : {p->src, static_cast<const gdap_array*>(p->dst)}) {
      key.push_back(a ? reinterpret_cast<int64_t>(a->data()) : 0);
      if (a) key.insert(key.end(), a->section.strides.begin(), a->section.strides.end());
    }
  }
  return key;
}

}  // namespace

void run_group(const Call& call) {
  auto& comm = dynamic_cast<GroupComm&>(call.comm);
  Published mine;
  GroupDeviceScratch* scratch = nullptr;
  try {
    check_call(call);
    mine.fingerprint = call.plan->fingerprint;
    mine.memory = call.memory();
    mine.src = call.plan->src_shape ? call.src : nullptr;
    mine.dst = call.plan->dst_shape ? call.dst : nullptr;
    if (mine.memory == Memory::device) {
      mine.device = (mine.src ? mine.src : mine.dst)->section.device.id;
      set_device(mine.device);
      scratch = &group_device_scratch(call.comm.scratch, mine.device);
      scratch->ready.record(call.comm.stream);
      mine.ready = &scratch->ready;
      mine.done = &scratch->done;
    }
  } catch (const Error& e) {
    mine.error = e.what();
    mine.status = e.status();
  }
  // Copies happen inside the rendezvous, while every peer's publication is alive; nothing may
  // throw out of it (the peers are waiting at its closing barrier), so errors are kept for after.
  std::optional<Error> failure;
  bool any_device = false, refused = false;
  comm.exchange(&mine, [&](const std::vector<const void*>& raw) {
    std::vector<const Published*> all;
    for (const void* p : raw) all.push_back(static_cast<const Published*>(p));
    for (const Published* p : all) any_device = any_device || p->memory == Memory::device;
    failure = verdict(all, comm.rank);
    refused = failure.has_value();
    if (refused) return;
    try {
      if (mine.memory == Memory::host) copy_host(call, all);
      if (mine.memory == Memory::device) {
        const bool push = push_mode();
        queue_copies(*scratch, call.comm.stream, all, push, batch_key(call, all, push),
                     [&](auto&& f) { for_each_transfer(call, all, push, f); });
      }
    } catch (const Error& e) {
      failure = e;
    } catch (const std::bad_alloc&) {
      failure = Error(GDAP_ERR_NO_MEMORY, "out of host memory while copying");
    }
  });
  // A rank whose copy failed after the verdict still meets the peers below, so none waits for it.
  if (any_device && !refused) {
    // Every device rank's stream waits for the peers' copy kernels before the caller's later
    // work on it. Every rank decides alike (all saw the same publications), so all meet here.
    comm.exchange(&mine, [&](const std::vector<const void*>& raw) {
      for (const void* p : raw) {
        const auto* peer = static_cast<const Published*>(p);
        if (scratch != nullptr && peer->done != nullptr && peer != &mine) peer->done->wait_on(call.comm.stream);
      }
    });
  }
  if (failure) throw *failure;
}

}  // namespace gdap::move
