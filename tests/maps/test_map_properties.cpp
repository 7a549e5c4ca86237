// Layer 2, gdap_map look-ups: properties over many random valid layouts of 1 to 3 dimensions
// (block, irregular, padded, periodic, cyclic, block-cyclic, unstructured; grids from 1 x 1 up,
// empty sections), checked against an oracle written independently of the library; then the
// look-up errors, a 0-d map, replicas, and a 1,024-rank map.
#include "layouts.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using gdap_test::Layout;

struct MapHandle {
  gdap_map* map = nullptr;
  ~MapHandle() { gdap_map_destroy(map); }
};

// All global index tuples of a shape, in C order.
std::vector<std::vector<int64_t>> all_indices(const std::vector<int64_t>& shape) {
  std::vector<std::vector<int64_t>> out{{}};
  for (int64_t n : shape) {
    std::vector<std::vector<int64_t>> next;
    for (const auto& prefix : out) {
      for (int64_t x = 0; x < n; ++x) {
        next.push_back(prefix);
        next.back().push_back(x);
      }
    }
    out = std::move(next);
  }
  return out;
}

// Ranks that own `global` per the oracle, ascending, with the local index on each.
std::vector<std::pair<int64_t, std::vector<int64_t>>> oracle_owners(const Layout& layout, const std::vector<int64_t>& global) {
  std::vector<std::pair<int64_t, std::vector<int64_t>>> out;
  const int64_t ndim = layout.ndim();
  for (int64_t r = 0; r < layout.nranks; ++r) {
    std::vector<int64_t> local;
    for (int64_t i = 0; i < ndim; ++i) {
      const int64_t l = gdap_test::oracle_local(layout.ranks[static_cast<size_t>(r * ndim + i)], global[static_cast<size_t>(i)]);
      if (l < 0) break;
      local.push_back(l);
    }
    if (static_cast<int64_t>(local.size()) == ndim) out.emplace_back(r, local);
  }
  return out;
}

// Every property of one layout's map.
void check_layout(const Layout& layout) {
  const int64_t ndim = layout.ndim();
  MapHandle h;
  ASSERT_EQ(gdap_map_create(&h.map, layout.nranks, ndim, layout.ranks.data()), GDAP_SUCCESS) << gdap_last_error();
  int64_t n = -1;
  ASSERT_EQ(gdap_map_ndim(&n, h.map), GDAP_SUCCESS);
  EXPECT_EQ(n, ndim);
  ASSERT_EQ(gdap_map_nranks(&n, h.map), GDAP_SUCCESS);
  EXPECT_EQ(n, layout.nranks);
  std::vector<int64_t> shape(static_cast<size_t>(ndim)), grid(static_cast<size_t>(ndim));
  ASSERT_EQ(gdap_map_global_shape(shape.data(), h.map), GDAP_SUCCESS);
  ASSERT_EQ(gdap_map_grid_shape(grid.data(), h.map), GDAP_SUCCESS);
  EXPECT_EQ(grid, layout.grid);
  int64_t total = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    EXPECT_EQ(shape[i], layout.axes[i].by_coord[0].size);
    total *= shape[i];
  }

  // Owner, owners and local_to_global against the oracle, for every global index.
  const auto globals = all_indices(shape);
  std::vector<int64_t> flat;
  std::vector<int64_t> expected_rank;
  for (const auto& g : globals) {
    const auto owners = oracle_owners(layout, g);
    int64_t rank = -1, count = -1;
    std::vector<int64_t> local(static_cast<size_t>(ndim) + 1, -1);
    std::vector<int64_t> ranks(static_cast<size_t>(layout.nranks));
    ASSERT_EQ(gdap_map_owners(ranks.data(), &count, h.map, g.data(), layout.nranks), GDAP_SUCCESS) << gdap_last_error();
    ASSERT_EQ(count, static_cast<int64_t>(owners.size()));
    for (size_t k = 0; k < owners.size(); ++k) EXPECT_EQ(ranks[k], owners[k].first) << "owners ascending";
    flat.insert(flat.end(), g.begin(), g.end());
    if (owners.empty()) {
      EXPECT_EQ(gdap_map_owner(&rank, local.data(), h.map, g.data()), GDAP_ERR_NOT_FOUND);
      expected_rank.push_back(-1);
      continue;
    }
    ASSERT_EQ(gdap_map_owner(&rank, local.data(), h.map, g.data()), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(rank, owners[0].first) << "the lowest owning rank";
    local.resize(static_cast<size_t>(ndim));
    EXPECT_EQ(local, owners[0].second);
    expected_rank.push_back(rank);
    // owner's local -> global is the index again
    std::vector<int64_t> back(static_cast<size_t>(ndim));
    ASSERT_EQ(gdap_map_local_to_global(back.data(), h.map, rank, local.data()), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(back, g);
  }

  // one_to_one layouts: exactly one owner per index; owned counts add up to the global count.
  bool one_to_one = true;
  for (const auto& axis : layout.axes) {
    if (axis.by_coord[0].dist_type == 'u' && axis.by_coord[0].one_to_one == 0) one_to_one = false;
  }
  int64_t owned_sum = 0;
  for (int64_t r = 0; r < layout.nranks; ++r) {
    int64_t c = -1;
    ASSERT_EQ(gdap_map_owned_count(&c, h.map, r), GDAP_SUCCESS);
    owned_sum += c;
  }
  if (one_to_one) {
    EXPECT_EQ(owned_sum, total) << "owned counts sum to the global count";
    for (int64_t r : expected_rank) EXPECT_GE(r, 0) << "every index has an owner";
  }

  // owner_batch on the host equals owner, out-of-range and absent indices give -1.
  if (ndim > 0) {
    for (size_t i = 0; i < static_cast<size_t>(ndim); ++i) {
      std::vector<int64_t> bad(static_cast<size_t>(ndim), 0);
      bad[i] = layout.axes[i].by_coord[0].dist_type == 'u' ? -3 : shape[i];  // past the end / absent
      flat.insert(flat.end(), bad.begin(), bad.end());
      expected_rank.push_back(-1);
    }
  }
  const auto count = static_cast<int64_t>(expected_rank.size());
  std::vector<int64_t> ranks(static_cast<size_t>(count), -9), locals(static_cast<size_t>(count * ndim), -9);
  const gdap_device cpu{GDAP_DEVICE_CPU, 0};
  ASSERT_EQ(gdap_map_owner_batch(ranks.data(), locals.data(), h.map, flat.data(), count, cpu, nullptr), GDAP_SUCCESS)
      << gdap_last_error();
  EXPECT_EQ(ranks, expected_rank);
  for (int64_t k = 0; k < count; ++k) {
    if (ranks[static_cast<size_t>(k)] < 0) continue;
    std::vector<int64_t> local(static_cast<size_t>(ndim));
    int64_t rank = -1;
    ASSERT_EQ(gdap_map_owner(&rank, local.data(), h.map, flat.data() + k * ndim), GDAP_SUCCESS);
    EXPECT_TRUE(std::equal(local.begin(), local.end(), locals.begin() + k * ndim));
  }

  // Per rank: local -> global -> local round trips; runs cover exactly the owned indices.
  for (int64_t r = 0; r < layout.nranks; ++r) {
    std::vector<int64_t> local_shape(static_cast<size_t>(ndim)), owned_shape(static_cast<size_t>(ndim));
    ASSERT_EQ(gdap_map_local_shape(local_shape.data(), h.map, r), GDAP_SUCCESS);
    ASSERT_EQ(gdap_map_owned_shape(owned_shape.data(), h.map, r), GDAP_SUCCESS);
    for (int64_t i = 0; i < ndim; ++i) {
      const gdap_dim& given = layout.ranks[static_cast<size_t>(r * ndim + i)];
      gdap_dim d;
      ASSERT_EQ(gdap_map_dim(&d, h.map, r, i), GDAP_SUCCESS);
      EXPECT_EQ(d.proc_grid_rank, given.proc_grid_rank);
      EXPECT_EQ(d.start, given.start);
      EXPECT_EQ(d.num_indices, given.num_indices);
      EXPECT_TRUE(d.num_indices == 0 || d.indices != given.indices) << "the map keeps its own copy";
      EXPECT_TRUE(d.num_indices == 0 || std::equal(d.indices, d.indices + d.num_indices, given.indices));
      for (int64_t l = 0; l < local_shape[static_cast<size_t>(i)]; ++l) {
        int64_t g = 0, back = 0, again = 0;
        ASSERT_EQ(gdap_dim_local_to_global(&g, &d, l), GDAP_SUCCESS) << gdap_last_error();
        ASSERT_EQ(gdap_dim_global_to_local(&back, &d, g), GDAP_SUCCESS) << gdap_last_error();
        ASSERT_EQ(gdap_dim_local_to_global(&again, &d, back), GDAP_SUCCESS);
        EXPECT_EQ(again, g);
        const int64_t owned_at = gdap_test::oracle_local(d, g);
        if (owned_at >= 0) EXPECT_EQ(back, owned_at) << "an owned index maps to its owned position";
      }
      // Runs: increasing, disjoint, exactly the owned (global, local) pairs.
      int64_t nruns = -1;
      ASSERT_EQ(gdap_map_num_runs(&nruns, h.map, r, i), GDAP_SUCCESS);
      std::vector<gdap_run> runs(static_cast<size_t>(nruns) + 1);
      int64_t written = -1;
      ASSERT_EQ(gdap_map_runs(runs.data(), &written, h.map, r, i, 0, nruns + 1), GDAP_SUCCESS);
      ASSERT_EQ(written, nruns);
      std::set<std::pair<int64_t, int64_t>> from_runs, owned;
      int64_t last_end = INT64_MIN;
      for (int64_t k = 0; k < nruns; ++k) {
        const gdap_run& run = runs[static_cast<size_t>(k)];
        EXPECT_GT(run.length, 0);
        EXPECT_GE(run.global_start, last_end) << "runs increase";
        last_end = run.global_start + run.length;
        for (int64_t j = 0; j < run.length; ++j) from_runs.emplace(run.global_start + j, run.local_start + j);
        gdap_run paged{};
        ASSERT_EQ(gdap_map_runs(&paged, &written, h.map, r, i, k, 1), GDAP_SUCCESS);
        EXPECT_EQ(paged.global_start, run.global_start);
      }
      const int64_t lo = d.dist_type == 'u' ? -5 : 0;
      for (int64_t x = lo; x < d.size; ++x) {
        const int64_t l = gdap_test::oracle_local(d, x);
        if (l >= 0) owned.emplace(x, l);
      }
      EXPECT_EQ(from_runs, owned);
      EXPECT_EQ(static_cast<int64_t>(owned.size()), owned_shape[static_cast<size_t>(i)]);
    }
  }
}

TEST(MapProperties, RandomOneToOneLayouts) {
  std::mt19937_64 rng(20260522);
  for (int trial = 0; trial < 300; ++trial) {
    const Layout layout = gdap_test::random_layout(rng);
    SCOPED_TRACE("trial " + std::to_string(trial));
    check_layout(layout);
    if (HasFatalFailure()) return;
  }
}

TEST(MapProperties, RandomLayoutsWithReplicas) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const Layout layout = gdap_test::random_layout(rng, true);
    SCOPED_TRACE("trial " + std::to_string(trial));
    check_layout(layout);
    if (HasFatalFailure()) return;
  }
}

TEST(MapProperties, EvenAndIrregularBlocks) {
  // Even blocks with a short tail, an empty tail, and irregular blocks: the O(1) and the
  // binary-search owner paths must agree with the oracle.
  std::mt19937_64 rng(1);
  const std::vector<std::vector<int64_t>> cuts_list{
      {0, 3, 6, 9, 10}, {0, 4, 8, 10, 10}, {0, 5, 5, 10}, {0, 0, 0, 10}, {0, 1, 7, 10}, {0, 10}, {0, 10, 10, 10}};
  for (const auto& cuts : cuts_list) {
    Layout layout;
    const auto P = static_cast<int64_t>(cuts.size()) - 1;
    layout.grid = {P};
    gdap_test::Axis axis;
    for (int64_t g = 0; g < P; ++g) {
      gdap_dim d = GDAP_DIM_INIT;
      gdap_dim_set_block(&d, 10, P, g, cuts[static_cast<size_t>(g)], cuts[static_cast<size_t>(g) + 1]);
      axis.by_coord.push_back(d);
    }
    layout.axes.push_back(axis);
    layout.assemble();
    SCOPED_TRACE("cuts ending " + std::to_string(cuts[cuts.size() - 2]));
    check_layout(layout);
  }
}

TEST(MapLookups, ZeroDimensionalMap) {
  MapHandle h;
  const gdap_dim unused = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_map_create(&h.map, 1, 0, &unused), GDAP_SUCCESS) << gdap_last_error();
  int64_t rank = -1, count = -1;
  ASSERT_EQ(gdap_map_owner(&rank, nullptr, h.map, nullptr), GDAP_SUCCESS);
  EXPECT_EQ(rank, 0);
  ASSERT_EQ(gdap_map_owned_count(&count, h.map, 0), GDAP_SUCCESS);
  EXPECT_EQ(count, 1) << "a 0-d array holds one element";
  int64_t ranks[2] = {-1, -1};
  ASSERT_EQ(gdap_map_owner_batch(ranks, nullptr, h.map, nullptr, 2, gdap_device{GDAP_DEVICE_CPU, 0}, nullptr),
            GDAP_SUCCESS);
  EXPECT_EQ(ranks[0], 0);
  EXPECT_EQ(ranks[1], 0);
}

// A 2 x 2 map: dimension 0 block [0,5) [5,10), dimension 1 unstructured with replicas.
const int64_t kU0[] = {3, 0, 1};
const int64_t kU1[] = {1, 2};
std::vector<gdap_dim> two_by_two() {
  gdap_dim b0 = GDAP_DIM_INIT, b1 = GDAP_DIM_INIT, u0 = GDAP_DIM_INIT, u1 = GDAP_DIM_INIT;
  gdap_dim_set_block(&b0, 10, 2, 0, 0, 5);
  gdap_dim_set_block(&b1, 10, 2, 1, 5, 10);
  gdap_dim_set_unstructured(&u0, 4, 2, 0, kU0, 3, 0);
  gdap_dim_set_unstructured(&u1, 4, 2, 1, kU1, 2, 0);
  return {b0, u0, b0, u1, b1, u0, b1, u1};
}

TEST(MapLookups, ReplicasThenErrorsAsTable) {
  const auto dims = two_by_two();
  MapHandle h;
  ASSERT_EQ(gdap_map_create(&h.map, 4, 2, dims.data()), GDAP_SUCCESS) << gdap_last_error();
  const gdap_map* m = h.map;

  // Replicated index 1 along dimension 1 lives on grid ranks 0 and 1.
  const int64_t g[] = {7, 1};
  int64_t rank = -1, local[2] = {-1, -1}, ranks[4] = {}, count = -1;
  ASSERT_EQ(gdap_map_owner(&rank, local, m, g), GDAP_SUCCESS);
  EXPECT_EQ(rank, 2) << "the lowest rank for a replicated index";
  EXPECT_EQ(local[0], 2);
  EXPECT_EQ(local[1], 2);
  ASSERT_EQ(gdap_map_owners(ranks, &count, m, g, 4), GDAP_SUCCESS);
  ASSERT_EQ(count, 2);
  EXPECT_EQ(ranks[0], 2);
  EXPECT_EQ(ranks[1], 3);
  ASSERT_EQ(gdap_map_owners(nullptr, &count, m, g, 0), GDAP_ERR_BUFFER_TOO_SMALL) << "count only";
  EXPECT_EQ(count, 2) << "the count says how large";
  ranks[0] = -5;
  ASSERT_EQ(gdap_map_owners(ranks, &count, m, g, 1), GDAP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(ranks[0], -5) << "nothing written when too small";

  const int64_t outside[] = {10, 0}, absent[] = {0, 9}, negative[] = {-1, 0};
  int64_t out[4] = {-7, -7, -7, -7};
  gdap_dim d;
  gdap_run run;
  const gdap_device cpu{GDAP_DEVICE_CPU, 0}, cuda{GDAP_DEVICE_CUDA, 0};
  struct ErrorCase {
    const char* rule;
    std::function<gdap_status()> call;
    gdap_status expected;
    const char* words;  // the message must contain them
  };
  const ErrorCase errors[] = {
      {"owner: 'b' index past size", [&] { return gdap_map_owner(&rank, out, m, outside); }, GDAP_ERR_OUT_OF_RANGE,
       "global index 10 of dimension 0 is outside [0, 10)"},
      {"owner: negative 'b' index", [&] { return gdap_map_owner(&rank, out, m, negative); }, GDAP_ERR_OUT_OF_RANGE,
       "global index -1 of dimension 0"},
      {"owner: 'u' index past size (a map's 'u' indices lie in [0, size))",
       [&] { return gdap_map_owner(&rank, out, m, absent); }, GDAP_ERR_OUT_OF_RANGE,
       "global index 9 of dimension 1 is outside [0, 4)"},
      {"owners: 'u' index past size", [&] { return gdap_map_owners(out, &count, m, absent, 4); },
       GDAP_ERR_OUT_OF_RANGE, "global index 9 of dimension 1"},
      {"owner: NULL rank", [&] { return gdap_map_owner(nullptr, out, m, g); }, GDAP_ERR_INVALID_ARGUMENT, "rank"},
      {"owner: NULL map", [&] { return gdap_map_owner(&rank, out, nullptr, g); }, GDAP_ERR_INVALID_ARGUMENT, "map"},
      {"owner: NULL global", [&] { return gdap_map_owner(&rank, out, m, nullptr); }, GDAP_ERR_INVALID_ARGUMENT,
       "global"},
      {"owners: 'b' index past size", [&] { return gdap_map_owners(out, &count, m, outside, 4); },
       GDAP_ERR_OUT_OF_RANGE, "dimension 0"},
      {"dim: rank past nranks", [&] { return gdap_map_dim(&d, m, 4, 0); }, GDAP_ERR_OUT_OF_RANGE, "rank 4"},
      {"dim: dimension past ndim", [&] { return gdap_map_dim(&d, m, 0, 2); }, GDAP_ERR_OUT_OF_RANGE, "dimension 2"},
      {"local_shape: negative rank", [&] { return gdap_map_local_shape(out, m, -1); }, GDAP_ERR_OUT_OF_RANGE,
       "rank -1"},
      {"owned_shape: rank past nranks", [&] { return gdap_map_owned_shape(out, m, 4); }, GDAP_ERR_OUT_OF_RANGE,
       "rank 4"},
      {"owned_count: rank past nranks", [&] { return gdap_map_owned_count(out, m, 9); }, GDAP_ERR_OUT_OF_RANGE,
       "rank 9"},
      {"local_to_global: local past the buffer", [&] { return gdap_map_local_to_global(out, m, 0, outside); },
       GDAP_ERR_OUT_OF_RANGE, "local index 10"},
      {"num_runs: dimension past ndim", [&] { return gdap_map_num_runs(out, m, 0, 5); }, GDAP_ERR_OUT_OF_RANGE,
       "dimension 5"},
      {"runs: negative first", [&] { return gdap_map_runs(&run, out, m, 0, 0, -1, 1); }, GDAP_ERR_INVALID_ARGUMENT,
       "first"},
      {"owner_batch: negative count", [&] { return gdap_map_owner_batch(out, nullptr, m, g, -1, cpu, nullptr); },
       GDAP_ERR_INVALID_ARGUMENT, "count"},
      {"owner_batch: NULL ranks", [&] { return gdap_map_owner_batch(nullptr, nullptr, m, g, 1, cpu, nullptr); },
       GDAP_ERR_INVALID_ARGUMENT, "ranks"},
      {"owner_batch: unknown device type",
       [&] { return gdap_map_owner_batch(out, nullptr, m, g, 1, gdap_device{7, 0}, nullptr); }, GDAP_ERR_UNSUPPORTED,
       "device type 7"},
#ifdef GDAP_HAVE_CUDA
      // Host arrays passed as device memory: refused on a GPU machine, and without a GPU too.
      {"owner_batch: host arrays are not CUDA device memory",
       [&] { return gdap_map_owner_batch(out, nullptr, m, g, 1, cuda, nullptr); }, GDAP_ERR_DEVICE, "CUDA device 0"},
#else
      {"owner_batch: a build without CUDA", [&] { return gdap_map_owner_batch(out, nullptr, m, g, 1, cuda, nullptr); },
       GDAP_ERR_UNSUPPORTED, "without CUDA"},
#endif
  };
  for (const ErrorCase& e : errors) {
    SCOPED_TRACE(e.rule);
    EXPECT_EQ(e.call(), e.expected);
    EXPECT_NE(std::string(gdap_last_error()).find(e.words), std::string::npos) << gdap_last_error();
    EXPECT_EQ(out[0], -7) << "nothing written on failure";
    EXPECT_EQ(out[1], -7);
  }
}

TEST(MapLookups, ConcurrentReadersAgree) {
  // One map read from several threads at once (owner_batch on the host, owner, runs).
  const auto dims = two_by_two();
  MapHandle h;
  ASSERT_EQ(gdap_map_create(&h.map, 4, 2, dims.data()), GDAP_SUCCESS);
  std::vector<int64_t> globals;
  for (int64_t a = 0; a < 10; ++a) {
    for (int64_t b = 0; b < 4; ++b) globals.insert(globals.end(), {a, b});
  }
  const auto count = static_cast<int64_t>(globals.size() / 2);
  std::vector<std::vector<int64_t>> results(4, std::vector<int64_t>(static_cast<size_t>(count)));
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        gdap_map_owner_batch(result.data(), nullptr, h.map, globals.data(), count, gdap_device{GDAP_DEVICE_CPU, 0},
                             nullptr);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& result : results) EXPECT_EQ(result, results[0]);
}

// ------------------------------------------------------------------------------------------
// Scale: 1,024 ranks on a 32 x 32 block-cyclic grid build and answer correctly.

TEST(MapScale, ThousandRanksBlockCyclic) {
  const int64_t P = 32, sizes[2] = {1000, 999}, bs[2] = {3, 4};
  std::vector<gdap_dim> dims;
  for (int64_t r = 0; r < P * P; ++r) {
    const int64_t coords[2] = {r / P, r % P};
    for (int i = 0; i < 2; ++i) {
      gdap_dim d = GDAP_DIM_INIT;
      const int64_t start = std::min(coords[i] * bs[i], sizes[i]);
      gdap_dim_set_cyclic(&d, sizes[i], P, coords[i], start, bs[i]);
      dims.push_back(d);
    }
  }
  MapHandle h;
  ASSERT_EQ(gdap_map_create(&h.map, P * P, 2, dims.data()), GDAP_SUCCESS) << gdap_last_error();
  int64_t owned_sum = 0;
  for (int64_t r = 0; r < P * P; ++r) {
    int64_t c = 0;
    ASSERT_EQ(gdap_map_owned_count(&c, h.map, r), GDAP_SUCCESS);
    owned_sum += c;
  }
  EXPECT_EQ(owned_sum, sizes[0] * sizes[1]);
  // Closed form: grid rank (g / bs) % P, local (g / (bs * P)) * bs + g % bs, per dimension.
  std::vector<int64_t> globals, expected_rank, expected_local;
  std::mt19937_64 rng(3);
  for (int k = 0; k < 20000; ++k) {
    int64_t rank = 0;
    for (int i = 0; i < 2; ++i) {
      const int64_t g = static_cast<int64_t>(rng() % static_cast<uint64_t>(sizes[i]));
      globals.push_back(g);
      rank = rank * P + (g / bs[i]) % P;
      expected_local.push_back(g / (bs[i] * P) * bs[i] + g % bs[i]);
    }
    expected_rank.push_back(rank);
  }
  std::vector<int64_t> ranks(expected_rank.size()), locals(expected_local.size());
  ASSERT_EQ(gdap_map_owner_batch(ranks.data(), locals.data(), h.map, globals.data(),
                                 static_cast<int64_t>(ranks.size()), gdap_device{GDAP_DEVICE_CPU, 0}, nullptr),
            GDAP_SUCCESS);
  EXPECT_EQ(ranks, expected_rank);
  EXPECT_EQ(locals, expected_local);
  int64_t runs = 0;
  ASSERT_EQ(gdap_map_num_runs(&runs, h.map, 31, 1), GDAP_SUCCESS);
  EXPECT_EQ(runs, 7) << "grid rank 31 holds blocks 31, 63, ..., 223 of the 249 full ones along dimension 1; "
                        "the partial block 249 goes to grid rank 249 % 32 = 25";
}

}  // namespace
