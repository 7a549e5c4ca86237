// Helpers of tests/io's save tests (test_concurrent_saves.cpp, test_save_faults.cpp): a 1-d float64
// array in equal blocks whose values tell which save wrote them (tag * 1000 + global index), saved and
// loaded as Zarr and .dnpy by in-process groups, rank 0's status and message kept.
#pragma once

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/group.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace save_test {

namespace fs = std::filesystem;
using gdap_test::Group;
using gdap_test::on_threads;

constexpr int64_t kN = 64;  // a 1-d float64 array, in equal blocks over the ranks
inline const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
inline const gdap_device kHost{GDAP_DEVICE_CPU, 0};

inline fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("gdap_save_test_" + std::to_string(getpid())) / name;
  fs::remove_all(p);
  fs::create_directories(p.parent_path());
  return p;
}

inline gdap_dim block_of(int64_t P, int64_t r) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_block(&d, kN, P, r, kN * r / P, kN * (r + 1) / P), GDAP_SUCCESS) << gdap_last_error();
  return d;
}

// Rank r's section, holding tag * 1000 + its global indices (or zeros for tag 0).
inline gdap_array* section(int64_t P, int64_t r, double tag) {
  const gdap_dim d = block_of(P, r);
  gdap_array* a = nullptr;
  EXPECT_EQ(gdap_array_create(&a, kF64, kHost, &d, 1), GDAP_SUCCESS) << gdap_last_error();
  void* data = nullptr;
  gdap_array_data(&data, a);
  for (int64_t i = 0; i < kN * (r + 1) / P - kN * r / P; ++i) static_cast<double*>(data)[i] = tag == 0 ? 0 : tag * 1000 + double(kN * r / P + i);
  return a;
}

// The tag a loaded section holds (-1 when its values are of no one save).
inline double tag_of(const gdap_array* a, int64_t P, int64_t r) {
  void* data = nullptr;
  gdap_array_data(&data, a);
  const auto* v = static_cast<const double*>(data);
  const int64_t lo = kN * r / P, n = kN * (r + 1) / P - lo;
  const double tag = std::floor(v[0] / 1000);
  for (int64_t i = 0; i < n; ++i) {
    if (v[i] != tag * 1000 + double(lo + i)) return -1;
  }
  return tag;
}

inline gdap_map* map_of(int64_t P) {
  std::vector<gdap_dim> all;
  for (int64_t r = 0; r < P; ++r) all.push_back(block_of(P, r));
  gdap_map* m = nullptr;
  EXPECT_EQ(gdap_map_create(&m, P, 1, all.data()), GDAP_SUCCESS) << gdap_last_error();
  return m;
}

// Rank 0's status and message (the other ranks report GDAP_ERR_REMOTE naming it).
struct Outcome {
  gdap_status status = GDAP_SUCCESS;
  std::string message;
  std::vector<double> tags;  // a load's: each rank's tag
  double tag() const {
    for (double t : tags) {
      if (t != tags[0]) return -1;
    }
    return tags.empty() ? -1 : tags[0];
  }
};

inline Outcome zarr_save(int64_t P, double tag, const std::string& path) {
  Group group(P);
  gdap_map* map = map_of(P);
  Outcome out;
  on_threads(P, [&](int64_t r) {
    gdap_array* a = section(P, r, tag);
    gdap_zarr_options o = GDAP_ZARR_OPTIONS_INIT;
    o.overwrite = 1;
    const gdap_status st = gdap_zarr_save(group[r], map, a, path.c_str(), &o);
    if (r == 0) out = {st, st == GDAP_SUCCESS ? "" : gdap_last_error(), {}};
    gdap_array_destroy(a);
  });
  gdap_map_destroy(map);
  return out;
}

inline Outcome zarr_load(int64_t P, const std::string& path) {
  Group group(P);
  gdap_map* map = map_of(P);
  Outcome out;
  out.tags.assign(static_cast<size_t>(P), -1);
  on_threads(P, [&](int64_t r) {
    gdap_array* a = section(P, r, 0);
    const gdap_status st = gdap_zarr_load(group[r], map, a, path.c_str());
    if (r == 0) {
      out.status = st;
      out.message = st == GDAP_SUCCESS ? "" : gdap_last_error();
    }
    if (st == GDAP_SUCCESS) out.tags[static_cast<size_t>(r)] = tag_of(a, P, r);
    gdap_array_destroy(a);
  });
  gdap_map_destroy(map);
  return out;
}

inline Outcome dnpy_save(int64_t P, double tag, const std::string& prefix) {
  Group group(P);
  Outcome out;
  on_threads(P, [&](int64_t r) {
    gdap_array* a = section(P, r, tag);
    const gdap_status st = gdap_dnpy_save(group[r], a, prefix.c_str());
    if (r == 0) out = {st, st == GDAP_SUCCESS ? "" : gdap_last_error(), {}};
    gdap_array_destroy(a);
  });
  return out;
}

inline Outcome dnpy_load(int64_t P, const std::string& prefix) {
  Group group(P);
  Outcome out;
  out.tags.assign(static_cast<size_t>(P), -1);
  on_threads(P, [&](int64_t r) {
    gdap_array* a = nullptr;
    const gdap_status st = gdap_dnpy_load(&a, group[r], prefix.c_str(), kHost);
    if (r == 0) {
      out.status = st;
      out.message = st == GDAP_SUCCESS ? "" : gdap_last_error();
    }
    if (st == GDAP_SUCCESS) out.tags[static_cast<size_t>(r)] = tag_of(a, P, r);
    gdap_array_destroy(a);
  });
  return out;
}

// The exclusive lock a save holds (on a store's folder, on a .dnpy marker), held by this scope.
class HeldLock {
 public:
  explicit HeldLock(const fs::path& p) : fd_(::open(p.c_str(), O_RDONLY | O_CLOEXEC)) {
    EXPECT_GE(fd_, 0) << p;
    EXPECT_EQ(::flock(fd_, LOCK_EX), 0);
  }
  ~HeldLock() { release(); }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace save_test
