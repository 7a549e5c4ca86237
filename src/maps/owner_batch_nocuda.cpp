// Builds without CUDA: the map holds no device tables and a device look-up is unsupported.
#include "maps/map.hpp"
#include "maps/owner_batch.hpp"

namespace gdap {

struct DeviceTables {};

void release_device_tables(DeviceTables* tables) noexcept { delete tables; }

std::string owner_batch_cuda(gdap_map&, int64_t*, int64_t*, const int64_t*, int64_t, int, void*) {
  return "gdap was built without CUDA";
}

}  // namespace gdap
