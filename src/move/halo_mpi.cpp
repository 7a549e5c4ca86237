// The halo exchange over MPI, for host-accessible sections: the p2p exchange of exec_mpi.cpp on
// halo messages, split into MPI messages as NCCL's are (for_each_part: a box of 64 KiB or more
// alone). A part that is one contiguous run goes straight from or into the section; a part of
// runs of kTypeRun bytes or more on average goes as an MPI datatype over the section, which MPI
// packs and unpacks in its own pipeline (one copy fewer than a buffer of ours); others are packed
// into (unpacked from) one staging buffer per direction, where MPI's datatype engine is slower on
// runs of a few bytes (bench/mpi/halo_mpi.c). Receives are posted first, each send leaves once
// packed, and the periodic copy onto itself runs while messages fly.
// Waits are bounded by the communicator's timeout (MpiComm::wait).
#include "array/array.hpp"
#include "comm/mpi.hpp"
#include "core/error.hpp"
#include "move/halo.hpp"
#include "move/redistribute.hpp"

#include <algorithm>
#include <utility>

namespace gdap::move {

namespace {

constexpr int64_t kTypeRun = 32;  // bytes per run, on average, from which a part goes as a datatype
// MPI counts are int: larger messages go as several pieces (MPI keeps their order per pair). A
// datatype goes as one message, so only parts of at most one piece become datatypes: both ends then
// send and receive a part in the same number of messages, whichever way each moves its bytes.
constexpr int64_t kPiece = int64_t{1} << 30;

// An MPI datatype freed with its owner (after MPI_Finalize there is nothing left to free). MPI lets
// messages still pending with a freed datatype finish.
class OwnedType {
 public:
  OwnedType() = default;
  OwnedType(OwnedType&& o) noexcept : type_(std::exchange(o.type_, MPI_DATATYPE_NULL)) {}
  OwnedType& operator=(OwnedType&& o) noexcept {
    std::swap(type_, o.type_);
    return *this;
  }
  ~OwnedType() {
    if (type_ == MPI_DATATYPE_NULL) return;  // most routes have none
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(&type_);
  }
  MPI_Datatype get() const { return type_; }
  MPI_Datatype* out() { return &type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

struct Route {
  int peer;
  int64_t packed_offset;  // bytes into the staging buffer
  int64_t bytes;
  std::vector<Copy2D> copies;
  bool direct;
  OwnedType type;  // over the section, or none: staged (or direct)
};

// Routes depend on the halo and the section's strides only, so they are kept between calls.
struct HaloMpiScratch final : Scratch {
  std::vector<int64_t> key;
  std::vector<Route> sends, recvs;
  std::vector<Copy2D> local;
  // Shared: an exchange abandoned at a timeout leaves them to MPI (MpiComm::wait keeps them).
  std::shared_ptr<std::vector<char>> send_buffer, recv_buffer;
};

// The part's bytes in packed order over the section (`copies`' source side when sending, their
// destination when receiving), as one MPI datatype; none where a buffer of ours does better or MPI
// cannot take it: runs under kTypeRun bytes on average, a part over kPiece, or rows at pitch 0
// (a receive type must not overlap itself).
OwnedType section_type(const std::vector<Copy2D>& copies, int64_t bytes, bool send) {
  OwnedType type;
  int64_t rows = 0;
  for (const Copy2D& c : copies) {
    rows += c.rows;
    if (c.rows > 1 && (send ? c.src_pitch : c.dst_pitch) == 0) return type;
  }
  if (rows == 0 || bytes / rows < kTypeRun || bytes > kPiece) return type;
  std::vector<int> ones(copies.size(), 1);
  std::vector<MPI_Aint> at;
  std::vector<OwnedType> runs(copies.size());
  std::vector<MPI_Datatype> handles;
  for (size_t i = 0; i < copies.size(); ++i) {
    const Copy2D& c = copies[i];
    check_mpi(MPI_Type_create_hvector(static_cast<int>(c.rows), static_cast<int>(c.row_bytes), send ? c.src_pitch : c.dst_pitch,
                                      MPI_BYTE, runs[i].out()),
              "MPI_Type_create_hvector");
    handles.push_back(runs[i].get());
    at.push_back(send ? c.src : c.dst);
  }
  check_mpi(MPI_Type_create_struct(static_cast<int>(handles.size()), ones.data(), at.data(), handles.data(), type.out()),
            "MPI_Type_create_struct");
  check_mpi(MPI_Type_commit(type.out()), "MPI_Type_commit");
  return type;
}

std::vector<Route> routes(const gdap_halo& h, bool send, std::span<const int64_t> strides) {
  const HaloEnd section{send ? HaloEnd::sender : HaloEnd::receiver, strides};
  const HaloEnd packed{HaloEnd::packed, {}};
  std::vector<Route> out;
  for (const HaloMessage& m : send ? h.plan.sends : h.plan.recvs) {
    for_each_part(m, h.element_size, [&](const HaloMessage& part) {
      Route r{static_cast<int>(part.peer), part.offset * h.element_size, part.elements * h.element_size, {}, false, {}};
      if (send) halo_copies(part, section, packed, h.element_size, r.copies);
      else halo_copies(part, packed, section, h.element_size, r.copies);
      r.direct = single_run(r.copies);
      if (!r.direct) r.type = section_type(r.copies, r.bytes, send);
      out.push_back(std::move(r));
    });
  }
  return out;
}

HaloMpiScratch& scratch_for(const HaloCall& call) {
  const gdap_halo& h = *call.halo;
  const std::vector<int64_t>& strides = call.local->section.strides;
  std::vector<int64_t> key{static_cast<int64_t>(h.serial)};
  key.insert(key.end(), strides.begin(), strides.end());
  auto* s = dynamic_cast<HaloMpiScratch*>(call.comm.halo_scratch.get());
  if (s != nullptr && s->key == key) return *s;
  auto made = std::make_unique<HaloMpiScratch>();
  made->sends = routes(h, true, strides);
  made->recvs = routes(h, false, strides);
  for (const HaloMessage& m : h.plan.local) {
    halo_copies(m, HaloEnd{HaloEnd::sender, strides}, HaloEnd{HaloEnd::receiver, strides}, h.element_size, made->local);
  }
  made->send_buffer = std::make_shared<std::vector<char>>(static_cast<size_t>(h.send_bytes));
  made->recv_buffer = std::make_shared<std::vector<char>>(static_cast<size_t>(h.recv_bytes));
  made->key = std::move(key);
  s = made.get();
  call.comm.halo_scratch = std::move(made);
  return *s;
}

template <typename Post>
void post_pieces(char* data, int64_t bytes, Post&& post) {
  for (int64_t at = 0; at < bytes; at += kPiece) post(data + at, static_cast<int>(std::min(kPiece, bytes - at)));
}

void exchange(char* data, HaloMpiScratch& s, MpiComm& mpi) {
  const MPI_Comm comm = mpi.handle();
  char* sent = s.send_buffer->data();
  char* received = s.recv_buffer->data();
  std::vector<MPI_Request> requests;
  for (const Route& r : s.recvs) {
    if (r.type.get() != MPI_DATATYPE_NULL) {
      check_mpi(MPI_Irecv(data, 1, r.type.get(), r.peer, 1, comm, &requests.emplace_back()), "MPI_Irecv");
      continue;
    }
    char* into = r.direct ? data + r.copies[0].dst : received + r.packed_offset;
    post_pieces(into, r.bytes, [&](char* p, int n) {
      check_mpi(MPI_Irecv(p, n, MPI_BYTE, r.peer, 1, comm, &requests.emplace_back()), "MPI_Irecv");
    });
  }
  for (const Route& r : s.sends) {
    if (r.type.get() != MPI_DATATYPE_NULL) {
      check_mpi(MPI_Isend(data, 1, r.type.get(), r.peer, 1, comm, &requests.emplace_back()), "MPI_Isend");
      continue;
    }
    char* from = sent + r.packed_offset;
    if (r.direct) from = data + r.copies[0].src;
    else run_host_copies(r.copies, data, sent);  // copies hold packed offsets
    post_pieces(from, r.bytes, [&](char* p, int n) {
      check_mpi(MPI_Isend(p, n, MPI_BYTE, r.peer, 1, comm, &requests.emplace_back()), "MPI_Isend");
    });
  }
  run_host_copies(s.local, data, data);
  struct Keep {
    std::shared_ptr<std::vector<char>> a, b;
  };
  mpi.wait(requests, "the halo exchange", true, std::make_shared<Keep>(Keep{s.send_buffer, s.recv_buffer}));
  for (const Route& r : s.recvs) {
    if (!r.direct && r.type.get() == MPI_DATATYPE_NULL) run_host_copies(r.copies, received, data);
  }
}

}  // namespace

void check_halo_mpi(const HaloCall& call) {
  check_halo_call(call);
  if (memory_of(call.local) == Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "an MPI communicator exchanges halos of host-accessible sections; use an NCCL "
                               "communicator (gdap_comm_from_nccl) for device arrays");
  }
}

void halo_mpi(const HaloCall& call) {
  auto& comm = dynamic_cast<MpiComm&>(call.comm);
  HaloMpiScratch* scratch = nullptr;
  if (call.bound) {
    comm.check_usable();
    scratch = &scratch_for(call);
  } else {
    agree(comm, [&] {
      check_halo_mpi(call);
      scratch = &scratch_for(call);
    });
  }
  exchange(static_cast<char*>(call.local->data()), *scratch, comm);
}

}  // namespace gdap::move
