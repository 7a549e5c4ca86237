// The single-copy exchange between ranks of one node (mpi_cma.hpp): each receiver turns its
// received messages into two lists of runs per sender, its own destination runs and the sender's
// source runs (adjacent runs merged on each side), and reads them with process_vm_readv, at most
// IOV_MAX of each per call. The kernel pins the sender's pages once per remote run, so a message
// whose runs are short on the sender's side is packed by its sender into a buffer the sender keeps:
// a shared-memory segment the receiver maps and unpacks from (Way::mapped), or, on the heap, read
// as one remote run (in chunks through a staging buffer where the receiver's runs are short too).
// A sender whose section lies in a shared-memory segment is not read at all: the receiver maps the
// segment and copies from the mapping (Way::mapped). Mapped copies run in one sweep with the
// receiver's own local copies that writes its destination row after row (copy.hpp's Sweep). The lists hold
// absolute addresses, so they are kept per program, strides, and every rank's published share.
#include "exchange/mpi_cma.hpp"

#include "array/array.hpp"
#include "array/shared_segment.hpp"
#include "comm/mpi.hpp"
#include "core/error.hpp"
#include "core/setting.hpp"
#include "exchange/copy.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#ifdef __linux__
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace gdap::exchange {

#ifdef __linux__
namespace {

// How a sender moves one of its messages: `offset` bytes into its pack buffer, where it packed the
// message's `bytes`, or kInSection: the receiver reads the runs straight from the sender's section.
struct Sent {
  int64_t peer = 0, offset = 0, bytes = 0;
};
constexpr int64_t kInSection = -1;

// Where a sender packs by default: below 4 KiB a run costs the kernel's per-run page pinning (about
// 2.2 us, docs/PERFORMANCE.md) more than a memcpy of its bytes costs the sender.
constexpr int64_t kPackBelow = 4096;

// What a rank publishes: its pid, a word its peers read to probe (and the value it holds), its
// source section's base address and element strides (none without a source), and its pack buffer
// (address and size) with one Sent per message it sends, in the program's order; last, where its
// source section lies in a shared-memory segment gdap made, the segment and the bytes from its
// base to element (0, ..., 0): its peers map it and copy from there (no pack buffer then); and where
// its pack buffer is a shared-memory segment (GDAP_CMA_PACK_TO=segment, the default), that segment:
// its peers map it and unpack from there, with no process_vm_readv.
struct Published {
  int64_t pid = 0, probe_address = 0, probe_value = 0, base = 0;
  std::vector<int64_t> strides;
  int64_t pack_base = 0, pack_bytes = 0;
  std::vector<Sent> sends;
  std::optional<SegmentIdentity> segment;
  int64_t segment_offset = 0;
  std::optional<SegmentIdentity> pack_segment;  // where the pack buffer is a segment: peers map it
};

constexpr size_t kMaxSegmentName = 255;  // NAME_MAX of /dev/shm, with the leading '/'

std::string encode(const Published& p) {
  std::vector<int64_t> words{p.pid, p.probe_address, p.probe_value, p.base, static_cast<int64_t>(p.strides.size())};
  words.insert(words.end(), p.strides.begin(), p.strides.end());
  words.insert(words.end(), {p.pack_base, p.pack_bytes, static_cast<int64_t>(p.sends.size())});
  for (const Sent& s : p.sends) words.insert(words.end(), {s.peer, s.offset, s.bytes});
  std::string bytes(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(int64_t));
  // Then each optional segment as a flag word, and where set its offset, identity and name.
  auto append_segment = [&](const std::optional<SegmentIdentity>& id, int64_t offset) {
    const int64_t flag = id ? 1 : 0;
    bytes.append(reinterpret_cast<const char*>(&flag), sizeof flag);
    if (!id) return;
    const int64_t tail[] = {offset, static_cast<int64_t>(id->inode), static_cast<int64_t>(id->device), id->bytes,
                            static_cast<int64_t>(id->name.size())};
    bytes.append(reinterpret_cast<const char*>(tail), sizeof tail);
    bytes.append(id->name);
    bytes.resize((bytes.size() + sizeof(int64_t) - 1) / sizeof(int64_t) * sizeof(int64_t), '\0');
  };
  append_segment(p.segment, p.segment_offset);
  append_segment(p.pack_segment, 0);
  return bytes;
}

// One optional segment's words from `at` on (encode's append_segment): its identity and offset
// into `id` and `offset` where the flag is set; moves `at` past them. False when they do not make one.
bool decode_segment(const std::vector<int64_t>& words, size_t& at, const std::string& share,
                    std::optional<SegmentIdentity>& id, int64_t& offset) {
  const size_t n = words.size();
  if (at >= n || (words[at] != 0 && words[at] != 1)) return false;
  if (words[at++] == 0) return true;
  if (n - at < 5) return false;
  const int64_t bytes = words[at + 3], length = words[at + 4];
  offset = words[at];
  if (length < 2 || static_cast<size_t>(length) > kMaxSegmentName || bytes <= 0 || offset < 0 || offset > bytes) return false;
  const size_t name_words = (static_cast<size_t>(length) + sizeof(int64_t) - 1) / sizeof(int64_t);
  if (n - at - 5 < name_words) return false;
  id = SegmentIdentity{share.substr((at + 5) * sizeof(int64_t), static_cast<size_t>(length)),
                       static_cast<uint64_t>(words[at + 1]), static_cast<uint64_t>(words[at + 2]), bytes};
  at += 5 + name_words;
  return true;
}

Published decode(const std::string& share, size_t rank) {
  const size_t n = share.size() / sizeof(int64_t);
  std::vector<int64_t> words(n);
  if (n > 0) std::memcpy(words.data(), share.data(), n * sizeof(int64_t));
  auto malformed = [&] {
    fail(GDAP_ERR_INTERNAL, "rank {}'s share for the cross-memory attach exchange is malformed ({} bytes)", rank, share.size());
  };
  if (n < 5 || share.size() % sizeof(int64_t) != 0 || words[4] < 0 || static_cast<size_t>(words[4]) > n - 5) malformed();
  const size_t at = 5 + static_cast<size_t>(words[4]);  // the pack buffer's words
  if (n - at < 3 || words[at + 2] < 0 || static_cast<size_t>(words[at + 2]) > (n - at - 3) / 3) malformed();
  if (words[at + 1] < 0) malformed();  // a negative pack buffer size
  Published p{words[0], words[1], words[2], words[3], std::vector<int64_t>(words.begin() + 5, words.begin() + static_cast<std::ptrdiff_t>(at)),
              words[at], words[at + 1], {}, {}, 0, {}};
  size_t end = at + 3 + 3 * static_cast<size_t>(words[at + 2]);  // past the sends: the segments
  for (size_t i = at + 3; i < end; i += 3) p.sends.push_back(Sent{words[i], words[i + 1], words[i + 2]});
  int64_t pack_offset = 0;
  if (!decode_segment(words, end, share, p.segment, p.segment_offset) ||
      !decode_segment(words, end, share, p.pack_segment, pack_offset) || end != n ||
      (p.pack_segment && (pack_offset != 0 || p.pack_segment->bytes < p.pack_bytes))) {
    malformed();
  }
  // A source segment is a shm_open name; a pack segment the sender's own memfd, opened through /proc.
  const std::string own_fds = fmt::format("/proc/{}/fd/", p.pid);
  const auto is_own_fd = [&](const std::string& name) {
    return name.size() > own_fds.size() && name.rfind(own_fds, 0) == 0 &&
           name.find_first_not_of("0123456789", own_fds.size()) == std::string::npos;
  };
  if ((p.segment && p.segment->name.rfind("/proc/", 0) == 0) || (p.pack_segment && !is_own_fd(p.pack_segment->name))) {
    malformed();
  }
  return p;
}

// The communicator's probe word and its verdict, kept with it.
struct CmaState final : Scratch {
  bool read_in_place() const override { return true; }  // peers read the probe word
  int64_t probe = std::chrono::steady_clock::now().time_since_epoch().count() ^ static_cast<int64_t>(getpid());
  std::optional<bool> usable;
};

CmaState& state_of(MpiComm& comm) { return comm.cache.get<CmaState>("exchange.cma"); }

// A sender's packed messages: each one's copies from the section into the pack buffer (at its
// Sent's offset), kept per program, sections and threshold (Cache::recent: a few programs).
struct Packing {
  std::vector<int64_t> key;
  int64_t below = 0;
  int64_t bytes = 0;  // of the pack buffer this program fills
  std::vector<Copy2D> copies;
  Sweep sweep;  // `copies`, run along the section's rows (SweepAlong::source)
  std::vector<Sent> sends;  // every send message, packed or not, as published
};

// The pack buffer every program of a kind fills, grown to the largest (never shrunk, never
// zeroed): the closing meeting keeps a call from packing while a peer still reads the previous
// one. Its address is in every share, so a larger buffer changes the shares and the readers' plans.
// In a shared-memory segment (`segment`; GDAP_CMA_PACK_TO=segment) the receivers map it and unpack
// straight from the mapping into their destination: the pack and that copy are the only passes
// over the bytes. On the heap (GDAP_CMA_PACK_TO=heap, or where no segment can be made) they read
// it with process_vm_readv: the kernel's copy is a third pass (into a staging buffer, then
// unpacked, where the receiver's runs are short).
struct PackBuffer final : Scratch {
  bool read_in_place() const override { return true; }  // receivers read it
  char* data = nullptr;
  int64_t bytes = 0;
  std::unique_ptr<char[]> heap;
  std::optional<SegmentMapping> segment;
  int fd = -1;  // the segment's memfd, held open: receivers open it as /proc/<pid>/fd/<fd>
  void release() {
    if (segment) munmap(const_cast<void*>(segment->base), static_cast<size_t>(segment->identity.bytes));
    if (fd >= 0) close(fd);
    fd = -1;
    segment.reset();
    heap.reset();
    data = nullptr;
    bytes = 0;
  }
  ~PackBuffer() override { release(); }
};

// Runs of a message on one side of its copies (the source side's with `source`): rows that
// continue one another count once, as process_vm_readv would read or write them.
int64_t runs_of(const std::vector<Copy2D>& copies, bool source) {
  int64_t runs = 0, end = 0;
  for (const Copy2D& c : copies) {
    for (int64_t k = 0; k < c.rows; ++k) {
      const int64_t start = source ? c.src + k * c.src_pitch : c.dst + k * c.dst_pitch;
      if (runs == 0 || start != end) ++runs;
      end = start + c.row_bytes;
    }
  }
  return runs;
}

// Decides, per message this rank sends, whether it packs it: where its runs on the sender's side
// average fewer than `below` bytes. The receiver does not decide again: it reads the published Sent.
void plan_packing(const Program& program, std::span<const int64_t> strides, int64_t below, Packing& out) {
  const int64_t es = program.element_size();
  int64_t packed = 0;
  std::vector<Copy2D> copies;
  for (const Message& m : program.messages(Part::send)) {
    const int64_t bytes = m.elements * es;
    copies.clear();
    program.copies(m, End{End::sender, strides}, End{End::packed, {}}, copies);
    const int64_t runs = runs_of(copies, true);
    if (runs == 0 || bytes / runs >= below) {
      out.sends.push_back(Sent{m.peer, kInSection, bytes});
      continue;
    }
    // The packed side counts from the program's whole send buffer; this one holds packed messages only.
    for (Copy2D c : copies) {
      c.dst += packed - m.offset * es;
      out.copies.push_back(c);
    }
    out.sends.push_back(Sent{m.peer, packed, bytes});
    packed += bytes;
  }
  out.bytes = packed;
}

std::string packing_name(const Program& program) { return std::string("exchange.cma.pack.") + program.style().name; }

Packing& packing_for(MpiComm& comm, const Program& program, const Sections& sections, int64_t below) {
  std::vector<int64_t> key = key_of(program, sections);
  const auto same = [&](const Packing& kept) { return kept.key == key && kept.below == below; };
  return comm.cache.recent<Packing>(packing_name(program), same, [&] {
    auto made = std::make_unique<Packing>();
    if (sections.src) plan_packing(program, sections.src->section.strides, below, *made);
    std::vector<SourcedCopy> gathered;
    for (const Copy2D& c : made->copies) gathered.push_back({c, 0});
    made->sweep = sweep_of(std::move(gathered), SweepAlong::source);
    made->key = std::move(key);
    made->below = below;
    return made;
  });
}

// Where a sender's pack buffer lies (GDAP_CMA_PACK_TO, read at each call): `segment` (the default),
// a shared-memory segment its receivers map, or `heap`, read with process_vm_readv (the way before
// 2026-11-28, kept for measuring beside it). Anything else, the empty string too, throws
// GDAP_ERR_INVALID_ARGUMENT (choice_setting, as every named-choice setting).
bool pack_to_segment() { return choice_setting("GDAP_CMA_PACK_TO", {"segment", "heap"}).value_or(0) == 0; }

bool test_refuses(const char* what);  // below

// A pack segment of `bytes`: an unnamed memfd (nothing left in /dev/shm, whatever becomes of this
// process), reserved whole, mapped read-write into `b`; receivers open it through /proc, which
// the cross-memory attach probe already showed they may. Throws GDAP_ERR_NO_MEMORY where it cannot.
void make_pack_segment(PackBuffer& b, int64_t bytes) {
  if (test_refuses("segment")) fail(GDAP_ERR_NO_MEMORY, "refused for a test");
  b.fd = memfd_create("gdap-cma-pack", MFD_CLOEXEC);
  if (b.fd < 0 || ftruncate(b.fd, static_cast<off_t>(bytes)) != 0 || posix_fallocate(b.fd, 0, static_cast<off_t>(bytes)) != 0) {
    fail(GDAP_ERR_NO_MEMORY, "no pack segment of {} bytes", bytes);
  }
  void* p = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, b.fd, 0);
  if (p == MAP_FAILED) fail(GDAP_ERR_NO_MEMORY, "no pack segment of {} bytes", bytes);
  try {
    b.segment = SegmentMapping{p, identity_of(b.fd, fmt::format("/proc/{}/fd/{}", getpid(), b.fd))};
  } catch (...) {
    munmap(p, static_cast<size_t>(bytes));  // not yet the buffer's to release
    throw;
  }
  b.data = static_cast<char*>(p);
}

// The kind's pack buffer (one for each place, `in_segment` or the heap), grown to hold `packing`'s
// messages. A segment that cannot be made (/dev/shm full or absent) leaves the buffer on the heap.
PackBuffer& pack_buffer_for(MpiComm& comm, const Program& program, const Packing& packing, bool in_segment) {
  PackBuffer& b = comm.cache.get<PackBuffer>(packing_name(program) + (in_segment ? ".segment" : ".buffer"));
  // The other place's buffer sits idle since GDAP_CMA_PACK_TO changed: freed now (a segment's reserved
  // pages with it, once its receivers see its share name none), not when the communicator goes.
  if (PackBuffer* idle = comm.cache.find<PackBuffer>(packing_name(program) + (in_segment ? ".buffer" : ".segment"))) {
    idle->release();
  }
  if (packing.bytes > b.bytes) {
    b.release();  // before the larger one: the old one's bytes are not needed (none kept if making it fails)
    if (in_segment) {
      try {
        make_pack_segment(b, packing.bytes);
      } catch (const std::exception&) {  // gdap's refusals and the allocator's alike
        b.release();  // on the heap instead: the receivers read it
      }
    }
    if (b.data == nullptr) {
      b.heap = std::make_unique_for_overwrite<char[]>(static_cast<size_t>(packing.bytes));
      b.data = b.heap.get();
    }
    b.bytes = packing.bytes;
  }
  return b;
}

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

// A piece of a packed message that lands in short runs here: read whole into the receiver's
// staging buffer, then unpacked from cache. The kernel's copy into many short user segments costs
// more than a contiguous copy plus a memcpy per run from cache (docs/PERFORMANCE.md).
struct Chunk {
  std::vector<iovec> local, remote;
  std::vector<Copy2D> unpack;  // from the staging buffer into the destination
};
constexpr int64_t kChunk = int64_t{256} << 10;  // fits in L2 with room to spare

// Tests only (GDAP_TEST_CMA_CHUNK=<bytes>, at least 8): smaller chunks, so that a test's messages
// cross chunk edges; anything else leaves kChunk.
int64_t chunk_bytes() {
  const char* env = std::getenv("GDAP_TEST_CMA_CHUNK");
  const long long bytes = env != nullptr ? std::atoll(env) : 0;
  return bytes >= 8 ? bytes : kChunk;
}

// How a sender's messages reach this rank: read with process_vm_readv (from its section, or
// from its pack buffer where its share says it packed a message: `remote` and `chunks`), or
// copied with plain loads from this rank's mapping of the sender's shared-memory segment
// (`mapped`: one pass over the bytes, no system call per run).
enum class Way { read, mapped };

// One sender's runs, read in one stream, and its staged chunks; or its copies from the mapping.
struct Sender {
  int rank = 0;
  pid_t pid = 0;
  Way way = Way::read;
  std::vector<iovec> local, remote;
  std::vector<Chunk> chunks;
  std::optional<SegmentIdentity> segment;  // Way::mapped: which mapping
  std::vector<Copy2D> mapped;              // Way::mapped: src counts from the mapping's base, checked in bounds
  int64_t first = INT64_MAX, end = 0;      // Way::mapped: the bytes of the segment `mapped` reads
  // Way::mapped from a pack segment (0 from a source segment): where the sender maps it (its
  // pack_base), read with process_vm_readv where this rank may not map it; and its probe word,
  // which tells whether it is still there to read.
  int64_t pack_base = 0, probe_address = 0, probe_value = 0;
};

// A program's reads and local copies for given sections and peers' shares (which carry the
// segments' identities, so a re-created or resized segment makes another plan).
struct CmaPlan {
  std::vector<int64_t> key;
  std::vector<std::string> shares;
  std::vector<Sender> senders;
  std::vector<Copy2D> local;
  // The local copies and the mapped senders' (source 0: this rank's section; source i + 1:
  // senders[i]'s mapping), swept together so that the destination is written row after row.
  Sweep sweep;
  std::vector<char> staging;  // as large as the largest chunk (at most kChunk)
  std::vector<SegmentIdentity> named;  // every segment the shares name: the mappings kept
  // Each peer's pid and the pack segment its share names (none: its pack buffer is on the heap or
  // it has none): any other pack segment of that peer for this kind of program is gone from it.
  struct PeerPack {
    int64_t pid = 0;
    std::optional<SegmentIdentity> segment;
  };
  std::vector<PeerPack> packs;
};

// How many of the latest calls keep a mapping their shares named: as many as the programs whose
// plans are kept (Cache::recent), so that plans taken in turn, each from its own segments, map
// them once rather than on every call.
constexpr int64_t kMappedCalls = static_cast<int64_t>(Recent<CmaPlan>::kPrograms);

// This rank's read-only mappings of its peers' segments, kept with the communicator while one of
// the last kMappedCalls calls' shares named them (and unmapped when the communicator goes).
struct Mappings final : Scratch {
  struct Kept {
    SegmentMapping mapping;  // its base null where the mapping was refused: read instead (`refused` says why)
    int64_t named_at = 0;    // the last call whose shares named it
    std::string refused;
    // Where it is a peer's pack segment: the kind of program it packs for (Style::name) and the
    // peer's pid; empty and 0 for a source segment.
    std::string packs_for;
    int64_t pid = 0;
  };
  std::vector<Kept> kept;
  int64_t calls = 0;
  ~Mappings() override {
    for (const Kept& k : kept) unmap_segment(k.mapping);
  }
  Kept* find(const SegmentIdentity& id) {
    for (Kept& k : kept) {
      if (k.mapping.identity == id) return &k;
    }
    return nullptr;
  }
};

// Whether process `pid` still holds `value` at `address`: the process that published them is there.
bool reads_back(pid_t pid, int64_t address, int64_t value) {
  int64_t found = 0;
  iovec to{&found, sizeof found}, from{reinterpret_cast<void*>(address), sizeof found};
  return process_vm_readv(pid, &to, 1, &from, 1, 0) == static_cast<ssize_t>(sizeof found) && found == value;
}

// Maps sender `s`'s segment. Where it is the sender's pack segment and the system refuses the
// open or mmap (EACCES under a hardened /proc, EMFILE, ENOMEM, ...) while the sender is still
// there, keeps the refusal instead: this rank then reads the bytes from the sender's own mapping
// with process_vm_readv, as from a pack buffer on the heap. Decided per sender, once per segment.
Mappings::Kept map_or_read_instead(const Sender& s, const std::string& style, int64_t now) {
  MapRefusal refused;
  const SegmentMapping mapping = map_segment_readonly(*s.segment, s.rank, s.pack_base != 0 ? &refused : nullptr);
  if (mapping.base == nullptr && (test_refuses("map-gone") || !reads_back(s.pid, s.probe_address, s.probe_value))) {
    fail(GDAP_ERR_COMM, "shared-memory segment '{}' of rank {} cannot be mapped: {}; nor can its pack buffer be read "
         "instead: rank {} (pid {}) is gone", s.segment->name, s.rank, refused.why, s.rank, s.pid);
  }
  const bool pack = s.pack_base != 0;
  return {mapping, now, std::move(refused.why), pack ? style : std::string(), pack ? static_cast<int64_t>(s.pid) : 0};
}

// Whether kept mapping `k` is a pack segment for `style` of a peer whose share in `plan` names
// another pack segment or none: its sender grew its buffer or moved it to the heap and let the
// segment go, so its reserved pages stay in use only while this rank maps it.
bool superseded(const Mappings::Kept& k, const CmaPlan& plan, const std::string& style) {
  if (k.packs_for != style) return false;
  return std::ranges::any_of(plan.packs, [&](const CmaPlan::PeerPack& p) {
    return p.pid == k.pid && !(p.segment && *p.segment == k.mapping.identity);
  });
}

// Notes the segments the plan's shares name, unmaps those no call of the last kMappedCalls named
// and the peers' pack segments of this kind (`style`) their shares no longer name, then maps every
// segment its senders are read from that is not mapped yet. Throws GDAP_ERR_COMM naming the
// sender whose segment cannot be mapped.
void refresh_mappings(MpiComm& comm, const CmaPlan& plan, const std::string& style) {
  Mappings& m = comm.cache.get<Mappings>("exchange.cma.mappings");
  const int64_t now = ++m.calls;
  for (const SegmentIdentity& id : plan.named) {
    if (Mappings::Kept* k = m.find(id)) k->named_at = now;
  }
  std::erase_if(m.kept, [&](const Mappings::Kept& k) {
    const bool stale = now - k.named_at >= kMappedCalls || superseded(k, plan, style);
    if (stale) unmap_segment(k.mapping);
    return stale;
  });
  for (const Sender& s : plan.senders) {
    if (s.way == Way::mapped && m.find(*s.segment) == nullptr) {
      m.kept.reserve(m.kept.size() + 1);  // no throw between the mapping and its keeping
      m.kept.push_back(map_or_read_instead(s, style, now));
      ++comm.cache.builds;  // a mapping made (or refused) counts as built (tests: plans in turn map once)
    }
  }
}

// The copies of a message from sender `s`'s segment, `offset` bytes from whose base their source
// offsets count, moved to count from the base and checked once to lie inside the segment:
// GDAP_ERR_INTERNAL naming the sender otherwise.
void add_mapped(const std::vector<Copy2D>& copies, int64_t offset, const char* what, Sender& s) {
  const SegmentIdentity& segment = *s.segment;
  for (Copy2D c : copies) {
    if (c.rows <= 0 || c.row_bytes <= 0) continue;
    // The offsets come from the peer's published strides and offset: checked arithmetic, so that
    // no wrapped sum passes the bounds check.
    int64_t reach = 0, start = 0, lo = 0, hi = 0;
    const bool wrapped = __builtin_mul_overflow(c.rows - 1, c.src_pitch, &reach) ||
                         __builtin_add_overflow(offset, c.src, &start) ||
                         __builtin_add_overflow(start, std::min<int64_t>(reach, 0), &lo) ||
                         __builtin_add_overflow(start, std::max<int64_t>(reach, 0), &hi) ||
                         __builtin_add_overflow(hi, c.row_bytes, &hi);
    if (wrapped || lo < 0 || hi > segment.bytes) {
      if (wrapped) {
        fail(GDAP_ERR_INTERNAL, "rank {}'s {} would be read past the int64 range in its shared-memory segment '{}'",
             s.rank, what, segment.name);
      }
      fail(GDAP_ERR_INTERNAL, "rank {}'s {} would be read at bytes [{}, {}) of its {}-byte shared-memory segment "
           "'{}': outside it", s.rank, what, lo, hi, segment.bytes, segment.name);
    }
    c.src += offset;
    append_merged(s.mapped, c);
    s.first = std::min(s.first, lo);
    s.end = std::max(s.end, hi);
  }
}

// The sender's Sent for message `m` this rank (`me`) receives from it: the next one addressed to
// `me` in its published list from `next` on. Both ends derive their messages from the same plan,
// so a Sent that is missing, of other bytes, or outside the sender's pack buffer is a defect: it
// fails naming both ranks rather than reading what the sender did not publish.
Sent sent_to(int64_t me, const Message& m, int64_t element_size, const Published& from, size_t& next) {
  while (next < from.sends.size() && from.sends[next].peer != me) ++next;
  if (next == from.sends.size()) {
    fail(GDAP_ERR_INTERNAL, "rank {} expects a message from rank {}, which publishes none more for it", me, m.peer);
  }
  const Sent sent = from.sends[next++];
  if (sent.bytes != m.elements * element_size) {
    fail(GDAP_ERR_INTERNAL, "rank {} publishes a message of {} bytes for rank {}, which expects {} bytes", m.peer,
         sent.bytes, me, m.elements * element_size);
  }
  if (sent.offset != kInSection && (sent.offset < 0 || sent.offset > from.pack_bytes - sent.bytes)) {
    fail(GDAP_ERR_INTERNAL, "rank {} publishes a packed message for rank {} at bytes [{}, {}) of a {}-byte buffer", m.peer,
         me, sent.offset, sent.offset + sent.bytes, from.pack_bytes);
  }
  return sent;
}

// Cuts packed message `m` (`sent` by `from`) into chunks read through the staging buffer (whose
// address the plan fills in once it knows its size: the largest chunk, kept in `largest`).
void stage(const Program& program, const Message& m, const Sent& sent, const Published& from, const End& receiver,
           size_t& largest, Sender& s) {
  std::vector<Copy2D> unpack;
  program.copies(m, End{End::packed, {}}, receiver, unpack);
  const int64_t first = m.offset * program.element_size();  // where the copies' packed side starts
  char* remote = reinterpret_cast<char*>(from.pack_base) + sent.offset;
  const int64_t chunk = chunk_bytes();
  for (int64_t lo = 0; lo < sent.bytes; lo += chunk) {
    const auto n = static_cast<size_t>(std::min(chunk, sent.bytes - lo));
    Chunk c{{iovec{nullptr, n}}, {iovec{remote + lo, n}}, {}};
    largest = std::max(largest, n);
    clip_packed(unpack, true, first + lo, first + lo + static_cast<int64_t>(n), c.unpack);
    for (Copy2D& u : c.unpack) u.src -= first + lo;
    s.chunks.push_back(std::move(c));
  }
}

CmaPlan& plan_for(MpiComm& comm, const Program& program, const Sections& sections, const std::vector<std::string>& shares) {
  std::vector<int64_t> key = key_of(program, sections);
  key.push_back(chunk_bytes());
  const std::string name = std::string("exchange.cma.") + program.style().name;
  const auto same = [&](const CmaPlan& kept) { return kept.key == key && kept.shares == shares; };
  return comm.cache.recent<CmaPlan>(name, same, [&] {
    auto plan = std::make_unique<CmaPlan>();
    if (sections.dst) {
      char* dst = static_cast<char*>(sections.dst->data());
      const End receiver{End::receiver, sections.dst->section.strides};
      std::vector<Copy2D> copies;
      Published from;
      size_t next = 0;     // where this rank's next message lies in `from.sends`
      size_t largest = 0;  // the largest staged chunk
      size_t read_sender = 0;  // the current peer's Sender read with process_vm_readv or mapped from its section
      for (const Message& m : program.messages(Part::recv)) {
        const auto peer = static_cast<size_t>(m.peer);
        if (plan->senders.empty() || plan->senders[read_sender].rank != m.peer) {
          from = decode(shares[peer], peer);
          if (from.strides.size() != sections.dst->section.strides.size()) {
            fail(GDAP_ERR_INTERNAL, "rank {} sends to rank {} but publishes {} section strides for {} dimensions", m.peer,
                 comm.rank, from.strides.size(), sections.dst->section.strides.size());
          }
          next = 0;
          read_sender = plan->senders.size();
          plan->senders.push_back(Sender{static_cast<int>(m.peer), static_cast<pid_t>(from.pid),
                                         from.segment ? Way::mapped : Way::read, {}, {}, {}, from.segment, {}});
        }
        const Sent sent = sent_to(comm.rank, m, program.element_size(), from, next);
        copies.clear();
        if (sent.offset != kInSection && from.pack_segment) {  // unpacked from the mapped pack buffer
          if (plan->senders.size() - 1 == read_sender) {  // this peer's first packed message
            plan->senders.push_back(Sender{static_cast<int>(m.peer), static_cast<pid_t>(from.pid), Way::mapped, {}, {}, {},
                                           from.pack_segment, {}, INT64_MAX, 0, from.pack_base, from.probe_address,
                                           from.probe_value});
          }
          program.copies(m, End{End::packed, {}}, receiver, copies);
          add_mapped(copies, sent.offset - m.offset * program.element_size(), "pack buffer", plan->senders.back());
          continue;
        }
        Sender& s = plan->senders[read_sender];
        program.copies(m, End{End::sender, from.strides}, receiver, copies);
        if (s.way == Way::mapped) {
          if (sent.offset != kInSection) fail(GDAP_ERR_INTERNAL, "rank {} publishes a segment and a packed message", m.peer);
          add_mapped(copies, from.segment_offset, "section", s);
          continue;
        }
        if (sent.offset != kInSection && sent.bytes / std::max<int64_t>(runs_of(copies, false), 1) < kPackBelow) {
          stage(program, m, sent, from, receiver, largest, s);
          continue;
        }
        char* base = reinterpret_cast<char*>(from.base);
        for (const Copy2D& c : copies) {
          for (int64_t k = 0; k < c.rows; ++k) {
            append_run(s.local, dst + c.dst + k * c.dst_pitch, c.row_bytes);
            if (sent.offset == kInSection) append_run(s.remote, base + c.src + k * c.src_pitch, c.row_bytes);
          }
        }
        // Packed: the sender's bytes lie in packed order, which is the order of `copies`.
        if (sent.offset != kInSection) append_run(s.remote, reinterpret_cast<char*>(from.pack_base) + sent.offset, sent.bytes);
      }
      plan->staging.resize(largest);
      for (Sender& s : plan->senders) {
        for (Chunk& c : s.chunks) c.local[0].iov_base = plan->staging.data();
      }
    }
    if (sections.src && sections.dst) {
      plan->local = program.part_copies(Part::local, End{End::sender, sections.src->section.strides},
                                        End{End::receiver, sections.dst->section.strides});
    }
    std::vector<SourcedCopy> swept;
    for (const Copy2D& c : plan->local) swept.push_back({c, 0});
    for (size_t i = 0; i < plan->senders.size(); ++i) {
      for (const Copy2D& c : plan->senders[i].mapped) swept.push_back({c, static_cast<int>(i + 1)});
    }
    plan->sweep = sweep_of(std::move(swept));
    for (size_t r = 0; r < shares.size(); ++r) {
      if (static_cast<int64_t>(r) == comm.rank) continue;
      Published p = decode(shares[r], r);
      if (p.segment) plan->named.push_back(std::move(*p.segment));
      plan->packs.push_back({p.pid, p.pack_segment});
      if (p.pack_segment) plan->named.push_back(std::move(*p.pack_segment));
    }
    plan->key = std::move(key);
    plan->shares = shares;
    return plan;
  });
}

// Tests only (GDAP_TEST_CMA_REFUSED): "1" fails this rank's probe, "read" its reads after a good
// probe, as if the kernel refused them, "pack" its packing, as if out of memory, "map" its
// mappings of peers' segments (shared_segment.cpp), "bounds" publishes its section as lying
// past its segment's end, "map-gone" as "map" with every peer taken as gone (its probe word not
// read back), "segment" fails making its pack segment, as if out of memory, and "unmappable"
// publishes its pack segment under a descriptor it does not hold, so that no peer can open it
// (they read its pack buffer with process_vm_readv instead).
bool test_refuses(const char* what) {
  const char* refused = std::getenv("GDAP_TEST_CMA_REFUSED");
  return refused != nullptr && std::strcmp(refused, what) == 0;
}

// read_runs from sender `s`, or EPERM where a test refuses reads.
int read_code(const Sender& s, const std::vector<iovec>& local, const std::vector<iovec>& remote) {
  return test_refuses("read") ? EPERM : read_runs(s.pid, local, remote);
}

// Reads `remote` of sender `s` into `local`; throws GDAP_ERR_COMM naming the sender and errno.
void read_from(const Sender& s, const std::vector<iovec>& local, const std::vector<iovec>& remote) {
  if (const int code = read_code(s, local, remote); code != 0) {
    fail(GDAP_ERR_COMM, "process_vm_readv from rank {} (pid {}) failed: {} (errno {})", s.rank, s.pid, std::strerror(code), code);
  }
}

// Where mapped sender `s`'s copies read from: this rank's mapping of its segment, or where that
// was refused, `bytes`, filled with bytes [first, end) of the sender's pack segment read from its
// own mapping (the base handed back lies `first` bytes before them). Throws GDAP_ERR_COMM naming
// the sender, its pid, both causes and the settings that avoid mapping, where the read fails too.
const char* source_of(Mappings& mappings, const Sender& s, std::vector<char>& bytes) {
  const Mappings::Kept& kept = *mappings.find(*s.segment);  // refresh_mappings kept one
  if (kept.mapping.base != nullptr) return static_cast<const char*>(kept.mapping.base);
  if (s.end <= s.first) return nullptr;  // nothing to read
  const auto n = static_cast<size_t>(s.end - s.first);
  bytes.resize(n);
  const int code = read_code(s, {iovec{bytes.data(), n}}, {iovec{reinterpret_cast<char*>(s.pack_base + s.first), n}});
  if (code != 0) {
    fail(GDAP_ERR_COMM, "rank {}'s pack segment '{}' cannot be mapped ({}), and process_vm_readv from rank {} (pid {}) "
         "failed too: {} (errno {}); GDAP_CMA_PACK_TO=heap or GDAP_MPI_EXCHANGE=p2p avoids mapping it", s.rank,
         s.segment->name, kept.refused, s.rank, s.pid, std::strerror(code), code);
  }
  return reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(bytes.data()) - static_cast<uintptr_t>(s.first));
}

// Whether this rank can read every peer's probe word, and so their memory.
bool probe(const MpiComm& comm, const std::vector<std::string>& shares) {
  if (comm.node_ranks != comm.size) return false;  // some peers are on other nodes
  if (test_refuses("1")) return false;
  for (size_t r = 0; r < shares.size(); ++r) {
    if (static_cast<int64_t>(r) == comm.rank) continue;
    const Published peer = decode(shares[r], r);
    if (!reads_back(static_cast<pid_t>(peer.pid), peer.probe_address, peer.probe_value)) return false;  // or another process with that pid
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

// The bytes below which a sender packs a message (GDAP_CMA_PACK_BELOW, else kPackBelow): where its
// runs on the sender's side average fewer. 0 never packs.
int64_t pack_below() {
  return whole_setting({"GDAP_CMA_PACK_BELOW", 0, INT64_MAX,
                       "a whole number of bytes from 0 to 9223372036854775807 (0: never pack)",
                       "negative (bytes >= 0; 0: never pack)"})
      .value_or(kPackBelow);
}

// Whether any rank publishes a packed message: then every rank meets once after packing. Reads
// the pack buffer's size in place (no allocation to fail on one rank only); a share too short to
// hold it counts as packing, which every rank, reading the same shares, decides alike.
bool anyone_packs(const std::vector<std::string>& shares) {
  for (const std::string& share : shares) {
    int64_t strides = 0, bytes = 1;
    if (share.size() >= 5 * sizeof(int64_t)) std::memcpy(&strides, share.data() + 4 * sizeof(int64_t), sizeof strides);
    const auto at = (6 + static_cast<uint64_t>(strides)) * sizeof(int64_t);  // pack_bytes' offset
    if (strides >= 0 && at + sizeof bytes <= share.size()) std::memcpy(&bytes, share.data() + at, sizeof bytes);
    if (bytes != 0) return true;
  }
  return false;
}

// Packs this rank's short-run messages into the buffer its share (`mine`) published.
void pack(MpiComm& comm, const Program& program, const Sections& sections, const std::string& mine) {
  const Published published = decode(mine, static_cast<size_t>(comm.rank));
  if (published.pack_bytes == 0) return;
  const Packing& packing = packing_for(comm, program, sections, pack_below());  // cma_share's: kept
  // The published one of the two (a segment's entry holds a heap buffer where no segment could be made).
  PackBuffer* buffer = comm.cache.find<PackBuffer>(packing_name(program) + ".segment");
  if (buffer == nullptr || reinterpret_cast<int64_t>(buffer->data) != published.pack_base) {
    buffer = comm.cache.find<PackBuffer>(packing_name(program) + ".buffer");
  }
  if (buffer == nullptr || reinterpret_cast<int64_t>(buffer->data) != published.pack_base ||
      buffer->bytes < packing.bytes) {
    fail(GDAP_ERR_INTERNAL, "rank {}'s pack buffer is not the one it published", comm.rank);
  }
  if (test_refuses("pack")) throw std::bad_alloc();
  const char* const source = static_cast<const char*>(sections.src->data());
  run_sweep(packing.sweep, {&source, 1}, buffer->data);
}

// Whether the local and mapped copies run as one sweep (GDAP_CMA_ORDER=sweep, the default) or
// sender after sender, then the local ones (GDAP_CMA_ORDER=senders: the order before 2026-11-27,
// kept for measuring beside it). Read at each call; anything else throws GDAP_ERR_INVALID_ARGUMENT.
bool swept() {
  return choice_setting("GDAP_CMA_ORDER", {"sweep", "senders"}).value_or(0) == 0;
}

// Runs `step` unless this rank already failed, keeping what it throws as this rank's error.
template <typename Step>
void noting(std::optional<Error>& error, Step&& step) {
  if (error) return;
  try {
    step();
  } catch (const Error& e) {
    error = e;
  } catch (const std::bad_alloc&) {
    error = Error(GDAP_ERR_NO_MEMORY, "out of host memory (cross-memory attach exchange)");
  }
}

// The lowest failing rank's own step, status and message, sent to every rank: its peers then
// say what went wrong there, not only where they stopped waiting.
struct FailureNote {
  int status = 0;
  char step[64] = {};
  char message[1024] = {};  // a longer message is cut
};

// Collective: throws this rank's error, or GDAP_ERR_REMOTE naming the lowest rank that failed, the
// step it failed in (`step`: this rank's, should it fail), its status and its message; `what`
// names the meeting for a timeout.
void meet(MpiComm& comm, const std::optional<Error>& error, const char* what, const char* step) {
  const int failing = lowest_failing(comm, !error, what);
  if (failing == INT_MAX) return;
  auto note = std::make_shared<FailureNote>();
  if (comm.rank == failing) {
    note->status = error->status();
    fmt::format_to_n(note->step, sizeof note->step - 1, "{}", step);
    fmt::format_to_n(note->message, sizeof note->message - 1, "{}", error->what());
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(note.get(), static_cast<int>(sizeof(FailureNote)), MPI_BYTE, failing, comm.handle(), &request),
            "MPI_Ibcast");
  comm.wait({&request, 1}, what, false, note);
  if (error) throw *error;
  note->step[sizeof note->step - 1] = note->message[sizeof note->message - 1] = '\0';
  fail(GDAP_ERR_REMOTE, "rank {} failed in {} for the cross-memory attach exchange ({}): {}", failing, note->step,
       gdap_status_string(static_cast<gdap_status>(note->status)), note->message);
}

// Where the source section lies whole in a shared-memory segment gdap made (its storage says
// which), the segment and the bytes from its base to element (0, ..., 0).
void publish_segment(const gdap_array& src, Published& mine) {
  const SegmentMapping* segment = src.storage ? src.storage->segment() : nullptr;
  const ByteSpan span = byte_span(src);
  if (segment == nullptr || span.empty() || segment->identity.name.size() > kMaxSegmentName) return;
  const auto base = reinterpret_cast<uintptr_t>(segment->base);
  if (span.first < base || span.last - base >= static_cast<uintptr_t>(segment->identity.bytes)) return;
  mine.segment = segment->identity;
  mine.segment_offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(src.data()) - base);
  if (test_refuses("bounds")) mine.segment_offset = segment->identity.bytes;  // as if the section lay past its end
}

}  // namespace

std::string cma_share(MpiComm& comm, const Program& program, const Sections& sections) {
  const int64_t below = pack_below();         // checked on every rank, whatever it sends
  (void)swept();                               // likewise, so that a bad value fails before any rank moves a byte
  const bool in_segment = pack_to_segment();  // likewise
  const CmaState& state = state_of(comm);
  Published mine{static_cast<int64_t>(getpid()), reinterpret_cast<int64_t>(&state.probe), state.probe, 0, {}, 0, 0, {}, {}, 0, {}};
  if (sections.src) {
    mine.base = reinterpret_cast<int64_t>(sections.src->data());
    mine.strides = sections.src->section.strides;
    publish_segment(*sections.src, mine);
  }
  // Nothing is read once the ranks fell back to point-to-point, nor where some are on other nodes
  // (the probe will say no): no pack buffer then. A section its peers map is never packed.
  if (state.usable != false && comm.node_ranks == comm.size) {
    const Packing& packing = packing_for(comm, program, sections, mine.segment ? 0 : below);
    const PackBuffer& buffer = pack_buffer_for(comm, program, packing, in_segment);
    mine.pack_base = reinterpret_cast<int64_t>(buffer.data);
    mine.pack_bytes = packing.bytes;
    mine.sends = packing.sends;
    // Named while held, whether or not this program packs: a peer drops any other it maps of ours.
    if (buffer.segment) mine.pack_segment = buffer.segment->identity;
    if (mine.pack_segment && test_refuses("unmappable")) {  // as if it closed the segment: no peer opens it
      mine.pack_segment->name = fmt::format("/proc/{}/fd/{}", getpid(), INT_MAX);
    }
  }
  return encode(mine);
}

bool cma_usable(MpiComm& comm, const std::vector<std::string>& shares) {
  CmaState& state = state_of(comm);
  if (!state.usable) state.usable = lowest_failing(comm, probe(comm, shares), "the cross-memory attach probe") == INT_MAX;
  return *state.usable;
}

void cma_exchange(MpiComm& comm, const Program& program, const Sections& sections, const std::vector<std::string>& shares) {
  std::optional<Error> error;
  const CmaPlan* plan = nullptr;
  const char* step = "planning";  // where this rank is, for its peers should it fail
  bool sweep = true;
  noting(error, [&] {
    sweep = swept();
    plan = &plan_for(comm, program, sections, shares);
    step = "mapping its peers' shared-memory segments";
    refresh_mappings(comm, *plan, program.style().name);
    step = "packing";
    pack(comm, program, sections, shares[static_cast<size_t>(comm.rank)]);
    step = "reading its peers' memory";
  });
  // No rank reads a packed message before its sender packed it; a failure so far stops every rank
  // here, before anything is read.
  if (anyone_packs(shares)) meet(comm, error, "packing for the cross-memory attach exchange", step);
  noting(error, [&] {
    char* dst = sections.dst ? static_cast<char*>(sections.dst->data()) : nullptr;
    Mappings* mappings = comm.cache.find<Mappings>("exchange.cma.mappings");
    std::vector<const char*> sources(plan->senders.size() + 1, nullptr);  // the sweep's bases
    std::vector<std::vector<char>> read_instead(plan->senders.size());    // where a mapping was refused
    if (sections.src) sources[0] = static_cast<const char*>(sections.src->data());
    for (size_t i = 0; i < plan->senders.size(); ++i) {
      const Sender& s = plan->senders[i];
      if (s.way == Way::mapped) {
        sources[i + 1] = source_of(*mappings, s, read_instead[i]);
        continue;
      }
      if (!s.remote.empty()) read_from(s, s.local, s.remote);  // none where every message is mapped
      for (const Chunk& c : s.chunks) {
        read_from(s, c.local, c.remote);
        run_host_copies(c.unpack, plan->staging.data(), dst);
      }
    }
    if (sweep) {
      run_sweep(plan->sweep, sources, dst);
    } else {
      for (size_t i = 0; i < plan->senders.size(); ++i) run_host_copies(plan->senders[i].mapped, sources[i + 1], dst);
      run_host_copies(plan->local, sources[0], dst);
    }
  });
  // Whatever went wrong, every rank meets here: peers may still be reading this rank's section or
  // pack buffer.
  meet(comm, error, "the cross-memory attach exchange", step);
}

#else  // no cross-memory attach

std::string cma_share(MpiComm&, const Program&, const Sections&) {
  fail(GDAP_ERR_UNSUPPORTED, "GDAP_MPI_EXCHANGE=cma needs Linux's cross-memory attach (process_vm_readv)");
}
bool cma_usable(MpiComm&, const std::vector<std::string>&) { return false; }
void cma_exchange(MpiComm&, const Program&, const Sections&, const std::vector<std::string>&) {
  fail(GDAP_ERR_UNSUPPORTED, "GDAP_MPI_EXCHANGE=cma needs Linux's cross-memory attach (process_vm_readv)");
}

#endif

}  // namespace gdap::exchange
