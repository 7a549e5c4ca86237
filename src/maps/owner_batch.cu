// gdap_map_owner_batch on a CUDA device (see owner_batch.hpp).
#include "maps/map.hpp"
#include "maps/owner_batch.hpp"

#include "cuda/device.hpp"

#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gdap {

// One axis as the kernel reads it; offsets index DeviceTables::data.
struct FlatAxis {
  int64_t type, size, grid, block_size, even_width;
  int64_t owned_off;  // 'b': grid + 1 owned starts
  int64_t start_off;  // 'b': grid starts (the held range's first global index)
  int64_t table_off;  // 'u': table_len triples (global, grid rank, local), sorted
  int64_t table_len;
};

struct DeviceTables {
  int device = 0;
  FlatAxis* axes = nullptr;
  int64_t* data = nullptr;
};

void release_device_tables(DeviceTables* tables) noexcept {
  if (tables == nullptr) return;
  {
    const cuda::DeviceScope on(tables->device);
    if (on.error() == cudaSuccess) {
      cudaFree(tables->axes);
      cudaFree(tables->data);
    }
  }
  delete tables;
}

namespace {

__device__ bool axis_owner(const FlatAxis& a, const int64_t* data, int64_t g, int64_t& grid_rank, int64_t& local) {
  if (a.type == 'b' || a.type == 'c') {
    if (g < 0 || g >= a.size) return false;
  }
  if (a.type == 'b') {
    if (a.even_width > 0) {
      grid_rank = g / a.even_width;
    } else {  // last owned start <= g
      int64_t lo = 0, hi = a.grid;  // answer in [lo, hi)
      while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        if (data[a.owned_off + mid] <= g) lo = mid; else hi = mid;
      }
      grid_rank = lo;
    }
    local = g - data[a.start_off + grid_rank];
    return true;
  }
  if (a.type == 'c') {
    const int64_t block = g / a.block_size;
    grid_rank = block % a.grid;
    local = block / a.grid * a.block_size + g % a.block_size;
    return true;
  }
  int64_t lo = 0, hi = a.table_len;  // first entry with global >= g
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (data[a.table_off + 3 * mid] < g) lo = mid + 1; else hi = mid;
  }
  if (lo == a.table_len || data[a.table_off + 3 * lo] != g) return false;
  grid_rank = data[a.table_off + 3 * lo + 1];
  local = data[a.table_off + 3 * lo + 2];
  return true;
}

__global__ void owner_kernel(const FlatAxis* axes, const int64_t* data, int64_t ndim, const int64_t* globals,
                             int64_t count, int64_t* ranks, int64_t* locals) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += step) {
    int64_t rank = 0;
    bool ok = true;
    for (int64_t i = 0; i < ndim && ok; ++i) {
      int64_t grid_rank = 0, local = 0;
      ok = axis_owner(axes[i], data, globals[k * ndim + i], grid_rank, local);
      rank = rank * axes[i].grid + grid_rank;
      if (ok && locals != nullptr) locals[k * ndim + i] = local;
    }
    ranks[k] = ok ? rank : -1;
  }
}

void flatten(const gdap_map& map, std::vector<FlatAxis>& axes, std::vector<int64_t>& data) {
  for (const AxisMap& axis : map.axes) {
    FlatAxis a{};
    a.type = axis.dist_type();
    a.size = axis.size();
    a.grid = axis.grid_size();
    a.block_size = axis.dim(0).block_size;
    a.even_width = axis.even_width();
    a.owned_off = static_cast<int64_t>(data.size());
    data.insert(data.end(), axis.owned_starts().begin(), axis.owned_starts().end());
    a.start_off = static_cast<int64_t>(data.size());
    if (a.type == GDAP_DIST_BLOCK) {
      for (int64_t g = 0; g < axis.grid_size(); ++g) data.push_back(axis.dim(g).start);
    }
    a.table_off = static_cast<int64_t>(data.size());
    a.table_len = static_cast<int64_t>(axis.table().size());
    for (const UnstructuredEntry& e : axis.table()) data.insert(data.end(), {e.global, e.grid_rank, e.local});
    axes.push_back(a);
  }
}

// The message for a failed CUDA call (cuda::error_text also resets the thread's CUDA error state,
// so that an error gdap reports is not reported again by the caller's next cudaGetLastError).
std::string cuda_message(const std::string& what, cudaError_t err) { return cuda::error_text(err, what); }

// Copies the flat tables to the current device on a private stream and waits for that stream
// alone: the tables must be complete before any stream of the caller's reads them, and the
// caller's streams are not touched.
cudaError_t upload(DeviceTables& t, const std::vector<FlatAxis>& axes, const std::vector<int64_t>& data) {
  cudaError_t err = cudaMalloc(&t.axes, sizeof(FlatAxis) * (axes.size() + 1));
  if (err == cudaSuccess) err = cudaMalloc(&t.data, sizeof(int64_t) * (data.size() + 1));
  if (err != cudaSuccess) return err;
  cudaStream_t copy_stream = nullptr;
  err = cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) return err;
  if (!axes.empty()) {
    err = cudaMemcpyAsync(t.axes, axes.data(), sizeof(FlatAxis) * axes.size(), cudaMemcpyHostToDevice, copy_stream);
  }
  if (err == cudaSuccess && !data.empty()) {
    err = cudaMemcpyAsync(t.data, data.data(), sizeof(int64_t) * data.size(), cudaMemcpyHostToDevice, copy_stream);
  }
  const cudaError_t synced = cudaStreamSynchronize(copy_stream);
  const cudaError_t destroyed = cudaStreamDestroy(copy_stream);
  if (err == cudaSuccess) err = synced;
  return err == cudaSuccess ? destroyed : err;
}

// The map's tables on `device` (the current device), uploaded on first use. Thread-safe.
std::string tables_on(const gdap_map& map, int device, DeviceTables*& out) {
  std::lock_guard<std::mutex> lock(map.device_mutex);
  for (auto& [d, t] : map.device_tables) {
    if (d == device) {
      out = t;
      return "";
    }
  }
  std::vector<FlatAxis> axes;
  std::vector<int64_t> data;
  flatten(map, axes, data);
  auto* t = new DeviceTables{device, nullptr, nullptr};
  const cudaError_t err = upload(*t, axes, data);
  if (err != cudaSuccess) {
    release_device_tables(t);
    return cuda_message("uploading the map's tables to CUDA device " + std::to_string(device), err);
  }
  map.device_tables.emplace_back(device, t);
  out = t;
  return "";
}

// "" if `p` is device memory of `device` or managed memory, else why not.
std::string check_pointer(const void* p, const char* name, int device) {
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, p);
  if (err != cudaSuccess) {
    return cuda_message(std::string("asking CUDA where ") + name + " lives", err);
  }
  switch (attr.type) {
    case cudaMemoryTypeManaged: return "";
    case cudaMemoryTypeDevice:
      if (attr.device == device) return "";
      return std::string(name) + " lives on CUDA device " + std::to_string(attr.device) + ", not on device " +
             std::to_string(device) + " that the call named";
    case cudaMemoryTypeHost:
      return std::string(name) + " is pinned host memory, not CUDA device memory: pass GDAP_DEVICE_CUDA_HOST";
    default:
      return std::string(name) + " is not CUDA memory (an ordinary host pointer?): pass GDAP_DEVICE_CPU for host arrays";
  }
}

std::string launch(const gdap_map& map, int64_t* ranks, int64_t* locals, const int64_t* globals, int64_t count,
                   int device, void* stream) {
  const std::pair<const void*, const char*> arrays[] = {{ranks, "ranks"}, {globals, "globals"}, {locals, "locals"}};
  for (const auto& [p, name] : arrays) {
    if (p == nullptr) continue;  // globals of a 0-d map, locals not wanted
    if (std::string m = check_pointer(p, name, device); !m.empty()) return m;
  }
  DeviceTables* tables = nullptr;
  if (std::string m = tables_on(map, device, tables); !m.empty()) return m;
  constexpr int threads = 256;
  const int64_t wanted = (count + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 65535 ? wanted : 65535);  // the grid-stride loop does the rest
  owner_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(tables->axes, tables->data, map.ndim(),
                                                                           globals, count, ranks, locals);
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? "" : cuda_message("launching the owner look-up kernel", err);
}

}  // namespace

std::string owner_batch_cuda(const gdap_map& map, int64_t* ranks, int64_t* locals, const int64_t* globals, int64_t count,
                             int device_id, void* stream) {
  if (count == 0) return "";  // nothing to enqueue (the arrays may be NULL)
  int current = 0, devices = 0;
  cudaError_t err = cudaGetDevice(&current);
  if (err != cudaSuccess) return cuda_message("finding the current CUDA device", err);
  err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess) return cuda_message("counting CUDA devices", err);
  if (device_id < 0 || device_id >= devices) {  // refused before CUDA sees it: no error state left
    return "CUDA device " + std::to_string(device_id) + " (device.id) does not exist: this machine has " +
           std::to_string(devices) + " CUDA device(s)";
  }
  err = cudaSetDevice(device_id);
  if (err != cudaSuccess) {
    return cuda_message("selecting CUDA device " + std::to_string(device_id) + " (device.id)", err);
  }
  std::string message = launch(map, ranks, locals, globals, count, device_id, stream);
  err = cudaSetDevice(current);
  if (message.empty() && err != cudaSuccess) return cuda_message("restoring the current CUDA device", err);
  return message;
}

}  // namespace gdap
