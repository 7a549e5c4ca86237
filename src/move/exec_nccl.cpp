// The NCCL executor, for device sections on the communicator's GPU. Everything is queued on the
// communicator's stream and nothing waits on the host after the agreement:
//   1. one copy kernel packs every message that is not one contiguous run into a staging buffer,
//      and copies the local part straight from source to destination;
//   2. one NCCL group of ncclSend/ncclRecv, contiguous messages going to and from the sections
//      themselves;
//   3. one copy kernel unpacks the staged receives.
// The copy descriptors (absolute addresses) are uploaded once and reused while the plan and the
// sections stay the same.
#include "array/array.hpp"
#include "comm/nccl.hpp"
#include "core/error.hpp"
#include "move/device.hpp"
#include "move/redistribute.hpp"

namespace gdap::move {

namespace {

// One message as NCCL sees it: a peer, bytes and where they are.
struct Transfer {
  int peer;
  int64_t bytes;
  char* data;
};

struct NcclScratch final : Scratch {
  std::vector<int64_t> key;
  DeviceBuffer send_buffer, recv_buffer;
  DeviceBatch pack, unpack;
  std::vector<Transfer> sends, recvs;
};

std::vector<int64_t> key_of(const Call& call) {
  std::vector<int64_t> key{static_cast<int64_t>(call.plan->serial)};
  for (const gdap_array* a : {call.src, static_cast<const gdap_array*>(call.dst)}) {
    key.push_back(a ? reinterpret_cast<int64_t>(a->data()) : 0);
    if (a) key.insert(key.end(), a->section.strides.begin(), a->section.strides.end());
  }
  return key;
}

void add(std::vector<DeviceCopy>& out, const std::vector<Copy2D>& copies, const char* src, char* dst) {
  for (const Copy2D& c : copies) out.push_back({src + c.src, dst + c.dst, c.rows, c.row_bytes, c.src_pitch, c.dst_pitch});
}

// Routes every message (staged or direct) and uploads the pack and unpack kernels' copies.
void prepare(const Call& call, NcclScratch& s, std::vector<int64_t> key) {
  const gdap_plan& plan = *call.plan;
  const int64_t es = plan.element_size;
  const Side packed{Side::packed, {}};
  char* send_staging = s.send_buffer.reserve(std::max<int64_t>(plan.stats.send_bytes, 1));
  char* recv_staging = s.recv_buffer.reserve(std::max<int64_t>(plan.stats.recv_bytes, 1));
  const char* src = call.src ? static_cast<const char*>(call.src->data()) : nullptr;
  char* dst = call.dst ? static_cast<char*>(call.dst->data()) : nullptr;
  std::vector<DeviceCopy> pack, unpack;
  s.sends.clear();
  s.recvs.clear();
  if (call.src) {
    const Side section{Side::source, call.src->section.strides};
    for (const Message& m : plan.plan.messages(Part::send)) {
      std::vector<Copy2D> copies;
      message_copies(plan.plan, Part::send, m, section, packed, es, copies);
      char* staged = send_staging + m.offset * es;
      if (single_run(copies)) staged = const_cast<char*>(src + copies[0].src);  // NCCL only reads it
      else add(pack, copies, src, send_staging);  // the copies' packed offsets count m.offset
      s.sends.push_back({static_cast<int>(m.peer), m.elements * es, staged});
    }
  }
  if (call.dst) {
    const Side section{Side::destination, call.dst->section.strides};
    for (const Message& m : plan.plan.messages(Part::recv)) {
      std::vector<Copy2D> copies;
      message_copies(plan.plan, Part::recv, m, packed, section, es, copies);
      char* staged = recv_staging + m.offset * es;
      if (single_run(copies)) staged = dst + copies[0].dst;
      else add(unpack, copies, recv_staging, dst);
      s.recvs.push_back({static_cast<int>(m.peer), m.elements * es, staged});
    }
  }
  if (call.src && call.dst) {
    add(pack, part_copies(plan.plan, Part::local, Side{Side::source, call.src->section.strides},
                          Side{Side::destination, call.dst->section.strides}, es),
        src, dst);
  }
  s.pack.upload(key, pack, call.comm.stream);
  s.unpack.upload(key, unpack, call.comm.stream);
  s.key = std::move(key);
}

}  // namespace

void run_nccl(const Call& call) {
  auto& comm = dynamic_cast<NcclComm&>(call.comm);
  agree(comm, [&] {
    check_call(call);
    for (const gdap_array* a : {call.src, static_cast<const gdap_array*>(call.dst)}) {
      if (a == nullptr) continue;
      if (memory_of(a) != Memory::device) {
        fail(GDAP_ERR_UNSUPPORTED, "an NCCL communicator moves device sections; this one is in host memory (use an "
                                   "MPI communicator or an in-process group)");
      }
      if (a->section.device.id != comm.device()) {
        fail(GDAP_ERR_INVALID_ARGUMENT, "a section is on GPU {} but the NCCL communicator on GPU {}",
             a->section.device.id, comm.device());
      }
    }
  }, plan_token(call.plan), plan_mismatch);
  const Call held{call.comm, call.plan, call.plan->src_shape ? call.src : nullptr, call.plan->dst_shape ? call.dst : nullptr};
  set_device(comm.device());
  NcclScratch& s = kept_scratch<NcclScratch>(comm.scratch);
  std::vector<int64_t> key = key_of(held);
  if (s.key != key) prepare(held, s, std::move(key));
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
