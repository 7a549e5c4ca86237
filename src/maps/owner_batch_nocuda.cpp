// Builds without CUDA: the map holds no device tables and a device look-up is unsupported.
#include "core/error.hpp"
#include "maps/map.hpp"
#include "maps/owner_batch.hpp"

namespace gdap {

struct DeviceTables {};

void release_device_tables(DeviceTables* tables) noexcept { delete tables; }

std::string owner_batch_cuda(const gdap_map&, int64_t*, int64_t*, const int64_t*, int64_t, int, void*) {
  fail(GDAP_ERR_UNSUPPORTED, "gdap was built without CUDA: pass arrays in host memory (GDAP_DEVICE_CPU)");
}

}  // namespace gdap
