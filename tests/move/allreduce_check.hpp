// gdap_allreduce, one rank's part: every dtype and op on a 5 x 3 section (rank 1's section is
// Fortran-ordered, so strides differ between ranks), each element checked against the reduction
// computed here; then a rank whose section has another shape, and a rank that passes another op:
// every rank is refused, naming it, and no section changes; min and max with a NaN on each rank in
// turn. Shared by the in-process group test and the MPI program. Returns a
// description of each failure. Every rank makes every collective call.
#pragma once

#include <gdap/gdap.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace allreduce_test {

constexpr int64_t kRows = 5, kCols = 3;

// A small value of (rank, element): products over 4 ranks stay below 127.
inline int64_t value(int64_t rank, int64_t element) { return 1 + (rank + element) % 3; }

struct Dtype {
  const char* name;
  gdap_dtype dtype;
};

inline std::vector<Dtype> dtypes() {
  return {{"int8", {GDAP_DTYPE_INT, 8, 1}},     {"uint8", {GDAP_DTYPE_UINT, 8, 1}},
          {"int32", {GDAP_DTYPE_INT, 32, 1}},   {"uint32", {GDAP_DTYPE_UINT, 32, 1}},
          {"int64", {GDAP_DTYPE_INT, 64, 1}},   {"uint64", {GDAP_DTYPE_UINT, 64, 1}},
          {"float32", {GDAP_DTYPE_FLOAT, 32, 1}}, {"float64", {GDAP_DTYPE_FLOAT, 64, 1}}};
}

inline int64_t reduce(gdap_reduce_op op, int64_t nranks, int64_t element) {
  int64_t r = value(0, element);
  for (int64_t k = 1; k < nranks; ++k) {
    const int64_t v = value(k, element);
    r = op == GDAP_REDUCE_SUM ? r + v : op == GDAP_REDUCE_PROD ? r * v : op == GDAP_REDUCE_MIN ? std::min(r, v)
                                                                                                : std::max(r, v);
  }
  return r;
}

inline void store(gdap_dtype t, int64_t v, unsigned char* at) {
  if (t.code == GDAP_DTYPE_FLOAT && t.bits == 32) { const float f = static_cast<float>(v); std::memcpy(at, &f, 4); return; }
  if (t.code == GDAP_DTYPE_FLOAT) { const double d = static_cast<double>(v); std::memcpy(at, &d, 8); return; }
  std::memcpy(at, &v, static_cast<size_t>(t.bits / 8));  // little-endian: the low bytes
}

inline int64_t load(gdap_dtype t, const unsigned char* at) {
  if (t.code == GDAP_DTYPE_FLOAT && t.bits == 32) { float f; std::memcpy(&f, at, 4); return static_cast<int64_t>(f); }
  if (t.code == GDAP_DTYPE_FLOAT) { double d; std::memcpy(&d, at, 8); return static_cast<int64_t>(d); }
  int64_t v = 0;
  std::memcpy(&v, at, static_cast<size_t>(t.bits / 8));
  return v;
}

class Rank {
 public:
  Rank(gdap_comm* comm, int64_t rank, int64_t nranks) : comm_(comm), rank_(rank), nranks_(nranks) {}

  std::vector<std::string> run() {
    for (const Dtype& dt : dtypes()) {
      for (gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_PROD, GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) one(dt, op);
    }
    for (const Dtype& dt : dtypes()) {
      if (dt.dtype.code != GDAP_DTYPE_FLOAT) continue;
      for (gdap_reduce_op op : {GDAP_REDUCE_MIN, GDAP_REDUCE_MAX}) {
        for (int64_t holder = -1; holder < nranks_; ++holder) nan(dt, op, holder);
      }
    }
    mismatch();
    different_ops();
    return failures_;
  }

 private:
  // This rank's section of `rows` x kCols over `memory` (C order, or Fortran order on rank 1).
  gdap_array* wrap(std::vector<unsigned char>& memory, gdap_dtype t, int64_t rows) {
    const int64_t es = t.bits / 8;
    memory.assign(static_cast<size_t>(rows * kCols * es), 0);
    gdap_dim dims[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
    gdap_dim_set_block(&dims[0], rows, 1, 0, 0, rows);
    gdap_dim_set_block(&dims[1], kCols, 1, 0, 0, kCols);
    const int64_t c_order[2] = {kCols, 1}, f_order[2] = {1, rows};
    gdap_array* a = nullptr;
    if (gdap_array_wrap(&a, memory.data(), t, {GDAP_DEVICE_CPU, 0}, rank_ == 1 ? f_order : c_order, dims, 2) !=
        GDAP_SUCCESS) {
      fail("gdap_array_wrap: " + std::string(gdap_last_error()));
    }
    strides_[0] = rank_ == 1 ? 1 : kCols;
    strides_[1] = rank_ == 1 ? rows : 1;
    return a;
  }

  unsigned char* at(std::vector<unsigned char>& memory, gdap_dtype t, int64_t i, int64_t j) {
    return memory.data() + (i * strides_[0] + j * strides_[1]) * (t.bits / 8);
  }

  void one(const Dtype& dt, gdap_reduce_op op) {
    std::vector<unsigned char> memory;
    gdap_array* a = wrap(memory, dt.dtype, kRows);
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) store(dt.dtype, value(rank_, i * kCols + j), at(memory, dt.dtype, i, j));
    }
    const std::string what = std::string(dt.name) + " op " + std::to_string(op);
    if (gdap_allreduce(comm_, a, op) != GDAP_SUCCESS) fail(what + ": " + gdap_last_error());
    int64_t wrong = 0;
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) wrong += load(dt.dtype, at(memory, dt.dtype, i, j)) != reduce(op, nranks_, i * kCols + j);
    }
    if (wrong > 0) fail(what + ": " + std::to_string(wrong) + " of 15 elements wrong");
    gdap_array_destroy(a);
  }

  // Rule (NumPy's np.minimum/np.maximum): min and max of floats propagate NaN, whichever rank holds
  // it. Rank `holder` puts a NaN (-NaN on odd ranks) at element `holder` and at element 14; every
  // rank must then read NaN there and the plain reduction elsewhere. holder -1: every rank's every
  // element is NaN, and so is every result (not the identity). Before: std::min/std::max kept one
  // side, so group max gave NaN only when rank 0 held it, MPI min gave a number no rank held.
  void nan(const Dtype& dt, gdap_reduce_op op, int64_t holder) {
    const gdap_dtype t = dt.dtype;
    const double quiet = std::nan("");
    const double mine = rank_ % 2 ? -quiet : quiet;
    auto is_nan_at = [&](int64_t e) { return holder < 0 || e == holder || e == kRows * kCols - 1; };
    std::vector<unsigned char> memory;
    gdap_array* a = wrap(memory, t, kRows);
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        const int64_t e = i * kCols + j;
        const bool here = holder < 0 || (rank_ == holder && is_nan_at(e));
        const double v = here ? mine : static_cast<double>(value(rank_, e));
        if (t.bits == 32) { const float f = static_cast<float>(v); std::memcpy(at(memory, t, i, j), &f, 4); }
        else std::memcpy(at(memory, t, i, j), &v, 8);
      }
    }
    const std::string what = std::string(dt.name) + (op == GDAP_REDUCE_MIN ? " min" : " max") + " with NaN " +
                             (holder < 0 ? std::string("everywhere") : "on rank " + std::to_string(holder));
    if (gdap_allreduce(comm_, a, op) != GDAP_SUCCESS) fail(what + ": " + gdap_last_error());
    int64_t wrong = 0;
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        const int64_t e = i * kCols + j;
        double got = 0;
        if (t.bits == 32) { float f; std::memcpy(&f, at(memory, t, i, j), 4); got = f; }
        else std::memcpy(&got, at(memory, t, i, j), 8);
        wrong += is_nan_at(e) ? !std::isnan(got) : got != static_cast<double>(reduce(op, nranks_, e));
      }
    }
    if (wrong > 0) fail(what + ": " + std::to_string(wrong) + " of 15 elements wrong");
    gdap_array_destroy(a);
  }

  // The last rank's section has one row more: every rank is refused, naming it, nothing changes.
  void mismatch() {
    if (nranks_ < 2) return;
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
    std::vector<unsigned char> memory;
    gdap_array* a = wrap(memory, f64, rank_ == nranks_ - 1 ? kRows + 1 : kRows);
    for (unsigned char& b : memory) b = 0x5a;
    const std::vector<unsigned char> before = memory;
    const gdap_status s = gdap_allreduce(comm_, a, GDAP_REDUCE_SUM);
    const std::string message = gdap_last_error();
    if (s != GDAP_ERR_INVALID_ARGUMENT) fail("a mismatched shape gives GDAP_ERR_INVALID_ARGUMENT, got " + std::to_string(s));
    if (message.find("rank " + std::to_string(nranks_ - 1)) == std::string::npos) fail("the refusal names the rank: " + message);
    if (memory != before) fail("a refused all-reduce changed a section");
    gdap_array_destroy(a);
  }

  // Rule: every rank of an all-reduce passes the same op. The last rank passes max, the others
  // sum: every rank is refused, naming it and both ops, and nothing changes (each used to end with
  // its own op's values).
  void different_ops() {
    if (nranks_ < 2) return;
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
    std::vector<unsigned char> memory;
    gdap_array* a = wrap(memory, f64, kRows);
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) store(f64, value(rank_, i * kCols + j), at(memory, f64, i, j));
    }
    const std::vector<unsigned char> before = memory;
    const gdap_status s = gdap_allreduce(comm_, a, rank_ == nranks_ - 1 ? GDAP_REDUCE_MAX : GDAP_REDUCE_SUM);
    const std::string message = gdap_last_error();
    if (s != GDAP_ERR_INVALID_ARGUMENT) fail("different ops give GDAP_ERR_INVALID_ARGUMENT, got " + std::to_string(s));
    const std::string named = "rank " + std::to_string(nranks_ - 1) + " passed op max but rank 0 passed op sum";
    if (message.find(named) == std::string::npos) fail("the refusal names the rank and both ops: " + message);
    if (memory != before) fail("an all-reduce refused for different ops changed a section");
    gdap_array_destroy(a);
  }

  void fail(const std::string& what) { failures_.push_back("rank " + std::to_string(rank_) + ": " + what); }

  gdap_comm* comm_;
  int64_t rank_, nranks_;
  int64_t strides_[2] = {kCols, 1};
  std::vector<std::string> failures_;
};

}  // namespace allreduce_test
