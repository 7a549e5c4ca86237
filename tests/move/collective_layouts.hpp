// Gather, scatter, allgather and broadcast as plans to and from gdap_map_create_root's and
// gdap_map_create_replicated's layouts, run by gdap_redistribute. One rank's part, shared by the
// in-process group test (test_collective_layouts.cpp) and the MPI program (collectives_mpi.cpp).
// The array is 7 x 5 float64 holding 100 * row + column; the distributed layout is rows in blocks
// over a grid of P x 1 by default, or block rows x cyclic columns on 2 x 2 for 4 ranks. Returns a
// description of every failure (empty: all right). Every rank makes every collective call,
// whatever failed before, so a failure never leaves the others waiting.
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collectives_test {

constexpr int64_t kShape[2] = {7, 5};

inline double value_at(const int64_t* global) { return 100.0 * static_cast<double>(global[0]) + static_cast<double>(global[1]); }

struct Map {
  gdap_map* map = nullptr;
  ~Map() { gdap_map_destroy(map); }
};
struct Plan {
  gdap_plan* plan = nullptr;
  ~Plan() { gdap_plan_destroy(plan); }
};
struct Array {
  gdap_array* array = nullptr;
  ~Array() { gdap_array_destroy(array); }
};

class Rank {
 public:
  Rank(gdap_comm* comm, int64_t rank, int64_t nranks) : comm_(comm), rank_(rank), nranks_(nranks) {}

  // The distributed layout: rows in blocks (P x 1), or for 4 ranks block rows x cyclic columns.
  std::vector<gdap_dim> distributed_dims() const {
    gdap_dim rows = GDAP_DIM_INIT, cols = GDAP_DIM_INIT;
    if (nranks_ == 4) {
      const int64_t gr = rank_ / 2, gc = rank_ % 2;
      gdap_dim_set_block(&rows, kShape[0], 2, gr, gr * 4, gr == 0 ? 4 : kShape[0]);  // 4 and 3 rows
      gdap_dim_set_cyclic(&cols, kShape[1], 2, gc, gc, 1);
    } else {
      gdap_dim_set_block(&rows, kShape[0], nranks_, rank_, kShape[0] * rank_ / nranks_,
                         kShape[0] * (rank_ + 1) / nranks_);
      gdap_dim_set_block(&cols, kShape[1], 1, 0, 0, kShape[1]);
    }
    return {rows, cols};
  }

  std::vector<std::string> run_all() {
    Map dist, replicated;
    expect(gdap_map_create_collective(&dist.map, comm_, 2, distributed_dims().data()), "collective map");
    expect(gdap_map_create_replicated(&replicated.map, nranks_, 2, kShape), "gdap_map_create_replicated");
    for (int64_t root = 0; root < nranks_; ++root) {
      Map whole;
      expect(gdap_map_create_root(&whole.map, nranks_, 2, kShape, root), "gdap_map_create_root");
      move("gather to root " + std::to_string(root), dist.map, whole.map);
      move("scatter from root " + std::to_string(root), whole.map, dist.map);
      move("broadcast from root " + std::to_string(root), whole.map, replicated.map);
    }
    move("allgather", dist.map, replicated.map);
    return failures_;
  }

 private:
  void expect(gdap_status s, const std::string& what) {
    if (s != GDAP_SUCCESS) failures_.push_back("rank " + std::to_string(rank_) + ": " + what + ": " + gdap_last_error());
  }

  // This rank's section of `map`, gdap-allocated; owned elements filled with their values when
  // `fill`, else -1. The map must outlive it (unstructured indices are the map's).
  void make(Array& a, const gdap_map* map, bool fill) {
    std::vector<gdap_dim> dims(2, gdap_dim GDAP_DIM_INIT);
    for (int64_t i = 0; i < 2; ++i) expect(gdap_map_dim(&dims[static_cast<size_t>(i)], map, rank_, i), "gdap_map_dim");
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
    expect(gdap_array_create(&a.array, f64, {GDAP_DEVICE_CPU, 0}, dims.data(), 2), "gdap_array_create");
    for_each(a, [&](double& x, const int64_t* global) { x = fill ? value_at(global) : -1.0; });
  }

  template <typename F>
  void for_each(const Array& a, F&& f) {
    if (a.array == nullptr) return;
    int64_t shape[2] = {}, local[2], global[2];
    void* data = nullptr;
    gdap_array_shape(shape, a.array);
    gdap_array_data(&data, a.array);
    for (local[0] = 0; local[0] < shape[0]; ++local[0]) {
      for (local[1] = 0; local[1] < shape[1]; ++local[1]) {
        gdap_array_local_to_global(global, a.array, local);
        f(static_cast<double*>(data)[local[0] * shape[1] + local[1]], global);
      }
    }
  }

  // Plans and runs from -> to, then checks that every element this rank holds in `to` arrived.
  void move(const std::string& what, const gdap_map* from, const gdap_map* to) {
    Plan plan;
    Array src, dst;
    expect(gdap_plan_create(&plan.plan, from, to, {GDAP_DTYPE_FLOAT, 64, 1}, rank_), what + ": plan");
    make(src, from, true);
    make(dst, to, false);
    expect(gdap_redistribute(comm_, plan.plan, src.array, dst.array), what + ": gdap_redistribute");
    int64_t wrong = 0, held = 0;
    for_each(dst, [&](double& x, const int64_t* global) {
      ++held;
      wrong += x != value_at(global);
    });
    if (wrong > 0) failures_.push_back("rank " + std::to_string(rank_) + ": " + what + ": " + std::to_string(wrong) +
                                       " of " + std::to_string(held) + " elements wrong");
  }

  gdap_comm* comm_;
  int64_t rank_, nranks_;
  std::vector<std::string> failures_;
};

}  // namespace collectives_test
