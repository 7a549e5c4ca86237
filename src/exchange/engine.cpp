// The one place that looks at a communicator's kind: it makes that kind's engine, once, and keeps
// it on the communicator. Also the checks every engine's agreement runs.
#include "exchange/engines.hpp"

#include "array/array.hpp"
#include "comm/group.hpp"
#include "core/error.hpp"

#if GDAP_HAVE_MPI
#include "comm/mpi.hpp"
#endif
#if GDAP_HAVE_NCCL
#include "comm/nccl.hpp"
#endif

#include <fmt/format.h>

#include <optional>

namespace gdap::exchange {

namespace {

std::unique_ptr<Engine> make_engine_of(gdap_comm& comm) {
  switch (comm.kind()) {
    case GDAP_COMM_GROUP: return make_engine(dynamic_cast<GroupComm&>(comm));
#if GDAP_HAVE_MPI
    case GDAP_COMM_MPI: return make_engine(dynamic_cast<MpiComm&>(comm));
#endif
#if GDAP_HAVE_NCCL
    case GDAP_COMM_NCCL: return make_engine(dynamic_cast<NcclComm&>(comm));
#endif
    default: break;
  }
  // Unreachable with a valid handle: a communicator of a kind this build lacks cannot be made.
  fail(GDAP_ERR_UNSUPPORTED, "no engine for communicators of kind {} in this build", static_cast<int>(comm.kind()));
}

}  // namespace

Engine& engine_of(gdap_comm& comm) {
  std::unique_ptr<Scratch>& slot = comm.cache.slot("exchange.engine");
  if (!slot) slot = make_engine_of(comm);
  return static_cast<Engine&>(*slot);
}

void touches(gdap_comm& comm, const char* what, const gdap_array* a, bool written) {
  if (a == nullptr) return;
  Region region{what, footprint_of(*a), written};
  const ByteSpan span = span_of(region.bytes);
  if (span.empty()) return;
  // Ranks in other processes can share memory only through a segment each has mapped: named so,
  // with the footprint's base moved to the segment's offsets. The in-process group's ranks too: two
  // mappings of one segment in this process (gdap_ipc_open of its own export) put the same bytes at
  // two addresses.
  if (const std::optional<SegmentPlace> place = place_in_segment(span.first, span.last)) {
    region.segment = place->identity.name;
    region.segment_device = place->identity.device;
    region.segment_inode = place->identity.inode;
    region.segment_bytes = region.bytes;
    region.segment_bytes.base = region.bytes.base - span.first + place->first;
  }
  gdap::touches(comm, region);
}

void Engine::check_all(const Program& program, const Sections& sections, const Agreement& agreement) const {
  // A rank that said it fails this call (gdap_comm_fail_next) reports that, whatever its arguments:
  // every engine's agreement (the group's rendezvous too) starts here.
  const Error given = take_call_failure(comm_);
  if (given.status() != GDAP_SUCCESS) throw given;
  if (agreement.checks) agreement.checks();
  const char* operation = program.style().name;
  if (sections.src != nullptr) check_section(*sections.src, sections.src_name, operation, false);
  if (sections.dst != nullptr && static_cast<const gdap_array*>(sections.dst) != sections.src) {
    check_section(*sections.dst, sections.dst_name, operation, false);
  }
  const Memory s = memory_of(sections.src), d = memory_of(sections.dst);
  if (s != Memory::none && d != Memory::none && s != d) {
    fail(GDAP_ERR_UNSUPPORTED, "{} is in {} memory but {} in {} memory; both must be host-accessible or both on devices",
         sections.src_name, memory_name(s), sections.dst_name, memory_name(d));
  }
  // A bad GDAP_PEER_ORDER is this rank's error here, in the agreement, on every rank whatever its
  // sections (a rank with none still builds its copy lists), rather than a throw on one rank while
  // its peers already wait in the exchange.
  peer_order();
}

std::vector<int64_t> key_of(const Program& program, const Sections& sections) {
  std::vector<int64_t> key{static_cast<int64_t>(program.serial())};
  for (const gdap_array* a : {sections.src, static_cast<const gdap_array*>(sections.dst)}) {
    key.push_back(a ? reinterpret_cast<int64_t>(a->data()) : 0);
    if (a) key.insert(key.end(), a->section.strides.begin(), a->section.strides.end());
  }
  return key;
}

std::unique_ptr<Bound> Engine::bind(const Program& program, const Sections& sections, const Agreement& agreement) {
  agree(comm_, [&] { check_all(program, sections, agreement); }, agreement.token, agreement.mismatch);
  auto bound = std::make_unique<Bound>();
  bound->program = &program;
  bound->sections = sections;
  return bound;
}

}  // namespace gdap::exchange
