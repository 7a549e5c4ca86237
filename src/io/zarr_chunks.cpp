// Chunk and shard files through their codec chains (see zarr_chunks.hpp). Decoding runs the chain
// backwards: the bytes-to-bytes codecs (each bounded), then "bytes" (the length must be the
// chunk's exactly; big-endian elements swapped) or a shard decoded in memory, then a transpose
// undone. A shard read in parts reads its index first: every entry must lie inside the file and be
// no longer than any encoding of an inner chunk could be, so no entry makes gdap allocate more
// than the file holds or the chunk needs.
#include "io/zarr_chunks.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"
#include "io/crc32c.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

namespace gdap::io {
namespace {

constexpr uint64_t kEmpty = UINT64_MAX;  // an index entry's offset and size for an inner chunk with no bytes

[[noreturn]] void corrupt(const std::string& what, const std::string& why) { fail(GDAP_ERR_IO, "{}: {}", what, why); }

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n = checked_mul(n, e, "chunk elements");
  return n;
}

// The most bytes any of gdap's codecs can make of `bytes` (zstd, blosc, gzip and crc32c all stay
// well inside this): the bound on encoded data read or decoded on its way to a chunk.
int64_t encoded_bound(int64_t bytes) { return checked_add(bytes + bytes / 16, int64_t{1} << 20, "encoded bound"); }

std::vector<int64_t> divided(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = a[i] / b[i];
  return out;
}

int64_t index_bytes(const Sharding& s, int64_t n) {
  return checked_add(checked_mul(n, 16, "shard index bytes"), static_cast<int64_t>(4 * s.index.codecs.size()), "shard index bytes");
}

// The shape a chain's array-to-bytes codec sees: the decoded shape after its transposes.
std::vector<int64_t> encoded_shape(const Chain& chain, const std::vector<int64_t>& shape) {
  if (chain.order.empty()) return shape;
  std::vector<int64_t> out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out[i] = shape[static_cast<size_t>(chain.order[i])];
  return out;
}

std::string joined(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

// `elements` fill values in `out`.
std::string_view filled(int64_t elements, const ZarrMeta& meta, Buffer& out) {
  char* dst = out.resize(static_cast<size_t>(elements * meta.itemsize));
  if (std::all_of(meta.fill.begin(), meta.fill.end(), [](unsigned char b) { return b == 0; })) {
    std::memset(dst, 0, out.size());
  } else {
    for (size_t at = 0; at < out.size(); at += meta.fill.size()) std::memcpy(dst + at, meta.fill.data(), meta.fill.size());
  }
  return out.view();
}

// The decode buffer of `s` that does not hold `v`: where the next step writes.
Buffer& spare(Scratch& s, std::string_view v) { return s.a.holds(v) ? s.b : s.a; }

// Copies the C-ordered box `src` (of `box`) into the C-ordered `dst` (of `shape`) at `origin`.
void place(char* dst, const std::vector<int64_t>& shape, const char* src, const std::vector<int64_t>& box,
           const std::vector<int64_t>& origin, int64_t item) {
  const size_t nd = shape.size();
  if (nd == 0) {
    std::memcpy(dst, src, static_cast<size_t>(item));
    return;
  }
  std::vector<int64_t> dst_stride(nd), src_stride(nd);
  int64_t d = item, s = item;
  for (size_t a = nd; a-- > 0;) {
    dst_stride[a] = d;
    src_stride[a] = s;
    d *= shape[a];
    s *= box[a];
  }
  std::function<void(size_t, int64_t, int64_t)> walk = [&](size_t a, int64_t doff, int64_t soff) {
    if (a + 1 == nd) {
      std::memcpy(dst + doff + origin[a] * item, src + soff, static_cast<size_t>(box[a] * item));
      return;
    }
    for (int64_t i = 0; i < box[a]; ++i) walk(a + 1, doff + (origin[a] + i) * dst_stride[a], soff + i * src_stride[a]);
  };
  walk(0, 0, 0);
}

// `encoded` (C order, of the transposed shape) back in the decoded dimensions' C order, in `out`.
std::string_view transpose_back(std::string_view encoded, const std::vector<int64_t>& shape, const std::vector<int64_t>& order,
                                int64_t item, Buffer& out) {
  const size_t nd = shape.size();
  std::vector<int64_t> stride(nd);  // the decoded array's strides, in bytes
  for (int64_t s = item, a = static_cast<int64_t>(nd) - 1; a >= 0; --a) {
    stride[static_cast<size_t>(a)] = s;
    s *= shape[static_cast<size_t>(a)];
  }
  std::vector<int64_t> enc_shape(nd), enc_stride(nd);
  for (size_t i = 0; i < nd; ++i) {
    enc_shape[i] = shape[static_cast<size_t>(order[i])];
    enc_stride[i] = stride[static_cast<size_t>(order[i])];
  }
  char* dst = out.resize(encoded.size());
  std::vector<int64_t> idx(nd, 0);
  int64_t to = 0;
  for (size_t from = 0; from < encoded.size(); from += static_cast<size_t>(item)) {
    std::memcpy(dst + to, encoded.data() + from, static_cast<size_t>(item));
    for (size_t i = nd; i-- > 0;) {  // the next element of the encoded array, in C order
      to += enc_stride[i];
      if (++idx[i] < enc_shape[i]) break;
      to -= enc_stride[i] * enc_shape[i];
      idx[i] = 0;
    }
  }
  return out.view();
}

// Big-endian elements (complex numbers by halves) in host order, in `out`.
std::string_view swapped(std::string_view bytes, const ZarrMeta& meta, Buffer& out) {
  const auto width = static_cast<size_t>(meta.dtype.code == GDAP_DTYPE_COMPLEX ? meta.itemsize / 2 : meta.itemsize);
  char* dst = out.resize(bytes.size());
  for (size_t at = 0; at + width <= bytes.size(); at += width) {
    for (size_t k = 0; k < width; ++k) dst[at + k] = bytes[at + width - 1 - k];
  }
  return out.view();
}

// Undoes a chain's bytes-to-bytes codecs: the first codec's output is at most `limit` bytes,
// those before it (when several are chained) at most any encoding of that.
std::string_view undo_codecs(const Chain& chain, std::string_view data, int64_t limit, Scratch& s, const std::string& what) {
  for (auto it = chain.codecs.rbegin(); it != chain.codecs.rend(); ++it) {
    const bool first = std::next(it) == chain.codecs.rend();
    data = decode(*it, data, first ? limit : encoded_bound(limit), spare(s, data), what);
  }
  return data;
}

// A shard's index entries (offset, bytes per inner chunk) from its encoded index, each checked to
// lie inside `data_bytes` and to be no longer than `entry_limit`.
std::vector<uint64_t> parse_index(const Sharding& s, std::string_view encoded, int64_t n, uint64_t data_bytes, int64_t entry_limit,
                                  const std::vector<int64_t>& grid, const std::string& what) {
  Scratch scratch;  // the index's codecs are "bytes" and "crc32c", which decode in place
  const std::string_view raw = undo_codecs(s.index, encoded, checked_mul(n, 16, "shard index"), scratch, what + ": the shard index");
  if (static_cast<int64_t>(raw.size()) != n * 16) corrupt(what, fmt::format("the shard index is {} bytes, not {}", raw.size(), n * 16));
  std::vector<uint64_t> index(static_cast<size_t>(2 * n));
  std::vector<int64_t> at(grid.size(), 0);
  for (size_t k = 0; k < index.size(); ++k) {
    uint64_t v = 0;
    for (size_t b = 0; b < 8; ++b) {
      const auto byte = static_cast<uint64_t>(static_cast<unsigned char>(raw[8 * k + b]));
      v |= s.index.big_endian ? byte << (8 * (7 - b)) : byte << (8 * b);
    }
    index[k] = v;
    if (k % 2 == 0) continue;
    const uint64_t offset = index[k - 1], bytes = index[k];
    const bool empty = offset == kEmpty && bytes == kEmpty;
    if (!empty && (offset > data_bytes || bytes > data_bytes - offset || bytes > static_cast<uint64_t>(entry_limit))) {
      corrupt(what, fmt::format("the shard index gives inner chunk ({}) {} bytes at byte {}, past the shard's {} bytes or "
                                "longer than any encoding of the chunk ({} bytes)", joined(at), bytes, offset, data_bytes, entry_limit));
    }
    for (size_t a = grid.size(); a-- > 0;) {  // the next inner chunk, in C order
      if (++at[a] < grid[a]) break;
      at[a] = 0;
    }
  }
  return index;
}

std::string_view decode_array(const Chain& chain, std::string_view data, const std::vector<int64_t>& shape, const ZarrMeta& meta,
                              const std::string& what, Scratch& s);

// A whole shard decoded in memory into `out` (a shard that is itself encoded further, or one
// inside a chunk).
std::string_view decode_shard(const Sharding& s, std::string_view blob, const std::vector<int64_t>& shape, const ZarrMeta& meta,
                              const std::string& what, Buffer& out) {
  const std::vector<int64_t> grid = divided(shape, s.inner);
  const int64_t n = count(grid), index = index_bytes(s, n);
  if (static_cast<int64_t>(blob.size()) < index) corrupt(what, fmt::format("{} bytes, shorter than its {}-byte shard index", blob.size(), index));
  const size_t start = s.index_at_start ? 0 : blob.size() - static_cast<size_t>(index);
  const std::vector<uint64_t> entries = parse_index(s, blob.substr(start, static_cast<size_t>(index)), n, blob.size(),
                                                    encoded_bound(count(s.inner) * meta.itemsize), grid, what);
  filled(count(shape), meta, out);
  Scratch inner_scratch;
  std::vector<int64_t> at(grid.size(), 0), origin(grid.size());
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t offset = entries[static_cast<size_t>(2 * k)], bytes = entries[static_cast<size_t>(2 * k + 1)];
    if (offset != kEmpty || bytes != kEmpty) {
      for (size_t a = 0; a < grid.size(); ++a) origin[a] = at[a] * s.inner[a];
      const std::string_view inner = decode_array(s.codecs, blob.substr(offset, bytes), s.inner, meta,
                                                  fmt::format("{}: inner chunk ({})", what, joined(at)), inner_scratch);
      place(out.data(), shape, inner.data(), s.inner, origin, meta.itemsize);
    }
    for (size_t a = grid.size(); a-- > 0;) {
      if (++at[a] < grid[a]) break;
      at[a] = 0;
    }
  }
  return out.view();
}

// `data` decoded through `chain` to an array of `shape`, C order, host byte order: a view into `s`
// (or into `data` itself, when nothing had to change).
std::string_view decode_array(const Chain& chain, std::string_view data, const std::vector<int64_t>& shape, const ZarrMeta& meta,
                              const std::string& what, Scratch& s) {
  const std::vector<int64_t> enc = encoded_shape(chain, shape);
  const int64_t bytes = checked_mul(count(enc), meta.itemsize, "chunk bytes");
  int64_t limit = bytes;
  if (chain.sharding) limit = checked_add(encoded_bound(bytes), index_bytes(*chain.sharding, count(divided(enc, chain.sharding->inner))), "shard");
  std::string_view out = undo_codecs(chain, data, limit, s, what);
  if (chain.sharding) {
    out = decode_shard(*chain.sharding, out, enc, meta, what, spare(s, out));
  } else {
    if (static_cast<int64_t>(out.size()) != bytes) corrupt(what, fmt::format("{} bytes, a chunk has {}", out.size(), bytes));
    if (chain.big_endian) out = swapped(out, meta, spare(s, out));
  }
  return chain.order.empty() ? out : transpose_back(out, shape, chain.order, meta.itemsize, spare(s, out));
}

// A chunk of host-order bytes encoded through a chain gdap writes ("bytes" little endian, then its
// bytes-to-bytes codecs), the steps taking turns writing `a` and `b`; a trailing crc32c is
// appended in place rather than by another copy.
std::string_view encode_array(const Chain& chain, std::string_view bytes, Buffer& a, Buffer& b, const std::string& what) {
  std::string_view out = bytes;
  for (const BytesCodec& c : chain.codecs) {
    Buffer& holder = a.holds(out) ? a : b;
    if (c.kind == BytesCodec::Kind::crc32c && out.data() == holder.data() && out.data() != nullptr) {
      const uint32_t sum = crc32c(out.data(), out.size());
      char* dst = holder.grow(out.size() + 4);
      for (size_t i = 0; i < 4; ++i) dst[holder.size() - 4 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
      out = holder.view();
    } else {
      out = encode(c, out, a.holds(out) ? b : a, what);
    }
  }
  return out;
}

// The folder that holds `key`'s file: the store itself, or the key's folders, entered (and
// created) one by one without following links.
Dir key_folder(const Dir& store, const std::vector<std::string>& key) {
  Dir folder = store.dup();
  for (size_t i = 0; i + 1 < key.size(); ++i) folder = folder.sub(key[i], true);
  return folder;
}

}  // namespace

std::optional<std::string_view> read_chunk(const std::string& file, const ZarrMeta& meta, Scratch& scratch) {
  int64_t limit = meta.chunk_bytes;
  if (!meta.codecs.codecs.empty() || meta.codecs.sharding) limit = encoded_bound(limit);
  if (meta.codecs.sharding) {
    limit = checked_add(limit, index_bytes(*meta.codecs.sharding, count(divided(encoded_shape(meta.codecs, meta.chunk),
                                                                                   meta.codecs.sharding->inner))), "shard");
  }
  const std::optional<Regular> f = open_regular(file, true);
  if (!f) return std::nullopt;
  if (f->size > limit) corrupt(file, fmt::format("{} bytes, more than any encoding of the chunk can take ({})", f->size, limit));
  read_at(*f, scratch.file.resize(static_cast<size_t>(f->size)), f->size, 0, file);
  return decode_array(meta.codecs, scratch.file.view(), meta.chunk, meta, file, scratch);
}

ShardReader::ShardReader(const std::string& file, const ZarrMeta& meta)
    : meta_(meta), file_(file), fd_(open_regular(file, true)), grid_(divided(meta.chunk, meta.unit)) {
  if (!fd_) return;
  const Sharding& s = *meta.codecs.sharding;
  const int64_t n = count(grid_), bytes = index_bytes(s, n);
  if (fd_->size < bytes) corrupt(file, fmt::format("{} bytes, shorter than its {}-byte shard index", fd_->size, bytes));
  std::string encoded(static_cast<size_t>(bytes), '\0');
  read_at(*fd_, encoded.data(), bytes, s.index_at_start ? 0 : fd_->size - bytes, file);
  index_ = parse_index(s, encoded, n, static_cast<uint64_t>(fd_->size), encoded_bound(count(meta.unit) * meta.itemsize), grid_, file);
}

std::optional<std::string_view> ShardReader::inner(const std::vector<int64_t>& within, Scratch& scratch) const {
  if (!fd_) return std::nullopt;
  int64_t k = 0;
  for (size_t a = 0; a < grid_.size(); ++a) k = k * grid_[a] + within[a];
  const uint64_t offset = index_[static_cast<size_t>(2 * k)], bytes = index_[static_cast<size_t>(2 * k + 1)];
  if (offset == kEmpty && bytes == kEmpty) return std::nullopt;
  read_at(*fd_, scratch.file.resize(static_cast<size_t>(bytes)), static_cast<int64_t>(bytes), static_cast<int64_t>(offset), file_);
  return decode_array(meta_.codecs.sharding->codecs, scratch.file.view(), meta_.unit, meta_,
                      fmt::format("{}: inner chunk ({})", file_, joined(within)), scratch);
}

void write_chunk(const Dir& store, const std::vector<std::string>& key, const ZarrMeta& meta, std::string_view bytes) {
  const Dir folder = key_folder(store, key);
  Buffer a, b;
  write_new(folder, key.back(), encode_array(meta.codecs, bytes, a, b, folder.path() + "/" + key.back()));
}

ShardWriter::ShardWriter(const Dir& store, const std::vector<std::string>& key, const ZarrMeta& meta)
    : meta_(meta), folder_(key_folder(store, key)), file_(folder_, key.back()) {}

std::string_view ShardWriter::encode(const char* inner, Buffer& a, Buffer& b) const {
  const auto bytes = static_cast<size_t>(count(meta_.unit) * meta_.itemsize);
  return encode_array(meta_.codecs.sharding->codecs, std::string_view(inner, bytes), a, b, folder_.path());
}

void ShardWriter::add(std::optional<std::string_view> encoded) {
  if (!encoded) {
    index_.insert(index_.end(), {kEmpty, kEmpty});
    return;
  }
  file_.write(encoded->data(), static_cast<int64_t>(encoded->size()));
  index_.insert(index_.end(), {at_, encoded->size()});
  at_ += encoded->size();
}

void ShardWriter::finish() {
  std::string index(index_.size() * 8, '\0');
  for (size_t k = 0; k < index_.size(); ++k) {
    for (size_t b = 0; b < 8; ++b) index[8 * k + b] = static_cast<char>((index_[k] >> (8 * b)) & 0xff);
  }
  const std::string_view encoded = encode_array(meta_.codecs.sharding->index, index, a_, b_, folder_.path());
  file_.write(encoded.data(), static_cast<int64_t>(encoded.size()));
  file_.commit();
}

}  // namespace gdap::io
