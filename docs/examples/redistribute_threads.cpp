// Two ranks as threads of one process move a 6 x 4 array of doubles from row blocks to column
// blocks with gdap's C API from C++: handles held by std::unique_ptr, each rank on its own thread,
// every call checked. Build: c++ -std=c++20 redistribute_threads.cpp -lgdap -pthread
#include <gdap/gdap.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

void check(gdap_status s) {
  if (s != GDAP_SUCCESS) throw std::runtime_error(std::string(gdap_status_string(s)) + ": " + gdap_last_error());
}

template <typename T, gdap_status (*Destroy)(T*)>
struct Deleter {
  void operator()(T* p) const { Destroy(p); }
};
using Map = std::unique_ptr<gdap_map, Deleter<gdap_map, gdap_map_destroy>>;
using Plan = std::unique_ptr<gdap_plan, Deleter<gdap_plan, gdap_plan_destroy>>;
using Array = std::unique_ptr<gdap_array, Deleter<gdap_array, gdap_array_destroy>>;
using Comm = std::unique_ptr<gdap_comm, Deleter<gdap_comm, gdap_comm_destroy>>;

constexpr int64_t kRows = 6, kCols = 4, kRanks = 2;
constexpr gdap_dtype kF64 = {GDAP_DTYPE_FLOAT, 64, 1};
constexpr gdap_device kCpu = {GDAP_DEVICE_CPU, 0};

// Rank r's block of `size` over `ranks` ranks along one dimension: ceil(size / ranks) each and the
// last rank the rest, the rule of gdap_map_create_grid and Python's gdap.layout.block.
gdap_dim block(int64_t size, int64_t ranks, int64_t r) {
  const int64_t b = (size + ranks - 1) / ranks;
  gdap_dim d = GDAP_DIM_INIT;
  check(gdap_dim_set_block(&d, size, ranks, r, std::min(size, b * r), std::min(size, b * (r + 1))));
  return d;
}

Map collective_map(gdap_comm* comm, const std::vector<gdap_dim>& mine) {
  gdap_map* map = nullptr;
  check(gdap_map_create_collective(&map, comm, static_cast<int64_t>(mine.size()), mine.data()));
  return Map(map);
}

Array section(const std::vector<gdap_dim>& dims) {
  gdap_array* a = nullptr;
  check(gdap_array_create(&a, kF64, kCpu, dims.data(), static_cast<int64_t>(dims.size())));
  return Array(a);
}

// One rank: its row block holds 10 * row + column; afterwards its column block must.
int64_t run_rank(gdap_comm* comm, int64_t r) {
  const std::vector<gdap_dim> rows{block(kRows, kRanks, r), block(kCols, 1, 0)};
  const std::vector<gdap_dim> cols{block(kRows, 1, 0), block(kCols, kRanks, r)};
  const Map from = collective_map(comm, rows), to = collective_map(comm, cols);
  gdap_plan* raw = nullptr;
  check(gdap_plan_create(&raw, from.get(), to.get(), kF64, r));
  const Plan plan(raw);
  const Array src = section(rows), dst = section(cols);
  void *s = nullptr, *d = nullptr;
  check(gdap_array_data(&s, src.get()));
  check(gdap_array_data(&d, dst.get()));
  for (int64_t i = 0; i < kRows / kRanks; ++i) {
    for (int64_t j = 0; j < kCols; ++j) static_cast<double*>(s)[i * kCols + j] = 10.0 * (rows[0].start + i) + j;
  }
  check(gdap_redistribute(comm, plan.get(), src.get(), dst.get()));  // collective
  int64_t wrong = 0;
  const int64_t width = kCols / kRanks;
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < width; ++j) wrong += static_cast<double*>(d)[i * width + j] != 10.0 * i + cols[1].start + j;
  }
  return wrong;
}

}  // namespace

int main() {
  gdap_comm* raw[kRanks] = {};
  check(gdap_comm_create_group(raw, kRanks));
  std::vector<Comm> comms;
  for (gdap_comm* c : raw) comms.emplace_back(c);
  int64_t wrong[kRanks] = {-1, -1};
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      try {
        wrong[r] = run_rank(comms[static_cast<size_t>(r)].get(), r);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %lld: %s\n", static_cast<long long>(r), e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::printf("rows -> columns on %lld threads: %lld and %lld elements wrong\n", static_cast<long long>(kRanks),
              static_cast<long long>(wrong[0]), static_cast<long long>(wrong[1]));
  return wrong[0] == 0 && wrong[1] == 0 ? 0 : 1;
}
