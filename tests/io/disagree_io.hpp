// Saves and loads whose ranks pass different arguments (hunt 15a #4 and #8, 15b #6, 16a #1 and #2):
// rank 1 passes another path, prefix, option, dtype or map than the others, also one that would
// fail rank 1's own read or write (no store there, a missing folder, a section of another dtype). Every rank must fail at once with
// GDAP_ERR_INVALID_ARGUMENT naming rank 1 and the argument, and nothing may be written (no store, no
// file, no temporary left) or loaded (the caller's section untouched, no array handed out). One
// rank's part of a table test (move/rank_runs.hpp): run by test_disagree_io (in-process group) and
// disagree_io_mpi (MPI processes).
#pragma once

#include <gdap/gdap.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace disagree_io {

namespace fs = std::filesystem;

constexpr int64_t kN = 16;  // a 1-d array, in blocks over the ranks (or cyclic, the odd map)
inline const gdap_device kHost{GDAP_DEVICE_CPU, 0};
inline const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
inline const gdap_dtype kF32{GDAP_DTYPE_FLOAT, 32, 1};

inline gdap_dim dim_of(bool cyclic, int64_t P, int64_t r) {
  gdap_dim d = GDAP_DIM_INIT;
  if (cyclic) gdap_dim_set_cyclic(&d, kN, P, r, r, 0);
  else gdap_dim_set_block(&d, kN, P, r, kN * r / P, kN * (r + 1) / P);
  return d;
}

// Owns one rank's map and section (zeros; for a tag, tag * 100 + global index in float64 blocks).
struct Data {
  gdap_map* map = nullptr;
  gdap_array* section = nullptr;
  int64_t itemsize;
  Data(bool cyclic, gdap_dtype dtype, int64_t P, int64_t r, double tag) : itemsize(dtype.bits / 8) {
    std::vector<gdap_dim> all;
    for (int64_t q = 0; q < P; ++q) all.push_back(dim_of(cyclic, P, q));
    gdap_map_create(&map, P, 1, all.data());
    gdap_array_create(&section, dtype, kHost, &all[static_cast<size_t>(r)], 1);
    void* data = nullptr;
    gdap_array_data(&data, section);
    int64_t n = 0;
    gdap_array_shape(&n, section);
    std::memset(data, 0, static_cast<size_t>(n * dtype.bits / 8));
    for (int64_t i = 0; i < n && tag != 0 && !cyclic && dtype.bits == 64; ++i) static_cast<double*>(data)[i] = tag * 100 + double(kN * r / P + i);
  }
  Data(const Data&) = delete;
  Data& operator=(const Data&) = delete;
  ~Data() {
    gdap_array_destroy(section);
    gdap_map_destroy(map);
  }
  // True while every byte is still zero.
  bool untouched() const {
    void* data = nullptr;
    int64_t count = 0;
    gdap_array_data(&data, section);
    gdap_array_shape(&count, section);
    for (int64_t i = 0; i < count * itemsize; ++i) {
      if (static_cast<const unsigned char*>(data)[i] != 0) return false;
    }
    return true;
  }
};

// One rank's run of the cases: `root` is one fresh folder every rank names alike; `mpi` adds the
// case only separate processes can make (one relative path, two working folders).
class Rank {
 public:
  Rank(gdap_comm* comm, int64_t rank, int64_t nranks, fs::path root) : comm_(comm), r_(rank), P_(nranks), root_(std::move(root)) {}

  std::vector<std::string> run_all(bool mpi) {
    zarr_save_cases();
    zarr_load_cases();
    dnpy_cases();
    if (mpi) relative_path_case();
    return failures_;
  }

 private:
  gdap_comm* comm_;
  int64_t r_, P_;
  fs::path root_;
  std::vector<std::string> failures_;

  bool odd() const { return r_ == 1; }
  std::string at(const char* name) const { return (root_ / name).string(); }

  void expect(bool ok, const std::string& what) {
    if (!ok) failures_.push_back("rank " + std::to_string(r_) + ": " + what);
  }

  // `status` must be the refusal naming rank 1 and `field`, and quickly (no settling wait).
  void expect_refused(const char* test, gdap_status status, const char* field, std::chrono::steady_clock::duration took) {
    const std::string message = gdap_last_error();
    expect(status == GDAP_ERR_INVALID_ARGUMENT,
           std::string(test) + ": status " + gdap_status_string(status) + " (" + message + "), want GDAP_ERR_INVALID_ARGUMENT");
    expect(message.find("rank 1 passed " + std::string(field)) != std::string::npos,
           std::string(test) + ": the message does not name rank 1's " + field + ": " + message);
    expect(took < std::chrono::milliseconds(2500), std::string(test) + ": refused only after a wait");
  }

  // Nothing under root_ but the names in `keep` (no store, file or temporary of a refused save).
  void expect_only(const char* test, const std::vector<std::string>& keep) {
    gdap_comm_barrier(comm_);
    std::error_code error;
    for (const fs::directory_entry& e : fs::directory_iterator(root_, error)) {
      const std::string name = e.path().filename().string();
      bool kept = false;
      for (const std::string& k : keep) kept = kept || name == k;
      expect(kept, std::string(test) + ": the refused save left " + name);
    }
    gdap_comm_barrier(comm_);
  }

  // root_'s modification time: a file made or removed in it (a refused save's temporary) moves it.
  std::string root_changed() const {
    struct stat st {};
    ::stat(root_.c_str(), &st);
    return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }

  // Waits past the file system's clock tick, so that a file made now moves root_'s time.
  void settle_clock() {
    gdap_comm_barrier(comm_);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }

  gdap_status zarr_save(const Data& d, const std::string& path, const gdap_zarr_options& o) {
    return gdap_zarr_save(comm_, d.map, d.section, path.c_str(), &o);
  }

  void zarr_save_refused(const char* test, const char* field, bool cyclic, gdap_dtype dtype, const std::string& path,
                         const gdap_zarr_options& o) {
    const Data d(odd() && cyclic, odd() ? dtype : kF64, P_, r_, 1);
    const auto t0 = std::chrono::steady_clock::now();
    const gdap_status s = zarr_save(d, odd() ? path : at("z"), o);
    expect_refused(test, s, field, std::chrono::steady_clock::now() - t0);
    expect_only(test, {});
  }

  void zarr_save_cases() {
    const gdap_zarr_options plain = GDAP_ZARR_OPTIONS_INIT;
    gdap_zarr_options o = plain;
    zarr_save_refused("zarr save, another path", "path '", false, kF64, at("other"), plain);
    o.codec = GDAP_ZARR_RAW;
    zarr_save_refused("zarr save, another codec", "options->codec", false, kF64, at("z"), odd() ? o : plain);
    o = plain;
    o.chunk_bytes = 64;
    zarr_save_refused("zarr save, another chunk_bytes", "options->chunk_bytes", false, kF64, at("z"), odd() ? o : plain);
    o = plain;
    o.layout = GDAP_ZARR_CHUNKS;
    zarr_save_refused("zarr save, another layout", "options->layout", false, kF64, at("z"), odd() ? o : plain);
    zarr_save_refused("zarr save, another dtype", "dtype", false, kF32, at("z"), plain);
    zarr_save_refused("zarr save, another map", "map", true, kF64, at("z"), plain);
    o = plain;
    o.zstd_level = 5;
    zarr_save_refused("zarr save, another zstd level", "options->zstd_level", false, kF64, at("z"), odd() ? o : plain);
    equal_saves_cases();
  }

  // Options spelled apart that take effect alike (16a #2): the save goes ahead on every rank.
  void zarr_save_agrees(const char* test, const gdap_zarr_options& mine, const gdap_zarr_options& odd_ones) {
    const Data d(false, kF64, P_, r_, 1);
    const gdap_status s = zarr_save(d, at("eq"), odd() ? odd_ones : mine);
    expect(s == GDAP_SUCCESS, std::string(test) + ": " + gdap_status_string(s) + " (" + gdap_last_error() + ")");
    gdap_comm_barrier(comm_);
    if (r_ == 0) fs::remove_all(root_ / "eq");
    gdap_comm_barrier(comm_);
  }

  void equal_saves_cases() {
    const gdap_zarr_options plain = GDAP_ZARR_OPTIONS_INIT;
    gdap_zarr_options a = plain, b = plain;
    b.chunk_bytes = 2 << 20;  // the documented default of 0
    zarr_save_agrees("zarr save, chunk_bytes 0 and 2 MiB", a, b);
    a.codec = b.codec = GDAP_ZARR_RAW;
    a.chunk_bytes = b.chunk_bytes = 0;
    b.zstd_level = 3;  // ignored for GDAP_ZARR_RAW
    zarr_save_agrees("zarr save, raw with zstd_level 0 and 3", a, b);
    a = b = plain;
    b.zstd_level = 3;  // what zstd takes its level 0 for (ZSTD_CLEVEL_DEFAULT)
    zarr_save_agrees("zarr save, zstd level 0 and 3", a, b);
    a = b = plain;
    b.shuffle = GDAP_ZARR_NOSHUFFLE;  // for the blosc codecs only
    zarr_save_agrees("zarr save, zstd with another shuffle", a, b);
    a.layout = b.layout = GDAP_ZARR_CHUNKS;
    b.shuffle = plain.shuffle;
    b.chunk_bytes = 64;  // unused without shards
    zarr_save_agrees("zarr save, chunks with another chunk_bytes", a, b);
  }

  void zarr_load_refused(const char* test, const char* field, bool cyclic, const std::string& path, gdap_dtype dtype = kF64) {
    const Data d(odd() && cyclic, odd() ? dtype : kF64, P_, r_, 0);
    const auto t0 = std::chrono::steady_clock::now();
    const gdap_status s = gdap_zarr_load(comm_, d.map, d.section, (odd() ? path : at("za")).c_str());
    expect_refused(test, s, field, std::chrono::steady_clock::now() - t0);
    expect(d.untouched(), std::string(test) + ": the section was written");
  }

  void zarr_load_cases() {
    const gdap_zarr_options o = GDAP_ZARR_OPTIONS_INIT;
    const Data a(false, kF64, P_, r_, 1), b(false, kF64, P_, r_, 2);
    expect(zarr_save(a, at("za"), o) == GDAP_SUCCESS, std::string("zarr save za: ") + gdap_last_error());
    expect(zarr_save(b, at("zb"), o) == GDAP_SUCCESS, std::string("zarr save zb: ") + gdap_last_error());
    zarr_load_refused("zarr load, another path", "path '", false, at("zb"));
    zarr_load_refused("zarr load, another map", "map", true, at("za"));
    // Rank 1's own read would fail too (16a #1): still refused as the rank that differs.
    zarr_load_refused("zarr load, a path with no store", "path '", false, at("zaa"));
    zarr_load_refused("zarr load, a float32 section", "dtype", false, at("za"), kF32);
    // The agreeing load still reads its store.
    const Data back(false, kF64, P_, r_, 0);
    expect(gdap_zarr_load(comm_, back.map, back.section, at("zb").c_str()) == GDAP_SUCCESS,
           std::string("zarr load zb: ") + gdap_last_error());
    double first = 0;
    void* data = nullptr;
    gdap_array_data(&data, back.section);
    std::memcpy(&first, data, sizeof first);
    expect(first == 200 + double(kN * r_ / P_), "zarr load zb read " + std::to_string(first));
    gdap_comm_barrier(comm_);
    if (r_ == 0) {
      fs::remove_all(root_ / "za");
      fs::remove_all(root_ / "zb");
    }
    gdap_comm_barrier(comm_);
  }

  // Refused before any rank writes: not even a temporary is made (and removed) in root_.
  void dnpy_save_refused(const char* test, const char* field, gdap_dtype dtype, const std::string& prefix) {
    const Data d(false, odd() ? dtype : kF64, P_, r_, 1);
    settle_clock();
    const std::string before = root_changed();
    const auto t0 = std::chrono::steady_clock::now();
    const gdap_status s = gdap_dnpy_save(comm_, d.section, (odd() ? prefix : at("p")).c_str());
    expect_refused(test, s, field, std::chrono::steady_clock::now() - t0);
    expect(root_changed() == before, std::string(test) + ": a file was made in the folder (a temporary written)");
    expect_only(test, {});
  }

  void dnpy_cases() {
    dnpy_save_refused("dnpy save, another prefix", "prefix '", kF64, at("q"));
    dnpy_save_refused("dnpy save, another dtype", "dtype", kF32, at("p"));
    dnpy_save_refused("dnpy save, a prefix in a missing folder", "prefix '", kF64, at("nodir/p"));
    const Data p(false, kF64, P_, r_, 1), q(false, kF64, P_, r_, 2);
    expect(gdap_dnpy_save(comm_, p.section, at("p").c_str()) == GDAP_SUCCESS, std::string("dnpy save p: ") + gdap_last_error());
    expect(gdap_dnpy_save(comm_, q.section, at("q").c_str()) == GDAP_SUCCESS, std::string("dnpy save q: ") + gdap_last_error());
    dnpy_load_refused("dnpy load, another prefix", at("q"));
    dnpy_load_refused("dnpy load, a prefix with no files", at("pp"));
    gdap_comm_barrier(comm_);
    if (r_ == 0) {
      for (const fs::directory_entry& e : fs::directory_iterator(root_)) fs::remove_all(e.path());
    }
    gdap_comm_barrier(comm_);
  }

  // Rank 1 loads `prefix`, the others p: refused, `*out` as it was.
  void dnpy_load_refused(const char* test, const std::string& prefix) {
    gdap_array* const unset = reinterpret_cast<gdap_array*>(&failures_);  // never a gdap array
    gdap_array* out = unset;
    const auto t0 = std::chrono::steady_clock::now();
    const gdap_status s = gdap_dnpy_load(&out, comm_, (odd() ? prefix : at("p")).c_str(), kHost);
    expect_refused(test, s, "prefix '", std::chrono::steady_clock::now() - t0);
    expect(out == unset, std::string(test) + ": *out was written");
    if (out != unset) gdap_array_destroy(out);
  }

  // One relative path, resolved in two working folders: two stores, so refused.
  void relative_path_case() {
    const fs::path before = fs::current_path();
    const fs::path here = root_ / (odd() ? "cwd1" : "cwd0");
    fs::create_directories(here);
    fs::current_path(here);
    const gdap_zarr_options o = GDAP_ZARR_OPTIONS_INIT;
    const Data d(false, kF64, P_, r_, 1);
    const auto t0 = std::chrono::steady_clock::now();
    const gdap_status s = zarr_save(d, "z", o);
    expect_refused("zarr save, one relative path in two working folders", s, "path (resolved", std::chrono::steady_clock::now() - t0);
    fs::current_path(before);
    gdap_comm_barrier(comm_);
    expect(!fs::exists(root_ / "cwd0" / "z") && !fs::exists(root_ / "cwd1" / "z"), "relative path: a store was written");
  }
};

}  // namespace disagree_io
