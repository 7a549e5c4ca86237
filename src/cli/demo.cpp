// gdap demo: ranks as threads of one process (the in-process case, host memory) share a 2-d array
// in block x block layout. Each rank fills its section by global index, hands it out as a DLPack
// tensor and takes it back without a copy; then the global map finds every element's owner and the
// value there is checked. Last, the ranks redistribute the array to a 2-d block-cyclic layout over
// an in-process group (on the GPUs when there are any) and check every element they received.
// One function per step, all state in `Demo`.
#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/report.hpp"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <thread>
#include <vector>

#ifdef GDAP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gdap::cli {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 24;  // 128 MiB of float64
constexpr int64_t kMaxRanks = 256;

struct Shape {  // the demo's array and process grid
  int64_t rows = 0, cols = 0, grid_rows = 0, grid_cols = 0;
};

using ArrayPtr = std::unique_ptr<gdap_array, gdap_status (*)(gdap_array*)>;

struct Section {  // one rank's state
  std::vector<gdap_dim> dims;
  ArrayPtr array{nullptr, gdap_array_destroy};
  const void* exported = nullptr;     // data pointer before the DLPack round trip
  const void* reimported = nullptr;   // and after it
  int64_t bytes = 0;
  std::string error;  // a failure on this rank's thread
  // Step 5: the block-cyclic destination, what the plan moved and how many elements were wrong.
  std::vector<gdap_dim> cyclic_dims;
  gdap_plan_stats moved = GDAP_PLAN_STATS_INIT;
  int64_t wrong_after = 0;
};

struct Demo {
  Shape shape;
  int64_t nranks = 0;
  int gpus = 0;  // step 5 runs on the GPUs when there are any
  std::vector<gdap_comm*> comms;  // the in-process group, one per rank
  std::vector<Section> sections;
  MapPtr map{nullptr, gdap_map_destroy};
};

double expected_value(int64_t row, int64_t col) { return static_cast<double>(row * 1000 + col); }

// [start, stop) of block k of `size` split in `parts`: the first size % parts blocks one longer.
std::pair<int64_t, int64_t> block_bounds(int64_t size, int64_t parts, int64_t k) {
  const int64_t base = size / parts, extra = size % parts;
  const int64_t start = k * base + std::min(k, extra);
  return {start, start + base + (k < extra ? 1 : 0)};
}

// Step 0 (main thread): each rank's dim_data, block x block on a C-order grid.
void describe_layout(Demo& d) {
  const Shape& o = d.shape;
  for (int64_t rank = 0; rank < d.nranks; ++rank) {
    const int64_t gr = rank / o.grid_cols, gc = rank % o.grid_cols;
    const auto [r0, r1] = block_bounds(o.rows, o.grid_rows, gr);
    const auto [c0, c1] = block_bounds(o.cols, o.grid_cols, gc);
    const gdap_dim init = GDAP_DIM_INIT;
    std::vector<gdap_dim> dims(2, init);
    check(gdap_dim_set_block(&dims[0], o.rows, o.grid_rows, gr, r0, r1));
    check(gdap_dim_set_block(&dims[1], o.cols, o.grid_cols, gc, c0, c1));
    d.sections[static_cast<size_t>(rank)].dims = std::move(dims);
  }
}

// Step 1 (each rank): allocate the local section and fill each element by its global index.
void create_and_fill(Section& s) {
  gdap_array* raw = nullptr;
  check(gdap_array_create(&raw, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, s.dims.data(), 2));
  s.array.reset(raw);
  int64_t shape[2], strides[2];
  void* data = nullptr;
  check(gdap_array_shape(shape, raw));
  check(gdap_array_strides(strides, raw));
  check(gdap_array_data(&data, raw));
  for (int64_t i = 0; i < shape[0]; ++i) {
    for (int64_t j = 0; j < shape[1]; ++j) {
      const int64_t local[2] = {i, j};
      int64_t global[2];
      check(gdap_array_local_to_global(global, raw, local));
      static_cast<double*>(data)[i * strides[0] + j * strides[1]] = expected_value(global[0], global[1]);
    }
  }
  s.bytes = shape[0] * shape[1] * static_cast<int64_t>(sizeof(double));
}

// Step 2 (each rank): export as a DLPack tensor and import it again; the data must not move.
void share_zero_copy(Section& s) {
  void* before = nullptr;
  check(gdap_array_data(&before, s.array.get()));
  DLManagedTensorVersioned* tensor = nullptr;
  check(gdap_array_to_dlpack(&tensor, s.array.get()));
  gdap_array* again = nullptr;
  const gdap_status status = gdap_array_from_dlpack(&again, tensor, s.dims.data(), 2, GDAP_PROTOCOL_VERSION);
  if (status != GDAP_SUCCESS) {
    const std::string message = gdap_last_error();
    tensor->deleter(tensor);  // not taken on failure
    throw Error(status, message);
  }
  s.array.reset(again);  // the tensor, now owned by `again`, keeps the memory alive
  void* after = nullptr;
  check(gdap_array_data(&after, s.array.get()));
  s.exported = before;
  s.reimported = after;
}

void run_rank(Section& s) {
  try {
    create_and_fill(s);
    share_zero_copy(s);
  } catch (const std::exception& e) {
    s.error = e.what();
  }
}

// Steps 1 and 2 on one thread per rank.
void run_ranks(Demo& d) {
  std::vector<std::thread> threads;
  for (Section& s : d.sections) threads.emplace_back(run_rank, std::ref(s));
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < d.sections.size(); ++r) {
    if (!d.sections[r].error.empty()) throw Error(GDAP_ERR_INTERNAL, fmt::format("rank {}: {}", r, d.sections[r].error));
  }
}

// Step 3 (main thread): the global map from every rank's dim_data, checked collectively.
void build_map(Demo& d) {
  std::vector<gdap_dim> all;
  for (const Section& s : d.sections) all.insert(all.end(), s.dims.begin(), s.dims.end());
  gdap_map* raw = nullptr;
  check(gdap_map_create(&raw, d.nranks, 2, all.data()));
  d.map.reset(raw);
}

// Step 4 (main thread): every global element, found through the map, holds its own value.
int64_t check_every_element(const Demo& d) {
  struct View {
    const double* data;
    int64_t strides[2];
  };
  std::vector<View> views;
  for (const Section& s : d.sections) {
    View v{static_cast<const double*>(s.reimported), {0, 0}};
    check(gdap_array_strides(v.strides, s.array.get()));
    views.push_back(v);
  }
  int64_t wrong = 0;
  for (int64_t i = 0; i < d.shape.rows; ++i) {
    for (int64_t j = 0; j < d.shape.cols; ++j) {
      const int64_t global[2] = {i, j};
      int64_t rank = -1, local[2];
      check(gdap_map_owner(&rank, local, d.map.get(), global));
      const View& v = views[static_cast<size_t>(rank)];
      if (v.data[local[0] * v.strides[0] + local[1] * v.strides[1]] != expected_value(i, j)) ++wrong;
    }
  }
  return wrong;
}

// Block-cyclic along both axes of the same grid, blocks of about a quarter of a rank's share.
std::vector<gdap_dim> block_cyclic_dims(const Shape& o, int64_t rank) {
  const int64_t gr = rank / o.grid_cols, gc = rank % o.grid_cols;
  const int64_t br = std::max<int64_t>(1, o.rows / (4 * o.grid_rows)), bc = std::max<int64_t>(1, o.cols / (4 * o.grid_cols));
  const gdap_dim init = GDAP_DIM_INIT;
  std::vector<gdap_dim> dims(2, init);
  check(gdap_dim_set_cyclic(&dims[0], o.rows, o.grid_rows, gr, gr * br, br));
  check(gdap_dim_set_cyclic(&dims[1], o.cols, o.grid_cols, gc, gc * bc, bc));
  return dims;
}

ArrayPtr new_section(const std::vector<gdap_dim>& dims, gdap_device where) {
  gdap_array* raw = nullptr;
  check(gdap_array_create(&raw, {GDAP_DTYPE_FLOAT, 64, 1}, where, dims.data(), 2));
  return ArrayPtr(raw, gdap_array_destroy);
}

#ifdef GDAP_HAVE_CUDA
// Copies the bytes of one C-contiguous section into another of the same shape (host or device).
void copy_section(gdap_array* to, const gdap_array* from, int64_t bytes) {
  void *dst = nullptr, *src = nullptr;
  check(gdap_array_data(&dst, to));
  check(gdap_array_data(&src, from));
  if (cudaMemcpy(dst, src, static_cast<size_t>(bytes), cudaMemcpyDefault) != cudaSuccess) {
    throw Error(GDAP_ERR_DEVICE, "cudaMemcpy of a demo section failed");
  }
}
#endif

// Every element of a host section holds the value of its global index.
int64_t count_wrong(const gdap_array* array) {
  int64_t shape[2];
  void* data = nullptr;
  check(gdap_array_shape(shape, array));
  check(gdap_array_data(&data, array));
  int64_t wrong = 0;
  for (int64_t i = 0; i < shape[0]; ++i) {
    for (int64_t j = 0; j < shape[1]; ++j) {
      const int64_t local[2] = {i, j};
      int64_t global[2];
      check(gdap_array_local_to_global(global, array, local));
      wrong += static_cast<const double*>(data)[i * shape[1] + j] != expected_value(global[0], global[1]);
    }
  }
  return wrong;
}

// Step 5 (each rank, collectively): global views of both layouts, this rank's plan, and the move
// itself, on GPU `rank % gpus` when there are GPUs; then the received section is checked.
void redistribute_rank(Demo& d, int64_t rank) {
  Section& s = d.sections[static_cast<size_t>(rank)];
  gdap_comm* comm = d.comms[static_cast<size_t>(rank)];
  s.cyclic_dims = block_cyclic_dims(d.shape, rank);
  gdap_map *from = nullptr, *to = nullptr;
  check(gdap_map_create_collective(&from, comm, 2, s.dims.data()));
  MapPtr from_owner(from, gdap_map_destroy);
  check(gdap_map_create_collective(&to, comm, 2, s.cyclic_dims.data()));
  MapPtr to_owner(to, gdap_map_destroy);
  gdap_plan* plan = nullptr;
  check(gdap_plan_create(&plan, from, to, {GDAP_DTYPE_FLOAT, 64, 1}, rank));
  std::unique_ptr<gdap_plan, gdap_status (*)(gdap_plan*)> plan_owner(plan, gdap_plan_destroy);
  check(gdap_plan_stats_get(&s.moved, plan));
  ArrayPtr result = new_section(s.cyclic_dims, {GDAP_DEVICE_CPU, 0});
  if (d.gpus == 0) {
    check(gdap_redistribute(comm, plan, s.array.get(), result.get()));
  } else {
#ifdef GDAP_HAVE_CUDA
    int64_t result_shape[2];
    check(gdap_array_shape(result_shape, result.get()));
    const int64_t result_bytes = result_shape[0] * result_shape[1] * static_cast<int64_t>(sizeof(double));
    const gdap_device gpu{GDAP_DEVICE_CUDA, static_cast<int32_t>(rank % d.gpus)};
    cudaSetDevice(gpu.id);
    ArrayPtr src = new_section(s.dims, gpu), dst = new_section(s.cyclic_dims, gpu);
    copy_section(src.get(), s.array.get(), s.bytes);
    check(gdap_redistribute(comm, plan, src.get(), dst.get()));
    if (cudaDeviceSynchronize() != cudaSuccess) throw Error(GDAP_ERR_DEVICE, "the redistribution kernel failed");
    check(gdap_comm_barrier(comm));  // peers' kernels may still write into dst until every rank is here
    copy_section(result.get(), dst.get(), result_bytes);
    check(gdap_comm_barrier(comm));  // and nobody frees a section a peer's kernel may still use
#endif
  }
  s.wrong_after = count_wrong(result.get());
}

void run_redistribution(Demo& d) {
  d.comms.assign(static_cast<size_t>(d.nranks), nullptr);
  check(gdap_comm_create_group(d.comms.data(), d.nranks));
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < d.nranks; ++r) {
    threads.emplace_back([&d, r] {
      try {
        redistribute_rank(d, r);
      } catch (const std::exception& e) {
        d.sections[static_cast<size_t>(r)].error = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (gdap_comm* c : d.comms) gdap_comm_destroy(c);
  for (size_t r = 0; r < d.sections.size(); ++r) {
    if (!d.sections[r].error.empty()) throw Error(GDAP_ERR_INTERNAL, fmt::format("rank {}: {}", r, d.sections[r].error));
  }
}

int64_t print_redistribution(const Demo& d) {
  int64_t wrong = 0;
  for (size_t r = 0; r < d.sections.size(); ++r) {
    const Section& s = d.sections[r];
    fmt::print("  rank {:>3}: sent {} messages ({} bytes), received {} ({} bytes), kept {} bytes; {} wrong\n", r,
               s.moved.send_messages, s.moved.send_bytes, s.moved.recv_messages, s.moved.recv_bytes, s.moved.local_bytes,
               s.wrong_after);
    wrong += s.wrong_after;
  }
  return wrong;
}

int gpu_count() {
#ifdef GDAP_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
#else
  return 0;
#endif
}

void print_sharing(const Demo& d) {
  int64_t bytes = 0, kept = 0;
  for (size_t r = 0; r < d.sections.size(); ++r) {
    const Section& s = d.sections[r];
    const bool same = s.exported == s.reimported;
    fmt::print("  rank {:>3}: {:>10} bytes at {} -> DLPack -> {} ({})\n", r, s.bytes, s.exported, s.reimported,
               same ? "same memory" : "MOVED");
    bytes += s.bytes;
    kept += same ? 1 : 0;
  }
  fmt::print("  {} of {} ranks kept their memory: {} bytes shared, none copied\n\n", kept, d.nranks, bytes);
}

bool all_zero_copy(const Demo& d) {
  for (const Section& s : d.sections) {
    if (s.exported != s.reimported) return false;
  }
  return true;
}

// "RxC" with two positive integers, e.g. "2x2"; false for anything else.
bool parse_grid(const std::string& text, int64_t& rows, int64_t& cols) {
  const char* end = text.data() + text.size();
  auto [x, e1] = std::from_chars(text.data(), end, rows);
  if (e1 != std::errc() || x == end || *x != 'x') return false;
  auto [done, e2] = std::from_chars(x + 1, end, cols);
  return e2 == std::errc() && done == end && rows > 0 && cols > 0;
}

std::string check_options(const Shape& o) {
  if (o.rows < 1 || o.cols < 1) return "--rows and --cols must be at least 1";
  if (o.rows > kMaxElements / o.cols) return fmt::format("the demo array is limited to {} elements", kMaxElements);
  if (o.grid_rows < 1 || o.grid_cols < 1 || o.grid_rows > kMaxRanks / o.grid_cols) {
    return fmt::format("--grid needs at least 1 x 1 and at most {} ranks", kMaxRanks);
  }
  return "";
}

int run_demo(Demo& d) {
  const Shape& o = d.shape;
  fmt::print("gdap {} demo: a {} x {} float64 array, block x block over a {} x {} process grid;\n"
             "{} ranks as threads of one process, host memory\n\n",
             gdap_version_string(), o.rows, o.cols, o.grid_rows, o.grid_cols, d.nranks);
  describe_layout(d);
  run_ranks(d);
  build_map(d);
  fmt::print("step 1  each rank allocated its section and filled it (value = row * 1000 + column):\n{}\n",
             table(summarize(d.map.get())));
  fmt::print("step 2  each rank exported its section as DLPack and imported it again:\n");
  print_sharing(d);
  fmt::print("step 3  the global map (every rank's dim_data, checked together) says who owns what:\n{}\n",
             picture(d.map.get()));
  const int64_t wrong = check_every_element(d);
  fmt::print("step 4  checked all {} elements through the map and the owners' strides: {} wrong\n\n",
             o.rows * o.cols, wrong);
  d.gpus = gpu_count();
  run_redistribution(d);
  fmt::print("step 5  the ranks redistributed the array to 2-d block-cyclic ({}), through an in-process group:\n",
             d.gpus > 0 ? fmt::format("on {} GPU(s), peer-copy kernels", d.gpus) : "host memory, memcpy");
  const int64_t wrong_after = print_redistribution(d);
  fmt::print("  checked every element each rank received: {} wrong\n\n", wrong_after);
  const bool ok = wrong == 0 && wrong_after == 0 && all_zero_copy(d);
  fmt::print("demo: {}\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int demo(const DemoOptions& options) {
  Shape shape{options.rows, options.cols, 0, 0};
  if (!parse_grid(options.grid, shape.grid_rows, shape.grid_cols)) {
    fmt::print(stderr, "gdap demo: --grid must be two positive integers like 2x2, not '{}'\n", options.grid);
    return 2;
  }
  if (const std::string problem = check_options(shape); !problem.empty()) {
    fmt::print(stderr, "gdap demo: {}\n", problem);
    return 2;
  }
  Demo d;
  d.shape = shape;
  d.nranks = shape.grid_rows * shape.grid_cols;
  d.sections.resize(static_cast<size_t>(d.nranks));
  return run_command("demo", [&] { return run_demo(d); });
}

}  // namespace gdap::cli
