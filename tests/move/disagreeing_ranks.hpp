// Ranks that make the same collective call with arguments that disagree: the last rank's dtype,
// map, halo widths, gemm shape or alpha differs from the others'. These calls used to return
// GDAP_SUCCESS with wrong values, read past a peer's buffer or abort an MPI job (hunts 15a, 15b).
// Rule: every rank returns GDAP_ERR_INVALID_ARGUMENT naming the odd rank and what differs ("rank 1
// passed source dtype float32 but rank 0 float64"), no element of any section changes (nothing
// moved), and the communicator stays usable (a barrier then succeeds). One table (rank_runs.hpp):
// test_disagreeing_ranks runs it on an in-process group, disagreeing_mpi over MPI.
#pragma once

#include "rank_runs.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace disagreeing {

constexpr gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
constexpr gdap_dtype kF32{GDAP_DTYPE_FLOAT, 32, 1};
constexpr gdap_device kCpu{GDAP_DEVICE_CPU, 0};
constexpr double kUntouched = -7;  // every element before a call; still there after a refusal

// One rank's view of the table: its communicator, rank and rank count, and its failures.
struct Rank {
  gdap_comm* comm;
  int64_t rank, n;
  std::vector<std::string> failures;

  bool odd() const { return rank == n - 1; }
  void fail(const std::string& what) { failures.push_back("rank " + std::to_string(rank) + ": " + what); }
  void check(bool ok, const std::string& what) {
    if (!ok) fail(what);
  }
};

// Rank r's block of `size` elements over n ranks, with `pad` cells of padding towards each neighbour.
inline gdap_dim block(int64_t size, int64_t n, int64_t r, int64_t pad = 0) {
  gdap_dim d = GDAP_DIM_INIT;
  const int64_t lo = r > 0 ? pad : 0, hi = r < n - 1 ? pad : 0;
  gdap_dim_set_block(&d, size, n, r, r * size / n - lo, (r + 1) * size / n + hi);
  if (pad > 0) gdap_dim_set_padding(&d, lo, hi);
  return d;
}

inline gdap_dim whole(int64_t size) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, size);
  return d;
}

using MapPtr = std::unique_ptr<gdap_map, decltype(&gdap_map_destroy)>;

// The map of every rank's dims(q), ndim dimensions each (null if gdap refused it).
inline MapPtr map_of(int64_t n, int64_t ndim, const std::function<std::vector<gdap_dim>(int64_t q)>& dims) {
  std::vector<gdap_dim> all;
  for (int64_t q = 0; q < n; ++q) {
    for (const gdap_dim& d : dims(q)) all.push_back(d);
  }
  gdap_map* m = nullptr;
  gdap_map_create(&m, n, ndim, all.data());
  return MapPtr(m, gdap_map_destroy);
}

// A host section of float32 or float64 whose elements start at `value`.
class Section {
 public:
  Section(gdap_dtype dtype, const std::vector<gdap_dim>& dims, double value = kUntouched) : dtype_(dtype) {
    gdap_array_create(&array_, dtype, kCpu, dims.empty() ? nullptr : dims.data(), static_cast<int64_t>(dims.size()));
    if (array_ != nullptr) gdap_array_data(&data_, array_);
    for (const gdap_dim& d : dims) {
      int64_t extent = 0;
      gdap_dim_local_extent(&extent, &d);
      count_ *= extent;
    }
    for (int64_t i = 0; data_ != nullptr && i < count_; ++i) set(i, value);
  }
  ~Section() { gdap_array_destroy(array_); }
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;

  gdap_array* get() const { return array_; }
  bool made() const { return data_ != nullptr; }
  double at(int64_t i) const { return dtype_.bits == 64 ? static_cast<double*>(data_)[i] : static_cast<float*>(data_)[i]; }
  void set(int64_t i, double v) {
    if (dtype_.bits == 64) {
      static_cast<double*>(data_)[i] = v;
    } else {
      static_cast<float*>(data_)[i] = static_cast<float>(v);
    }
  }
  // The indices in [from, to) whose element is no longer `value`.
  std::vector<int64_t> changed(int64_t from, int64_t to, double value = kUntouched) const {
    std::vector<int64_t> out;
    for (int64_t i = from; made() && i < to; ++i) {
      if (at(i) != value) out.push_back(i);
    }
    return out;
  }
  std::vector<int64_t> changed() const { return changed(0, count_); }

 private:
  gdap_dtype dtype_;
  gdap_array* array_ = nullptr;
  void* data_ = nullptr;
  int64_t count_ = 1;
};

// The call must be refused with GDAP_ERR_INVALID_ARGUMENT whose message holds each of `named`;
// then a barrier must succeed.
inline void expect_refused(Rank& me, const char* call, gdap_status got, const std::string& error,
                           const std::vector<std::string>& named) {
  me.check(got == GDAP_ERR_INVALID_ARGUMENT,
           std::string(call) + " returned " + gdap_status_string(got) + ", not INVALID_ARGUMENT: " + error);
  for (const std::string& n : named) {
    me.check(error.find(n) != std::string::npos, std::string(call) + " does not name '" + n + "': " + error);
  }
  const gdap_status barrier = gdap_comm_barrier(me.comm);
  me.check(barrier == GDAP_SUCCESS, std::string("barrier after ") + call + ": " + gdap_last_error());
}

// "rank <odd> passed <what> <theirs> but rank 0 <first>"
inline std::string passed(const Rank& me, const std::string& what, const std::string& theirs, const std::string& first) {
  return "rank " + std::to_string(me.n - 1) + " passed " + what + " " + theirs + " but rank 0 " + first;
}

inline gdap_dtype odd_dtype(const Rank& me) { return me.odd() ? kF32 : kF64; }

inline void reduce_scatter_dtypes(Rank& me) {
  int64_t shape = 8;
  gdap_map* replicated = nullptr;
  gdap_map_create_replicated(&replicated, me.n, 1, &shape);
  const MapPtr keep(replicated, gdap_map_destroy);
  gdap_dim d = GDAP_DIM_INIT;
  gdap_map_dim(&d, replicated, me.rank, 0);
  const Section source(odd_dtype(me), {d}, 1), result(odd_dtype(me), {block(8, me.n, me.rank)});
  const gdap_status s = gdap_reduce_scatter(me.comm, source.get(), result.get(), GDAP_REDUCE_SUM);
  const std::string error = gdap_last_error();
  me.check(result.changed().empty(), "gdap_reduce_scatter of other dtypes changed the result");
  expect_refused(me, "gdap_reduce_scatter", s, error, {passed(me, "source dtype", "float32", "float64"), "gdap_reduce_scatter"});
}

inline void reduce_axes_dtypes(Rank& me) {
  const Section source(odd_dtype(me), {block(8, me.n, me.rank)}, 1), result(odd_dtype(me), {});
  const gdap_status s = gdap_reduce_axes(me.comm, source.get(), result.get(), GDAP_REDUCE_SUM, nullptr, 0);
  const std::string error = gdap_last_error();
  me.check(result.changed().empty(), "gdap_reduce_axes of other dtypes changed the result");
  expect_refused(me, "gdap_reduce_axes", s, error, {passed(me, "source dtype", "float32", "float64"), "gdap_reduce_axes"});
}

// This rank's halo exchange of a block map of `size` with `pad` cells of padding, its halo made for
// `dtype` with `widths` (NULL: all padding); one-shot, or bound (init; a start only if init passed).
// Owned cells hold 1, the padding kUntouched, which it must still hold after a refusal.
struct HaloCase {
  int64_t size, pad;
  gdap_dtype dtype;
  const int64_t* widths;
};

inline void halo_disagrees(Rank& me, const HaloCase& c, bool bound, const std::vector<std::string>& named) {
  const MapPtr map = map_of(me.n, 1, [&](int64_t q) { return std::vector<gdap_dim>{block(c.size, me.n, q, c.pad)}; });
  gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
  options.widths = c.widths;
  gdap_halo* halo = nullptr;
  const gdap_status made = gdap_halo_create(&halo, map.get(), c.dtype, me.rank, &options);
  me.check(made == GDAP_SUCCESS, std::string("gdap_halo_create: ") + gdap_last_error());
  const gdap_dim d = block(c.size, me.n, me.rank, c.pad);
  Section local(c.dtype, {d});
  const int64_t first = me.rank * c.size / me.n - d.start, owned = (me.rank + 1) * c.size / me.n - me.rank * c.size / me.n;
  for (int64_t i = 0; i < owned; ++i) local.set(first + i, 1);
  gdap_status s = GDAP_SUCCESS;
  if (bound) {
    gdap_exchange* exchange = nullptr;
    s = gdap_halo_exchange_init(&exchange, me.comm, halo, local.get());
    if (s == GDAP_SUCCESS) gdap_exchange_destroy(exchange);  // a start would read past a peer's section
  } else {
    s = gdap_halo_exchange(me.comm, halo, local.get());
  }
  const std::string error = gdap_last_error();
  const int64_t extent = (d.stop - d.start);
  const bool untouched = local.changed(0, first).empty() && local.changed(first + owned, extent).empty();
  me.check(untouched, std::string(bound ? "gdap_halo_exchange_init" : "gdap_halo_exchange") + " changed the padding");
  gdap_halo_destroy(halo);
  expect_refused(me, bound ? "gdap_halo_exchange_init" : "gdap_halo_exchange", s, error, named);
}

inline void halos(Rank& me) {
  const int64_t one = 1, two = 2;
  for (bool bound : {false, true}) {
    const std::string other_map = "rank " + std::to_string(me.n - 1) + " passed halo map digest";
    halo_disagrees(me, {16, 1, odd_dtype(me), nullptr}, bound, {passed(me, "halo dtype", "float32", "float64")});
    // Padding 1 on the odd rank's map, 3 on the others' (this read past the odd rank's section).
    halo_disagrees(me, {16, me.odd() ? 1 : 3, kF64, nullptr}, bound, {other_map, "the same map"});
    halo_disagrees(me, {me.odd() ? 20 : 16, 1, kF64, nullptr}, bound, {other_map});
    halo_disagrees(me, {16, 2, kF64, me.odd() ? &one : &two}, bound, {passed(me, "halo widths", "(1)", "(2)")});
  }
}

// A gemm of M x K times K x 4, rows in blocks and columns whole; C starts kUntouched and must keep
// it when refused. The odd rank plans its own M, K and panel width and passes its own alpha.
struct GemmCase {
  int64_t m, k, odd_m, odd_k;
  double odd_alpha = 1;          // the others' is 1
  int64_t odd_panel_width = 0;   // the others' is 0, the default
};

inline void gemm_disagrees(Rank& me, const GemmCase& c, const char* call, const std::vector<std::string>& named) {
  const int64_t m = me.odd() ? c.odd_m : c.m, k = me.odd() ? c.odd_k : c.k, n = 4;
  const auto rows_by_cols = [&](int64_t rows, int64_t cols) {
    return map_of(me.n, 2, [&](int64_t q) { return std::vector<gdap_dim>{block(rows, me.n, q), whole(cols)}; });
  };
  const MapPtr a = rows_by_cols(m, k), b = rows_by_cols(k, n), cm = rows_by_cols(m, n);
  const Section sa(kF64, {block(m, me.n, me.rank), whole(k)}, 1), sb(kF64, {block(k, me.n, me.rank), whole(n)}, 1);
  const Section sc(kF64, {block(m, me.n, me.rank), whole(n)});
  gdap_gemm_options options = GDAP_GEMM_OPTIONS_INIT;
  options.panel_width = me.odd() ? c.odd_panel_width : 0;
  gdap_gemm* g = nullptr;
  gdap_status s = gdap_gemm_create(&g, me.comm, a.get(), b.get(), cm.get(), kF64, &options);
  if (s == GDAP_SUCCESS) s = gdap_gemm_execute(me.comm, g, me.odd() ? c.odd_alpha : 1, sa.get(), sb.get(), 0, sc.get());
  const std::string error = gdap_last_error();
  gdap_gemm_destroy(g);
  me.check(sc.changed().empty(), std::string(call) + " changed C");
  expect_refused(me, call, s, error, named);
}

inline void gemms(Rank& me) {
  gemm_disagrees(me, {8, 4, 8, 6}, "gdap_gemm_create", {passed(me, "K", "6", "4"), "gdap_gemm_create"});
  gemm_disagrees(me, {8, 4, 12, 4}, "gdap_gemm_create", {passed(me, "M", "12", "8")});
  gemm_disagrees(me, {8, 4, 8, 4, 2}, "gdap_gemm_execute", {passed(me, "alpha", "2", "1"), "gdap_gemm_execute"});
  // Rank 0 passed 0, the default: the refusal says so (it read "rank 0 1024").
  gemm_disagrees(me, {8, 4, 8, 4, 1, 3}, "gdap_gemm_create", {passed(me, "panel width", "3", "0 (the default, 1024)")});
}

// The whole table on one rank.
inline std::vector<std::string> body(gdap_comm* comm, int64_t rank, int64_t n) {
  Rank me{comm, rank, n, {}};
  reduce_scatter_dtypes(me);
  reduce_axes_dtypes(me);
  halos(me);
  gemms(me);
  return me.failures;
}

}  // namespace disagreeing
