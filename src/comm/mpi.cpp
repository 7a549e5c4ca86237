#include "comm/mpi.hpp"

#include <gdap/gdap_mpi.h>

#include "comm/wait.hpp"
#include "comm/collective.hpp"
#include "core/error.hpp"

#include <chrono>
#include <climits>
#include <mutex>

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
  if (broken_) {
    // Abandoned operations may still read or write the buffers they were given and use the
    // communicator: those (`abandoned_`), the communicator and the cache entries peers read in
    // place are left to the end of the process (or MPI_Abort) rather than freed under MPI's feet;
    // the rest of the cache (plans, copy lists, gathered maps) is freed.
    cache.abandon();
    static_cast<void>(new std::vector<std::shared_ptr<void>>(std::move(abandoned_)));
    return;
  }
  if (!finalized) MPI_Comm_free(&comm_);
}

void MpiComm::check_usable() const {
  if (broken_) {
    fail(broken_status_, "rank {}: the MPI communicator is broken: an earlier collective call {}", rank, broken_by_);
  }
}

namespace {

// Open MPI (4.1) reports the failure of a non-blocking collective's request (one that met another
// collective: MPI_ERR_TRUNCATE) to MPI_COMM_WORLD's error handler, not to gdap's communicator's,
// and that one is fatal by default: a rank's misuse aborted the whole job (hunt 15a #5). While gdap
// polls, MPI_COMM_WORLD returns errors, which become gdap errors naming the call; the caller's
// handler is put back after. Process-wide, counted: while any thread's gdap communicator waits
// (the MPI comms of two threads may wait at once), WORLD returns errors; the last wait to end puts
// the caller's handler back (a save and restore per wait let one thread's end restore the fatal
// handler under another's wait, and the other's end then left WORLD returning errors for good).
class WorldReturnsErrors {
 public:
  WorldReturnsErrors() {
    const std::lock_guard lock(mutex_);
    if (waits_++ > 0) return;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &callers_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~WorldReturnsErrors() {
    const std::lock_guard lock(mutex_);
    if (--waits_ > 0) return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, callers_);
    MPI_Errhandler_free(&callers_);  // our reference only: the communicator keeps its own
  }
  WorldReturnsErrors(const WorldReturnsErrors&) = delete;
  WorldReturnsErrors& operator=(const WorldReturnsErrors&) = delete;

 private:
  static inline std::mutex mutex_;
  static inline int waits_ = 0;  // waits in progress in this process
  static inline MPI_Errhandler callers_ = MPI_ERRHANDLER_NULL;
};

// Polls `requests` until all complete (WaitEnd::done) or `waiting` ends the wait.
WaitEnd test_all(std::span<MPI_Request> requests, Waiting waiting, const char* what) {
  const WorldReturnsErrors returned;
  std::vector<int> completed(requests.size());
  for (;;) {
    int count = 0;
    check_mpi(MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, completed.data(),
                           MPI_STATUSES_IGNORE),
              what);
    if (count == MPI_UNDEFINED) return WaitEnd::done;  // every request is done (MPI_REQUEST_NULL)
    const WaitEnd end = waiting.after_poll(count > 0);
    if (end != WaitEnd::going_on) return end;
  }
}

// Cancels what is still pending (a receive that matched nothing is withdrawn, so it never writes
// into a caller's buffer; MPI may ignore a send's cancellation), waits briefly for the cancellations
// and frees what is left.
void withdraw(std::span<MPI_Request> requests) {
  for (MPI_Request& r : requests) {
    if (r != MPI_REQUEST_NULL) MPI_Cancel(&r);
  }
  try {
    if (test_all(requests, Waiting(1.0, nullptr), "MPI_Testsome") == WaitEnd::done) return;
  } catch (const Error&) {
  }
  for (MPI_Request& r : requests) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
}

}  // namespace

void MpiComm::wait(std::span<MPI_Request> requests, const char* what, bool point_to_point,
                   std::shared_ptr<void> keep) {
  // Past the timeout, at an interrupt, or after an MPI error (a truncated receive...), requests may
  // still be pending on the caller's buffers: the communicator is broken and keeps them.
  const auto abandon = [&](gdap_status status, const char* by) {
    broken_ = true;
    broken_status_ = status;
    broken_by_ = by;
    // A nonblocking collective can be neither cancelled nor freed: it stays with MPI.
    if (point_to_point) withdraw(requests);
    if (keep) abandoned_.push_back(std::move(keep));
  };
  WaitEnd end = WaitEnd::going_on;
  try {
    end = test_all(requests, Waiting(*this), what);
  } catch (const Error& e) {
    abandon(GDAP_ERR_TIMEOUT, "failed in MPI");
    // Most often another rank's collective met this one (one rank in an extra call): say whose.
    fail(e.status(), "rank {}: {}; the ranks' collective calls may be out of step (every rank must make the same "
         "calls in the same order); the communicator is broken from now on", rank, e.what());
  }
  if (end == WaitEnd::done) return;
  if (end == WaitEnd::interrupted) {
    abandon(GDAP_ERR_INTERRUPTED, "was interrupted");
    fail(GDAP_ERR_INTERRUPTED, "rank {}: {} was interrupted (the communicator's interrupt check returned non-zero); "
         "the communicator is broken from now on", rank, what);
  }
  abandon(GDAP_ERR_TIMEOUT, "timed out");
  fail(GDAP_ERR_TIMEOUT,
       "rank {}: {} did not complete within the communicator's timeout ({} s): another rank did not make the same "
       "call (it failed, returned early or hangs); the communicator is broken from now on",
       rank, what, timeout);
}

// Two steps: every rank's meeting and length (fixed size: every rank's first step matches, whatever
// call it is in), checked, then every rank's bytes when there are any.
std::vector<std::string> MpiComm::allgather(std::string_view mine) {
  check_usable();
  if (mine.size() > static_cast<size_t>(INT_MAX)) fail(GDAP_ERR_OVERFLOW, "{} bytes to allgather exceed an MPI count", mine.size());
  const int n = static_cast<int>(size);
  struct Header {
    Meeting meeting;
    int64_t length = 0;
  };
  // The buffers live on the heap: if a rank never arrives they stay with the abandoned operation.
  struct Buffers {
    Header header;
    std::vector<Header> headers;
    std::vector<int> counts, displs;
    std::string mine, all;
  };
  auto b = std::make_shared<Buffers>();
  b->header = {next_meeting(*this), static_cast<int64_t>(mine.size())};
  b->headers.resize(static_cast<size_t>(n));
  b->mine = mine;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&b->header, sizeof(Header), MPI_BYTE, b->headers.data(), sizeof(Header), MPI_BYTE, comm_,
                           &request),
            "MPI_Iallgather");
  wait({&request, 1}, "MPI_Iallgather", false, b);
  std::vector<Meeting> meetings;
  for (const Header& h : b->headers) meetings.push_back(h.meeting);
  check_verdict(meetings_differ(meetings));
  b->counts.resize(static_cast<size_t>(n));
  b->displs.resize(static_cast<size_t>(n));
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    if (total > INT_MAX) fail(GDAP_ERR_OVERFLOW, "more than {} bytes to allgather", INT_MAX);
    b->displs[static_cast<size_t>(r)] = static_cast<int>(total);
    b->counts[static_cast<size_t>(r)] = static_cast<int>(b->headers[static_cast<size_t>(r)].length);
    total += b->headers[static_cast<size_t>(r)].length;
  }
  if (total > INT_MAX) fail(GDAP_ERR_OVERFLOW, "{} bytes to allgather exceed an MPI count", total);
  std::vector<std::string> out(static_cast<size_t>(n));
  if (total == 0) return out;  // every rank saw the same lengths: none gathers
  b->all.assign(static_cast<size_t>(total), '\0');
  check_mpi(MPI_Iallgatherv(b->mine.data(), static_cast<int>(b->mine.size()), MPI_BYTE, b->all.data(), b->counts.data(),
                           b->displs.data(), MPI_BYTE, comm_, &request),
            "MPI_Iallgatherv");
  wait({&request, 1}, "MPI_Iallgatherv", false, b);
  for (int r = 0; r < n; ++r) {
    out[static_cast<size_t>(r)] = b->all.substr(static_cast<size_t>(b->displs[static_cast<size_t>(r)]),
                                                static_cast<size_t>(b->counts[static_cast<size_t>(r)]));
  }
  return out;
}

// An allgather of nothing: its fixed first step is a barrier that also compares the meetings.
void MpiComm::barrier() { allgather({}); }

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
    // The ranks on this node share its cores (io/parallel.hpp sizes each rank's threads by them).
    MPI_Comm local = MPI_COMM_NULL;
    if (const int code = MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local); code != MPI_SUCCESS) {
      MPI_Comm_free(&dup);
      gdap::check_mpi(code, "MPI_Comm_split_type");
    }
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    int node_ranks = 1;
    MPI_Comm_size(local, &node_ranks);
    MPI_Comm_free(&local);
    auto* made = new gdap::MpiComm(dup, rank, size);
    made->node_ranks = node_ranks;
    *out = made;
  });
}
