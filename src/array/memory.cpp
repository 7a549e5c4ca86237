// Where a section lives (see memory.hpp).
#include "array/memory.hpp"

#include "array/array.hpp"

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

}  // namespace gdap
