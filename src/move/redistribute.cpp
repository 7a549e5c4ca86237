// Checks shared by every executor, and the dispatch of gdap_redistribute by communicator kind.
#include "move/redistribute.hpp"

#include "array/array.hpp"
#include "core/error.hpp"

#include <cstring>
#include <string>

namespace gdap::move {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (int64_t n : shape) text += (text.empty() ? "" : " x ") + std::to_string(n);
  return text.empty() ? "0-d" : text;
}

bool same_dtype(gdap_dtype a, gdap_dtype b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

void check_array(const gdap_array* array, const std::optional<std::vector<int64_t>>& shape, const gdap_plan& plan,
                 const char* which) {
  if (!shape) return;  // outside this map: the rank holds nothing on this side, the array is ignored
  if (array == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "{} is NULL but this rank holds part of the {} map", which, which);
  const gdap_dtype d = array->section.dtype;
  if (!same_dtype(d, plan.dtype)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} has dtype (code {}, {} bits, {} lanes) but the plan was made for (code {}, {} bits, {} lanes)",
         which, d.code, d.bits, d.lanes, plan.dtype.code, plan.dtype.bits, plan.dtype.lanes);
  }
  if (array->section.shape != *shape) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{} has local shape {} but the {} map gives this rank {}", which,
         shape_text(array->section.shape), which, shape_text(*shape));
  }
  if (memory_of(array) == Memory::none) {
    fail(GDAP_ERR_UNSUPPORTED, "{} lives on device type {}, which gdap cannot move", which, array->section.device.type);
  }
}

}  // namespace

void touches(gdap_comm& comm, const char* what, const gdap_array* a, bool written) {
  if (a == nullptr) return;
  const ByteSpan span = byte_span(*a);
  if (!span.empty()) gdap::touches(comm, Region{what, span.first, span.last, written});
}

void check_apart(const gdap_array& written, const char* written_name, const gdap_array& read, const char* read_name,
                 const char* call) {
  if (!may_share_memory(written, read)) return;
  fail(GDAP_ERR_INVALID_ARGUMENT, "{} shares memory with {} (their bytes overlap): {} works out of place, reading {} "
       "while it writes {}; pass separate arrays", written_name, read_name, call, read_name, written_name);
}

Memory memory_of(const gdap_array* array) {
  if (array == nullptr) return Memory::none;
  switch (array->section.device.type) {
    case GDAP_DEVICE_CPU:
    case GDAP_DEVICE_CUDA_HOST:
    case GDAP_DEVICE_CUDA_MANAGED:
      return Memory::host;
    case GDAP_DEVICE_CUDA:
      return Memory::device;
    default:
      return Memory::none;
  }
}

Memory Call::memory() const {
  const Memory s = memory_of(src), d = memory_of(dst);
  return s == Memory::none ? d : s;
}

std::string plan_mismatch(size_t r) {
  return fmt::format("the ranks' plans are of different redistributions: rank {}'s differs from rank 0's (made from "
                     "other maps or another dtype; every rank's plan of one redistribution comes from the same two "
                     "distributions and dtype); nothing moved", r);
}

std::string plan_token(const gdap_plan* plan) {
  if (plan == nullptr) return {};
  std::string token(sizeof plan->fingerprint, '\0');
  std::memcpy(token.data(), &plan->fingerprint, sizeof plan->fingerprint);
  return token;
}

void check_call(const Call& call) {
  if (call.plan == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "plan is NULL");
  const RankPlan& p = call.plan->plan;
  if (p.rank() != call.comm.rank) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the plan is rank {}'s but the communicator is rank {}'s", p.rank(), call.comm.rank);
  }
  if (p.nranks() != call.comm.size) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the plan is for {} ranks but the communicator has {}", p.nranks(), call.comm.size);
  }
  check_array(call.src, call.plan->src_shape, *call.plan, "src");
  check_array(call.dst, call.plan->dst_shape, *call.plan, "dst");
  if (call.plan->dst_shape && call.dst->readonly) fail(GDAP_ERR_INVALID_ARGUMENT, "dst is read-only");
  const Memory s = memory_of(call.src), d = memory_of(call.dst);
  if (s != Memory::none && d != Memory::none && s != d) {
    fail(GDAP_ERR_UNSUPPORTED, "src is in {} memory but dst in {} memory; both must be host-accessible or both on devices",
         s == Memory::host ? "host" : "device", d == Memory::host ? "host" : "device");
  }
  const gdap_array* src = call.plan->src_shape ? call.src : nullptr;
  const gdap_array* dst = call.plan->dst_shape ? call.dst : nullptr;
  if (src != nullptr && dst != nullptr) check_apart(*dst, "dst", *src, "src", "gdap_redistribute");
  touches(call.comm, "src", src, false);
  touches(call.comm, "dst", dst, true);
}

std::vector<Copy2D> part_copies(const RankPlan& plan, Part part, const Side& from, const Side& to, int64_t element_size) {
  std::vector<Copy2D> out;
  for (const Message& m : plan.messages(part)) message_copies(plan, part, m, from, to, element_size, out);
  return out;
}

}  // namespace gdap::move
