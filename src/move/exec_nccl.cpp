// The NCCL executor, for device sections on the communicator's GPU. Where every rank can write
// into its peers' destinations over NVLink it does so (nccl_peer.hpp); otherwise everything is
// queued on the communicator's stream and nothing waits on the host after the agreement:
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
#include "move/nccl_peer.hpp"
#include "move/nccl_staging.hpp"
#include "move/redistribute.hpp"

namespace gdap::move {

namespace {

std::vector<int64_t> key_of(const Call& call) {
  std::vector<int64_t> key{static_cast<int64_t>(call.plan->serial)};
  for (const gdap_array* a : {call.src, static_cast<const gdap_array*>(call.dst)}) {
    key.push_back(a ? reinterpret_cast<int64_t>(a->data()) : 0);
    if (a) key.insert(key.end(), a->section.strides.begin(), a->section.strides.end());
  }
  return key;
}

// Routes every message (staged or direct) and uploads the pack and unpack kernels' copies.
void prepare(const Call& call, NcclStaging& s, std::vector<int64_t> key) {
  const gdap_plan& plan = *call.plan;
  const int64_t es = plan.element_size;
  const Side packed{Side::packed, {}};
  s.begin(plan.stats.send_bytes, plan.stats.recv_bytes);
  const char* src = call.src ? static_cast<const char*>(call.src->data()) : nullptr;
  char* dst = call.dst ? static_cast<char*>(call.dst->data()) : nullptr;
  if (call.src) {
    const Side section{Side::source, call.src->section.strides};
    for (const Message& m : plan.plan.messages(Part::send)) {
      std::vector<Copy2D> copies;
      message_copies(plan.plan, Part::send, m, section, packed, es, copies);
      s.send(static_cast<int>(m.peer), m.elements * es, copies, src, m.offset * es);
    }
  }
  if (call.dst) {
    const Side section{Side::destination, call.dst->section.strides};
    for (const Message& m : plan.plan.messages(Part::recv)) {
      std::vector<Copy2D> copies;
      message_copies(plan.plan, Part::recv, m, packed, section, es, copies);
      s.recv(static_cast<int>(m.peer), m.elements * es, copies, dst, m.offset * es);
    }
  }
  if (call.src && call.dst) {
    s.local(part_copies(plan.plan, Part::local, Side{Side::source, call.src->section.strides},
                        Side{Side::destination, call.dst->section.strides}, es),
            src, dst);
  }
  s.end(std::move(key), call.comm.stream);
}

}  // namespace

void run_nccl(const Call& call) {
  auto& comm = dynamic_cast<NcclComm&>(call.comm);
  const std::vector<std::string> shares = agree_gather(comm, [&] {
    check_call(call);
    if (call.src) check_nccl_section(call.src, comm.device(), "src", "redistribution moves");
    if (call.dst) check_nccl_section(call.dst, comm.device(), "dst", "redistribution moves");
    return Share{plan_token(call.plan), peer_share(call, comm.device())};
  }, [](size_t r, std::string_view, std::string_view) { return plan_mismatch(r); });
  const Call held{call.comm, call.plan, call.plan->src_shape ? call.src : nullptr, call.plan->dst_shape ? call.dst : nullptr};
  set_device(comm.device());
  std::vector<int64_t> key = key_of(held);
  if (run_nccl_peer(held, comm, shares, key)) return;
  NcclStaging& s = kept_scratch<NcclStaging>(comm.scratch);
  if (!s.holds(key)) prepare(held, s, std::move(key));
  s.run(comm);
}

}  // namespace gdap::move
