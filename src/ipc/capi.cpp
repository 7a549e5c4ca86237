// The C entry points of IPC sharing: gdap_array_create_shm, gdap_ipc_export and gdap_ipc_open.
// Export builds the whole handle in a local copy and writes the caller's buffer only on success;
// open parses and checks the bytes before it maps or opens anything.
#include "array/array.hpp"
#include "array/layout.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "ipc/handle.hpp"
#include "ipc/shm.hpp"
#include "protocol/dim.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace gdap::ipc {
namespace {

void fill_dims(HandleData& h, const gdap_array& a) {
  for (int64_t i = 0; i < a.ndim(); ++i) {
    const gdap_dim& d = a.dims[i];
    if (d.dist_type == GDAP_DIST_UNSTRUCTURED) {
      fail(GDAP_ERR_UNSUPPORTED, "{}: an IPC handle has a fixed size and cannot carry unstructured indices; "
           "share the section with a 'b' or 'c' description, or send the indices separately", dim_label(d, i));
    }
    for_each_field(h.dims[i], d, [](auto& to, const auto& from) { to = from; });
    h.shape[i] = a.section.shape[static_cast<size_t>(i)];
    h.strides[i] = a.section.strides[static_cast<size_t>(i)];
  }
}

HandleData build(const gdap_array& a) {
  if (a.ndim() > GDAP_IPC_MAX_NDIM) {
    fail(GDAP_ERR_UNSUPPORTED, "the section has {} dimensions but an IPC handle carries at most {} "
         "(GDAP_IPC_MAX_NDIM)", a.ndim(), GDAP_IPC_MAX_NDIM);
  }
  if (a.version.size() >= sizeof(HandleData::protocol_version)) {
    fail(GDAP_ERR_UNSUPPORTED, "protocol version '{}' is longer than an IPC handle holds", a.version);
  }
  HandleData h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, GDAP_IPC_MAGIC, 8);
  h.format_version = GDAP_IPC_FORMAT_VERSION;
  h.handle_size = GDAP_IPC_HANDLE_SIZE;
  h.ndim = static_cast<int32_t>(a.ndim());
  std::snprintf(h.protocol_version, sizeof h.protocol_version, "%s", a.version.c_str());
  std::snprintf(h.hostname, sizeof h.hostname, "%s", hostname().c_str());
  std::snprintf(h.boot_id, sizeof h.boot_id, "%s", boot_id().c_str());
  h.exporter_pid = static_cast<int64_t>(getpid());
  h.exporter_start = process_start(h.exporter_pid);
  h.dtype = a.section.dtype;
  h.device_type = a.section.device.type;
  h.device_id = a.section.device.id;
  h.readonly = a.readonly ? 1 : 0;
  fill_dims(h, a);
  switch (a.section.device.type) {
    case GDAP_DEVICE_CPU:
      h.kind = static_cast<uint32_t>(Kind::shm);
      export_shm(h, a);
      break;
    case GDAP_DEVICE_CUDA:
      h.kind = static_cast<uint32_t>(Kind::cuda);
      export_cuda(h, a);
      break;
    case GDAP_DEVICE_CUDA_HOST:
      fail(GDAP_ERR_UNSUPPORTED, "CUDA pinned host memory cannot be shared: CUDA IPC shares device memory only; "
           "allocate host sections with gdap_array_create_shm");
    default:
      fail(GDAP_ERR_UNSUPPORTED, "CUDA managed memory cannot be shared: CUDA IPC does not support it; use device "
           "memory (GDAP_DEVICE_CUDA) or gdap_array_create_shm");
  }
  h.checksum = checksum(h);
  return h;
}

}  // namespace
}  // namespace gdap::ipc

using gdap::fail;
using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_array_create_shm(gdap_array** out, const char* name, gdap_dtype dtype, const gdap_dim* dims,
                                           int64_t ndim) {
  return guard([&] {
    require(out, "out");
    const int64_t element_bytes = gdap::element_size(dtype);
    if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "dim_data ndim ({}) < 0", ndim);
    if (ndim > 0) require(dims, "dims");
    gdap::DimData d = gdap::DimData::copy_from(dims, ndim);
    gdap::Section s;
    for (int64_t i = 0; i < ndim; ++i) {
      if (d[i].dist_type == GDAP_DIST_UNDISTRIBUTED) {
        fail(GDAP_ERR_PROTOCOL, "{}: the empty dictionary {{}} stands for the buffer's extent, but "
             "gdap_array_create_shm takes the shape from the dictionaries; describe it with "
             "gdap_dim_set_undistributed(dim, extent)", gdap::dim_label(d[i], i));
      }
      gdap::validate_dim(d[i], i, -1);
      s.shape.push_back(gdap::local_extent(d[i]));
    }
    s.strides = gdap::compact_strides(s.shape);
    s.dtype = dtype;
    s.device = {GDAP_DEVICE_CPU, 0};
    const int64_t count = gdap::check_layout(s.shape, s.strides, element_bytes, 0, "new shared section");
    const int64_t bytes = gdap::checked_mul(count, element_bytes, "shared-memory segment size");
    auto a = gdap::make_array(std::move(s), std::move(d), GDAP_PROTOCOL_VERSION, false);
    const gdap::SegmentMapping seg = gdap::ipc::create_segment(name, bytes);  // last: only make_shared can fail below
    try {
      // The storage names its segment: the MPI cma exchange lets peers map it (one pass, no syscall per run).
      a->storage = std::make_shared<gdap::Storage>([seg] { gdap::ipc::release_segment(seg); }, seg);
    } catch (...) {
      gdap::ipc::release_segment(seg);
      throw;
    }
    a->section.base = const_cast<void*>(seg.base);
    *out = a.release();
  });
}

GDAP_API gdap_status gdap_ipc_export(void* handle, int64_t capacity, const gdap_array* array) {
  return guard([&] {
    require(handle, "handle");
    if (capacity < GDAP_IPC_HANDLE_SIZE) {
      fail(GDAP_ERR_BUFFER_TOO_SMALL, "the handle buffer holds {} bytes but a handle needs {} (GDAP_IPC_HANDLE_SIZE)",
           capacity, GDAP_IPC_HANDLE_SIZE);
    }
    const gdap::ipc::HandleData h = gdap::ipc::build(gdap::handle(array, "array"));
    std::memcpy(handle, &h, sizeof h);
  });
}

GDAP_API gdap_status gdap_ipc_open(gdap_array** out, const void* handle, int64_t size) {
  return guard([&] {
    require(out, "out");
    const gdap::ipc::HandleData h = gdap::ipc::parse(handle, size);
    std::vector<gdap_dim> dims(static_cast<size_t>(h.ndim));
    gdap::Section s;
    for (int32_t i = 0; i < h.ndim; ++i) {
      const gdap::ipc::DimRecord& r = h.dims[i];
      gdap_dim& d = dims[static_cast<size_t>(i)];
      d = gdap::ipc::dim_of(r);
      s.shape.push_back(h.shape[i]);
      s.strides.push_back(h.strides[i]);
    }
    s.dtype = h.dtype;
    gdap::DimData d = gdap::dims_for_shape(dims.data(), h.ndim, s.shape);
    gdap::ipc::Opened o = h.kind == static_cast<uint32_t>(gdap::ipc::Kind::shm) ? gdap::ipc::open_shm(h)
                                                                               : gdap::ipc::open_cuda(h);
    try {
      s.base = o.data;
      s.device = o.device;
      auto a = gdap::make_array(std::move(s), std::move(d), h.protocol_version, h.readonly != 0);
      a->storage = std::make_shared<gdap::Storage>([o] { o.release(o.base, o.bytes, o.device.id); });
      *out = a.release();
    } catch (...) {
      o.release(o.base, o.bytes, o.device.id);
      throw;
    }
  });
}

}  // extern "C"
