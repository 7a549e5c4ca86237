// The MPI executor, for host-accessible sections. Per message: a run that is contiguous in both
// the section and the message goes straight from the source section or into the destination
// section; any other message is packed into (or unpacked from) one staging buffer per side.
// Receives are posted first, each send leaves as soon as it is packed, and the local part is
// copied while messages are in flight.
//
// GDAP_MPI_EXCHANGE picks the exchange, so the choices can be measured side by side (bench/mpi):
//   p2p (default): nonblocking point-to-point as above;
//   alltoallv:     everything packed, one MPI_Alltoallv;
//   datatype:      nothing packed: each message is an MPI derived datatype over the sections.
#include "array/array.hpp"
#include "comm/mpi.hpp"
#include "core/error.hpp"
#include "move/redistribute.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>

namespace gdap::move {

namespace {

enum class Exchange { p2p, alltoallv, datatype };

Exchange exchange_mode() {
  const char* mode = std::getenv("GDAP_MPI_EXCHANGE");
  if (mode == nullptr || std::strcmp(mode, "p2p") == 0) return Exchange::p2p;
  if (std::strcmp(mode, "alltoallv") == 0) return Exchange::alltoallv;
  if (std::strcmp(mode, "datatype") == 0) return Exchange::datatype;
  fail(GDAP_ERR_INVALID_ARGUMENT, "GDAP_MPI_EXCHANGE is '{}'; it must be p2p, alltoallv or datatype", mode);
}

// One message's copies between its section and the packed buffer, and whether it is one run.
struct Route {
  int peer;
  int64_t packed_offset;  // bytes into the staging buffer (the copies' packed side already counts it)
  int64_t bytes;
  std::vector<Copy2D> copies;
  bool direct;  // one contiguous run: no staging
};

// The routes of a plan for sections of given strides: they depend on nothing else, so a rank
// keeps them between calls with the same plan and strides.
struct MpiScratch final : Scratch {
  std::vector<int64_t> key;
  std::vector<Route> sends, recvs;
  std::vector<Copy2D> local;
  std::vector<char> send_buffer, recv_buffer;
};

std::vector<Route> routes(const gdap_plan& plan, Part part, const Side& section) {
  const Side packed{Side::packed, {}};
  std::vector<Route> out;
  for (const Message& m : plan.plan.messages(part)) {
    Route r{static_cast<int>(m.peer), m.offset * plan.element_size, m.elements * plan.element_size, {}, false};
    if (part == Part::send) message_copies(plan.plan, part, m, section, packed, plan.element_size, r.copies);
    else message_copies(plan.plan, part, m, packed, section, plan.element_size, r.copies);
    r.direct = single_run(r.copies);
    out.push_back(std::move(r));
  }
  return out;
}

MpiScratch& scratch_for(const Call& call) {
  std::vector<int64_t> key{static_cast<int64_t>(call.plan->serial)};
  for (const gdap_array* a : {call.src, static_cast<const gdap_array*>(call.dst)}) {
    if (a) key.insert(key.end(), a->section.strides.begin(), a->section.strides.end());
    key.push_back(-1);
  }
  auto* s = dynamic_cast<MpiScratch*>(call.comm.scratch.get());
  if (s != nullptr && s->key == key) return *s;
  auto made = std::make_unique<MpiScratch>();
  const gdap_plan& plan = *call.plan;
  if (call.src) made->sends = routes(plan, Part::send, Side{Side::source, call.src->section.strides});
  if (call.dst) made->recvs = routes(plan, Part::recv, Side{Side::destination, call.dst->section.strides});
  if (call.src && call.dst) {
    made->local = part_copies(plan.plan, Part::local, Side{Side::source, call.src->section.strides},
                              Side{Side::destination, call.dst->section.strides}, plan.element_size);
  }
  made->send_buffer.resize(static_cast<size_t>(plan.stats.send_bytes));
  made->recv_buffer.resize(static_cast<size_t>(plan.stats.recv_bytes));
  made->key = std::move(key);
  s = made.get();
  call.comm.scratch = std::move(made);
  return *s;
}

// MPI counts are int: larger messages go as several pieces (MPI keeps their order per pair).
constexpr int64_t kPiece = int64_t{1} << 30;

template <typename Post>
void post_pieces(char* data, int64_t bytes, Post&& post) {
  for (int64_t at = 0; at < bytes; at += kPiece) post(data + at, static_cast<int>(std::min(kPiece, bytes - at)));
}

void exchange_p2p(const Call& call, MpiScratch& s, MpiComm& mpi) {
  const MPI_Comm comm = mpi.handle();
  const char* src = call.src ? static_cast<const char*>(call.src->data()) : nullptr;
  char* dst = call.dst ? static_cast<char*>(call.dst->data()) : nullptr;
  std::vector<MPI_Request> requests;
  for (const Route& r : s.recvs) {
    char* into = r.direct ? dst + r.copies[0].dst : s.recv_buffer.data() + r.packed_offset;
    post_pieces(into, r.bytes, [&](char* p, int n) {
      check_mpi(MPI_Irecv(p, n, MPI_BYTE, r.peer, 0, comm, &requests.emplace_back()), "MPI_Irecv");
    });
  }
  for (const Route& r : s.sends) {
    char* from = s.send_buffer.data() + r.packed_offset;
    if (r.direct) from = const_cast<char*>(src + r.copies[0].src);  // MPI only reads it
    else run_host_copies(r.copies, src, s.send_buffer.data());  // copies hold packed offsets
    post_pieces(from, r.bytes, [&](char* p, int n) {
      check_mpi(MPI_Isend(p, n, MPI_BYTE, r.peer, 0, comm, &requests.emplace_back()), "MPI_Isend");
    });
  }
  run_host_copies(s.local, src, dst);
  mpi.wait(requests, "the point-to-point exchange", true);
  for (const Route& r : s.recvs) {
    if (!r.direct) run_host_copies(r.copies, s.recv_buffer.data(), dst);
  }
}

// Per-peer counts and displacements of the packed buffers, or false if a count exceeds int.
bool alltoallv_counts(const std::vector<Route>& routes, int n, std::vector<int>& counts, std::vector<int>& displs) {
  counts.assign(static_cast<size_t>(n), 0);
  displs.assign(static_cast<size_t>(n), 0);
  for (const Route& r : routes) {
    if (r.bytes > INT_MAX || r.packed_offset > INT_MAX) return false;
    counts[static_cast<size_t>(r.peer)] = static_cast<int>(r.bytes);
    displs[static_cast<size_t>(r.peer)] = static_cast<int>(r.packed_offset);
  }
  return true;
}

void exchange_alltoallv(const Call& call, MpiScratch& s, MpiComm& mpi) {
  const MPI_Comm comm = mpi.handle();
  const int n = static_cast<int>(call.comm.size);
  // On the heap: an abandoned MPI_Ialltoallv (a rank that never came) may still read them.
  struct Counts {
    std::vector<int> sc, sd, rc, rd;
    int fits = 0;
  };
  auto c = std::make_shared<Counts>();
  // Every rank must take the same branch: ask whether any rank's counts overflow.
  c->fits = alltoallv_counts(s.sends, n, c->sc, c->sd) && alltoallv_counts(s.recvs, n, c->rc, c->rd);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, &c->fits, 1, MPI_INT, MPI_MIN, comm, &request), "MPI_Iallreduce");
  mpi.wait({&request, 1}, "MPI_Iallreduce", false, c);
  if (!c->fits) return exchange_p2p(call, s, mpi);
  const char* src = call.src ? static_cast<const char*>(call.src->data()) : nullptr;
  char* dst = call.dst ? static_cast<char*>(call.dst->data()) : nullptr;
  for (const Route& r : s.sends) run_host_copies(r.copies, src, s.send_buffer.data());
  check_mpi(MPI_Ialltoallv(s.send_buffer.data(), c->sc.data(), c->sd.data(), MPI_BYTE, s.recv_buffer.data(),
                           c->rc.data(), c->rd.data(), MPI_BYTE, comm, &request),
            "MPI_Ialltoallv");
  mpi.wait({&request, 1}, "MPI_Ialltoallv", false, c);
  run_host_copies(s.local, src, dst);
  for (const Route& r : s.recvs) run_host_copies(r.copies, s.recv_buffer.data(), dst);
}

// A derived datatype addressing one message's copies in its section: one block per row, at byte
// displacements from the section's base (`source` picks the copies' src or dst side). Rows are
// listed one by one rather than as strided vectors: Open MPI reorders a vector with a negative
// stride (a reversed view), which tests/move caught.
MPI_Datatype message_type(const Route& r, bool source) {
  std::vector<MPI_Aint> displacements;
  int64_t row_bytes = 0;
  bool uniform = true;
  for (const Copy2D& c : r.copies) {
    if (row_bytes != 0 && c.row_bytes != row_bytes) uniform = false;
    row_bytes = c.row_bytes;
    for (int64_t k = 0; k < c.rows; ++k) displacements.push_back((source ? c.src : c.dst) + k * (source ? c.src_pitch : c.dst_pitch));
  }
  if (row_bytes > INT_MAX || displacements.size() > static_cast<size_t>(INT_MAX)) {
    fail(GDAP_ERR_OVERFLOW, "a message of {} runs of {} bytes exceeds an MPI count", displacements.size(), row_bytes);
  }
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const auto n = static_cast<int>(displacements.size());
  if (uniform) {
    check_mpi(MPI_Type_create_hindexed_block(n, static_cast<int>(row_bytes), displacements.data(), MPI_BYTE, &type),
              "MPI_Type_create_hindexed_block");
  } else {
    std::vector<int> lengths;
    for (const Copy2D& c : r.copies) lengths.insert(lengths.end(), static_cast<size_t>(c.rows), static_cast<int>(c.row_bytes));
    check_mpi(MPI_Type_create_hindexed(n, lengths.data(), displacements.data(), MPI_BYTE, &type), "MPI_Type_create_hindexed");
  }
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return type;
}

void exchange_datatype(const Call& call, MpiScratch& s, MpiComm& mpi) {
  const MPI_Comm comm = mpi.handle();
  const char* src = call.src ? static_cast<const char*>(call.src->data()) : nullptr;
  char* dst = call.dst ? static_cast<char*>(call.dst->data()) : nullptr;
  std::vector<MPI_Request> requests;
  std::vector<MPI_Datatype> types;
  for (const Route& r : s.recvs) {
    types.push_back(message_type(r, false));
    check_mpi(MPI_Irecv(dst, 1, types.back(), r.peer, 0, comm, &requests.emplace_back()), "MPI_Irecv");
  }
  for (const Route& r : s.sends) {
    types.push_back(message_type(r, true));
    check_mpi(MPI_Isend(src, 1, types.back(), r.peer, 0, comm, &requests.emplace_back()), "MPI_Isend");
  }
  run_host_copies(s.local, src, dst);
  // Freeing a datatype is safe while operations still use it (MPI defers the free).
  struct Types {
    std::vector<MPI_Datatype>& types;
    ~Types() {
      for (MPI_Datatype& t : types) MPI_Type_free(&t);
    }
  } free_types{types};
  mpi.wait(requests, "the point-to-point exchange (derived datatypes)", true);
}

}  // namespace

void run_mpi(const Call& call) {
  auto& comm = dynamic_cast<MpiComm&>(call.comm);
  Exchange mode = Exchange::p2p;
  MpiScratch* scratch = nullptr;
  agree(comm, [&] {
    check_call(call);
    if (call.memory() == Memory::device) {
      fail(GDAP_ERR_UNSUPPORTED, "an MPI communicator moves host-accessible sections; use an NCCL communicator "
                                 "(gdap_comm_from_nccl) for device arrays");
    }
    mode = exchange_mode();
    scratch = &scratch_for(Call{call.comm, call.plan, call.plan->src_shape ? call.src : nullptr,
                                call.plan->dst_shape ? call.dst : nullptr});
  }, plan_token(call.plan), plan_mismatch);
  const Call held{call.comm, call.plan, call.plan->src_shape ? call.src : nullptr, call.plan->dst_shape ? call.dst : nullptr};
  switch (mode) {
    case Exchange::p2p: return exchange_p2p(held, *scratch, comm);
    case Exchange::alltoallv: return exchange_alltoallv(held, *scratch, comm);
    case Exchange::datatype: return exchange_datatype(held, *scratch, comm);
  }
}

}  // namespace gdap::move
