// The cuda/ folder without CUDA: device arrays cannot exist in this build, so nothing here is
// reached by valid input; every call says so rather than pretending.
#include "core/error.hpp"
#include "cuda/buffer.hpp"
#include "cuda/copy_kernel.hpp"
#include "cuda/device.hpp"
#include "cuda/stream.hpp"

namespace gdap::cuda {

namespace {
[[noreturn]] void no_cuda() { fail(GDAP_ERR_UNSUPPORTED, "this gdap was built without CUDA"); }
}  // namespace

std::string error_text(int code, const std::string& what) { return fmt::format("{} failed with code {}", what, code); }
void fail_cuda(int code, const std::string& what, gdap_status status) { throw Error(status, error_text(code, what)); }
void check_cuda(int code, const char* what) {
  if (code != 0) fail_cuda(code, what);
}
int current_device() { no_cuda(); }
void set_device(int) { no_cuda(); }
DeviceScope::DeviceScope(int) noexcept {}
int DeviceScope::restore() noexcept { return 0; }
CallerDevice::CallerDevice() noexcept {}
CallerDevice::~CallerDevice() {}
void enable_peer_access(int, int) { no_cuda(); }
void synchronize_stream(void*) { no_cuda(); }
void copy_bytes(void*, const void*, int64_t) { no_cuda(); }
bool allocation_of(const void*, void*&, int64_t&) { return false; }
void copy_2d_async(void*, int64_t, const void*, int64_t, int64_t, int64_t, void*) { no_cuda(); }

struct DeviceBatch::Impl {};
DeviceBatch::DeviceBatch() = default;
DeviceBatch::~DeviceBatch() = default;
bool DeviceBatch::holds(const std::vector<int64_t>&) const { return false; }
void DeviceBatch::upload(std::vector<int64_t>, const std::vector<DeviceCopy>&, void*, const BatchFlags*) { no_cuda(); }
void DeviceBatch::launch(void*, uint32_t) const { no_cuda(); }
int64_t DeviceBatch::size() const { return 0; }
DeviceBuffer::~DeviceBuffer() = default;
char* DeviceBuffer::reserve(int64_t) { no_cuda(); }
StreamBuffer::StreamBuffer(int64_t, void*) { no_cuda(); }
StreamBuffer::~StreamBuffer() = default;
DeviceEvent::DeviceEvent() { no_cuda(); }
DeviceEvent::~DeviceEvent() = default;
void DeviceEvent::record(void*) { no_cuda(); }
void DeviceEvent::wait_on(void*) const { no_cuda(); }
DeviceStream::DeviceStream() { no_cuda(); }
DeviceStream::~DeviceStream() = default;

}  // namespace gdap::cuda
