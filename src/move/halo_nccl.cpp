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
#include "move/redistribute.hpp"

namespace gdap::move {

namespace {

struct Transfer {
  int peer;
  int64_t bytes;
  char* data;
};

struct HaloNcclScratch final : Scratch {
  std::vector<int64_t> key;
  DeviceBuffer send_buffer, recv_buffer;
  DeviceBatch pack, unpack;
  std::vector<Transfer> sends, recvs;
};

void add(std::vector<DeviceCopy>& out, const std::vector<Copy2D>& copies, const char* src, char* dst) {
  for (const Copy2D& c : copies) out.push_back({src + c.src, dst + c.dst, c.rows, c.row_bytes, c.src_pitch, c.dst_pitch});
}

void prepare(const HaloCall& call, HaloNcclScratch& s, std::vector<int64_t> key) {
  const gdap_halo& h = *call.halo;
  const int64_t es = h.element_size;
  const std::vector<int64_t>& strides = call.local->section.strides;
  const HaloEnd packed{HaloEnd::packed, {}};
  const HaloEnd sender{HaloEnd::sender, strides}, receiver{HaloEnd::receiver, strides};
  char* send_staging = s.send_buffer.reserve(std::max<int64_t>(h.send_bytes, 1));
  char* recv_staging = s.recv_buffer.reserve(std::max<int64_t>(h.recv_bytes, 1));
  char* data = static_cast<char*>(call.local->data());
  std::vector<DeviceCopy> pack, unpack;
  s.sends.clear();
  s.recvs.clear();
  for (const HaloMessage& m : h.plan.sends) {
    std::vector<Copy2D> copies;
    halo_copies(m, sender, packed, es, copies);
    char* staged = send_staging + m.offset * es;
    if (single_run(copies)) staged = data + copies[0].src;
    else add(pack, copies, data, send_staging);  // the copies' packed offsets count m.offset
    s.sends.push_back({static_cast<int>(m.peer), m.elements * es, staged});
  }
  for (const HaloMessage& m : h.plan.recvs) {
    std::vector<Copy2D> copies;
    halo_copies(m, packed, receiver, es, copies);
    char* staged = recv_staging + m.offset * es;
    if (single_run(copies)) staged = data + copies[0].dst;
    else add(unpack, copies, recv_staging, data);
    s.recvs.push_back({static_cast<int>(m.peer), m.elements * es, staged});
  }
  for (const HaloMessage& m : h.plan.local) {
    std::vector<Copy2D> copies;
    halo_copies(m, sender, receiver, es, copies);
    add(pack, copies, data, data);
  }
  s.pack.upload(key, pack, call.comm.stream);
  s.unpack.upload(key, unpack, call.comm.stream);
  s.key = std::move(key);
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
  HaloNcclScratch& s = kept_scratch<HaloNcclScratch>(comm.halo_scratch);
  std::vector<int64_t> key{static_cast<int64_t>(call.halo->serial), reinterpret_cast<int64_t>(call.local->data())};
  key.insert(key.end(), call.local->section.strides.begin(), call.local->section.strides.end());
  if (s.key != key) prepare(call, s, std::move(key));
  void* stream = comm.stream;
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  s.pack.launch(stream);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (const Transfer& t : s.recvs) {
    check_nccl(ncclRecv(t.data, static_cast<size_t>(t.bytes), ncclChar, t.peer, comm.handle(), cuda_stream), "ncclRecv");
  }
  for (const Transfer& t : s.sends) {
    check_nccl(ncclSend(t.data, static_cast<size_t>(t.bytes), ncclChar, t.peer, comm.handle(), cuda_stream), "ncclSend");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  s.unpack.launch(stream);
}

}  // namespace gdap::move
