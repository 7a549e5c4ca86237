// Sums and products of 8-bit integers over MPI wrap around, as NumPy, the in-process group and
// NCCL do: gdap_allreduce, gdap_reduce_scatter and gdap_reduce_axes of 256 elements per rank,
// each byte checked against arithmetic modulo 256. Open MPI 4.1's op/avx adds 8- and 16-bit
// integers with saturating SIMD adds once a buffer holds 16 or more (open-mpi/ompi#8045): 3 x 100
// gave 127, not 44. 16-bit integers are not reducible in gdap: refused before MPI sees them.
// mpirun -np 2 or 4; rank 0 prints "small int sums mpi: N ranks, F failures".
#include "mpi_main.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr int64_t kElements = 256;  // per section: far past op/avx's 16

struct Dtype {
  const char* name;
  gdap_dtype dtype;
};

const Dtype kInt8{"int8", {GDAP_DTYPE_INT, 8, 1}}, kUint8{"uint8", {GDAP_DTYPE_UINT, 8, 1}};

// Rank r's byte at global element e: 100 and more, so that two ranks' sum already overflows int8.
uint8_t byte(int64_t rank, int64_t element) { return static_cast<uint8_t>(100 + 37 * rank + element); }

// The op of every rank's byte at `element`, modulo 256 (the same bits for int8 and uint8).
uint8_t wrapped(gdap_reduce_op op, int64_t nranks, int64_t element) {
  uint8_t r = byte(0, element);
  for (int64_t q = 1; q < nranks; ++q) r = static_cast<uint8_t>(op == GDAP_REDUCE_SUM ? r + byte(q, element) : r * byte(q, element));
  return r;
}

gdap_dim block(int64_t size, int64_t nranks, int64_t rank) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, size, nranks, rank, size * rank / nranks, size * (rank + 1) / nranks);
  return d;
}

// Every index on every rank: a replicated dimension (the protocol has no replicated block).
struct Replicated {
  std::vector<int64_t> indices;
  gdap_dim dim = GDAP_DIM_INIT;
  Replicated(int64_t size, int64_t nranks, int64_t rank) : indices(static_cast<size_t>(size)) {
    for (int64_t g = 0; g < size; ++g) indices[static_cast<size_t>(g)] = g;
    gdap_dim_set_unstructured(&dim, size, nranks, rank, indices.data(), size, 0);
  }
};

class Rank {
 public:
  Rank(gdap_comm* comm, int64_t rank, int64_t nranks) : comm_(comm), rank_(rank), nranks_(nranks) {}

  std::vector<std::string> run() {
    for (const Dtype& dt : {kInt8, kUint8}) {
      for (gdap_reduce_op op : {GDAP_REDUCE_SUM, GDAP_REDUCE_PROD}) {
        allreduce(dt, op);
        reduce_scatter(dt, op);
        reduce_axes(dt, op);
      }
    }
    for (const Dtype& dt : {Dtype{"int16", {GDAP_DTYPE_INT, 16, 1}}, Dtype{"uint16", {GDAP_DTYPE_UINT, 16, 1}}}) {
      sixteen_bits_refused(dt);
    }
    return failures_;
  }

 private:
  // A section over `memory` with the dimensions `dims`.
  gdap_array* wrap(std::vector<uint8_t>& memory, gdap_dtype t, const std::vector<gdap_dim>& dims, const std::string& what) {
    gdap_array* a = nullptr;
    if (gdap_array_wrap(&a, memory.data(), t, {GDAP_DEVICE_CPU, 0}, nullptr, dims.data(), static_cast<int64_t>(dims.size())) !=
        GDAP_SUCCESS) {
      fail(what + ": gdap_array_wrap: " + gdap_last_error());
    }
    return a;
  }

  // `got[i]` against the wrapped reduction of global element first + i.
  void compare(const std::vector<uint8_t>& got, int64_t first, gdap_reduce_op op, const std::string& what) {
    int64_t wrong = 0, example = -1;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] == wrapped(op, nranks_, first + static_cast<int64_t>(i))) continue;
      if (wrong++ == 0) example = static_cast<int64_t>(i);
    }
    if (wrong == 0) return;
    fail(what + ": " + std::to_string(wrong) + " of " + std::to_string(got.size()) + " elements wrong; element " +
         std::to_string(first + example) + " is byte " + std::to_string(got[static_cast<size_t>(example)]) +
         ", wrapping gives " + std::to_string(wrapped(op, nranks_, first + example)));
  }

  static std::string name(const Dtype& dt, gdap_reduce_op op) {
    return std::string(dt.name) + (op == GDAP_REDUCE_SUM ? " sum" : " prod");
  }

  void allreduce(const Dtype& dt, gdap_reduce_op op) {
    const std::string what = "gdap_allreduce " + name(dt, op);
    std::vector<uint8_t> memory(static_cast<size_t>(kElements));
    for (int64_t e = 0; e < kElements; ++e) memory[static_cast<size_t>(e)] = byte(rank_, e);
    gdap_array* a = wrap(memory, dt.dtype, {block(kElements, 1, 0)}, what);
    if (gdap_allreduce(comm_, a, op) != GDAP_SUCCESS) fail(what + ": " + gdap_last_error());
    compare(memory, 0, op, what);
    gdap_array_destroy(a);
  }

  // Every rank's source holds the whole array; the result is in blocks.
  void reduce_scatter(const Dtype& dt, gdap_reduce_op op) {
    const std::string what = "gdap_reduce_scatter " + name(dt, op);
    const Replicated everywhere(kElements, nranks_, rank_);
    std::vector<uint8_t> source(static_cast<size_t>(kElements));
    for (int64_t e = 0; e < kElements; ++e) source[static_cast<size_t>(e)] = byte(rank_, e);
    const gdap_dim mine = block(kElements, nranks_, rank_);
    std::vector<uint8_t> result(static_cast<size_t>(mine.stop - mine.start));
    gdap_array* s = wrap(source, dt.dtype, {everywhere.dim}, what);
    gdap_array* r = wrap(result, dt.dtype, {mine}, what);
    if (gdap_reduce_scatter(comm_, s, r, op) != GDAP_SUCCESS) fail(what + ": " + gdap_last_error());
    compare(result, mine.start, op, what);
    gdap_array_destroy(s);
    gdap_array_destroy(r);
  }

  // A P x kElements array, one row per rank, reduced over its rows into a replicated result.
  void reduce_axes(const Dtype& dt, gdap_reduce_op op) {
    const std::string what = "gdap_reduce_axes " + name(dt, op);
    std::vector<uint8_t> source(static_cast<size_t>(kElements));
    for (int64_t e = 0; e < kElements; ++e) source[static_cast<size_t>(e)] = byte(rank_, e);
    const Replicated everywhere(kElements, nranks_, rank_);
    std::vector<uint8_t> result(static_cast<size_t>(kElements));
    gdap_array* s = wrap(source, dt.dtype, {block(nranks_, nranks_, rank_), block(kElements, 1, 0)}, what);
    gdap_array* r = wrap(result, dt.dtype, {everywhere.dim}, what);
    const int64_t rows = 0;
    if (gdap_reduce_axes(comm_, s, r, op, &rows, 1) != GDAP_SUCCESS) fail(what + ": " + gdap_last_error());
    compare(result, 0, op, what);
    gdap_array_destroy(s);
    gdap_array_destroy(r);
  }

  // gdap reduces no 16-bit integer (op/avx would saturate those sums too): refused, section unchanged.
  void sixteen_bits_refused(const Dtype& dt) {
    std::vector<uint8_t> memory(static_cast<size_t>(2 * kElements), 0x5a);
    const std::vector<uint8_t> before = memory;
    gdap_array* a = wrap(memory, dt.dtype, {block(kElements, 1, 0)}, dt.name);
    const gdap_status s = gdap_allreduce(comm_, a, GDAP_REDUCE_SUM);
    const std::string message = gdap_last_error();
    if (s != GDAP_ERR_UNSUPPORTED || message.find("cannot be reduced") == std::string::npos) {
      fail(std::string("gdap_allreduce ") + dt.name + " sum is refused as not reducible, got " + std::to_string(s) + ": " + message);
    }
    if (memory != before) fail(std::string("a refused ") + dt.name + " all-reduce changed the section");
    gdap_array_destroy(a);
  }

  void fail(const std::string& what) { failures_.push_back("rank " + std::to_string(rank_) + ": " + what); }

  gdap_comm* comm_;
  int64_t rank_, nranks_;
  std::vector<std::string> failures_;
};

}  // namespace

int main(int argc, char** argv) {
  return rank_runs::mpi_main(argc, argv, "small int sums mpi", [](gdap_comm* comm, int64_t rank, int64_t nranks) {
    return Rank(comm, rank, nranks).run();
  });
}
