// gdap demo: ranks as threads of one process (the in-process default, host memory) share a 2-d
// array in block x block layout. Each rank fills its section by global index, hands it out as a
// DLPack tensor and takes it back without a copy; then every element is checked against its
// global index through the global map. One function per step, so later steps can join.
#include "cli/commands.hpp"
#include "cli/report.hpp"
#include "core/error.hpp"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <memory>
#include <thread>
#include <vector>

namespace gdap::cli {
namespace {

struct RankState {
  gdap_array* array = nullptr;  // the re-imported section
  bool zero_copy = false;       // export and re-import kept the pointer
  int64_t bytes = 0;
  std::string error;
};

// [start, stop) of block k of `size` split in `parts` (the first size % parts blocks one longer).
std::pair<int64_t, int64_t> block_bounds(int64_t size, int64_t parts, int64_t k) {
  const int64_t base = size / parts, extra = size % parts;
  const int64_t start = k * base + std::min(k, extra);
  return {start, start + base + (k < extra ? 1 : 0)};
}

std::vector<gdap_dim> rank_dims(const DemoOptions& o, int64_t rank) {
  const int64_t gr = rank / o.grid_cols, gc = rank % o.grid_cols;
  const auto [r0, r1] = block_bounds(o.rows, o.grid_rows, gr);
  const auto [c0, c1] = block_bounds(o.cols, o.grid_cols, gc);
  std::vector<gdap_dim> dims(2);
  check(gdap_dim_set_block(&dims[0], o.rows, o.grid_rows, gr, r0, r1));
  check(gdap_dim_set_block(&dims[1], o.cols, o.grid_cols, gc, c0, c1));
  return dims;
}

double expected_value(int64_t row, int64_t col) { return static_cast<double>(row * 1000 + col); }

// Step 1 (each rank): allocate, fill by global index.
gdap_array* create_and_fill(const std::vector<gdap_dim>& dims) {
  gdap_array* a = nullptr;
  check(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, dims.data(), 2));
  int64_t shape[2], strides[2];
  void* data = nullptr;
  check(gdap_array_shape(shape, a));
  check(gdap_array_strides(strides, a));
  check(gdap_array_data(&data, a));
  for (int64_t i = 0; i < shape[0]; ++i) {
    for (int64_t j = 0; j < shape[1]; ++j) {
      const int64_t local[2] = {i, j};
      int64_t global[2];
      check(gdap_array_local_to_global(global, a, local));
      static_cast<double*>(data)[i * strides[0] + j * strides[1]] = expected_value(global[0], global[1]);
    }
  }
  return a;
}

// Step 2 (each rank): export as DLPack and import again; the pointer must not change.
void exchange_zero_copy(RankState& state, const std::vector<gdap_dim>& dims) {
  void* before = nullptr;
  check(gdap_array_data(&before, state.array));
  DLManagedTensorVersioned* tensor = nullptr;
  check(gdap_array_to_dlpack(&tensor, state.array));
  gdap_array* again = nullptr;
  const gdap_status s = gdap_array_from_dlpack(&again, tensor, dims.data(), 2, GDAP_PROTOCOL_VERSION);
  if (s != GDAP_SUCCESS) {
    tensor->deleter(tensor);  // not taken on failure
    check(s);
  }
  gdap_array_destroy(state.array);  // the re-import keeps the memory alive
  state.array = again;
  void* after = nullptr;
  check(gdap_array_data(&after, state.array));
  state.zero_copy = before == after;
  int64_t shape[2];
  check(gdap_array_shape(shape, state.array));
  state.bytes = shape[0] * shape[1] * 8;
}

void run_rank(const DemoOptions& o, int64_t rank, RankState& state) {
  try {
    const auto dims = rank_dims(o, rank);
    state.array = create_and_fill(dims);
    exchange_zero_copy(state, dims);
  } catch (const std::exception& e) {
    state.error = e.what();
  }
}

// Step 3 (one thread): every global element, found through the map, holds its own value.
int64_t check_every_element(const gdap_map* map, const std::vector<RankState>& states, const DemoOptions& o) {
  int64_t wrong = 0;
  for (int64_t i = 0; i < o.rows; ++i) {
    for (int64_t j = 0; j < o.cols; ++j) {
      const int64_t global[2] = {i, j};
      int64_t rank = -1, local[2], strides[2];
      void* data = nullptr;
      check(gdap_map_owner(&rank, local, map, global));
      const gdap_array* a = states[static_cast<size_t>(rank)].array;
      check(gdap_array_strides(strides, a));
      check(gdap_array_data(&data, a));
      const double v = static_cast<const double*>(data)[local[0] * strides[0] + local[1] * strides[1]];
      if (v != expected_value(i, j)) ++wrong;
    }
  }
  return wrong;
}

void release(std::vector<RankState>& states) {
  for (auto& s : states) gdap_array_destroy(s.array);
}

}  // namespace

int demo(const DemoOptions& o) {
  if (o.rows < 1 || o.cols < 1 || o.grid_rows < 1 || o.grid_cols < 1 || o.rows > 100000 || o.cols > 100000 ||
      o.grid_rows * o.grid_cols > 256) {
    fmt::print(stderr, "gdap demo: rows and cols must be in [1, 100000] and the grid at most 256 ranks\n");
    return 2;
  }
  const int64_t nranks = o.grid_rows * o.grid_cols;
  fmt::print("gdap {} demo: {} x {} float64 array, block x block over a {} x {} grid, {} ranks as threads of one "
             "process, host memory\n\n",
             gdap_version_string(), o.rows, o.cols, o.grid_rows, o.grid_cols, nranks);
  std::vector<RankState> states(static_cast<size_t>(nranks));
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < nranks; ++r) threads.emplace_back(run_rank, std::cref(o), r, std::ref(states[static_cast<size_t>(r)]));
  for (auto& t : threads) t.join();
  for (int64_t r = 0; r < nranks; ++r) {
    if (!states[static_cast<size_t>(r)].error.empty()) {
      fmt::print(stderr, "rank {}: {}\n", r, states[static_cast<size_t>(r)].error);
      release(states);
      return 1;
    }
  }
  std::vector<gdap_dim> all;
  for (int64_t r = 0; r < nranks; ++r) {
    for (const gdap_dim& d : rank_dims(o, r)) all.push_back(d);
  }
  gdap_map* raw = nullptr;
  check(gdap_map_create(&raw, nranks, 2, all.data()));
  std::unique_ptr<gdap_map, gdap_status (*)(gdap_map*)> map(raw, gdap_map_destroy);
  const auto ranks = summarize(map.get());
  fmt::print("step 1  each rank allocated and filled its section (value = row * 1000 + column):\n{}\n", table(ranks));
  int64_t shared = 0, zero_copy = 0;
  for (const auto& s : states) {
    shared += s.bytes;
    zero_copy += s.zero_copy ? 1 : 0;
  }
  fmt::print("step 2  exported as DLPack and re-imported: {} of {} ranks kept the same pointer ({} bytes shared, "
             "none copied)\n\n",
             zero_copy, nranks, shared);
  fmt::print("step 3  the global map says who owns what:\n{}\n", picture(map.get()));
  const int64_t wrong = check_every_element(map.get(), states, o);
  fmt::print("step 4  checked all {} elements through the map: {} wrong\n\n", o.rows * o.cols, wrong);
  release(states);
  const bool ok = wrong == 0 && zero_copy == nranks;
  fmt::print("demo: {}\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace gdap::cli
