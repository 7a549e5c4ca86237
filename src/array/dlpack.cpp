// Zero-copy exchange with DLPack: a producer's tensor becomes a gdap_array (taken only once every
// check has passed, its deleter then called exactly once when the last user goes), and an array
// is handed out as new DLPack tensors that share its memory. No element is ever touched.
#include "array/array.hpp"
#include "array/layout.hpp"
#include "core/error.hpp"

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gdap {
namespace {

// The tensor's memory, checked; nothing is taken.
Section section_of(const DLTensor& t) {
  if (t.ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor ndim ({}) < 0", t.ndim);
  if (t.ndim > 0 && t.shape == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor shape is NULL (ndim {})", t.ndim);
  Section s;
  s.base = t.data;
  s.byte_offset = t.byte_offset;
  s.dtype = gdap_dtype{t.dtype.code, t.dtype.bits, t.dtype.lanes};
  s.device = gdap_device{static_cast<int32_t>(t.device.device_type), t.device.device_id};
  check_device(s.device);
  const int64_t element_bytes = element_size(s.dtype);
  s.shape.assign(t.shape, t.shape + t.ndim);
  for (size_t k = 0; k < s.shape.size(); ++k) {  // before compact_strides reads them
    if (s.shape[k] < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor shape[{}] ({}) < 0", k, s.shape[k]);
  }
  s.strides = t.strides != nullptr ? std::vector<int64_t>(t.strides, t.strides + t.ndim) : compact_strides(s.shape);
  const int64_t count = check_layout(s.shape, s.strides, element_bytes, s.byte_offset, "DLPack tensor");
  if (count > 0 && t.data == nullptr) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor data is NULL but the tensor holds {} elements", count);
  }
  if (count > 0) {
    check_aligned(reinterpret_cast<uintptr_t>(t.data) + s.byte_offset, s.dtype, "DLPack tensor data + byte_offset");
  }
  return s;
}

// Builds the array, then takes the tensor as the very last step: until it succeeds the tensor
// stays the caller's, and the unique_ptr frees the half-built array.
template <typename Managed>
gdap_array* import_tensor(Managed* tensor, const gdap_dim* dims, int64_t ndim, const char* version, bool readonly) {
  // Before the shape is read: a tensor claiming INT32_MAX dimensions is refused, not copied.
  if (ndim >= 0 && tensor->dl_tensor.ndim >= 0 && ndim != tensor->dl_tensor.ndim) {
    fail(GDAP_ERR_PROTOCOL, "dim_data has {} dimensions but the buffer has {}", ndim, tensor->dl_tensor.ndim);
  }
  Section s = section_of(tensor->dl_tensor);
  DimData d = dims_for_shape(dims, ndim, s.shape);
  std::string v = checked_version(version);
  std::unique_ptr<gdap_array> a = make_array(std::move(s), std::move(d), std::move(v), readonly);
  a->storage = std::make_shared<Storage>([tensor] {
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
  });
  return a.release();
}

// What an exported tensor owns: a reference to the memory and its own shape and strides. The
// tensor handed out lives inside it, so its deleter frees everything in one delete.
template <typename Managed>
struct ExportContext {
  std::shared_ptr<Storage> storage;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  Managed tensor{};
};

template <typename Managed>
Managed* export_tensor(const gdap_array& a) {
  if (a.ndim() > INT32_MAX) fail(GDAP_ERR_OVERFLOW, "ndim {} does not fit DLPack's int32", a.ndim());
  auto ctx = std::make_unique<ExportContext<Managed>>();
  ctx->storage = a.storage;
  ctx->shape = a.section.shape;
  ctx->strides = a.section.strides;
  DLTensor& t = ctx->tensor.dl_tensor;
  t.data = a.section.base;  // the producer's split of data and byte_offset is kept
  t.byte_offset = a.section.byte_offset;
  t.ndim = static_cast<int32_t>(a.ndim());
  t.shape = ctx->shape.empty() ? nullptr : ctx->shape.data();
  t.strides = ctx->strides.empty() ? nullptr : ctx->strides.data();
  t.dtype = DLDataType{a.section.dtype.code, a.section.dtype.bits, a.section.dtype.lanes};
  t.device = DLDevice{static_cast<DLDeviceType>(a.section.device.type), a.section.device.id};
  ctx->tensor.manager_ctx = ctx.get();
  ctx->tensor.deleter = [](Managed* self) { delete static_cast<ExportContext<Managed>*>(self->manager_ctx); };
  return &ctx.release()->tensor;
}

}  // namespace
}  // namespace gdap

using gdap::fail;
using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_array_from_dlpack(gdap_array** out, DLManagedTensorVersioned* tensor, const gdap_dim* dims,
                                            int64_t ndim, const char* version) {
  return guard([&] {
    require(out, "out");
    require(tensor, "tensor");
    if (tensor->version.major != DLPACK_MAJOR_VERSION) {
      fail(GDAP_ERR_VERSION, "DLPack tensor has major version {} (minor {}); gdap reads major {}",
           tensor->version.major, tensor->version.minor, DLPACK_MAJOR_VERSION);
    }
    if ((tensor->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0) {
      fail(GDAP_ERR_UNSUPPORTED, "DLPack tensor holds padded sub-byte elements (flag IS_SUBBYTE_TYPE_PADDED)");
    }
    const bool readonly = (tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    *out = gdap::import_tensor(tensor, dims, ndim, version, readonly);
  });
}

GDAP_API gdap_status gdap_array_from_dlpack_unversioned(gdap_array** out, DLManagedTensor* tensor,
                                                        const gdap_dim* dims, int64_t ndim, const char* version) {
  return guard([&] {
    require(out, "out");
    require(tensor, "tensor");
    *out = gdap::import_tensor(tensor, dims, ndim, version, false);  // DLPack < 1.0 has no read-only flag
  });
}

GDAP_API gdap_status gdap_array_to_dlpack(DLManagedTensorVersioned** out, gdap_array* array) {
  return guard([&] {
    require(out, "out");
    const gdap_array& a = gdap::handle(array, "array");
    DLManagedTensorVersioned* t = gdap::export_tensor<DLManagedTensorVersioned>(a);
    t->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    t->flags = a.readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    *out = t;
  });
}

GDAP_API gdap_status gdap_array_to_dlpack_unversioned(DLManagedTensor** out, gdap_array* array) {
  return guard([&] {
    require(out, "out");
    const gdap_array& a = gdap::handle(array, "array");
    if (a.readonly) {
      // As NumPy does: the unversioned struct cannot say read-only, so a consumer would write.
      fail(GDAP_ERR_UNSUPPORTED,
           "the array is read-only and an unversioned DLManagedTensor cannot say so; export it with "
           "gdap_array_to_dlpack (DLPack >= 1.0)");
    }
    *out = gdap::export_tensor<DLManagedTensor>(a);
  });
}

}  // extern "C"
