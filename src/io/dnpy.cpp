// gdap_dnpy_save and gdap_dnpy_load (gdap.h, ".dnpy files"): each rank writes or reads its own
// `<prefix>_<rank>.dnpy`, the per-rank format of DistArray. Host sections are written straight from
// (or read straight into) their memory when C-contiguous; device sections are staged through
// pinned host memory, one copy each way. Errors are agreed over the communicator, so that every
// rank fails together and nothing is handed out unless every rank read its file.
#include "io/agreed.hpp"
#include "io/dnpy_format.hpp"
#include "io/files.hpp"
#include "io/settle.hpp"

#include "array/array.hpp"
#include "array/device_memory.hpp"
#include "array/memory.hpp"
#include "comm/comm.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "cuda/device.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace gdap::io {
namespace {

namespace fs = std::filesystem;

std::string file_of(const char* prefix, int64_t rank) {
  require(prefix, "prefix");
  if (*prefix == '\0') fail(GDAP_ERR_INVALID_ARGUMENT, "prefix is empty");
  return fmt::format("{}_{}.dnpy", prefix, rank);
}

// What every rank of a save or load must pass alike: the prefix (file_of has checked it).
CallFields prefix_fields(const char* prefix) {
  CallFields fields;
  fields.add_path("prefix", prefix);
  return fields;
}

// The array's global shape, from its dictionaries.
std::vector<int64_t> global_shape(const gdap_array& a) {
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < a.dims.ndim(); ++i) shape.push_back(a.dims[i].size);
  return shape;
}

// Visits every element of a strided N-d view in C order: f(byte offset from element (0, ..., 0)).
template <typename F>
void for_each_element(const std::vector<int64_t>& shape, const std::vector<int64_t>& byte_strides, F&& f) {
  for (int64_t n : shape) {
    if (n == 0) return;
  }
  const size_t nd = shape.size();
  std::vector<int64_t> index(nd, 0);
  int64_t offset = 0;
  for (;;) {
    f(offset);
    size_t a = nd;
    while (a > 0) {
      --a;
      if (++index[a] < shape[a]) {
        offset += byte_strides[a];
        break;
      }
      offset -= (shape[a] - 1) * byte_strides[a];
      index[a] = 0;
      if (a == 0) return;
    }
    if (nd == 0) return;
  }
}

std::vector<int64_t> byte_strides(const gdap_array& a) {
  const int64_t item = a.section.dtype.bits / 8;
  std::vector<int64_t> s;
  for (int64_t e : a.section.strides) s.push_back(checked_mul(e, item, "stride"));
  return s;
}

bool c_contiguous(const gdap_array& a) {
  int64_t want = 1;
  for (size_t i = a.section.shape.size(); i-- > 0;) {
    if (a.section.shape[i] != 1 && a.section.strides[i] != want) return false;
    want *= a.section.shape[i];
  }
  return true;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n = checked_mul(n, e, "element count");
  return n;
}

// [lo, hi): the bytes a section's elements cover, relative to element (0, ..., 0).
std::pair<int64_t, int64_t> span_of(const gdap_array& a) {
  const int64_t item = a.section.dtype.bits / 8;
  int64_t lo = 0, hi = item;
  const std::vector<int64_t> s = byte_strides(a);
  for (size_t i = 0; i < s.size(); ++i) {
    if (a.section.shape[i] == 0) return {0, 0};
    const int64_t reach = checked_mul(a.section.shape[i] - 1, s[i], "span");
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

// Pinned host memory on the section's device, freed with its scope.
struct Pinned {
  Allocation memory;
  Pinned(const gdap_array& a, int64_t bytes) : memory(allocate(gdap_device{GDAP_DEVICE_CUDA_HOST, a.section.device.id}, bytes)) {}
  ~Pinned() {
    if (memory.release) memory.release();
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
};

// A rank's file written under a temporary name of its own: commit puts it in place.
struct Unplaced {
  std::optional<Dir> dir;
  std::unique_ptr<NewFile> file;
};

// Writes `a` as a .dnpy file into `out`, not yet in place: an old file at `path` stays as it is
// until every rank has written its own (a failing rank leaves every rank's old file intact).
void write_unplaced(gdap_comm& comm, const gdap_array& a, const std::string& path, Unplaced& out) {
  const std::string heads = dnpy_heads(a.version, a.dims, a.section.dtype, a.section.shape);
  const int64_t item = a.section.dtype.bits / 8;
  const int64_t bytes = checked_mul(element_count(a.section.shape), item, "payload size");
  // The elements as C-ordered bytes: the section itself, or a packed copy.
  const char* origin = static_cast<const char*>(a.data());
  std::unique_ptr<Pinned> staged;
  if (memory_of(&a) == Memory::device) {
    cuda::synchronize_stream(comm.stream);  // queued writes to the section first
    const auto [lo, hi] = span_of(a);
    staged = std::make_unique<Pinned>(a, hi - lo);
    if (hi > lo) cuda::copy_bytes(staged->memory.data, origin + lo, hi - lo);
    origin = static_cast<const char*>(staged->memory.data) - lo;
  } else if (a.section.device.type != GDAP_DEVICE_CPU) {
    cuda::synchronize_stream(comm.stream);  // pinned or managed memory the device may still write
  }
  std::vector<char> packed;
  const char* payload = origin;
  if (!c_contiguous(a)) {
    packed.resize(static_cast<size_t>(bytes));
    char* cursor = packed.data();
    for_each_element(a.section.shape, byte_strides(a), [&](int64_t off) {
      std::memcpy(cursor, origin + off, static_cast<size_t>(item));
      cursor += item;
    });
    payload = packed.data();
  }
  // A temporary of its own in the file's folder, renamed into place by commit: a link planted at
  // the name is replaced, never written through, and a failed write leaves nothing behind.
  const fs::path target(path);
  out.dir.emplace(Dir::open(target.has_parent_path() ? target.parent_path().string() : ".", false));
  out.file = std::make_unique<NewFile>(*out.dir, target.filename().string());
  out.file->write(heads.data(), static_cast<int64_t>(heads.size()));
  out.file->write(payload, bytes);
  out.file->finish();  // an error the system reports only at fsync or close fails this step, on every rank
}

// The marker `<prefix>.gdap-saving` rank 0 keeps (flushed, with its folder) while ranks' files may
// be of two saves: one line per rank, `<rank> <hex> <1 if it had a file>`, so that after a crash
// every kept `.<prefix>_<rank>.dnpy.<hex>.old` can be put back and every new file with no previous
// one removed (docs/dnpy.md). Made by the constructor in rank 0's folder `dir`; removed by done().
class SavingMarker {
 public:
  static std::string name(const std::string& prefix_name) { return prefix_name + ".gdap-saving"; }

  SavingMarker(const Dir& dir, const std::string& prefix_name, const std::vector<std::string>& lines)
      : file_(dir, name(prefix_name)) {
    std::string text = "gdap .dnpy save in progress: rank, the hex of its hidden files, had a previous file (docs/dnpy.md)\n";
    for (const std::string& line : lines) text += line + "\n";
    file_.write(text.data(), static_cast<int64_t>(text.size()));
    file_.finish();  // on the disk before any file changes
    lock_ = file_.commit_locked();  // a live save's marker refuses this save; a crashed one's is replaced
    try {
      file_.sync_folder();
    } catch (const Error& e) {  // no file has changed yet: the marker goes, or it would block every later load
      const std::string marker = name(prefix_name);
      if (::unlinkat(dir.fd(), marker.c_str(), 0) != 0) {
        fail(e.status(), "{}; removing the marker failed too: {} (no file was changed: remove {}/{} by hand)", e.what(),
             std::strerror(errno), dir.path(), marker);
      }
      fail(e.status(), "{} (no file was changed: the marker is removed and the previous files stay)", e.what());
    }
  }
  // The files are of one save again: the marker removed and that flushed.
  void done(const Dir& dir, const std::string& prefix_name) {
    const std::string marker = name(prefix_name);
    if (::unlinkat(dir.fd(), marker.c_str(), 0) != 0) {
      fail(GDAP_ERR_IO, "{}/{}: cannot remove the save's marker: {}", dir.path(), marker, std::strerror(errno));
    }
    file_.sync_folder();
  }

 private:
  NewFile file_;
  Fd lock_;  // held while the marker is there: loads wait, other saves are refused, after a crash it is free
};

// True while a save is replacing the files of `prefix` (its marker is there, locked by it, or it
// vanished or changed while being looked at: read again); a marker no save holds, a crashed
// save's, is GDAP_ERR_IO: the files may be of two saves.
bool save_under_way(const std::string& prefix) {
  const std::string marker = SavingMarker::name(prefix);
  struct stat st {};
  if (system_calls().lstat(marker.c_str(), &st) != 0) return false;
  if (locked_elsewhere(marker)) return true;
  // A save may have removed its marker (or put a new one) between the two looks: read again.
  struct stat now {};
  if (system_calls().lstat(marker.c_str(), &now) != 0 || shared_identity(now) != shared_identity(st)) return true;
  fail(GDAP_ERR_IO, "{}: a save of these files did not finish (its marker {} is there, held by no save): the files may be of "
       "two saves; see docs/dnpy.md, What survives a crash", prefix, marker);
}

// A rank's file as a load saw it: a save renames a new file over it (a new inode), or puts the old
// one back (a new ctime).
std::string identity_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "absent";
  return shared_identity(st);
}

// Every rank writes, flushes and closes its temporary (`write`, into `written`; the ranks have
// agreed on the call's fields already, so a refused save writes nothing), agreed as one step with
// the exchange of their names: rank 0 writes the marker, then each rank renames its temporary over
// its file, keeping the old one aside. If any rank's rename fails, every rank puts its old file
// back (or removes its new one where there was none), so that the files are never of two saves,
// and the marker goes; the error is the failing rank's, naming its path. On success the marker
// goes, then the kept old files.
void place_everywhere(gdap_comm& comm, const std::function<void()>& write, Unplaced& written, const std::string& prefix_name) {
  const std::vector<std::string> lines = agree_shares(comm, [&] {
    write();
    return fmt::format("{} {} {}", comm.rank, written.file->hex(), written.file->has_old() ? 1 : 0);
  });
  NewFile& file = *written.file;
  std::optional<SavingMarker> marker;
  agree(comm, [&] {
    if (comm.rank == 0) marker.emplace(*written.dir, prefix_name, lines);
  });
  try {
    agree(comm, [&] {
      file.commit_keeping_old();
      file.sync_folder();
    });
  } catch (const Error& failed) {
    try {
      agree(comm, [&] {
        file.restore_old();
        file.sync_folder();
      });
      agree(comm, [&] {
        if (comm.rank == 0) marker->done(*written.dir, prefix_name);
      });
    } catch (const Error& restoring) {
      throw Error(failed.status(), fmt::format("{}; putting the previous files back failed too: {} (the marker {} "
                                               "stays: see docs/dnpy.md to finish by hand)", failed.what(), restoring.what(),
                                               SavingMarker::name(prefix_name)));
    }
    throw Error(failed.status(), fmt::format("{} (every rank's previous file is back in place)", failed.what()));
  }
  agree(comm, [&] {
    if (comm.rank == 0) marker->done(*written.dir, prefix_name);
  });
  agree(comm, [&] { file.drop_old(); });
}

// The grid coordinates in dim_data must be this rank's (C order over the grid, as MPI_Cart_create).
void check_rank(const DnpyHeader& h, const gdap_comm& comm, const std::string& path) {
  int64_t grid = 1, rank = 0;
  std::vector<int64_t> coords;
  for (int64_t i = 0; i < h.dims.ndim(); ++i) {
    grid = checked_mul(grid, h.dims[i].proc_grid_size, "process grid size");
    rank = rank * h.dims[i].proc_grid_size + h.dims[i].proc_grid_rank;
    coords.push_back(h.dims[i].proc_grid_rank);
  }
  if (h.dims.ndim() > 0 && grid != comm.size) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}: dim_data's process grid has {} ranks, the communicator {}", path, grid, comm.size);
  }
  if (h.dims.ndim() > 0 && rank != comm.rank) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}: dim_data's grid coordinates ({}) are rank {}'s, not rank {}'s", path,
         fmt::join(coords, ", "), rank, comm.rank);
  }
}

void load(gdap_comm& comm, gdap_device device, const std::string& path, std::unique_ptr<gdap_array>& made) {
  const Regular f = *open_regular(path, false);  // a FIFO or a device is refused, never waited on
  std::vector<unsigned char> head(static_cast<size_t>(std::min(f.size, kMaxDnpyHeads)));
  read_at(f, head.data(), static_cast<int64_t>(head.size()), 0, path);
  const DnpyHeader h = parse_dnpy(head, f.size, path);
  check_rank(h, comm, path);
  try {
    made = create_array(h.dtype, device, h.dims.data(), h.dims.ndim());
  } catch (const Error& e) {
    throw Error(e.status(), fmt::format("{}: {}", path, e.what()));
  }
  gdap_array& a = *made;
  a.version = h.version;
  if (h.payload_bytes == 0) return;
  // The payload, as the file holds it, in host memory the array's own (C order on the host) or a staging buffer.
  const bool host = memory_of(&a) == Memory::host;
  std::unique_ptr<Pinned> staged;
  char* raw = static_cast<char*>(a.data());
  std::vector<char> fortran;
  if (!host) {
    staged = std::make_unique<Pinned>(a, h.payload_bytes);
    raw = static_cast<char*>(staged->memory.data);
  }
  char* target = raw;
  if (h.fortran_order && h.shape.size() > 1) {
    fortran.resize(static_cast<size_t>(h.payload_bytes));
    raw = fortran.data();
  }
  read_at(f, raw, h.payload_bytes, h.payload_offset, path);
  if (raw != target) {  // Fortran order: element (i0, i1, ...) at sum(i_k * prod(shape[<k])) to C order
    const int64_t item = h.dtype.bits / 8;
    std::vector<int64_t> strides;
    int64_t step = item;
    for (int64_t e : h.shape) {
      strides.push_back(step);
      step *= e;
    }
    char* out = target;
    for_each_element(h.shape, strides, [&](int64_t off) {
      std::memcpy(out, raw + off, static_cast<size_t>(item));
      out += item;
    });
  }
  if (!host) {
    cuda::copy_bytes(a.data(), target, h.payload_bytes);
  }
}

constexpr auto kSettleWait = std::chrono::seconds(3);  // a save's renames take far less

// The ranks agree on the prefix before any rank reads (a refused load reads nothing, and a rank
// whose other prefix names no files is still refused as the rank that differs). Then every rank
// loads its file while no save is replacing them, and checks after every rank has read that its
// file is still the one it read and no save began: a load never mixes two saves' files across
// ranks. Each try costs one more meeting of the ranks, which also agrees on its reads' failures;
// GDAP_ERR_IO naming the marker when a save is still under way once any rank has waited
// kSettleWait (all give up together).
void load_settled(gdap_comm& comm, gdap_device device, const char* prefix, gdap_array** out, std::unique_ptr<gdap_array>& made) {
  std::string path;
  agree_gather(comm, [&] {
    require(out, "out");
    path = file_of(prefix, comm.rank);
    return share_of(prefix_fields(prefix));
  }, fields_mismatch("gdap_dnpy_load"));
  SettleClock since;
  for (;;) {
    std::string seen;
    bool busy = false;
    std::exception_ptr failed;
    try {
      busy = save_under_way(prefix);
      if (!busy) {
        seen = identity_of(path);
        load(comm, device, path, made);
      }
    } catch (...) {
      failed = std::current_exception();
    }
    const std::vector<Settled> votes = settled_votes(comm, since, kSettleWait, [&] {
      if (failed) std::rethrow_exception(failed);  // this rank's read failed: every rank fails
      if (busy || save_under_way(prefix)) return "a save's marker " + SavingMarker::name(prefix);
      return identity_of(path) == seen ? std::string() : path + " replaced while being read";
    }, [] { return std::string(); });
    if (!unsettled(votes)) return;
    made.reset();
    if (late(votes)) {
      fail(GDAP_ERR_IO, "{}: a save of these files was still in progress (found its marker {}) after waiting {} s for it: "
           "try again once it has finished", prefix, SavingMarker::name(prefix), kSettleWait.count());
    }
    if (!since) since = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace
}  // namespace gdap::io

extern "C" GDAP_API gdap_status gdap_dnpy_save(gdap_comm* comm, const gdap_array* section, const char* prefix) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_dnpy_save");
    gdap::io::Unplaced written;
    std::string path;
    // The ranks agree on their checks and on passing rank 0's prefix, dtype and global shape before
    // any rank writes (a refused save writes nothing); each then writes its temporary file, and
    // only once every rank has does any rank's file replace the old one.
    gdap::agree_gather(c, [&] {
      gdap::handle(section, "section");
      path = gdap::io::file_of(prefix, c.rank);
      if (gdap::memory_of(section) == gdap::Memory::none) {
        gdap::fail(GDAP_ERR_UNSUPPORTED, "the section's memory (device type {}) cannot be read by gdap", section->section.device.type);
      }
      gdap::io::CallFields mine = gdap::io::prefix_fields(prefix);
      mine.add_dtype(section->section.dtype);
      mine.add_shape(gdap::io::global_shape(*section));
      return gdap::io::share_of(mine);
    }, gdap::io::fields_mismatch("gdap_dnpy_save"));
    gdap::io::place_everywhere(c, [&] { gdap::io::write_unplaced(c, *section, path, written); }, written,
                               std::filesystem::path(prefix).filename().string());
  });
}

extern "C" GDAP_API gdap_status gdap_dnpy_load(gdap_array** out, gdap_comm* comm, const char* prefix, gdap_device device) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_dnpy_load");
    std::unique_ptr<gdap_array> made;
    gdap::io::load_settled(c, device, prefix, out, made);
    *out = made.release();
  });
}

// The 0.1 names, kept for one release (gdap.h, "Deprecated names").
extern "C" GDAP_API gdap_status gdap_save_dnpy(gdap_comm* comm, const gdap_array* section, const char* prefix) {
  return gdap_dnpy_save(comm, section, prefix);
}

extern "C" GDAP_API gdap_status gdap_load_dnpy(gdap_comm* comm, gdap_array** out, const char* prefix, gdap_device device) {
  return gdap_dnpy_load(out, comm, prefix, device);
}
