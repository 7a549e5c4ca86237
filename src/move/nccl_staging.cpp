#include "move/nccl_staging.hpp"

#include "comm/nccl.hpp"

#include <algorithm>
#include <utility>

namespace gdap::move {
namespace {

void add(std::vector<DeviceCopy>& out, const std::vector<Copy2D>& copies, const char* src, char* dst) {
  for (const Copy2D& c : copies) out.push_back({src + c.src, dst + c.dst, c.rows, c.row_bytes, c.src_pitch, c.dst_pitch});
}

}  // namespace

void NcclStaging::begin(int64_t send_bytes, int64_t recv_bytes) {
  key_.clear();  // holds nothing until end()
  send_staging_ = send_buffer_.reserve(std::max<int64_t>(send_bytes, 1));
  recv_staging_ = recv_buffer_.reserve(std::max<int64_t>(recv_bytes, 1));
  pack_copies_.clear();
  unpack_copies_.clear();
  sends_.clear();
  recvs_.clear();
}

void NcclStaging::send(int peer, int64_t bytes, const std::vector<Copy2D>& copies, const char* data, int64_t offset) {
  char* from = send_staging_ + offset;
  if (single_run(copies)) {
    from = const_cast<char*>(data + copies[0].src);  // NCCL only reads it
  } else {
    add(pack_copies_, copies, data, send_staging_);
  }
  sends_.push_back({peer, bytes, from});
}

void NcclStaging::recv(int peer, int64_t bytes, const std::vector<Copy2D>& copies, char* data, int64_t offset) {
  char* into = recv_staging_ + offset;
  if (single_run(copies)) {
    into = data + copies[0].dst;
  } else {
    add(unpack_copies_, copies, recv_staging_, data);
  }
  recvs_.push_back({peer, bytes, into});
}

void NcclStaging::local(const std::vector<Copy2D>& copies, const char* src, char* dst) { add(pack_copies_, copies, src, dst); }

void NcclStaging::end(std::vector<int64_t> key, void* stream) {
  pack_.upload(key, pack_copies_, stream);
  unpack_.upload(key, unpack_copies_, stream);
  pack_copies_.clear();
  unpack_copies_.clear();
  key_ = std::move(key);
}

void NcclStaging::run(NcclComm& comm) const {
  void* stream = comm.stream;
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  pack_.launch(stream);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (const Transfer& t : recvs_) {
    check_nccl(ncclRecv(t.data, static_cast<size_t>(t.bytes), ncclChar, t.peer, comm.handle(), cuda_stream), "ncclRecv");
  }
  for (const Transfer& t : sends_) {
    check_nccl(ncclSend(t.data, static_cast<size_t>(t.bytes), ncclChar, t.peer, comm.handle(), cuda_stream), "ncclSend");
  }
  comm.settle(ncclGroupEnd(), "ncclGroupEnd");
  unpack_.launch(stream);
}

}  // namespace gdap::move
