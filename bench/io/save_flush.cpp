// What a save's flushes to the disk cost: a 64 MiB float64 array (one rank) saved as a Zarr store
// (raw codec, overwrite) with syncfs and with syncfs replaced by a no-op, and as .dnpy files with
// fsync and without, through the library's internal seam io::system_calls (src/io/files.hpp).
// The two ways alternate, each run a fresh save over the previous one, each timed from a clean page
// cache (sync first, untimed: else a save's syncfs also flushes what the run before it left dirty,
// its own file system's whole); prints each way's median and range.
//   bench_save_flush [folder (default: the temporary folder)] [runs (default 7)]
#include "io/files.hpp"

#include <gdap/gdap.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr int64_t kElements = int64_t{8} << 20;  // 64 MiB of float64

int no_flush(int) { return 0; }

// "median ms (min-max)".
std::string summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  char text[96];
  std::snprintf(text, sizeof text, "%.1f ms (%.1f-%.1f)", 1e3 * v[v.size() / 2], 1e3 * v.front(), 1e3 * v.back());
  return text;
}

void check(gdap_status st, const char* what) {
  if (st == GDAP_SUCCESS) return;
  std::fprintf(stderr, "%s: %s\n", what, gdap_last_error());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path folder = fs::path(argc > 1 ? argv[1] : fs::temp_directory_path().string()) / "gdap_bench_save_flush";
  const int runs = argc > 2 ? std::atoi(argv[2]) : 7;
  fs::create_directories(folder);
  gdap_comm* comm = nullptr;
  check(gdap_comm_create_group(&comm, 1), "gdap_comm_create_group");
  gdap_dim d = GDAP_DIM_INIT;
  check(gdap_dim_set_block(&d, kElements, 1, 0, 0, kElements), "gdap_dim_set_block");
  gdap_array* a = nullptr;
  check(gdap_array_create(&a, gdap_dtype{GDAP_DTYPE_FLOAT, 64, 1}, gdap_device{GDAP_DEVICE_CPU, 0}, &d, 1), "gdap_array_create");
  void* data = nullptr;
  check(gdap_array_data(&data, a), "gdap_array_data");
  for (int64_t i = 0; i < kElements; ++i) static_cast<double*>(data)[i] = static_cast<double>(i) * 0.5;
  gdap_map* map = nullptr;
  check(gdap_map_create(&map, 1, 1, &d), "gdap_map_create");
  gdap_zarr_options o = GDAP_ZARR_OPTIONS_INIT;
  o.codec = GDAP_ZARR_RAW;
  o.overwrite = 1;
  const std::string store = (folder / "store").string(), prefix = (folder / "x").string();
  gdap::io::SystemCalls& calls = gdap::io::system_calls();
  const gdap::io::SystemCalls system = calls;
  std::vector<double> zarr[2], dnpy[2];  // [0]: with the flushes, [1]: without
  for (int run = 0; run < runs; ++run) {
    for (int without = 0; without < 2; ++without) {
      calls = system;
      if (without) calls.syncfs = no_flush;
      ::sync();
      auto t0 = std::chrono::steady_clock::now();
      check(gdap_zarr_save(comm, map, a, store.c_str(), &o), "gdap_zarr_save");
      zarr[without].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      calls = system;
      if (without) calls.fsync = no_flush;
      ::sync();
      t0 = std::chrono::steady_clock::now();
      check(gdap_dnpy_save(comm, a, prefix.c_str()), "gdap_dnpy_save");
      dnpy[without].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  calls = system;
  std::printf("64 MiB, %d runs each, median (min-max), in %s:\n", runs, folder.c_str());
  std::printf("  Zarr save (raw): with syncfs %s, without %s\n", summary(zarr[0]).c_str(), summary(zarr[1]).c_str());
  std::printf("  .dnpy save:      with fsync  %s, without %s\n", summary(dnpy[0]).c_str(), summary(dnpy[1]).c_str());
  gdap_map_destroy(map);
  gdap_array_destroy(a);
  gdap_comm_destroy(comm);
  fs::remove_all(folder);
  return 0;
}
