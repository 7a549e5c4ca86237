// gdap_comm: one rank's handle on a group (in-process threads, MPI or NCCL). The base class
// carries what every kind shares (rank, size, the CUDA stream, the cache of what the layers above
// keep between calls) and the two collectives the layers above need for control: allgather of
// bytes and barrier. Data movement itself lives with the engines (src/exchange), one per kind.
#pragma once

#include "comm/cache.hpp"
#include "comm/collective.hpp"
#include "comm/live.hpp"
#include "core/error.hpp"
#include "core/handle.hpp"

#include <gdap/gdap.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct gdap_comm : gdap::Tagged<gdap_comm> {
  gdap_comm(int64_t rank_, int64_t size_) : rank(rank_), size(size_) { gdap::register_comm(this); }
  virtual ~gdap_comm() { gdap::unregister_comm(this); }
  gdap_comm(const gdap_comm&) = delete;
  gdap_comm& operator=(const gdap_comm&) = delete;

  virtual gdap_comm_kind kind() const = 0;
  // Collective: every rank's bytes, in rank order (this rank's included).
  virtual std::vector<std::string> allgather(std::string_view mine) = 0;
  // Collective: returns once every rank has entered.
  virtual void barrier() = 0;
  // gdap_comm_set_timeout: > 0 (INFINITY waits for ever).
  void set_timeout(double seconds);
  // gdap_comm_set_stream; NCCL orders the new stream after the old one (nccl.hpp).
  virtual void set_stream(void* s) { stream = s; }
  // True when the caller's interrupt check (gdap_comm_set_interrupt) asks this rank to stop waiting.
  bool interrupted() const { return interrupt_check != nullptr && interrupt_check(interrupt_user) != 0; }

  const int64_t rank, size;
  double timeout = 300;  // seconds this rank waits for its peers at a collective call
  gdap_interrupt_check interrupt_check = nullptr;
  void* interrupt_user = nullptr;
  // Ranks of this communicator that share this rank's machine (and so its cores): the in-process
  // group's all, MPI's node-local ones; 1 where unknown (NCCL). Thread pools per rank divide the
  // cores by it (io/parallel.hpp).
  int64_t node_ranks = 1;
  void* stream = nullptr;  // cudaStream_t for device work; NULL: the legacy default stream
  gdap::Cache cache;  // what the layers above keep between calls, freed with the communicator
  // The collective C call this rank is in, its meetings so far, how deeply calls are nested, and
  // the memory it declared it touches (comm/collective.hpp).
  const char* call = nullptr;
  int64_t call_meetings = 0;
  int call_depth = 0;
  // Calls in progress on this communicator, whatever thread makes them: their pins (live.hpp) and
  // collective calls (atomic: gdap_comm_destroy reads it, and refuses to free one a call still uses).
  std::atomic<int> busy{0};
  std::vector<gdap::Region> touched;
  // gdap_comm_fail_next's failure, waiting for this rank's next collective call (status GDAP_SUCCESS:
  // none), and the one the call in progress carries to its agreement (CollectiveCall moves it).
  gdap_status fail_next = GDAP_SUCCESS, call_fails = GDAP_SUCCESS;
  std::string fail_next_reason, call_fails_reason;
};

namespace gdap {

// A communicator is pinned (CommPin, live.hpp), never only tag-checked: handle() could read one that
// another thread's gdap_comm_destroy is freeing. Deleted so that a new entry point cannot forget.
template <> gdap_comm& handle(gdap_comm* pointer, const char* what) = delete;
template <> const gdap_comm& handle(const gdap_comm* pointer, const char* what) = delete;

// Runs `local` (this rank's own checks), then lets the ranks agree: if any rank's checks threw,
// every rank throws: the first failing rank its own error, the others GDAP_ERR_REMOTE naming the
// lowest failing rank and quoting its message. Costs one allgather of a few bytes.
// With a `token`, the ranks that passed must also hold rank 0's token; otherwise every rank
// throws GDAP_ERR_INVALID_ARGUMENT with mismatch(first differing rank, its token, rank 0's).
using Mismatch = std::function<std::string(size_t rank, std::string_view theirs, std::string_view first)>;
void agree(gdap_comm& comm, const std::function<void()>& local);
void agree(gdap_comm& comm, const std::function<void()>& local, std::string_view token, const Mismatch& mismatch);

// As agree, with `local` returning this rank's token (known once its checks passed) and its share
// of what the ranks learn of each other: once every rank has passed and holds rank 0's token,
// every rank's share in rank order. Lets a call's first exchange of control bytes also be its
// agreement.
struct Share {
  std::string token, bytes;
};
std::vector<std::string> agree_gather(gdap_comm& comm, const std::function<Share()>& local, const Mismatch& mismatch);

// As agree_gather with no token to compare: every rank's `local()` in rank order, once every
// rank's `local` (its checks, or the work whose result it shares) succeeded.
std::vector<std::string> agree_shares(gdap_comm& comm, const std::function<std::string()>& local);

// A token of named fields, each name and each value ended by a NUL (a path may hold a tab or a
// newline, not a NUL), whose mismatch can say which field differs: what a call's ranks must pass
// alike (dtype, a map's digest, sizes, a save's path) so that none moves a byte for a peer that
// reads it otherwise.
struct Field {
  std::string_view name;
  std::string value;
};
std::string field_token(std::initializer_list<Field> fields);
std::string field_token(const std::vector<Field>& fields);

// The first field that two field tokens name alike but give different values (views into them);
// none where they match, or where their names part first (another build's fields).
struct FieldDifference {
  std::string_view name, theirs, first;
};
std::optional<FieldDifference> first_difference(std::string_view theirs, std::string_view first);

// The mismatch of field tokens: "rank 1 passed source dtype float32 but rank 0 float64", then `why`
// (what must be alike); `what` names the whole when no field can be named. Nothing has moved when
// an agreement says so.
Mismatch field_mismatch(std::string what, std::string why);

// The failure gdap_comm_fail_next gave the collective call in progress, taken (so that only its
// first agreement reports it); GDAP_SUCCESS when there is none.
Error take_call_failure(gdap_comm& comm);


}  // namespace gdap
