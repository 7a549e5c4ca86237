// Where a section lives, as the data-movement layers group memories: host-accessible (host, pinned
// or managed memory: any CPU code may read it), CUDA device memory, or a kind gdap cannot move;
// and the refusal of an out-of-place call whose output overlaps its input.
#pragma once

struct gdap_array;

namespace gdap {

enum class Memory { none, host, device };

// The memory of `array`'s section; none for NULL.
Memory memory_of(const gdap_array* array);

// "host" or "device" (or "unsupported").
const char* memory_name(Memory memory);

// GDAP_ERR_INVALID_ARGUMENT when `written` may share memory with `read` (array.hpp's
// may_share_memory: a shared byte, not only equal pointers; or a shared byte of one gdap
// shared-memory segment reached through two of this process's mappings): `call` works out of place.
void check_apart(const gdap_array& written, const char* written_name, const gdap_array& read, const char* read_name,
                 const char* call);

}  // namespace gdap
