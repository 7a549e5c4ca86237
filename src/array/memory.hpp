// Where a section lives, as the data-movement layers group memories: host-accessible (host, pinned
// or managed memory: any CPU code may read it), CUDA device memory, or a kind gdap cannot move.
#pragma once

struct gdap_array;

namespace gdap {

enum class Memory { none, host, device };

// The memory of `array`'s section; none for NULL.
Memory memory_of(const gdap_array* array);

// "host" or "device" (or "unsupported").
const char* memory_name(Memory memory);

}  // namespace gdap
