// libFuzzer target: arbitrary bytes as raw gdap_dim structs (what a careless C or Fortran caller can
// pass), with struct_size fixed and any 'u' indices pointed at the input itself, through the
// validators, the per-dimension look-ups and gdap_map_create. Nothing may crash or read out of bounds.
#include <gdap/gdap.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int64_t nranks = 1 + data[0] % 8;
  const int64_t ndim = data[1] % 4;
  data += 2;
  size -= 2;
  const size_t count = static_cast<size_t>(nranks * ndim);
  std::vector<gdap_dim> dims(count);
  std::vector<int64_t> pool(64);
  std::memcpy(pool.data(), data, std::min(size, pool.size() * 8));
  for (size_t k = 0; k < count; ++k) {
    const size_t offset = k * sizeof(gdap_dim);
    if (offset < size) std::memcpy(&dims[k], data + offset, std::min(sizeof(gdap_dim), size - offset));
    dims[k].struct_size = sizeof(gdap_dim);
    dims[k].indices = dims[k].indices != nullptr ? pool.data() : nullptr;
    dims[k].num_indices = static_cast<int64_t>(static_cast<uint64_t>(dims[k].num_indices) % (pool.size() + 1));
  }
  for (size_t k = 0; k < count; ++k) {
    int64_t out = 0;
    if (gdap_dim_validate(&dims[k], static_cast<int64_t>(k), -1) == GDAP_SUCCESS) {
      gdap_dim_owned_count(&out, &dims[k]);
      gdap_dim_local_extent(&out, &dims[k]);
      gdap_dim_num_runs(&out, &dims[k]);
      gdap_dim_global_to_local(&out, &dims[k], dims[k].size / 2);
      gdap_dim_local_to_global(&out, &dims[k], 0);
    }
  }
  gdap_map* map = nullptr;
  if (gdap_map_create(&map, nranks, ndim, count ? dims.data() : nullptr) == GDAP_SUCCESS) {
    std::vector<int64_t> global(static_cast<size_t>(ndim), 0), local(global.size());
    int64_t rank = 0, n = 0;
    gdap_map_owner(&rank, local.data(), map, global.data());
    gdap_map_owned_count(&n, map, nranks - 1);
    gdap_map_destroy(map);
  }
  return 0;
}
