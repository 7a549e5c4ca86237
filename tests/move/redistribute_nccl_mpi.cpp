// Redistribution, persistent halo exchange and reductions over NCCL with one process per GPU (labels gpu,
// mpi): the engines' real setting, where NCCL's ranks are processes and the direct paths reach
// peers through CUDA IPC (exchange/peer_writes.cpp, exchange/bound_writes.cpp). Every destination element is
// checked against its global index, padding against its sentinel, for: a small odd-sized matrix
// (row blocks -> cyclic columns), a large one (12289^2 float64 row blocks -> padded column blocks),
// the same sections again (mappings kept); then every halo case of this many ranks
// (halo/halo_check.hpp), bound and started three times with repainting between starts; then
// all-reduces and reductions over axes (run_reductions). All of it three times: direct writes, a rank that turns them off (GDAP_NCCL_PEER=0: every rank falls back
// to NCCL's send/receive), and on again. Exits 77 (skipped, and ctest says so) with fewer GPUs
// than ranks. With GDAP_TEST_SEPARATE_HOSTS=1 each process plays a host of its own (the multi-node
// path: NCCL send/receive, no CUDA IPC): the same checks twice, and direct writes refused.
#include "halo/halo_device.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
constexpr double kSentinel = -1.0;
int failures = 0;

#define EXPECT_OK(call)                                                                    \
  do {                                                                                     \
    if ((call) != GDAP_SUCCESS) {                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, gdap_last_error()); \
      ++failures;                                                                          \
      return;                                                                              \
    }                                                                                      \
  } while (0)

gdap_dim block(int64_t n, int64_t P, int64_t c, int64_t pad = 0) {
  const int64_t lo = c * n / P, hi = (c + 1) * n / P, below = c > 0 ? pad : 0, above = c < P - 1 ? pad : 0;
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, n, P, c, lo - below, hi + above);
  if (pad > 0) gdap_dim_set_padding(&d, below, above);
  return d;
}
gdap_dim cyclic(int64_t n, int64_t P, int64_t c) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_cyclic(&d, n, P, c, c, 1);
  return d;
}
gdap_dim whole(int64_t n) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, n);
  return d;
}

// Global index of local element (i, j) of a section, or -1 where the section holds padding.
int64_t global_of(const std::vector<gdap_dim>& d, int64_t n, int64_t i, int64_t j) {
  auto axis = [](const gdap_dim& a, int64_t l) -> int64_t {
    if (a.dist_type == 'c') return a.start + l * a.proc_grid_size;
    const int64_t g = a.start + l;
    if (a.dist_type == 'b' && (g < a.start + a.padding[0] || g >= a.stop - a.padding[1])) return -1;
    return g;
  };
  const int64_t gi = axis(d[0], i), gj = axis(d[1], j);
  return gi < 0 || gj < 0 ? -1 : gi * n + gj;
}

// One redistribution of an n x n matrix from `s` to `d` on this rank, run twice, then checked.
void run_case(gdap_comm* comm, int device, int64_t rank, int64_t n, const std::vector<gdap_dim>& s,
              const std::vector<gdap_dim>& d, const char* name) {
  gdap_map *src_map = nullptr, *dst_map = nullptr;
  EXPECT_OK(gdap_map_create_collective(&src_map, comm, 2, s.data()));
  EXPECT_OK(gdap_map_create_collective(&dst_map, comm, 2, d.data()));
  gdap_plan* plan = nullptr;
  EXPECT_OK(gdap_plan_create(&plan, src_map, dst_map, kF64, rank));
  gdap_array *src = nullptr, *dst = nullptr;
  EXPECT_OK(gdap_array_create(&src, kF64, gdap_device{GDAP_DEVICE_CUDA, device}, s.data(), 2));
  EXPECT_OK(gdap_array_create(&dst, kF64, gdap_device{GDAP_DEVICE_CUDA, device}, d.data(), 2));
  int64_t ss[2], ds[2];
  EXPECT_OK(gdap_array_shape(ss, src));
  EXPECT_OK(gdap_array_shape(ds, dst));
  std::vector<double> host(static_cast<size_t>(ss[0] * ss[1]));
  for (int64_t i = 0; i < ss[0]; ++i) {
    for (int64_t j = 0; j < ss[1]; ++j) {
      const int64_t g = global_of(s, n, i, j);
      host[static_cast<size_t>(i * ss[1] + j)] = g < 0 ? -7.0 : static_cast<double>(g);
    }
  }
  void *sp = nullptr, *dp = nullptr;
  EXPECT_OK(gdap_array_data(&sp, src));
  EXPECT_OK(gdap_array_data(&dp, dst));
  cudaMemcpy(sp, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
  host.assign(static_cast<size_t>(ds[0] * ds[1]), kSentinel);
  cudaMemcpy(dp, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();  // pageable copies may still be landing, unordered with gdap's stream
  MPI_Barrier(MPI_COMM_WORLD);  // every rank's destination filled before any peer writes into it
  EXPECT_OK(gdap_redistribute(comm, plan, src, dst));
  EXPECT_OK(gdap_redistribute(comm, plan, src, dst));
  cudaDeviceSynchronize();
  cudaMemcpy(host.data(), dp, host.size() * sizeof(double), cudaMemcpyDeviceToHost);
  int64_t wrong = 0;
  for (int64_t i = 0; i < ds[0]; ++i) {
    for (int64_t j = 0; j < ds[1]; ++j) {
      const int64_t g = global_of(d, n, i, j);
      wrong += host[static_cast<size_t>(i * ds[1] + j)] != (g < 0 ? kSentinel : static_cast<double>(g));
    }
  }
  if (wrong != 0) {
    std::fprintf(stderr, "rank %lld: %s: %lld wrong elements\n", static_cast<long long>(rank), name, static_cast<long long>(wrong));
    ++failures;
  }
  gdap_array_destroy(dst);
  gdap_array_destroy(src);
  gdap_plan_destroy(plan);
  gdap_map_destroy(dst_map);
  gdap_map_destroy(src_map);
}

// A device section of `dims` (none: 0-d) on `device` holding value(local index) in C order.
template <typename F>
gdap_array* device_section(const std::vector<gdap_dim>& dims, int device, F&& value) {
  gdap_array* a = nullptr;
  if (gdap_array_create(&a, kF64, gdap_device{GDAP_DEVICE_CUDA, device}, dims.data(), static_cast<int64_t>(dims.size())) !=
      GDAP_SUCCESS) {
    return nullptr;
  }
  std::vector<int64_t> shape(dims.size());
  gdap_array_shape(shape.data(), a);
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<double> host(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) host[static_cast<size_t>(k)] = value(k, shape);
  void* p = nullptr;
  gdap_array_data(&p, a);
  cudaMemcpy(p, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();  // pageable copies may still be landing, unordered with gdap's stream
  return a;
}

// A section this test could not allocate: the job ends (the peers would wait in the next collective).
gdap_array* or_abort(gdap_array* a, int64_t r) {
  if (a != nullptr) return a;
  std::fprintf(stderr, "rank %lld: could not allocate a device section: %s\n", static_cast<long long>(r), gdap_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
  return nullptr;
}

std::vector<double> values_of(gdap_array* a, int64_t n) {
  std::vector<double> host(static_cast<size_t>(n));
  void* p = nullptr;
  gdap_array_data(&p, a);
  cudaDeviceSynchronize();
  cudaMemcpy(host.data(), p, host.size() * sizeof(double), cudaMemcpyDeviceToHost);
  return host;
}

void count_wrong(int64_t r, const char* name, int64_t wrong) {
  if (wrong == 0) return;
  std::fprintf(stderr, "rank %lld: %s: %lld wrong elements\n", static_cast<long long>(r), name, static_cast<long long>(wrong));
  ++failures;
}

// The reductions over the same communicator: an all-reduce (sum and max) of a replicated 1000-element
// section holding r * 1000 + i on rank r, then gdap_reduce_axes of a 203 x 203 matrix in row blocks
// holding its global index: every element into a 0-d total, and each row into row blocks (a
// reduce-scatter). Every value is a whole number well inside a double's exact range.
void run_reductions(gdap_comm* comm, int device, int64_t r, int64_t P) {
  constexpr int64_t len = 1000, n = 203;
  for (gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_MAX}) {
    gdap_array* a =
        or_abort(device_section({whole(len)}, device, [&](int64_t i, auto&) { return static_cast<double>(r * len + i); }), r);
    EXPECT_OK(gdap_allreduce(comm, a, op));
    const std::vector<double> got = values_of(a, len);
    int64_t wrong = 0;
    for (int64_t i = 0; i < len; ++i) {
      const double want = op == GDAP_REDUCE_SUM ? static_cast<double>(P * i + len * P * (P - 1) / 2) : static_cast<double>((P - 1) * len + i);
      wrong += got[static_cast<size_t>(i)] != want;
    }
    count_wrong(r, op == GDAP_REDUCE_SUM ? "all-reduce sum" : "all-reduce max", wrong);
    gdap_array_destroy(a);
  }
  const int64_t row0 = r * n / P, rows = (r + 1) * n / P - row0;
  gdap_array* m = or_abort(device_section({block(n, P, r), whole(n)}, device,
                                          [&](int64_t k, auto&) { return static_cast<double>((row0 + k / n) * n + k % n); }), r);
  gdap_array* total = or_abort(device_section({}, device, [](int64_t, auto&) { return -1.0; }), r);
  gdap_array* row_sums = or_abort(device_section({block(n, P, r)}, device, [](int64_t, auto&) { return -1.0; }), r);
  EXPECT_OK(gdap_reduce_axes(comm, m, total, GDAP_REDUCE_SUM, nullptr, 0));
  const int64_t axis = 1;
  EXPECT_OK(gdap_reduce_axes(comm, m, row_sums, GDAP_REDUCE_SUM, &axis, 1));
  count_wrong(r, "reduce_axes total", values_of(total, 1)[0] != static_cast<double>(n * n * (n * n - 1) / 2));
  const std::vector<double> got = values_of(row_sums, rows);
  int64_t wrong = 0;
  for (int64_t i = 0; i < rows; ++i) wrong += got[static_cast<size_t>(i)] != static_cast<double>((row0 + i) * n * n + n * (n - 1) / 2);
  count_wrong(r, "reduce_axes row sums", wrong);
  for (gdap_array* a : {m, total, row_sums}) gdap_array_destroy(a);
}

cudaStream_t comm_stream = nullptr;  // the communicator's (made in main)

void run_all(gdap_comm* comm, int device, int64_t r, int64_t P) {
  constexpr int64_t small = 203, large = 12289;
  run_case(comm, device, r, small, {block(small, P, r), whole(small)}, {whole(small), cyclic(small, P, r)},
           "small rows -> cyclic columns");
  run_case(comm, device, r, large, {block(large, P, r), whole(large)}, {whole(large), block(large, P, r, 2)},
           "large rows -> padded columns");
  for (const halo_test::Case& c : halo_test::cases(P)) {
    std::vector<std::string> wrong;
    halo_test::run_device_rank(c, comm, r, device, wrong, true, comm_stream);
    for (const std::string& w : wrong) std::fprintf(stderr, "rank %lld: halo %s\n", static_cast<long long>(r), w.c_str());
    failures += static_cast<int>(wrong.size());
  }
  run_reductions(comm, device, r, P);
}

// Ranks on different hosts, GDAP_NCCL_PEER=1 on rank 0: binding a halo fails on every rank (direct
// writes need one host), rank 0 naming why; nothing is exchanged.
void refuses_direct_writes(gdap_comm* comm, int64_t r, int64_t P) {
  std::vector<std::string> wrong;
  halo_test::run_device_rank(halo_test::cases(P).front(), comm, r, static_cast<int>(r), wrong, true, comm_stream);
  bool init_failed = false, named = false;
  for (const std::string& w : wrong) {
    init_failed = init_failed || w.find("gdap_halo_exchange_init") != std::string::npos;
    named = named || w.find("GDAP_NCCL_PEER=1 asks for direct writes") != std::string::npos;
  }
  if (!init_failed || (r == 0 && !named)) {
    std::fprintf(stderr, "rank %lld: direct writes between hosts were not refused as they must be%s%s\n",
                 static_cast<long long>(r), wrong.empty() ? "" : ": ", wrong.empty() ? "" : wrong.front().c_str());
    ++failures;
  }
}

// Every rank's verdict, then the end of the program's resources.
int finish(gdap_comm* comm, ncclComm_t nccl, cudaStream_t stream, int size, const char* how) {
  gdap_comm_destroy(comm);
  ncclCommDestroy(nccl);
  cudaStreamDestroy(stream);
  int all = 0, rank = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::printf("redistribute_nccl_mpi on %d processes%s: %s\n", size, how, all == 0 ? "passed" : "FAILED");
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < size) {
    if (rank == 0) std::printf("skipped: %d processes need as many GPUs (%d visible)\n", size, gpus);
    MPI_Finalize();
    return 77;
  }
  // GDAP_TEST_SEPARATE_HOSTS=1: every process plays a host of its own, for gdap (GDAP_TEST_HOST) and
  // for NCCL (NCCL_HOSTID, read at its first call), as ranks of a job over several nodes are; with
  // NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 NCCL then moves everything over its network transport.
  const bool hosts = std::getenv("GDAP_TEST_SEPARATE_HOSTS") != nullptr;
  if (hosts) {
    const std::string host = "gdap-test-host-" + std::to_string(rank);
    setenv("GDAP_TEST_HOST", host.c_str(), 1);
    setenv("NCCL_HOSTID", host.c_str(), 1);
  }
  cudaSetDevice(rank);
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t nccl = nullptr;
  if (ncclCommInitRank(&nccl, size, id, rank) != ncclSuccess) {
    std::fprintf(stderr, "rank %d: ncclCommInitRank failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  comm_stream = stream;
  gdap_comm* comm = nullptr;
  if (gdap_comm_from_nccl(&comm, nccl, stream) != GDAP_SUCCESS) {
    std::fprintf(stderr, "rank %d: %s\n", rank, gdap_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (hosts) {
    // Ranks on different hosts: direct writes cannot be had, and asking for them is an error.
    run_all(comm, rank, rank, size);
    if (rank == 0) setenv("GDAP_NCCL_PEER", "1", 1);
    refuses_direct_writes(comm, rank, size);
    unsetenv("GDAP_NCCL_PEER");
    run_all(comm, rank, rank, size);
    return finish(comm, nccl, stream, size, " (each process a host of its own)");
  }
  if (rank == 0) setenv("GDAP_NCCL_PEER", "1", 1);       // halos: direct writes or an error
  run_all(comm, rank, rank, size);                        // direct writes through CUDA IPC
  unsetenv("GDAP_NCCL_PEER");
  if (rank == size - 1) setenv("GDAP_NCCL_PEER", "0", 1);  // one rank says no: all fall back
  run_all(comm, rank, rank, size);
  unsetenv("GDAP_NCCL_PEER");
  if (rank == 0) setenv("GDAP_NCCL_PEER", "1", 1);
  run_all(comm, rank, rank, size);                        // and take the direct path again
  unsetenv("GDAP_NCCL_PEER");
  return finish(comm, nccl, stream, size, "");
}
