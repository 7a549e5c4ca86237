// The halo exchange over NCCL, for device sections on the communicator's GPU, as exec_nccl.cpp
// runs a redistribution; everything is queued on the communicator's stream:
//   1. one copy kernel packs the strided faces into a staging buffer and copies the periodic wrap
//      onto the rank itself (owned elements read, padding written: no race within the kernel);
//   2. one NCCL group of ncclSend/ncclRecv, messages that are one contiguous run (a face of the
//      outermost dimension) going from and into the section itself;
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
    std::vector<Copy2D> copies;
    halo_copies(m, sender, packed, es, copies);
    s.send(static_cast<int>(m.peer), m.elements * es, copies, data, m.offset * es);
  }
  for (const HaloMessage& m : h.plan.recvs) {
    std::vector<Copy2D> copies;
    halo_copies(m, packed, receiver, es, copies);
    s.recv(static_cast<int>(m.peer), m.elements * es, copies, data, m.offset * es);
  }
  for (const HaloMessage& m : h.plan.local) {
    std::vector<Copy2D> copies;
    halo_copies(m, sender, receiver, es, copies);
    s.local(copies, data, data);
  }
  s.end(std::move(key), call.comm.stream);
}

}  // namespace

void halo_nccl(const HaloCall& call) {
  auto& comm = dynamic_cast<NcclComm&>(call.comm);
  agree(comm, [&] {
    check_halo_call(call);
    if (memory_of(call.local) != Memory::device) {
      fail(GDAP_ERR_UNSUPPORTED, "an NCCL communicator exchanges halos of device sections; this one is in host memory "
                                 "(use an MPI communicator or an in-process group)");
    }
    if (call.local->section.device.id != comm.device()) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "local is on GPU {} but the NCCL communicator on GPU {}",
           call.local->section.device.id, comm.device());
    }
  });
  set_device(comm.device());
  NcclStaging& s = kept_scratch<NcclStaging>(comm.halo_scratch);
  std::vector<int64_t> key{static_cast<int64_t>(call.halo->serial), reinterpret_cast<int64_t>(call.local->data())};
  key.insert(key.end(), call.local->section.strides.begin(), call.local->section.strides.end());
  if (!s.holds(key)) prepare(call, s, std::move(key));
  s.run(comm);
}

}  // namespace gdap::move
