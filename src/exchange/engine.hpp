// One engine per kind of communicator runs every exchange program (program.hpp) and the
// reductions' collective steps: the in-process group (threads that copy straight between their
// sections, group.cpp), MPI (point-to-point from and into the sections, mpi.cpp) and NCCL
// (grouped send/receive through staging, or direct writes into the peers' memory on one host,
// nccl.cpp). A layer above asks engine_of(comm) once per call and never looks at the
// communicator's kind: engine.cpp is the one place that does.
//
// Every call is collective. run() and bind() first let the ranks agree: each rank runs its checks
// (the caller's and the engine's own of the sections' memory), and if any rank's fail, every
// rank throws (the failing rank its own error, the others GDAP_ERR_REMOTE naming it) and nothing
// moves; so no rank is left waiting in an exchange its peer refused.
#pragma once

#include "array/memory.hpp"
#include "comm/cache.hpp"
#include "comm/comm.hpp"
#include "exchange/program.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct gdap_array;
struct gdap_comm;

namespace gdap::exchange {

// One rank's sections of an exchange. NULL where the rank holds nothing on that side (it then
// only sends, or only receives); both the same array for an exchange within one section (halos).
struct Sections {
  const gdap_array* src = nullptr;  // sent from, and the local copies' source
  gdap_array* dst = nullptr;        // received into, and the local copies' destination
  const char* src_name = "src";     // how errors name them
  const char* dst_name = "dst";
};

// What the ranks agree on before anything moves.
struct Agreement {
  std::function<void()> checks;  // this rank's checks of its arguments: throws what is wrong
  std::string token;             // every rank's must be rank 0's ("": no token)
  Mismatch mismatch;              // the error when a rank's token differs (comm.hpp)
};

// An exchange checked and agreed on once (gdap_halo_exchange_init), which start() runs again and
// again without an agreement: the program and sections are borrowed and must outlive it.
struct Bound {
  const Program* program = nullptr;
  Sections sections;
  std::unique_ptr<Scratch> direct;  // what the engine keeps for it (NCCL's direct writes, MPI's mode), if anything
};

// dst[i] = op(dst[i], src[i]) for `count` elements of `dtype` in host memory: a reduction's
// combine step, which engines that reduce by copying (the in-process group) apply.
using Combine = void (*)(gdap_dtype dtype, gdap_reduce_op op, void* dst, const void* src, int64_t count);

// How a reduction's buffers are given to an engine: elements of `dtype` combined with `op` (not
// mean) in `memory` (host or device, as the engine takes: check_section said so).
struct Reduce {
  gdap_dtype dtype{};
  gdap_reduce_op op = GDAP_REDUCE_SUM;
  Memory memory = Memory::host;
  Combine combine = nullptr;
  std::shared_ptr<void> keep;  // what an operation abandoned at a timeout may still use (MPI)
  // Agreed: every rank's may_hold_nan said no for what it reduces. NCCL then reduces float min
  // and max as floats (exact without NaN) rather than as order keys; the other engines ignore it.
  // Every reduction that reaches NCCL asks inside the agreement it already makes (gdap_allreduce's,
  // reduce_on_device's), so knowing costs no round; a caller that does not ask leaves it false,
  // which is always right (the keys).
  bool nan_free = false;
};

// One move of a broadcast step: `program` (a broadcast, Style::broadcast) sent from this rank's
// published section number `section` when it has a local message, received on every rank into
// `buffer`: the packed message, compact (host or device memory, as the sections).
struct Move {
  const Program* program = nullptr;
  size_t section = 0;
  char* buffer = nullptr;
  std::shared_ptr<void> keep;  // holds `buffer` for an operation abandoned at a timeout (MPI)
};

// What a session of broadcasts publishes and where it runs.
struct BroadcastSetup {
  std::vector<const gdap_array*> sections;  // this rank's, read by its peers' moves until end()
  Memory memory = Memory::host;             // the sections' and buffers' memory
  void* copy_stream = nullptr;              // device: the moves' stream, which first waits for the
                                            // work queued on the communicator's stream
};

// Broadcasts run step after step on sections published once (GEMM's SUMMA panels, gemm/): start()
// queues (device) or posts (host) a step's moves into its buffers, wait() returns once the moves
// of a step started with the same `slot` are in, on the host (MPI; the others are done or queued
// by then), and end() closes the session: no peer reads this rank's sections any more once every
// rank's end() returned, and on a device the communicator's stream has waited for every move.
class Broadcasts {
 public:
  virtual ~Broadcasts() = default;
  virtual void start(std::span<const Move> moves, int slot) = 0;
  virtual void wait(int slot) { (void)slot; }
  virtual void end() = 0;
};

class Engine : public Scratch {
 public:
  explicit Engine(gdap_comm& comm) : comm_(comm) {}

  // Collective: agrees, then runs `program` between `sections` (see above).
  virtual void run(const Program& program, const Sections& sections, const Agreement& agreement) = 0;
  // Collective: agrees once; the Bound then runs through start() alone.
  virtual std::unique_ptr<Bound> bind(const Program& program, const Sections& sections, const Agreement& agreement);
  virtual void start(Bound& bound) = 0;

  // Throws unless this engine can move (`reduce`: reduce) the section `a`, in errors named `which`
  // (e.g. "src"); `operation` names what asks ("redistribution", "gdap_reduce_axes").
  virtual void check_section(const gdap_array& a, std::string_view which, std::string_view operation,
                             bool reduce) const = 0;

  // Collective, in place: `count` elements at `data` become the element-wise reduction of every
  // rank's, bitwise the same on every rank.
  virtual void allreduce(void* data, int64_t count, const Reduce& r) = 0;
  // Collective: this rank's segment of every rank's `send` (one segment of `segment` elements per
  // rank, in rank order) reduced into `recv` (`segment` elements, apart from `send`).
  virtual void reduce_scatter(const void* send, void* recv, int64_t segment, const Reduce& r) = 0;
  // As reduce_scatter, in place in `buffer` (every rank's segment of it): returns where in it
  // (elements) this rank's reduced segment lies; the rest is then undefined.
  virtual int64_t reduce_scatter_in_place(void* buffer, int64_t segment, const Reduce& r) = 0;
  // Before a reduction's agreement: false only if this engine looked and `count` elements at `data`
  // (this rank's part of an allreduce or reduce_scatter with `r`) hold no NaN. Engines look only
  // where the answer changes how they reduce (NCCL's float min and max: one read of the data,
  // waited for on the host, bounded as an agreement is); the others say true without looking.
  virtual bool may_hold_nan(const void* data, int64_t count, const Reduce& r) {
    (void)data, (void)count, (void)r;
    return true;
  }

  // Collective: opens a session of broadcasts (see Broadcasts); GDAP_ERR_UNSUPPORTED for memory
  // this engine does not move.
  virtual std::unique_ptr<Broadcasts> broadcasts(const BroadcastSetup& setup) = 0;

 protected:
  // This rank's whole check: the caller's, then check_section on each section.
  void check_all(const Program& program, const Sections& sections, const Agreement& agreement) const;

  gdap_comm& comm_;
};

// The engine of `comm`'s kind, made on first use and kept on the communicator.
Engine& engine_of(gdap_comm& comm);

// Identifies what an engine keeps for `program` between these sections: the program and this
// rank's sections (addresses and strides), for caches of copy lists and routes.
std::vector<int64_t> key_of(const Program& program, const Sections& sections);

// Declares a section this rank's collective call reads or writes (comm/collective.hpp: the
// in-process group refuses a call in which a rank writes memory that any rank's call touches);
// NULL or an empty section declares nothing.
void touches(gdap_comm& comm, const char* what, const gdap_array* a, bool written);

}  // namespace gdap::exchange
