// A Zarr v3 array's chunk files, read and written through its codec chain (zarr_meta.hpp): whole
// chunks, and shards read in parts (the index, then only the inner chunks a rank needs) or written
// as a stream of inner chunks followed by their index. Decoded chunks are in C order and host
// byte order. Every size in a file is checked against the file's own size and the chunk's declared
// one before it is used; every checksum is verified, and a mismatch names the chunk.
#pragma once

#include "io/files.hpp"
#include "io/zarr_meta.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gdap::io {

// The memory a reader reuses from one chunk to the next (a file's bytes, and two buffers that
// decoding steps take turns writing): what a read returns points into it and stays valid until
// the next read with it. Reusing it spares an allocation (and its page faults) per chunk.
struct Scratch {
  Buffer file, a, b;
};

// Chunk `index`'s decoded bytes (meta.chunk_bytes of them), or nothing when its file is absent (the
// chunk is all fill value). GDAP_ERR_IO naming the file for one that is corrupt, fails a checksum,
// or is a directory, a FIFO or a device.
std::optional<std::string_view> read_chunk(const std::string& file, const ZarrMeta& meta, Scratch& scratch);

// One shard file of a store whose shards are read in parts (meta.partial_shards()).
class ShardReader {
 public:
  // Opens the shard and reads and checks its index; an absent file is an empty shard.
  ShardReader(const std::string& file, const ZarrMeta& meta);
  // The inner chunk at `within` (its coordinates inside the shard's grid of inner chunks), decoded
  // (bytes of meta.unit), or nothing when the index marks it empty (all fill value). Safe to call
  // from several threads at once, each with its own scratch.
  std::optional<std::string_view> inner(const std::vector<int64_t>& within, Scratch& scratch) const;

 private:
  const ZarrMeta& meta_;
  std::string file_;
  std::optional<Regular> fd_;
  std::vector<uint64_t> index_;  // (offset, bytes) per inner chunk, in C order
  std::vector<int64_t> grid_;    // inner chunks per dimension
};

// Writes chunk `key` (a whole chunk of decoded bytes) through the chain, under a temporary name
// renamed into place, creating the key's folders (never through a link).
void write_chunk(const Dir& store, const std::vector<std::string>& key, const ZarrMeta& meta, std::string_view bytes);

// Writes one shard as a stream: the inner chunks in C order of the shard's inner grid, each
// written as soon as it is given (encoded by encode(), on any thread), then the index (after them,
// with its crc32c).
class ShardWriter {
 public:
  ShardWriter(const Dir& store, const std::vector<std::string>& key, const ZarrMeta& meta);
  // An inner chunk (bytes of meta.unit) encoded through the shard's chain, in `a` or `b`: safe to
  // call from several threads at once, each with its own buffers.
  std::string_view encode(const char* inner, Buffer& a, Buffer& b) const;
  // Appends the next inner chunk in C order: its encoding, or nothing for one that lies wholly
  // outside the array.
  void add(std::optional<std::string_view> encoded);
  void finish();

 private:
  const ZarrMeta& meta_;
  Dir folder_;
  NewFile file_;
  std::vector<uint64_t> index_;
  uint64_t at_ = 0;
  Buffer a_, b_;  // the index's encoding steps take turns writing them
};

}  // namespace gdap::io
