// One rank's handles for every kind of collective call, over the public C API only, for the tests
// that mix calls: ranks in different calls (test_mismatched_calls.cpp) and the soak (soak.cpp, on
// an in-process group and over MPI). An array of kPerRank * n float64 elements over n ranks in
// padded blocks (halo width 1 between neighbours), cyclic and replicated; every call's result is
// known in closed form from `base`, so a test can tell a correct result, an untouched section and
// anything else apart, element by element.
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace call_kit {

constexpr int64_t kPerRank = 8;
constexpr gdap_dtype kF64 = {GDAP_DTYPE_FLOAT, 64, 1};
constexpr gdap_device kCpu = {GDAP_DEVICE_CPU, 0};

// The collective calls a kit makes.
enum class Call { barrier, map_collective, redistribute, allreduce, reduce_scatter, reduce_axes, halo, exchange_start };
constexpr Call kCalls[] = {Call::barrier,        Call::map_collective, Call::redistribute, Call::allreduce,
                           Call::reduce_scatter, Call::reduce_axes,    Call::halo,         Call::exchange_start};

inline const char* name(Call c) {
  switch (c) {
    case Call::barrier: return "gdap_comm_barrier";
    case Call::map_collective: return "gdap_map_create_collective";
    case Call::redistribute: return "gdap_redistribute";
    case Call::allreduce: return "gdap_allreduce";
    case Call::reduce_scatter: return "gdap_reduce_scatter";
    case Call::reduce_axes: return "gdap_reduce_axes";
    case Call::halo: return "gdap_halo_exchange";
    case Call::exchange_start: return "gdap_exchange_start";
  }
  return "?";
}

// What a rank breaks in its own arguments of a call (the soak's injected mistakes).
enum class Mistake { none, null_section, wrong_dtype, aliased, bad_op };

inline double* values(gdap_array* a) {
  void* p = nullptr;
  gdap_array_data(&p, a);
  return static_cast<double*>(p);
}

inline int64_t count(gdap_array* a) {
  int64_t ndim = 0, shape[2] = {1, 1};
  gdap_array_ndim(&ndim, a);
  gdap_array_shape(shape, a);
  return ndim == 0 ? 1 : shape[0];
}

class Kit {
 public:
  // Collective (gdap_halo_exchange_init): every rank of `comm` builds its kit at once.
  Kit(gdap_comm* comm, int64_t rank, int64_t n) : comm_(comm), rank_(rank), n_(n), size_(kPerRank * n) {
    std::vector<gdap_dim> padded, cyclic, replicated;
    for (int64_t r = 0; r < n; ++r) padded.push_back(padded_dim(r)), cyclic.push_back(cyclic_dim(r));
    ok_ = gdap_map_create(&padded_map_, n, 1, padded.data()) == GDAP_SUCCESS &&
          gdap_map_create(&cyclic_map_, n, 1, cyclic.data()) == GDAP_SUCCESS &&
          gdap_map_create_replicated(&replicated_map_, n, 1, &size_) == GDAP_SUCCESS &&
          gdap_plan_create(&plan_, padded_map_, cyclic_map_, kF64, rank) == GDAP_SUCCESS &&
          gdap_halo_create(&halo_, padded_map_, kF64, rank, nullptr) == GDAP_SUCCESS;
    gdap_dim mine = padded_dim(rank), cyc = cyclic_dim(rank), rep = GDAP_DIM_INIT, whole = GDAP_DIM_INIT;
    if (ok_) ok_ = gdap_map_dim(&rep, replicated_map_, rank, 0) == GDAP_SUCCESS;
    gdap_dim_set_undistributed(&whole, 4);
    ok_ = ok_ && gdap_array_create(&blocks_, kF64, kCpu, &mine, 1) == GDAP_SUCCESS &&
          gdap_array_create(&cyclic_, kF64, kCpu, &cyc, 1) == GDAP_SUCCESS &&
          gdap_array_create(&replica_, kF64, kCpu, &rep, 1) == GDAP_SUCCESS &&
          gdap_array_create(&section_, kF64, kCpu, &whole, 1) == GDAP_SUCCESS &&
          gdap_array_create(&scalar_, kF64, kCpu, nullptr, 0) == GDAP_SUCCESS &&
          gdap_array_create(&singles_, gdap_dtype{GDAP_DTYPE_FLOAT, 32, 1}, kCpu, &mine, 1) == GDAP_SUCCESS &&
          gdap_array_wrap(&alias_, values(blocks_), kF64, kCpu, nullptr, &cyc, 1) == GDAP_SUCCESS &&
          gdap_array_wrap(&alias_replica_, values(replica_) + 1, kF64, kCpu, nullptr, &cyc, 1) == GDAP_SUCCESS;
    // Collective: every rank reaches it, also when its own handles failed (it then passes NULL).
    ok_ = gdap_halo_exchange_init(&exchange_, comm, halo_, blocks_) == GDAP_SUCCESS && ok_;
  }
  ~Kit() {
    gdap_exchange_destroy(exchange_);
    for (gdap_array* a : {blocks_, cyclic_, replica_, section_, scalar_, singles_, alias_, alias_replica_}) {
      gdap_array_destroy(a);
    }
    gdap_halo_destroy(halo_);
    gdap_plan_destroy(plan_);
    for (gdap_map* m : {padded_map_, cyclic_map_, replicated_map_}) gdap_map_destroy(m);
  }
  Kit(const Kit&) = delete;
  Kit& operator=(const Kit&) = delete;

  bool ok() const { return ok_; }

  // Fills every section with the values of round `base` (the same on every rank).
  void fill(double base) {
    base_ = base;
    for (int64_t k = 0; k < count(blocks_); ++k) values(blocks_)[k] = owned_block(k) ? value(global_of_block(k)) : -1;
    for (int64_t k = 0; k < count(cyclic_); ++k) values(cyclic_)[k] = -1;
    for (int64_t g = 0; g < size_; ++g) values(replica_)[g] = value(g) + static_cast<double>(rank_);
    for (int64_t j = 0; j < 4; ++j) values(section_)[j] = static_cast<double>((rank_ + 1) * j) + base;
    values(scalar_)[0] = -1;
    before_ = snapshot();
  }

  // Makes the call with `mistake` in this rank's arguments.
  gdap_status call(Call c, Mistake mistake = Mistake::none) {
    const bool null = mistake == Mistake::null_section;
    gdap_array* blocks = null ? nullptr : mistake == Mistake::wrong_dtype ? singles_ : blocks_;
    switch (c) {
      case Call::barrier: return gdap_comm_barrier(comm_);
      case Call::map_collective: {
        const gdap_dim mine = padded_dim(rank_);
        gdap_map* map = nullptr;
        const gdap_status s = gdap_map_create_collective(&map, comm_, null ? -1 : 1, &mine);
        gdap_map_destroy(map);
        return s;
      }
      case Call::redistribute:
        return gdap_redistribute(comm_, plan_, blocks, mistake == Mistake::aliased ? alias_ : cyclic_);
      case Call::allreduce:
        return gdap_allreduce(comm_, null ? nullptr : section_, op(mistake));
      case Call::reduce_scatter:
        return gdap_reduce_scatter(comm_, null ? nullptr : replica_,
                                   mistake == Mistake::aliased ? alias_replica_ : cyclic_, op(mistake));
      case Call::reduce_axes:
        return gdap_reduce_axes(comm_, blocks, scalar_, op(mistake), nullptr, 0);
      case Call::halo: return gdap_halo_exchange(comm_, halo_, blocks);
      case Call::exchange_start: return gdap_exchange_start(null ? nullptr : exchange_);
    }
    return GDAP_ERR_INTERNAL;
  }

  // Elements (by name and value) that differ from the call's result (`done`: it succeeded) or
  // from what they held before it (it failed: nothing may have changed).
  std::vector<std::string> wrong(Call c, bool done) const {
    std::vector<std::string> out;
    const std::vector<double> now = snapshot(), expected = done ? result(c) : before_;
    for (size_t k = 0; k < now.size(); ++k) {
      if (now[k] != expected[k]) out.push_back(element_name(k) + " = " + std::to_string(now[k]));
    }
    return out;
  }

  // Elements that hold neither their old value nor the call's result (a partial write of right
  // values passes: the soak's late ranks may see one).
  std::vector<std::string> mixed(Call c) const {
    std::vector<std::string> out;
    const std::vector<double> now = snapshot(), expected = result(c);
    for (size_t k = 0; k < now.size(); ++k) {
      if (now[k] != expected[k] && now[k] != before_[k]) out.push_back(element_name(k) + " = " + std::to_string(now[k]));
    }
    return out;
  }

 private:
  gdap_dim padded_dim(int64_t r) const {
    gdap_dim d = GDAP_DIM_INIT;
    const int64_t lo = r > 0 ? 1 : 0, hi = r < n_ - 1 ? 1 : 0;
    gdap_dim_set_block(&d, size_, n_, r, kPerRank * r - lo, kPerRank * (r + 1) + hi);
    if (n_ > 1) gdap_dim_set_padding(&d, lo, hi);
    return d;
  }
  gdap_dim cyclic_dim(int64_t r) const {
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_cyclic(&d, size_, n_, r, r, 0);
    return d;
  }
  gdap_reduce_op op(Mistake m) const { return m == Mistake::bad_op ? static_cast<gdap_reduce_op>(99) : GDAP_REDUCE_SUM; }
  double value(int64_t g) const { return static_cast<double>(g) + base_; }
  int64_t lower() const { return rank_ > 0 ? 1 : 0; }
  int64_t global_of_block(int64_t k) const { return kPerRank * rank_ - lower() + k; }
  bool owned_block(int64_t k) const { return k >= lower() && k < lower() + kPerRank; }

  // Every element of this rank's sections, in one list: the padded block, the cyclic section, the
  // small section, the 0-d result, the replica (only ever read).
  std::vector<double> snapshot() const {
    std::vector<double> all;
    for (gdap_array* a : {blocks_, cyclic_, section_, scalar_, replica_}) {
      if (a == nullptr) continue;
      all.insert(all.end(), values(a), values(a) + count(a));
    }
    return all;
  }
  std::string element_name(size_t k) const {
    const size_t nb = static_cast<size_t>(count(blocks_)), nc = static_cast<size_t>(count(cyclic_));
    if (k < nb) return "rank " + std::to_string(rank_) + " blocks[" + std::to_string(k) + "]";
    if (k < nb + nc) return "rank " + std::to_string(rank_) + " cyclic[" + std::to_string(k - nb) + "]";
    if (k < nb + nc + 4) return "rank " + std::to_string(rank_) + " section[" + std::to_string(k - nb - nc) + "]";
    if (k == nb + nc + 4) return "rank " + std::to_string(rank_) + " scalar";
    return "rank " + std::to_string(rank_) + " replica[" + std::to_string(k - nb - nc - 5) + "]";
  }

  // Every element after call `c` succeeded everywhere.
  std::vector<double> result(Call c) const {
    std::vector<double> r = before_;
    const size_t nb = static_cast<size_t>(count(blocks_)), nc = static_cast<size_t>(count(cyclic_));
    const double n = static_cast<double>(n_);
    switch (c) {
      case Call::redistribute:
        for (size_t k = 0; k < nc; ++k) r[nb + k] = value(rank_ + static_cast<int64_t>(k) * n_);
        break;
      case Call::reduce_scatter:  // sum over ranks of value(g) + rank
        for (size_t k = 0; k < nc; ++k) r[nb + k] = n * value(rank_ + static_cast<int64_t>(k) * n_) + n * (n - 1) / 2;
        break;
      case Call::allreduce:  // sum over ranks of (rank + 1) * j + base
        for (size_t j = 0; j < 4; ++j) r[nb + nc + j] = static_cast<double>(j) * n * (n + 1) / 2 + n * base_;
        break;
      case Call::reduce_axes: {
        const double g = static_cast<double>(size_);
        r[nb + nc + 4] = g * (g - 1) / 2 + g * base_;
        break;
      }
      case Call::halo:
      case Call::exchange_start:
        for (size_t k = 0; k < nb; ++k) r[k] = value(global_of_block(static_cast<int64_t>(k)));
        break;
      default: break;
    }
    return r;
  }

  gdap_comm* comm_;
  int64_t rank_, n_, size_;
  bool ok_ = false;
  double base_ = 0;
  std::vector<double> before_;
  gdap_map *padded_map_ = nullptr, *cyclic_map_ = nullptr, *replicated_map_ = nullptr;
  gdap_plan* plan_ = nullptr;
  gdap_halo* halo_ = nullptr;
  gdap_exchange* exchange_ = nullptr;
  gdap_array *blocks_ = nullptr, *cyclic_ = nullptr, *replica_ = nullptr, *section_ = nullptr, *scalar_ = nullptr,
             *singles_ = nullptr, *alias_ = nullptr, *alias_replica_ = nullptr;
};

}  // namespace call_kit
