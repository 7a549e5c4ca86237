// The MPI engine, for host-accessible sections. Per wire message (program.hpp): one that is a
// contiguous run of the section goes straight from or into it; one whose runs are long enough
// (the program's Style::typed_run) goes as an MPI datatype over the section, which MPI packs and
// unpacks in its own pipeline (one copy fewer than a buffer of ours; halos, bench/mpi/halo_mpi.c);
// any other is packed into (unpacked from) one staging buffer per direction. Receives are posted
// first, each send leaves as soon as it is packed, and the local copies run while messages are in
// flight. Every wait is bounded by the communicator's timeout (MpiComm::wait).
//
// GDAP_MPI_EXCHANGE picks the exchange, so the choices can be measured side by side (bench/mpi):
//   cma:           ranks of one node read each other's sections (mpi_cma.hpp), one copy per byte,
//                  or each other's pack buffers where a sender's runs are short (GDAP_CMA_PACK_BELOW);
//                  point-to-point where they cannot (ranks on several nodes, reads refused), and for
//                  bound exchanges (no agreement per start). The default for redistributions
//                  (Style::cma_default): at least as fast as p2p in every case of bench/mpi on one
//                  node; not for halo exchanges, where it lost in half the cases (docs/PERFORMANCE.md);
//   p2p:           nonblocking point-to-point as above, the default otherwise;
//   alltoallv:     everything packed, one MPI_Alltoallv;
//   datatype:      nothing packed: each wire message is an MPI derived datatype over the section.
// A bound exchange keeps the mode read at its binding, where the ranks agree on it as run()'s do.
// Reductions are MPI's own: MPI_Iallreduce and MPI_Ireduce_scatter_block, with MPI's ops except
// min and max of floats, whose NaN handling MPI leaves open (Open MPI's kept whichever side its
// comparison picked, so the answer depended on which rank held a NaN): those use ops of ours
// where a NaN wins (core/nan_order.hpp). A broadcast's owner
// packs its part into its buffer once and sends the buffer to every receiver, who receives it
// whole; a step's messages fly while the caller works on the previous step.
#include "exchange/engines.hpp"
#include "exchange/mpi_cma.hpp"

#include "array/array.hpp"
#include "comm/mpi.hpp"
#include "core/error.hpp"
#include "core/setting.hpp"
#include "core/nan_order.hpp"
#include "exchange/reduce_names.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gdap::exchange {
namespace {

enum class Mode { p2p, alltoallv, datatype, cma };

// Whether the build has cross-memory attach, which the cma exchange needs.
#ifdef __linux__
constexpr bool kHaveCma = true;
#else
constexpr bool kHaveCma = false;
#endif

// GDAP_MPI_EXCHANGE, or the default: cma for the programs whose style asks for it where the build
// has cross-memory attach (it falls back to p2p at run time where the ranks cannot read each
// other), p2p otherwise.
Mode exchange_mode(const Style& style) {
  constexpr Mode modes[] = {Mode::p2p, Mode::alltoallv, Mode::datatype, Mode::cma};
  const std::optional<size_t> chosen = choice_setting("GDAP_MPI_EXCHANGE", {"p2p", "alltoallv", "datatype", "cma"});
  if (!chosen) return kHaveCma && style.cma_default ? Mode::cma : Mode::p2p;
  return modes[*chosen];
}

// MPI counts are int: larger messages go as several pieces (MPI keeps their order per pair). A
// datatype goes as one message, so only wire messages of at most one piece become datatypes: both
// ends then send and receive one in the same number of messages, whichever way each moves its bytes.
constexpr int64_t kPiece = int64_t{1} << 30;

// An MPI datatype freed with its owner (after MPI_Finalize there is nothing left to free). MPI lets
// messages still pending with a freed datatype finish.
class OwnedType {
 public:
  OwnedType() = default;
  OwnedType(OwnedType&& o) noexcept : type_(std::exchange(o.type_, MPI_DATATYPE_NULL)) {}
  OwnedType& operator=(OwnedType&& o) noexcept {
    std::swap(type_, o.type_);
    return *this;
  }
  ~OwnedType() {
    if (type_ == MPI_DATATYPE_NULL) return;  // most routes have none
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(&type_);
  }
  MPI_Datatype get() const { return type_; }
  MPI_Datatype* out() { return &type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// One wire message's copies between its section and the packed buffer, and how it travels.
struct Route {
  int peer;
  int64_t packed_offset;  // bytes into the staging buffer (the copies' packed side already counts it)
  int64_t bytes;
  std::vector<Copy2D> copies;
  bool direct;     // one contiguous run: no staging
  OwnedType type;  // over the section, or none: staged (or direct)
};

// The routes of a program for sections of given strides: they depend on nothing else, so a rank
// keeps them between calls with the same program and strides (Cache::recent: a few programs).
struct Routes {
  std::vector<int64_t> key;
  std::vector<Route> sends, recvs;
  std::vector<Copy2D> local;
};

// A host buffer left uninitialised (the calls fill what they read), kept alive by an exchange
// abandoned at a timeout (MpiComm::wait keeps the pointer) after a larger one replaced it.
struct StagingBuffer {
  std::shared_ptr<char[]> data;
  int64_t bytes = 0;
  // At least `need` bytes: the kept buffer, or a larger one in its place.
  char* at_least(int64_t need) {
    if (need > bytes || data == nullptr) {
      data.reset();  // before the larger one (an abandoned exchange may still hold it)
      bytes = 0;
      data = std::make_shared_for_overwrite<char[]>(static_cast<size_t>(std::max<int64_t>(need, 1)));
      bytes = need;
    }
    return data.get();
  }
};

// The staging buffers of every program of a kind on a communicator, one per direction, grown to
// the largest program's need: a communicator's calls run one at a time.
struct Staging final : Scratch {
  StagingBuffer send, recv;
};

// The wire message's bytes in packed order over the section (`copies`' source side when sending,
// their destination when receiving), as one MPI datatype; none where a buffer of ours does better
// or MPI cannot take it: runs under `typed_run` bytes on average, more than kPiece bytes, or rows
// at pitch 0 (a receive type must not overlap itself).
OwnedType section_type(const std::vector<Copy2D>& copies, int64_t bytes, bool send, int64_t typed_run) {
  OwnedType type;
  int64_t rows = 0;
  for (const Copy2D& c : copies) {
    rows += c.rows;
    if (c.rows > 1 && (send ? c.src_pitch : c.dst_pitch) == 0) return type;
  }
  if (typed_run <= 0 || rows == 0 || bytes / rows < typed_run || bytes > kPiece) return type;
  std::vector<int> ones(copies.size(), 1);
  std::vector<MPI_Aint> at;
  std::vector<OwnedType> runs(copies.size());
  std::vector<MPI_Datatype> handles;
  for (size_t i = 0; i < copies.size(); ++i) {
    const Copy2D& c = copies[i];
    check_mpi(MPI_Type_create_hvector(static_cast<int>(c.rows), static_cast<int>(c.row_bytes), send ? c.src_pitch : c.dst_pitch,
                                      MPI_BYTE, runs[i].out()),
              "MPI_Type_create_hvector");
    handles.push_back(runs[i].get());
    at.push_back(send ? c.src : c.dst);
  }
  check_mpi(MPI_Type_create_struct(static_cast<int>(handles.size()), ones.data(), at.data(), handles.data(), type.out()),
            "MPI_Type_create_struct");
  check_mpi(MPI_Type_commit(type.out()), "MPI_Type_commit");
  return type;
}

std::vector<Route> routes(const Program& program, Part part, std::span<const int64_t> strides) {
  const bool send = part == Part::send;
  const End section{send ? End::sender : End::receiver, strides};
  const End packed{End::packed, {}};
  const int64_t es = program.element_size();
  std::vector<Route> out;
  for (const Message& m : program.wire(part)) {
    Route r{static_cast<int>(m.peer), m.offset * es, m.elements * es, {}, false, {}};
    if (send) program.copies(m, section, packed, r.copies);
    else program.copies(m, packed, section, r.copies);
    r.direct = single_run(r.copies);
    if (!r.direct) r.type = section_type(r.copies, r.bytes, send, program.style().typed_run);
    out.push_back(std::move(r));
  }
  return out;
}

template <typename Post>
void post_pieces(char* data, int64_t bytes, Post&& post) {
  for (int64_t at = 0; at < bytes; at += kPiece) post(data + at, static_cast<int>(std::min(kPiece, bytes - at)));
}

// Per-peer counts and displacements of the packed buffers (a peer's wire messages lie one after
// another), or false if one exceeds int.
bool alltoallv_counts(const std::vector<Route>& routes, int n, std::vector<int>& counts, std::vector<int>& displs) {
  counts.assign(static_cast<size_t>(n), 0);
  displs.assign(static_cast<size_t>(n), 0);
  std::vector<int64_t> total(static_cast<size_t>(n), 0), first(static_cast<size_t>(n), -1);
  for (const Route& r : routes) {
    const auto p = static_cast<size_t>(r.peer);
    total[p] += r.bytes;
    if (first[p] < 0) first[p] = r.packed_offset;
  }
  for (size_t p = 0; p < total.size(); ++p) {
    if (total[p] > INT_MAX || first[p] > INT_MAX) return false;
    counts[p] = static_cast<int>(total[p]);
    displs[p] = static_cast<int>(std::max<int64_t>(first[p], 0));
  }
  return true;
}

// A derived datatype addressing one wire message's copies in its section: one block per row, at
// byte displacements from the section's base (`source` picks the copies' src or dst side). Rows
// are listed one by one rather than as strided vectors: Open MPI reorders a vector with a
// negative stride (a reversed view), which tests/move caught.
OwnedType message_type(const Route& r, bool source) {
  std::vector<MPI_Aint> displacements;
  int64_t row_bytes = 0;
  bool uniform = true;
  for (const Copy2D& c : r.copies) {
    if (row_bytes != 0 && c.row_bytes != row_bytes) uniform = false;
    row_bytes = c.row_bytes;
    for (int64_t k = 0; k < c.rows; ++k) displacements.push_back((source ? c.src : c.dst) + k * (source ? c.src_pitch : c.dst_pitch));
  }
  if (row_bytes > INT_MAX || displacements.size() > static_cast<size_t>(INT_MAX)) {
    fail(GDAP_ERR_OVERFLOW, "a message of {} runs of {} bytes exceeds an MPI count", displacements.size(), row_bytes);
  }
  OwnedType type;
  const auto n = static_cast<int>(displacements.size());
  if (uniform) {
    check_mpi(MPI_Type_create_hindexed_block(n, static_cast<int>(row_bytes), displacements.data(), MPI_BYTE, type.out()),
              "MPI_Type_create_hindexed_block");
  } else {
    std::vector<int> lengths;
    for (const Copy2D& c : r.copies) lengths.insert(lengths.end(), static_cast<size_t>(c.rows), static_cast<int>(c.row_bytes));
    check_mpi(MPI_Type_create_hindexed(n, lengths.data(), displacements.data(), MPI_BYTE, type.out()), "MPI_Type_create_hindexed");
  }
  check_mpi(MPI_Type_commit(type.out()), "MPI_Type_commit");
  return type;
}

MPI_Datatype mpi_type(gdap_dtype t) {
  return name_of(t, TypeNames<MPI_Datatype>{MPI_FLOAT, MPI_DOUBLE, MPI_INT8_T, MPI_UINT8_T, MPI_INT32_T, MPI_UINT32_T,
                                            MPI_INT64_T, MPI_UINT64_T});
}

// inout[i] = max (or min) of in[i] and inout[i], NaN winning: an MPI_User_function for float and double.
template <bool Max>
void nan_extremum(void* in, void* inout, int* len, MPI_Datatype* type) {
  auto each = [&](auto* a, const auto* b) {
    for (int i = 0; i < *len; ++i) a[i] = Max ? nan_max(b[i], a[i]) : nan_min(b[i], a[i]);
  };
  if (*type == MPI_FLOAT) return each(static_cast<float*>(inout), static_cast<const float*>(in));
  each(static_cast<double*>(inout), static_cast<const double*>(in));
}

// inout[i] += in[i] modulo 256, for int8 and uint8 alike (two's complement: the same bits). Open
// MPI 4.1's op/avx adds 8- and 16-bit integers with saturating SIMD adds once a buffer holds 16 or
// more (open-mpi/ompi#8045, wontfix): 3 x 100 gave 127, where NumPy, the group and NCCL give 44.
void wrapping_byte_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<uint8_t*>(inout);
  const auto* b = static_cast<const uint8_t*>(in);
  for (int i = 0; i < *len; ++i) a[i] = static_cast<uint8_t>(a[i] + b[i]);
}

// An MPI op of gdap's own, made once per process (MPI_Op_create is local, not collective) and kept
// until it ends: MPI frees it at MPI_Finalize.
template <MPI_User_function* Function>
MPI_Op own_op() {
  static const MPI_Op made = [] {
    MPI_Op op = MPI_OP_NULL;
    check_mpi(MPI_Op_create(Function, 1, &op), "MPI_Op_create");
    return op;
  }();
  return made;
}

// MPI's built-in op, except where it would differ from the other engines: min and max of floats
// (NaN wins) and sums of 8-bit integers (they wrap). op/avx's 32- and 64-bit sums and its products
// wrap as elsewhere (Open MPI 4.1.4); gdap reduces no 16-bit integer. Checked by
// tests/move/small_int_sums_mpi.cpp.
MPI_Op mpi_op(const Reduce& r) {
  const bool extremum = r.op == GDAP_REDUCE_MIN || r.op == GDAP_REDUCE_MAX;
  if (extremum && r.dtype.code == GDAP_DTYPE_FLOAT) {
    return r.op == GDAP_REDUCE_MIN ? own_op<&nan_extremum<false>>() : own_op<&nan_extremum<true>>();
  }
  if (r.op == GDAP_REDUCE_SUM && r.dtype.code != GDAP_DTYPE_FLOAT && r.dtype.bits == 8) return own_op<&wrapping_byte_sum>();
  return name_of(r.op, OpNames<MPI_Op>{MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX});
}

class MpiBroadcasts final : public Broadcasts {
 public:
  MpiBroadcasts(MpiComm& comm, std::vector<const gdap_array*> sections) : mpi_(comm), sections_(std::move(sections)) {
    mpi_.check_usable();
  }
  void start(std::span<const Move> moves, int slot) override;
  void wait(int slot) override;
  void end() override {}

 private:
  void post(char* buffer, int64_t bytes, int64_t peer, int tag, bool send, int slot);
  MpiComm& mpi_;
  std::vector<const gdap_array*> sections_;
  std::vector<MPI_Request> requests_[2];
  std::vector<std::shared_ptr<void>> keep_[2];  // the slot's buffers, for an operation abandoned at a timeout
};

void MpiBroadcasts::post(char* buffer, int64_t bytes, int64_t peer, int tag, bool send, int slot) {
  if (bytes > INT_MAX) {
    fail(GDAP_ERR_UNSUPPORTED, "a broadcast of {} bytes exceeds MPI's count range; use smaller steps (gemm: a "
         "smaller panel_width)", bytes);
  }
  MPI_Request r = MPI_REQUEST_NULL;
  const int n = static_cast<int>(bytes), to = static_cast<int>(peer);
  if (send) check_mpi(MPI_Isend(buffer, n, MPI_BYTE, to, tag, mpi_.handle(), &r), "MPI_Isend");
  else check_mpi(MPI_Irecv(buffer, n, MPI_BYTE, to, tag, mpi_.handle(), &r), "MPI_Irecv");
  requests_[slot].push_back(r);
}

void MpiBroadcasts::start(std::span<const Move> moves, int slot) {
  requests_[slot].clear();
  keep_[slot].clear();
  for (const Move& m : moves) {
    const Program& p = *m.program;
    const int64_t es = p.element_size();
    const int tag = p.style().tag;
    if (!p.messages(Part::local).empty()) {
      const gdap_array& from = *sections_[m.section];
      run_host_copies(p.part_copies(Part::local, End{End::sender, from.section.strides}, End{End::packed, {}}),
                      static_cast<const char*>(from.data()), m.buffer);
    }
    for (const Message& sent : p.messages(Part::send)) post(m.buffer, sent.elements * es, sent.peer, tag, true, slot);
    for (const Message& got : p.messages(Part::recv)) post(m.buffer, got.elements * es, got.peer, tag, false, slot);
    keep_[slot].push_back(m.keep);
  }
}

void MpiBroadcasts::wait(int slot) {
  if (requests_[slot].empty()) return;
  mpi_.wait(requests_[slot], "a broadcast (gemm panels)", true,
            std::make_shared<std::vector<std::shared_ptr<void>>>(keep_[slot]));
  requests_[slot].clear();
}

// One call's staging buffers (Staging's), held by the call and by an exchange it abandons.
struct Buffers {
  std::shared_ptr<char[]> send, recv;
};

class MpiEngine final : public Engine {
 public:
  explicit MpiEngine(MpiComm& comm) : Engine(comm), mpi_(comm) {}

  void run(const Program& program, const Sections& sections, const Agreement& agreement) override;
  std::unique_ptr<Bound> bind(const Program& program, const Sections& sections, const Agreement& agreement) override;
  void start(Bound& bound) override;
  void check_section(const gdap_array& a, std::string_view which, std::string_view operation, bool reduce) const override;
  void allreduce(void* data, int64_t count, const Reduce& r) override;
  void reduce_scatter(const void* send, void* recv, int64_t segment, const Reduce& r) override;
  int64_t reduce_scatter_in_place(void* buffer, int64_t segment, const Reduce& r) override;
  std::unique_ptr<Broadcasts> broadcasts(const BroadcastSetup& setup) override {
    if (setup.memory == Memory::device) {
      fail(GDAP_ERR_UNSUPPORTED, "device sections need an in-process group or NCCL communicator (MPI moves host memory)");
    }
    return std::make_unique<MpiBroadcasts>(mpi_, setup.sections);
  }

 private:
  Routes& routes_for(const Program& program, const Sections& sections);
  Buffers buffers_for(const Program& program);
  void exchange(Mode mode, const Program& program, const Sections& sections, const Routes& s);
  void p2p(const Program& program, const Sections& sections, const Routes& s, const Buffers& b);
  void alltoallv(const Program& program, const Sections& sections, const Routes& s, const Buffers& b);
  void typed(const Program& program, const Sections& sections, const Routes& s);

  MpiComm& mpi_;
};

Routes& MpiEngine::routes_for(const Program& program, const Sections& sections) {
  std::vector<int64_t> key{static_cast<int64_t>(program.serial())};
  for (const gdap_array* a : {sections.src, static_cast<const gdap_array*>(sections.dst)}) {
    if (a) key.insert(key.end(), a->section.strides.begin(), a->section.strides.end());
    key.push_back(-1);
  }
  return comm_.cache.recent<Routes>(program.style().name, [&](const Routes& r) { return r.key == key; }, [&] {
    auto made = std::make_unique<Routes>();
    if (sections.src) made->sends = routes(program, Part::send, sections.src->section.strides);
    if (sections.dst) made->recvs = routes(program, Part::recv, sections.dst->section.strides);
    if (sections.src && sections.dst) {
      made->local = program.part_copies(Part::local, End{End::sender, sections.src->section.strides},
                                        End{End::receiver, sections.dst->section.strides});
    }
    made->key = std::move(key);
    return made;
  });
}

// The kind's staging buffers, grown to hold `program`'s packed sends and receives.
Buffers MpiEngine::buffers_for(const Program& program) {
  Staging& s = comm_.cache.get<Staging>(std::string(program.style().name) + ".staging");
  s.send.at_least(program.bytes(Part::send));
  s.recv.at_least(program.bytes(Part::recv));
  return Buffers{s.send.data, s.recv.data};
}

// A mode as one letter of the agreement's share, and back as its name.
char mode_letter(Mode m) { return "PADC"[static_cast<int>(m)]; }
const char* mode_name(char letter) {
  switch (letter) {
    case 'P': return "p2p";
    case 'A': return "alltoallv";
    case 'D': return "datatype";
    default: return "cma";
  }
}

// Which modes move the same messages, so that ranks may mix them: p2p and datatype send and receive
// each wire message as one message either way; alltoallv is one collective call and cma reads
// peers' memory, which every rank must join (but a bound exchange's cma runs point-to-point).
char wire_family(char letter, bool bound) {
  return letter == 'D' || (bound && letter == 'C') ? 'P' : letter;
}

// Throws, naming this rank and the first rank of another family, unless every rank's mode (the
// first letter of its share) moves the same messages as this rank's.
void require_same_family(const std::vector<std::string>& shares, char mine, bool bound, size_t rank) {
  for (size_t r = 0; r < shares.size(); ++r) {
    if (wire_family(shares[r][0], bound) == wire_family(mine, bound)) continue;
    fail(GDAP_ERR_INVALID_ARGUMENT, "the exchange is {} on rank {} but {} on rank {} (GDAP_MPI_EXCHANGE, or this "
         "exchange's default where unset): every rank must pick the same exchange (p2p and datatype may mix)",
         mode_name(mine), rank, mode_name(shares[r][0]), r);
  }
}

// The mode a bound exchange chose at binding: its starts have no agreement to check another.
struct BoundMode final : Scratch {
  explicit BoundMode(Mode m) : mode(m) {}
  Mode mode;
};

// Every rank's mode travels in the agreement (its first letter; the cma mode's share, mpi_cma.hpp,
// follows), so that it costs no extra round and ranks that would wait on exchanges their peers
// never make all fail at once instead.
void MpiEngine::run(const Program& program, const Sections& sections, const Agreement& agreement) {
  Mode mode = Mode::p2p;
  Routes* routes = nullptr;
  const std::vector<std::string> shares = agree_gather(comm_, [&] {
    check_all(program, sections, agreement);
    mode = exchange_mode(program.style());
    if (mode == Mode::cma) return Share{agreement.token, "C" + cma_share(mpi_, program, sections)};
    routes = &routes_for(program, sections);
    return Share{agreement.token, std::string(1, mode_letter(mode))};
  }, agreement.mismatch);
  require_same_family(shares, mode_letter(mode), false, comm_.rank);
  if (mode == Mode::cma) {
    std::vector<std::string> published;
    for (const std::string& s : shares) published.push_back(s.substr(1));
    if (cma_usable(mpi_, published)) return cma_exchange(mpi_, program, sections, published);
    mode = Mode::p2p;
    routes = &routes_for(program, sections);
  }
  exchange(mode, program, sections, *routes);
}

// The mode is read once, here, and travels in the agreement as in run(): a start has no agreement,
// so ranks of different modes (or an environment changed between starts) would otherwise wait out
// their timeout at a start. cma runs point-to-point when bound (no agreement per start).
std::unique_ptr<Bound> MpiEngine::bind(const Program& program, const Sections& sections, const Agreement& agreement) {
  Mode mode = Mode::p2p;
  const std::vector<std::string> shares = agree_gather(comm_, [&] {
    check_all(program, sections, agreement);
    mode = exchange_mode(program.style());
    return Share{agreement.token, std::string(1, mode_letter(mode))};
  }, agreement.mismatch);
  require_same_family(shares, mode_letter(mode), true, comm_.rank);
  auto bound = std::make_unique<Bound>();
  bound->program = &program;
  bound->sections = sections;
  bound->direct = std::make_unique<BoundMode>(mode == Mode::cma ? Mode::p2p : mode);
  return bound;
}

void MpiEngine::start(Bound& bound) {
  mpi_.check_usable();
  exchange(static_cast<const BoundMode&>(*bound.direct).mode, *bound.program, bound.sections,
           routes_for(*bound.program, bound.sections));
}

void MpiEngine::exchange(Mode mode, const Program& program, const Sections& sections, const Routes& s) {
  switch (mode) {
    case Mode::p2p: return p2p(program, sections, s, buffers_for(program));
    case Mode::alltoallv: return alltoallv(program, sections, s, buffers_for(program));
    case Mode::datatype: return typed(program, sections, s);
    case Mode::cma: break;  // run() reads directly; start() passes p2p
  }
}

void MpiEngine::p2p(const Program& program, const Sections& sections, const Routes& s, const Buffers& b) {
  const MPI_Comm comm = mpi_.handle();
  const int tag = program.style().tag;
  const char* src = sections.src ? static_cast<const char*>(sections.src->data()) : nullptr;
  char* dst = sections.dst ? static_cast<char*>(sections.dst->data()) : nullptr;
  char* sent = b.send.get();
  char* received = b.recv.get();
  std::vector<MPI_Request> requests;
  for (const Route& r : s.recvs) {
    if (r.type.get() != MPI_DATATYPE_NULL) {
      check_mpi(MPI_Irecv(dst, 1, r.type.get(), r.peer, tag, comm, &requests.emplace_back()), "MPI_Irecv");
      continue;
    }
    char* into = r.direct ? dst + r.copies[0].dst : received + r.packed_offset;
    post_pieces(into, r.bytes, [&](char* p, int n) {
      check_mpi(MPI_Irecv(p, n, MPI_BYTE, r.peer, tag, comm, &requests.emplace_back()), "MPI_Irecv");
    });
  }
  for (const Route& r : s.sends) {
    if (r.type.get() != MPI_DATATYPE_NULL) {  // MPI only reads the section
      check_mpi(MPI_Isend(src, 1, r.type.get(), r.peer, tag, comm, &requests.emplace_back()), "MPI_Isend");
      continue;
    }
    char* from = sent + r.packed_offset;
    if (r.direct) from = const_cast<char*>(src + r.copies[0].src);  // MPI only reads it
    else run_host_copies(r.copies, src, sent);  // copies hold packed offsets
    post_pieces(from, r.bytes, [&](char* p, int n) {
      check_mpi(MPI_Isend(p, n, MPI_BYTE, r.peer, tag, comm, &requests.emplace_back()), "MPI_Isend");
    });
  }
  run_host_copies(s.local, src, dst);
  mpi_.wait(requests, "the point-to-point exchange", true, std::make_shared<Buffers>(b));
  for (const Route& r : s.recvs) {
    if (!r.direct && r.type.get() == MPI_DATATYPE_NULL) run_host_copies(r.copies, received, dst);
  }
}

void MpiEngine::alltoallv(const Program& program, const Sections& sections, const Routes& s, const Buffers& b) {
  const MPI_Comm comm = mpi_.handle();
  const int n = static_cast<int>(comm_.size);
  // On the heap: an abandoned MPI_Ialltoallv (a rank that never came) may still read them.
  struct Counts {
    std::vector<int> sc, sd, rc, rd;
    int fits = 0;
    Buffers buffers;
  };
  auto c = std::make_shared<Counts>();
  c->buffers = b;
  // Every rank must take the same branch: ask whether any rank's counts overflow.
  c->fits = alltoallv_counts(s.sends, n, c->sc, c->sd) && alltoallv_counts(s.recvs, n, c->rc, c->rd);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, &c->fits, 1, MPI_INT, MPI_MIN, comm, &request), "MPI_Iallreduce");
  mpi_.wait({&request, 1}, "MPI_Iallreduce", false, c);
  if (!c->fits) return p2p(program, sections, s, b);
  const char* src = sections.src ? static_cast<const char*>(sections.src->data()) : nullptr;
  char* dst = sections.dst ? static_cast<char*>(sections.dst->data()) : nullptr;
  for (const Route& r : s.sends) run_host_copies(r.copies, src, b.send.get());
  check_mpi(MPI_Ialltoallv(b.send.get(), c->sc.data(), c->sd.data(), MPI_BYTE, b.recv.get(),
                           c->rc.data(), c->rd.data(), MPI_BYTE, comm, &request),
            "MPI_Ialltoallv");
  mpi_.wait({&request, 1}, "MPI_Ialltoallv", false, c);
  run_host_copies(s.local, src, dst);
  for (const Route& r : s.recvs) run_host_copies(r.copies, b.recv.get(), dst);
}

void MpiEngine::typed(const Program& program, const Sections& sections, const Routes& s) {
  const MPI_Comm comm = mpi_.handle();
  const int tag = program.style().tag;
  const char* src = sections.src ? static_cast<const char*>(sections.src->data()) : nullptr;
  char* dst = sections.dst ? static_cast<char*>(sections.dst->data()) : nullptr;
  std::vector<MPI_Request> requests;
  std::vector<OwnedType> types;  // freed on return: MPI lets pending operations finish with them
  for (const Route& r : s.recvs) {
    types.push_back(message_type(r, false));
    check_mpi(MPI_Irecv(dst, 1, types.back().get(), r.peer, tag, comm, &requests.emplace_back()), "MPI_Irecv");
  }
  for (const Route& r : s.sends) {
    types.push_back(message_type(r, true));
    check_mpi(MPI_Isend(src, 1, types.back().get(), r.peer, tag, comm, &requests.emplace_back()), "MPI_Isend");
  }
  run_host_copies(s.local, src, dst);
  mpi_.wait(requests, "the point-to-point exchange (derived datatypes)", true);
}

void MpiEngine::check_section(const gdap_array& a, std::string_view which, std::string_view operation, bool) const {
  const Memory m = memory_of(&a);
  if (m == Memory::none) fail(GDAP_ERR_UNSUPPORTED, "{} lives on device type {}, which gdap cannot move", which, a.section.device.type);
  if (m == Memory::device) {
    fail(GDAP_ERR_UNSUPPORTED, "{} is in CUDA device memory: on an MPI communicator {} takes host-accessible "
         "sections (host, pinned or managed memory); use an NCCL communicator (gdap_comm_from_nccl) for device "
         "sections", which, operation);
  }
}

// In pieces of at most INT_MAX elements, each wait bounded by the timeout.
void MpiEngine::allreduce(void* data, int64_t count, const Reduce& r) {
  const int64_t es = r.dtype.bits / 8;
  for (int64_t at = 0; at < count; at += INT_MAX) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int n = static_cast<int>(std::min<int64_t>(INT_MAX, count - at));
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + at * es, n, mpi_type(r.dtype), mpi_op(r),
                             mpi_.handle(), &request),
              "MPI_Iallreduce");
    mpi_.wait({&request, 1}, "MPI_Iallreduce", false, r.keep);
  }
}

void MpiEngine::reduce_scatter(const void* send, void* recv, int64_t segment, const Reduce& r) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ireduce_scatter_block(send != nullptr ? send : MPI_IN_PLACE, recv, static_cast<int>(segment),
                                      mpi_type(r.dtype), mpi_op(r), mpi_.handle(), &request),
            "MPI_Ireduce_scatter_block");
  mpi_.wait({&request, 1}, "MPI_Ireduce_scatter_block", false, r.keep);
}

// MPI's in-place reduce-scatter leaves this rank's segment at the start of the buffer.
int64_t MpiEngine::reduce_scatter_in_place(void* buffer, int64_t segment, const Reduce& r) {
  if (segment == 0) return 0;
  reduce_scatter(nullptr, buffer, segment, r);
  return 0;
}

}  // namespace

std::unique_ptr<Engine> make_engine(MpiComm& comm) { return std::make_unique<MpiEngine>(comm); }

}  // namespace gdap::exchange
