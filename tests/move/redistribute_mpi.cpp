// gdap_redistribute over MPI (run with mpirun -np 2 or 4): the table of redistribute_check.hpp, and
// plans taken in turn on one communicator (alternating_check.hpp: each built once, every call right),
// for a group of MPI_Comm_size ranks, in each of the executor's exchange modes (cma with its
// senders packing short runs, nothing or everything; and with every rank's, or the even ranks',
// sources in shared memory, which receivers map and copy from), element by element; the table again in cma mode on a communicator where one rank's probe is refused
// (GDAP_TEST_CMA_REFUSED: every rank must fall back to point-to-point, or they would wait on each
// other until the timeout); then one rank's bad arguments (every rank fails, nothing moves), global views no
// rank may accept (the same error on every rank), and shared-memory sources re-created between calls
// (read anew) or spoilt (unlinked, replaced, published out of bounds, unmappable: every rank fails);
// and pack segments a receiver cannot map, read from the senders' mappings instead (every element
// right) unless that read fails too or the sender is gone (every rank fails, naming the sender);
// and pack segments a sender grew or moved to the heap, unmapped at once on every rank.
//
// A plain program rather than gtest: an assertion that returned early on one rank would leave the
// others waiting in a collective. Each rank records its failures and keeps pace; at the end every
// rank prints its own, rank 0 a summary, and the exit code is non-zero if any rank failed.
#include "alternating_check.hpp"
#include "redistribute_check.hpp"

#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace rt = redist_test;

// A gdap communicator over the first `size` ranks of MPI_COMM_WORLD, for building a map that
// spans fewer ranks than the world; NULL on the other ranks, and on all when `size` is the whole
// world (whose communicator serves then). Collective over the world.
class FirstRanks {
 public:
  FirstRanks(int size, int rank, int nranks) {
    if (size == nranks) return;
    MPI_Comm_split(MPI_COMM_WORLD, rank < size ? 0 : MPI_UNDEFINED, rank, &mpi_);
    if (mpi_ != MPI_COMM_NULL && gdap_comm_from_mpi(&gdap_, MPI_Comm_c2f(mpi_)) != GDAP_SUCCESS) {
      std::fprintf(stderr, "rank %d: gdap_comm_from_mpi: %s\n", rank, gdap_last_error());
    }
  }
  ~FirstRanks() {
    gdap_comm_destroy(gdap_);  // frees gdap's duplicate: collective over these ranks
    if (mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
  }
  FirstRanks(const FirstRanks&) = delete;
  FirstRanks& operator=(const FirstRanks&) = delete;
  gdap_comm* get() const { return gdap_; }

 private:
  MPI_Comm mpi_ = MPI_COMM_NULL;
  gdap_comm* gdap_ = nullptr;
};

// A communicator of its own over the world (collective), for a case whose outcome the world's
// kept state would decide (its probe verdict, the peers' segments it mapped): destroyed with it.
class OwnComm {
 public:
  explicit OwnComm(rt::Report& report) {
    if (gdap_comm_from_mpi(&comm_, MPI_Comm_c2f(MPI_COMM_WORLD)) != GDAP_SUCCESS) {
      report.fail(rt::cat("gdap_comm_from_mpi: ", gdap_last_error()));
    }
  }
  ~OwnComm() { gdap_comm_destroy(comm_); }
  OwnComm(const OwnComm&) = delete;
  OwnComm& operator=(const OwnComm&) = delete;
  gdap_comm* get() const { return comm_; }

 private:
  gdap_comm* comm_ = nullptr;
};

// Rule: a message of more runs than one process_vm_readv takes (IOV_MAX, 1024) arrives whole in
// cma mode. Cyclic rows to column blocks: each sender's 1,100 rows are as many runs on both sides.
rt::Case many_runs(int nranks) {
  return {"many_runs_cyclic_rows_to_column_blocks",
          {{rt::make_axis(rt::Kind::cyclic, 1100 * nranks, nranks, 1), rt::make_axis(rt::Kind::block, 7, 1, 2)}},
          {{rt::make_axis(rt::Kind::block, 1100 * nranks, 1, 3), rt::make_axis(rt::Kind::block, 7, nranks, 4)}}};
}

// Rule: in cma mode a sender packs the messages whose runs on its side are short and not the
// others, within one call, and both arrive. Row blocks to irregular column blocks, 1,024 columns:
// rank 1 gets 1,024 - (ranks - 1) columns (runs of 8 KiB or so: read from the section under the
// default 4 KiB threshold), every other rank one column (8-byte runs: packed).
rt::Case mixed_runs(int nranks) {
  std::vector<int64_t> columns(static_cast<size_t>(nranks), 1);
  columns[1] = 1024 - (nranks - 1);
  return {"mixed_runs_row_blocks_to_one_wide_and_narrow_columns",
          {{rt::mt::block(16 * nranks, nranks), rt::mt::block(1024, 1)}},
          {{rt::mt::block(16 * nranks, 1), rt::mt::irregular(1024, columns)}}};
}

// Which ranks' sources lie in shared memory (gdap_array_create_shm): none (the table's storages),
// every rank's, or the even ranks' (the odd ones read or packed as without).
enum class Shm { none, all, even };

// Where the senders' pack buffers lie (GDAP_CMA_PACK_TO): unset (the default, shared-memory
// segments the receivers map), every rank's on the heap (read with process_vm_readv), the odd
// ranks' on the heap because making their segment failed (GDAP_TEST_CMA_REFUSED=segment there), or
// the odd ranks' in segments no receiver can open (GDAP_TEST_CMA_REFUSED=unmappable there): each
// receiver maps the even senders' and reads the odd ones' from the senders' mappings instead.
enum class Packs { unset, heap, odd_refused, odd_unmappable };

// One way to run the exchange: GDAP_MPI_EXCHANGE, and for cma GDAP_CMA_PACK_BELOW and the staging
// chunk (GDAP_TEST_CMA_CHUNK) (NULL: unset), which sources are in shared memory, and where the
// pack buffers lie.
struct Mode {
  const char* name;
  const char* exchange;
  const char* pack_below;
  const char* chunk = nullptr;
  Shm shm = Shm::none;
  Packs packs = Packs::unset;
};
// cma three ways: the default threshold (the table's short runs packed, the long ones read in
// place), 0 (nothing packed: every run read from the section), and one larger than any message
// (everything packed) into segments the receivers map, and on the heap (read with process_vm_readv),
// also through 40-byte staging chunks, so that rows and elements are cut at chunk edges, and with
// the odd ranks' packs on the heap beside the even ranks' segments. Then cma with sources in shared
// memory, whose receivers map them and copy with plain loads (one pass): every rank's, and the even
// ranks' beside odd ones read or packed.
constexpr Mode kModes[] = {{"p2p", "p2p", nullptr},
                           {"alltoallv", "alltoallv", nullptr},
                           {"datatype", "datatype", nullptr},
                           {"cma", "cma", nullptr},
                           {"cma, nothing packed", "cma", "0"},
                           {"cma, everything packed", "cma", "1099511627776"},
                           {"cma, everything packed on the heap", "cma", "1099511627776", nullptr, Shm::none, Packs::heap},
                           {"cma, everything packed on the heap, 40-byte chunks", "cma", "1099511627776", "40", Shm::none,
                            Packs::heap},
                           {"cma, everything packed, odd ranks' packs on the heap (no segment made)", "cma", "1099511627776",
                            nullptr, Shm::none, Packs::odd_refused},
                           {"cma, everything packed, odd ranks' pack segments unmappable (read instead)", "cma",
                            "1099511627776", nullptr, Shm::none, Packs::odd_unmappable},
                           {"cma, sources in shared memory", "cma", nullptr, nullptr, Shm::all},
                           {"cma, even ranks' sources in shared memory", "cma", nullptr, nullptr, Shm::even},
                           {"cma, even ranks' sources in shared memory, odd ones' packed", "cma", "1099511627776", "40", Shm::even},
                           {"cma, even ranks' sources in shared memory, odd ones' packed on the heap", "cma", "1099511627776",
                            "40", Shm::even, Packs::heap}};

// The storage this rank's sources take in `mode` (none: the table's).
std::optional<rt::Storage> source_storage(const Mode& mode, int rank) {
  const bool shm = mode.shm == Shm::all || (mode.shm == Shm::even && rank % 2 == 0);
  return shm ? std::optional<rt::Storage>(rt::Storage::shm) : std::nullopt;
}

// The table once per exchange mode: each packs and addresses the sections differently.
int64_t run_table(gdap_comm* world, int rank, int nranks, rt::Report& report) {
  std::vector<rt::Case> table = rt::cases(nranks);
  table.push_back(many_runs(nranks));
  table.push_back(mixed_runs(nranks));
  for (const Mode& mode : kModes) {
    setenv("GDAP_MPI_EXCHANGE", mode.exchange, 1);
    if (mode.pack_below != nullptr) setenv("GDAP_CMA_PACK_BELOW", mode.pack_below, 1);
    if (mode.chunk != nullptr) setenv("GDAP_TEST_CMA_CHUNK", mode.chunk, 1);
    if (mode.packs == Packs::heap) setenv("GDAP_CMA_PACK_TO", "heap", 1);
    if (mode.packs == Packs::odd_refused && rank % 2 == 1) setenv("GDAP_TEST_CMA_REFUSED", "segment", 1);
    if (mode.packs == Packs::odd_unmappable && rank % 2 == 1) setenv("GDAP_TEST_CMA_REFUSED", "unmappable", 1);
    report.context = mode.name;
    for (size_t i = 0; i < table.size(); ++i) {
      const rt::Case& c = table[i];
      auto map_comm = [&](const rt::Layout& layout, const FirstRanks& own) {
        return layout.nranks() == nranks ? world : own.get();
      };
      const FirstRanks src_ranks(static_cast<int>(c.src.nranks()), rank, nranks),
          dst_ranks(static_cast<int>(c.dst.nranks()), rank, nranks);
      rt::run_case(c, i, rank, {world, map_comm(c.src, src_ranks), map_comm(c.dst, dst_ranks)}, report,
                   source_storage(mode, rank));
    }
    // Plans in turn on one communicator: two and four each built once, five in turn evicting.
    // Where this mode's sources are in shared memory, so are the ring's (each maps once, not per call).
    const rt::Storage ring_storage = source_storage(mode, rank).value_or(rt::Storage::created);
    for (size_t programs : {2, 4, 5}) {
      rt::run_alternating(world, rank, nranks, programs, 5, "mpi", report, ring_storage);
    }
    unsetenv("GDAP_CMA_PACK_BELOW");
    unsetenv("GDAP_TEST_CMA_CHUNK");
    unsetenv("GDAP_CMA_PACK_TO");
    unsetenv("GDAP_TEST_CMA_REFUSED");
  }
  unsetenv("GDAP_MPI_EXCHANGE");
  report.context.clear();
  return static_cast<int64_t>(table.size() * std::size(kModes));
}

// Rule: when one rank cannot read its peers' memory (its probe refused), every rank falls back to
// point-to-point and the results are right. A fresh communicator: the verdict is kept per
// communicator, and the world's already said yes. A short timeout turns a rank left waiting
// (one reading, another sending) into a failure rather than a stall.
int64_t run_cma_refused(int rank, int nranks, rt::Report& report) {
  const OwnComm own(report);
  gdap_comm* comm = own.get();
  if (comm == nullptr) return 0;
  gdap_comm_set_timeout(comm, 30);
  setenv("GDAP_MPI_EXCHANGE", "cma", 1);
  if (rank == nranks - 1) setenv("GDAP_TEST_CMA_REFUSED", "1", 1);
  report.context = "cma refused on the last rank";
  const std::vector<rt::Case> table = rt::cases(nranks);
  int64_t count = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].src.nranks() != nranks || table[i].dst.nranks() != nranks) continue;
    rt::run_case(table[i], i, rank, {comm, comm, comm}, report);
    ++count;
  }
  unsetenv("GDAP_TEST_CMA_REFUSED");
  unsetenv("GDAP_MPI_EXCHANGE");
  report.context.clear();
  return count;
}

// One move of `length` float64 (23 unless said) from row blocks to cyclic pairs, with painted
// sections, for the refusals. The source is made as `src_storage` says (a shm one's segment named
// `shm_name`, NULL: fresh).
struct OneMove {
  OneMove(gdap_comm* comm, int rank, int nranks, const std::string& what, rt::Report& report,
          rt::Storage src_storage = rt::Storage::created, const char* shm_name = nullptr, int64_t length = 23)
      : comm_(comm), length_(length) {
    rt::build_map(src_map, src_layout(nranks), rank, comm, what, report);
    rt::build_map(dst_map, dst_layout(nranks), rank, comm, what, report);
    if (gdap_plan_create(&plan.plan, src_map.map, dst_map.map, f64.type, rank) != GDAP_SUCCESS) {
      report.fail(rt::cat(what, ": gdap_plan_create: ", gdap_last_error()));
    }
    make_source(src_storage, shm_name, rank, nranks, true, what, report);
    rt::make_painted(dst, rt::Storage::c_order, f64, dst_layout(nranks), rank, false, rt::kSentinel,
                     what + ", destination", report);
  }
  // (Re)makes the source, painted with its values (`owned_values`) or all kOther.
  void make_source(rt::Storage storage, const char* shm_name, int rank, int nranks, bool owned_values,
                   const std::string& what, rt::Report& report) {
    src.destroy();
    const std::string error = src.make(storage, f64, rt::rank_dims(src_layout(nranks), rank), false, shm_name);
    if (!error.empty()) return report.fail(rt::cat(what, ", source: ", error));
    rt::paint(src, f64, rt::Oracle(src_layout(nranks), rank), owned_values, owned_values ? rt::kPoison : kOther);
  }
  // The destination's image after a move of a source painted so (every destination cell is owned).
  std::vector<unsigned char> expected(int rank, int nranks, bool owned_values) {
    const std::vector<unsigned char> before = dst.image();
    rt::paint(dst, f64, rt::Oracle(dst_layout(nranks), rank), owned_values, kOther);
    std::vector<unsigned char> want = dst.image();
    dst.restore(before);
    return want;
  }
  static constexpr int64_t kOther = 42;
  rt::Layout src_layout(int nranks) const { return {{rt::mt::block(length_, nranks)}}; }
  rt::Layout dst_layout(int nranks) const { return {{rt::mt::cyclic(length_, nranks, 2)}}; }
  gdap_status run() { return gdap_redistribute(comm_, plan.plan, src.array(), dst.array()); }

  gdap_comm* comm_;
  int64_t length_;
  const rt::Dtype& f64 = rt::dtypes()[0];
  rt::MapHandle src_map, dst_map;
  rt::PlanHandle plan;
  rt::Section src, dst;
};

// Rule: the ranks must pick the same exchange (p2p and datatype may mix: they move the same
// messages). With GDAP_MPI_EXCHANGE=`bad_mode` on rank `bad` and `others_mode` on the others (NULL:
// unset, a redistribution's default cma), every rank fails GDAP_ERR_INVALID_ARGUMENT at once naming
// `bad` and both modes (the agreement tells), and nothing moves. (alltoallv against p2p or
// datatype used to wait the whole timeout, then break the communicator.)
void run_mixed_exchange(gdap_comm* comm, int rank, int nranks, int bad, const char* bad_mode, const char* others_mode,
                        rt::Report& report) {
  const std::string what = rt::cat("GDAP_MPI_EXCHANGE=", bad_mode, " on rank ", bad, " and ",
                                   others_mode ? others_mode : "unset", " elsewhere, seen by rank ", rank);
  OneMove move(comm, rank, nranks, what, report);
  const std::vector<unsigned char> src_before = move.src.image(), before = move.dst.image();
  const char* mine = rank == bad ? bad_mode : others_mode;
  if (mine != nullptr) setenv("GDAP_MPI_EXCHANGE", mine, 1);
  const gdap_status status = move.run();
  unsetenv("GDAP_MPI_EXCHANGE");
  const std::string text = gdap_last_error();
  if (status != GDAP_ERR_INVALID_ARGUMENT) {
    report.fail(rt::cat(what, ": got ", gdap_status_string(status), " (", text, "), want GDAP_ERR_INVALID_ARGUMENT"));
  }
  if (!rt::contains(text, rt::cat("rank ", bad)) || !rt::contains(text, "every rank must pick the same exchange")) {
    report.fail(rt::cat(what, ": the error does not name the rank: ", text));
  }
  if (!rt::contains(text, rt::cat(bad_mode, " on rank ", bad)) ||
      !rt::contains(text, rt::cat(others_mode ? others_mode : "cma", " on rank "))) {
    report.fail(rt::cat(what, ": the error does not name both modes: ", text));
  }
  rt::expect_image(move.dst, before, move.f64, what + ": the destination changed", report);
  rt::expect_image(move.src, src_before, move.f64, what + ": the source changed", report);
}

// Rule: modes that move the same messages may mix: GDAP_MPI_EXCHANGE=`bad_mode` on rank `bad` and
// `others_mode` on the others moves the data right.
void run_mixed_modes_move(gdap_comm* comm, int rank, int nranks, int bad, const char* bad_mode, const char* others_mode,
                          rt::Report& report) {
  setenv("GDAP_MPI_EXCHANGE", rank == bad ? bad_mode : others_mode, 1);
  rt::run_case(rt::cases(nranks)[0], 0, rank, {comm, comm, comm}, report);
  unsetenv("GDAP_MPI_EXCHANGE");
}

// What one cma move with `variable`=`value` set on rank `bad` alone must end in: `bad` fails with
// `on_bad` and every text of `bad_says` in its error, every other rank with GDAP_ERR_REMOTE naming
// `bad` as `others_say` does; no source changes, and with `untouched` no destination either.
struct CmaRefusal {
  const char* variable;
  const char* value;
  gdap_status on_bad;
  std::vector<std::string> bad_says;
  std::string others_say;
  bool untouched;
  rt::Storage src = rt::Storage::created;  // every rank's source
};

void expect_cma_refusal(gdap_comm* comm, int rank, int nranks, int bad, const CmaRefusal& r, rt::Report& report) {
  const std::string what = rt::cat(r.variable, "=", r.value, " on rank ", bad, ", seen by rank ", rank);
  OneMove move(comm, rank, nranks, what, report, r.src);
  const std::vector<unsigned char> src_before = move.src.image(), before = move.dst.image();
  setenv("GDAP_MPI_EXCHANGE", "cma", 1);
  if (rank == bad) setenv(r.variable, r.value, 1);
  const gdap_status status = move.run();
  unsetenv(r.variable);
  unsetenv("GDAP_MPI_EXCHANGE");
  const std::string text = gdap_last_error();
  const gdap_status want = rank == bad ? r.on_bad : GDAP_ERR_REMOTE;
  if (status != want) {
    report.fail(rt::cat(what, ": got ", gdap_status_string(status), " (", text, "), want ", gdap_status_string(want)));
  }
  const std::vector<std::string> says = rank == bad ? r.bad_says : std::vector<std::string>{r.others_say};
  for (const std::string& s : says) {
    if (!rt::contains(text, s)) report.fail(rt::cat(what, ": the error does not say '", s, "': ", text));
  }
  if (r.untouched) rt::expect_image(move.dst, before, move.f64, what + ": the destination changed", report);
  rt::expect_image(move.src, src_before, move.f64, what + ": the source changed", report);
}

// Rule: a read that fails mid-exchange (GDAP_TEST_CMA_REFUSED=read on rank `bad`: its probe passes,
// its reads fail with EPERM) leaves no rank waiting: `bad` gets GDAP_ERR_COMM naming the peer and
// errno, every other rank GDAP_ERR_REMOTE naming `bad`, the step, its status and its cause. The
// packs are on the heap, so that the move's packed messages are read.
void run_failed_read(gdap_comm* comm, int rank, int nranks, int bad, rt::Report& report) {
  setenv("GDAP_CMA_PACK_TO", "heap", 1);
  expect_cma_refusal(comm, rank, nranks, bad,
                     {"GDAP_TEST_CMA_REFUSED", "read", GDAP_ERR_COMM, {"process_vm_readv from rank ", rt::cat("errno ", EPERM)},
                      rt::cat("rank ", bad, " failed in reading its peers' memory for the cross-memory attach exchange (GDAP_ERR_COMM): "
                              "process_vm_readv from rank "), false},
                     report);
  unsetenv("GDAP_CMA_PACK_TO");
}

// One cma move with every message packed and GDAP_TEST_CMA_REFUSED=`refused` on this rank (NULL:
// unset): it must succeed, every destination element right and the source unchanged.
void expect_packed_move_right(gdap_comm* comm, int rank, int nranks, const char* refused, const std::string& what,
                              rt::Report& report) {
  OneMove move(comm, rank, nranks, what, report);
  const std::vector<unsigned char> src_before = move.src.image(), want = move.expected(rank, nranks, true);
  setenv("GDAP_MPI_EXCHANGE", "cma", 1);
  setenv("GDAP_CMA_PACK_BELOW", "1099511627776", 1);
  if (refused != nullptr) setenv("GDAP_TEST_CMA_REFUSED", refused, 1);
  const gdap_status status = move.run();
  unsetenv("GDAP_TEST_CMA_REFUSED");
  unsetenv("GDAP_CMA_PACK_BELOW");
  unsetenv("GDAP_MPI_EXCHANGE");
  if (status != GDAP_SUCCESS) report.fail(rt::cat(what, ": got ", gdap_status_string(status), " (", gdap_last_error(), ")"));
  rt::expect_image(move.dst, want, move.f64, what + ": the destination is wrong", report);
  rt::expect_image(move.src, src_before, move.f64, what + ": the source changed", report);
}

// Rule: packed messages are unpacked from the senders' pack segments, never read with
// process_vm_readv: with every message packed and every rank's reads refused
// (GDAP_TEST_CMA_REFUSED=read), the move still succeeds on every rank and is right.
void run_packs_mapped_not_read(gdap_comm* comm, int rank, int nranks, rt::Report& report) {
  expect_packed_move_right(comm, rank, nranks, "read", rt::cat("every message packed, every read refused, seen by rank ", rank),
                           report);
}

// Rule: a bad GDAP_CMA_PACK_TO (where senders keep their pack buffers) on rank `bad` is refused
// there before the ranks agree, naming the variable and value: `bad` gets GDAP_ERR_INVALID_ARGUMENT,
// every other rank GDAP_ERR_REMOTE naming it, and no section changes.
void run_bad_pack_to(gdap_comm* comm, int rank, int nranks, int bad, const char* value, rt::Report& report) {
  expect_cma_refusal(comm, rank, nranks, bad,
                     {"GDAP_CMA_PACK_TO", value, GDAP_ERR_INVALID_ARGUMENT,
                      {rt::cat("GDAP_CMA_PACK_TO='", value, "': not one of segment, heap")}, rt::cat("rank ", bad), true},
                     report);
}

// Rule: GDAP_CMA_PACK_BELOW must be a whole number of bytes in decimal digits alone, not negative (said so). Set to `value` on rank `bad` alone, it
// is refused there (GDAP_ERR_INVALID_ARGUMENT naming the variable and value) and every other rank
// fails GDAP_ERR_REMOTE naming `bad`, in the agreement: nothing moves.
void run_bad_pack_below(gdap_comm* comm, int rank, int nranks, int bad, const char* value, rt::Report& report) {
  expect_cma_refusal(comm, rank, nranks, bad,
                     {"GDAP_CMA_PACK_BELOW", value, GDAP_ERR_INVALID_ARGUMENT,
                      {rt::cat("GDAP_CMA_PACK_BELOW='", value, "': ",
                               value[0] == '-' ? "negative (bytes >= 0; 0: never pack)"
                                               : "not a whole number of bytes from 0 to 9223372036854775807 (0: never pack)")},
                      rt::cat("rank ", bad), true},
                     report);
}

// Rule: a bad GDAP_CMA_ORDER (how a receiver orders its mapped and local copies) on rank `bad` is
// refused there before the ranks agree, naming the variable and value: `bad` gets
// GDAP_ERR_INVALID_ARGUMENT, every other rank GDAP_ERR_REMOTE naming it, and no section changes.
void run_bad_cma_order(gdap_comm* comm, int rank, int nranks, int bad, const char* value, rt::Report& report) {
  expect_cma_refusal(comm, rank, nranks, bad,
                     {"GDAP_CMA_ORDER", value, GDAP_ERR_INVALID_ARGUMENT,
                      {rt::cat("GDAP_CMA_ORDER='", value, "': not one of sweep, senders")}, rt::cat("rank ", bad), true},
                     report);
}

// Rule: a sender whose packing fails (GDAP_TEST_CMA_REFUSED=pack on rank `bad`, as if out of
// memory; the move's 16-byte runs are packed) stops every rank before anything is read: `bad` gets
// GDAP_ERR_NO_MEMORY, every other rank GDAP_ERR_REMOTE naming it, the step, its status and its
// cause, and no section changes.
void run_failed_pack(gdap_comm* comm, int rank, int nranks, int bad, rt::Report& report) {
  expect_cma_refusal(comm, rank, nranks, bad,
                     {"GDAP_TEST_CMA_REFUSED", "pack", GDAP_ERR_NO_MEMORY, {"out of host memory"},
                      rt::cat("rank ", bad, " failed in packing for the cross-memory attach exchange (GDAP_ERR_NO_MEMORY): out of host memory"), true},
                     report);
}

// Rule: a receiver that cannot map a sender's segment (GDAP_TEST_CMA_REFUSED=map on rank `bad`,
// every source in shared memory, as if shm_open were refused) fails GDAP_ERR_COMM naming the
// sender, segment and errno; every other rank GDAP_ERR_REMOTE naming `bad`, the step (mapping, not
// packing, which they used to be told), its status and its cause; no source changes.
void run_failed_map(gdap_comm* comm, int rank, int nranks, int bad, rt::Report& report) {
  expect_cma_refusal(comm, rank, nranks, bad,
                     {"GDAP_TEST_CMA_REFUSED", "map", GDAP_ERR_COMM,
                      {"shared-memory segment '/gdap-", "cannot be mapped", rt::cat("errno ", EACCES)},
                      rt::cat("rank ", bad, " failed in mapping its peers' shared-memory segments for the cross-memory attach exchange "
                              "(GDAP_ERR_COMM): shared-memory segment '/gdap-"), false, rt::Storage::shm},
                     report);
}

// Rule: a receiver that cannot map its senders' pack segments (GDAP_TEST_CMA_REFUSED=map on rank
// `bad`, every message packed into segments, as if /proc refused the open) reads the packed bytes
// from the senders' own mappings with process_vm_readv instead: every rank succeeds and every
// element is right. (It used to fail the move on every rank.) A fresh communicator, so that the
// receiver maps its senders' segments in this call, not in the world's earlier ones.
void run_pack_map_refused(int rank, int nranks, int bad, rt::Report& report) {
  const OwnComm own(report);
  expect_packed_move_right(own.get(), rank, nranks, rank == bad ? "map" : nullptr,
                           rt::cat("pack segments unmappable on rank ", bad, ", seen by rank ", rank), report);
}

// Rule: where a sender's pack segment cannot be opened (GDAP_TEST_CMA_REFUSED=unmappable on rank
// `bad`) and its readers' process_vm_readv fails too (GDAP_TEST_CMA_REFUSED=read on the others),
// those readers fail GDAP_ERR_COMM naming `bad`, its pid, the read's errno and the settings that
// avoid mapping; every other rank (`bad` too) GDAP_ERR_REMOTE quoting one of them; no rank waits.
void run_pack_unreadable(gdap_comm* comm, int rank, int nranks, int bad, rt::Report& report) {
  const std::string what = rt::cat("pack segment unmappable and unreadable on rank ", bad, ", seen by rank ", rank);
  OneMove move(comm, rank, nranks, what, report);
  int bad_pid = static_cast<int>(getpid());
  MPI_Bcast(&bad_pid, 1, MPI_INT, bad, MPI_COMM_WORLD);
  setenv("GDAP_MPI_EXCHANGE", "cma", 1);
  setenv("GDAP_CMA_PACK_BELOW", "1099511627776", 1);
  setenv("GDAP_TEST_CMA_REFUSED", rank == bad ? "unmappable" : "read", 1);
  const gdap_status status = move.run();
  unsetenv("GDAP_TEST_CMA_REFUSED");
  unsetenv("GDAP_CMA_PACK_BELOW");
  unsetenv("GDAP_MPI_EXCHANGE");
  const std::string text = gdap_last_error();
  const bool reader = status == GDAP_ERR_COMM && rank != bad;
  int readers = reader ? 1 : 0, all_readers = 0;
  MPI_Allreduce(&readers, &all_readers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (all_readers == 0) report.fail(rt::cat(what, ": no rank failed GDAP_ERR_COMM"));
  if (!reader && status != GDAP_ERR_REMOTE) {
    report.fail(rt::cat(what, ": got ", gdap_status_string(status), " (", text, "), want GDAP_ERR_COMM on a reader "
                        "or GDAP_ERR_REMOTE"));
  }
  const std::vector<std::string> says = {rt::cat("rank ", bad, "'s pack segment '/proc/", bad_pid, "/fd/"),
                                         "it is no longer open", rt::cat("(pid ", bad_pid, ")"), rt::cat("errno ", EPERM),
                                         "GDAP_CMA_PACK_TO=heap or GDAP_MPI_EXCHANGE=p2p"};
  for (const std::string& s : says) {
    if (!rt::contains(text, s)) report.fail(rt::cat(what, ": the error does not say '", s, "': ", text));
  }
}

// Rule: a receiver refused its senders' pack segments whose senders are gone
// (GDAP_TEST_CMA_REFUSED=map-gone on rank `bad`: their probe words taken as not read back) does not
// read where they were: it fails GDAP_ERR_COMM naming the segment, the sender and its pid; every
// other rank GDAP_ERR_REMOTE naming `bad` and the mapping step; no section changes. A fresh
// communicator, as in run_pack_map_refused.
void run_pack_peer_gone(int rank, int nranks, int bad, rt::Report& report) {
  const OwnComm own(report);
  setenv("GDAP_CMA_PACK_BELOW", "1099511627776", 1);
  expect_cma_refusal(own.get(), rank, nranks, bad,
                     {"GDAP_TEST_CMA_REFUSED", "map-gone", GDAP_ERR_COMM,
                      {"shared-memory segment '/proc/", "cannot be mapped: open failed", rt::cat("errno ", EACCES),
                       "nor can its pack buffer be read instead: rank ", ") is gone"},
                      rt::cat("rank ", bad, " failed in mapping its peers' shared-memory segments for the cross-memory attach "
                              "exchange (GDAP_ERR_COMM): shared-memory segment '/proc/"), true},
                     report);
  unsetenv("GDAP_CMA_PACK_BELOW");
}

// How many of this process's mappings are of pack segments (memfds named gdap-cma-pack): its own
// and its peers'.
int pack_mappings() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) count += line.find("gdap-cma-pack") != std::string::npos;
  return count;
}

// One packed move of `length` elements on `comm` (its cyclic pairs: short runs, packed), checked
// element by element; then whether this process maps `want` more pack segments than `baseline`.
void expect_pack_mappings(gdap_comm* comm, int rank, int nranks, int64_t length, int baseline, int want,
                          const std::string& what, rt::Report& report) {
  OneMove move(comm, rank, nranks, what, report, rt::Storage::created, nullptr, length);
  const std::vector<unsigned char> want_image = move.expected(rank, nranks, true);
  if (move.run() != GDAP_SUCCESS) return report.fail(rt::cat(what, ": gdap_redistribute: ", gdap_last_error()));
  rt::expect_image(move.dst, want_image, move.f64, what + ": the destination is wrong", report);
  const int mapped = pack_mappings() - baseline;
  if (mapped != want) report.fail(rt::cat(what, ": ", mapped, " pack segments mapped, want ", want));
}

// Rule: a receiver keeps no stale pack segment of a peer mapped, nor a sender an idle one. While
// every sender's pack buffer grows on each call, each rank maps its own segment and each peer's
// latest one (nranks in all) and none older; once GDAP_CMA_PACK_TO=heap, none at once; back to
// segments, nranks again. (Older ones used to stay mapped for 4 more calls, their reserved pages
// held, and an idle segment until the communicator went.) A fresh communicator; the others' are idle.
void run_pack_segments_dropped(int rank, int nranks, rt::Report& report) {
  const int baseline = pack_mappings();
  {
    const OwnComm own(report);
    setenv("GDAP_MPI_EXCHANGE", "cma", 1);
    for (int64_t call = 1; call <= 4; ++call) {
      expect_pack_mappings(own.get(), rank, nranks, 2048 * nranks * call, baseline, nranks,
                           rt::cat("pack buffers grown ", call, " times, rank ", rank), report);
    }
    setenv("GDAP_CMA_PACK_TO", "heap", 1);
    expect_pack_mappings(own.get(), rank, nranks, 2048 * nranks, baseline, 0,
                         rt::cat("pack buffers moved to the heap, rank ", rank), report);
    unsetenv("GDAP_CMA_PACK_TO");
    expect_pack_mappings(own.get(), rank, nranks, 2048 * nranks, baseline, nranks,
                         rt::cat("pack buffers back in segments, rank ", rank), report);
    unsetenv("GDAP_MPI_EXCHANGE");
  }
  if (pack_mappings() != baseline) report.fail(rt::cat("rank ", rank, ": pack segments left mapped after gdap_comm_destroy"));
}

// A shared-memory name of this test's own, per case and rank.
std::string segment_name(const char* what, int rank) {
  return rt::cat("/gdap-test-redistribute-", what, "-", rank, "-", static_cast<long>(getpid()));
}

// Rule: a source segment destroyed and re-created under its name between two calls of one plan
// (every rank's, at the same address or not) is read anew: the second call moves the new
// contents, not those of the mapping kept since the first (the same name, another inode).
void run_recreated_segment(gdap_comm* comm, int rank, int nranks, rt::Report& report) {
  const std::string name = segment_name("recreated", rank), what = rt::cat("segments re-created between calls, rank ", rank);
  OneMove move(comm, rank, nranks, what, report);
  move.make_source(rt::Storage::shm, name.c_str(), rank, nranks, false, what, report);  // every element 42
  const std::vector<unsigned char> before = move.dst.image(), first = move.expected(rank, nranks, false),
                                   second = move.expected(rank, nranks, true);
  setenv("GDAP_MPI_EXCHANGE", "cma", 1);
  for (int call = 1; call <= 2; ++call) {
    if (call == 2) move.make_source(rt::Storage::shm, name.c_str(), rank, nranks, true, what, report);
    move.dst.restore(before);
    if (move.run() != GDAP_SUCCESS) {
      report.fail(rt::cat(what, ", call ", call, ": gdap_redistribute: ", gdap_last_error()));
      continue;
    }
    rt::expect_image(move.dst, call == 1 ? first : second, move.f64, rt::cat(what, ", call ", call), report);
  }
  unsetenv("GDAP_MPI_EXCHANGE");
}

// What rank `bad` does to its source's segment before the first call that maps it, and what
// every rank reading that segment must fail with (the others fail GDAP_ERR_REMOTE naming one of them).
struct SpoiltSegment {
  const char* name;
  gdap_status readers_get;
  const char* readers_say;
};
constexpr SpoiltSegment kSpoiltSegments[] = {
    {"unlinked", GDAP_ERR_COMM, "no longer exists"},           // shm_unlink by its owner
    {"replaced", GDAP_ERR_COMM, "re-created or resized"},      // unlinked, another file of its size made under its name
    {"replaced-by-fifo", GDAP_ERR_COMM, "re-created or resized"},  // unlinked, a FIFO made under its name (no hang)
    {"replaced-by-symlink", GDAP_ERR_COMM, "shm_open failed"},      // unlinked, a symlink to a file of its size
    {"published-out-of-bounds", GDAP_ERR_INTERNAL, "outside it"}};  // GDAP_TEST_CMA_REFUSED=bounds: published at its end

// Spoils this rank's segment `name` of `bytes` as `how` says; returns the replacement's descriptor or -1.
int spoil_segment(const SpoiltSegment& how, const std::string& name, size_t bytes) {
  if (std::string(how.name) == "published-out-of-bounds") {
    setenv("GDAP_TEST_CMA_REFUSED", "bounds", 1);
    return -1;
  }
  shm_unlink(name.c_str());
  const std::string path = "/dev/shm" + name, kind = how.name;
  if (kind == "replaced-by-fifo" && mkfifo(path.c_str(), 0600) != 0) std::perror("mkfifo");
  if (kind == "replaced-by-symlink") {
    const std::string target = path + ".target";
    const int t = open(target.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (t < 0 || ftruncate(t, static_cast<off_t>(bytes)) != 0) std::perror("symlink target");
    if (t >= 0) close(t);
    if (symlink(target.c_str(), path.c_str()) != 0) std::perror("symlink");
  }
  if (kind != "replaced") return -1;
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) != 0) std::perror("ftruncate");
  return fd;
}

// Rule: a spoilt segment fails every rank cleanly, no hang: the readers of rank `bad`'s segment
// with `readers_get` naming `bad`, the segment and why; every other rank with GDAP_ERR_REMOTE;
// at least one rank reads it. The communicator stays usable (run_refusals' last case).
void run_spoilt_segment(gdap_comm* comm, int rank, int nranks, int bad, const SpoiltSegment& how, rt::Report& report) {
  const std::string name = segment_name(how.name, rank), what = rt::cat("segment ", how.name, " on rank ", bad, ", seen by rank ", rank);
  OneMove move(comm, rank, nranks, what, report, rt::Storage::shm, name.c_str());
  const int replacement = rank == bad ? spoil_segment(how, name, move.src.image().size()) : -1;
  setenv("GDAP_MPI_EXCHANGE", "cma", 1);
  const gdap_status status = move.run();
  unsetenv("GDAP_MPI_EXCHANGE");
  unsetenv("GDAP_TEST_CMA_REFUSED");
  const std::string text = gdap_last_error();
  if (replacement >= 0) {
    close(replacement);
    shm_unlink(name.c_str());
  }
  if (rank == bad && std::string(how.name).rfind("replaced-by-", 0) == 0) {  // the FIFO or symlink and its target
    unlink(("/dev/shm" + name).c_str());
    unlink(("/dev/shm" + name + ".target").c_str());
  }
  const bool reader = status == how.readers_get;
  int readers = reader ? 1 : 0, all_readers = 0;
  MPI_Allreduce(&readers, &all_readers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (all_readers == 0) report.fail(rt::cat(what, ": no rank failed ", gdap_status_string(how.readers_get)));
  if (!reader && status != GDAP_ERR_REMOTE) {
    report.fail(rt::cat(what, ": got ", gdap_status_string(status), " (", text, "), want ",
                        gdap_status_string(how.readers_get), " or GDAP_ERR_REMOTE"));
  }
  const std::vector<std::string> says = reader ? std::vector<std::string>{rt::cat("rank ", bad), how.readers_say}
                                               : std::vector<std::string>{"failed in ", "for the cross-memory attach exchange (", how.readers_say};
  for (const std::string& s : says) {
    if (!rt::contains(text, s)) report.fail(rt::cat(what, ": the error does not say '", s, "': ", text));
  }
}

// Rank 0's text, on every rank.
std::string rank0_text(const std::string& mine) {
  int length = static_cast<int>(mine.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string text = mine;
  text.resize(static_cast<size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

void run_refusals(gdap_comm* world, int rank, int nranks, rt::Report& report) {
  const int bad = nranks - 1;
  for (rt::Spoil spoil : rt::kSpoils) rt::run_refused(world, rank, nranks, spoil, bad, report);
  for (bool overlap : {true, false}) {
    const std::string text = rt::run_bad_view(world, rank, nranks, overlap, bad, report);
    if (text != rank0_text(text)) report.fail(rt::cat("bad view: rank ", rank, " says '", text, "', rank 0 otherwise"));
  }
  rt::run_unusable_view(world, rank, nranks, 0, report);
  run_mixed_exchange(world, rank, nranks, nranks - 1, "p2p", nullptr, report);
  run_mixed_exchange(world, rank, nranks, nranks - 1, "cma", "p2p", report);
  run_mixed_exchange(world, rank, nranks, nranks - 1, "alltoallv", "p2p", report);
  run_mixed_exchange(world, rank, nranks, nranks - 1, "alltoallv", "datatype", report);
  run_mixed_exchange(world, rank, nranks, nranks - 1, "p2p", "alltoallv", report);
  run_mixed_modes_move(world, rank, nranks, nranks - 1, "datatype", "p2p", report);
  run_failed_read(world, rank, nranks, nranks - 1, report);
  // Decimal digits alone (core/setting.hpp): the empty string used to mean unset.
  for (const char* value : {"4k", "-1", "99999999999999999999", "", "1e3", "12abc", "1180591620717411303424", " 5", "+5"}) {
    run_bad_pack_below(world, rank, nranks, nranks - 1, value, report);
  }
  for (const char* value : {"Sweep", "rows"}) run_bad_cma_order(world, rank, nranks, nranks - 1, value, report);
  for (const char* value : {"Segment", "shm", "readv", ""}) run_bad_pack_to(world, rank, nranks, nranks - 1, value, report);
  run_packs_mapped_not_read(world, rank, nranks, report);
  run_failed_pack(world, rank, nranks, nranks - 1, report);
  run_failed_map(world, rank, nranks, nranks - 1, report);
  run_pack_map_refused(rank, nranks, nranks - 1, report);
  run_pack_unreadable(world, rank, nranks, nranks - 1, report);
  run_pack_peer_gone(rank, nranks, nranks - 1, report);
  run_pack_segments_dropped(rank, nranks, report);
  run_recreated_segment(world, rank, nranks, report);
  for (const SpoiltSegment& how : kSpoiltSegments) run_spoilt_segment(world, rank, nranks, nranks - 1, how, report);
  // The refusals leave the communicator usable.
  rt::run_case(rt::cases(nranks)[0], 0, rank, {world, world, world}, report);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const auto start = std::chrono::steady_clock::now();
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  rt::Report report;
  gdap_comm* world = nullptr;
  int64_t cases = 0;
  if (gdap_comm_from_mpi(&world, MPI_Comm_c2f(MPI_COMM_WORLD)) != GDAP_SUCCESS) {
    report.fail(rt::cat("gdap_comm_from_mpi: ", gdap_last_error()));
  } else {
    cases = run_table(world, rank, nranks, report);
    cases += run_cma_refused(rank, nranks, report);
    run_refusals(world, rank, nranks, report);
    gdap_comm_destroy(world);
  }
  long long failures = static_cast<long long>(report.failures.size()) + report.dropped, total = 0;
  long long counts[2] = {report.moves, report.elements}, sums[2] = {};
  MPI_Allreduce(&failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(counts, sums, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (const std::string& f : report.failures) std::fprintf(stderr, "[rank %d] %s\n", rank, f.c_str());
  if (report.dropped > 0) {
    std::fprintf(stderr, "[rank %d] ... and %lld more\n", rank, static_cast<long long>(report.dropped));
  }
  if (rank == 0) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d ranks: %lld cases (%zu exchange modes, then cma with one rank refused), %lld redistributions, "
                "%lld elements checked, "
                "%lld failures, %.2f s\n",
                nranks, static_cast<long long>(cases), std::size(kModes), sums[0], sums[1], total, seconds);
  }
  MPI_Finalize();
  return total == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
