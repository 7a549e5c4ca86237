// Reductions of device sections over NCCL (label gpu): one rank and communicator per GPU present
// (ncclCommInitAll). gdap_reduce_axes over every subset of the axes of a 37 x 23 array in rows
// of blocks, block-cyclic rows or cyclic columns, into replicated, block and 0-d results, for sum,
// prod, min, max and mean; gdap_reduce_scatter of replicated partial sections into row blocks;
// min and max of float64 and float32 with NaN on no rank, each rank in turn or every rank; float
// sums that must lose no small addends (1e8 + ones, a tall float32 array over its rows).
// Otherwise values are small integers, so every reduction is exact and each result element is compared
// with a serial reference computed here; host sections on NCCL are refused on every rank.
#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include "support/dims.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr int64_t kRows = 37, kCols = 23;
const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

double value(gdap_reduce_op op, int64_t i, int64_t j, int64_t rank = 0) {
  if (op == GDAP_REDUCE_PROD) return 1.0 + static_cast<double>((i + j + rank) % 2);  // products stay exact
  return static_cast<double>((i * 7 + j * 3 + rank * 5) % 11 - 5);
}

double combine(gdap_reduce_op op, double a, double b) {
  switch (op) {
    case GDAP_REDUCE_PROD: return a * b;
    case GDAP_REDUCE_MIN: return std::min(a, b);
    case GDAP_REDUCE_MAX: return std::max(a, b);
    default: return a + b;
  }
}

gdap_dim block(int64_t size, int64_t P, int64_t c) { return gdap_test::block(size, P, c, size * c / P, size * (c + 1) / P); }
gdap_dim cyclic(int64_t size, int64_t P, int64_t c, int64_t bs) { return gdap_test::cyclic(size, P, c, c * bs, bs); }
gdap_dim whole(int64_t size) { return gdap_test::undistributed(size); }

// A replicated axis (gdap_map_create_replicated's layout): unstructured over the P ranks, every
// rank holding every index. An undistributed ('n') axis alone would make a grid of one rank.
// 0 .. size-1, kept for the life of the thread (a dimension retains its indices).
const std::vector<int64_t>& iota(int64_t size) {
  static thread_local std::map<int64_t, std::vector<int64_t>> kept;
  std::vector<int64_t>& all = kept[size];
  if (all.empty()) {
    for (int64_t i = 0; i < size; ++i) all.push_back(i);
  }
  return all;
}
gdap_dim replicated(int64_t size, int64_t P, int64_t r) {
  gdap_dim d = GDAP_DIM_INIT;
  const std::vector<int64_t>& all = iota(size);
  EXPECT_EQ(gdap_dim_set_unstructured(&d, size, P, r, all.data(), size, 0), GDAP_SUCCESS) << gdap_last_error();
  return d;
}

// The global indices a dimension holds, in local order.
std::vector<int64_t> held(const gdap_dim& d) {
  std::vector<int64_t> out;
  if (d.dist_type == GDAP_DIST_BLOCK) {
    for (int64_t g = d.start; g < d.stop; ++g) out.push_back(g);
  } else if (d.dist_type == GDAP_DIST_CYCLIC) {
    const int64_t step = d.block_size * d.proc_grid_size;
    for (int64_t b = d.start; b < d.size; b += step) {
      for (int64_t g = b; g < std::min(d.size, b + d.block_size); ++g) out.push_back(g);
    }
  } else if (d.dist_type == GDAP_DIST_UNSTRUCTURED) {
    out.assign(d.indices, d.indices + d.num_indices);
  } else {
    for (int64_t g = 0; g < d.size; ++g) out.push_back(g);
  }
  return out;
}

// A device section of `dims` holding f(global indices) (float64, or float32 from the same
// doubles), or reading it back as doubles.
struct DeviceSection {
  gdap_array* array = nullptr;
  std::vector<std::vector<int64_t>> at;  // per dimension, the global indices in local order
  gdap_dtype dtype;
  DeviceSection(const std::vector<gdap_dim>& dims, int gpu, const std::function<double(const std::vector<int64_t>&)>& f,
                gdap_dtype t = kF64)
      : dtype(t) {
    EXPECT_EQ(gdap_array_create(&array, dtype, gdap_device{GDAP_DEVICE_CUDA, gpu}, dims.data(), static_cast<int64_t>(dims.size())),
              GDAP_SUCCESS)
        << gdap_last_error();
    for (const gdap_dim& d : dims) at.push_back(held(d));
    std::vector<double> host;
    each([&](const std::vector<int64_t>& g) { host.push_back(f(g)); });
    if (host.empty()) return;  // an empty section has no memory (data NULL): nothing to copy
    if (dtype.bits == 64) {
      cudaMemcpy(data(), host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
      return;
    }
    const std::vector<float> narrow(host.begin(), host.end());
    cudaMemcpy(data(), narrow.data(), narrow.size() * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~DeviceSection() { gdap_array_destroy(array); }
  void* data() const {
    void* p = nullptr;
    gdap_array_data(&p, array);
    return p;
  }
  // Calls f(global index) for each local element in C order.
  void each(const std::function<void(const std::vector<int64_t>&)>& f) const {
    std::vector<size_t> k(at.size(), 0);
    for (const auto& a : at) {
      if (a.empty()) return;
    }
    for (;;) {
      std::vector<int64_t> g;
      for (size_t i = 0; i < at.size(); ++i) g.push_back(at[i][k[i]]);
      f(g);
      size_t i = at.size();
      while (i > 0 && k[i - 1] + 1 == at[i - 1].size()) k[--i] = 0;
      if (i == 0) return;
      ++k[i - 1];
    }
  }
  std::vector<double> values() const {
    int64_t n = 1;
    for (const auto& a : at) n *= static_cast<int64_t>(a.size());
    std::vector<double> host(static_cast<size_t>(n));
    if (dtype.bits == 64) {
      cudaMemcpy(host.data(), data(), host.size() * sizeof(double), cudaMemcpyDeviceToHost);
      return host;
    }
    std::vector<float> narrow(host.size());
    cudaMemcpy(narrow.data(), data(), narrow.size() * sizeof(float), cudaMemcpyDeviceToHost);
    return {narrow.begin(), narrow.end()};
  }
};

struct NcclRanks {
  int n = device_count();
  std::vector<ncclComm_t> nccl;
  NcclRanks() : nccl(static_cast<size_t>(n)) { EXPECT_EQ(ncclCommInitAll(nccl.data(), n, nullptr), ncclSuccess); }
  ~NcclRanks() {
    for (ncclComm_t c : nccl) ncclCommDestroy(c);
  }
  // f(comm, rank) on one thread per GPU, with a stream of its own.
  void run(const std::function<void(gdap_comm*, int)>& f) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        cudaSetDevice(r);
        cudaStream_t stream = nullptr;
        cudaStreamCreate(&stream);
        gdap_comm* comm = nullptr;
        ASSERT_EQ(gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream), GDAP_SUCCESS) << gdap_last_error();
        f(comm, r);
        cudaStreamSynchronize(stream);
        gdap_comm_destroy(comm);
        cudaStreamDestroy(stream);
      });
    }
    for (auto& t : threads) t.join();
  }
};

using Source = std::function<std::vector<gdap_dim>(int64_t rank, int64_t P)>;

TEST(ReduceGpu, AxesOfEveryLayoutOpAndResult) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n;
  const std::vector<std::pair<std::string, Source>> sources = {
      {"row blocks", [](int64_t r, int64_t n) { return std::vector<gdap_dim>{block(kRows, n, r), whole(kCols)}; }},
      {"block-cyclic rows", [](int64_t r, int64_t n) { return std::vector<gdap_dim>{cyclic(kRows, n, r, 4), whole(kCols)}; }},
      {"cyclic columns", [](int64_t r, int64_t n) { return std::vector<gdap_dim>{whole(kRows), cyclic(kCols, n, r, 1)}; }},
  };
  const gdap_reduce_op ops[] = {GDAP_REDUCE_SUM, GDAP_REDUCE_PROD, GDAP_REDUCE_MIN, GDAP_REDUCE_MAX, GDAP_REDUCE_MEAN};
  // Axes reduced -> the result's dimensions for rank r (replicated or distributed).
  struct Result {
    std::string name;
    std::vector<int64_t> axes;  // empty: NULL, every axis
    std::function<std::vector<gdap_dim>(int64_t, int64_t)> dims;
  };
  const std::vector<Result> results = {
      {"over rows, replicated", {0}, [](int64_t r, int64_t n) { return std::vector<gdap_dim>{replicated(kCols, n, r)}; }},
      {"over rows, in blocks", {0}, [](int64_t r, int64_t n) { return std::vector<gdap_dim>{block(kCols, n, r)}; }},
      {"over columns, cyclic", {-1}, [](int64_t r, int64_t n) { return std::vector<gdap_dim>{cyclic(kRows, n, r, 2)}; }},
      {"over both, 0-d", {}, [](int64_t, int64_t) { return std::vector<gdap_dim>{}; }},
  };
  for (const auto& [source_name, source] : sources) {
    for (const gdap_reduce_op op : ops) {
      for (const Result& result : results) {
        const std::string what = source_name + ", op " + std::to_string(op) + ", " + result.name;
        std::vector<int64_t> wrong(static_cast<size_t>(P), -1);
        ranks.run([&](gdap_comm* comm, int r) {
          const DeviceSection in(source(r, P), r, [&](const std::vector<int64_t>& g) { return value(op, g[0], g[1]); });
          const DeviceSection out(result.dims(r, P), r, [](const std::vector<int64_t>&) { return -99.0; });
          const gdap_status s = gdap_reduce_axes(comm, in.array, out.array, op, result.axes.empty() ? nullptr : result.axes.data(),
                                                 static_cast<int64_t>(result.axes.size()));
          ASSERT_EQ(s, GDAP_SUCCESS) << what << ": " << gdap_last_error();
          cudaStreamSynchronize(nullptr);
          cudaDeviceSynchronize();
          const std::vector<double> got = out.values();
          int64_t bad = 0;
          size_t k = 0;
          if (!out.at.empty()) out.each([&](const std::vector<int64_t>& g) {
            const gdap_reduce_op engine = op == GDAP_REDUCE_MEAN ? GDAP_REDUCE_SUM : op;
            double want = engine == GDAP_REDUCE_PROD ? 1 : engine == GDAP_REDUCE_MIN ? 1e300 : engine == GDAP_REDUCE_MAX ? -1e300 : 0;
            int64_t n = 0;
            for (int64_t i = 0; i < kRows; ++i) {
              for (int64_t j = 0; j < kCols; ++j) {
                const bool kept_row = result.axes == std::vector<int64_t>{-1}, kept_col = result.axes == std::vector<int64_t>{0};
                if ((kept_row && i != g[0]) || (kept_col && j != g[0])) continue;
                want = combine(engine, want, value(op, i, j));
                ++n;
              }
            }
            if (op == GDAP_REDUCE_MEAN) want /= static_cast<double>(n);
            bad += got[k++] != want;
          });
          if (out.at.empty()) {  // 0-d: one element, every element of the array reduced
            double want = op == GDAP_REDUCE_PROD ? 1 : op == GDAP_REDUCE_MIN ? 1e300 : op == GDAP_REDUCE_MAX ? -1e300 : 0;
            const gdap_reduce_op engine = op == GDAP_REDUCE_MEAN ? GDAP_REDUCE_SUM : op;
            for (int64_t i = 0; i < kRows; ++i) {
              for (int64_t j = 0; j < kCols; ++j) want = combine(engine, want, value(op, i, j));
            }
            if (op == GDAP_REDUCE_MEAN) want /= static_cast<double>(kRows * kCols);
            bad = got.size() == 1 && got[0] == want ? 0 : 1;
          }
          wrong[static_cast<size_t>(r)] = bad;
        });
        for (int64_t r = 0; r < P; ++r) EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << what << ", rank " << r;
      }
    }
  }
}

// Large enough that few kept elements are each reduced by many threads or blocks (slices, then a
// second pass), over a last axis the kernels walk incrementally: cyclic (on one GPU one run: an
// affine axis) or unstructured in descending order (a table per axis).
TEST(ReduceGpu, FewKeptElementsOfALargeArray) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n;
  const std::vector<int64_t> shape{3, 1201, 997};
  std::vector<std::vector<int64_t>> descending(static_cast<size_t>(P));  // rank r: g = r mod P, from the top
  for (int64_t g = shape[2] - 1; g >= 0; --g) descending[static_cast<size_t>(g % P)].push_back(g);
  const auto unstructured = [&](int64_t r) {
    gdap_dim d = GDAP_DIM_INIT;
    const auto& mine = descending[static_cast<size_t>(r)];
    gdap_dim_set_unstructured(&d, shape[2], P, r, mine.data(), static_cast<int64_t>(mine.size()), 1);
    return d;
  };
  const std::vector<std::function<std::vector<gdap_dim>(int64_t)>> sources = {
      [&](int64_t r) {
        return std::vector<gdap_dim>{whole(shape[0]), whole(shape[1]), cyclic(shape[2], P, r, 7)};
      },
      [&](int64_t r) { return std::vector<gdap_dim>{whole(shape[0]), whole(shape[1]), unstructured(r)}; },
  };
  const auto at = [](const std::vector<int64_t>& g) {
    return static_cast<double>((g[0] * 5 + g[1] * 7 + g[2] * 3) % 13 - 6);
  };
  const std::vector<std::vector<int64_t>> axes_cases = {{}, {1, 2}, {-1}, {0, 1}};
  for (size_t which = 0; which < sources.size(); ++which) {
    for (const gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_MIN, GDAP_REDUCE_MAX, GDAP_REDUCE_MEAN}) {
      for (const std::vector<int64_t>& axes : axes_cases) {
        // The serial reference, indexed by the kept global indices in C order.
        std::vector<int64_t> kept_shape;
        std::vector<bool> reduced(3, axes.empty());
        for (int64_t a : axes) reduced[static_cast<size_t>((a + 3) % 3)] = true;
        for (size_t a = 0; a < 3; ++a) {
          if (!reduced[a]) kept_shape.push_back(shape[a]);
        }
        int64_t nkept = 1;
        for (int64_t n : kept_shape) nkept *= n;
        const gdap_reduce_op engine = op == GDAP_REDUCE_MEAN ? GDAP_REDUCE_SUM : op;
        const double none = engine == GDAP_REDUCE_MIN ? 1e300 : engine == GDAP_REDUCE_MAX ? -1e300 : 0;
        std::vector<double> want(static_cast<size_t>(nkept), none);
        std::vector<int64_t> g(3);
        for (g[0] = 0; g[0] < shape[0]; ++g[0]) {
          for (g[1] = 0; g[1] < shape[1]; ++g[1]) {
            for (g[2] = 0; g[2] < shape[2]; ++g[2]) {
              int64_t flat = 0;
              for (size_t a = 0; a < 3; ++a) flat = reduced[a] ? flat : flat * shape[a] + g[a];
              want[static_cast<size_t>(flat)] = combine(engine, want[static_cast<size_t>(flat)], at(g));
            }
          }
        }
        if (op == GDAP_REDUCE_MEAN) {
          for (double& w : want) w /= static_cast<double>(shape[0] * shape[1] * shape[2] / nkept);
        }
        const std::string what = std::string(which == 0 ? "cyclic" : "unstructured") + " last axis, op " +
                                 std::to_string(op) + ", " + std::to_string(axes.size()) + " axes named";
        std::vector<int64_t> wrong(static_cast<size_t>(P), -1);
        ranks.run([&](gdap_comm* comm, int r) {
          const DeviceSection in(sources[which](r), r, at);
          std::vector<gdap_dim> out_dims;
          for (int64_t n : kept_shape) out_dims.push_back(out_dims.empty() ? replicated(n, P, r) : whole(n));
          const DeviceSection out(out_dims, r, [](const std::vector<int64_t>&) { return -99.0; });
          ASSERT_EQ(gdap_reduce_axes(comm, in.array, out.array, op, axes.empty() ? nullptr : axes.data(),
                                     static_cast<int64_t>(axes.size())),
                    GDAP_SUCCESS)
              << what << ": " << gdap_last_error();
          cudaDeviceSynchronize();
          const std::vector<double> got = out.values();
          int64_t bad = got.size() == want.size() ? 0 : 1;
          for (size_t k = 0; k < got.size() && k < want.size(); ++k) bad += got[k] != want[k];
          wrong[static_cast<size_t>(r)] = bad;
        });
        for (int64_t r = 0; r < P; ++r) EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << what << ", rank " << r;
      }
    }
  }
}

// The sums over `axis` of f on a rows x cols array in row blocks over the GPUs, into a replicated
// result, as each rank gets them.
std::vector<std::vector<double>> sums_over_axis(NcclRanks& ranks, int64_t rows, int64_t cols, int64_t axis,
                                                const std::function<double(const std::vector<int64_t>&)>& f, gdap_dtype t) {
  std::vector<std::vector<double>> got(static_cast<size_t>(ranks.n));
  ranks.run([&](gdap_comm* comm, int r) {
    const DeviceSection in({block(rows, ranks.n, r), whole(cols)}, r, f, t);
    const DeviceSection out({replicated(axis == 0 ? cols : rows, ranks.n, r)}, r, [](const std::vector<int64_t>&) { return -99.0; }, t);
    ASSERT_EQ(gdap_reduce_axes(comm, in.array, out.array, GDAP_REDUCE_SUM, &axis, 1), GDAP_SUCCESS) << gdap_last_error();
    cudaDeviceSynchronize();
    got[static_cast<size_t>(r)] = out.values();
  });
  return got;
}

// Rule (review 13 item 1.1): float sums on devices lose no small addends either. Four 1e8 among
// 39996 ones in float32 (and 1e16 in float64), in blocks over the GPUs, summed whole: a thread's
// serial loop in the dtype dropped the ones after a large value (the kernels now carry a
// sum in double, compensated for float64); and a tall float32 array summed over its rows, each column within
// two float32 ulps of its sum in double.
TEST(ReduceGpu, FloatSumsLoseNoSmallAddends) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n, n = 40000;
  const gdap_dtype f32{GDAP_DTYPE_FLOAT, 32, 1};
  for (const auto& [t, big] : {std::pair{f32, 1e8}, std::pair{kF64, 1e16}}) {
    const double exact = 4 * big + static_cast<double>(n - 4), tol = t.bits == 32 ? 1e-7 * exact : 8;
    std::vector<double> got(static_cast<size_t>(P), 0);
    ranks.run([&, t = t, big = big](gdap_comm* comm, int r) {
      const DeviceSection in({block(n, P, r)}, r, [&](const std::vector<int64_t>& g) { return g[0] % 10000 == 0 ? big : 1.0; }, t);
      const DeviceSection out({}, r, [](const std::vector<int64_t>&) { return -99.0; }, t);
      ASSERT_EQ(gdap_reduce_axes(comm, in.array, out.array, GDAP_REDUCE_SUM, nullptr, 0), GDAP_SUCCESS) << gdap_last_error();
      cudaDeviceSynchronize();
      got[static_cast<size_t>(r)] = out.values()[0];
    });
    for (int64_t r = 0; r < P; ++r) EXPECT_LE(std::abs(got[static_cast<size_t>(r)] - exact), tol) << "float" << t.bits << " rank " << r;
  }
  const int64_t rows = int64_t{1} << 20, cols = 2;
  const auto element = [](const std::vector<int64_t>& g) {  // 24 random bits (splitmix64) in [0, 1)
    uint64_t z = static_cast<uint64_t>(g[0] * 2 + g[1]) + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return static_cast<double>((z ^ (z >> 31)) >> 40) / 16777216.0;
  };
  std::vector<double> want(cols, 0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) want[static_cast<size_t>(j)] += element({i, j});
  }
  const std::vector<std::vector<double>> got = sums_over_axis(ranks, rows, cols, 0, element, f32);
  for (int64_t r = 0; r < P; ++r) {
    for (size_t j = 0; j < want.size() && j < got[static_cast<size_t>(r)].size(); ++j) {
      EXPECT_LE(std::abs(got[static_cast<size_t>(r)][j] - want[j]), 0x1p-22 * want[j]) << "column " << j << ", rank " << r;
    }
  }
}

// Random values of either sign and magnitude in [0.5, 1) with `bits` random bits (splitmix64 of
// the index and seed): an element dropped or added twice moves a sum by 0.5 or more, and sums of
// up to 2^22 of them (23 bits for float32, 40 for float64) are exact in long double.
double random_value(int64_t i, uint64_t seed, int bits) {
  uint64_t z = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15u + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  z ^= z >> 31;
  const double m = std::ldexp(static_cast<double>((z >> (64 - bits)) | (uint64_t{1} << bits)), -bits - 1);
  return (z & 1) != 0 ? -m : m;
}

// A 1-d device section holding f(global index) at `shift` elements past a cudaMalloc'ed (256-byte
// aligned) address, wrapped (gdap_array_wrap): a shift of 1 puts it off 16-byte alignment.
struct ShiftedSection {
  void* memory = nullptr;
  gdap_array* array = nullptr;
  ShiftedSection(const gdap_dim& d, int gpu, gdap_dtype t, int64_t shift, const std::function<double(int64_t)>& f) {
    const std::vector<int64_t> at = held(d);
    std::vector<double> wide;
    for (int64_t g : at) wide.push_back(f(g));
    const std::vector<float> narrow(wide.begin(), wide.end());
    const size_t es = t.bits / 8;
    EXPECT_EQ(cudaMalloc(&memory, (at.size() + static_cast<size_t>(shift)) * es), cudaSuccess);
    char* data = static_cast<char*>(memory) + shift * static_cast<int64_t>(es);
    cudaMemcpy(data, t.bits == 64 ? static_cast<const void*>(wide.data()) : narrow.data(), at.size() * es, cudaMemcpyHostToDevice);
    EXPECT_EQ(gdap_array_wrap(&array, data, t, gdap_device{GDAP_DEVICE_CUDA, gpu}, nullptr, &d, 1), GDAP_SUCCESS)
        << gdap_last_error();
  }
  ~ShiftedSection() {
    gdap_array_destroy(array);
    cudaFree(memory);
  }
};

// Each rank's exact partial sum of f over the global indices its block of n holds (long double: exact
// for random_value's sums), and the tolerance of their sum as the ranks form it: each partial rounded
// once to the dtype, then P - 1 additions in the dtype, each within half an ulp of the partials'
// summed magnitudes (allowed: P + 1 ulps of them). An element lost or doubled is off by 0.5 or more.
struct Partials {
  long double exact = 0, tolerance = 0;
  Partials(int64_t n, int64_t P, gdap_dtype t, const std::function<double(int64_t)>& f) {
    long double magnitudes = 0;
    for (int64_t r = 0; r < P; ++r) {
      long double partial = 0;
      for (int64_t g = n * r / P; g < n * (r + 1) / P; ++g) partial += f(g);
      exact += partial;
      magnitudes += partial < 0 ? -partial : partial;
    }
    tolerance = static_cast<long double>(P + 1) * magnitudes * (t.bits == 32 ? 0x1p-23L : 0x1p-52L);
  }
};

// The every-axis sum of f over a 1-d array of n elements in blocks over the GPUs, each section
// `shift` elements off alignment, as every rank gets it.
std::vector<double> sum_of_shifted(NcclRanks& ranks, int64_t n, gdap_dtype t, int64_t shift, const std::function<double(int64_t)>& f) {
  const int64_t P = ranks.n;
  std::vector<double> got(static_cast<size_t>(P), -99);
  ranks.run([&](gdap_comm* comm, int r) {
    const ShiftedSection in(block(n, P, r), r, t, shift, f);
    const DeviceSection out({}, r, [](const std::vector<int64_t>&) { return -99.0; }, t);
    ASSERT_EQ(gdap_reduce_axes(comm, in.array, out.array, GDAP_REDUCE_SUM, nullptr, 0), GDAP_SUCCESS) << gdap_last_error();
    cudaDeviceSynchronize();
    got[static_cast<size_t>(r)] = out.values()[0];
  });
  return got;
}

// Rule (session 14): a contiguous section is read 16 bytes at a time (reduce_kernels.cu, reduce_run).
// Random float32 and float64 of sizes that are no multiple of 4 per rank, at aligned and unaligned
// addresses, with one slice, a few (a thread per kept element combines them) or many (a block
// does): every rank's sum within the rounding of the ranks' partials of the exact sum.
TEST(ReduceGpu, ContiguousSumsMatchAnExactReference) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n;
  const gdap_dtype f32{GDAP_DTYPE_FLOAT, 32, 1};
  for (const gdap_dtype t : {f32, kF64}) {
    const auto f = [bits = t.bits == 32 ? 23 : 40](int64_t g) { return random_value(g, 7, bits); };
    for (const int64_t per_rank : {int64_t{1001}, int64_t{300007}, (int64_t{1} << 20) + 3}) {
      const int64_t n = per_rank * P + (P > 1 ? 1 : 0);
      const Partials want(n, P, t, f);
      for (const int64_t shift : {0, 1, 3}) {
        const std::vector<double> got = sum_of_shifted(ranks, n, t, shift, f);
        for (int64_t r = 0; r < P; ++r) {
          EXPECT_LE(std::abs(static_cast<long double>(got[static_cast<size_t>(r)]) - want.exact), want.tolerance)
              << "float" << t.bits << ", " << n << " elements, shifted by " << shift << ", rank " << r;
        }
      }
    }
  }
  // Rows over their last axis: each row a run of its own, 4101 elements (unaligned from the second
  // row on) or 4100 (aligned), rows in blocks.
  for (const gdap_dtype t : {f32, kF64}) {
    for (const int64_t cols : {int64_t{4101}, int64_t{4100}}) {
      const int64_t rows = 5 * P + 2;
      const auto f = [cols, bits = t.bits == 32 ? 23 : 40](const std::vector<int64_t>& g) {
        return random_value(g[0] * cols + g[1], 11, bits);
      };
      const std::vector<std::vector<double>> got = sums_over_axis(ranks, rows, cols, 1, f, t);
      for (int64_t i = 0; i < rows; ++i) {
        long double exact = 0;  // one rank holds the row: its sum rounded once
        for (int64_t j = 0; j < cols; ++j) exact += f({i, j});
        const double want = t.bits == 32 ? static_cast<double>(static_cast<float>(exact)) : static_cast<double>(exact);
        for (int64_t r = 0; r < P; ++r) {
          ASSERT_EQ(got[static_cast<size_t>(r)].size(), static_cast<size_t>(rows));
          EXPECT_EQ(got[static_cast<size_t>(r)][static_cast<size_t>(i)], want)
              << "float" << t.bits << ", " << cols << " columns, row " << i << ", rank " << r;
        }
      }
    }
  }
}

// A NaN or an infinity anywhere in a contiguous section (in a 16-byte group or past the last whole
// one, on any rank) makes the sum NaN or infinite on every rank, as NumPy's.
TEST(ReduceGpu, ContiguousSumsPropagateNanAndInfinity) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n, n = 100003 * P + 2;
  const double nan = std::numeric_limits<double>::quiet_NaN(), infinity = std::numeric_limits<double>::infinity();
  const gdap_dtype f32{GDAP_DTYPE_FLOAT, 32, 1};
  struct Case {
    std::string name;
    std::vector<std::pair<int64_t, double>> put;  // global index -> value
    bool want_nan;
  };
  const std::vector<Case> cases = {
      {"NaN in a group", {{n / 2, nan}}, true},
      {"NaN last", {{n - 1, nan}}, true},
      {"+inf first", {{0, infinity}}, false},
      {"-inf last", {{n - 1, -infinity}}, false},
      {"+inf and -inf", {{5, infinity}, {n - 1, -infinity}}, true},
  };
  for (const gdap_dtype t : {f32, kF64}) {
    for (const Case& c : cases) {
      const auto f = [&](int64_t g) {
        for (const auto& [at, v] : c.put) {
          if (at == g) return v;
        }
        return random_value(g, 3, 20);
      };
      for (const int64_t shift : {0, 1}) {
        const std::vector<double> got = sum_of_shifted(ranks, n, t, shift, f);
        for (int64_t r = 0; r < P; ++r) {
          const double v = got[static_cast<size_t>(r)];
          const std::string what = "float" + std::to_string(t.bits) + ", " + c.name + ", shift " + std::to_string(shift);
          if (c.want_nan) {
            EXPECT_TRUE(std::isnan(v)) << what << ", rank " << r << ": " << v;
          } else {
            EXPECT_EQ(v, c.put[0].second) << what << ", rank " << r;
          }
        }
      }
    }
  }
}

// The same sum twice, and at an unaligned address, gives the same bits: the order of additions
// follows the shapes only. Values spread over 2^-20 .. 2^20, so that the order would show.
TEST(ReduceGpu, ContiguousSumsAreReproducible) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n, n = ((int64_t{1} << 21) + 5) * P + 1;
  const gdap_dtype f32{GDAP_DTYPE_FLOAT, 32, 1};
  const auto f = [](int64_t g) { return std::ldexp(random_value(g, 5, 52), static_cast<int>(g * 7919 % 41) - 20); };
  for (const gdap_dtype t : {f32, kF64}) {
    const std::vector<double> first = sum_of_shifted(ranks, n, t, 0, f), again = sum_of_shifted(ranks, n, t, 0, f),
                              shifted = sum_of_shifted(ranks, n, t, 1, f);
    for (int64_t r = 0; r < P; ++r) {
      const auto k = static_cast<size_t>(r);
      EXPECT_EQ(std::memcmp(&first[k], &again[k], sizeof(double)), 0) << "float" << t.bits << " rank " << r << ": " << first[k] << " then " << again[k];
      EXPECT_EQ(std::memcmp(&first[k], &shifted[k], sizeof(double)), 0) << "float" << t.bits << " rank " << r << ": " << first[k] << " shifted " << shifted[k];
      EXPECT_EQ(std::memcmp(&first[k], &first[0], sizeof(double)), 0) << "float" << t.bits << ": rank " << r << " differs from rank 0";
    }
  }
}

// Rule (session 14): a rank that holds none of the rows (an empty block) takes part in sums and
// maxima over either axis or both; before, a rank with no kept element (over the columns) divided
// by zero on the host while choosing its slices (SIGFPE). 9 x 70 (more than 64 reduced: blocks).
TEST(ReduceGpu, RanksHoldingNoRowsTakePart) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n, rows = 9, cols = 70;
  if (P < 2) GTEST_SKIP() << "needs 2 GPUs (rank 0 holds no rows), this machine has " << P;
  const auto rows_of = [&](int64_t r) {  // rank 0: none; the others a block each
    return r == 0 ? gdap_test::block(rows, P, 0, 0, 0)
                  : gdap_test::block(rows, P, r, rows * (r - 1) / (P - 1), rows * r / (P - 1));
  };
  for (const gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_MAX}) {
    for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{}}) {
      const int64_t nout = axes.empty() ? 1 : axes[0] == 0 ? cols : rows;
      std::vector<double> want(static_cast<size_t>(nout), op == GDAP_REDUCE_SUM ? 0 : -1e300);
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          double& w = want[static_cast<size_t>(axes.empty() ? 0 : axes[0] == 0 ? j : i)];
          w = combine(op, w, value(op, i, j));
        }
      }
      std::vector<int64_t> wrong(static_cast<size_t>(P), -1);
      ranks.run([&](gdap_comm* comm, int r) {
        const DeviceSection in({rows_of(r), whole(cols)}, r, [&](const std::vector<int64_t>& g) { return value(op, g[0], g[1]); });
        std::vector<gdap_dim> out_dims;
        if (!axes.empty()) out_dims.push_back(replicated(nout, P, r));
        const DeviceSection out(out_dims, r, [](const std::vector<int64_t>&) { return -99.0; });
        ASSERT_EQ(gdap_reduce_axes(comm, in.array, out.array, op, axes.empty() ? nullptr : axes.data(),
                                   static_cast<int64_t>(axes.size())),
                  GDAP_SUCCESS)
            << gdap_last_error();
        cudaDeviceSynchronize();
        const std::vector<double> got = out.values();
        int64_t bad = got.size() == want.size() ? 0 : 1;
        for (size_t k = 0; k < got.size() && k < want.size(); ++k) bad += got[k] != want[k];
        wrong[static_cast<size_t>(r)] = bad;
      });
      for (int64_t r = 0; r < P; ++r) {
        EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << "op " << op << ", " << axes.size() << " axes named, rank " << r;
      }
    }
  }
}

TEST(ReduceGpu, ScatterOfReplicatedPartialSections) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n;
  // Rows in blocks or block-cyclic: each element has one owner, so the ranks reduce-scatter a
  // buffer of one segment per rank (ncclReduceScatter; reduce_buffer.hpp).
  for (const bool blocks : {true, false}) {
    for (const gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_MAX}) {
      std::vector<int64_t> wrong(static_cast<size_t>(P), -1);
      ranks.run([&](gdap_comm* comm, int r) {
        // Every rank holds the whole array with values of its own (partial sums).
        const DeviceSection in({replicated(kRows, P, r), whole(kCols)}, r,
                               [&](const std::vector<int64_t>& g) { return value(op, g[0], g[1], r); });
        const gdap_dim rows = blocks ? block(kRows, P, r) : cyclic(kRows, P, r, 3);
        const DeviceSection out({rows, whole(kCols)}, r, [](const std::vector<int64_t>&) { return -99.0; });
        ASSERT_EQ(gdap_reduce_scatter(comm, in.array, out.array, op), GDAP_SUCCESS) << gdap_last_error();
        cudaDeviceSynchronize();
        const std::vector<double> got = out.values();
        int64_t bad = 0;
        size_t k = 0;
        out.each([&](const std::vector<int64_t>& g) {
          double want = value(op, g[0], g[1], 0);
          for (int64_t q = 1; q < P; ++q) want = combine(op, want, value(op, g[0], g[1], q));
          bad += got[k++] != want;
        });
        wrong[static_cast<size_t>(r)] = bad;
      });
      for (int64_t r = 0; r < P; ++r) {
        EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << (blocks ? "blocks" : "block-cyclic") << ", op " << op << ", rank " << r;
      }
    }
  }
}

// The reduction buffer stays on the communicator: it grows for a larger call, and a call on
// another stream (gdap_comm_set_stream) waits for the last use on the previous one.
TEST(ReduceGpu, KeptBufferFollowsSizesAndStreams) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n;
  std::vector<int64_t> wrong(static_cast<size_t>(P), -1);
  ranks.run([&](gdap_comm* comm, int r) {
    cudaStream_t other = nullptr;
    cudaStreamCreate(&other);
    int64_t bad = 0;
    // Column sums of rows x kCols, replicated: small, larger (the buffer grows), small again.
    for (const int64_t rows : {int64_t{8}, int64_t{4000}, int64_t{8}}) {
      const DeviceSection in({block(rows, P, r), whole(kCols)}, r,
                             [](const std::vector<int64_t>& g) { return value(GDAP_REDUCE_SUM, g[0], g[1]); });
      const DeviceSection out({replicated(kCols, P, r)}, r, [](const std::vector<int64_t>&) { return -99.0; });
      const int64_t axis[1] = {0};
      ASSERT_EQ(gdap_reduce_axes(comm, in.array, out.array, GDAP_REDUCE_SUM, axis, 1), GDAP_SUCCESS) << gdap_last_error();
      ASSERT_EQ(gdap_comm_set_stream(comm, rows == 4000 ? nullptr : other), GDAP_SUCCESS);
      cudaDeviceSynchronize();
      const std::vector<double> got = out.values();
      for (int64_t j = 0; j < kCols; ++j) {
        double want = 0;
        for (int64_t i = 0; i < rows; ++i) want += value(GDAP_REDUCE_SUM, i, j);
        bad += got[static_cast<size_t>(j)] != want;
      }
    }
    wrong[static_cast<size_t>(r)] = bad;
    gdap_comm_set_stream(comm, nullptr);  // off `other` before it goes
    cudaStreamDestroy(other);
  });
  for (int64_t r = 0; r < P; ++r) EXPECT_EQ(wrong[static_cast<size_t>(r)], 0) << "rank " << r;
}

// Who holds NaN in the test below: no rank, every element of every rank, or one rank (>= 0).
constexpr int64_t kNoNan = -2, kEveryElement = -1;

// Small integers with infinities and zeros of both signs among them, for min and max.
double signed_value(int64_t i, int64_t j, int64_t rank) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t k = (i * 7 + j * 3 + rank * 5) % 13;
  if (k == 10) return rank % 2 ? -0.0 : 0.0;
  if (k == 11) return rank == 0 ? inf : 1.0;
  if (k == 12) return rank % 2 ? -inf : -2.0;
  return static_cast<double>(k - 5);
}

// NumPy's np.minimum/np.maximum over the ranks' values (a NaN wins).
double nan_combine(gdap_reduce_op op, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return combine(op, a, b);
}

// Elements of `got` (the result section's, read back) that differ from want(global index): a NaN
// where it wants one, the value otherwise (-0.0 == +0.0).
int64_t differences(const DeviceSection& out, const std::function<double(const std::vector<int64_t>&)>& want) {
  const std::vector<double> got = out.values();
  int64_t bad = 0;
  size_t k = 0;
  out.each([&](const std::vector<int64_t>& g) {
    const double w = want(g);
    bad += std::isnan(w) ? !std::isnan(got[k]) : got[k] != w;
    ++k;
  });
  return bad;
}

// Rule (NumPy's np.minimum/np.maximum): min and max propagate NaN, whichever rank holds it. NCCL's
// own float min and max (fmin/fmax) drop a NaN; gdap reduces order keys instead when any rank's
// data hold one, and NCCL's float op (exact without NaN) when none does. Rank `holder` puts a NaN
// (-NaN on odd ranks) in its source; kEveryElement: every element on every rank is NaN; kNoNan:
// none, with infinities and zeros of both signs. For float64 and float32: a reduce-scatter of
// replicated sources into row blocks (ncclReduceScatter from the source, into the result), the
// same into cyclic rows (through the buffer both ways), and column reductions of row blocks into
// a replicated result (the kernels, then ncclAllReduce): NaN exactly where NumPy puts it.
TEST(ReduceGpu, MinAndMaxPropagateNanWhicheverRankHoldsIt) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n, n = 64 * P + 3;
  const double nan = std::nan("");
  auto nan_of = [&](int64_t r) { return r % 2 ? -nan : nan; };
  const gdap_dtype f32{GDAP_DTYPE_FLOAT, 32, 1};
  for (const gdap_dtype t : {kF64, f32}) {
    for (gdap_reduce_op op : {GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) {
      for (int64_t holder = kNoNan; holder < P; ++holder) {
        auto here = [&](int64_t r, int64_t i) { return holder == kEveryElement || (r == holder && i == 3 * holder + 1); };
        auto reduced = [&](const std::vector<int64_t>& g) {  // of the replicated sources, at g[0]
          double want = here(0, g[0]) ? nan : signed_value(g[0], 0, 0);
          for (int64_t q = 1; q < P; ++q) want = nan_combine(op, want, here(q, g[0]) ? nan : signed_value(g[0], 0, q));
          return want;
        };
        std::vector<int64_t> wrong(static_cast<size_t>(P), -1);
        ranks.run([&](gdap_comm* comm, int r) {
          int64_t bad = 0;
          const DeviceSection in({replicated(n, P, r)}, r, [&](const std::vector<int64_t>& g) {
            return here(r, g[0]) ? nan_of(r) : signed_value(g[0], 0, r);
          }, t);
          for (const gdap_dim& into : {block(n, P, r), cyclic(n, P, r, 2)}) {
            const DeviceSection out({into}, r, [](const std::vector<int64_t>&) { return -99.0; }, t);
            ASSERT_EQ(gdap_reduce_scatter(comm, in.array, out.array, op), GDAP_SUCCESS) << gdap_last_error();
            cudaDeviceSynchronize();
            bad += differences(out, reduced);
          }
          // Columns of row blocks: the NaN sits at the holder's first row, column 1.
          const DeviceSection rows({block(kRows, P, r), whole(kCols)}, r, [&](const std::vector<int64_t>& g) {
            const bool mine = holder == kEveryElement || (r == holder && g[0] == kRows * holder / P && g[1] == 1);
            return mine ? nan_of(r) : signed_value(g[0], g[1], 0);
          }, t);
          const DeviceSection cols({replicated(kCols, P, r)}, r, [](const std::vector<int64_t>&) { return -99.0; }, t);
          const int64_t axis[1] = {0};
          ASSERT_EQ(gdap_reduce_axes(comm, rows.array, cols.array, op, axis, 1), GDAP_SUCCESS) << gdap_last_error();
          cudaDeviceSynchronize();
          bad += differences(cols, [&](const std::vector<int64_t>& g) {
            const int64_t j = g[0];
            const bool has_rows = holder >= 0 && kRows * holder / P < kRows * (holder + 1) / P;
            if (holder == kEveryElement || (j == 1 && has_rows)) return nan;
            double want = signed_value(0, j, 0);
            for (int64_t i = 1; i < kRows; ++i) want = combine(op, want, signed_value(i, j, 0));
            return want;
          });
          wrong[static_cast<size_t>(r)] = bad;
        });
        for (int64_t r = 0; r < P; ++r) {
          EXPECT_EQ(wrong[static_cast<size_t>(r)], 0)
              << "float" << int{t.bits} << ", op " << op << ", NaN on rank " << holder << ", rank " << r;
        }
      }
    }
  }
}

TEST(ReduceGpu, HostSectionsOnNcclAreRefusedOnEveryRank) {
  ASSERT_GT(device_count(), 0) << "no CUDA device";
  NcclRanks ranks;
  const int64_t P = ranks.n;
  std::vector<gdap_status> got(static_cast<size_t>(P));
  std::vector<std::string> said(static_cast<size_t>(P));
  ranks.run([&](gdap_comm* comm, int r) {
    const std::vector<gdap_dim> dims{block(kRows, P, r), whole(kCols)};
    gdap_array *host = nullptr, *out = nullptr;
    gdap_array_create(&host, kF64, gdap_device{GDAP_DEVICE_CPU, 0}, dims.data(), 2);
    const gdap_dim col = whole(kCols);
    gdap_array_create(&out, kF64, gdap_device{GDAP_DEVICE_CUDA, r}, &col, 1);
    const int64_t axis = 0;
    got[static_cast<size_t>(r)] = gdap_reduce_axes(comm, host, out, GDAP_REDUCE_SUM, &axis, 1);
    said[static_cast<size_t>(r)] = gdap_last_error();
    gdap_array_destroy(out);
    gdap_array_destroy(host);
  });
  for (int64_t r = 0; r < P; ++r) {
    EXPECT_EQ(got[static_cast<size_t>(r)], GDAP_ERR_UNSUPPORTED) << said[static_cast<size_t>(r)];
    EXPECT_NE(said[static_cast<size_t>(r)].find("source is not in CUDA device memory"), std::string::npos)
        << said[static_cast<size_t>(r)];
  }
}

}  // namespace
