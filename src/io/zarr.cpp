// Collective save and load of a distributed array as a Zarr v3 store (gdap.h, "Zarr v3 stores").
// Each rank writes the shards (or chunks) of its own blocks, so every file has one writer, and
// reads only the units (a shard's inner chunks, or chunks) its owned elements fall in; both walk
// its owned runs cut at unit boundaries (zarr_pieces.hpp).
#include "io/agreed.hpp"
#include "io/parallel.hpp"
#include "io/settle.hpp"
#include "io/zarr_chunks.hpp"
#include "io/zarr_pieces.hpp"
#include "io/zarr_swap.hpp"

#include "array/array.hpp"
#include "array/layout.hpp"
#include "array/memory.hpp"
#include "comm/comm.hpp"
#include "core/checked.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "cuda/device.hpp"
#include "maps/layouts.hpp"
#include "maps/map.hpp"
#include "plan/redistribute.hpp"
#include "protocol/dim.hpp"

#include <fmt/format.h>

#ifdef GDAP_HAVE_ZSTD
#include <zstd.h>
#endif

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

static_assert(std::endian::native == std::endian::little, "gdap's Zarr codec writes host order as little endian");

namespace gdap::io {
namespace {

// A load decodes its units a batch at a time: at most this many shard files open at once (far
// below any descriptor limit), and at most this many units listed (each a few small vectors).
constexpr size_t kOpenShards = 64, kBatchUnits = 4096;

namespace fs = std::filesystem;

// A load's private copy of a section, or the host staging of a device section: tens of MiB to
// gigabytes filled once and freed. In transparent huge pages
// where the kernel offers them on request (madvise), so that filling it takes one page fault per
// 2 MiB instead of one per 4 KiB, and freeing it is as cheap.
class LargeBuffer {
 public:
  char* allocate(size_t n) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t rounded = (std::max<size_t>(n, 1) + kHuge - 1) / kHuge * kHuge;
    bytes_.reset(static_cast<char*>(std::aligned_alloc(kHuge, rounded)));
    if (!bytes_) throw std::bad_alloc();
    if (rounded >= kHuge) static_cast<void>(madvise(bytes_.get(), rounded, MADV_HUGEPAGE));  // a hint only
    return bytes_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> bytes_;
};

// The byte range [lo, hi) of a section's elements, relative to its element (0, ..., 0).
std::pair<int64_t, int64_t> span_of(const gdap_array& a) {
  const int64_t item = a.section.dtype.bits / 8 * a.section.dtype.lanes;
  int64_t lo = 0, hi = item;
  for (size_t i = 0; i < a.section.shape.size(); ++i) {
    if (a.section.shape[i] == 0) return {0, 0};
    const int64_t reach = checked_mul(a.section.shape[i] - 1, checked_mul(a.section.strides[i], item, "stride"), "span");
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

// Whether writing `elements` elements of the section overwrites every byte of its span: its strides
// are dense (some order of its axes is C order, without gaps or overlaps) and the span holds exactly
// that many elements. A load that covers the span need not copy a device section in first.
bool covers_span(const gdap_array& a, int64_t elements) {
  std::vector<std::pair<int64_t, int64_t>> axes;  // (|stride|, extent) of the axes longer than 1
  for (size_t i = 0; i < a.section.shape.size(); ++i) {
    if (a.section.shape[i] > 1) axes.emplace_back(std::abs(a.section.strides[i]), a.section.shape[i]);
  }
  std::sort(axes.begin(), axes.end());
  int64_t dense = 1;
  for (const auto& [stride, extent] : axes) {
    if (stride != dense) return false;
    dense *= extent;
  }
  const auto [lo, hi] = span_of(a);
  return dense == elements && hi - lo == elements * (a.section.dtype.bits / 8 * a.section.dtype.lanes);
}

// How many elements per-dimension pieces name: the product of each dimension's total length.
int64_t count_of(const std::vector<AxisPieces>& pieces) {
  int64_t n = 1;
  for (const AxisPieces& axis : pieces) {
    int64_t along = 0;
    for (const auto& [unit, list] : axis) {
      for (const Piece& p : list) along += p.length;
    }
    n *= along;
  }
  return n;
}

// The section's elements readable and writable on the host: the section itself for host
// memory, or a host copy of its span for device memory (written back by `flush`). The copy is not
// zeroed (a device section of gigabytes would be cleared for nothing): `copy_in` false is for a
// caller that overwrites the whole span.
class Staged {
 public:
  Staged(const gdap_array& a, bool copy_in) : array_(a) {
    const int64_t item = a.section.dtype.bits / 8 * a.section.dtype.lanes;
    for (int64_t s : a.section.strides) view_.strides.push_back(checked_mul(s, item, "stride"));
    if (memory_of(&a) != Memory::device) {
      view_.origin = static_cast<char*>(a.data());
      return;
    }
    std::tie(lo_, hi_) = span_of(a);
    if (hi_ == lo_) return;  // nothing to stage: an empty section is left as the host's
    host_ = copy_.allocate(static_cast<size_t>(hi_ - lo_));  // not zeroed
    if (copy_in) cuda::copy_bytes(host_, static_cast<char*>(a.data()) + lo_, hi_ - lo_);
    view_.origin = host_ - lo_;
  }
  const HostView& view() const { return view_; }
  bool on_device() const { return host_ != nullptr; }
  void flush() const {
    if (hi_ > lo_) cuda::copy_bytes(static_cast<char*>(array_.data()) + lo_, host_, hi_ - lo_);
  }

 private:
  const gdap_array& array_;
  HostView view_;
  LargeBuffer copy_;
  char* host_ = nullptr;  // copy_'s bytes, or null for a host section (or an empty one)
  int64_t lo_ = 0, hi_ = 0;
};

void check_section(const gdap_comm& comm, const gdap_map& map, const gdap_array& a) {
  if (map.nranks != comm.size) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the map has {} ranks, the communicator {}", map.nranks, comm.size);
  }
  if (a.ndim() != map.ndim()) fail(GDAP_ERR_INVALID_ARGUMENT, "the section has {} dimensions, the map {}", a.ndim(), map.ndim());
  for (int64_t d = 0; d < map.ndim(); ++d) {
    const int64_t want = local_extent(map.dim(comm.rank, d));
    if (a.section.shape[static_cast<size_t>(d)] != want) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "dimension {}: the section has extent {}, the map gives rank {} extent {}", d,
           a.section.shape[static_cast<size_t>(d)], comm.rank, want);
    }
  }
  if (zarr_type_name(a.section.dtype) == nullptr) {
    fail(GDAP_ERR_UNSUPPORTED, "dtype {} has no Zarr v3 data_type", dtype_text(a.section.dtype));
  }
  if (memory_of(&a) == Memory::none) fail(GDAP_ERR_UNSUPPORTED, "the section's memory cannot be read by gdap");
}

// The chunk extent along each dimension when every chunk has one owner (equal blocks, cyclic
// blocks, undistributed), or nothing when the layout must be redistributed first.
std::optional<std::vector<int64_t>> owner_chunks(const gdap_map& map) {
  std::vector<int64_t> chunk;
  for (const AxisMap& axis : map.axes) {
    if (axis.size() == 0 || (axis.grid_size() == 1 && axis.dist_type() != GDAP_DIST_UNSTRUCTURED)) {
      chunk.push_back(std::max<int64_t>(axis.size(), 1));
    } else if (axis.dist_type() == GDAP_DIST_BLOCK && axis.even_width() > 0) {
      chunk.push_back(axis.even_width());
    } else if (axis.dist_type() == GDAP_DIST_CYCLIC) {
      chunk.push_back(block_size_of(axis.dim(0)));
    } else {
      return std::nullopt;
    }
  }
  return chunk;
}

// Rank `rank`'s dictionaries of equal blocks over `map`'s grid (no padding).
std::vector<gdap_dim> even_blocks(const gdap_map& map, int64_t rank) {
  std::vector<gdap_dim> dims;
  for (int64_t a = 0; a < map.ndim(); ++a) {
    const auto i = static_cast<size_t>(a);
    dims.push_back(even_block(map.global_shape[i], map.grid_shape[i], map.coord(rank, a)));
  }
  return dims;
}

// A section moved to equal blocks on its map's grid, and what it took.
struct EvenBlocks {
  std::unique_ptr<gdap_map> map;
  std::unique_ptr<gdap_plan> plan;
  std::unique_ptr<gdap_array> array;
};

// Equal blocks on `map`'s grid: where a save's chunks lie when the map's own blocks are not chunks.
std::unique_ptr<gdap_map> even_blocks_map(const gdap_map& map) {
  std::vector<gdap_dim> all;
  for (int64_t r = 0; r < map.nranks; ++r) {
    const std::vector<gdap_dim> dims = even_blocks(map, r);
    all.insert(all.end(), dims.begin(), dims.end());
  }
  return std::make_unique<gdap_map>(map.nranks, map.ndim(), all.data());
}

// Redistributes `section` to the equal blocks of `tmp.map` (collective), into `tmp`.
void to_even_blocks(gdap_comm& comm, const gdap_map& map, const gdap_array& section, EvenBlocks& tmp) {
  agree(comm, [&] {
    tmp.plan = plan::make_plan(map, *tmp.map, section.section.dtype, comm.rank);
    const std::vector<gdap_dim> mine = even_blocks(map, comm.rank);
    tmp.array = create_array(section.section.dtype, section.section.device, mine.data(), map.ndim());
  });
  const CollectiveCall nested(comm, "gdap_redistribute");  // within the save: its sections are not the caller's
  plan::redistribute(comm, tmp.plan.get(), &section, tmp.array.get());
  if (memory_of(&section) == Memory::device) cuda::synchronize_stream(comm.stream);
}

// What the thing at `status` is, for messages.
const char* kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::regular: return "a file";
    case fs::file_type::directory: return "a folder";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    default: return "something else";
  }
}

// The Zarr array store at `path` (a folder): its metadata when zarr.json is a regular file (not a
// link) that reads as Zarr v3 array metadata; nothing when there is no zarr.json and no "c". Any
// other sign of something there is refused: only a provable store may be reported or replaced.
std::optional<ZarrMeta> existing_store(const std::string& path) {
  std::error_code ec;
  const fs::file_status meta_file = fs::symlink_status(path + "/zarr.json", ec);
  if (!fs::exists(meta_file)) {
    const fs::file_status chunks = fs::symlink_status(path + "/c", ec);
    if (fs::exists(chunks)) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "{}: holds \"c\" ({}) but no zarr.json: not a Zarr store, so not replaced; nothing was removed",
           path, kind_of(chunks));
    }
    return std::nullopt;
  }
  if (!fs::is_regular_file(meta_file)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}: its zarr.json is {}, not a file: not a Zarr store, so not replaced; nothing was removed",
         path, kind_of(meta_file));
  }
  try {
    return read_meta(path);
  } catch (const Error& e) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}: its zarr.json is not Zarr v3 array metadata gdap reads ({}): not replaced; nothing was removed",
         path, e.what());
  }
}

// The entries of the store `meta` describes at `path`, in the order an overwrite removes them:
// zarr.json, its chunk files, then their folders deepest first. Everything in the folder is checked:
// an entry that is not one of the store's chunk keys (a stray file, a link, a name outside the
// chunk grid) refuses the whole overwrite, naming it.
std::vector<fs::path> store_entries(const std::string& path, const ZarrMeta& meta) {
  std::vector<fs::path> files, folders;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string relative = it->path().lexically_relative(path).generic_string();
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    if (relative == "zarr.json") continue;
    if (it.depth() == 0 && is_save_temporary(relative)) {  // an earlier save's leftover, never the store's data
      it.disable_recursion_pending();
      continue;
    }
    if (fs::is_regular_file(status) && in_key_space(meta, relative, false)) {
      files.push_back(it->path());
    } else if (fs::is_directory(status) && in_key_space(meta, relative, true)) {
      folders.push_back(it->path());
    } else {
      fail(GDAP_ERR_INVALID_ARGUMENT, "{}: holds {} ({}), which is not a chunk of the Zarr store there: not replaced; nothing was removed",
           path, relative, kind_of(status));
    }
  }
  if (ec) fail(GDAP_ERR_IO, "{}: cannot list the old store: {}; nothing was removed", path, ec.message());
  std::sort(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  files.insert(files.begin(), fs::path(path) / "zarr.json");
  files.insert(files.end(), folders.begin(), folders.end());
  return files;
}

// Fails unless this process may create and remove entries in the folder `folder` (write and
// search permission), naming `path` and `what` it was going to do there.
void check_writable(const std::string& path, const fs::path& folder, const char* what) {
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    fail(GDAP_ERR_IO, "{}: cannot {} in {}: {}; nothing was removed", path, what, folder.string(), std::strerror(errno));
  }
}

// Fails unless the folder `path` (absent) could be created: its nearest existing ancestor is a
// folder this process may write in.
void check_creatable(const std::string& path) {
  std::error_code ec;
  fs::path above = fs::path(path).lexically_normal();
  do {
    above = above.has_parent_path() && above.parent_path() != above ? above.parent_path() : fs::path(".");
  } while (!fs::exists(fs::status(above, ec)) && above != ".");
  if (!fs::is_directory(fs::status(above, ec))) fail(GDAP_ERR_IO, "{}: cannot create the folder: {} is not a folder", path, above.string());
  check_writable(path, above, "create the folder");
}

// An overwrite moves the old store's entries aside and removes them: a working folder inside one
// of its subfolders would be removed with it, so that every relative path the caller uses would
// fail. (The store's own folder stays: a working folder there is fine.)
void refuse_working_folder(const std::string& path, const fs::path& place) {
  std::error_code ec;
  const fs::path here = fs::current_path(ec);
  const fs::path inside = ec ? fs::path() : here.lexically_relative(place);
  if (!inside.empty() && inside != "." && *inside.begin() != "..") {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}: the working folder {} is inside the store's {}, which an overwrite removes: save "
         "from outside it; nothing was removed", path, here.string(), inside.begin()->string());
  }
}

// Where a save to `path` puts its store and what is there (rank 0, before any rank writes; the
// old store listed here once, for its removal after the swap), after checking, changing nothing,
// that it may go ahead: the path is a folder or can be created, a store there is replaced only
// with overwrite and only when it is provably a Zarr array store, and this process may write
// in the folder (where the new store is written) and remove the old store's entries.
StorePlace survey_place(const std::string& path, const gdap_zarr_options& o) {
  std::error_code ec;
  const fs::file_status at = fs::status(path, ec);  // the caller's own path: a link to a folder is followed
  if (fs::exists(at) && !fs::is_directory(at)) fail(GDAP_ERR_IO, "{}: exists and is not a folder", path);
  StorePlace where;
  where.shown = path;
  const fs::path absolute = fs::absolute(path, ec);  // else a relative path none of which exists stays relative
  if (!ec) where.place = fs::weakly_canonical(absolute, ec);
  if (ec) fail(GDAP_ERR_IO, "{}: cannot resolve the path: {}", path, ec.message());
  if (!where.place.has_filename()) where.place = where.place.parent_path();  // "store/"
  if (!fs::exists(at)) {
    check_creatable(path);
    return where;
  }
  check_writable(path, path, "write the store");
  where.lock = lock_place(path, path);  // before looking: another save's swap is never seen half done
  const std::optional<ZarrMeta> old = existing_store(path);
  if (!old) {
    where.was = StorePlace::Was::folder;
    return where;
  }
  if (o.overwrite == 0) fail(GDAP_ERR_INVALID_ARGUMENT, "{}: a Zarr store is already there (set overwrite to replace it)", path);
  where.was = StorePlace::Was::store;
  refuse_working_folder(path, where.place);
  const std::vector<fs::path> entries = store_entries(path, *old);
  const fs::path* checked = nullptr;  // entries come folder by folder: each folder checked once
  for (const fs::path& p : entries) {
    if (checked == nullptr || p.parent_path() != checked->parent_path()) {
      check_writable(path, p.parent_path(), "remove the old store's entries");
      checked = &p;
    }
    const std::string top = p.lexically_relative(path).begin()->string();  // zarr.json comes first
    if (std::find(where.old_top.begin(), where.old_top.end(), top) == where.old_top.end()) where.old_top.push_back(top);
  }
  return where;
}

gdap_zarr_options checked_options(const gdap_zarr_options* options) {
  if (options == nullptr) return GDAP_ZARR_OPTIONS_INIT;
  const gdap_zarr_options o =
      read_versioned(options, gdap_zarr_options GDAP_ZARR_OPTIONS_INIT, "options", "GDAP_ZARR_OPTIONS_INIT");
  if (o.codec < GDAP_ZARR_RAW || o.codec > GDAP_ZARR_BLOSC_ZSTD) fail(GDAP_ERR_INVALID_ARGUMENT, "options->codec {} is not a gdap_zarr_codec", o.codec);
  const bool blosc = o.codec == GDAP_ZARR_BLOSC_LZ4 || o.codec == GDAP_ZARR_BLOSC_ZSTD;
  if (o.codec == GDAP_ZARR_ZSTD && (o.zstd_level < 0 || o.zstd_level > 22)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "options->zstd_level {} is not in 0..22", o.zstd_level);
  }
  if (blosc && (o.zstd_level < 0 || o.zstd_level > 9)) fail(GDAP_ERR_INVALID_ARGUMENT, "options->zstd_level {} is not a blosc level 0..9", o.zstd_level);
  if (o.layout != GDAP_ZARR_SHARDS && o.layout != GDAP_ZARR_CHUNKS) fail(GDAP_ERR_INVALID_ARGUMENT, "options->layout {} is not a gdap_zarr_layout", o.layout);
  if (o.shuffle < GDAP_ZARR_SHUFFLE || o.shuffle > GDAP_ZARR_BITSHUFFLE) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "options->shuffle {} is not a gdap_zarr_shuffle", o.shuffle);
  }
  if (o.chunk_bytes < 0 || o.chunk_bytes > kMaxChunkBytes) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "options->chunk_bytes {} is not in 0..{}", o.chunk_bytes, kMaxChunkBytes);
  }
#ifndef GDAP_HAVE_ZSTD
  if (o.codec == GDAP_ZARR_ZSTD) fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without zstd: use GDAP_ZARR_RAW");
#endif
#ifndef GDAP_HAVE_BLOSC
  if (blosc) fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without blosc: use GDAP_ZARR_ZSTD or GDAP_ZARR_RAW");
#endif
  return o;
}

// Checked options as they take effect: the defaults spelled out (chunk_bytes 0 is 2 MiB, a zstd
// level 0 is zstd's own default, a blosc level 0 is 5) and the fields the save does not use set to
// their defaults (zstd_level for GDAP_ZARR_RAW, shuffle for codecs other than blosc, chunk_bytes
// under GDAP_ZARR_CHUNKS), so that ranks whose options write the same store agree, however each
// spelled them, and zarr.json records the level the chunks were written with.
gdap_zarr_options effective_options(gdap_zarr_options o) {
  const gdap_zarr_options defaults = GDAP_ZARR_OPTIONS_INIT;
  const bool blosc = o.codec == GDAP_ZARR_BLOSC_LZ4 || o.codec == GDAP_ZARR_BLOSC_ZSTD;
  if (o.codec == GDAP_ZARR_RAW) o.zstd_level = 0;
#ifdef GDAP_HAVE_ZSTD  // without it checked_options refuses GDAP_ZARR_ZSTD
  if (o.codec == GDAP_ZARR_ZSTD && o.zstd_level == 0) o.zstd_level = ZSTD_CLEVEL_DEFAULT;  // what zstd takes 0 for
#endif
  if (blosc && o.zstd_level == 0) o.zstd_level = 5;
  if (!blosc) o.shuffle = defaults.shuffle;
  if (o.layout == GDAP_ZARR_CHUNKS) o.chunk_bytes = 0;
  else if (o.chunk_bytes == 0) o.chunk_bytes = kDefaultInnerBytes;
  return o;
}

// What every rank of a save must pass alike: where, how and what it writes (`o`, its options as
// they take effect: effective_options).
CallFields save_fields(const std::string& path, const gdap_zarr_options& o, const gdap_map& map, gdap_dtype dtype) {
  static constexpr const char* kCodecs[] = {"raw", "zstd", "blosc-lz4", "blosc-zstd"};
  static constexpr const char* kShuffles[] = {"shuffle", "noshuffle", "bitshuffle"};
  CallFields fields;
  fields.add_path("path", path);
  fields.add("options->codec", kCodecs[o.codec]);
  fields.add("options->zstd_level", std::to_string(o.zstd_level));
  fields.add("options->overwrite", o.overwrite != 0 ? "nonzero" : "0");
  fields.add("options->layout", o.layout == GDAP_ZARR_SHARDS ? "GDAP_ZARR_SHARDS" : "GDAP_ZARR_CHUNKS");
  fields.add("options->shuffle", kShuffles[o.shuffle]);
  fields.add("options->chunk_bytes", std::to_string(o.chunk_bytes));
  fields.add_dtype(dtype);
  fields.add_map(map);
  return fields;
}

// Inner chunks for shards of `shard`: each dimension a divisor of the shard's, the largest first
// halved (to its next divisor) until a chunk holds at most `target` bytes, so that they stay about
// as wide in every dimension and a reader of another layout reads little it does not need.
std::vector<int64_t> inner_chunks(const std::vector<int64_t>& shard, int64_t itemsize, int64_t target) {
  std::vector<int64_t> inner = shard;
  auto bytes = [&] {
    int64_t b = itemsize;
    for (int64_t e : inner) b = checked_mul(b, e, "inner chunk bytes");
    return b;
  };
  while (bytes() > target) {
    const auto widest = std::max_element(inner.begin(), inner.end());
    if (*widest <= 1) break;
    const size_t a = static_cast<size_t>(widest - inner.begin());
    int64_t d = *widest / 2;
    while (shard[a] % d != 0) --d;  // the largest divisor of the shard's extent at most half as wide
    inner[a] = d;
  }
  return inner;
}

// Along each dimension, how many units (a shard's inner chunks) a chunk holds: 1 when not sharded.
std::vector<int64_t> units_per_chunk(const ZarrMeta& meta) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < meta.chunk.size(); ++i) r.push_back(meta.chunk[i] / meta.unit[i]);
  return r;
}

// Copies the elements of one unit of the section into `bytes` (the unit's C-ordered bytes), with
// the fill value (0) where the unit reaches past the array.
void gather_unit(const UnitPieces& pieces, const ZarrMeta& meta, const std::vector<int64_t>& strides, const HostView& view,
                 std::vector<char>& bytes) {
  bool whole = true;
  for (size_t a = 0; a < pieces.size(); ++a) {
    int64_t n = 0;
    for (const Piece& p : *pieces[a]) n += p.length;
    whole = whole && n == meta.unit[a];
  }
  if (!whole) std::fill(bytes.begin(), bytes.end(), 0);
  copy_to_unit(pieces, strides, view, meta.itemsize, bytes.data());
}

// Writes one shard (every inner chunk of outer chunk `outer`, in C order) from this rank's pieces:
// `workers` inner chunks at a time gathered and encoded on as many threads, then written in order.
void write_shard(const Dir& store, const ZarrMeta& meta, const std::vector<int64_t>& outer, const std::vector<AxisPieces>& units,
                 const std::vector<int64_t>& strides, const HostView& view, int workers) {
  const size_t nd = outer.size();
  const std::vector<int64_t> ratio = units_per_chunk(meta);
  std::vector<int64_t> within(nd, 0);
  std::vector<std::optional<UnitPieces>> inner;  // per inner chunk in C order: its pieces, none past the array's end
  UnitPieces pieces(nd);
  for (bool more = true; more;) {
    bool inside = true;
    for (size_t a = 0; a < nd && inside; ++a) {
      const auto it = units[a].find(outer[a] * ratio[a] + within[a]);
      inside = it != units[a].end();
      if (inside) pieces[a] = &it->second;
    }
    inner.push_back(inside ? std::optional<UnitPieces>(pieces) : std::nullopt);
    more = false;
    for (size_t a = nd; a-- > 0 && !more;) {
      more = ++within[a] < ratio[a];
      if (!more) within[a] = 0;
    }
  }
  ShardWriter shard(store, chunk_key(meta, outer), meta);
  struct Slot {
    std::vector<char> bytes;
    Buffer a, b;
    std::string_view encoded;
  };
  std::vector<Slot> slots(static_cast<size_t>(workers));
  for (Slot& slot : slots) slot.bytes.resize(static_cast<size_t>(strides[0] * meta.unit[0]));
  const auto n = static_cast<int64_t>(inner.size());
  for (int64_t first = 0; first < n; first += workers) {
    const int64_t batch = std::min<int64_t>(workers, n - first);
    parallel_for(batch, workers, [&](int64_t j, int) {
      const std::optional<UnitPieces>& p = inner[static_cast<size_t>(first + j)];
      if (!p) return;
      Slot& slot = slots[static_cast<size_t>(j)];
      gather_unit(*p, meta, strides, view, slot.bytes);
      slot.encoded = shard.encode(slot.bytes.data(), slot.a, slot.b);
    });
    for (int64_t j = 0; j < batch; ++j) {
      const bool has = inner[static_cast<size_t>(first + j)].has_value();  // one past the array's end has no bytes
      shard.add(has ? std::optional<std::string_view>(slots[static_cast<size_t>(j)].encoded) : std::nullopt);
    }
  }
  shard.finish();
}

// Writes this rank's chunks (or shards) of a layout in which each one has one owner, the chunks
// (or a shard's inner chunks) spread over `workers` threads.
void write_chunks(const std::string& path, const ZarrMeta& meta, const gdap_map& map, int64_t rank, const gdap_array& a,
                  int workers) {
  if (map.ndim() == 0 && rank != 0) return;  // the one element, written once
  const Staged staged(a, true);
  const Dir store = Dir::open(path, false);
  const std::vector<int64_t> strides = c_strides(meta.unit, meta.itemsize);
  if (meta.codecs.sharding) {
    for_each_group(pieces_of(map, rank, meta.unit, true), units_per_chunk(meta), [&](const std::vector<int64_t>& outer, const std::vector<AxisPieces>& units) {
      write_shard(store, meta, outer, units, strides, staged.view(), workers);
    });
    return;
  }
  const std::vector<AxisPieces> pieces = pieces_of(map, rank, meta.chunk, true);
  std::vector<std::pair<std::vector<int64_t>, UnitPieces>> chunks;
  for_each_unit(pieces, [&](const std::vector<int64_t>& index, const UnitPieces& p) { chunks.emplace_back(index, p); });
  std::vector<std::vector<char>> bytes(static_cast<size_t>(std::min<int64_t>(workers, static_cast<int64_t>(chunks.size()))));
  parallel_for(static_cast<int64_t>(chunks.size()), workers, [&](int64_t k, int worker) {
    const auto& [index, p] = chunks[static_cast<size_t>(k)];
    std::vector<char>& mine = bytes[static_cast<size_t>(worker)];
    mine.resize(static_cast<size_t>(meta.chunk_bytes));
    gather_unit(p, meta, strides, staged.view(), mine);
    write_chunk(store, chunk_key(meta, index), meta, std::string_view(mine.data(), mine.size()));
  });
}

// The metadata of a save of a section of `map` (every rank's own checks, before any rank changes
// anything: a block too big for a chunk is refused while an old store is still there). Where the
// map's blocks are not chunks, `moved.map` gets the equal blocks the section is moved to first.
ZarrMeta save_meta(const gdap_map& map, gdap_dtype dtype, const std::string& path, const gdap_zarr_options& o,
                   EvenBlocks& moved) {
  std::optional<std::vector<int64_t>> chunk = owner_chunks(map);
  if (!chunk) {
    moved.map = even_blocks_map(map);
    chunk = owner_chunks(*moved.map);
    if (!chunk) fail(GDAP_ERR_INTERNAL, "equal blocks did not give one owner per chunk");
  }
  std::vector<int64_t> inner;
  const int64_t itemsize = dtype.bits / 8;
  if (o.layout == GDAP_ZARR_SHARDS && map.ndim() > 0) inner = inner_chunks(*chunk, itemsize, o.chunk_bytes > 0 ? o.chunk_bytes : kDefaultInnerBytes);
  if (o.layout == GDAP_ZARR_CHUNKS) {
    int64_t bytes = itemsize;
    for (int64_t e : *chunk) bytes = checked_mul(bytes, e, "chunk bytes");
    if (bytes > kMaxChunkBytes) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "{}: a rank's block of {} bytes is more than a chunk may hold ({}): write shards "
           "(GDAP_ZARR_SHARDS), whose inner chunks stay small", path, bytes, kMaxChunkBytes);
    }
  }
  return make_meta(map.global_shape, *chunk, inner, dtype, o);
}

// The save once every rank has agreed to it (save_meta's `meta` and `moved`; rank 0's survey of
// the place `where`): the section moved to equal blocks where needed, then every rank writes its
// chunks into a new folder rank 0 makes inside the place, and rank 0 swaps it in only once every
// rank has written. Until then an old store is untouched; a failure on any rank removes the new folder.
void save(gdap_comm& comm, const gdap_map& map, const gdap_array& section, const std::string& path,
          const ZarrMeta& meta, EvenBlocks& moved, StorePlace& where) {
  const gdap_map* layout = &map;
  const gdap_array* data = &section;
  if (moved.map) {
    to_even_blocks(comm, map, section, moved);
    layout = moved.map.get();
    data = moved.array.get();
  }
  std::optional<NewStore> fresh;  // rank 0's
  const std::vector<std::string> made = agree_shares(comm, [&] {
    if (comm.rank == 0) fresh.emplace(std::move(where));
    return comm.rank == 0 ? fresh->path() : std::string();
  });
  const std::string& temp = made[0];
  agree(comm, [&] {
    try {
      if (memory_of(data) == Memory::device) cuda::synchronize_stream(comm.stream);  // queued writes first
      const FolderFlush flush(temp, path);
      write_chunks(temp, meta, *layout, comm.rank, *data, io_threads(comm.node_ranks));
      if (comm.rank == 0) write_new(Dir::open(temp, false), "zarr.json", meta_json(meta));
      flush.now();  // on the disk before the old store goes
    } catch (const Error& e) {
      fail(e.status(), "{}: writing the new store failed ({}); the old one, if any, is untouched", path, e.what());
    }
  });
  agree(comm, [&] {
    if (comm.rank == 0) fresh->swap_in();
  });
}

void check_store(const ZarrMeta& meta, const gdap_map& map, const gdap_array& a, const std::string& path) {
  if (meta.shape != map.global_shape) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}: the store's shape ({}) is not the map's ({})", path, fmt::join(meta.shape, ", "),
         fmt::join(map.global_shape, ", "));
  }
  const gdap_dtype t = a.section.dtype;
  if (t.code != meta.dtype.code || t.bits != meta.dtype.bits || t.lanes != meta.dtype.lanes) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}: the store holds {}, the section's dtype is {}", path, meta.data_type,
         zarr_type_name(t));
  }
  check_destination(a, "the section");
}

std::string checked_path(const char* path) {
  require(path, "path");
  if (*path == '\0') fail(GDAP_ERR_INVALID_ARGUMENT, "path is empty");
  return path;
}

// What a load saw of the store at `path`: zarr.json's identity (a save moves a new one in; one moved
// out and back gets a new ctime) and the hidden folder of a swap under way there, if any.
struct Seen {
  std::string meta, swapping;
  bool operator==(const Seen&) const = default;
};

Seen seen_at(const std::string& path) {
  struct stat st {};
  Seen seen;
  if (::lstat((path + "/zarr.json").c_str(), &st) == 0) {
    seen.meta = shared_identity(st);
  }
  seen.swapping = swap_under_way(path);
  return seen;
}

constexpr auto kSettleWait = std::chrono::seconds(3);  // a swap of top-level entries takes far less

// One try of a load's read at `path`: what it saw before, its `swapping` set (read again) when a
// swap was under way or the store changed during the read; a failure of the store's own (or a
// crashed save's leftover, named) is thrown.
Seen read_once(const std::string& path, const std::function<void(const std::string&)>& read) {
  Seen before = seen_at(path);
  if (!before.swapping.empty()) return before;
  try {
    read(path);
  } catch (const Error& e) {
    if (seen_at(path) == before) {  // the store's own fault, not a save's moment; or a crashed save's state
      const std::string left = swap_leftover(path);
      if (left.empty() || e.status() != GDAP_ERR_IO) throw;
      fail(e.status(), "{} (a save that did not finish left {} there: see docs/zarr.md, crash recovery)", e.what(), left);
    }
    before.swapping = "a store that changed while being read";
  }
  return before;
}

// Why to read again after read_once saw `before` (once every rank has read): empty when nothing
// moved at `path` since.
std::string read_again(const std::string& path, const Seen& before) {
  if (!before.swapping.empty()) return before.swapping;
  const Seen after = seen_at(path);
  if (!after.swapping.empty()) return after.swapping;
  return after == before ? std::string() : "a zarr.json replaced while being read";
}

// Gives up once kSettleWait has passed since the first sighting of a swap (`since`, set here on the
// first call); otherwise waits a moment before the next try.
void wait_or_give_up(SettleClock& since, bool late, const std::string& path, const std::string& busy) {
  if (late) {
    fail(GDAP_ERR_IO, "{}: a save was still moving a new store in (found {}) after waiting {} s for it: try again once it "
         "has finished (if that save crashed, see docs/zarr.md, crash recovery)", path, busy, kSettleWait.count());
  }
  if (!since) since = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Agrees on the ranks' arguments (`fields`: their checks, and the fields compared across ranks)
// before any rank reads, so that a refused load reads nothing and a rank whose different path or
// dtype would also fail its own read is still refused as the rank that differs. Then runs
// `read(path)` on every rank until every rank read one and the same store while no save was moving
// stores there: a load never sees the moment of a swap (no zarr.json, chunks half moved) nor mixes
// two saves' stores across ranks. A read's failure is agreed in the vote that follows it, so each
// try costs one meeting of the ranks, which on a loaded machine is the time for every rank to run
// again; GDAP_ERR_IO naming the hidden folder when a swap is still under way once any rank has
// waited kSettleWait since the ranks first agreed to read again (every rank sees that rank's vote,
// so all give up together; a rank that came late still reads again at least once).
void read_settled(gdap_comm& comm, const char* path_arg, const std::function<CallFields(const std::string&)>& fields,
                  const std::function<void(const std::string&)>& read) {
  std::string path;
  agree_gather(comm, [&] {
    path = checked_path(path_arg);
    return share_of(fields(path));
  }, fields_mismatch("gdap_zarr_load"));
  SettleClock since;
  for (;;) {
    Seen before;
    std::exception_ptr failed;
    try {
      before = read_once(path, read);
    } catch (...) {
      failed = std::current_exception();
    }
    const std::vector<Settled> votes = settled_votes(comm, since, kSettleWait, [&] {
      if (failed) std::rethrow_exception(failed);  // this rank's read failed: every rank fails
      return read_again(path, before);
    }, [&] { return before.meta; });
    const std::optional<std::string> busy = unsettled(votes);
    if (!busy) return;
    wait_or_give_up(since, late(votes), path, *busy);
  }
}

// The store's metadata at `path` for one caller (gdap_zarr_shape_read), read as a load reads it:
// a swap under way is waited out, as long as read_settled waits.
ZarrMeta meta_settled(const std::string& path) {
  SettleClock since;
  for (;;) {
    ZarrMeta meta;
    const Seen before = read_once(path, [&](const std::string& p) { meta = read_meta(p); });
    const std::string busy = read_again(path, before);
    if (busy.empty()) return meta;
    wait_or_give_up(since, since && std::chrono::steady_clock::now() - *since >= kSettleWait, path, busy);
  }
}

// The store read into a private copy on every rank through read_settled, then copied into the section.
void load(gdap_comm& comm, const gdap_map* map_arg, gdap_array* section_arg, const char* path_arg) {
  // Everything is read into a copy first, so that a failure on any rank leaves every section as it was.
  std::unique_ptr<Staged> staged;
  LargeBuffer copy;
  HostView view;
  std::vector<AxisPieces> pieces;
  auto read = [&](const std::string& path) {
    const gdap_map& map = *map_arg;
    const gdap_array& section = *section_arg;
    const ZarrMeta meta = read_meta(path);
    check_store(meta, map, section, path);
    if (memory_of(&section) == Memory::device) cuda::synchronize_stream(comm.stream);
    pieces = pieces_of(map, comm.rank, meta.unit, false);
    staged = std::make_unique<Staged>(section, !covers_span(section, count_of(pieces)));
    view = staged->view();
    if (!staged->on_device()) {  // host: a private span (only owned elements are written and copied back)
      const auto [lo, hi] = span_of(section);
      view.origin = copy.allocate(static_cast<size_t>(hi - lo)) - lo;
    }
    const std::vector<int64_t> strides = c_strides(meta.unit, meta.itemsize), ratio = units_per_chunk(meta);
    // The units to read are listed a batch at a time (each shard's index read on the way, its file
    // kept open), then decoded on io_threads() threads (this rank's share of the cores) into parts
    // of the copy that no other unit touches; a batch holds at most kOpenShards shards, so that no
    // load runs out of descriptors.
    struct Unit {
      const ShardReader* shard;     // the shard it lies in, or null for a whole chunk
      std::vector<int64_t> index;   // the chunk's index, or the inner chunk's inside its shard
      UnitPieces pieces;
    };
    std::vector<Unit> todo;
    std::deque<std::vector<AxisPieces>> groups;  // each shard's units, where todo's pieces point
    std::deque<ShardReader> shards;
    const int workers = io_threads(comm.node_ranks);
    std::vector<Scratch> scratch(static_cast<size_t>(workers));
    auto decode_batch = [&] {
      parallel_for(static_cast<int64_t>(todo.size()), workers, [&](int64_t k, int worker) {
        const Unit& u = todo[static_cast<size_t>(k)];
        Scratch& s = scratch[static_cast<size_t>(worker)];
        const std::optional<std::string_view> bytes =
            u.shard != nullptr ? u.shard->inner(u.index, s) : read_chunk(chunk_path(path, meta, u.index), meta, s);
        if (bytes) copy_from_unit(u.pieces, strides, view, meta.itemsize, bytes->data());
        else fill_pieces(u.pieces, strides, view, meta.fill);
      });
      todo.clear();
      shards.clear();
      groups.clear();
    };
    for_each_group(pieces, ratio, [&](const std::vector<int64_t>& outer, const std::vector<AxisPieces>& units) {
      const std::vector<AxisPieces>& kept = groups.emplace_back(units);
      const ShardReader* shard = nullptr;
      if (meta.partial_shards()) shard = &shards.emplace_back(chunk_path(path, meta, outer), meta);  // its index only
      for_each_unit(kept, [&](const std::vector<int64_t>& index, const UnitPieces& p) {
        std::vector<int64_t> at = index;
        if (shard != nullptr) {
          for (size_t i = 0; i < at.size(); ++i) at[i] -= outer[i] * ratio[i];
        }
        todo.push_back({shard, std::move(at), p});
      });
      if (shards.size() >= kOpenShards || todo.size() >= kBatchUnits) decode_batch();
    });
    decode_batch();
  };
  // The ranks' arguments are checked, and the paths, dtypes and maps compared, before any rank
  // reads: a rank that passed another store's path or another map fails every rank's load.
  const auto fields = [&](const std::string& path) {
    handle(map_arg, "map");
    handle(section_arg, "section");
    check_section(comm, *map_arg, *section_arg);
    CallFields mine;
    mine.add_path("path", path);
    mine.add_dtype(section_arg->section.dtype);
    mine.add_map(*map_arg);
    return mine;
  };
  read_settled(comm, path_arg, fields, read);
  if (staged->on_device()) {
    staged->flush();
    return;
  }
  // Host: the owned elements from the copy into the section.
  const gdap_map& map = *map_arg;
  const HostView& target = staged->view();
  const int64_t item = section_arg->section.dtype.bits / 8;
  if (map.ndim() == 0) {
    std::memcpy(target.origin, view.origin, static_cast<size_t>(item));
    return;
  }
  for (const AxisPieces& axis : pieces) {
    if (axis.empty()) return;
  }
  // Walk every owned run once (the union of all units' pieces is the owned runs), a piece of the
  // last dimension at a time where the section is contiguous along it.
  const size_t last = pieces.size() - 1;
  const bool rows = target.strides[last] == item;
  std::function<void(size_t, int64_t)> walk = [&](size_t a, int64_t off) {
    for (const auto& [c, list] : pieces[a]) {
      for (const Piece& p : list) {
        if (a == last && rows) {
          std::memcpy(target.origin + off + p.local * item, view.origin + off + p.local * item, static_cast<size_t>(p.length * item));
          continue;
        }
        for (int64_t j = 0; j < p.length; ++j) {
          const int64_t at = off + (p.local + j) * target.strides[a];
          if (a == last) std::memcpy(target.origin + at, view.origin + at, static_cast<size_t>(item));
          else walk(a + 1, at);
        }
      }
    }
  };
  walk(0, 0);
}

}  // namespace
}  // namespace gdap::io

extern "C" GDAP_API gdap_status gdap_zarr_save(gdap_comm* comm, const gdap_map* map, const gdap_array* section,
                                               const char* path, const gdap_zarr_options* options) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_zarr_save");
    std::string where;
    gdap_zarr_options o{};
    gdap::io::ZarrMeta meta;
    gdap::io::EvenBlocks moved;
    gdap::io::StorePlace place;
    // Checks only: nothing on disk changes before every rank has agreed, on its arguments' checks
    // and on passing rank 0's path, options, dtype and map. Rank 0 surveys the place of the store
    // only after that agreement, so that a rank's differing path or overwrite is told as such on
    // every rank, not as rank 0's own survey failure (save writes the store inside that place and
    // moves it in once every rank has written).
    gdap::agree_gather(c, [&] {
      gdap::handle(map, "map");
      gdap::handle(section, "section");
      where = gdap::io::checked_path(path);
      o = gdap::io::effective_options(gdap::io::checked_options(options));  // what zarr.json records too
      gdap::io::check_section(c, *map, *section);
      meta = gdap::io::save_meta(*map, section->section.dtype, where, o, moved);
      return gdap::io::share_of(gdap::io::save_fields(where, o, *map, section->section.dtype));
    }, gdap::io::fields_mismatch("gdap_zarr_save"));
    gdap::agree(c, [&] {
      if (c.rank == 0) place = gdap::io::survey_place(where, o);
    });
    gdap::io::save(c, *map, *section, where, meta, moved, place);
  });
}

extern "C" GDAP_API gdap_status gdap_zarr_load(gdap_comm* comm, const gdap_map* map, gdap_array* section, const char* path) {
  return gdap::guard([&] {
    const gdap::CommPin pinned(comm, "comm");
    gdap_comm& c = *pinned;
    const gdap::CollectiveCall collective(c, "gdap_zarr_load");
    gdap::io::load(c, map, section, path);
  });
}

extern "C" GDAP_API gdap_status gdap_zarr_shape_read(int64_t* shape, int64_t* ndim, gdap_dtype* dtype, const char* path,
                                                     int64_t capacity) {
  return gdap::guard([&] {
    gdap::require(ndim, "ndim");
    if (capacity < 0) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "capacity {} is negative", capacity);
    if (capacity > 0) gdap::require(shape, "shape");
    const gdap::io::ZarrMeta meta = gdap::io::meta_settled(gdap::io::checked_path(path));  // waits out a save's swap
    const auto n = static_cast<int64_t>(meta.shape.size());
    *ndim = n;
    if (dtype != nullptr) *dtype = meta.dtype;
    if (capacity < n) gdap::fail(GDAP_ERR_BUFFER_TOO_SMALL, "the store has {} dimensions, shape holds {}", n, capacity);
    std::copy(meta.shape.begin(), meta.shape.end(), shape);
  });
}

// The 0.1 names, kept for one release (gdap.h, "Deprecated names").
extern "C" GDAP_API gdap_status gdap_save_zarr(gdap_comm* comm, const gdap_map* map, const gdap_array* section,
                                               const char* path, const gdap_zarr_options* options) {
  return gdap_zarr_save(comm, map, section, path, options);
}

extern "C" GDAP_API gdap_status gdap_load_zarr(gdap_comm* comm, const gdap_map* map, gdap_array* section, const char* path) {
  return gdap_zarr_load(comm, map, section, path);
}

extern "C" GDAP_API gdap_status gdap_zarr_shape(const char* path, int64_t* ndim, int64_t* shape, int64_t capacity,
                                                gdap_dtype* dtype) {
  return gdap_zarr_shape_read(shape, ndim, dtype, path, capacity);
}
