#include "comm/mpi.hpp"

#include <gdap/gdap_mpi.h>

#include "core/error.hpp"

#include <climits>

namespace gdap {

void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  fail(GDAP_ERR_COMM, "{} failed: {}", what, std::string_view(text, static_cast<size_t>(length)));
}

MpiComm::~MpiComm() {
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

std::vector<std::string> MpiComm::allgather(std::string_view mine) {
  if (mine.size() > static_cast<size_t>(INT_MAX)) fail(GDAP_ERR_OVERFLOW, "{} bytes to allgather exceed an MPI count", mine.size());
  const int n = static_cast<int>(size);
  std::vector<int> counts(static_cast<size_t>(n)), displs(static_cast<size_t>(n));
  int count = static_cast<int>(mine.size());
  check_mpi(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    if (total > INT_MAX) fail(GDAP_ERR_OVERFLOW, "more than {} bytes to allgather", INT_MAX);
    displs[static_cast<size_t>(r)] = static_cast<int>(total);
    total += counts[static_cast<size_t>(r)];
  }
  if (total > INT_MAX) fail(GDAP_ERR_OVERFLOW, "{} bytes to allgather exceed an MPI count", total);
  std::string all(static_cast<size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, comm_),
            "MPI_Allgatherv");
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r) out.push_back(all.substr(static_cast<size_t>(displs[r]), static_cast<size_t>(counts[r])));
  return out;
}

void MpiComm::barrier() { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace gdap

extern "C" GDAP_API gdap_status gdap_comm_from_mpi(gdap_comm** out, int comm) {
  return gdap::guard([&] {
    gdap::require(out, "out");
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) gdap::fail(GDAP_ERR_COMM, "MPI is not initialised (or already finalised)");
    const MPI_Comm user = MPI_Comm_f2c(static_cast<MPI_Fint>(comm));
    if (user == MPI_COMM_NULL) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "comm {} is MPI_COMM_NULL", comm);
    MPI_Comm dup = MPI_COMM_NULL;
    gdap::check_mpi(MPI_Comm_dup(user, &dup), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int rank = 0, size = 0;
    MPI_Comm_rank(dup, &rank);
    MPI_Comm_size(dup, &size);
    *out = new gdap::MpiComm(dup, rank, size);
  });
}
