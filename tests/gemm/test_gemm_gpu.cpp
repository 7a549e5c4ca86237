// gdap_gemm on device sections (label gpu; skips without a GPU): cuBLAS products through the
// in-process group (1x1 on one GPU; 2x2 and 2x3 with ranks spread over the GPUs present, several
// ranks sharing one GPU when there are fewer GPUs than ranks) and through NCCL (one rank per GPU),
// element by element against the serial reference of gemm_check.hpp, with panels of 4. The values
// are exact in bfloat16 and TF32, so the tensor-core modes must give the same result.
#include "gemm/gemm_check.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <functional>
#include <thread>

namespace {

namespace gt = gemm_test;

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

void on_threads(int64_t n, const std::function<void(int64_t)>& body) {
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

gt::Layout grid(int64_t rows, int64_t cols, gt::Axis d0 = {}, gt::Axis d1 = {}) { return gt::Layout{rows, cols, d0, d1}; }

struct DeviceSection {
  gt::Section s;
  std::vector<unsigned char> host;
  void* d = nullptr;
  gdap_array* array = nullptr;
};

void make(DeviceSection& x, gt::Section s, int bits, int device, std::vector<std::string>& failures) {
  x.s = std::move(s);
  x.host = gt::to_bytes(x.s, bits);
  if (cudaMalloc(&x.d, x.host.size()) != cudaSuccess) failures.push_back("cudaMalloc failed");
  cudaMemcpy(x.d, x.host.data(), x.host.size(), cudaMemcpyHostToDevice);
  if (gdap_array_wrap(&x.array, x.d, gt::dtype_of(bits), gdap_device{GDAP_DEVICE_CUDA, device}, x.s.strides.data(), x.s.dims,
                      2) != GDAP_SUCCESS) {
    failures.push_back(std::string("gdap_array_wrap: ") + gdap_last_error());
  }
}

// One rank's case on `device` over `comm`; A must come back unchanged.
void run_rank(const gt::Case& c, int mode, gdap_comm* comm, int64_t rank, int device, std::vector<std::string>& failures) {
  cudaSetDevice(device);
  const auto da = gt::all_dims(c.a, c.m, c.k), db = gt::all_dims(c.b, c.k, c.n), dc = gt::all_dims(c.c, c.m, c.n);
  gdap_map* maps[3] = {};
  gdap_map_create(&maps[0], c.a.rows * c.a.cols, 2, da.data());
  gdap_map_create(&maps[1], c.b.rows * c.b.cols, 2, db.data());
  gdap_map_create(&maps[2], c.nranks(), 2, dc.data());
  DeviceSection a, b, cc;
  const bool nan_c = c.beta == 0;
  make(a, gt::make_section(da, rank, false, 0, gt::a_value), c.bits, device, failures);
  make(b, gt::make_section(db, rank, false, 0, gt::b_value), c.bits, device, failures);
  make(cc, gt::make_section(dc, rank, false, 0, gt::c_value, nan_c), c.bits, device, failures);
  gdap_gemm_options o = GDAP_GEMM_OPTIONS_INIT;
  o.mode = mode;
  o.panel_width = 4;
  gdap_gemm* g = nullptr;
  if (gdap_gemm_create(&g, comm, maps[0], maps[1], maps[2], gt::dtype_of(c.bits), &o) != GDAP_SUCCESS) {
    failures.push_back(c.name + ": gdap_gemm_create: " + gdap_last_error());
  } else {
    if (gdap_gemm_execute(comm, g, c.alpha, a.array, b.array, c.beta, cc.array) != GDAP_SUCCESS) {
      failures.push_back(c.name + ": gdap_gemm_execute: " + gdap_last_error());
    }
    if (cudaDeviceSynchronize() != cudaSuccess) failures.push_back(c.name + ": cudaDeviceSynchronize failed");
    cudaMemcpy(cc.host.data(), cc.d, cc.host.size(), cudaMemcpyDeviceToHost);
    for (const auto& f : gt::check_c(c, cc.s, cc.host, nan_c, true)) failures.push_back(f);
    std::vector<unsigned char> back(a.host.size());
    cudaMemcpy(back.data(), a.d, back.size(), cudaMemcpyDeviceToHost);
    for (const auto& f : gt::check_same(c.name + ": A", a.s, back, c.bits)) failures.push_back(f);
  }
  gdap_gemm_destroy(g);
  for (DeviceSection* x : {&a, &b, &cc}) {
    gdap_array_destroy(x->array);
    cudaFree(x->d);
  }
  for (gdap_map* m : maps) gdap_map_destroy(m);
}

std::vector<gt::Case> cases() {
  const gt::Axis c2{'c', 2}, c3{'c', 3}, uneven{'B', 1}, u{'u', 1};
  return {
      {"1x1 f64", 33, 17, 29, grid(1, 1), grid(1, 1), grid(1, 1), 64, 1.0, 1.0},
      {"2x2 block-cyclic 2 f32", 13, 9, 17, grid(2, 2, c2, c2), grid(2, 2, c2, c2), grid(2, 2, c2, c2), 32, 0.5, -0.5},
      {"2x3 uneven f64", 11, 14, 19, grid(2, 3, uneven, uneven), grid(2, 3, uneven, uneven), grid(2, 3, uneven, uneven), 64},
      {"2x2 A redistributed, C unstructured f64", 12, 10, 9, grid(4, 1), grid(2, 2, {}, c3), grid(2, 2, u, {}), 64, 1.0, 2.0},
      {"2x2 alpha 0 f32", 6, 6, 6, grid(2, 2), grid(2, 2), grid(2, 2), 32, 0.0, -0.5},
  };
}

TEST(GemmGpu, GroupOnTheGpusPresent) {
  const int gpus = device_count();
  if (gpus == 0) GTEST_SKIP() << "no CUDA device";
  for (const gt::Case& c : cases()) {
    for (int mode : {GDAP_GEMM_EXACT, GDAP_GEMM_TF32, GDAP_GEMM_BF16}) {
      if (mode != GDAP_GEMM_EXACT && c.bits != 32) continue;
      const int64_t n = c.nranks();
      std::vector<gdap_comm*> comms(static_cast<size_t>(n));
      ASSERT_EQ(gdap_comm_create_group(comms.data(), n), GDAP_SUCCESS) << gdap_last_error();
      std::vector<std::vector<std::string>> failures(static_cast<size_t>(n));
      on_threads(n, [&](int64_t r) {
        gdap_comm_set_timeout(comms[r], 60);
        run_rank(c, mode, comms[r], r, static_cast<int>(r % gpus), failures[r]);
      });
      for (int64_t r = 0; r < n; ++r) {
        for (const auto& f : failures[r]) ADD_FAILURE() << "group, mode " << mode << ", rank " << r << ": " << f;
      }
      for (gdap_comm* cm : comms) gdap_comm_destroy(cm);
    }
  }
}

TEST(GemmGpu, NcclOneRankPerGpu) {
  const int gpus = device_count();
  if (gpus == 0) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = gpus >= 4 ? 2 : 1, cols = gpus / rows;
  const int64_t n = rows * cols;
  const gt::Axis c2{'c', 2};
  const std::vector<gt::Case> table = {
      {"nccl block f64", 40, 36, 50, grid(rows, cols), grid(rows, cols), grid(rows, cols), 64, 1.0, 1.0},
      {"nccl block-cyclic 2 f32", 21, 18, 23, grid(rows, cols, c2, c2), grid(rows, cols, c2, c2), grid(rows, cols, c2, c2), 32,
       -2.0, 0.0},
      {"nccl A redistributed f64", 16, 12, 10, grid(n, 1), grid(rows, cols), grid(rows, cols), 64, 1.0, 0.5},
  };
  std::vector<ncclComm_t> nccl(static_cast<size_t>(n));
  ASSERT_EQ(ncclCommInitAll(nccl.data(), static_cast<int>(n), nullptr), ncclSuccess);
  for (const gt::Case& c : table) {
    std::vector<std::vector<std::string>> failures(static_cast<size_t>(n));
    on_threads(n, [&](int64_t r) {
      cudaSetDevice(static_cast<int>(r));
      cudaStream_t stream = nullptr;
      cudaStreamCreate(&stream);
      gdap_comm* comm = nullptr;
      if (gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream) != GDAP_SUCCESS) {
        failures[r].push_back(std::string("gdap_comm_from_nccl: ") + gdap_last_error());
      } else {
        run_rank(c, GDAP_GEMM_EXACT, comm, r, static_cast<int>(r), failures[r]);
      }
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
    for (int64_t r = 0; r < n; ++r) {
      for (const auto& f : failures[r]) ADD_FAILURE() << "nccl, rank " << r << ": " << f;
    }
  }
  for (ncclComm_t comm : nccl) ncclCommDestroy(comm);
}

}  // namespace
