// device.hpp without CUDA: device arrays cannot exist in this build, so nothing here is reached
// by valid input; every call says so rather than pretending.
#include "core/error.hpp"
#include "move/device.hpp"

namespace gdap::move {

namespace {
[[noreturn]] void no_cuda() { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without CUDA"); }
}  // namespace

struct DeviceBatch::Impl {};
DeviceBatch::DeviceBatch() = default;
DeviceBatch::~DeviceBatch() = default;
bool DeviceBatch::holds(const std::vector<int64_t>&) const { return false; }
void DeviceBatch::upload(std::vector<int64_t>, const std::vector<DeviceCopy>&, void*, const BatchFlags*) { no_cuda(); }
void DeviceBatch::launch(void*, uint32_t) const { no_cuda(); }
int64_t DeviceBatch::size() const { return 0; }
DeviceBuffer::~DeviceBuffer() = default;
char* DeviceBuffer::reserve(int64_t) { no_cuda(); }
DeviceEvent::DeviceEvent() { no_cuda(); }
DeviceEvent::~DeviceEvent() = default;
void DeviceEvent::record(void*) { no_cuda(); }
void DeviceEvent::wait_on(void*) const { no_cuda(); }
DeviceStream::DeviceStream() { no_cuda(); }
DeviceStream::~DeviceStream() = default;
int current_device() { no_cuda(); }
void set_device(int) { no_cuda(); }
DeviceScope::DeviceScope(int) noexcept {}
DeviceScope::~DeviceScope() = default;
void enable_peer_access(int, int) { no_cuda(); }
void synchronize_stream(void*) { no_cuda(); }
void copy_bytes(void*, const void*, int64_t) { no_cuda(); }
void check_cuda(int code, const char* what) {
  if (code != 0) fail(GDAP_ERR_DEVICE, "{} failed with code {}", what, code);
}

}  // namespace gdap::move
