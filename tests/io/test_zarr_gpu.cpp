// gdap_zarr_load into CUDA device sections (label gpu; fails, never skips, without a CUDA device).
// A load stages the section's span in host memory and copies it back whole: the span is copied in
// first only where the load does not overwrite all of it. Both ways are checked on 2 ranks of an
// in-process group, from a store saved from host sections:
//   - row blocks: every element of the section is loaded (no copy-in); the sentinel the section
//     held before must be gone everywhere;
//   - padded row blocks (a halo row between the ranks, a boundary row outside): the owned rows are
//     loaded and the padding rows keep the sentinel (the copy-in keeps them).
#include <gdap/gdap.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr int64_t kRows = 8, kCols = 5;
constexpr double kSentinel = -7.5;

double value(int64_t row, int64_t col) { return 10.0 * static_cast<double>(row) + static_cast<double>(col) + 0.5; }

// Rank r's dimensions: rows in two blocks of 4, padded by one row on each side when `padded`.
std::vector<gdap_dim> dims_of(int64_t r, bool padded) {
  gdap_dim rows = GDAP_DIM_INIT, cols = GDAP_DIM_INIT;
  if (padded) {
    gdap_dim_set_block(&rows, kRows, 2, r, r == 0 ? 0 : 3, r == 0 ? 5 : 8);
    gdap_dim_set_padding(&rows, r == 0 ? 0 : 1, r == 0 ? 1 : 0);
  } else {
    gdap_dim_set_block(&rows, kRows, 2, r, 4 * r, 4 * r + 4);
  }
  gdap_dim_set_block(&cols, kCols, 1, 0, 0, kCols);
  return {rows, cols};
}

gdap_map* map_of(bool padded) {
  std::vector<gdap_dim> all = dims_of(0, padded);
  for (const gdap_dim& d : dims_of(1, padded)) all.push_back(d);
  gdap_map* m = nullptr;
  EXPECT_EQ(gdap_map_create(&m, 2, 2, all.data()), GDAP_SUCCESS) << gdap_last_error();
  return m;
}

// Saves the plain layout from host sections, then loads `padded` or plain device sections on every
// rank; returns each rank's failure ("" when its section is right).
std::vector<std::string> load_on_device(bool padded, const std::string& path) {
  std::vector<gdap_comm*> comms(2);
  EXPECT_EQ(gdap_comm_create_group(comms.data(), 2), GDAP_SUCCESS);
  gdap_map *plain = map_of(false), *target = map_of(padded);
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::string& f = failures[static_cast<size_t>(r)];
      gdap_comm* comm = comms[static_cast<size_t>(r)];
      cudaSetDevice(0);
      const gdap_dtype f64{GDAP_DTYPE_FLOAT, 64, 1};
      const std::vector<gdap_dim> mine = dims_of(r, false), theirs = dims_of(r, padded);
      gdap_array *host = nullptr, *dev = nullptr;
      if (gdap_array_create(&host, f64, {GDAP_DEVICE_CPU, 0}, mine.data(), 2) != GDAP_SUCCESS ||
          gdap_array_create(&dev, f64, {GDAP_DEVICE_CUDA, 0}, theirs.data(), 2) != GDAP_SUCCESS) {
        f = std::string("create: ") + gdap_last_error();
        return;
      }
      void *h = nullptr, *d = nullptr;
      gdap_array_data(&h, host);
      gdap_array_data(&d, dev);
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < kCols; ++j) static_cast<double*>(h)[i * kCols + j] = value(4 * r + i, j);
      }
      const int64_t local_rows = theirs[0].stop - theirs[0].start;
      std::vector<double> got(static_cast<size_t>(local_rows * kCols), kSentinel);
      cudaMemcpy(d, got.data(), got.size() * sizeof(double), cudaMemcpyHostToDevice);
      if (gdap_zarr_save(comm, plain, host, path.c_str(), nullptr) != GDAP_SUCCESS ||
          gdap_zarr_load(comm, target, dev, path.c_str()) != GDAP_SUCCESS) {
        f = std::string("save or load: ") + gdap_last_error();
      } else {
        cudaMemcpy(got.data(), d, got.size() * sizeof(double), cudaMemcpyDeviceToHost);
        for (int64_t i = 0; i < local_rows && f.empty(); ++i) {
          const int64_t row = theirs[0].start + i;
          const bool pad = i < theirs[0].padding[0] || i >= local_rows - theirs[0].padding[1];
          for (int64_t j = 0; j < kCols; ++j) {
            const double want = pad ? kSentinel : value(row, j);
            if (got[static_cast<size_t>(i * kCols + j)] != want) {
              f = "rank " + std::to_string(r) + ", local row " + std::to_string(i) + " column " + std::to_string(j) +
                  ": " + std::to_string(got[static_cast<size_t>(i * kCols + j)]) + ", want " + std::to_string(want);
              break;
            }
          }
        }
      }
      gdap_array_destroy(dev);
      gdap_array_destroy(host);
    });
  }
  for (std::thread& t : threads) t.join();
  for (gdap_comm* c : comms) gdap_comm_destroy(c);
  gdap_map_destroy(plain);
  gdap_map_destroy(target);
  return failures;
}

class ZarrGpu : public ::testing::TestWithParam<bool> {};

TEST_P(ZarrGpu, DeviceLoadFillsOwnedElementsAndKeepsPadding) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess) << "no CUDA device";
  ASSERT_GE(count, 1);
  const fs::path dir = fs::temp_directory_path() / ("gdap_zarr_gpu_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::string> failures = load_on_device(GetParam(), (dir / "a.zarr").string());
  fs::remove_all(dir);
  EXPECT_EQ(failures, std::vector<std::string>(2));
}

INSTANTIATE_TEST_SUITE_P(Sections, ZarrGpu, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Padded" : "Whole"; });

}  // namespace
