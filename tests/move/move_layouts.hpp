// Layouts for the planner tests, and a host simulation of a redistribution that uses nothing but
// a plan: every source rank packs its sends block by block, every destination rank unpacks what
// it receives with its own view of the same message, and each rank copies its local part.
// Ownership is decided by an oracle written independently of the library, so a plan that reads a
// halo, writes padding, drops or duplicates an element, or disagrees between the two ends fails.
#pragma once

#include "plan/planner.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace move_test {

// One axis: the dictionary of each grid coordinate (unstructured indices owned by `storage`).
struct Axis {
  std::vector<gdap_dim> by_coord;
  std::vector<std::shared_ptr<std::vector<int64_t>>> storage;
  int64_t grid() const { return static_cast<int64_t>(by_coord.size()); }
};

// Block with owned counts `counts` per coordinate (boundary padding included); communication
// padding `width` on every side with a neighbour, boundary padding `lo` / `hi` on the outer sides.
// `periodic` only sets the flag: the edges' outer padding is boundary padding either way (DAP 0.10).
inline Axis padded(int64_t size, const std::vector<int64_t>& counts, int64_t width, bool periodic, int64_t lo = 0,
                   int64_t hi = 0) {
  const auto P = static_cast<int64_t>(counts.size());
  Axis axis;
  int64_t owned_start = 0;
  for (int64_t g = 0; g < P; ++g) {
    const bool comm_lo = g > 0, comm_hi = g < P - 1;
    const int64_t owned_stop = owned_start + counts[static_cast<size_t>(g)];
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_block(&d, size, P, g, owned_start - (comm_lo ? width : 0), owned_stop + (comm_hi ? width : 0));
    if (width > 0 || lo > 0 || hi > 0) gdap_dim_set_padding(&d, comm_lo ? width : lo, comm_hi ? width : hi);
    if (periodic) gdap_dim_set_periodic(&d, 1);
    axis.by_coord.push_back(d);
    owned_start = owned_stop;
  }
  return axis;
}

inline Axis irregular(int64_t size, const std::vector<int64_t>& counts) { return padded(size, counts, 0, false); }

// Even block: ceil(size / P) per coordinate, a shorter or empty tail.
inline Axis block(int64_t size, int64_t P) {
  const int64_t w = (size + P - 1) / P;
  std::vector<int64_t> counts;
  for (int64_t g = 0; g < P; ++g) counts.push_back(std::clamp<int64_t>(size - g * w, 0, w));
  return irregular(size, counts);
}

inline Axis cyclic(int64_t size, int64_t P, int64_t bs) {
  Axis axis;
  for (int64_t g = 0; g < P; ++g) {
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_cyclic(&d, size, P, g, std::min(g * bs, size), bs == 1 ? 0 : bs);
    axis.by_coord.push_back(d);
  }
  return axis;
}

// Unstructured with the given indices per coordinate, in local order.
inline Axis unstructured(int64_t size, const std::vector<std::vector<int64_t>>& per_coord, bool one_to_one) {
  Axis axis;
  const auto P = static_cast<int64_t>(per_coord.size());
  for (int64_t g = 0; g < P; ++g) {
    axis.storage.push_back(std::make_shared<std::vector<int64_t>>(per_coord[static_cast<size_t>(g)]));
    const auto& idx = *axis.storage.back();
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_unstructured(&d, size, P, g, idx.data(), static_cast<int64_t>(idx.size()), one_to_one ? 1 : 0);
    axis.by_coord.push_back(d);
  }
  return axis;
}

// A shuffled [0, size) dealt to random coordinates; with `replicas`, some indices also go to
// other coordinates (one_to_one false).
inline Axis shuffled(int64_t size, int64_t P, uint64_t seed, bool replicas) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> perm(static_cast<size_t>(size));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<std::vector<int64_t>> per(static_cast<size_t>(P));
  for (int64_t v : perm) {
    const auto first = static_cast<size_t>(rng() % static_cast<uint64_t>(P));
    per[first].push_back(v);
    for (size_t g = 0; replicas && g < per.size(); ++g) {
      if (g != first && rng() % 3 == 0) per[g].push_back(v);
    }
  }
  return unstructured(size, per, !replicas);
}

// A distribution: one axis per dimension; the grid is each axis's coordinate count.
struct Layout {
  std::vector<Axis> axes;

  int64_t ndim() const { return static_cast<int64_t>(axes.size()); }
  int64_t nranks() const {
    int64_t n = 1;
    for (const Axis& a : axes) n *= a.grid();
    return n;
  }
  std::vector<int64_t> coords(int64_t rank) const {
    std::vector<int64_t> c(axes.size());
    for (size_t i = axes.size(); i-- > 0;) {
      c[i] = rank % axes[i].grid();
      rank /= axes[i].grid();
    }
    return c;
  }
  const gdap_dim& dim(int64_t rank, int64_t i) const {
    return axes[static_cast<size_t>(i)].by_coord[static_cast<size_t>(coords(rank)[static_cast<size_t>(i)])];
  }
  // Every rank's dictionaries, rank-major, as gdap_map_create reads them.
  std::vector<gdap_dim> all_dims() const {
    std::vector<gdap_dim> out;
    for (int64_t r = 0; r < nranks(); ++r) {
      for (int64_t i = 0; i < ndim(); ++i) out.push_back(dim(r, i));
    }
    return out;
  }
};

struct MapHandle {
  gdap_map* map = nullptr;
  explicit MapHandle(const Layout& layout) {
    const auto dims = layout.all_dims();
    const gdap_status s = gdap_map_create(&map, layout.nranks(), layout.ndim(), dims.data());
    EXPECT_EQ(s, GDAP_SUCCESS) << gdap_last_error();
  }
  ~MapHandle() { gdap_map_destroy(map); }
  MapHandle(const MapHandle&) = delete;
  MapHandle& operator=(const MapHandle&) = delete;
};

// Oracle: for each local position of one dictionary's buffer, the global index it owns, or
// nullopt for padding / halo cells (written from the protocol text, not from the library).
inline std::vector<std::optional<int64_t>> owned_globals(const gdap_dim& d) {
  std::vector<std::optional<int64_t>> out;
  switch (d.dist_type) {
    case GDAP_DIST_BLOCK: {
      const bool has_pad = d.given & GDAP_KEY_PADDING;  // communication padding only, periodic or not
      const int64_t lo = has_pad && d.proc_grid_rank > 0 ? d.padding[0] : 0;
      const int64_t hi = has_pad && d.proc_grid_rank < d.proc_grid_size - 1 ? d.padding[1] : 0;
      const int64_t extent = d.stop - d.start;
      for (int64_t l = 0; l < extent; ++l) {
        out.push_back(l >= lo && l < extent - hi ? std::optional<int64_t>(d.start + l) : std::nullopt);
      }
      return out;
    }
    case GDAP_DIST_CYCLIC: {
      const int64_t bs = d.block_size, P = d.proc_grid_size;
      for (int64_t g = 0; g < d.size; ++g) {
        if ((g / bs) % P == d.proc_grid_rank) out.push_back(g);  // ascending global = local order
      }
      return out;
    }
    default:
      for (int64_t l = 0; l < d.num_indices; ++l) out.push_back(d.indices[l]);
      return out;
  }
}

// A value unique to each global index tuple (indices may be negative for 'u').
inline int64_t value_of(const int64_t* global, size_t n) {
  int64_t v = 1;
  for (size_t i = 0; i < n; ++i) v = v * 1'000'003 + (global[i] + 1000);
  return v;
}

constexpr int64_t kSourceHalo = -7;  // in source padding: must never be read
constexpr int64_t kUnwritten = -9;   // destination cells before the move

// One rank's buffer of one layout: C-contiguous, with the oracle's owned globals per dimension.
struct Buffer {
  std::vector<int64_t> shape, strides;
  std::vector<std::vector<std::optional<int64_t>>> globals;  // [dimension][local]
  std::vector<int64_t> data;
  std::vector<int> writes;

  Buffer(const Layout& layout, int64_t rank, int64_t fill) {
    for (int64_t i = 0; i < layout.ndim(); ++i) {
      globals.push_back(owned_globals(layout.dim(rank, i)));
      shape.push_back(static_cast<int64_t>(globals.back().size()));
    }
    strides.assign(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    int64_t count = 1;
    for (int64_t n : shape) count *= n;
    data.assign(static_cast<size_t>(count), fill);
    writes.assign(static_cast<size_t>(count), 0);
  }
  // Calls f(offset, global tuple or nullopt) for every cell.
  template <typename F>
  void for_each_cell(F&& f) const {
    const size_t n = shape.size();
    for (size_t off = 0; off < data.size(); ++off) {
      std::vector<int64_t> g(n);
      bool owned = true;
      size_t rest = off;
      for (size_t i = n; i-- > 0;) {
        const auto l = rest % static_cast<size_t>(shape[i]);
        rest /= static_cast<size_t>(shape[i]);
        owned = owned && globals[i][l].has_value();
        if (globals[i][l]) g[i] = *globals[i][l];
      }
      f(off, owned ? std::optional<std::vector<int64_t>>(g) : std::nullopt);
    }
  }
  // Global tuple at a local tuple, or nullopt if it is not owned there.
  std::optional<std::vector<int64_t>> global_at(const std::vector<int64_t>& local) const {
    std::vector<int64_t> g(local.size());
    for (size_t i = 0; i < local.size(); ++i) {
      if (local[i] < 0 || local[i] >= shape[i]) return std::nullopt;
      const auto& x = globals[i][static_cast<size_t>(local[i])];
      if (!x) return std::nullopt;
      g[i] = *x;
    }
    return g;
  }
  size_t offset(const std::vector<int64_t>& local) const {
    int64_t off = 0;
    for (size_t i = 0; i < local.size(); ++i) off += local[i] * strides[i];
    return static_cast<size_t>(off);
  }
};

// Calls f(tuple) for every index tuple of an extent, in C order.
template <typename F>
void for_each_index(std::span<const int64_t> extent, F&& f) {
  std::vector<int64_t> idx(extent.size(), 0);
  for (;;) {
    f(idx);
    size_t i = idx.size();
    while (i > 0 && idx[i - 1] + 1 == extent[i - 1]) idx[--i] = 0;
    if (i == 0) return;
    ++idx[i - 1];
  }
}

// A segment's global_start is the global index of its first element (a segment is contiguous in
// both local buffers; its global indices may jump, e.g. block-cyclic to the same block-cyclic): a
// block's first index along each dimension must own that global index on either side. Every other
// element is checked by value (each value encodes its global index).
inline void check_block_start(const gdap::plan::Block& blk, const std::vector<int64_t>& idx,
                              const std::vector<int64_t>& owned, int64_t r, const char* side) {
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] == 0) {
      ASSERT_EQ(owned[i], blk.global[i]) << "rank " << r << ", dimension " << i << ": the block's first global index "
                                         << "disagrees with the " << side << " local index";
    }
  }
}

// Moves data from `src` to `dst` buffers with `plans` (one per rank) and checks the result.
// `roles`: empty, or the destination role of every rank (planner.hpp, "Roles"): rank r's destination
// buffer is then role roles[r]'s.
inline void simulate(const Layout& src, const Layout& dst, const std::vector<gdap::plan::RankPlan>& plans,
                     const std::vector<int64_t>& roles = {}) {
  using gdap::plan::Block;
  using gdap::plan::Part;
  const size_t n = static_cast<size_t>(src.ndim());
  const int64_t nranks = std::max(src.nranks(), dst.nranks());
  ASSERT_EQ(static_cast<int64_t>(plans.size()), nranks);
  std::vector<Buffer> in, out;
  for (int64_t r = 0; r < nranks; ++r) {
    in.emplace_back(src, std::min(r, src.nranks() - 1), kSourceHalo);
    const int64_t role = roles.empty() ? r : roles[static_cast<size_t>(r)];
    out.emplace_back(dst, std::min(role, dst.nranks() - 1), kUnwritten);
  }
  for (int64_t r = 0; r < src.nranks(); ++r) {
    Buffer& b = in[static_cast<size_t>(r)];
    b.for_each_cell([&](size_t off, const auto& g) {
      if (g) b.data[off] = value_of(g->data(), n);
    });
  }
  // Reads one block of rank r's source buffer in packed order, checking its global indices.
  auto read_block = [&](int64_t r, const Block& blk, auto&& sink) {
    const Buffer& b = in[static_cast<size_t>(r)];
    for_each_index(blk.extent, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> local(n);
      for (size_t i = 0; i < n; ++i) local[i] = blk.src_local[i] + idx[i];
      const auto owned = b.global_at(local);
      ASSERT_TRUE(owned.has_value()) << "rank " << r << " reads a cell it does not own";
      check_block_start(blk, idx, *owned, r, "source");
      sink(b.data[b.offset(local)]);
    });
  };
  auto write_block = [&](int64_t r, const Block& blk, auto&& source) {
    Buffer& b = out[static_cast<size_t>(r)];
    for_each_index(blk.extent, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> local(n);
      for (size_t i = 0; i < n; ++i) local[i] = blk.dst_local[i] + idx[i];
      const auto owned = b.global_at(local);
      ASSERT_TRUE(owned.has_value()) << "rank " << r << " writes a cell it does not own (padding or halo)";
      check_block_start(blk, idx, *owned, r, "destination");
      b.data[b.offset(local)] = source();
      ++b.writes[b.offset(local)];
    });
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> mailbox;  // (from, to) -> packed
  for (int64_t r = 0; r < nranks; ++r) {
    const auto& plan = plans[static_cast<size_t>(r)];
    ASSERT_EQ(plan.rank(), r);
    int64_t displacement = 0;
    for (const auto& m : plan.messages(Part::send)) {
      ASSERT_NE(m.peer, r);
      ASSERT_EQ(m.offset, displacement);
      displacement += m.elements;
      std::vector<int64_t> packed;
      int64_t blocks = 0;
      plan.for_each_block(Part::send, m, [&](const Block& blk) {
        ASSERT_EQ(blk.offset, static_cast<int64_t>(packed.size()));
        read_block(r, blk, [&](int64_t v) { packed.push_back(v); });
        ++blocks;
      });
      ASSERT_EQ(static_cast<int64_t>(packed.size()), m.elements);
      ASSERT_EQ(blocks, m.blocks);
      ASSERT_TRUE(mailbox.emplace(std::make_pair(r, m.peer), std::move(packed)).second);
    }
    for (const auto& m : plan.messages(Part::local)) {
      ASSERT_EQ(m.peer, r);
      plan.for_each_block(Part::local, m, [&](const Block& blk) {
        std::vector<int64_t> values;
        read_block(r, blk, [&](int64_t v) { values.push_back(v); });
        size_t k = 0;
        write_block(r, blk, [&] { return values[k++]; });
      });
    }
  }
  for (int64_t r = 0; r < nranks; ++r) {
    const auto& plan = plans[static_cast<size_t>(r)];
    int64_t displacement = 0;
    for (const auto& m : plan.messages(Part::recv)) {
      ASSERT_EQ(m.offset, displacement);
      displacement += m.elements;
      auto it = mailbox.find({m.peer, r});
      ASSERT_NE(it, mailbox.end()) << "rank " << r << " expects a message from " << m.peer << " that was not sent";
      const std::vector<int64_t> packed = std::move(it->second);
      mailbox.erase(it);
      ASSERT_EQ(static_cast<int64_t>(packed.size()), m.elements);
      plan.for_each_block(Part::recv, m, [&](const Block& blk) {
        size_t k = static_cast<size_t>(blk.offset);
        write_block(r, blk, [&] { return packed[k++]; });
      });
    }
  }
  EXPECT_TRUE(mailbox.empty()) << mailbox.size() << " messages were sent but never received";
  for (int64_t r = 0; r < nranks; ++r) {
    if ((roles.empty() ? r : roles[static_cast<size_t>(r)]) >= dst.nranks()) continue;  // holds nothing there
    const Buffer& b = out[static_cast<size_t>(r)];
    b.for_each_cell([&](size_t off, const auto& g) {
      if (g) {
        ASSERT_EQ(b.writes[off], 1) << "rank " << r << ", cell " << off << " written " << b.writes[off] << " times";
        ASSERT_EQ(b.data[off], value_of(g->data(), n)) << "rank " << r << ", cell " << off;
      } else {
        ASSERT_EQ(b.writes[off], 0) << "rank " << r << ", padding cell " << off << " was written";
        ASSERT_EQ(b.data[off], kUnwritten);
      }
    });
  }
}

}  // namespace move_test
