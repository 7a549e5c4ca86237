// Layer 2: per-dimension maps and runs, the process grid, and gdap_map — its collective rules as a
// table and its look-ups as properties over random valid layouts.
#include "layouts.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>

namespace {

using gdap_test::Layout;

struct MapHandle {
  gdap_map* map = nullptr;
  ~MapHandle() { gdap_map_destroy(map); }
};

// Every N-d global index of a shape, in C order.
void for_each_index(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  std::vector<int64_t> idx(shape.size());
  for (int64_t k = 0; k < total; ++k) {
    int64_t rest = k;
    for (size_t i = shape.size(); i-- > 0;) {
      idx[i] = rest % shape[i];
      rest /= shape[i];
    }
    f(idx);
  }
}

// ----- per dimension, one process -----

TEST(DimMap, BlockHeldRangeIncludesPadding) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, 30, 3, 1, 8, 22);
  gdap_dim_set_padding(&d, 2, 2);
  int64_t local = -1, global = -1;
  EXPECT_EQ(gdap_dim_global_to_local(&local, &d, 8), GDAP_SUCCESS);
  EXPECT_EQ(local, 0) << "a halo cell is held";
  EXPECT_EQ(gdap_dim_global_to_local(&local, &d, 22), GDAP_ERR_NOT_FOUND);
  EXPECT_EQ(gdap_dim_local_to_global(&global, &d, 13), GDAP_SUCCESS);
  EXPECT_EQ(global, 21);
  EXPECT_EQ(gdap_dim_local_to_global(&global, &d, 14), GDAP_ERR_OUT_OF_RANGE);
  gdap_run run{};
  int64_t n = 0, written = 0;
  EXPECT_EQ(gdap_dim_num_runs(&n, &d), GDAP_SUCCESS);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(gdap_dim_runs(&run, &written, &d, 0, 1), GDAP_SUCCESS);
  EXPECT_EQ(written, 1);
  EXPECT_EQ(run.global_start, 10);
  EXPECT_EQ(run.length, 10);
  EXPECT_EQ(run.local_start, 2) << "owned elements start after the communication padding";
}

TEST(DimMap, PeriodicHalosWrap) {
  gdap_dim d = GDAP_DIM_INIT;  // grid rank 0 of 2 over 16, halo of 1 on each side
  gdap_dim_set_block(&d, 16, 2, 0, -1, 9);
  gdap_dim_set_padding(&d, 1, 1);
  gdap_dim_set_periodic(&d, 1);
  int64_t global = -1, local = -1;
  EXPECT_EQ(gdap_dim_local_to_global(&global, &d, 0), GDAP_SUCCESS);
  EXPECT_EQ(global, 15) << "the left halo holds the last element";
  EXPECT_EQ(gdap_dim_global_to_local(&local, &d, 15), GDAP_SUCCESS);
  EXPECT_EQ(local, 0);
  EXPECT_EQ(gdap_dim_global_to_local(&local, &d, 0), GDAP_SUCCESS);
  EXPECT_EQ(local, 1);
}

TEST(DimMap, BlockCyclicRunsArePagedInGlobalOrder) {
  gdap_dim d = GDAP_DIM_INIT;  // size 11, block 2, 2 ranks, rank 1: blocks 1, 3 and the partial block 5
  gdap_dim_set_cyclic(&d, 11, 2, 1, 2, 2);
  int64_t n = 0;
  ASSERT_EQ(gdap_dim_num_runs(&n, &d), GDAP_SUCCESS);
  EXPECT_EQ(n, 3);
  gdap_run runs[2];
  int64_t written = 0;
  ASSERT_EQ(gdap_dim_runs(runs, &written, &d, 1, 2), GDAP_SUCCESS);
  ASSERT_EQ(written, 2);
  EXPECT_EQ(runs[0].global_start, 6);
  EXPECT_EQ(runs[0].local_start, 2);
  EXPECT_EQ(runs[1].global_start, 10);
  EXPECT_EQ(runs[1].length, 1) << "the partial trailing block";
  ASSERT_EQ(gdap_dim_runs(runs, &written, &d, 3, 2), GDAP_SUCCESS);
  EXPECT_EQ(written, 0);
  int64_t local = -1;
  EXPECT_EQ(gdap_dim_global_to_local(&local, &d, 7), GDAP_SUCCESS);
  EXPECT_EQ(local, 3);
  EXPECT_EQ(gdap_dim_global_to_local(&local, &d, 4), GDAP_ERR_NOT_FOUND);
}

TEST(DimMap, UnstructuredRunsFollowBothIndices) {
  const int64_t idx[] = {5, 6, 7, 1, 2, 9};
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_unstructured(&d, 10, 1, 0, idx, 6, -1);
  gdap_run runs[4];
  int64_t written = 0;
  ASSERT_EQ(gdap_dim_runs(runs, &written, &d, 0, 4), GDAP_SUCCESS);
  ASSERT_EQ(written, 3);
  EXPECT_EQ(runs[0].global_start, 1);
  EXPECT_EQ(runs[0].length, 2);
  EXPECT_EQ(runs[0].local_start, 3);
  EXPECT_EQ(runs[1].global_start, 5);
  EXPECT_EQ(runs[1].length, 3);
  EXPECT_EQ(runs[2].global_start, 9);
}

TEST(Grid, CoordinatesAreCOrderAndRoundTrip) {
  const int64_t shape[] = {2, 3, 4};
  for (int64_t r = 0; r < 24; ++r) {
    int64_t c[3], back = -1;
    ASSERT_EQ(gdap_grid_rank_to_coords(c, 3, shape, r), GDAP_SUCCESS);
    EXPECT_EQ(c[0] * 12 + c[1] * 4 + c[2], r) << "last coordinate fastest";
    ASSERT_EQ(gdap_grid_coords_to_rank(&back, 3, shape, c), GDAP_SUCCESS);
    EXPECT_EQ(back, r);
  }
  int64_t c[3];
  EXPECT_EQ(gdap_grid_rank_to_coords(c, 3, shape, 24), GDAP_ERR_OUT_OF_RANGE);
  const int64_t huge[] = {INT64_MAX, 2};
  EXPECT_EQ(gdap_grid_rank_to_coords(c, 2, huge, 0), GDAP_ERR_OVERFLOW);
}

// ----- collective rules -----

gdap_dim B(int64_t size, int64_t P, int64_t r, int64_t start, int64_t stop, int64_t lo = -1, int64_t hi = -1) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, size, P, r, start, stop);
  if (lo >= 0) gdap_dim_set_padding(&d, lo, hi);
  return d;
}
gdap_dim C(int64_t size, int64_t P, int64_t r, int64_t bs) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_cyclic(&d, size, P, r, r * bs, bs);
  return d;
}
const int64_t kU0[] = {0, 2, 4}, kU1[] = {1, 3, 5}, kU1dup[] = {1, 2, 5}, kU1short[] = {1, 3};
gdap_dim U(int64_t P, int64_t r, const int64_t* idx, int64_t n, int one_to_one) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_unstructured(&d, 6, P, r, idx, n, one_to_one);
  return d;
}

struct Collective {
  const char* rule;
  int64_t nranks;
  int64_t ndim;
  std::vector<gdap_dim> dims;
  gdap_status expected;
  std::vector<std::string> words;
};

std::vector<Collective> collective_cases() {
  return {
      {"valid: 2 row blocks", 2, 1, {B(10, 2, 0, 0, 5), B(10, 2, 1, 5, 10)}, GDAP_SUCCESS, {}},
      {"valid: 2x2 block x cyclic", 4, 2,
       {B(4, 2, 0, 0, 2), C(5, 2, 0, 2), B(4, 2, 0, 0, 2), C(5, 2, 1, 2), B(4, 2, 1, 2, 4), C(5, 2, 0, 2),
        B(4, 2, 1, 2, 4), C(5, 2, 1, 2)},
       GDAP_SUCCESS, {}},
      {"valid: padded blocks overlap by their halos", 2, 1, {B(18, 2, 0, 0, 10, 1, 1), B(18, 2, 1, 8, 18, 1, 1)},
       GDAP_SUCCESS, {}},
      {"valid: one_to_one unstructured", 2, 1, {U(2, 0, kU0, 3, 1), U(2, 1, kU1, 3, 1)}, GDAP_SUCCESS, {}},
      {"replicated unstructured indices must still cover size", 2, 1, {U(2, 0, kU0, 3, 0), U(2, 1, kU1dup, 3, 0)}, GDAP_ERR_PROTOCOL,
       {"5 distinct indices but size is 6"}},
      {"per process: each rank checked, rank named", 2, 1, {B(10, 2, 0, 0, 5), B(10, 2, 1, 5, 11)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('b'): stop (11) > size (10)"}},
      {"gap between owned ranges", 3, 1, {B(10, 3, 0, 0, 3), B(10, 3, 1, 4, 6), B(10, 3, 2, 6, 10)}, GDAP_ERR_PROTOCOL,
       {"rank 1", "starts at 4 but grid rank 0 owns up to 3 (a gap)"}},
      {"overlap between owned ranges", 3, 1, {B(10, 3, 0, 0, 4), B(10, 3, 1, 3, 6), B(10, 3, 2, 6, 10)},
       GDAP_ERR_PROTOCOL, {"rank 1", "(an overlap)"}},
      {"same size on every rank", 2, 1, {B(10, 2, 0, 0, 5), B(12, 2, 1, 5, 12)}, GDAP_ERR_PROTOCOL,
       {"rank 1", "size (12) != rank 0's (10)"}},
      {"same dist_type on every rank", 2, 1, {B(10, 2, 0, 0, 5), C(10, 2, 1, 5)}, GDAP_ERR_PROTOCOL,
       {"rank 1", "dist_type differs"}},
      {"grid product equals the number of ranks", 3, 1, {B(10, 2, 0, 0, 5), B(10, 2, 1, 5, 10), B(10, 2, 1, 5, 10)},
       GDAP_ERR_PROTOCOL, {"process grid (2) has 2 ranks, but 3 ranks gave dictionaries"}},
      {"proc_grid_rank is the rank's C-order coordinate", 2, 1, {B(10, 2, 1, 5, 10), B(10, 2, 0, 0, 5)},
       GDAP_ERR_PROTOCOL, {"rank 0", "proc_grid_rank (1) != 0"}},
      {"identical dictionaries along an axis", 4, 2,
       {B(4, 2, 0, 0, 2), C(5, 2, 0, 2), B(4, 2, 0, 0, 2), C(5, 2, 1, 2), B(4, 2, 1, 2, 4), C(5, 2, 0, 2),
        B(4, 2, 1, 2, 4), C(5, 2, 1, 1)},
       GDAP_ERR_PROTOCOL, {"rank 3, dimension 1 ('c')"}},
      {"communication padding equals the neighbour's", 2, 1, {B(18, 2, 0, 0, 10, 0, 1), B(18, 2, 1, 7, 18, 2, 0)},
       GDAP_ERR_PROTOCOL, {"rank 1", "communication padding[0] (2) != padding[1] (1)"}},
      {"communication padding no wider than the neighbour owns", 3, 1,
       {B(10, 3, 0, 0, 5, 0, 2), B(10, 3, 1, 1, 6, 2, 2), B(10, 3, 2, 2, 10, 2, 0)}, GDAP_ERR_PROTOCOL,
       {"rank 1", "communication padding 2 is wider than what the neighbour owns"}},
      {"padding on all ranks or none", 2, 1, {B(10, 2, 0, 0, 5, 0, 0), B(10, 2, 1, 5, 10)}, GDAP_ERR_PROTOCOL,
       {"'padding' is given on some grid ranks"}},
      {"same block_size on every rank", 2, 1, {C(10, 2, 0, 2), C(10, 2, 1, 3)}, GDAP_ERR_PROTOCOL,
       {"rank 1", "block_size (3) differs from grid rank 0's (2)"}},
      {"one_to_one indices held once", 2, 1, {U(2, 0, kU0, 3, 1), U(2, 1, kU1dup, 3, 1)}, GDAP_ERR_PROTOCOL,
       {"global index 2 is also held by grid rank 0, but one_to_one is true"}},
      {"indices cover size", 2, 1, {U(2, 0, kU0, 3, 1), U(2, 1, kU1short, 2, 1)}, GDAP_ERR_PROTOCOL,
       {"5 distinct indices but size is 6"}},
      {"same one_to_one on every rank", 2, 1, {U(2, 0, kU0, 3, 1), U(2, 1, kU1, 3, 0)}, GDAP_ERR_PROTOCOL,
       {"one_to_one (0) differs"}},
      {"an unresolved {} is refused", 1, 1, {gdap_dim GDAP_DIM_INIT}, GDAP_ERR_PROTOCOL, {"must be resolved first"}},
  };
}

TEST(MapCreate, CollectiveRules) {
  for (const Collective& c : collective_cases()) {
    MapHandle m;
    const gdap_status s = gdap_map_create(&m.map, c.nranks, c.ndim, c.dims.data());
    EXPECT_EQ(s, c.expected) << c.rule << ": " << gdap_last_error();
    if (c.expected == GDAP_SUCCESS) {
      EXPECT_NE(m.map, nullptr) << c.rule;
      continue;
    }
    EXPECT_EQ(m.map, nullptr) << c.rule << ": no map on failure";
    for (const auto& w : c.words) {
      EXPECT_NE(std::string(gdap_last_error()).find(w), std::string::npos) << c.rule << ": " << gdap_last_error();
    }
  }
}

TEST(MapCreate, BadArguments) {
  gdap_map* m = nullptr;
  gdap_dim d = B(4, 1, 0, 0, 4);
  EXPECT_EQ(gdap_map_create(nullptr, 1, 1, &d), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_map_create(&m, 0, 1, &d), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_map_create(&m, INT64_MAX, 2, &d), GDAP_ERR_OVERFLOW);
  EXPECT_EQ(gdap_map_create(&m, 1, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_map_destroy(nullptr), GDAP_SUCCESS);
}

// ----- properties over random valid layouts -----

void check_layout(const Layout& L) {
  MapHandle m;
  ASSERT_EQ(gdap_map_create(&m.map, L.nranks, L.ndim(), L.ranks.data()), GDAP_SUCCESS) << gdap_last_error();
  const int64_t ndim = L.ndim();
  std::vector<int64_t> shape(static_cast<size_t>(ndim));
  ASSERT_EQ(gdap_map_global_shape(shape.data(), m.map), GDAP_SUCCESS);
  int64_t total = 1, owned_sum = 0;
  for (int64_t s : shape) total *= s;
  for (int64_t r = 0; r < L.nranks; ++r) {
    int64_t n = 0;
    ASSERT_EQ(gdap_map_owned_count(&n, m.map, r), GDAP_SUCCESS);
    owned_sum += n;
  }
  EXPECT_EQ(owned_sum, total) << "owned counts sum to the global size";

  std::vector<int64_t> globals, batch_ranks, batch_locals;
  std::map<int64_t, int64_t> owned_per_rank;
  for_each_index(shape, [&](const std::vector<int64_t>& g) {
    int64_t rank = -1, count = 0, owners[8];
    std::vector<int64_t> local(static_cast<size_t>(ndim)), back(static_cast<size_t>(ndim));
    ASSERT_EQ(gdap_map_owners(owners, &count, m.map, g.data(), 8), GDAP_SUCCESS) << gdap_last_error();
    ASSERT_EQ(count, 1) << "one owner for a one_to_one layout";
    ASSERT_EQ(gdap_map_owner(&rank, local.data(), m.map, g.data()), GDAP_SUCCESS) << gdap_last_error();
    ASSERT_EQ(rank, owners[0]);
    ASSERT_EQ(gdap_map_local_to_global(back.data(), m.map, rank, local.data()), GDAP_SUCCESS);
    ASSERT_EQ(back, g) << "global -> local -> global";
    owned_per_rank[rank]++;
    globals.insert(globals.end(), g.begin(), g.end());
    batch_locals.insert(batch_locals.end(), local.begin(), local.end());
    batch_ranks.push_back(rank);
  });
  for (int64_t r = 0; r < L.nranks; ++r) {
    int64_t n = 0;
    gdap_map_owned_count(&n, m.map, r);
    EXPECT_EQ(owned_per_rank[r], n) << "rank " << r << " owns what the look-ups say";
  }
  // The batched host look-up agrees element by element.
  const auto count = static_cast<int64_t>(batch_ranks.size());
  std::vector<int64_t> ranks(static_cast<size_t>(count), -9), locals(batch_locals.size(), -9);
  ASSERT_EQ(gdap_map_owner_batch(ranks.data(), locals.data(), m.map, globals.data(), count, {GDAP_DEVICE_CPU, 0},
                                 nullptr),
            GDAP_SUCCESS);
  EXPECT_EQ(ranks, batch_ranks);
  EXPECT_EQ(locals, batch_locals);
  // Runs of each rank and dimension cover exactly its owned indices along that dimension.
  for (int64_t r = 0; r < L.nranks; ++r) {
    std::vector<int64_t> owned_shape(static_cast<size_t>(ndim));
    gdap_map_owned_shape(owned_shape.data(), m.map, r);
    for (int64_t i = 0; i < ndim; ++i) {
      int64_t n = 0, written = 0, covered = 0;
      ASSERT_EQ(gdap_map_num_runs(&n, m.map, r, i), GDAP_SUCCESS);
      std::vector<gdap_run> runs(static_cast<size_t>(n) + 1);
      ASSERT_EQ(gdap_map_runs(runs.data(), &written, m.map, r, i, 0, n + 1), GDAP_SUCCESS);
      ASSERT_EQ(written, n);
      gdap_dim d = GDAP_DIM_INIT;
      ASSERT_EQ(gdap_map_dim(&d, m.map, r, i), GDAP_SUCCESS);
      for (int64_t k = 0; k < n; ++k) {
        if (k > 0) EXPECT_GT(runs[k].global_start, runs[k - 1].global_start) << "runs in increasing global order";
        for (int64_t j = 0; j < runs[k].length; ++j) {
          int64_t global = -1;
          ASSERT_EQ(gdap_dim_local_to_global(&global, &d, runs[k].local_start + j), GDAP_SUCCESS);
          EXPECT_EQ(global, runs[k].global_start + j);
        }
        covered += runs[k].length;
      }
      EXPECT_EQ(covered, owned_shape[static_cast<size_t>(i)]);
    }
  }
}

TEST(MapProperties, RandomValidLayouts) {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 400; ++trial) {
    const Layout L = gdap_test::random_layout(rng);
    SCOPED_TRACE("trial " + std::to_string(trial));
    check_layout(L);
    if (HasFatalFailure()) return;
  }
}

TEST(MapLookups, OutOfRangeAndNotFound) {
  const int64_t idx0[] = {4, 0}, idx1[] = {2, 7};  // 1 and 3 are held by nobody... size 4 is not covered
  gdap_dim dims[2];
  gdap_dim_set_unstructured(&dims[0], 4, 2, 0, idx0, 2, 1);
  gdap_dim_set_unstructured(&dims[1], 4, 2, 1, idx1, 2, 1);
  MapHandle m;
  ASSERT_EQ(gdap_map_create(&m.map, 2, 1, dims), GDAP_SUCCESS) << gdap_last_error();
  int64_t rank = -1, g = 1;
  EXPECT_EQ(gdap_map_owner(&rank, nullptr, m.map, &g), GDAP_ERR_NOT_FOUND) << "indices need not be 0..size-1";
  g = 7;
  EXPECT_EQ(gdap_map_owner(&rank, nullptr, m.map, &g), GDAP_SUCCESS);
  EXPECT_EQ(rank, 1);
  MapHandle b;
  gdap_dim blocks[2] = {B(10, 2, 0, 0, 5), B(10, 2, 1, 5, 10)};
  ASSERT_EQ(gdap_map_create(&b.map, 2, 1, blocks), GDAP_SUCCESS);
  g = 10;
  EXPECT_EQ(gdap_map_owner(&rank, nullptr, b.map, &g), GDAP_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(gdap_last_error()).find("global index 10 of dimension 0"), std::string::npos);
  int64_t owners[1], count = 0;
  g = 3;
  EXPECT_EQ(gdap_map_owners(owners, &count, b.map, &g, 0), GDAP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(gdap_map_owned_count(&count, b.map, 2), GDAP_ERR_OUT_OF_RANGE);
  int64_t globals[] = {3, -1, 9}, ranks[3];
  ASSERT_EQ(gdap_map_owner_batch(ranks, nullptr, b.map, globals, 3, {GDAP_DEVICE_CPU, 0}, nullptr), GDAP_SUCCESS);
  EXPECT_EQ(ranks[0], 0);
  EXPECT_EQ(ranks[1], -1) << "a bad index in a batch gets -1";
  EXPECT_EQ(ranks[2], 1);
}

TEST(MapLookups, ReplicasAreAllOwners) {
  const int64_t idx0[] = {0, 1, 2}, idx1[] = {2, 3};
  gdap_dim dims[2];
  gdap_dim_set_unstructured(&dims[0], 4, 2, 0, idx0, 3, 0);
  gdap_dim_set_unstructured(&dims[1], 4, 2, 1, idx1, 2, 0);
  MapHandle m;
  ASSERT_EQ(gdap_map_create(&m.map, 2, 1, dims), GDAP_SUCCESS) << gdap_last_error();
  int64_t owners[2], count = 0, g = 2, rank = -1, local = -1;
  ASSERT_EQ(gdap_map_owners(owners, &count, m.map, &g, 2), GDAP_SUCCESS);
  ASSERT_EQ(count, 2);
  EXPECT_EQ(owners[0], 0);
  EXPECT_EQ(owners[1], 1);
  ASSERT_EQ(gdap_map_owner(&rank, &local, m.map, &g), GDAP_SUCCESS);
  EXPECT_EQ(rank, 0) << "the lowest rank";
  EXPECT_EQ(local, 2);
}

TEST(MapScale, ThousandRanksBlockCyclic) {
  // 32 x 32 grid, 65536 x 65536 block-cyclic 64: 1,024 ranks, 2,048 dictionaries.
  const int64_t P = 32, n = 65536, bs = 64;
  std::vector<gdap_dim> dims;
  for (int64_t r = 0; r < P * P; ++r) {
    dims.push_back(C(n, P, r / P, bs));
    dims.push_back(C(n, P, r % P, bs));
  }
  MapHandle m;
  ASSERT_EQ(gdap_map_create(&m.map, P * P, 2, dims.data()), GDAP_SUCCESS) << gdap_last_error();
  int64_t count = 0, total = 0;
  for (int64_t r = 0; r < P * P; ++r) {
    ASSERT_EQ(gdap_map_owned_count(&count, m.map, r), GDAP_SUCCESS);
    total += count;
  }
  EXPECT_EQ(total, n * n);
  const int64_t g[2] = {64 * 33 + 5, 64 * 31 + 1};
  int64_t rank = -1, local[2];
  ASSERT_EQ(gdap_map_owner(&rank, local, m.map, g), GDAP_SUCCESS);
  EXPECT_EQ(rank, 1 * P + 31);
  EXPECT_EQ(local[0], 64 + 5);
  EXPECT_EQ(local[1], 1);
}

}  // namespace
