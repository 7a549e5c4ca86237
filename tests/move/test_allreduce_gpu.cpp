// gdap_allreduce on device sections over NCCL: one thread and communicator per GPU
// (ncclCommInitAll), every op on float64 and int32 sections of 1,000,003 elements, checked
// element by element on the host; ranks passing different ops are every rank's error; a group of
// device sections is refused clearly, and so is a strided device section, on every rank; min and
// max with NaN on no rank, each rank in turn and every rank (float32 and float64), one NaN
// wherever it sits, and zeros of both signs. Label gpu.
#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kCount = 1000003;

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

double value(int rank, int64_t i) { return static_cast<double>(1 + (rank + i) % 3); }

double reduce(gdap_reduce_op op, int nranks, int64_t i) {
  double r = value(0, i);
  for (int k = 1; k < nranks; ++k) {
    const double v = value(k, i);
    r = op == GDAP_REDUCE_SUM ? r + v : op == GDAP_REDUCE_PROD ? r * v : op == GDAP_REDUCE_MIN ? std::min(r, v) : std::max(r, v);
  }
  return r;
}

// f(comm, rank, stream) on one thread per GPU, each with a communicator over nccl[rank] and a
// stream of its own (a rank whose communicator cannot be made runs nothing: its result stays -1).
void on_every_gpu(const std::vector<ncclComm_t>& nccl, const std::function<void(gdap_comm*, int, cudaStream_t)>& f) {
  std::vector<std::thread> threads;
  for (int r = 0; r < static_cast<int>(nccl.size()); ++r) {
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      cudaStream_t stream = nullptr;
      cudaStreamCreate(&stream);
      gdap_comm* comm = nullptr;
      if (gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream) == GDAP_SUCCESS) f(comm, r, stream);
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
}

// One rank's all-reduce of `host` (kept in T) as a 1-d device section of `dtype`: uploaded, reduced,
// copied back into `host`. False (a failure added) when gdap refuses.
template <typename T>
bool allreduce_on_device(gdap_comm* comm, int rank, gdap_dtype dtype, gdap_reduce_op op, std::vector<T>& host,
                         cudaStream_t stream) {
  const auto n = static_cast<int64_t>(host.size());
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, n, 1, 0, 0, n);
  gdap_array* a = nullptr;
  if (gdap_array_create(&a, dtype, {GDAP_DEVICE_CUDA, rank}, &d, 1) != GDAP_SUCCESS) return false;
  void* data = nullptr;
  gdap_array_data(&data, a);
  cudaMemcpyAsync(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream);
  const bool ok = gdap_allreduce(comm, a, op) == GDAP_SUCCESS;
  if (!ok) ADD_FAILURE() << "rank " << rank << ": " << gdap_last_error();
  cudaMemcpyAsync(host.data(), data, host.size() * sizeof(T), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  gdap_array_destroy(a);
  return ok;
}

// One rank: a device section of `dtype` filled from the host, reduced, copied back and checked.
template <typename T>
int64_t run_rank(gdap_comm* comm, int rank, int nranks, gdap_dtype dtype, gdap_reduce_op op, cudaStream_t stream) {
  std::vector<T> host(kCount);
  for (int64_t i = 0; i < kCount; ++i) host[static_cast<size_t>(i)] = static_cast<T>(value(rank, i));
  if (!allreduce_on_device(comm, rank, dtype, op, host, stream)) return -1;
  int64_t wrong = 0;
  for (int64_t i = 0; i < kCount; ++i) wrong += host[static_cast<size_t>(i)] != static_cast<T>(reduce(op, nranks, i));
  return wrong;
}

TEST(AllreduceGpu, NcclEveryOpOnEveryGpu) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device";
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  for (gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_PROD, GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) {
    std::vector<int64_t> wrong(static_cast<size_t>(gpus) * 2, -1);
    on_every_gpu(nccl, [&](gdap_comm* comm, int r, cudaStream_t stream) {
      wrong[static_cast<size_t>(2 * r)] = run_rank<double>(comm, r, gpus, {GDAP_DTYPE_FLOAT, 64, 1}, op, stream);
      wrong[static_cast<size_t>(2 * r + 1)] = run_rank<int32_t>(comm, r, gpus, {GDAP_DTYPE_INT, 32, 1}, op, stream);
    });
    for (size_t k = 0; k < wrong.size(); ++k) {
      EXPECT_EQ(wrong[k], 0) << "op " << op << ", rank " << k / 2 << (k % 2 ? " int32" : " float64");
    }
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}

// Who holds NaN in the tests below: no rank, every element of every rank, or one rank (>= 0).
constexpr int kNoNan = -2, kEveryElement = -1;

// One rank of the NaN rule below: value v(r, i) with -0.0, +-inf and NaN mixed in; the reference
// is NumPy's np.maximum/np.minimum over the ranks (NaN wins).
template <typename T>
T nan_value(int r, int64_t i, int holder) {
  if (holder == kEveryElement || (r == holder && (i == 7 * holder + 1 || i == 7 * holder + 2))) {
    return (r + i) % 2 ? -std::numeric_limits<T>::quiet_NaN() : std::numeric_limits<T>::quiet_NaN();
  }
  if (i % 11 == 5) return r == 0 ? std::numeric_limits<T>::infinity() : T(1);
  if (i % 13 == 6) return r % 2 ? -std::numeric_limits<T>::infinity() : T(-2);
  if (i % 7 == 3) return r % 2 ? T(-0.0) : T(0.0);
  return static_cast<T>((r * 5 + i * 3) % 9 - 4);
}

// One rank's reduction of nan_value: the elements that differ from the reference (a NaN where it
// wants one, the value otherwise: -0.0 == +0.0), -1 if gdap refused; `got` the result.
template <typename T>
int64_t nan_rank(gdap_comm* comm, int rank, int nranks, gdap_reduce_op op, int holder, cudaStream_t stream,
                 std::vector<T>& got) {
  constexpr int64_t n = 4099;
  std::vector<T>& host = got;
  host.assign(n, T(0));
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = nan_value<T>(rank, i, holder);
  const gdap_dtype t = {GDAP_DTYPE_FLOAT, static_cast<uint8_t>(8 * sizeof(T)), 1};
  if (!allreduce_on_device(comm, rank, t, op, host, stream)) return -1;
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    T want = nan_value<T>(0, i, holder);
    for (int q = 1; q < nranks; ++q) {
      const T v = nan_value<T>(q, i, holder);
      if (std::isnan(want) || std::isnan(v)) want = std::numeric_limits<T>::quiet_NaN();
      else want = op == GDAP_REDUCE_MIN ? std::min(want, v) : std::max(want, v);
    }
    const T got = host[static_cast<size_t>(i)];
    wrong += std::isnan(want) ? !std::isnan(got) : got != want;
  }
  return wrong;
}

// True if every rank's result has rank 0's bits (an all-reduce's promise, the sign of a zero and a
// NaN's bits included).
template <typename T>
bool same_bits(const std::vector<std::vector<T>>& got) {
  for (const std::vector<T>& g : got) {
    if (g.size() != got[0].size() || std::memcmp(g.data(), got[0].data(), g.size() * sizeof(T)) != 0) return false;
  }
  return true;
}

// Rule (NumPy's np.minimum/np.maximum): min and max of floats propagate NaN, whichever rank holds
// it (each in turn; kEveryElement: every element NaN). NCCL's own float min and max (fminf/fmaxf)
// return the other operand, dropping the NaN: gdap reduces order-preserving integer keys instead
// when any rank holds a NaN, and NCCL's float op (exact without NaN, infinities included) when
// none does (kNoNan). Either way every rank ends with the same bits.
TEST(AllreduceGpu, NcclMinAndMaxPropagateNan) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device";
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  for (gdap_reduce_op op : {GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) {
    for (int holder = kNoNan; holder < gpus; ++holder) {
      std::vector<int64_t> wrong(static_cast<size_t>(gpus) * 2, -1);
      std::vector<std::vector<double>> got64(static_cast<size_t>(gpus));
      std::vector<std::vector<float>> got32(static_cast<size_t>(gpus));
      on_every_gpu(nccl, [&](gdap_comm* comm, int r, cudaStream_t stream) {
        const auto k = static_cast<size_t>(r);
        wrong[2 * k] = nan_rank<double>(comm, r, gpus, op, holder, stream, got64[k]);
        wrong[2 * k + 1] = nan_rank<float>(comm, r, gpus, op, holder, stream, got32[k]);
      });
      for (size_t k = 0; k < wrong.size(); ++k) {
        EXPECT_EQ(wrong[k], 0) << "op " << op << ", NaN on rank " << holder << ", rank " << k / 2
                               << (k % 2 ? " float32" : " float64");
      }
      EXPECT_TRUE(same_bits(got64)) << "op " << op << ", NaN on rank " << holder << ", float64";
      EXPECT_TRUE(same_bits(got32)) << "op " << op << ", NaN on rank " << holder << ", float32";
    }
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}

// One rank's all-reduce of a float section wrapped at `offset` elements into a device buffer (1: a
// start that is not 16-byte aligned, which the NaN scan reads element by element), holding
// NaN at `at` on rank `holder` only; true if the result is NaN at `at` and exact elsewhere.
template <typename T>
bool one_nan_found(gdap_comm* comm, int rank, int nranks, gdap_reduce_op op, int64_t n, int64_t offset, int64_t at,
                   int holder) {
  auto v = [&](int r, int64_t i) { return static_cast<T>((r * 3 + i * 5) % 17 - 8); };
  std::vector<T> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = v(rank, i);
  if (rank == holder) host[static_cast<size_t>(at)] = std::numeric_limits<T>::quiet_NaN();
  T* buffer = nullptr;
  if (cudaMalloc(&buffer, static_cast<size_t>(n + offset) * sizeof(T)) != cudaSuccess) return false;
  cudaMemcpy(buffer + offset, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, n, 1, 0, 0, n);
  const int64_t stride = 1;
  gdap_array* a = nullptr;
  bool ok = gdap_array_wrap(&a, buffer + offset, {GDAP_DTYPE_FLOAT, static_cast<uint8_t>(8 * sizeof(T)), 1},
                            {GDAP_DEVICE_CUDA, rank}, &stride, &d, 1) == GDAP_SUCCESS &&
            gdap_allreduce(comm, a, op) == GDAP_SUCCESS;
  if (!ok) ADD_FAILURE() << "rank " << rank << ": " << gdap_last_error();
  cudaDeviceSynchronize();
  cudaMemcpy(host.data(), buffer + offset, host.size() * sizeof(T), cudaMemcpyDeviceToHost);
  for (int64_t i = 0; ok && i < n; ++i) {
    T want = v(0, i);
    for (int q = 1; q < nranks; ++q) want = op == GDAP_REDUCE_MIN ? std::min(want, v(q, i)) : std::max(want, v(q, i));
    const T g = host[static_cast<size_t>(i)];
    ok = i == at ? std::isnan(g) : g == want;
  }
  gdap_array_destroy(a);
  cudaFree(buffer);
  return ok;
}

// Rule: one NaN on one rank decides how every rank reduces: the scan finds it wherever it sits
// (first element, the 16-byte loads' middle and last, the elements after them, and all of them
// read one by one from an unaligned start), for float32 and float64. A scan that missed it would
// let NCCL's float op drop the NaN on every rank.
TEST(AllreduceGpu, NcclFindsOneNanWhereverItSits) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device";
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  constexpr int64_t n = 4099;  // float32: 1024 loads of 4 and 3 after; float64: 2049 of 2 and 1 after
  int turn = 0;
  for (int64_t offset : {0, 1}) {
    for (int64_t at : {int64_t{0}, n / 2, n - 4, n - 3, n - 1}) {
      for (gdap_reduce_op op : {GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) {
        const int holder = turn++ % gpus;
        std::vector<int> found(static_cast<size_t>(gpus) * 2, 0);
        on_every_gpu(nccl, [&](gdap_comm* comm, int r, cudaStream_t) {
          found[static_cast<size_t>(2 * r)] = one_nan_found<float>(comm, r, gpus, op, n, offset, at, holder);
          found[static_cast<size_t>(2 * r + 1)] = one_nan_found<double>(comm, r, gpus, op, n, offset, at, holder);
        });
        for (size_t k = 0; k < found.size(); ++k) {
          EXPECT_TRUE(found[k]) << "op " << op << ", NaN at " << at << " (start offset " << offset << ") on rank "
                                << holder << ", rank " << k / 2 << (k % 2 ? " float64" : " float32");
        }
      }
    }
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}

// -0.0 and +0.0 on different ranks and no NaN: NCCL's float op decides the zero's sign (not
// promised: docs/api.md), but the result is a zero with the same bits on every rank. The sign it
// gave is recorded in the test's properties (max_of_zeros, min_of_zeros) for docs/api.md.
TEST(AllreduceGpu, NcclMinAndMaxOfSignedZerosWithoutNan) {
  const int gpus = device_count();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << gpus;
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  for (gdap_reduce_op op : {GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) {
    std::vector<std::vector<float>> got(static_cast<size_t>(gpus));
    on_every_gpu(nccl, [&](gdap_comm* comm, int r, cudaStream_t stream) {
      std::vector<float>& host = got[static_cast<size_t>(r)];
      host = {r % 2 ? -0.0f : 0.0f, r % 2 ? 0.0f : -0.0f, -0.0f, 0.0f};  // both orders, and one sign alone
      allreduce_on_device(comm, r, {GDAP_DTYPE_FLOAT, 32, 1}, op, host, stream);
    });
    EXPECT_TRUE(same_bits(got)) << "op " << op;
    for (float z : got[0]) EXPECT_EQ(z, 0.0f) << "op " << op;
    EXPECT_TRUE(std::signbit(got[0][2])) << "op " << op << ": -0 on every rank stays -0";
    EXPECT_FALSE(std::signbit(got[0][3])) << "op " << op << ": +0 on every rank stays +0";
    const std::string signs = std::string(std::signbit(got[0][0]) ? "-0" : "+0") + (std::signbit(got[0][1]) ? " -0" : " +0");
    ::testing::Test::RecordProperty(op == GDAP_REDUCE_MAX ? "max_of_zeros" : "min_of_zeros", signs);
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}

// Rule: every rank of an all-reduce passes the same op (needs 2 GPUs): the last passes max, the
// others sum; every rank gets GDAP_ERR_INVALID_ARGUMENT naming both ops, and nothing changes.
TEST(AllreduceGpu, DifferentOpsAreEveryRanksError) {
  const int gpus = device_count();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << gpus;
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  std::vector<std::string> errors(static_cast<size_t>(gpus));
  std::vector<int> statuses(static_cast<size_t>(gpus), -1), changed(static_cast<size_t>(gpus), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < gpus; ++r) {
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      cudaStream_t stream = nullptr;
      cudaStreamCreate(&stream);
      gdap_comm* comm = nullptr;
      gdap_dim d = GDAP_DIM_INIT;
      gdap_dim_set_block(&d, 1024, 1, 0, 0, 1024);
      gdap_array* a = nullptr;
      if (gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream) == GDAP_SUCCESS &&
          gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CUDA, r}, &d, 1) == GDAP_SUCCESS) {
        void* data = nullptr;
        gdap_array_data(&data, a);
        std::vector<double> host(1024, r + 1.0);
        cudaMemcpyAsync(data, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice, stream);
        statuses[static_cast<size_t>(r)] = gdap_allreduce(comm, a, r == gpus - 1 ? GDAP_REDUCE_MAX : GDAP_REDUCE_SUM);
        errors[static_cast<size_t>(r)] = gdap_last_error();
        cudaMemcpyAsync(host.data(), data, host.size() * sizeof(double), cudaMemcpyDeviceToHost, stream);
        cudaStreamSynchronize(stream);
        changed[static_cast<size_t>(r)] = static_cast<int>(std::count_if(host.begin(), host.end(), [&](double v) { return v != r + 1.0; }));
      }
      gdap_array_destroy(a);
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  const std::string named = "rank " + std::to_string(gpus - 1) + " passed op max but rank 0 passed op sum";
  for (int r = 0; r < gpus; ++r) {
    EXPECT_EQ(statuses[static_cast<size_t>(r)], GDAP_ERR_INVALID_ARGUMENT) << errors[static_cast<size_t>(r)];
    EXPECT_NE(errors[static_cast<size_t>(r)].find(named), std::string::npos) << errors[static_cast<size_t>(r)];
    EXPECT_EQ(changed[static_cast<size_t>(r)], 0) << "rank " << r;
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}

TEST(AllreduceGpu, AGroupOfDeviceSectionsIsRefused) {
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, 8, 1, 0, 0, 8);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CUDA, 0}, &d, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_allreduce(comm, a, GDAP_REDUCE_SUM), GDAP_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(gdap_last_error()).find("NCCL"), std::string::npos) << gdap_last_error();
  gdap_array_destroy(a);
  gdap_comm_destroy(comm);
}

// NCCL reduces a device section in place, so it must be C-contiguous; that is checked inside the
// agreement, so a rank with a strided section fails and so does every other rank (GDAP_ERR_REMOTE
// naming it) before NCCL is called, rather than waiting in an all-reduce its peer never joins.
TEST(AllreduceGpu, AStridedDeviceSectionIsEveryRanksError) {
  const int gpus = device_count();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs, found " << gpus;
  std::vector<ncclComm_t> nccl(2);
  int devices[] = {0, 1};
  ASSERT_EQ(ncclCommInitAll(nccl.data(), 2, devices), ncclSuccess);
  std::vector<gdap_status> got(2, GDAP_ERR_INTERNAL);
  std::vector<std::string> said(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      gdap_comm* comm = nullptr;
      if (gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], nullptr) != GDAP_SUCCESS) return;
      gdap_comm_set_timeout(comm, 30);
      double* data = nullptr;
      cudaMalloc(&data, 16 * sizeof(double));
      gdap_dim d = GDAP_DIM_INIT;
      gdap_dim_set_block(&d, 8, 1, 0, 0, 8);
      const int64_t stride = r == 1 ? 2 : 1;  // rank 1's 8 elements are every other double
      gdap_array* a = nullptr;
      if (gdap_array_wrap(&a, data, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CUDA, r}, &stride, &d, 1) == GDAP_SUCCESS) {
        got[static_cast<size_t>(r)] = gdap_allreduce(comm, a, GDAP_REDUCE_SUM);
        said[static_cast<size_t>(r)] = gdap_last_error();
      }
      gdap_array_destroy(a);
      cudaFree(data);
      gdap_comm_destroy(comm);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(got[1], GDAP_ERR_UNSUPPORTED) << said[1];
  EXPECT_NE(said[1].find("C-contiguous"), std::string::npos) << said[1];
  EXPECT_EQ(got[0], GDAP_ERR_REMOTE) << said[0];
  EXPECT_NE(said[0].find("rank 1"), std::string::npos) << said[0];
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}

}  // namespace
