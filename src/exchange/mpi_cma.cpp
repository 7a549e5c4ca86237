// The single-copy exchange between ranks of one node (mpi_cma.hpp): each receiver turns its
// received messages into two lists of runs per sender, its own destination runs and the sender's
// source runs (adjacent runs merged on each side), and reads them with process_vm_readv, at most
// IOV_MAX of each per call. The lists hold absolute addresses, so they are kept per program,
// strides, and every rank's published share.
#include "exchange/mpi_cma.hpp"

#include "array/array.hpp"
#include "comm/mpi.hpp"
#include "core/error.hpp"
#include "exchange/copy.hpp"

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#ifdef __linux__
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace gdap::exchange {

#ifdef __linux__
namespace {

// What a rank publishes: its pid, a word its peers read to probe (and the value it holds), and its
// source section's base address and element strides (none without a source).
struct Published {
  int64_t pid = 0, probe_address = 0, probe_value = 0, base = 0;
  std::vector<int64_t> strides;
};

std::string encode(const Published& p) {
  std::vector<int64_t> words{p.pid, p.probe_address, p.probe_value, p.base, static_cast<int64_t>(p.strides.size())};
  words.insert(words.end(), p.strides.begin(), p.strides.end());
  return std::string(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(int64_t));
}

Published decode(const std::string& share, size_t rank) {
  const size_t n = share.size() / sizeof(int64_t);
  std::vector<int64_t> words(n);
  if (n > 0) std::memcpy(words.data(), share.data(), n * sizeof(int64_t));
  if (n < 5 || share.size() % sizeof(int64_t) != 0 || words[4] < 0 || static_cast<size_t>(words[4]) != n - 5) {
    fail(GDAP_ERR_INTERNAL, "rank {}'s share for the cross-memory attach exchange is malformed ({} bytes)", rank, share.size());
  }
  return Published{words[0], words[1], words[2], words[3], std::vector<int64_t>(words.begin() + 5, words.end())};
}

// The communicator's probe word and its verdict, kept with it.
struct CmaState final : Scratch {
  int64_t probe = std::chrono::steady_clock::now().time_since_epoch().count() ^ static_cast<int64_t>(getpid());
  std::optional<bool> usable;
};

CmaState& state_of(MpiComm& comm) { return comm.cache.get<CmaState>("exchange.cma"); }

// A list of runs, consumed in order by process_vm_readv's calls.
class Runs {
 public:
  explicit Runs(const std::vector<iovec>& runs) : runs_(runs) {}
  bool done() const { return at_ == runs_.size(); }
  // Fills `out` (at most IOV_MAX) from the current position with at most `limit` bytes; returns
  // how many bytes, and the count of runs in `n`.
  size_t take(iovec* out, int& n, size_t limit) const {
    size_t bytes = 0;
    n = 0;
    for (size_t i = at_, skip = offset_; i < runs_.size() && n < IOV_MAX && bytes < limit; ++i, skip = 0) {
      const size_t len = std::min(runs_[i].iov_len - skip, limit - bytes);
      out[n++] = iovec{static_cast<char*>(runs_[i].iov_base) + skip, len};
      bytes += len;
    }
    return bytes;
  }
  void advance(size_t bytes) {
    while (bytes > 0) {
      const size_t left = runs_[at_].iov_len - offset_;
      if (bytes < left) {
        offset_ += bytes;
        return;
      }
      bytes -= left;
      ++at_;
      offset_ = 0;
    }
  }

 private:
  const std::vector<iovec>& runs_;
  size_t at_ = 0, offset_ = 0;
};

// Appends a run, merged into the last when it continues it.
void append_run(std::vector<iovec>& runs, char* at, int64_t bytes) {
  if (bytes <= 0) return;
  if (!runs.empty() && static_cast<char*>(runs.back().iov_base) + runs.back().iov_len == at) {
    runs.back().iov_len += static_cast<size_t>(bytes);
    return;
  }
  runs.push_back(iovec{at, static_cast<size_t>(bytes)});
}

// Reads the sender `pid`'s `remote` runs into `local` (the same bytes in the same order); returns 0
// or the errno of the read that failed. A partial read goes on where it stopped.
int read_runs(pid_t pid, const std::vector<iovec>& local, const std::vector<iovec>& remote) {
  Runs to(local), from(remote);
  iovec to_now[IOV_MAX], from_now[IOV_MAX];
  while (!from.done()) {
    int n_to = 0, n_from = 0;
    size_t bytes = from.take(from_now, n_from, SIZE_MAX);
    const size_t room = to.take(to_now, n_to, bytes);
    if (room < bytes) bytes = from.take(from_now, n_from, room);  // the local side ran out of iovecs first
    const ssize_t got = process_vm_readv(pid, to_now, static_cast<unsigned long>(n_to), from_now,
                                         static_cast<unsigned long>(n_from), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return EFAULT;  // no progress: the sender's memory is gone
    to.advance(static_cast<size_t>(got));
    from.advance(static_cast<size_t>(got));
  }
  return 0;
}

// One sender's runs, read in one stream.
struct Sender {
  int rank = 0;
  pid_t pid = 0;
  std::vector<iovec> local, remote;
};

// A program's reads and local copies for given sections and peers' shares.
struct CmaPlan final : Scratch {
  std::vector<int64_t> key;
  std::vector<std::string> shares;
  std::vector<Sender> senders;
  std::vector<Copy2D> local;
};

CmaPlan& plan_for(MpiComm& comm, const Program& program, const Sections& sections, const std::vector<std::string>& shares) {
  std::vector<int64_t> key = key_of(program, sections);
  const std::string name = std::string("exchange.cma.") + program.style().name;
  if (CmaPlan* kept = comm.cache.find<CmaPlan>(name); kept != nullptr && kept->key == key && kept->shares == shares) {
    return *kept;
  }
  auto plan = std::make_unique<CmaPlan>();
  if (sections.dst) {
    char* dst = static_cast<char*>(sections.dst->data());
    const End receiver{End::receiver, sections.dst->section.strides};
    std::vector<Copy2D> copies;
    for (const Message& m : program.messages(Part::recv)) {
      const auto peer = static_cast<size_t>(m.peer);
      const Published from = decode(shares[peer], peer);
      if (plan->senders.empty() || plan->senders.back().rank != m.peer) {
        plan->senders.push_back(Sender{static_cast<int>(m.peer), static_cast<pid_t>(from.pid), {}, {}});
      }
      Sender& s = plan->senders.back();
      copies.clear();
      program.copies(m, End{End::sender, from.strides}, receiver, copies);
      char* base = reinterpret_cast<char*>(from.base);
      for (const Copy2D& c : copies) {
        for (int64_t k = 0; k < c.rows; ++k) {
          append_run(s.local, dst + c.dst + k * c.dst_pitch, c.row_bytes);
          append_run(s.remote, base + c.src + k * c.src_pitch, c.row_bytes);
        }
      }
    }
  }
  if (sections.src && sections.dst) {
    plan->local = program.part_copies(Part::local, End{End::sender, sections.src->section.strides},
                                      End{End::receiver, sections.dst->section.strides});
  }
  plan->key = std::move(key);
  plan->shares = shares;
  CmaPlan& made = *plan;
  comm.cache.slot(name) = std::move(plan);
  return made;
}

// Tests only (GDAP_TEST_CMA_REFUSED): "1" fails this rank's probe, "read" its reads after a good
// probe, as if the kernel refused them.
bool test_refuses(const char* what) {
  const char* refused = std::getenv("GDAP_TEST_CMA_REFUSED");
  return refused != nullptr && std::strcmp(refused, what) == 0;
}

// Whether this rank can read every peer's probe word, and so their memory.
bool probe(const MpiComm& comm, const std::vector<std::string>& shares) {
  if (comm.node_ranks != comm.size) return false;  // some peers are on other nodes
  if (test_refuses("1")) return false;
  for (size_t r = 0; r < shares.size(); ++r) {
    if (static_cast<int64_t>(r) == comm.rank) continue;
    const Published peer = decode(shares[r], r);
    int64_t value = 0;
    iovec to{&value, sizeof value}, from{reinterpret_cast<void*>(peer.probe_address), sizeof value};
    if (process_vm_readv(static_cast<pid_t>(peer.pid), &to, 1, &from, 1, 0) != static_cast<ssize_t>(sizeof value)) return false;
    if (value != peer.probe_value) return false;  // another process with that pid
  }
  return true;
}

// Collective: the lowest rank whose `ok` is false, or INT_MAX; bounded by the timeout.
int lowest_failing(MpiComm& comm, bool ok, const char* what) {
  auto rank = std::make_shared<int>(ok ? INT_MAX : static_cast<int>(comm.rank));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, rank.get(), 1, MPI_INT, MPI_MIN, comm.handle(), &request), "MPI_Iallreduce");
  comm.wait({&request, 1}, what, false, rank);
  return *rank;
}

}  // namespace

std::string cma_share(MpiComm& comm, const Sections& sections) {
  const CmaState& state = state_of(comm);
  Published mine{static_cast<int64_t>(getpid()), reinterpret_cast<int64_t>(&state.probe), state.probe, 0, {}};
  if (sections.src) {
    mine.base = reinterpret_cast<int64_t>(sections.src->data());
    mine.strides = sections.src->section.strides;
  }
  return encode(mine);
}

bool cma_usable(MpiComm& comm, const std::vector<std::string>& shares) {
  CmaState& state = state_of(comm);
  if (!state.usable) state.usable = lowest_failing(comm, probe(comm, shares), "the cross-memory attach probe") == INT_MAX;
  return *state.usable;
}

void cma_exchange(MpiComm& comm, const Program& program, const Sections& sections, const std::vector<std::string>& shares) {
  // Whatever goes wrong here, this rank still meets its peers at the end: they may be reading its section.
  std::optional<Error> error;
  try {
    const CmaPlan& plan = plan_for(comm, program, sections, shares);
    for (const Sender& s : plan.senders) {
      if (const int code = test_refuses("read") ? EPERM : read_runs(s.pid, s.local, s.remote); code != 0) {
        fail(GDAP_ERR_COMM, "process_vm_readv from rank {} (pid {}) failed: {} (errno {})", s.rank, s.pid,
             std::strerror(code), code);
      }
    }
    run_host_copies(plan.local, sections.src ? static_cast<const char*>(sections.src->data()) : nullptr,
                    sections.dst ? static_cast<char*>(sections.dst->data()) : nullptr);
  } catch (const Error& e) {
    error = e;
  } catch (const std::bad_alloc&) {
    error = Error(GDAP_ERR_NO_MEMORY, "out of host memory (cross-memory attach exchange)");
  }
  const int failing = lowest_failing(comm, !error, "the cross-memory attach exchange");
  if (error) throw *error;
  if (failing != INT_MAX) fail(GDAP_ERR_REMOTE, "rank {} failed in the cross-memory attach exchange", failing);
}

#else  // no cross-memory attach

std::string cma_share(MpiComm&, const Sections&) {
  fail(GDAP_ERR_UNSUPPORTED, "GDAP_MPI_EXCHANGE=cma needs Linux's cross-memory attach (process_vm_readv)");
}
bool cma_usable(MpiComm&, const std::vector<std::string>&) { return false; }
void cma_exchange(MpiComm&, const Program&, const Sections&, const std::vector<std::string>&) {
  fail(GDAP_ERR_UNSUPPORTED, "GDAP_MPI_EXCHANGE=cma needs Linux's cross-memory attach (process_vm_readv)");
}

#endif

}  // namespace gdap::exchange
