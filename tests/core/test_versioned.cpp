// The versioned-struct policy (core/versioned.hpp) on a struct that grew: a caller of each release
// works, and sizes no caller ever compiled are refused. Then the policy at every entry point of the
// ABI that takes a versioned struct: a struct_size of 0x7FFFFFF8 is refused, never read as a newer
// struct (an array of gdap_dim was read 2 GiB past the caller's memory). Each case names its rule.
#include "core/versioned.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace {

// A struct of a later release: 16 bytes in its first one, `added` appended since.
struct Grown {
  uint32_t struct_size;
  int32_t kept;
  int64_t first;
  int64_t added;
};
constexpr Grown kGrownInit = {sizeof(Grown), 1, 2, 3};

}  // namespace

template <>
inline constexpr uint32_t gdap::kFirstSize<Grown> = 16;

namespace {

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

struct Bigger {  // what a caller of a release after this one passes
  Grown grown;
  int64_t future;
};

// Rule: an older caller's smaller struct is read as far as it goes; the rest takes the defaults.
TEST(Versioned, AnOlderCallersSmallerStructIsReadWithDefaults) {
  Grown old{16, 10, 20, -99};  // `added` is beyond its struct: garbage gdap must not read
  const Grown got = gdap::read_versioned(&old, kGrownInit, "options", "GROWN_INIT");
  EXPECT_EQ(got.kept, 10);
  EXPECT_EQ(got.first, 20);
  EXPECT_EQ(got.added, 3) << "the default, not the caller's bytes past its struct";
  EXPECT_EQ(got.struct_size, sizeof(Grown));
}

// Rule: a newer caller's larger struct is read up to this release's size.
TEST(Versioned, ANewerCallersLargerStructIsReadUpToThisReleasesFields) {
  Bigger newer{{sizeof(Bigger), 10, 20, 30}, 40};
  const Grown got = gdap::read_versioned(&newer.grown, kGrownInit, "options", "GROWN_INIT");
  EXPECT_EQ(got.added, 30);
  EXPECT_EQ(got.struct_size, sizeof(Grown));
}

// Rule: an out-struct is written as far as the caller's struct goes, and no further.
TEST(Versioned, AnOutStructIsWrittenAsFarAsTheCallersGoes) {
  Bigger older{{16, 0, 0, -7}, -8};
  gdap::write_versioned(&older.grown, Grown{0, 10, 20, 30}, "stats", "GROWN_INIT");
  EXPECT_EQ(older.grown.kept, 10);
  EXPECT_EQ(older.grown.first, 20);
  EXPECT_EQ(older.grown.added, -7) << "past an older caller's struct: untouched";
  EXPECT_EQ(older.grown.struct_size, 16u) << "the bytes written";
  Bigger newer{{sizeof(Bigger), 0, 0, 0}, -8};
  gdap::write_versioned(&newer.grown, Grown{0, 10, 20, 30}, "stats", "GROWN_INIT");
  EXPECT_EQ(newer.grown.added, 30);
  EXPECT_EQ(newer.future, -8) << "a newer caller's own fields: untouched";
  EXPECT_EQ(newer.grown.struct_size, sizeof(Grown));
}

// Rule: sizes no caller ever compiled are refused, naming the field and the macro that sets it.
TEST(Versioned, SizesNoCallerCompiledAreRefused) {
  const struct {
    const char* rule;
    uint32_t size;
    const char* words;
  } cases[] = {
      {"0: an uninitialised struct", 0, "options->struct_size is 0; set it with GROWN_INIT"},
      {"below the first release's size", 8, "at least 16, the size of the first release's struct"},
      {"a multiple of 8", 20, "options->struct_size is 20, not a multiple of 8"},
      {"at most GDAP_MAX_STRUCT_SIZE", GDAP_MAX_STRUCT_SIZE + 8, "more than any gdap struct will ever be (1024 bytes)"},
      {"0x7FFFFFF8 is no newer struct", 0x7FFFFFF8u, "2147483640 (0x7ffffff8)"},
  };
  for (const auto& c : cases) {
    Grown g = kGrownInit;
    g.struct_size = c.size;
    const gdap_status s = gdap::guard([&] { (void)gdap::read_versioned(&g, kGrownInit, "options", "GROWN_INIT"); });
    EXPECT_EQ(s, GDAP_ERR_INVALID_ARGUMENT) << c.rule;
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << c.rule << ": " << gdap_last_error();
  }
  EXPECT_EQ(gdap::guard([] { (void)gdap::read_versioned<Grown>(nullptr, kGrownInit, "options", "GROWN_INIT"); }),
            GDAP_ERR_INVALID_ARGUMENT);
}

// Rule: every entry point that takes a versioned struct refuses a struct_size of 0x7FFFFFF8 (two
// gdap_dim would have been read 2 GiB apart) and writes nothing.
TEST(Versioned, EveryEntryPointRefusesAnAbsurdStructSize) {
  constexpr uint32_t kAbsurd = 0x7FFFFFF8u;
  gdap_dim dims[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
  gdap_dim_set_block(&dims[0], 8, 2, 0, 0, 4);
  gdap_dim_set_block(&dims[1], 8, 2, 1, 4, 8);
  dims[0].struct_size = kAbsurd;
  EXPECT_EQ(gdap_dims_validate(dims, 2, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "dims[0].struct_size is 2147483640")) << gdap_last_error();
  gdap_map* map = reinterpret_cast<gdap_map*>(0x1);
  EXPECT_EQ(gdap_map_create(&map, 2, 1, dims), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(map, reinterpret_cast<gdap_map*>(0x1));
  dims[0].struct_size = sizeof(gdap_dim);
  ASSERT_EQ(gdap_map_create(&map, 2, 1, dims), GDAP_SUCCESS) << gdap_last_error();

  gdap_halo_options halo_options = GDAP_HALO_OPTIONS_INIT;
  halo_options.struct_size = kAbsurd;
  gdap_halo* halo = nullptr;
  EXPECT_EQ(gdap_halo_create(&halo, map, {GDAP_DTYPE_FLOAT, 64, 1}, 0, &halo_options), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "options->struct_size is 2147483640")) << gdap_last_error();

  gdap_plan* plan = nullptr;
  ASSERT_EQ(gdap_plan_create(&plan, map, map, {GDAP_DTYPE_FLOAT, 64, 1}, 0), GDAP_SUCCESS);
  gdap_plan_stats stats = GDAP_PLAN_STATS_INIT;
  stats.struct_size = kAbsurd;
  stats.rank = -5;
  EXPECT_EQ(gdap_plan_stats_get(&stats, plan), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "stats->struct_size is 2147483640")) << gdap_last_error();
  EXPECT_EQ(stats.rank, -5) << "nothing written";
  stats = GDAP_PLAN_STATS_INIT;
  EXPECT_EQ(gdap_plan_stats_get(&stats, plan), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(stats.nranks, 2);
  EXPECT_EQ(stats.struct_size, sizeof(gdap_plan_stats));
  gdap_plan_destroy(plan);

  gdap_zarr_options zarr = GDAP_ZARR_OPTIONS_INIT;
  zarr.struct_size = kAbsurd;
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  gdap_dim whole = GDAP_DIM_INIT;
  gdap_dim_set_block(&whole, 4, 1, 0, 0, 4);
  gdap_map* one = nullptr;
  gdap_array* section = nullptr;
  ASSERT_EQ(gdap_map_create(&one, 1, 1, &whole), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_create(&section, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, &whole, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_zarr_save(comm, one, section, "never-written.zarr", &zarr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "options->struct_size is 2147483640")) << gdap_last_error();
  EXPECT_FALSE(std::filesystem::exists("never-written.zarr"));

  gdap_dim square[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
  gdap_dim_set_block(&square[0], 2, 1, 0, 0, 2);
  gdap_dim_set_block(&square[1], 2, 1, 0, 0, 2);
  gdap_map* matrix = nullptr;
  ASSERT_EQ(gdap_map_create(&matrix, 1, 2, square), GDAP_SUCCESS);
  gdap_gemm_options gemm_options = GDAP_GEMM_OPTIONS_INIT;
  gemm_options.struct_size = kAbsurd;
  gdap_gemm* gemm = nullptr;
  EXPECT_EQ(gdap_gemm_create(&gemm, comm, matrix, matrix, matrix, {GDAP_DTYPE_FLOAT, 64, 1}, &gemm_options),
            GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "options->struct_size is 2147483640")) << gdap_last_error();
  EXPECT_EQ(gemm, nullptr);
  gdap_map_destroy(matrix);

  gdap_axis_layout axes[1] = {GDAP_AXIS_LAYOUT_INIT};
  axes[0].size = 8;
  axes[0].struct_size = kAbsurd;
  gdap_map* grid = nullptr;
  EXPECT_EQ(gdap_map_create_grid(&grid, 1, axes), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "axes[0].struct_size is 2147483640")) << gdap_last_error();
  EXPECT_EQ(grid, nullptr);
  gdap_array_destroy(section);
  gdap_map_destroy(one);
  gdap_comm_destroy(comm);
  gdap_map_destroy(map);
}

}  // namespace
