// Redistribution of device sections (label gpu): the in-process group's peer-copy kernels, in
// pull and push mode, with ranks spread over every visible GPU, and the NCCL executor with one
// rank per GPU. Every destination element is checked against its global index after the copy;
// padding must keep its sentinel.
#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include "comm/comm.hpp"  // the communicator's build counter (Cache::builds)

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr double kSentinel = -1.0;
const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};

// A distribution: rank r's dictionaries.
using Layout = std::function<std::vector<gdap_dim>(int64_t rank, int64_t nranks)>;

gdap_dim block(int64_t size, int64_t P, int64_t c, int64_t pad = 0) {
  const int64_t w = (size + P - 1) / P, lo = std::min(size, c * w), hi = std::min(size, lo + w);
  gdap_dim d = GDAP_DIM_INIT;
  const int64_t below = c > 0 ? pad : 0, above = c < P - 1 ? pad : 0;
  gdap_dim_set_block(&d, size, P, c, lo - below, hi + above);
  if (pad > 0) gdap_dim_set_padding(&d, below, above);
  return d;
}
gdap_dim cyclic(int64_t size, int64_t P, int64_t c, int64_t bs) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_cyclic(&d, size, P, c, c * bs, bs);
  return d;
}
gdap_dim whole(int64_t size) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, size);
  return d;
}

constexpr int64_t kRows = 203, kCols = 157;  // odd sizes: partial blocks and unaligned rows

const std::vector<std::pair<std::string, std::pair<Layout, Layout>>>& cases() {
  static const std::vector<std::pair<std::string, std::pair<Layout, Layout>>> all = {
      {"rows_to_cols",
       {[](int64_t r, int64_t P) { return std::vector<gdap_dim>{block(kRows, P, r), whole(kCols)}; },
        [](int64_t r, int64_t P) { return std::vector<gdap_dim>{whole(kRows), block(kCols, P, r)}; }}},
      {"padded_rows_to_blockcyclic",
       {[](int64_t r, int64_t P) { return std::vector<gdap_dim>{block(kRows, P, r, 2), whole(kCols)}; },
        [](int64_t r, int64_t P) { return std::vector<gdap_dim>{cyclic(kRows, P, r, 16), whole(kCols)}; }}},
      {"grid_to_cyclic_cols",
       {[](int64_t r, int64_t P) {
          const int64_t a = P % 2 == 0 ? 2 : 1, b = P / a;
          return std::vector<gdap_dim>{block(kRows, a, r / b), block(kCols, b, r % b)};
        },
        [](int64_t r, int64_t P) { return std::vector<gdap_dim>{whole(kRows), cyclic(kCols, P, r, 3)}; }}},
  };
  return all;
}

#define CHECK_GDAP(call) ASSERT_EQ((call), GDAP_SUCCESS) << #call << ": " << gdap_last_error()
#define CHECK_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

// A device section: `fill` puts each owned element's global index and a poison in the padding
// (which must never be read), otherwise the sentinel everywhere.
struct DeviceSection {
  gdap_array* array = nullptr;
  std::vector<int64_t> shape;
  ~DeviceSection() { gdap_array_destroy(array); }
};

constexpr double kPoison = -7.0;

void make_section(DeviceSection& s, const std::vector<gdap_dim>& dims, const gdap_map* map, int64_t rank, int device,
                  bool fill) {
  CHECK_GDAP(gdap_array_create(&s.array, kF64, gdap_device{GDAP_DEVICE_CUDA, device}, dims.data(), 2));
  s.shape.resize(2);
  CHECK_GDAP(gdap_array_shape(s.shape.data(), s.array));
  std::vector<double> host(static_cast<size_t>(s.shape[0] * s.shape[1]), fill ? kPoison : kSentinel);
  for (int64_t i = 0; fill && i < s.shape[0]; ++i) {
    for (int64_t j = 0; j < s.shape[1]; ++j) {
      int64_t local[2] = {i, j}, global[2], owner = -1, at[2];
      CHECK_GDAP(gdap_array_local_to_global(global, s.array, local));
      CHECK_GDAP(gdap_map_owner(&owner, at, map, global));
      if (owner == rank && at[0] == i && at[1] == j) {
        host[static_cast<size_t>(i * s.shape[1] + j)] = static_cast<double>(global[0] * kCols + global[1]);
      }
    }
  }
  void* data = nullptr;
  CHECK_GDAP(gdap_array_data(&data, s.array));
  CHECK_CUDA(cudaSetDevice(device));
  CHECK_CUDA(cudaMemcpy(data, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaDeviceSynchronize());  // landed before gdap's stream (unordered with this one) reads or writes it
}

// Owned elements hold their global index, padding the sentinel.
void check_section(const DeviceSection& s, const gdap_map* map, int64_t rank, int64_t& wrong) {
  std::vector<double> host(static_cast<size_t>(s.shape[0] * s.shape[1]));
  void* data = nullptr;
  CHECK_GDAP(gdap_array_data(&data, s.array));
  CHECK_CUDA(cudaMemcpy(host.data(), data, host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  for (int64_t i = 0; i < s.shape[0]; ++i) {
    for (int64_t j = 0; j < s.shape[1]; ++j) {
      int64_t local[2] = {i, j}, global[2], owner = -1, at[2] = {-1, -1};
      CHECK_GDAP(gdap_array_local_to_global(global, s.array, local));
      CHECK_GDAP(gdap_map_owner(&owner, at, map, global));
      const bool owned = owner == rank && at[0] == i && at[1] == j;
      const double want = owned ? static_cast<double>(global[0] * kCols + global[1]) : kSentinel;
      if (host[static_cast<size_t>(i * s.shape[1] + j)] != want) ++wrong;
    }
  }
}

// One rank's whole redistribution on `comm`, its sections on `device`.
void run_rank(gdap_comm* comm, int64_t rank, int64_t P, int device, const Layout& from, const Layout& to,
              int64_t& wrong) {
  const std::vector<gdap_dim> s = from(rank, P), d = to(rank, P);
  gdap_map *src_map = nullptr, *dst_map = nullptr;
  CHECK_GDAP(gdap_map_create_collective(&src_map, comm, 2, s.data()));
  CHECK_GDAP(gdap_map_create_collective(&dst_map, comm, 2, d.data()));
  gdap_plan* plan = nullptr;
  CHECK_GDAP(gdap_plan_create(&plan, src_map, dst_map, kF64, rank));
  DeviceSection src, dst;
  make_section(src, s, src_map, rank, device, true);
  make_section(dst, d, dst_map, rank, device, false);
  CHECK_GDAP(gdap_redistribute(comm, plan, src.array, dst.array));
  CHECK_GDAP(gdap_redistribute(comm, plan, src.array, dst.array));  // reuses the uploaded copies
  CHECK_CUDA(cudaDeviceSynchronize());
  check_section(dst, dst_map, rank, wrong);
  gdap_plan_destroy(plan);
  gdap_map_destroy(src_map);
  gdap_map_destroy(dst_map);
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

// Runs f(comm, rank, wrong) on one thread per NCCL communicator (rank r on GPU r, a stream of its
// own) and returns each rank's count of wrong elements.
template <typename F>
std::vector<int64_t> on_nccl_ranks(const std::vector<ncclComm_t>& nccl, F&& f) {
  std::vector<int64_t> wrong(nccl.size(), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < static_cast<int>(nccl.size()); ++r) {
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      cudaStream_t stream = nullptr;
      cudaStreamCreate(&stream);
      gdap_comm* comm = nullptr;
      ASSERT_EQ(gdap_comm_from_nccl(&comm, nccl[r], stream), GDAP_SUCCESS) << gdap_last_error();
      f(comm, r, wrong[r]);
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  return wrong;
}

void run_group(const char* mode) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device";
  setenv("GDAP_GROUP_COPY", mode, 1);
  constexpr int64_t P = 4;
  for (const auto& [name, layouts] : cases()) {
    std::vector<gdap_comm*> comms(P);
    CHECK_GDAP(gdap_comm_create_group(comms.data(), P));
    std::vector<int64_t> wrong(P, 0);
    std::vector<std::thread> threads;
    for (int64_t r = 0; r < P; ++r) {
      threads.emplace_back([&, r] {
        const int device = static_cast<int>(r % gpus);
        cudaSetDevice(device);
        run_rank(comms[r], r, P, device, layouts.first, layouts.second, wrong[r]);
      });
    }
    for (auto& t : threads) t.join();
    for (int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(wrong[r], 0) << name << " (" << mode << "), rank " << r;
      gdap_comm_destroy(comms[r]);
    }
  }
  unsetenv("GDAP_GROUP_COPY");
}

TEST(RedistributeGpu, GroupPull) { run_group("pull"); }
TEST(RedistributeGpu, GroupPush) { run_group("push"); }

TEST(RedistributeGpu, NcclOneRankPerGpu) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device";
  std::vector<ncclComm_t> nccl(gpus);
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  for (const auto& [name, layouts] : cases()) {
    const std::vector<int64_t> wrong = on_nccl_ranks(nccl, [&](gdap_comm* comm, int r, int64_t& bad) {
      run_rank(comm, r, gpus, r, layouts.first, layouts.second, bad);
    });
    for (int r = 0; r < gpus; ++r) EXPECT_EQ(wrong[r], 0) << name << " (nccl), rank " << r;
  }
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}

// A ring of layouts for plans taken in turn: plan k moves layout k into layout k + 1 (mod the count).
std::vector<Layout> ring(size_t programs) {
  std::vector<Layout> all = {
      [](int64_t r, int64_t P) { return std::vector<gdap_dim>{block(kRows, P, r), whole(kCols)}; },
      [](int64_t r, int64_t P) { return std::vector<gdap_dim>{whole(kRows), block(kCols, P, r)}; },
      [](int64_t r, int64_t P) { return std::vector<gdap_dim>{cyclic(kRows, P, r, 16), whole(kCols)}; },
      [](int64_t r, int64_t P) { return std::vector<gdap_dim>{whole(kRows), cyclic(kCols, P, r, 3)}; },
      [](int64_t r, int64_t P) {
        const int64_t a = P % 2 == 0 ? 2 : 1, b = P / a;
        return std::vector<gdap_dim>{block(kRows, a, r / b), block(kCols, b, r % b)};
      }};
  all.resize(programs);
  return all;
}

// Rule: plans taken in turn on one communicator (a transpose and its inverse, a 3-D FFT's pencils):
// every call right element by element (its destination reset to the sentinel first); with at most
// 4 plans nothing is built again after two rounds (`rebuilt` counts what was: Cache::builds), with 5
// the least recently used is evicted (`rebuilt` > 0).
void run_in_turn(gdap_comm* comm, int64_t rank, int64_t P, int device, size_t programs, int64_t& wrong,
                 int64_t& rebuilt) {
  const std::vector<Layout> layouts = ring(programs);
  std::vector<std::vector<gdap_dim>> dims;
  std::vector<gdap_map*> maps(programs, nullptr);
  std::vector<gdap_plan*> plans(programs, nullptr);
  std::vector<DeviceSection> sections(programs);
  for (size_t k = 0; k < programs; ++k) {
    dims.push_back(layouts[k](rank, P));
    CHECK_GDAP(gdap_map_create_collective(&maps[k], comm, 2, dims[k].data()));
    make_section(sections[k], dims[k], maps[k], rank, device, k == 0);
  }
  for (size_t k = 0; k < programs; ++k) {
    CHECK_GDAP(gdap_plan_create(&plans[k], maps[k], maps[(k + 1) % programs], kF64, rank));
  }
  constexpr int kRounds = 5, kWarmup = 2;
  int64_t builds = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (round == kWarmup) builds = comm->cache.builds;
    for (size_t k = 0; k < programs; ++k) {
      DeviceSection& to = sections[(k + 1) % programs];
      std::vector<double> sentinel(static_cast<size_t>(to.shape[0] * to.shape[1]), kSentinel);
      void* data = nullptr;
      CHECK_GDAP(gdap_array_data(&data, to.array));
      CHECK_CUDA(cudaMemcpy(data, sentinel.data(), sentinel.size() * sizeof(double), cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_GDAP(gdap_redistribute(comm, plans[k], sections[k].array, to.array));
      CHECK_CUDA(cudaDeviceSynchronize());
      check_section(to, maps[(k + 1) % programs], rank, wrong);
    }
  }
  rebuilt = comm->cache.builds - builds;
  for (size_t k = 0; k < programs; ++k) {
    gdap_plan_destroy(plans[k]);
    gdap_map_destroy(maps[k]);
  }
}

void expect_in_turn(size_t programs, const std::vector<int64_t>& wrong, const std::vector<int64_t>& rebuilt,
                    const std::string& what) {
  for (size_t r = 0; r < wrong.size(); ++r) {
    EXPECT_EQ(wrong[r], 0) << what << ", " << programs << " plans in turn, rank " << r;
    if (programs <= 4) EXPECT_EQ(rebuilt[r], 0) << what << ", " << programs << " plans: built again, rank " << r;
    else EXPECT_GT(rebuilt[r], 0) << what << ", " << programs << " plans: none evicted, rank " << r;
  }
}

TEST(RedistributeGpu, GroupPlansInTurnBuiltOnce) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device";
  constexpr int64_t P = 4;
  for (const char* mode : {"pull", "push"}) {
    setenv("GDAP_GROUP_COPY", mode, 1);
    for (size_t programs : {2, 4, 5}) {
      std::vector<gdap_comm*> comms(P);
      CHECK_GDAP(gdap_comm_create_group(comms.data(), P));
      std::vector<int64_t> wrong(P, 0), rebuilt(P, 0);
      std::vector<std::thread> threads;
      for (int64_t r = 0; r < P; ++r) {
        threads.emplace_back([&, r] {
          const int device = static_cast<int>(r % gpus);
          cudaSetDevice(device);
          run_in_turn(comms[r], r, P, device, programs, wrong[r], rebuilt[r]);
        });
      }
      for (auto& t : threads) t.join();
      expect_in_turn(programs, wrong, rebuilt, std::string("group, ") + mode);
      for (gdap_comm* c : comms) gdap_comm_destroy(c);
    }
  }
  unsetenv("GDAP_GROUP_COPY");
}

// The NCCL engine both ways: direct writes (the default) and send/receive (GDAP_NCCL_PEER=0).
TEST(RedistributeGpu, NcclPlansInTurnBuiltOnce) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device";
  for (const char* peer : {static_cast<const char*>(nullptr), "0"}) {
    if (peer != nullptr) setenv("GDAP_NCCL_PEER", peer, 1);
    for (size_t programs : {2, 4, 5}) {
      std::vector<ncclComm_t> nccl(gpus);
      ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
      std::vector<int64_t> rebuilt(gpus, 0);
      const std::vector<int64_t> wrong = on_nccl_ranks(nccl, [&](gdap_comm* comm, int r, int64_t& bad) {
        run_in_turn(comm, r, gpus, r, programs, bad, rebuilt[r]);
      });
      expect_in_turn(programs, wrong, rebuilt, std::string("nccl, GDAP_NCCL_PEER=") + (peer ? peer : "unset"));
      for (ncclComm_t c : nccl) ncclCommDestroy(c);
    }
  }
  unsetenv("GDAP_NCCL_PEER");
}

// Host and device sections in one group: refused on every rank, nothing moved.
TEST(RedistributeGpu, MixedMemoriesRefused) {
  ASSERT_GT(device_count(), 0);
  constexpr int64_t P = 2;
  std::vector<gdap_comm*> comms(P);
  CHECK_GDAP(gdap_comm_create_group(comms.data(), P));
  std::vector<gdap_status> got(P);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < P; ++r) {
    threads.emplace_back([&, r] {
      const std::vector<gdap_dim> dims{block(kRows, P, r), whole(kCols)};
      gdap_map* map = nullptr;
      gdap_map_create_collective(&map, comms[r], 2, dims.data());
      gdap_plan* plan = nullptr;
      gdap_plan_create(&plan, map, map, kF64, r);
      const gdap_device where = r == 0 ? gdap_device{GDAP_DEVICE_CPU, 0} : gdap_device{GDAP_DEVICE_CUDA, 0};
      gdap_array *a = nullptr, *b = nullptr;
      gdap_array_create(&a, kF64, where, dims.data(), 2);
      gdap_array_create(&b, kF64, where, dims.data(), 2);
      got[r] = gdap_redistribute(comms[r], plan, a, b);
      gdap_array_destroy(a);
      gdap_array_destroy(b);
      gdap_plan_destroy(plan);
      gdap_map_destroy(map);
    });
  }
  for (auto& t : threads) t.join();
  for (int64_t r = 0; r < P; ++r) {
    EXPECT_EQ(got[r], GDAP_ERR_UNSUPPORTED) << "rank " << r;
    gdap_comm_destroy(comms[r]);
  }
}

// Rule: a collective call leaves the caller's current device as it was. The group engine switches
// to its sections' device (here GPU 1) while the caller has GPU 0 current; after the call GPU 0 must
// be current again (a PyTorch test found cuda:1 current before CallerDevice).
TEST(RedistributeGpu, CallersDeviceKept) {
  ASSERT_GE(device_count(), 2) << "this case needs 2 GPUs";
  constexpr int64_t P = 2;
  std::vector<gdap_comm*> comms(P);
  CHECK_GDAP(gdap_comm_create_group(comms.data(), P));
  std::vector<int> after(P, -1);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < P; ++r) {
    threads.emplace_back([&, r] {
      const std::vector<gdap_dim> s{block(kRows, P, r), whole(kCols)}, d{whole(kRows), block(kCols, P, r)};
      gdap_map *src_map = nullptr, *dst_map = nullptr;
      CHECK_GDAP(gdap_map_create_collective(&src_map, comms[r], 2, s.data()));
      CHECK_GDAP(gdap_map_create_collective(&dst_map, comms[r], 2, d.data()));
      gdap_plan* plan = nullptr;
      CHECK_GDAP(gdap_plan_create(&plan, src_map, dst_map, kF64, r));
      DeviceSection src, dst;
      make_section(src, s, src_map, r, 1, true);
      make_section(dst, d, dst_map, r, 1, false);
      CHECK_CUDA(cudaSetDevice(0));
      CHECK_GDAP(gdap_redistribute(comms[r], plan, src.array, dst.array));
      CHECK_CUDA(cudaGetDevice(&after[r]));
      int64_t wrong = 0;
      check_section(dst, dst_map, r, wrong);
      EXPECT_EQ(wrong, 0) << "rank " << r;
      gdap_plan_destroy(plan);
      gdap_map_destroy(src_map);
      gdap_map_destroy(dst_map);
    });
  }
  for (auto& t : threads) t.join();
  for (int64_t r = 0; r < P; ++r) {
    EXPECT_EQ(after[r], 0) << "rank " << r << ": gdap_redistribute left device " << after[r] << " current";
    gdap_comm_destroy(comms[r]);
  }
}

}  // namespace

namespace {

// One rank of NcclRoundsOfLargeMessages: row blocks of an n x n float64 matrix -> column blocks
// with 2 columns of padding on each inner side, each element holding its global index i * n + j.
void large_rank(gdap_comm* comm, int64_t n, int64_t r, int64_t P, int64_t& wrong) {
  const std::vector<gdap_dim> s{block(n, P, r), whole(n)}, d{whole(n), block(n, P, r, 2)};
  gdap_map *src_map = nullptr, *dst_map = nullptr;
  CHECK_GDAP(gdap_map_create_collective(&src_map, comm, 2, s.data()));
  CHECK_GDAP(gdap_map_create_collective(&dst_map, comm, 2, d.data()));
  gdap_plan* plan = nullptr;
  CHECK_GDAP(gdap_plan_create(&plan, src_map, dst_map, kF64, r));
  DeviceSection src, dst;
  CHECK_GDAP(gdap_array_create(&src.array, kF64, gdap_device{GDAP_DEVICE_CUDA, static_cast<int32_t>(r)}, s.data(), 2));
  CHECK_GDAP(gdap_array_create(&dst.array, kF64, gdap_device{GDAP_DEVICE_CUDA, static_cast<int32_t>(r)}, d.data(), 2));
  const int64_t row0 = s[0].start, cols = d[1].stop - d[1].start, col0 = d[1].start;
  const int64_t rows = s[0].stop - s[0].start;
  std::vector<double> host(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) host[static_cast<size_t>(i * n + j)] = static_cast<double>((row0 + i) * n + j);
  }
  void *sp = nullptr, *dp = nullptr;
  CHECK_GDAP(gdap_array_data(&sp, src.array));
  CHECK_GDAP(gdap_array_data(&dp, dst.array));
  CHECK_CUDA(cudaMemcpy(sp, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
  host.assign(static_cast<size_t>(n * cols), kSentinel);
  CHECK_CUDA(cudaMemcpy(dp, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaDeviceSynchronize());  // pageable copies may still be landing, unordered with gdap's stream
  CHECK_GDAP(gdap_redistribute(comm, plan, src.array, dst.array));
  CHECK_GDAP(gdap_redistribute(comm, plan, src.array, dst.array));  // the kept rounds again
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(host.data(), dp, host.size() * sizeof(double), cudaMemcpyDeviceToHost));
  const int64_t lo = d[1].start + d[1].padding[0], hi = d[1].stop - d[1].padding[1];
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t j = col0 + c;
      const double want = j >= lo && j < hi ? static_cast<double>(i * n + j) : kSentinel;
      wrong += host[static_cast<size_t>(i * cols + c)] != want;
    }
  }
  gdap_plan_destroy(plan);
  gdap_map_destroy(src_map);
  gdap_map_destroy(dst_map);
}

}  // namespace

// Messages of 64 MiB or more go in NCCL rounds of up to 8 pieces, packed, sent and unpacked on two
// streams (nccl_staging.cpp), when direct writes are off (GDAP_NCCL_PEER=0); then the same by
// direct writes. Row blocks -> padded column blocks of a 12289 x 12289 float64 matrix
// (1.2 GB): every message is 72 MB or more, strided on both ends (packed and unpacked), and n odd,
// so the pieces cut rows part-way.
TEST(RedistributeGpu, NcclRoundsOfLargeMessages) {
  const int gpus = device_count();
  if (gpus < 2) GTEST_SKIP() << "needs 2 GPUs or more (one rank per GPU): " << gpus << " visible";
  constexpr int64_t n = 12289;
  std::vector<ncclComm_t> nccl(gpus);
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  for (const char* peer : {"0", "1"}) {  // NCCL send/receive in rounds, then direct writes
    setenv("GDAP_NCCL_PEER", peer, 1);
    const std::vector<int64_t> wrong =
        on_nccl_ranks(nccl, [&](gdap_comm* comm, int r, int64_t& bad) { large_rank(comm, n, r, gpus, bad); });
    for (int r = 0; r < gpus; ++r) EXPECT_EQ(wrong[r], 0) << "GDAP_NCCL_PEER=" << peer << ", rank " << r;
  }
  unsetenv("GDAP_NCCL_PEER");
  for (ncclComm_t c : nccl) ncclCommDestroy(c);
}
