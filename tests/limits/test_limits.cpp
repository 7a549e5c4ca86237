// Limits and overflow: sizes, strides, products and counts near INT64_MAX, huge padding, huge
// ndim, billions of unstructured indices declared but not present, grid products that overflow,
// NULL pointers with non-zero counts and negative sizes, through every public entry that takes
// them. Each case names the rule, expects a status and words the message must hold (the key, the
// value, the dimension), and checks that what the caller passed in is unchanged.
//
// The whole executable runs under an address-space limit (RLIMIT_AS, kAddressLimit): an entry
// that tried to allocate what a hostile size asks for would fail with GDAP_ERR_NO_MEMORY (or
// die) instead of passing by luck on a large machine; LimitGuard.IsActive proves the limit holds.
#include <gdap/gdap.h>

#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "protocol/json.hpp"
#include "support/dims.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int64_t kMax = INT64_MAX;
constexpr int64_t kTwo32 = int64_t{1} << 32;
constexpr rlim_t kRoom = rlim_t{6} << 30;  // 6 GiB beyond what is mapped at start: room for the tests, not for a hostile size

using gdap_test::block;
using gdap_test::cyclic;
using gdap_test::padded;
using gdap_test::periodic;
using gdap_test::undistributed;

// The address space mapped when the executable starts (or now, when called later): the libraries' own reservations, which
// grow with the machine (a BLAS maps buffers and stacks for each of its threads, one per core: on
// a 64-core GPU host a fixed 6 GiB limit left nothing and gtest's listing itself ran out).
rlim_t mapped_at_start() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}

const rlim_t kAddressLimit = mapped_at_start() + kRoom;

// Installed before main() (and before gtest lists the tests), so every case runs under it.
const bool kLimited = [] {
  rlimit lim{};
  if (getrlimit(RLIMIT_AS, &lim) != 0) return false;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < kAddressLimit) return true;  // already tighter
  lim.rlim_cur = kAddressLimit;
  return setrlimit(RLIMIT_AS, &lim) == 0;
}();

bool has_all(const std::string& message, const std::vector<std::string>& words) {
  for (const auto& w : words) {
    if (message.find(w) == std::string::npos) return false;
  }
  return true;
}

struct Case {
  const char* rule;
  std::function<gdap_status()> call;  // makes the call and checks its outputs are untouched
  gdap_status expected;
  std::vector<std::string> words;
};

void run_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rule);
    if (std::getenv("GDAP_LIMITS_TRACE")) std::fprintf(stderr, "case: %s\n", c.rule);
    const gdap_status s = c.call();
    const std::string message = gdap_last_error();
    EXPECT_EQ(s, c.expected) << c.rule << ": got " << gdap_status_string(s) << ": " << message;
    EXPECT_TRUE(has_all(message, c.words)) << c.rule << ": " << message;
  }
}

// A sentinel that a refused call must leave as it was.
gdap_map* const kMapSentinel = reinterpret_cast<gdap_map*>(uintptr_t{0x5eed});
gdap_array* const kArraySentinel = reinterpret_cast<gdap_array*>(uintptr_t{0x5eed});
gdap_plan* const kPlanSentinel = reinterpret_cast<gdap_plan*>(uintptr_t{0x5eed});
gdap_halo* const kHaloSentinel = reinterpret_cast<gdap_halo*>(uintptr_t{0x5eed});

const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
const gdap_device kCpu{GDAP_DEVICE_CPU, 0};

gdap_status map_create(int64_t nranks, int64_t ndim, const std::vector<gdap_dim>& dims) {
  gdap_map* out = kMapSentinel;
  const std::vector<gdap_dim> before = dims;
  const gdap_status s = gdap_map_create(&out, nranks, ndim, dims.data());
  if (s == GDAP_SUCCESS) {
    gdap_map_destroy(out);
  } else {
    EXPECT_EQ(out, kMapSentinel) << "a refused gdap_map_create wrote *out";
  }
  EXPECT_EQ(std::memcmp(before.data(), dims.data(), dims.size() * sizeof(gdap_dim)), 0);
  return s;
}

gdap_status array_create(gdap_dtype dtype, const std::vector<gdap_dim>& dims, int64_t ndim) {
  gdap_array* out = kArraySentinel;
  const gdap_status s = gdap_array_create(&out, dtype, kCpu, dims.data(), ndim);
  if (s == GDAP_SUCCESS) {
    gdap_array_destroy(out);
  } else {
    EXPECT_EQ(out, kArraySentinel) << "a refused gdap_array_create wrote *out";
  }
  return s;
}

gdap_status array_wrap(void* data, gdap_dtype dtype, const int64_t* strides, const std::vector<gdap_dim>& dims) {
  gdap_array* out = kArraySentinel;
  const gdap_status s =
      gdap_array_wrap(&out, data, dtype, kCpu, strides, dims.data(), static_cast<int64_t>(dims.size()));
  if (s == GDAP_SUCCESS) {
    gdap_array_destroy(out);
  } else {
    EXPECT_EQ(out, kArraySentinel) << "a refused gdap_array_wrap wrote *out";
  }
  return s;
}

gdap_dim unstructured(int64_t size, const int64_t* indices, int64_t n) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_unstructured(&d, size, 1, 0, indices, n, -1), GDAP_SUCCESS);
  return d;
}

// ---------------------------------------------------------------------------------------------

TEST(LimitGuard, IsActive) {
  ASSERT_TRUE(kLimited) << "could not set RLIMIT_AS";
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &lim), 0);
  EXPECT_LE(lim.rlim_cur, kAddressLimit);
  // 16 GiB cannot be had under the limit: an entry that tried a hostile allocation would fail too.
  void* p = std::malloc(size_t{16} << 30);
  EXPECT_EQ(p, nullptr) << "RLIMIT_AS does not hold: huge allocations would pass by luck";
  std::free(p);
}

// ---------------------------------------------------------------------------------------------
// Descriptor validation: gdap_dim_validate, gdap_dims_validate, counts and extents.

TEST(LimitsDescriptor, ExtremeValuesAreClearErrors) {
  static const int64_t three[] = {0, 1, 2};
  run_cases({
      {"limits: negative size", [] { const gdap_dim d = block(-5, 1, 0, 0, 0); return gdap_dim_validate(&d, 0, -1); },
       GDAP_ERR_PROTOCOL, {"dimension 0 ('b')", "size (-5) < 0"}},
      {"limits: size INT64_MIN", [] { const gdap_dim d = cyclic(INT64_MIN, 1, 0, 0); return gdap_dim_validate(&d, 3, -1); },
       GDAP_ERR_PROTOCOL, {"dimension 3 ('c')", "size (-9223372036854775808) < 0"}},
      {"limits: negative proc_grid_size", [] { const gdap_dim d = block(10, -2, 0, 0, 10); return gdap_dim_validate(&d, 1, -1); },
       GDAP_ERR_PROTOCOL, {"dimension 1 ('b')", "proc_grid_size (-2) < 1"}},
      {"limits: proc_grid_rank INT64_MAX", [] { const gdap_dim d = block(10, 2, kMax, 0, 5); return gdap_dim_validate(&d, 0, -1); },
       GDAP_ERR_PROTOCOL, {"proc_grid_rank (9223372036854775807)"}},
      {"limits: padding INT64_MAX on both sides of a periodic block",
       [] { const gdap_dim d = periodic(padded(block(10, 1, 0, 0, 10), kMax, kMax)); return gdap_dim_validate(&d, 0, -1); },
       GDAP_ERR_PROTOCOL, {"dimension 0 ('b')", "padding (9223372036854775807, 9223372036854775807) is wider than stop - start (10)"}},
      {"limits: periodic start INT64_MIN (no wrap below it)",
       [] { const gdap_dim d = periodic(padded(block(10, 1, 0, INT64_MIN, 10), kMax, 0)); return gdap_dim_validate(&d, 0, -1); },
       GDAP_ERR_PROTOCOL, {"dimension 0 ('b')", "start (-9223372036854775808) < 0"}},
      {"limits: periodic start -1 with stop INT64_MAX (stop - start is never formed)",
       [] { const gdap_dim d = periodic(padded(block(kMax, 1, 0, -1, kMax), 1, 0)); return gdap_dim_validate(&d, 0, -1); },
       GDAP_ERR_PROTOCOL, {"start (-1) < 0"}},
      {"limits: cyclic block_size INT64_MAX times rank",
       [] { const gdap_dim d = cyclic(kMax, 4, 3, 0, kMax); return gdap_dim_validate(&d, 2, -1); },
       GDAP_ERR_PROTOCOL, {"dimension 2 ('c')", "overflows int64"}},
      {"limits: negative buffer extent",
       [] { const gdap_dim d = block(10, 1, 0, 0, 10); const int64_t shape[] = {-7}; return gdap_dims_validate(&d, 1, shape); },
       GDAP_ERR_INVALID_ARGUMENT, {"shape[0] (-7) < 0"}},
      {"limits: num_indices negative",
       [] { gdap_dim d = unstructured(3, three, 3); d.num_indices = -1; return gdap_dim_validate(&d, 0, -1); },
       GDAP_ERR_PROTOCOL, {"num_indices (-1) < 0"}},
      {"limits: billions of indices declared, NULL pointer",
       [] { const gdap_dim d = unstructured(kMax, nullptr, int64_t{5} << 30); return gdap_dim_validate(&d, 0, -1); },
       GDAP_ERR_PROTOCOL, {"dimension 0 ('u')", "indices is NULL but num_indices is 5368709120"}},
      {"limits: billions of indices declared, 3 present, buffer extent known",
       [] { const gdap_dim d = unstructured(kMax, three, int64_t{5} << 30); return gdap_dim_validate(&d, 0, 3); },
       GDAP_ERR_PROTOCOL, {"num_indices (5368709120) != buffer shape (3)"}},
      {"limits: negative ndim", [] { const gdap_dim d = block(1, 1, 0, 0, 1); return gdap_dims_validate(&d, -1, nullptr); },
       GDAP_ERR_INVALID_ARGUMENT, {"ndim (-1) < 0"}},
      {"limits: INT32_MAX dims, dims NULL", [] { return gdap_dims_validate(nullptr, INT32_MAX, nullptr); },
       GDAP_ERR_INVALID_ARGUMENT, {"dims is NULL"}},
      {"limits: owned count of a NULL dim", [] { int64_t n = 7; const gdap_status s = gdap_dim_owned_count(&n, nullptr); EXPECT_EQ(n, 7); return s; },
       GDAP_ERR_INVALID_ARGUMENT, {"is NULL"}},
      {"limits: local extent of stop - start overflowing",
       [] { int64_t n = 7; gdap_dim d = block(kMax, 1, 0, 0, kMax); d.start = -2; const gdap_status s = gdap_dim_local_extent(&n, &d); EXPECT_EQ(n, 7); return s; },
       GDAP_ERR_PROTOCOL, {"start (-2) < 0"}},
      {"limits: global_to_local at INT64_MIN",
       [] { int64_t n = 7; const gdap_dim d = block(kMax, 1, 0, 0, kMax); const gdap_status s = gdap_dim_global_to_local(&n, &d, INT64_MIN); EXPECT_EQ(n, 7); return s; },
       GDAP_ERR_NOT_FOUND, {"-9223372036854775808"}},
      {"limits: local_to_global past INT64_MAX",
       [] { int64_t n = 7; const gdap_dim d = cyclic(kMax, 2, 1, 1); const gdap_status s = gdap_dim_local_to_global(&n, &d, kMax); EXPECT_EQ(n, 7); return s; },
       GDAP_ERR_OUT_OF_RANGE, {"9223372036854775807"}},
  });
}

// A million dimensions: fine to check when they are there, with the failing one named.
TEST(LimitsDescriptor, MillionDimensionsNameTheBadOne) {
  constexpr int64_t n = 1000000;
  std::vector<gdap_dim> dims(n, block(1, 1, 0, 0, 1));
  ASSERT_EQ(gdap_dims_validate(dims.data(), n, nullptr), GDAP_SUCCESS) << gdap_last_error();
  dims[n - 1].stop = 2;
  const std::vector<gdap_dim> before = dims;
  EXPECT_EQ(gdap_dims_validate(dims.data(), n, nullptr), GDAP_ERR_PROTOCOL);
  EXPECT_TRUE(has_all(gdap_last_error(), {"dimension 999999 ('b')", "stop (2) > size (1)"})) << gdap_last_error();
  EXPECT_EQ(std::memcmp(before.data(), dims.data(), n * sizeof(gdap_dim)), 0);
}

// ---------------------------------------------------------------------------------------------
// Process grid.

TEST(LimitsGrid, OverflowingGridsAreClearErrors) {
  run_cases({
      {"limits: grid product overflows int64",
       [] { const int64_t g[] = {kTwo32, kTwo32}; int64_t c[2] = {7, 7}; const gdap_status s = gdap_grid_rank_to_coords(c, 2, g, 0); EXPECT_EQ(c[0], 7); return s; },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: grid rank INT64_MAX",
       [] { const int64_t g[] = {2, 3}; int64_t c[2] = {7, 7}; const gdap_status s = gdap_grid_rank_to_coords(c, 2, g, kMax); EXPECT_EQ(c[0], 7); return s; },
       GDAP_ERR_OUT_OF_RANGE, {"9223372036854775807"}},
      {"limits: negative grid extent",
       [] { const int64_t g[] = {2, -3}; int64_t c[2] = {7, 7}; return gdap_grid_rank_to_coords(c, 2, g, 0); },
       GDAP_ERR_INVALID_ARGUMENT, {"-3"}},
      {"limits: grid coordinate past its extent",
       [] { const int64_t g[] = {2, 3}; const int64_t c[] = {1, kMax}; int64_t r = 7; const gdap_status s = gdap_grid_coords_to_rank(&r, 2, g, c); EXPECT_EQ(r, 7); return s; },
       GDAP_ERR_OUT_OF_RANGE, {"9223372036854775807"}},
      {"limits: INT32_MAX grid dimensions, grid_shape NULL",
       [] { int64_t c[1] = {7}; return gdap_grid_rank_to_coords(c, INT32_MAX, nullptr, 0); },
       GDAP_ERR_INVALID_ARGUMENT, {"NULL"}},
      {"limits: coords_to_rank with coords NULL",
       [] { const int64_t g[] = {2}; int64_t r = 7; return gdap_grid_coords_to_rank(&r, 1, g, nullptr); },
       GDAP_ERR_INVALID_ARGUMENT, {"NULL"}},
  });
}

// ---------------------------------------------------------------------------------------------
// Maps: gdap_map_create, _root, _replicated.

TEST(LimitsMap, HugeCountsAndProductsAreClearErrors) {
  run_cases({
      {"limits: map of INT64_MAX ranks from one rank's dictionaries",
       [] { return map_create(kMax, 1, {block(10, 1, 0, 0, 10)}); }, GDAP_ERR_PROTOCOL,
       {"the process grid (1, the proc_grid_size of each dimension) has 1 ranks, but 9223372036854775807 ranks gave"}},
      {"limits: map nranks * ndim overflows",
       [] { return map_create(kMax, 2, {block(10, 1, 0, 0, 10), block(10, 1, 0, 0, 10)}); }, GDAP_ERR_OVERFLOW,
       {"overflows int64"}},
      {"limits: map with negative nranks", [] { return map_create(-1, 1, {block(10, 1, 0, 0, 10)}); },
       GDAP_ERR_INVALID_ARGUMENT, {"nranks (-1)"}},
      {"limits: map with negative ndim", [] { return map_create(1, -1, {block(10, 1, 0, 0, 10)}); },
       GDAP_ERR_INVALID_ARGUMENT, {"ndim (-1) < 0"}},
      {"limits: map with dims NULL and nranks * ndim > 0",
       [] { gdap_map* out = kMapSentinel; const gdap_status s = gdap_map_create(&out, 4, 2, nullptr); EXPECT_EQ(out, kMapSentinel); return s; },
       GDAP_ERR_INVALID_ARGUMENT, {"dims is NULL"}},
      {"limits: map grid product overflows int64",
       [] { return map_create(1, 2, {block(kMax, kTwo32, 0, 0, 1), block(kMax, kTwo32, 0, 0, 1)}); },
       GDAP_ERR_PROTOCOL, {"4294967296 x 4294967296", "more than int64 can count"}},
      {"limits: map grid product != nranks with a huge grid",
       [] { return map_create(1, 1, {block(kMax, kMax, 0, 0, 1)}); }, GDAP_ERR_PROTOCOL,
       {"9223372036854775807"}},
      {"limits: map of INT64_MAX elements per dimension, product overflows",
       [] {
         int64_t n = 7;
         gdap_map* m = nullptr;
         const std::vector<gdap_dim> dims{block(kMax, 1, 0, 0, kMax), block(kMax, 1, 0, 0, kMax)};
         EXPECT_EQ(gdap_map_create(&m, 1, 2, dims.data()), GDAP_SUCCESS) << gdap_last_error();
         const gdap_status s = gdap_map_owned_count(&n, m, 0);
         EXPECT_EQ(n, 7);
         gdap_map_destroy(m);
         return s;
       },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: map with billions of unstructured indices declared, NULL",
       [] { return map_create(1, 1, {unstructured(kMax, nullptr, int64_t{5} << 30)}); }, GDAP_ERR_PROTOCOL,
       {"indices is NULL but num_indices is 5368709120"}},
      {"limits: root map of INT64_MAX ranks",
       [] { const int64_t shape[] = {10}; gdap_map* out = kMapSentinel; const gdap_status s = gdap_map_create_root(&out, kMax, 1, shape, 0); if (s == GDAP_SUCCESS) gdap_map_destroy(out); else EXPECT_EQ(out, kMapSentinel); return s; },
       GDAP_ERR_OVERFLOW, {"bytes of the map's dictionaries", "9223372036854775807"}},
      {"limits: root map with a negative extent",
       [] { const int64_t shape[] = {10, -4}; gdap_map* out = kMapSentinel; const gdap_status s = gdap_map_create_root(&out, 2, 2, shape, 0); EXPECT_EQ(out, kMapSentinel); return s; },
       GDAP_ERR_INVALID_ARGUMENT, {"-4"}},
      {"limits: root map with shape NULL",
       [] { gdap_map* out = kMapSentinel; const gdap_status s = gdap_map_create_root(&out, 2, 3, nullptr, 0); EXPECT_EQ(out, kMapSentinel); return s; },
       GDAP_ERR_INVALID_ARGUMENT, {"shape is NULL"}},
      {"limits: replicated map of a million ranks x 2^40 indices",
       [] { const int64_t shape[] = {int64_t{1} << 40}; gdap_map* out = kMapSentinel; const gdap_status s = gdap_map_create_replicated(&out, 1000000, 1, shape); if (s == GDAP_SUCCESS) gdap_map_destroy(out); else EXPECT_EQ(out, kMapSentinel); return s; },
       GDAP_ERR_OVERFLOW, {"bytes of the map's indices: 1099511627776000000 * 44 overflows int64"}},
      {"limits: replicated map whose index count overflows",
       [] { const int64_t shape[] = {int64_t{1} << 40}; gdap_map* out = kMapSentinel; const gdap_status s = gdap_map_create_replicated(&out, int64_t{1} << 30, 1, shape); EXPECT_EQ(out, kMapSentinel); return s; },
       GDAP_ERR_OVERFLOW, {"nranks * shape[0] (indices held): 1073741824 * 1099511627776 overflows int64"}},
      {"limits: replicated map of 2^33 indices on one rank",
       [] { const int64_t shape[] = {int64_t{1} << 33}; gdap_map* out = kMapSentinel; const gdap_status s = gdap_map_create_replicated(&out, 1, 1, shape); if (s == GDAP_SUCCESS) gdap_map_destroy(out); else EXPECT_EQ(out, kMapSentinel); return s; },
       GDAP_ERR_NO_MEMORY, {"a map of 1 ranks needs about 343597384128 bytes, which cannot be allocated"}},
  });
}

// Hunt 14, defect 3: layouts too large for the host are refused at once, before the shared index
// list is sorted once per rank (2^20 ranks x 2^20 indices: hours) or memory fills (2^40 ranks).
double seconds_of(const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(LimitsMap, LayoutsLargerThanTheHostAreRefusedAtOnce) {
  const struct {
    const char* rule;
    bool root;
    int64_t nranks, size;
    std::vector<std::string> words;
  } cases[] = {
      {"replicated: 2^20 ranks x 2^20 indices (8 TiB)", false, int64_t{1} << 20, int64_t{1} << 20,
       {"a map of 1048576 ranks needs about ", "which cannot be allocated", "every rank holds all 1048576 indices",
        "refused before allocating"}},
      {"root: 2^40 ranks", true, int64_t{1} << 40, 10,
       {"a map of 1099511627776 ranks needs about ", "which cannot be allocated", "refused before allocating"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    gdap_map* out = kMapSentinel;
    gdap_status s = GDAP_SUCCESS;
    const double took = seconds_of([&] {
      s = c.root ? gdap_map_create_root(&out, c.nranks, 1, &c.size, 0) : gdap_map_create_replicated(&out, c.nranks, 1, &c.size);
    });
    EXPECT_EQ(s, GDAP_ERR_NO_MEMORY) << gdap_last_error();
    EXPECT_TRUE(has_all(gdap_last_error(), c.words)) << gdap_last_error();
    EXPECT_EQ(out, kMapSentinel);
    EXPECT_LT(took, 1.0) << "refused only after " << took << " s: not up front";
  }
}

// gdap_map_create bounds a map's memory as the layouts do: 4,096 ranks naming one caller's list of
// 2^20 indices (8 MiB) would make the map hold the list once per grid rank (about 180 GiB); it is
// refused before the axes copy it, naming the dimension, its size and the bound, instead of
// filling the address space (on the old code: "no memory to copy num_indices", or the OOM killer).
TEST(LimitsMap, PlainMapOfOneListOnManyRanksIsRefusedBeforeAllocating) {
  constexpr int64_t kRanks = 4096, kIndices = int64_t{1} << 20;
  std::vector<int64_t> list(static_cast<size_t>(kIndices));
  for (int64_t i = 0; i < kIndices; ++i) list[static_cast<size_t>(i)] = i;
  std::vector<gdap_dim> dims(static_cast<size_t>(kRanks));
  for (int64_t r = 0; r < kRanks; ++r) {
    ASSERT_EQ(gdap_dim_set_unstructured(&dims[static_cast<size_t>(r)], kIndices, kRanks, r, list.data(), kIndices, -1),
              GDAP_SUCCESS) << gdap_last_error();
  }
  gdap_status s = GDAP_SUCCESS;
  const double took = seconds_of([&] { s = map_create(kRanks, 1, dims); });
  const std::string message = gdap_last_error();
  EXPECT_EQ(s, GDAP_ERR_NO_MEMORY) << message;
  EXPECT_TRUE(has_all(message, {"a map of 4096 ranks needs about ", "which cannot be allocated: more than the ",
                                "dimension 0 ('u') holds 4294967296 unstructured indices over its 4096 grid ranks "
                                "(size 1048576)", "refused before allocating"}))
      << message;
  EXPECT_LT(took, 10.0) << "refused only after " << took << " s: not up front";
}

// The layouts' memory bound counted 8 bytes per index where building a map takes 40 (its copy of
// the index, its owner-table entry, the shared list of indices), so a map it admitted could still
// run out. At the edge of an address-space limit 256 MiB above what is mapped now: the largest
// replicated map the bound admits (less a margin of 1 MiB for what the process maps meanwhile) is
// made, and one 1 MiB larger is refused before anything is allocated.
struct MapRefusal {
  int64_t needs = 0, bound = 0;  // the bytes the refusal says the map needs, and the bound it exceeds
};

MapRefusal replicated_refusal(int64_t size) {
  gdap_map* out = kMapSentinel;
  EXPECT_EQ(gdap_map_create_replicated(&out, 1, 1, &size), GDAP_ERR_NO_MEMORY) << "size " << size;
  EXPECT_EQ(out, kMapSentinel);
  const std::string message = gdap_last_error();
  EXPECT_TRUE(has_all(message, {"refused before allocating"})) << message;
  MapRefusal r;
  const size_t needs = message.find("needs about "), bound = message.find("more than the ");
  if (needs == std::string::npos || bound == std::string::npos) {
    ADD_FAILURE() << "no byte counts in: " << message;
    return r;
  }
  r.needs = std::stoll(message.substr(needs + 12));
  r.bound = std::stoll(message.substr(bound + 14));
  return r;
}

// RLIMIT_AS lowered to `room` beyond what is mapped now, while in scope.
class TighterAddressLimit {
 public:
  explicit TighterAddressLimit(rlim_t room) {
    held_ = getrlimit(RLIMIT_AS, &saved_) == 0;
    rlimit tight = saved_;
    tight.rlim_cur = std::min(saved_.rlim_cur, mapped_at_start() + room);
    held_ = held_ && setrlimit(RLIMIT_AS, &tight) == 0;
  }
  ~TighterAddressLimit() {
    if (held_) setrlimit(RLIMIT_AS, &saved_);
  }
  bool held() const { return held_; }

 private:
  rlimit saved_{};
  bool held_ = false;
};

// Threads of this process: another one (a BLAS's worker) may map memory while a map is built (an
// OpenBLAS worker mapped its 128 MiB buffer mid-test under load), which no bound of gdap's counts.
int64_t threads() {
  std::error_code ec;
  return std::distance(std::filesystem::directory_iterator("/proc/self/task", ec), std::filesystem::directory_iterator{});
}

TEST(LimitsMap, LayoutBoundAdmitsWhatFitsAndRefusesMore) {
  ASSERT_EQ(threads(), 1) << "run with OPENBLAS_NUM_THREADS=1 (as ctest does): another thread's memory would count "
                             "against the limit while the map is built";
  const TighterAddressLimit limit(rlim_t{256} << 20);
  ASSERT_TRUE(limit.held()) << "could not lower RLIMIT_AS";
  // The bound's bytes per index and fixed part, read from two refusals far past the limit.
  const int64_t far = int64_t{1} << 30;
  const MapRefusal a = replicated_refusal(far), b = replicated_refusal(far + 1);
  const int64_t per_index = b.needs - a.needs, fixed = a.needs - far * per_index;
  EXPECT_GE(per_index, 40) << "the bound counts fewer bytes per index than building the map takes";
  ASSERT_GT(per_index, 0);
  const int64_t margin = (int64_t{1} << 20) / per_index;
  const int64_t edge = (a.bound - fixed) / per_index;  // the most indices the bound admits
  ASSERT_GT(edge, 2 * margin) << "bound " << a.bound;
  int64_t fits = edge - margin, over = edge + margin;
  gdap_map* out = kMapSentinel;
  const gdap_status s = gdap_map_create_replicated(&out, 1, 1, &fits);
  EXPECT_EQ(s, GDAP_SUCCESS) << fits << " indices, admitted, did not fit: " << gdap_last_error();
  if (s == GDAP_SUCCESS) {
    int64_t n = 0;
    EXPECT_EQ(gdap_map_global_shape(&n, out), GDAP_SUCCESS);
    EXPECT_EQ(n, fits);
    gdap_map_destroy(out);
  }
  replicated_refusal(over);
}

// Hunt 14, defect 4: a K that cuts into ~9e15 panels is refused by count, naming K and the panel
// width, instead of listing panels until the memory runs out ("out of host memory").
TEST(LimitsGemm, HugeKIsRefusedByItsPanelCount) {
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  auto grid = [](int64_t rows, int64_t cols) {
    gdap_axis_layout axes[2] = {GDAP_AXIS_LAYOUT_INIT, GDAP_AXIS_LAYOUT_INIT};
    axes[0].size = rows;
    axes[1].size = cols;
    gdap_map* m = nullptr;
    EXPECT_EQ(gdap_map_create_grid(&m, 2, axes), GDAP_SUCCESS) << gdap_last_error();
    return m;
  };
  gdap_map* a = grid(1, kMax);
  gdap_map* b = grid(kMax, 1);
  gdap_map* c = grid(1, 1);
  gdap_gemm* g = nullptr;
  gdap_status s = GDAP_SUCCESS;
  const double took = seconds_of([&] { s = gdap_gemm_create(&g, comm, a, b, c, kF64, nullptr); });
  EXPECT_EQ(s, GDAP_ERR_NO_MEMORY) << gdap_last_error();
  EXPECT_TRUE(has_all(gdap_last_error(), {"K = 9223372036854775807", "panels of at most 1024 columns",
                                          "9007199254740992 panels", "GDAP_PLAN_MAX_RUNS", "panel_width"}))
      << gdap_last_error();
  EXPECT_EQ(g, nullptr);
  EXPECT_LT(took, 1.0);
  gdap_map_destroy(c);
  gdap_map_destroy(b);
  gdap_map_destroy(a);
  gdap_comm_destroy(comm);
}

// ---------------------------------------------------------------------------------------------
// Arrays: gdap_array_create, gdap_array_wrap.

TEST(LimitsArray, HugeSectionsAreClearErrors) {
  static double one = 1.0;
  run_cases({
      {"limits: array element count overflows int64",
       [] { return array_create(kF64, {block(kMax, 1, 0, 0, kMax), block(4, 1, 0, 0, 4)}, 2); }, GDAP_ERR_OVERFLOW,
       {"overflows int64"}},
      {"limits: array itemsize * count overflows int64",
       [] { return array_create(kF64, {block(int64_t{1} << 61, 1, 0, 0, int64_t{1} << 61)}, 1); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: array of 2^40 float64 cannot be allocated",
       [] { return array_create(kF64, {block(int64_t{1} << 40, 1, 0, 0, int64_t{1} << 40)}, 1); },
       GDAP_ERR_NO_MEMORY, {"8796093022208"}},
      {"limits: array of 2^16-lane 128-bit elements overflows",
       [] { return array_create(gdap_dtype{GDAP_DTYPE_COMPLEX, 128, 65535}, {block(int64_t{1} << 50, 1, 0, 0, int64_t{1} << 50)}, 1); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: array of a million dimensions of 2 overflows",
       [] { return array_create(kF64, std::vector<gdap_dim>(1000000, block(2, 1, 0, 0, 2)), 1000000); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: array with negative ndim", [] { return array_create(kF64, {block(2, 1, 0, 0, 2)}, -3); },
       GDAP_ERR_INVALID_ARGUMENT, {"ndim (-3) < 0"}},
      {"limits: array with dims NULL and INT32_MAX dimensions",
       [] { gdap_array* out = kArraySentinel; const gdap_status s = gdap_array_create(&out, kF64, kCpu, nullptr, INT32_MAX); EXPECT_EQ(out, kArraySentinel); return s; },
       GDAP_ERR_INVALID_ARGUMENT, {"dims is NULL"}},
      {"limits: array of billions of unstructured indices, 3 present",
       [] { static const int64_t three[] = {0, 1, 2}; return array_create(kF64, {unstructured(kMax, three, int64_t{5} << 30)}, 1); },
       GDAP_ERR_NO_MEMORY, {"no memory to copy num_indices (5368709120) unstructured indices"}},
      {"limits: wrap with a stride that overflows the extent",
       [] { const int64_t st[] = {kMax / 2, 1}; return array_wrap(&one, kF64, st, {block(4, 1, 0, 0, 4), block(1, 1, 0, 0, 1)}); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: wrap with a negative stride that underflows",
       [] { const int64_t st[] = {INT64_MIN / 2}; return array_wrap(&one, kF64, st, {block(3, 1, 0, 0, 3)}); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: wrap NULL data with 2^62 elements",
       [] { return array_wrap(nullptr, gdap_dtype{GDAP_DTYPE_INT, 8, 1}, nullptr, {block(int64_t{1} << 62, 1, 0, 0, int64_t{1} << 62)}); },
       GDAP_ERR_INVALID_ARGUMENT, {"data is NULL but the section holds 4611686018427387904 elements"}},
      {"limits: wrap a section whose byte extent overflows",
       [] { return array_wrap(&one, kF64, nullptr, {block(int64_t{1} << 61, 1, 0, 0, int64_t{1} << 61)}); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
  });
}

// ---------------------------------------------------------------------------------------------
// DLPack import with hostile shapes and strides: refused, the tensor untouched and not deleted.

struct Tensor {
  std::vector<int64_t> shape, strides;
  int deleted = 0;
  DLManagedTensorVersioned t{};
  Tensor(void* data, std::vector<int64_t> s, std::vector<int64_t> st, DLDataType dtype = {kDLFloat, 64, 1})
      : shape(std::move(s)), strides(std::move(st)) {
    t.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    t.dl_tensor.data = data;
    t.dl_tensor.device = {kDLCPU, 0};
    t.dl_tensor.ndim = static_cast<int32_t>(shape.size());
    t.dl_tensor.dtype = dtype;
    t.dl_tensor.shape = shape.data();
    t.dl_tensor.strides = strides.empty() ? nullptr : strides.data();
    t.manager_ctx = this;
    t.deleter = [](DLManagedTensorVersioned* self) { static_cast<Tensor*>(self->manager_ctx)->deleted++; };
  }
};

gdap_status import(Tensor& tensor, const std::vector<gdap_dim>& dims, int64_t ndim) {
  const DLManagedTensorVersioned before = tensor.t;
  const std::vector<int64_t> shape = tensor.shape, strides = tensor.strides;
  gdap_array* out = kArraySentinel;
  const gdap_status s = gdap_array_from_dlpack(&out, &tensor.t, dims.data(), ndim, nullptr);
  if (s == GDAP_SUCCESS) {
    gdap_array_destroy(out);
    return s;
  }
  EXPECT_EQ(out, kArraySentinel);
  EXPECT_EQ(tensor.deleted, 0) << "a refused tensor was deleted";
  EXPECT_EQ(std::memcmp(&before, &tensor.t, sizeof before), 0) << "a refused tensor was changed";
  EXPECT_EQ(shape, tensor.shape);
  EXPECT_EQ(strides, tensor.strides);
  return s;
}

TEST(LimitsDlpack, HugeShapesAndStridesAreClearErrors) {
  static double one = 1.0;
  run_cases({
      {"limits: DLPack shape product overflows int64",
       [] { Tensor t(&one, {kTwo32, kTwo32}, {}); return import(t, {GDAP_DIM_INIT, GDAP_DIM_INIT}, 2); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: DLPack byte extent overflows int64",
       [] { Tensor t(&one, {int64_t{1} << 61}, {}); return import(t, {GDAP_DIM_INIT}, 1); }, GDAP_ERR_OVERFLOW,
       {"overflows int64"}},
      {"limits: DLPack stride times extent overflows",
       [] { Tensor t(&one, {3, 2}, {kMax, 1}); return import(t, {GDAP_DIM_INIT, GDAP_DIM_INIT}, 2); },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: DLPack negative stride INT64_MIN",
       [] { Tensor t(&one, {2}, {INT64_MIN}); return import(t, {GDAP_DIM_INIT}, 1); }, GDAP_ERR_OVERFLOW,
       {"overflows int64"}},
      {"limits: DLPack negative shape",
       [] { Tensor t(&one, {4, -1}, {}); return import(t, {GDAP_DIM_INIT, GDAP_DIM_INIT}, 2); },
       GDAP_ERR_INVALID_ARGUMENT, {"DLPack tensor shape[1] (-1) < 0"}},
      {"limits: DLPack ndim INT32_MAX against 1 dictionary",
       [] { Tensor t(&one, {1}, {}); t.t.dl_tensor.ndim = INT32_MAX; return import(t, {GDAP_DIM_INIT}, 1); },
       GDAP_ERR_PROTOCOL, {"dim_data has 1 dimensions but the buffer has 2147483647"}},
      {"limits: DLPack ndim INT32_MAX with shape NULL",
       [] { Tensor t(&one, {1}, {}); t.t.dl_tensor.ndim = INT32_MAX; t.t.dl_tensor.shape = nullptr; return import(t, {GDAP_DIM_INIT}, INT32_MAX); },
       GDAP_ERR_INVALID_ARGUMENT, {"DLPack tensor shape is NULL (ndim 2147483647)"}},
      {"limits: DLPack negative ndim",
       [] { Tensor t(&one, {1}, {}); t.t.dl_tensor.ndim = -1; return import(t, {GDAP_DIM_INIT}, 1); },
       GDAP_ERR_INVALID_ARGUMENT, {"DLPack tensor ndim (-1) < 0"}},
      {"limits: DLPack NULL data with 2^40 elements",
       [] { Tensor t(nullptr, {int64_t{1} << 40}, {}); return import(t, {GDAP_DIM_INIT}, 1); },
       GDAP_ERR_INVALID_ARGUMENT, {"DLPack tensor data is NULL but the tensor holds 1099511627776 elements"}},
      {"limits: DLPack byte_offset overflows",
       [] { Tensor t(&one, {1}, {}); t.t.dl_tensor.byte_offset = UINT64_MAX; return import(t, {GDAP_DIM_INIT}, 1); },
       GDAP_ERR_OVERFLOW, {"byte_offset"}},
      {"limits: DLPack shape disagrees with a huge dictionary",
       [] { Tensor t(&one, {1}, {}); return import(t, {block(kMax, 1, 0, 0, kMax)}, 1); }, GDAP_ERR_PROTOCOL,
       {"stop - start (9223372036854775807) != buffer shape (1)"}},
  });
}

// ---------------------------------------------------------------------------------------------
// Plans and halos over huge distributions.

gdap_map* make_map(int64_t nranks, int64_t ndim, const std::vector<gdap_dim>& dims) {
  gdap_map* m = nullptr;
  EXPECT_EQ(gdap_map_create(&m, nranks, ndim, dims.data()), GDAP_SUCCESS) << gdap_last_error();
  return m;
}

gdap_status plan(const gdap_map* a, const gdap_map* b, gdap_dtype dtype, int64_t rank) {
  gdap_plan* out = kPlanSentinel;
  const gdap_status s = gdap_plan_create(&out, a, b, dtype, rank);
  if (s == GDAP_SUCCESS) {
    gdap_plan_destroy(out);
  } else {
    EXPECT_EQ(out, kPlanSentinel);
  }
  return s;
}

gdap_status halo(const gdap_map* m, gdap_dtype dtype, int64_t rank, const gdap_halo_options* options) {
  gdap_halo* out = kHaloSentinel;
  const gdap_status s = gdap_halo_create(&out, m, dtype, rank, options);
  if (s == GDAP_SUCCESS) {
    gdap_halo_destroy(out);
  } else {
    EXPECT_EQ(out, kHaloSentinel);
  }
  return s;
}

gdap_status keeping_roles(const gdap_map* a, const gdap_map* b, int64_t nranks) {
  std::vector<int64_t> roles(static_cast<size_t>(nranks), -1);
  return gdap_plan_roles_keeping(roles.data(), nranks, a, b);
}

// 1-D blocks of 20000 over `nranks` ranks, shifted by half a block when `shifted` (so a plan between
// the two sends every rank's data to two ranks: P + Q - 1 pieces along the dimension).
gdap_map* blocks_of_20000(int64_t nranks, bool shifted) {
  const int64_t size = nranks * 20000, shift = shifted ? 10000 : 0;
  std::vector<gdap_dim> dims;
  for (int64_t r = 0; r < nranks; ++r) {
    const int64_t start = r == 0 ? 0 : r * 20000 - shift;
    const int64_t stop = r == nranks - 1 ? size : (r + 1) * 20000 - shift;
    dims.push_back(block(size, nranks, r, start, stop));
  }
  return make_map(nranks, 1, dims);
}

// Runs `body` with GDAP_PLAN_MAX_RUNS set to `value`, then unset.
gdap_status with_max_runs(const char* value, const std::function<gdap_status()>& body) {
  setenv("GDAP_PLAN_MAX_RUNS", value, 1);
  const gdap_status s = body();
  unsetenv("GDAP_PLAN_MAX_RUNS");
  return s;
}

// The whole refusal of GDAP_PLAN_MAX_RUNS=`value` (core/setting.hpp).
std::string bad_max_runs(const std::string& value) {
  return "GDAP_PLAN_MAX_RUNS='" + value + "': not a whole number from 1 to 9223372036854775807 (runs a plan may list)";
}

// Rule: GDAP_PLAN_MAX_RUNS is decimal digits alone, at least 1; anything else, the empty string
// too (it used to mean unset), is refused with that whole message and nothing is planned.
TEST(LimitsPlan, BadMaxRunsAreRefusedWithTheirValue) {
  gdap_map* small = make_map(1, 1, {block(10, 1, 0, 0, 10)});
  ASSERT_TRUE(small);
  for (const char* bad : {"", "-1", "0", "1e3", "12abc", "1180591620717411303424", " 5", "+5"}) {
    gdap_plan* p = nullptr;
    const gdap_status s = with_max_runs(bad, [&] { return gdap_plan_create(&p, small, small, kF64, 0); });
    EXPECT_EQ(s, GDAP_ERR_INVALID_ARGUMENT) << "GDAP_PLAN_MAX_RUNS='" << bad << "'";
    EXPECT_EQ(std::string(gdap_last_error()), bad_max_runs(bad));
    EXPECT_EQ(p, nullptr);
    gdap_plan_destroy(p);
  }
  gdap_map_destroy(small);
}

TEST(LimitsPlan, HugeDistributionsAreClearErrors) {
  constexpr int64_t half = kMax / 2 + 1;
  gdap_map* whole = make_map(1, 1, {block(kMax, 1, 0, 0, kMax)});
  gdap_map* halves = make_map(2, 1, {block(kMax, 2, 0, 0, half), block(kMax, 2, 1, half, kMax)});
  gdap_map* cyc = make_map(2, 1, {cyclic(kMax, 2, 0, 0), cyclic(kMax, 2, 1, 1)});
  gdap_map* small = make_map(1, 1, {block(10, 1, 0, 0, 10)});
  gdap_map* small_cyclic = make_map(1, 1, {cyclic(10, 1, 0, 0)});
  constexpr int64_t wide = 16384;
  gdap_map* wide_a = blocks_of_20000(wide, false);
  gdap_map* wide_b = blocks_of_20000(wide, true);
  gdap_map* cyclic_2d = make_map(1, 2, {cyclic(10, 1, 0, 0), cyclic(10, 1, 0, 0)});
  gdap_map* block_2d = make_map(1, 2, {block(10, 1, 0, 0, 10), block(10, 1, 0, 0, 10)});
  ASSERT_TRUE(whole && halves && cyc && small && small_cyclic && wide_a && wide_b && cyclic_2d && block_2d);
  run_cases({
      {"limits: plan bytes of INT64_MAX float64 overflow",
       [&] { return plan(whole, halves, kF64, 0); }, GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"limits: plan of INT64_MAX single bytes block to cyclic is refused before listing a run",
       [&] { return plan(halves, cyc, gdap_dtype{GDAP_DTYPE_UINT, 8, 1}, 0); }, GDAP_ERR_NO_MEMORY,
       {"would list up to 4611686018427387904 runs (dimension 0 ('b' source, 'c' destination), source grid "
        "coordinate 0)",
        "more than the limit of 67108864 runs (GDAP_PLAN_MAX_RUNS", "a 'c' dimension lists one run per block"}},
      {"limits: the same block -> cyclic plan's roles are refused at once, naming the dimension that drives it",
       [&] { return keeping_roles(halves, cyc, 2); }, GDAP_ERR_NO_MEMORY,
       {"every source grid coordinate's overlaps", "dimension 0 ('b' source, 'c' destination) drives it"}},
      {"limits: block -> block over 16384 ranks is planned (the run bound is P + Q, not P * (Q + 1))",
       [&] { return plan(wide_a, wide_b, kF64, 0); }, GDAP_SUCCESS, {}},
      {"limits: block -> block over 16384 ranks: the roles keeping the most are found",
       [&] { return keeping_roles(wide_a, wide_b, wide); }, GDAP_SUCCESS, {}},
      {"limits: the block -> block bound is tight: P + Q = 32768 runs fit a limit of 32768",
       [&] { return with_max_runs("32768", [&] { return keeping_roles(wide_a, wide_b, wide); }); }, GDAP_SUCCESS, {}},
      {"limits: the block -> block bound is tight: a limit of 32767 refuses, naming the 'b' dimension",
       [&] { return with_max_runs("32767", [&] { return keeping_roles(wide_a, wide_b, wide); }); },
       GDAP_ERR_NO_MEMORY,
       {"would list up to 32768 runs", "dimension 0 ('b' source, 'b' destination) drives it",
        "a 'b' dimension lists about one run per rank on each side"}},
      {"limits: two dimensions each under the limit, their sum over it: the message names no dimension",
       [&] { return with_max_runs("15", [&] { return keeping_roles(block_2d, cyclic_2d, 1); }); },
       GDAP_ERR_NO_MEMORY,
       {"would list up to 20 runs", "no one dimension goes over the limit alone, their sum does"}},
      {"limits: GDAP_PLAN_MAX_RUNS lowers the limit: a 10-element cyclic plan above 3 runs is refused",
       [&] { return with_max_runs("3", [&] { return plan(small, small_cyclic, kF64, 0); }); }, GDAP_ERR_NO_MEMORY,
       {"would list up to", "more than the limit of 3 runs"}},
      {"limits: GDAP_PLAN_MAX_RUNS high enough: the same plan is made",
       [&] { return with_max_runs("100", [&] { return plan(small, small_cyclic, kF64, 0); }); }, GDAP_SUCCESS, {}},
      {"limits: GDAP_PLAN_MAX_RUNS that is not a whole number >= 1 is refused",
       [&] { return with_max_runs("0x10", [&] { return plan(small, small_cyclic, kF64, 0); }); },
       GDAP_ERR_INVALID_ARGUMENT, {bad_max_runs("0x10")}},
      {"limits: plan rank INT64_MAX", [&] { return plan(small, small, kF64, kMax); }, GDAP_ERR_OUT_OF_RANGE,
       {"9223372036854775807"}},
      {"limits: plan rank -1", [&] { return plan(small, small, kF64, -1); }, GDAP_ERR_OUT_OF_RANGE, {"-1"}},
      {"limits: plan between shapes 10 and INT64_MAX", [&] { return plan(small, whole, kF64, 0); },
       GDAP_ERR_INVALID_ARGUMENT, {"9223372036854775807"}},
      {"limits: plan with 0 lanes", [&] { return plan(small, small, gdap_dtype{GDAP_DTYPE_FLOAT, 64, 0}, 0); },
       GDAP_ERR_UNSUPPORTED, {"lanes"}},
      {"limits: plan with a NULL map", [&] { return plan(nullptr, small, kF64, 0); }, GDAP_ERR_INVALID_ARGUMENT,
       {"NULL"}},
  });
  gdap_map_destroy(whole);
  gdap_map_destroy(halves);
  gdap_map_destroy(cyc);
  gdap_map_destroy(small);
  gdap_map_destroy(small_cyclic);
  gdap_map_destroy(wide_a);
  gdap_map_destroy(wide_b);
  gdap_map_destroy(cyclic_2d);
  gdap_map_destroy(block_2d);
}

// A destination whose indices are held by several ranks ('u' replicas) receives every index once
// per replica: the run bound counted each owned index once, so GDAP_PLAN_MAX_RUNS let a plan list
// Q times the limit (hunt 12 item 8). 1024 indices dealt over 2 ranks ('c') to 8 ranks that all hold
// every index: the source overlaps list 1024 x 8 = 8192 runs, and the bound must be that.
TEST(LimitsPlan, ReplicatedDestinationCountsEveryReplica) {
  constexpr int64_t n = 1024, replicas = 8;
  std::vector<int64_t> every(n);
  for (int64_t i = 0; i < n; ++i) every[static_cast<size_t>(i)] = i;
  gdap_map* dealt = make_map(2, 1, {cyclic(n, 2, 0, 0), cyclic(n, 2, 1, 1)});
  std::vector<gdap_dim> held;
  for (int64_t r = 0; r < replicas; ++r) {
    gdap_dim d = unstructured(n, every.data(), n);
    d.proc_grid_size = replicas;
    d.proc_grid_rank = r;
    held.push_back(d);
  }
  gdap_map* everywhere = make_map(replicas, 1, held);
  ASSERT_TRUE(dealt && everywhere);
  run_cases({
      {"limits: a replicated destination: 8192 runs (every index once per replica) fit a limit of 8192",
       [&] { return with_max_runs("8192", [&] { return keeping_roles(dealt, everywhere, replicas); }); },
       GDAP_SUCCESS, {}},
      {"limits: a replicated destination: a limit of 8191 refuses, saying up to 8192 runs",
       [&] { return with_max_runs("8191", [&] { return keeping_roles(dealt, everywhere, replicas); }); },
       GDAP_ERR_NO_MEMORY, {"would list up to 8192 runs", "more than the limit of 8191 runs"}},
      {"limits: a replicated destination: one source coordinate's 4096 runs are refused at a limit of 4095",
       [&] { return with_max_runs("4095", [&] { return plan(dealt, everywhere, kF64, 0); }); },
       GDAP_ERR_NO_MEMORY, {"would list up to 4096 runs", "source grid coordinate 0"}},
  });
  // At the limit, the plan rank 0 makes lists no more runs than the limit allows.
  setenv("GDAP_PLAN_MAX_RUNS", "4096", 1);
  gdap_plan* p = nullptr;
  ASSERT_EQ(gdap_plan_create(&p, dealt, everywhere, kF64, 0), GDAP_SUCCESS) << gdap_last_error();
  unsetenv("GDAP_PLAN_MAX_RUNS");
  gdap_plan_stats stats = GDAP_PLAN_STATS_INIT;
  ASSERT_EQ(gdap_plan_stats_get(&stats, p), GDAP_SUCCESS);
  EXPECT_EQ(stats.send_runs + stats.local_runs, 4096);  // 512 indices, each to 8 replicas
  gdap_plan_destroy(p);
  gdap_map_destroy(dealt);
  gdap_map_destroy(everywhere);
}

TEST(LimitsHalo, HugePaddingAndWidthsAreClearErrors) {
  constexpr int64_t half = kMax / 2 + 1;
  constexpr int64_t pad = int64_t{1} << 50;
  // Two ranks of INT64_MAX elements with 2^50 cells of communication padding each side.
  gdap_map* wide = make_map(2, 1, {padded(block(kMax, 2, 0, 0, half + pad), pad, pad),
                                   padded(block(kMax, 2, 1, half - pad, kMax), pad, pad)});
  gdap_map* narrow = make_map(2, 1, {padded(block(10, 2, 0, 0, 6), 1, 1), padded(block(10, 2, 1, 4, 10), 1, 1)});
  ASSERT_TRUE(wide && narrow);
  run_cases({
      {"limits: halo bytes of 2^50 cells of 65535-lane float64 overflow",
       [&] { return halo(wide, gdap_dtype{GDAP_DTYPE_FLOAT, 64, 65535}, 0, nullptr); }, GDAP_ERR_OVERFLOW,
       {"halo exchange bytes (elements * element size): 1125899906842624 * 524280 overflows int64"}},
      {"limits: halo width cap negative",
       [&] {
         const int64_t caps[] = {-1};
         gdap_halo_options o = GDAP_HALO_OPTIONS_INIT;
         o.widths = caps;
         return halo(narrow, kF64, 0, &o);
       },
       GDAP_ERR_INVALID_ARGUMENT, {"-1"}},
      {"limits: halo rank INT64_MAX", [&] { return halo(narrow, kF64, kMax, nullptr); }, GDAP_ERR_OUT_OF_RANGE,
       {"9223372036854775807"}},
      {"limits: halo options struct_size 0",
       [&] {
         gdap_halo_options o = GDAP_HALO_OPTIONS_INIT;
         o.struct_size = 0;
         return halo(narrow, kF64, 0, &o);
       },
       GDAP_ERR_INVALID_ARGUMENT, {"options->struct_size is 0; set it with GDAP_HALO_OPTIONS_INIT"}},
  });
  // Wide but representable: counted, not allocated; a cap of INT64_MAX is capped by the padding.
  EXPECT_EQ(halo(wide, kF64, 1, nullptr), GDAP_SUCCESS) << gdap_last_error();
  const int64_t caps[] = {kMax};
  gdap_halo_options o = GDAP_HALO_OPTIONS_INIT;
  o.widths = caps;
  EXPECT_EQ(halo(narrow, kF64, 0, &o), GDAP_SUCCESS) << gdap_last_error();
  gdap_map_destroy(wide);
  gdap_map_destroy(narrow);
}

// ---------------------------------------------------------------------------------------------
// JSON dim_data: huge numbers, deep nesting, huge arrays.

gdap_status parse(const std::string& text) {
  return gdap::guard([&] { gdap::dim_data_from_json_text(text); });
}

TEST(LimitsJson, HugeValuesAndShapesAreClearErrors) {
  const std::string b = R"("dist_type":"b","proc_grid_size":1,"proc_grid_rank":0,"start":0)";
  run_cases({
      {"limits: JSON size 2^64", [&] { return parse("[{" + b + R"(,"size":18446744073709551616,"stop":1}])"); },
       GDAP_ERR_OVERFLOW, {"dimension 0 ('b')", "key 'size' (1.8446744073709552e+19) does not fit in int64"}},
      {"limits: JSON size UINT64_MAX", [&] { return parse("[{" + b + R"(,"size":18446744073709551615,"stop":1}])"); },
       GDAP_ERR_OVERFLOW, {"key 'size' (18446744073709551615) does not fit in int64"}},
      {"limits: JSON stop 1e400", [&] { return parse("[{" + b + R"(,"size":1,"stop":1e400}])"); },
       GDAP_ERR_PROTOCOL, {"dim_data is not valid JSON", "number overflow parsing '1e400'"}},
      {"limits: JSON start INT64_MIN - 1",
       [&] { return parse(R"([{"dist_type":"b","proc_grid_size":1,"proc_grid_rank":0,"start":-9223372036854775809,"size":1,"stop":1}])"); },
       GDAP_ERR_OVERFLOW, {"key 'start' (-9.223372036854776e+18) does not fit in int64"}},
      {"limits: JSON a million nested lists", [] { return parse(std::string(1000000, '[') + std::string(1000000, ']')); },
       GDAP_ERR_PROTOCOL, {"nests"}},
      {"limits: JSON a million nested dictionaries",
       [] { std::string t = "["; for (int i = 0; i < 100000; ++i) t += "{\"a\":"; t += "1"; t += std::string(100000, '}') + "]"; return parse(t); },
       GDAP_ERR_PROTOCOL, {"nests"}},
      {"limits: JSON padding of 2^63",
       [&] { return parse("[{" + b + R"(,"size":1,"stop":1,"padding":[9223372036854775808,0]}])"); },
       GDAP_ERR_OVERFLOW, {"padding"}},
      {"limits: JSON a million indices with one out of int64",
       [] {
         std::string t = R"([{"dist_type":"u","size":5,"proc_grid_size":1,"proc_grid_rank":0,"indices":[)";
         for (int i = 0; i < 1000000; ++i) t += std::to_string(i) + ",";
         t += "9223372036854775808]}]";
         return parse(t);
       },
       GDAP_ERR_OVERFLOW, {"9223372036854775808"}},
  });
}

}  // namespace

namespace {

// A million dimensions of JSON parse in linear time (each added dimension once re-pointed every
// earlier one and grew the vectors by one: quadratic, minutes for this input).
TEST(LimitsJson, MillionDictionariesParseInLinearTime) {
  std::string text = "[{}";
  for (int i = 1; i < 1000000; ++i) text += ",{}";
  text += "]";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse(text), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20.0);
}

}  // namespace
