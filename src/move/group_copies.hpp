// What the in-process group's two executors for device sections (redistribution: exec_group.cpp,
// halo exchange: halo.cpp) share: the scratch a rank keeps between calls, the copy direction, and
// queuing one call's copies as one kernel after every rank's earlier work.
#pragma once

#include "array/array.hpp"
#include "comm/comm.hpp"
#include "move/copy.hpp"
#include "move/device.hpp"

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace gdap::move {

// What a group rank keeps between calls on device arrays (all on `device`).
struct GroupDeviceScratch final : Scratch {
  int device = -1;
  DeviceEvent ready, done;
  DeviceBatch batch;
};

// The scratch kept in `slot` for `device`: made anew when the slot holds none, another kind, or
// another device's.
GroupDeviceScratch& group_device_scratch(std::unique_ptr<Scratch>& slot, int device);

// Push (each rank writes its sends into its peers' sections) by default: NVLink writes beat reads
// (measured on 2 x H200, docs/PERFORMANCE.md). GDAP_GROUP_COPY=pull reads the receives instead.
bool push_mode();

// Queues one call's copies on `stream` as one kernel, after every rank's earlier work (each
// publication's `ready` event; this rank's own is skipped, since its stream already orders it),
// then records `done`. The kernel's descriptors are built and uploaded again only when `key`
// changes; `each_transfer(f)` calls f(copies, from, to) for every transfer of the call, walked as
// `push` says.
template <typename Publications, typename EachTransfer>
void queue_copies(GroupDeviceScratch& scratch, void* stream, const Publications& all, bool push,
                  std::vector<int64_t> key, EachTransfer&& each_transfer) {
  for (const auto* p : all) {
    if (p->ready != nullptr && p->ready != &scratch.ready) p->ready->wait_on(stream);
  }
  if (!scratch.batch.holds(key)) {
    std::vector<DeviceCopy> device_copies;
    each_transfer([&](const std::vector<Copy2D>& copies, const gdap_array* from, const gdap_array* to) {
      const int peer = (push ? to : from)->section.device.id;
      enable_peer_access(scratch.device, peer);
      append_device_copies(device_copies, copies, static_cast<const char*>(from->data()), static_cast<char*>(to->data()),
                           peer != scratch.device);
    });
    scratch.batch.upload(std::move(key), device_copies, stream);
  }
  scratch.batch.launch(stream);
  scratch.done.record(stream);
}

}  // namespace gdap::move
