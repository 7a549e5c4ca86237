// Collective save and load of a distributed array as a Zarr v3 store (gdap.h, "Zarr v3 stores").
// Both walk this rank's owned runs along each dimension, cut at chunk boundaries, so a chunk is
// decoded or encoded once and its elements are copied run by run: O(owned elements + chunks met).
#include "io/zarr_store.hpp"

#include "array/array.hpp"
#include "comm/comm.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "maps/map.hpp"
#include "move/axis_side.hpp"
#include "move/device.hpp"
#include "move/redistribute.hpp"
#include "protocol/dim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

static_assert(std::endian::native == std::endian::little, "gdap's Zarr codec writes host order as little endian");

namespace gdap::io {
namespace {

namespace fs = std::filesystem;

// A piece of an owned run inside one chunk along one dimension.
struct Piece {
  int64_t in_chunk;  // index inside the chunk
  int64_t local;     // index in the local buffer
  int64_t length;
};
// Per dimension: chunk index -> its pieces (in global order).
using AxisPieces = std::map<int64_t, std::vector<Piece>>;

std::vector<AxisPieces> pieces_of(const gdap_map& map, int64_t rank, const std::vector<int64_t>& chunk, bool source) {
  std::vector<AxisPieces> out(static_cast<size_t>(map.ndim()));
  for (int64_t a = 0; a < map.ndim(); ++a) {
    const auto i = static_cast<size_t>(a);
    const move::AxisSide side(map.axes[i], source);
    side.for_each_run(map.coord(rank, a), [&](int64_t g, int64_t len, int64_t l) {
      while (len > 0) {
        const int64_t c = g / chunk[i], off = g % chunk[i], n = std::min(len, chunk[i] - off);
        out[i][c].push_back({off, l, n});
        g += n;
        l += n;
        len -= n;
      }
    });
  }
  return out;
}

// A host view of a section: bytes plus strides in bytes.
struct HostView {
  char* origin;                   // element (0, ..., 0)
  std::vector<int64_t> strides;   // bytes
};

// Copies between one chunk buffer and a section, for the chunk whose per-dimension pieces are
// `pieces[a]`. `to_chunk` picks the direction.
void copy_chunk(const std::vector<const std::vector<Piece>*>& pieces, const std::vector<int64_t>& chunk_strides,
                const HostView& view, int64_t itemsize, unsigned char* chunk, bool to_chunk) {
  const size_t nd = pieces.size();
  std::function<void(size_t, int64_t, int64_t)> walk = [&](size_t a, int64_t c_off, int64_t l_off) {
    if (a == nd) {
      char* s = view.origin + l_off;
      unsigned char* k = chunk + c_off;
      if (to_chunk) std::memcpy(k, s, static_cast<size_t>(itemsize));
      else std::memcpy(s, k, static_cast<size_t>(itemsize));
      return;
    }
    const bool last = a + 1 == nd;
    for (const Piece& p : *pieces[a]) {
      if (last && view.strides[a] == itemsize) {  // contiguous on both sides
        char* s = view.origin + l_off + p.local * itemsize;
        unsigned char* k = chunk + c_off + p.in_chunk * itemsize;
        const auto n = static_cast<size_t>(p.length * itemsize);
        if (to_chunk) std::memcpy(k, s, n);
        else std::memcpy(s, k, n);
        continue;
      }
      for (int64_t j = 0; j < p.length; ++j) {
        walk(a + 1, c_off + (p.in_chunk + j) * chunk_strides[a], l_off + (p.local + j) * view.strides[a]);
      }
    }
  };
  walk(0, 0, 0);
}

// Calls f(chunk index, its pieces per dimension) for every chunk this rank's pieces fall in.
void for_each_chunk(const std::vector<AxisPieces>& axes,
                    const std::function<void(const std::vector<int64_t>&, const std::vector<const std::vector<Piece>*>&)>& f) {
  const size_t nd = axes.size();
  for (const AxisPieces& a : axes) {
    if (a.empty()) return;  // nothing owned along a dimension: nothing at all
  }
  std::vector<AxisPieces::const_iterator> it(nd);
  for (size_t a = 0; a < nd; ++a) it[a] = axes[a].begin();
  std::vector<int64_t> index(nd);
  std::vector<const std::vector<Piece>*> pieces(nd);
  for (;;) {
    for (size_t a = 0; a < nd; ++a) {
      index[a] = it[a]->first;
      pieces[a] = &it[a]->second;
    }
    f(index, pieces);
    size_t a = nd;
    while (a > 0 && std::next(it[a - 1]) == axes[a - 1].end()) {
      it[a - 1] = axes[a - 1].begin();
      --a;
    }
    if (a == 0) return;
    ++it[a - 1];
  }
}

std::vector<int64_t> chunk_strides(const ZarrMeta& meta) {
  std::vector<int64_t> s(meta.chunk.size());
  int64_t step = meta.itemsize;
  for (size_t a = s.size(); a-- > 0;) {
    s[a] = step;
    step *= meta.chunk[a];
  }
  return s;
}

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

// The section's elements readable and writable on the host: the section itself for host
// memory, or a host copy of its span for device memory (written back by `flush`).
class Staged {
 public:
  Staged(const gdap_array& a, bool copy_in) : array_(a) {
    const int64_t item = a.section.dtype.bits / 8 * a.section.dtype.lanes;
    for (int64_t s : a.section.strides) view_.strides.push_back(checked_mul(s, item, "stride"));
    if (move::memory_of(&a) != move::Memory::device) {
      view_.origin = static_cast<char*>(a.data());
      return;
    }
    std::tie(lo_, hi_) = span_of(a);
    copy_.resize(static_cast<size_t>(hi_ - lo_));
    if (copy_in && hi_ > lo_) move::copy_bytes(copy_.data(), static_cast<char*>(a.data()) + lo_, hi_ - lo_);
    view_.origin = copy_.data() - lo_;
  }
  const HostView& view() const { return view_; }
  bool on_device() const { return !copy_.empty(); }
  void flush() const {
    if (hi_ > lo_) move::copy_bytes(static_cast<char*>(array_.data()) + lo_, copy_.data(), hi_ - lo_);
  }

 private:
  const gdap_array& array_;
  HostView view_;
  std::vector<char> copy_;
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
    fail(GDAP_ERR_UNSUPPORTED, "dtype (code {}, {} bits, {} lanes) has no Zarr v3 data_type", a.section.dtype.code,
         a.section.dtype.bits, a.section.dtype.lanes);
  }
  if (move::memory_of(&a) == move::Memory::none) fail(GDAP_ERR_UNSUPPORTED, "the section's memory cannot be read by gdap");
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
    const int64_t P = map.grid_shape[i], c = map.coord(rank, a), n = map.global_shape[i];
    const int64_t w = (n + P - 1) / P;
    gdap_dim d = GDAP_DIM_INIT;
    d.dist_type = GDAP_DIST_BLOCK;
    d.size = n;
    d.proc_grid_size = P;
    d.proc_grid_rank = c;
    d.start = std::min(c * w, n);
    d.stop = std::min((c + 1) * w, n);
    dims.push_back(d);
  }
  return dims;
}

struct Owned {  // a C handle destroyed with its scope
  gdap_map* map = nullptr;
  gdap_plan* plan = nullptr;
  gdap_array* array = nullptr;
  ~Owned() {
    gdap_array_destroy(array);
    gdap_plan_destroy(plan);
    gdap_map_destroy(map);
  }
};

void ok(gdap_status s) {
  if (s != GDAP_SUCCESS) throw Error(s, gdap_last_error());
}

// Redistributes `section` to equal blocks on the same grid (collective), into `tmp`.
void to_even_blocks(gdap_comm& comm, const gdap_map& map, const gdap_array& section, Owned& tmp) {
  std::vector<gdap_dim> all;
  for (int64_t r = 0; r < map.nranks; ++r) {
    const std::vector<gdap_dim> dims = even_blocks(map, r);
    all.insert(all.end(), dims.begin(), dims.end());
  }
  agree(comm, [&] {
    ok(gdap_map_create(&tmp.map, map.nranks, map.ndim(), all.data()));
    ok(gdap_plan_create(&tmp.plan, &map, tmp.map, section.section.dtype, comm.rank));
    const std::vector<gdap_dim> mine = even_blocks(map, comm.rank);
    ok(gdap_array_create(&tmp.array, section.section.dtype, section.section.device, mine.data(), map.ndim()));
  });
  ok(gdap_redistribute(&comm, tmp.plan, &section, tmp.array));
  if (move::memory_of(&section) == move::Memory::device) move::synchronize_stream(comm.stream);
}

bool store_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path + "/zarr.json", ec) || fs::exists(path + "/c", ec);
}

void prepare_store(const std::string& path, const gdap_zarr_options& o) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec)) fail(GDAP_ERR_IO, "{}: exists and is not a folder", path);
  if (store_exists(path)) {
    if (o.overwrite == 0) fail(GDAP_ERR_INVALID_ARGUMENT, "{}: a Zarr store is already there (set overwrite to replace it)", path);
    fs::remove(path + "/zarr.json", ec);
    fs::remove_all(path + "/c", ec);
    if (ec) fail(GDAP_ERR_IO, "{}: cannot remove the old store: {}", path, ec.message());
  }
  fs::create_directories(path, ec);
  if (ec) fail(GDAP_ERR_IO, "{}: cannot create the folder: {}", path, ec.message());
}

gdap_zarr_options checked_options(const gdap_zarr_options* options) {
  if (options == nullptr) return GDAP_ZARR_OPTIONS_INIT;
  const gdap_zarr_options o =
      read_versioned(options, gdap_zarr_options GDAP_ZARR_OPTIONS_INIT, "options", "GDAP_ZARR_OPTIONS_INIT");
  if (o.codec != GDAP_ZARR_RAW && o.codec != GDAP_ZARR_ZSTD) fail(GDAP_ERR_INVALID_ARGUMENT, "options->codec {} is not a gdap_zarr_codec", o.codec);
  if (o.codec == GDAP_ZARR_ZSTD && (o.zstd_level < 0 || o.zstd_level > 22)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "options->zstd_level {} is not in 0..22", o.zstd_level);
  }
#ifndef GDAP_HAVE_ZSTD
  if (o.codec == GDAP_ZARR_ZSTD) fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without zstd: use GDAP_ZARR_RAW");
#endif
  return o;
}

// Writes this rank's chunks of a layout in which each chunk has one owner.
void write_chunks(const std::string& path, const ZarrMeta& meta, const gdap_map& map, int64_t rank, const gdap_array& a) {
  const Staged staged(a, true);
  const std::vector<int64_t> strides = chunk_strides(meta);
  if (map.ndim() == 0) {
    if (rank == 0) {
      std::vector<unsigned char> bytes(static_cast<size_t>(meta.chunk_bytes));
      std::memcpy(bytes.data(), staged.view().origin, bytes.size());
      write_chunk(chunk_path(path, meta, {}), meta, bytes);
    }
    return;
  }
  for_each_chunk(pieces_of(map, rank, meta.chunk, true), [&](const std::vector<int64_t>& index, const auto& pieces) {
    std::vector<unsigned char> bytes(static_cast<size_t>(meta.chunk_bytes), 0);
    copy_chunk(pieces, strides, staged.view(), meta.itemsize, bytes.data(), true);
    write_chunk(chunk_path(path, meta, index), meta, bytes);
  });
}

void save(gdap_comm& comm, const gdap_map& map, const gdap_array& section, const std::string& path, const gdap_zarr_options& o) {
  std::optional<std::vector<int64_t>> chunk = owner_chunks(map);
  Owned tmp;
  const gdap_map* layout = &map;
  const gdap_array* data = &section;
  if (!chunk) {
    to_even_blocks(comm, map, section, tmp);
    layout = tmp.map;
    data = tmp.array;
    chunk = owner_chunks(*layout);
    if (!chunk) fail(GDAP_ERR_INTERNAL, "equal blocks did not give one owner per chunk");
  }
  const ZarrMeta meta = make_meta(map.global_shape, *chunk, section.section.dtype, o);
  if (move::memory_of(data) == move::Memory::device) move::synchronize_stream(comm.stream);  // queued writes first
  agree(comm, [&] { write_chunks(path, meta, *layout, comm.rank, *data); });
  agree(comm, [&] {
    if (comm.rank == 0) write_file(path + "/zarr.json", meta_json(meta));
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
  if (a.readonly) fail(GDAP_ERR_INVALID_ARGUMENT, "the section is read-only");
}

void load(gdap_comm& comm, const gdap_map& map, gdap_array& section, const std::string& path) {
  // Everything is read into a copy first, so that a failure on any rank leaves every section as it was.
  std::unique_ptr<Staged> staged;
  std::vector<char> copy;
  HostView view;
  std::vector<AxisPieces> pieces;
  agree(comm, [&] {
    check_section(comm, map, section);
    const ZarrMeta meta = read_meta(path);
    check_store(meta, map, section, path);
    if (move::memory_of(&section) == move::Memory::device) move::synchronize_stream(comm.stream);
    staged = std::make_unique<Staged>(section, true);
    view = staged->view();
    if (!staged->on_device()) {  // host: a private copy of the span, written back element by element
      const auto [lo, hi] = span_of(section);
      copy.assign(view.origin + lo, view.origin + hi);
      view.origin = copy.data() - lo;
    }
    const std::vector<int64_t> strides = chunk_strides(meta);
    auto fill_from = [&](const std::vector<int64_t>& index, const std::vector<const std::vector<Piece>*>& p) {
      std::optional<std::vector<unsigned char>> bytes = read_chunk(chunk_path(path, meta, index), meta);
      if (!bytes) {
        bytes.emplace(static_cast<size_t>(meta.chunk_bytes));
        for (size_t at = 0; at < bytes->size(); at += meta.fill.size()) std::memcpy(bytes->data() + at, meta.fill.data(), meta.fill.size());
      }
      copy_chunk(p, strides, view, meta.itemsize, bytes->data(), false);
    };
    if (map.ndim() == 0) {
      static const std::vector<const std::vector<Piece>*> none;
      fill_from({}, none);
      return;
    }
    pieces = pieces_of(map, comm.rank, meta.chunk, false);
    for_each_chunk(pieces, fill_from);
  });
  if (staged->on_device()) {
    staged->flush();
    return;
  }
  // Host: the owned elements from the copy into the section.
  const HostView& target = staged->view();
  const int64_t item = section.section.dtype.bits / 8;
  if (map.ndim() == 0) {
    std::memcpy(target.origin, view.origin, static_cast<size_t>(item));
    return;
  }
  for (const AxisPieces& axis : pieces) {
    if (axis.empty()) return;
  }
  // Walk every owned element once: the union of all chunks' pieces is the owned runs.
  std::function<void(size_t, int64_t)> walk = [&](size_t a, int64_t off) {
    if (a == pieces.size()) {
      std::memcpy(target.origin + off, view.origin + off, static_cast<size_t>(item));
      return;
    }
    for (const auto& [c, list] : pieces[a]) {
      for (const Piece& p : list) {
        for (int64_t j = 0; j < p.length; ++j) walk(a + 1, off + (p.local + j) * target.strides[a]);
      }
    }
  };
  walk(0, 0);
}

std::string checked_path(const char* path) {
  require(path, "path");
  if (*path == '\0') fail(GDAP_ERR_INVALID_ARGUMENT, "path is empty");
  return path;
}

}  // namespace
}  // namespace gdap::io

extern "C" GDAP_API gdap_status gdap_save_zarr(gdap_comm* comm, const gdap_map* map, const gdap_array* section,
                                               const char* path, const gdap_zarr_options* options) {
  return gdap::guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    const gdap::CollectiveCall collective(c, "gdap_save_zarr");
    std::string where;
    gdap_zarr_options o{};
    gdap::agree(c, [&] {
      gdap::require(map, "map");
      gdap::require(section, "section");
      where = gdap::io::checked_path(path);
      o = gdap::io::checked_options(options);
      gdap::io::check_section(c, *map, *section);
      if (c.rank == 0) gdap::io::prepare_store(where, o);
    });
    gdap::io::save(c, *map, *section, where, o);
  });
}

extern "C" GDAP_API gdap_status gdap_load_zarr(gdap_comm* comm, const gdap_map* map, gdap_array* section, const char* path) {
  return gdap::guard([&] {
    gdap_comm& c = gdap::comm_ref(comm);
    const gdap::CollectiveCall collective(c, "gdap_load_zarr");
    std::string where;
    gdap::agree(c, [&] {
      gdap::require(map, "map");
      gdap::require(section, "section");
      where = gdap::io::checked_path(path);
    });
    gdap::io::load(c, *map, *section, where);
  });
}

extern "C" GDAP_API gdap_status gdap_zarr_shape(const char* path, int64_t* ndim, int64_t* shape, int64_t capacity,
                                                gdap_dtype* dtype) {
  return gdap::guard([&] {
    gdap::require(ndim, "ndim");
    if (capacity < 0) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "capacity {} is negative", capacity);
    if (capacity > 0) gdap::require(shape, "shape");
    const gdap::io::ZarrMeta meta = gdap::io::read_meta(gdap::io::checked_path(path));
    const auto n = static_cast<int64_t>(meta.shape.size());
    *ndim = n;
    if (dtype != nullptr) *dtype = meta.dtype;
    if (capacity < n) gdap::fail(GDAP_ERR_BUFFER_TOO_SMALL, "the store has {} dimensions, shape holds {}", n, capacity);
    std::copy(meta.shape.begin(), meta.shape.end(), shape);
  });
}
