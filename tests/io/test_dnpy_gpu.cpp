// gdap_dnpy_save / gdap_dnpy_load with CUDA device sections (label gpu; fails, never skips, without
// a CUDA device): a 2-rank block x block-cyclic array in device memory is saved (staged through
// pinned memory) and must give the same file as the same values saved from the host; then loaded
// back onto the device, onto pinned and managed memory, each copied to the host and compared.
#include <gdap/gdap.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<gdap_dim> dims_of(int64_t r) {
  gdap_dim a = GDAP_DIM_INIT, b = GDAP_DIM_INIT;
  gdap_dim_set_block(&a, 6, 2, r, 3 * r, 3 * r + 3);
  gdap_dim_set_cyclic(&b, 7, 1, 0, 0, 2);
  return {a, b};
}

TEST(DnpyGpu, DeviceSectionsThroughPinnedMemory) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess) << "no CUDA device";
  ASSERT_GE(count, 1);
  const fs::path dir = fs::temp_directory_path() / ("gdap_dnpy_gpu_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string dev_prefix = (dir / "dev").string(), host_prefix = (dir / "host").string();
  std::vector<gdap_comm*> comms(2);
  ASSERT_EQ(gdap_comm_create_group(comms.data(), 2), GDAP_SUCCESS);
  const gdap_dtype f64{GDAP_DTYPE_FLOAT, 64, 1};
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::string& f = failures[static_cast<size_t>(r)];
      cudaSetDevice(0);
      const std::vector<gdap_dim> dims = dims_of(r);
      std::vector<double> values(21);
      for (size_t i = 0; i < values.size(); ++i) values[i] = 100.0 * static_cast<double>(r) + static_cast<double>(i) + 0.25;
      gdap_array *dev = nullptr, *host = nullptr;
      if (gdap_array_create(&dev, f64, {GDAP_DEVICE_CUDA, 0}, dims.data(), 2) != GDAP_SUCCESS ||
          gdap_array_create(&host, f64, {GDAP_DEVICE_CPU, 0}, dims.data(), 2) != GDAP_SUCCESS) {
        f = std::string("create: ") + gdap_last_error();
        return;
      }
      void *d = nullptr, *h = nullptr;
      gdap_array_data(&d, dev);
      gdap_array_data(&h, host);
      cudaMemcpy(d, values.data(), 21 * sizeof(double), cudaMemcpyHostToDevice);
      std::memcpy(h, values.data(), 21 * sizeof(double));
      if (gdap_dnpy_save(comms[static_cast<size_t>(r)], dev, dev_prefix.c_str()) != GDAP_SUCCESS ||
          gdap_dnpy_save(comms[static_cast<size_t>(r)], host, host_prefix.c_str()) != GDAP_SUCCESS) {
        f = std::string("save: ") + gdap_last_error();
      } else if (slurp(dev_prefix + "_" + std::to_string(r) + ".dnpy") != slurp(host_prefix + "_" + std::to_string(r) + ".dnpy")) {
        f = "the device section's file differs from the host section's";
      }
      for (int32_t type : {GDAP_DEVICE_CUDA, GDAP_DEVICE_CUDA_HOST, GDAP_DEVICE_CUDA_MANAGED}) {
        if (!f.empty()) break;
        gdap_array* back = nullptr;
        if (gdap_dnpy_load(&back, comms[static_cast<size_t>(r)], dev_prefix.c_str(), {type, 0}) != GDAP_SUCCESS) {
          f = std::string("load: ") + gdap_last_error();
          break;
        }
        gdap_device where{};
        gdap_array_device(&where, back);
        void* b = nullptr;
        gdap_array_data(&b, back);
        std::vector<double> got(21, -1);
        cudaMemcpy(got.data(), b, 21 * sizeof(double), cudaMemcpyDefault);
        if (where.type != type) f = "loaded onto device type " + std::to_string(where.type) + ", not " + std::to_string(type);
        else if (got != values) f = "device type " + std::to_string(type) + ": loaded values differ";
        gdap_array_destroy(back);
      }
      gdap_array_destroy(dev);
      gdap_array_destroy(host);
    });
  }
  for (std::thread& t : threads) t.join();
  for (gdap_comm* c : comms) gdap_comm_destroy(c);
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(failures[static_cast<size_t>(r)].empty()) << "rank " << r << ": " << failures[static_cast<size_t>(r)];
  fs::remove_all(dir);
}

}  // namespace
