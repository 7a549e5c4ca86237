// The NCCL functions gdap calls (communicators from gdap_comm_from_nccl), defined here and forwarded to
// libnccl.so.<NCCL major> loaded on first use (lazy_library.hpp): libgdap does not link NCCL. Each
// definition is checked against nccl.h's declaration; a missing library or function returns
// ncclSystemError (gdap_comm_from_nccl calls require_nccl first, which says why).
#include "cuda/lazy_library.hpp"

#include <nccl.h>

namespace gdap::cuda {

namespace {
LazyLibrary& nccl_library() {
  static LazyLibrary library(GDAP_NCCL_SONAME, GDAP_NCCL_FALLBACK);
  return library;
}
}  // namespace

void require_nccl(const char* user) { nccl_library().require(user); }

}  // namespace gdap::cuda

// The body of each definition: call the loaded library's `name` (looked up once) with `args`.
#define GDAP_NCCL_FORWARD(name, fallback, ...)                        \
  static void* const fn = gdap::cuda::nccl_library().symbol(#name);  \
  return gdap::cuda::call(fn, fallback __VA_OPT__(, ) __VA_ARGS__)

extern "C" {

const char* ncclGetErrorString(ncclResult_t result) {
  GDAP_NCCL_FORWARD(ncclGetErrorString, static_cast<const char*>(GDAP_NCCL_SONAME " could not be loaded"), result);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  GDAP_NCCL_FORWARD(ncclCommGetAsyncError, ncclSystemError, comm, asyncError);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  GDAP_NCCL_FORWARD(ncclCommCount, ncclSystemError, comm, count);
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  GDAP_NCCL_FORWARD(ncclCommCuDevice, ncclSystemError, comm, device);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  GDAP_NCCL_FORWARD(ncclCommUserRank, ncclSystemError, comm, rank);
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  GDAP_NCCL_FORWARD(ncclAllReduce, ncclSystemError, sendbuff, recvbuff, count, datatype, op, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  GDAP_NCCL_FORWARD(ncclReduceScatter, ncclSystemError, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  GDAP_NCCL_FORWARD(ncclAllGather, ncclSystemError, sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  GDAP_NCCL_FORWARD(ncclSend, ncclSystemError, sendbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  GDAP_NCCL_FORWARD(ncclRecv, ncclSystemError, recvbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclGroupStart() { GDAP_NCCL_FORWARD(ncclGroupStart, ncclSystemError); }

ncclResult_t ncclGroupEnd() { GDAP_NCCL_FORWARD(ncclGroupEnd, ncclSystemError); }

}  // extern "C"
