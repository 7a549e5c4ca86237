// Where a section lives (see memory.hpp).
#include "array/memory.hpp"

#include "array/array.hpp"
#include "core/error.hpp"

namespace gdap {

Memory memory_of(const gdap_array* array) {
  if (array == nullptr) return Memory::none;
  switch (array->section.device.type) {
    case GDAP_DEVICE_CPU:
    case GDAP_DEVICE_CUDA_HOST:
    case GDAP_DEVICE_CUDA_MANAGED:
      return Memory::host;
    case GDAP_DEVICE_CUDA:
      return Memory::device;
    default:
      return Memory::none;
  }
}

const char* memory_name(Memory memory) {
  switch (memory) {
    case Memory::host: return "host";
    case Memory::device: return "device";
    case Memory::none: break;
  }
  return "unsupported";
}

void check_apart(const gdap_array& written, const char* written_name, const gdap_array& read, const char* read_name,
                 const char* call) {
  if (!may_share_memory(written, read)) return;
  fail(GDAP_ERR_INVALID_ARGUMENT, "{} shares memory with {} (their bytes overlap): {} works out of place, reading {} "
       "while it writes {}; pass separate arrays", written_name, read_name, call, read_name, written_name);
}

}  // namespace gdap
