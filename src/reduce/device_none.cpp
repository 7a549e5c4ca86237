// The device reductions without CUDA: device sections cannot exist in this build (their checks
// refuse them first), so this is never reached by valid input; it says so rather than pretending.
#include "core/error.hpp"
#include "reduce/device.hpp"

namespace gdap::reduce {

void reduce_on_device(exchange::Engine&, gdap_comm&, const DeviceReduction&) {
  fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without CUDA");
}

}  // namespace gdap::reduce
