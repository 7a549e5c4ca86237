// The halo exchange over NCCL, for device sections on the communicator's GPU, as exec_nccl.cpp
// runs a redistribution; everything is queued on the communicator's stream:
//   1. one copy kernel packs the strided faces into a staging buffer and copies the periodic wrap
//      onto the rank itself (owned elements read, padding written: no race within the kernel);
//   2. one NCCL group of ncclSend/ncclRecv, a box of 64 KiB or more as a message of its own (so
//      that a face that is one contiguous run, a face of the outermost dimension, goes from and
//      into the section itself), smaller boxes to the same peer packed together;
//   3. one copy kernel unpacks the staged receives into the padding.
// Copy descriptors are uploaded once and reused while the halo and the section stay the same.
#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "move/device.hpp"
#include "move/halo.hpp"
#include "move/nccl_staging.hpp"
#include "move/redistribute.hpp"

namespace gdap::move {

namespace {

// Routes every message (staged or direct) and uploads the pack and unpack kernels' copies.
void prepare(const HaloCall& call, NcclStaging& s, std::vector<int64_t> key) {
  const gdap_halo& h = *call.halo;
  const int64_t es = h.element_size;
  const std::vector<int64_t>& strides = call.local->section.strides;
  const HaloEnd packed{HaloEnd::packed, {}};
  const HaloEnd sender{HaloEnd::sender, strides}, receiver{HaloEnd::receiver, strides};
  s.begin(h.send_bytes, h.recv_bytes);
  char* data = static_cast<char*>(call.local->data());
  for (const HaloMessage& m : h.plan.sends) {
    for_each_part(m, es, [&](const HaloMessage& part) {
      std::vector<Copy2D> copies;
      halo_copies(part, sender, packed, es, copies);
      s.send(static_cast<int>(part.peer), part.elements * es, copies, data, part.offset * es);
    });
  }
  for (const HaloMessage& m : h.plan.recvs) {
    for_each_part(m, es, [&](const HaloMessage& part) {
      std::vector<Copy2D> copies;
      halo_copies(part, packed, receiver, es, copies);
      s.recv(static_cast<int>(part.peer), part.elements * es, copies, data, part.offset * es);
    });
  }
  for (const HaloMessage& m : h.plan.local) {
    std::vector<Copy2D> copies;
    halo_copies(m, sender, receiver, es, copies);
    s.local(copies, data, data);
  }
  s.end(std::move(key), call.comm.stream);
}

}  // namespace

void check_halo_nccl(const HaloCall& call) {
  check_halo_call(call);
  check_nccl_section(call.local, dynamic_cast<NcclComm&>(call.comm).device(), "local", "the halo exchange takes");
}

// Bound (gdap_exchange_start): no agreement, so a repeated exchange costs the pack kernel, one
// NCCL group and the unpack kernel, queued without a wait on the host; or, where the ranks took
// direct writes at the binding (halo_peer.cpp), the push kernel and the unpack kernel, ordered
// across the GPUs by flags.
void halo_nccl(const HaloCall& call) {
  auto& comm = dynamic_cast<NcclComm&>(call.comm);
  if (call.bound) {
    comm.check_usable();
    if (call.direct) return halo_peer_start(call, *call.direct);
  } else {
    agree(comm, [&] { check_halo_nccl(call); });
  }
  set_device(comm.device());
  NcclStaging& s = kept_scratch<NcclStaging>(comm.halo_scratch);
  std::vector<int64_t> key{static_cast<int64_t>(call.halo->serial), reinterpret_cast<int64_t>(call.local->data())};
  key.insert(key.end(), call.local->section.strides.begin(), call.local->section.strides.end());
  if (!s.holds(key)) prepare(call, s, std::move(key));
  s.run(comm);
}

}  // namespace gdap::move
