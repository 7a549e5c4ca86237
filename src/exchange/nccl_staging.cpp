// The NCCL engine's staged rounds (see nccl_staging.hpp).
#include "exchange/nccl_staging.hpp"

#include "comm/nccl.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <utility>

namespace gdap::exchange {
namespace {

// Pieces of at least 32 MiB, at most 8 of them: each round's NCCL group is long enough to hide the
// next round's packing, and few enough that each kernel launch is a small part of a round.
constexpr int64_t kMinPiece = int64_t{32} << 20, kMaxRounds = 8, kPieceAlign = 4096;

}  // namespace

int64_t NcclStaging::piece_bytes(int64_t bytes) {
  if (bytes < 2 * kMinPiece) return std::max<int64_t>(bytes, 1);
  const int64_t rounds = std::min(kMaxRounds, bytes / kMinPiece);
  const int64_t piece = (bytes + rounds - 1) / rounds;
  return (piece + kPieceAlign - 1) / kPieceAlign * kPieceAlign;
}

NcclStaging::Round& NcclStaging::round(size_t k) {
  if (rounds_.size() <= k) rounds_.resize(k + 1);
  for (; used_ <= k; ++used_) {  // a round first used by these routes starts empty
    Round& r = rounds_[used_];
    r.sends.clear();
    r.recvs.clear();
    r.pack.clear();
    r.unpack.clear();
  }
  return rounds_[k];
}

void NcclStaging::begin(char* send_staging, char* recv_staging) {
  key_.clear();  // holds nothing until end()
  send_staging_ = send_staging;
  recv_staging_ = recv_staging;
  used_ = 0;
  round(0);
  local_copies_.clear();
}

void NcclStaging::send(int peer, int64_t bytes, const std::vector<Copy2D>& copies, const char* data, int64_t offset) {
  route(true, peer, bytes, copies, const_cast<char*>(data), offset);  // NCCL and the packing only read it
}

void NcclStaging::recv(int peer, int64_t bytes, const std::vector<Copy2D>& copies, char* data, int64_t offset) {
  route(false, peer, bytes, copies, data, offset);
}

// Each piece of the message goes in its round: straight from or into the section when the copies
// are one run, else through the staging at the piece's place, with the copies clipped to it.
void NcclStaging::route(bool sending, int peer, int64_t bytes, const std::vector<Copy2D>& copies, char* data, int64_t offset) {
  const bool direct = single_run(copies);
  const int64_t piece = piece_bytes(bytes);
  char* staging = sending ? send_staging_ : recv_staging_;
  std::vector<Copy2D> clipped;
  for (int64_t k = 0, at = 0; k == 0 || at < bytes; ++k, at += piece) {
    const int64_t n = std::min(piece, bytes - at);
    Round& r = round(static_cast<size_t>(k));
    std::vector<Transfer>& transfers = sending ? r.sends : r.recvs;
    if (direct) {
      transfers.push_back({peer, n, data + (sending ? copies[0].src : copies[0].dst) + at});
      continue;
    }
    const std::vector<Copy2D>* these = &copies;
    if (n != bytes) {
      clipped.clear();
      clip_packed(copies, /*packed_source=*/!sending, offset + at, offset + at + n, clipped);
      these = &clipped;
    }
    if (sending) append_device_copies(r.pack, *these, data, staging);
    else append_device_copies(r.unpack, *these, staging, data);
    transfers.push_back({peer, n, staging + offset + at});
  }
}

void NcclStaging::local(const std::vector<Copy2D>& copies, const char* src, char* dst) {
  append_device_copies(local_copies_, copies, src, dst);
}

void NcclStaging::end(std::vector<int64_t> key, void* stream) {
  std::vector<cuda::DeviceCopy>& first = rounds_[0].pack;
  if (used_ == 1) first.insert(first.end(), local_copies_.begin(), local_copies_.end()), local_copies_.clear();
  for (size_t k = 0; k < used_; ++k) {
    Round& r = rounds_[k];
    if (!r.packer) r.packer = std::make_unique<cuda::DeviceBatch>(), r.unpacker = std::make_unique<cuda::DeviceBatch>();
    if (used_ > 1 && !r.packed) r.packed = std::make_unique<cuda::DeviceEvent>(), r.moved = std::make_unique<cuda::DeviceEvent>();
    r.packer->upload(key, r.pack, stream);
    r.unpacker->upload(key, r.unpack, stream);
    r.pack.clear();
    r.unpack.clear();
  }
  local_.upload(key, local_copies_, stream);
  local_copies_.clear();
  if (used_ > 1 && !link_) link_ = std::make_unique<cuda::DeviceStream>();
  key_ = std::move(key);
}

void NcclStaging::group(const Round& r, NcclComm& comm, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (const Transfer& t : r.recvs) {
    check_nccl(ncclRecv(t.data, static_cast<size_t>(t.bytes), ncclChar, t.peer, comm.handle(), cuda_stream), "ncclRecv");
  }
  for (const Transfer& t : r.sends) {
    check_nccl(ncclSend(t.data, static_cast<size_t>(t.bytes), ncclChar, t.peer, comm.handle(), cuda_stream), "ncclSend");
  }
  comm.settle(ncclGroupEnd(), "ncclGroupEnd");
}

void NcclStaging::run(NcclComm& comm) {
  if (used_ > 1) return run_rounds(comm);
  const Round& r = rounds_[0];
  r.packer->launch(comm.stream);
  group(r, comm, comm.stream);
  r.unpacker->launch(comm.stream);
}

// The communicator's stream packs every round and does the local copies, then unpacks round k once
// the link stream has moved it; the link stream sends round k once it is packed. Every round's
// NCCL group follows the work queued on the communicator's stream before the call (through the
// first `packed` event), and the call's end on that stream follows every group (the last `moved`).
void NcclStaging::run_rounds(NcclComm& comm) {
  void* const s = comm.stream;
  void* const link = link_->get();
  for (size_t k = 0; k < used_; ++k) {
    rounds_[k].packer->launch(s);
    rounds_[k].packed->record(s);
  }
  local_.launch(s);
  for (size_t k = 0; k < used_; ++k) {
    rounds_[k].packed->wait_on(link);
    group(rounds_[k], comm, link);
    rounds_[k].moved->record(link);
  }
  for (size_t k = 0; k < used_; ++k) {
    rounds_[k].moved->wait_on(s);
    rounds_[k].unpacker->launch(s);
  }
}

}  // namespace gdap::exchange
