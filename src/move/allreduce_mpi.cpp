// gdap_allreduce over MPI: MPI_Iallreduce in place on a C-contiguous section (a packed copy
// otherwise), in pieces of at most INT_MAX elements, each wait bounded by the timeout.
#include "array/array.hpp"
#include "comm/mpi.hpp"
#include "core/error.hpp"
#include "move/allreduce.hpp"
#include "move/redistribute.hpp"

#include <climits>
#include <memory>
#include <utility>
#include <vector>

namespace gdap::move {
namespace {

MPI_Datatype mpi_type(gdap_dtype t) {
  if (t.code == GDAP_DTYPE_FLOAT) return t.bits == 32 ? MPI_FLOAT : MPI_DOUBLE;
  const bool is_int = t.code == GDAP_DTYPE_INT;
  if (t.bits == 8) return is_int ? MPI_INT8_T : MPI_UINT8_T;
  if (t.bits == 32) return is_int ? MPI_INT32_T : MPI_UINT32_T;
  return is_int ? MPI_INT64_T : MPI_UINT64_T;
}

MPI_Op mpi_op(gdap_reduce_op op) {
  switch (op) {
    case GDAP_REDUCE_SUM: return MPI_SUM;
    case GDAP_REDUCE_PROD: return MPI_PROD;
    case GDAP_REDUCE_MIN: return MPI_MIN;
    case GDAP_REDUCE_MAX: return MPI_MAX;
    case GDAP_REDUCE_MEAN: break;  // not element-wise: refused before any engine runs
  }
  return MPI_OP_NULL;
}

}  // namespace

void allreduce_mpi_in_place(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, void* data, int64_t count,
                            std::shared_ptr<void> keep) {
  auto& mpi = dynamic_cast<MpiComm&>(comm);
  const int64_t es = dtype.bits / 8;
  for (int64_t at = 0; at < count; at += INT_MAX) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int n = static_cast<int>(std::min<int64_t>(INT_MAX, count - at));
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + at * es, n, mpi_type(dtype), mpi_op(op),
                             mpi.handle(), &request),
              "MPI_Iallreduce");
    mpi.wait({&request, 1}, "MPI_Iallreduce", false, keep);
  }
}

void reduce_scatter_mpi(gdap_comm& comm, gdap_dtype dtype, gdap_reduce_op op, const void* send, void* recv,
                        int64_t segment, std::shared_ptr<void> keep) {
  auto& mpi = dynamic_cast<MpiComm&>(comm);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ireduce_scatter_block(send != nullptr ? send : MPI_IN_PLACE, recv, static_cast<int>(segment),
                                      mpi_type(dtype), mpi_op(op), mpi.handle(), &request),
            "MPI_Ireduce_scatter_block");
  mpi.wait({&request, 1}, "MPI_Ireduce_scatter_block", false, std::move(keep));
}

void allreduce_mpi(const ReduceCall& call) {
  gdap_array& a = *call.section;
  if (memory_of(&a) == Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "an MPI communicator reduces host-accessible sections; use an NCCL communicator "
         "(gdap_comm_from_nccl) for device sections");
  }
  int64_t count = 1;
  for (int64_t e : a.section.shape) count *= e;
  // On the heap: an abandoned operation (a rank that never came) may still write it.
  auto packed = std::make_shared<std::vector<char>>();
  char* data = static_cast<char*>(a.data());
  if (!contiguous(a)) {
    packed->resize(static_cast<size_t>(count * (a.section.dtype.bits / 8)));
    pack(a, packed->data());
    data = packed->data();
  }
  allreduce_mpi_in_place(call.comm, a.section.dtype, call.op, data, count, packed);
  if (!contiguous(a)) unpack(packed->data(), a);
}

}  // namespace gdap::move
