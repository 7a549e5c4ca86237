// The IPC handle: the fixed-size byte string (GDAP_IPC_HANDLE_SIZE bytes) that lets another process
// of the same node open a local section in place. This header is its one definition: the layout
// (HandleData, asserted offsets), the checksum, the node identity, and the checks an importer runs
// before it touches any memory. docs/ipc.md describes the same layout for readers of the bytes.
#pragma once

#include <gdap/gdap.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gdap::ipc {

// Where the memory behind a handle lives.
enum class Kind : uint32_t { shm = 1, cuda = 2 };

// One dimension dictionary, with the fields of gdap_dim a handle can carry ('b' and 'c').
struct DimRecord {
  int32_t dist_type;
  int32_t periodic;
  uint32_t given;
  int32_t reserved;
  int64_t size;
  int64_t proc_grid_size;
  int64_t proc_grid_rank;
  int64_t start;
  int64_t stop;
  int64_t padding[2];
  int64_t block_size;
};
static_assert(sizeof(DimRecord) == 80);

// The handle's bytes, in the exporter's (native) byte order: both ends run on one node.
struct HandleData {
  char magic[8];                // GDAP_IPC_MAGIC, no terminating NUL
  uint32_t format_version;      // GDAP_IPC_FORMAT_VERSION
  uint32_t handle_size;         // GDAP_IPC_HANDLE_SIZE
  uint64_t checksum;            // FNV-1a 64 of all bytes with this field zero
  uint32_t kind;                // a Kind
  int32_t ndim;                 // 0 .. GDAP_IPC_MAX_NDIM
  char protocol_version[16];    // the array's protocol version, NUL-terminated
  char hostname[64];            // exporter's host name, NUL-terminated (truncated if longer)
  char boot_id[48];             // /proc/sys/kernel/random/boot_id, NUL-terminated
  int64_t exporter_pid;         // the exporting process
  gdap_dtype dtype;             // DLPack dtype
  int32_t device_type;          // exporter's gdap_device
  int32_t device_id;
  int32_t readonly;             // non-zero: importers get a read-only array
  int64_t offset;               // bytes from the allocation/segment base to element (0, ..., 0)
  int64_t allocation_bytes;     // size of the CUDA allocation / shm segment when exported
  uint64_t shm_inode;           // the segment's inode (shm): a segment re-created under the name differs
  uint64_t shm_device;          // the st_dev of /dev/shm
  char shm_name[256];           // "/name" as given to shm_open (shm), NUL-terminated
  unsigned char cuda_ipc[64];   // cudaIpcMemHandle_t of the allocation base (cuda)
  unsigned char device_uuid[16];// the GPU's UUID (cuda): ordinals differ between processes
  int64_t shape[GDAP_IPC_MAX_NDIM];
  int64_t strides[GDAP_IPC_MAX_NDIM];  // in elements
  DimRecord dims[GDAP_IPC_MAX_NDIM];
  uint64_t exporter_start;      // the exporter's start time (/proc/<pid>/stat field 22): a reused pid differs
  uint32_t shm_uid;             // the segment's owner at export (shm)
  uint32_t shm_mode;            // the segment's permission bits at export (shm)
  unsigned char reserved[GDAP_IPC_HANDLE_SIZE - 1336];  // zero
};
static_assert(sizeof(HandleData) == GDAP_IPC_HANDLE_SIZE);
static_assert(offsetof(HandleData, checksum) == 16 && offsetof(HandleData, kind) == 24);
static_assert(offsetof(HandleData, protocol_version) == 32 && offsetof(HandleData, hostname) == 48);
static_assert(offsetof(HandleData, boot_id) == 112 && offsetof(HandleData, exporter_pid) == 160);
static_assert(offsetof(HandleData, dtype) == 168 && offsetof(HandleData, offset) == 184);
static_assert(offsetof(HandleData, shm_name) == 216 && offsetof(HandleData, cuda_ipc) == 472);
static_assert(offsetof(HandleData, device_uuid) == 536 && offsetof(HandleData, shape) == 552);
static_assert(offsetof(HandleData, strides) == 616 && offsetof(HandleData, dims) == 680);
static_assert(offsetof(HandleData, exporter_start) == 1320 && offsetof(HandleData, shm_uid) == 1328);
static_assert(offsetof(HandleData, reserved) == 1336);

// Calls f(record's field, dictionary's field) for every field a record carries: how a record and a
// gdap_dim copy into each other, either way.
template <typename Record, typename Dim, typename F>
void for_each_field(Record& r, Dim& d, F&& f) {
  f(r.dist_type, d.dist_type);
  f(r.periodic, d.periodic);
  f(r.given, d.given);
  f(r.size, d.size);
  f(r.proc_grid_size, d.proc_grid_size);
  f(r.proc_grid_rank, d.proc_grid_rank);
  f(r.start, d.start);
  f(r.stop, d.stop);
  f(r.padding[0], d.padding[0]);
  f(r.padding[1], d.padding[1]);
  f(r.block_size, d.block_size);
}

// The dictionary a record carries, as a gdap_dim (GDAP_DIM_INIT elsewhere).
gdap_dim dim_of(const DimRecord& r);

// FNV-1a 64 over the handle with its checksum field taken as zero.
uint64_t checksum(const HandleData& h);

// This node's identity: host name and boot id (empty when the kernel does not expose one).
std::string hostname();
std::string boot_id();

// When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat); 0 when it
// cannot be read (no such process).
uint64_t process_start(int64_t pid);

// GDAP_ERR_INVALID_ARGUMENT naming the pid when the process that exported `h` has exited, or its
// pid now belongs to another process (another start time): its `memory` is no longer its data.
void check_exporter_alive(const HandleData& h, const char* memory);

// Bytes from element (0, ..., 0) to the lowest byte of the section (<= 0) and one past its highest
// (>= 0); both 0 for an empty section.
struct Span {
  int64_t low = 0;
  int64_t high = 0;
};
Span span(const gdap_array& array);
Span span(const HandleData& h);

// Copies `size` bytes into a HandleData and runs every check that needs no memory: size, magic,
// format version, checksum, node, protocol version, ndim, dtype and the dictionaries against the
// shape. Throws with a message naming the field and both values.
HandleData parse(const void* bytes, int64_t size);

// The memory-specific halves (shm.cpp, cuda.cpp): fill the handle's memory fields for `array`,
// or map/open the memory a parsed handle names and return element (0, ..., 0)'s address and the
// function that unmaps/closes it.
void export_shm(HandleData& h, const gdap_array& array);
void export_cuda(HandleData& h, const gdap_array& array);
struct Opened {
  void* data = nullptr;
  gdap_device device{};
  void (*release)(void* base, int64_t bytes, int32_t device) = nullptr;
  void* base = nullptr;
  int64_t bytes = 0;
};
Opened open_shm(const HandleData& h);
Opened open_cuda(const HandleData& h);

}  // namespace gdap::ipc
