// Random valid layouts for property tests: every rank's dictionaries of an N-d array over a
// process grid, with block (irregular, padded, periodic), cyclic / block-cyclic and unstructured
// dimensions. Shared by the map tests and the GPU map tests.
#pragma once

#include <gdap/gdap.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

namespace gdap_test {

// One axis: the dictionary of each grid coordinate (indices owned by `storage`).
struct Axis {
  std::vector<gdap_dim> by_coord;
  std::vector<std::shared_ptr<std::vector<int64_t>>> storage;
};

// Random cut points; with `pad`, communication padding of one width w (no wider than any owned
// range) between neighbours and random boundary padding on the outer sides. `periodic` only sets
// the flag: it changes no range (DAP 0.10).
inline Axis block_axis(std::mt19937_64& rng, int64_t size, int64_t P, bool pad, bool periodic) {
  std::vector<int64_t> cuts{0, size};
  for (int64_t k = 1; k < P; ++k) cuts.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(size + 1)));
  std::sort(cuts.begin(), cuts.end());
  int64_t min_owned = size;
  for (int64_t g = 0; g < P; ++g) min_owned = std::min(min_owned, cuts[g + 1] - cuts[g]);
  const int64_t w = pad ? std::min<int64_t>(min_owned, 1 + static_cast<int64_t>(rng() % 2)) : 0;
  Axis axis;
  for (int64_t g = 0; g < P; ++g) {
    const bool comm_lo = g > 0, comm_hi = g < P - 1;
    const int64_t owned = cuts[g + 1] - cuts[g];
    // Boundary padding is part of what the outer ranks own, so it fits in their owned range.
    const int64_t b_lo = pad && !comm_lo ? static_cast<int64_t>(rng() % static_cast<uint64_t>(owned + 1)) : 0;
    const int64_t b_hi =
        pad && !comm_hi ? static_cast<int64_t>(rng() % static_cast<uint64_t>(owned - b_lo + 1)) : 0;
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_block(&d, size, P, g, cuts[g] - (comm_lo ? w : 0), cuts[g + 1] + (comm_hi ? w : 0));
    if (pad) gdap_dim_set_padding(&d, comm_lo ? w : b_lo, comm_hi ? w : b_hi);
    if (periodic) gdap_dim_set_periodic(&d, 1);
    axis.by_coord.push_back(d);
  }
  return axis;
}

inline Axis cyclic_axis(std::mt19937_64& rng, int64_t size, int64_t P) {
  const int64_t bs = 1 + static_cast<int64_t>(rng() % 4);
  Axis axis;
  for (int64_t g = 0; g < P; ++g) {
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_cyclic(&d, size, P, g, g * bs, bs == 1 ? 0 : bs);
    axis.by_coord.push_back(d);
  }
  return axis;
}

// A permutation of [0, size) dealt to random grid ranks; with `replicas`, some indices also go
// to further grid ranks (one_to_one false).
inline Axis unstructured_axis(std::mt19937_64& rng, int64_t size, int64_t P, bool replicas = false) {
  std::vector<int64_t> perm(static_cast<size_t>(size));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  Axis axis;
  for (int64_t g = 0; g < P; ++g) axis.storage.push_back(std::make_shared<std::vector<int64_t>>());
  for (int64_t v : perm) {
    const auto first = static_cast<size_t>(rng() % static_cast<uint64_t>(P));
    axis.storage[first]->push_back(v);
    if (!replicas) continue;
    for (size_t g = 0; g < static_cast<size_t>(P); ++g) {
      if (g != first && rng() % 3 == 0) axis.storage[g]->push_back(v);
    }
  }
  for (int64_t g = 0; g < P; ++g) {
    gdap_dim d = GDAP_DIM_INIT;
    const auto& idx = *axis.storage[static_cast<size_t>(g)];
    gdap_dim_set_unstructured(&d, size, P, g, idx.data(), static_cast<int64_t>(idx.size()), replicas ? 0 : 1);
    axis.by_coord.push_back(d);
  }
  return axis;
}

// Test oracle, written independently of the library: the local index at which grid coordinate
// `d` owns global index x along one axis, or -1.
inline int64_t oracle_local(const gdap_dim& d, int64_t x) {
  switch (d.dist_type) {
    case GDAP_DIST_BLOCK: {
      const int64_t lo = d.start + (d.proc_grid_rank > 0 ? d.padding[0] : 0);  // periodic or not
      const int64_t hi = d.stop - (d.proc_grid_rank < d.proc_grid_size - 1 ? d.padding[1] : 0);
      return x >= lo && x < hi ? x - d.start : -1;
    }
    case GDAP_DIST_CYCLIC: {
      if (x < 0 || x >= d.size || (x / d.block_size) % d.proc_grid_size != d.proc_grid_rank) return -1;
      int64_t local = 0;  // count the owned indices below x
      for (int64_t y = 0; y < x; ++y) local += (y / d.block_size) % d.proc_grid_size == d.proc_grid_rank ? 1 : 0;
      return local;
    }
    default:
      for (int64_t l = 0; l < d.num_indices; ++l) {
        if (d.indices[l] == x) return l;
      }
      return -1;
  }
}

struct Layout {
  std::vector<int64_t> grid;
  std::vector<Axis> axes;
  std::vector<gdap_dim> ranks;  // rank-major: nranks * ndim
  int64_t nranks = 1;

  int64_t ndim() const { return static_cast<int64_t>(axes.size()); }
  void assemble() {
    nranks = 1;
    for (int64_t g : grid) nranks *= g;
    ranks.clear();
    for (int64_t r = 0; r < nranks; ++r) {
      std::vector<int64_t> c(grid.size());
      int64_t rest = r;
      for (size_t i = grid.size(); i-- > 0;) {
        c[i] = rest % grid[i];
        rest /= grid[i];
      }
      for (size_t i = 0; i < grid.size(); ++i) ranks.push_back(axes[i].by_coord[static_cast<size_t>(c[i])]);
    }
  }
};

// A random layout of 1 to 3 dimensions of up to 9 elements each, on grids of up to 3 per axis
// (so 1x1 grids, empty sections and uneven blocks all come up). `replicas` allows unstructured
// axes without one_to_one.
inline Layout random_layout(std::mt19937_64& rng, bool replicas = false) {
  Layout layout;
  const int ndim = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < ndim; ++i) {
    const int64_t P = 1 + static_cast<int64_t>(rng() % 3);
    const int64_t size = static_cast<int64_t>(rng() % 10);
    layout.grid.push_back(P);
    switch (rng() % 6) {
      case 0: layout.axes.push_back(block_axis(rng, size, P, false, false)); break;
      case 1: layout.axes.push_back(block_axis(rng, size, P, true, false)); break;
      case 2: layout.axes.push_back(block_axis(rng, size, P, true, size > 0)); break;
      case 3: layout.axes.push_back(cyclic_axis(rng, size, P)); break;
      case 4: layout.axes.push_back(unstructured_axis(rng, size, P, replicas)); break;
      default: layout.axes.push_back(unstructured_axis(rng, size, P)); break;
    }
  }
  layout.assemble();
  return layout;
}

}  // namespace gdap_test
