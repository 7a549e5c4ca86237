// Local arrays: building a gdap_array from a DLPack tensor, from retained memory or from a fresh
// allocation, and exporting it as DLPack tensors that share its memory. No element is touched.
#include "array/array.hpp"

#include "array/device_memory.hpp"
#include "core/checked.hpp"
#include "maps/dim_map.hpp"
#include "protocol/dim.hpp"
#include "protocol/version.hpp"

#include <dlpack/dlpack.h>

#include <algorithm>

namespace gdap {

int64_t element_size(gdap_dtype dtype) {
  if (dtype.lanes < 1) fail(GDAP_ERR_UNSUPPORTED, "dtype with {} lanes", dtype.lanes);
  if (dtype.bits == 0 || dtype.bits % 8 != 0) {
    fail(GDAP_ERR_UNSUPPORTED, "dtype (code {}, {} bits): only whole bytes are supported", dtype.code, dtype.bits);
  }
  if (dtype.code == GDAP_DTYPE_BOOL && dtype.bits != 8) fail(GDAP_ERR_UNSUPPORTED, "bool dtype of {} bits", dtype.bits);
  return static_cast<int64_t>(dtype.bits / 8) * dtype.lanes;
}

void check_device(gdap_device device) {
  switch (device.type) {
    case GDAP_DEVICE_CPU:
    case GDAP_DEVICE_CUDA:
    case GDAP_DEVICE_CUDA_HOST:
    case GDAP_DEVICE_CUDA_MANAGED: break;
    default:
      fail(GDAP_ERR_UNSUPPORTED, "device type {} is not supported (host, CUDA, CUDA pinned and CUDA managed are)",
           device.type);
  }
  if (device.id < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "device id {} < 0", device.id);
}

namespace {

std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = stride;
    stride = checked_mul(stride, std::max<int64_t>(shape[k], 1), "compact stride");
  }
  return strides;
}

// Checks that every element's byte offset fits int64 and returns the element count.
int64_t check_extent(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t elsize) {
  int64_t count = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "shape[{}] ({}) < 0", k, shape[k]);
    count = checked_mul(count, shape[k], "number of elements");
  }
  if (count == 0) return 0;
  int64_t low = 0, high = 0;  // element offsets of the extreme corners
  for (size_t k = 0; k < shape.size(); ++k) {
    const int64_t reach = checked_mul(shape[k] - 1, strides[k], "stride * extent");
    (reach < 0 ? low : high) = checked_add(reach < 0 ? low : high, reach, "element offset");
  }
  checked_mul(checked_add(checked_sub(high, low, "element span"), 1, "element span"), elsize, "byte span");
  return count;
}

// The tensor's description, checked, before anything is taken.
struct TensorView {
  void* data;
  uint64_t byte_offset;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  gdap_dtype dtype;
  gdap_device device;
};

TensorView view_of(const DLTensor& t) {
  if (t.ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor ndim ({}) < 0", t.ndim);
  if (t.ndim > 0 && t.shape == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor shape is NULL");
  TensorView v{t.data, t.byte_offset, {}, {}, {t.dtype.code, t.dtype.bits, t.dtype.lanes},
               {static_cast<int32_t>(t.device.device_type), t.device.device_id}};
  v.shape.assign(t.shape, t.shape + t.ndim);
  check_device(v.device);
  const int64_t elsize = element_size(v.dtype);
  for (size_t k = 0; k < v.shape.size(); ++k) {
    if (v.shape[k] < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor shape[{}] ({}) < 0", k, v.shape[k]);
  }
  v.strides = t.strides != nullptr ? std::vector<int64_t>(t.strides, t.strides + t.ndim) : compact_strides(v.shape);
  const int64_t count = check_extent(v.shape, v.strides, elsize);
  if (t.byte_offset > static_cast<uint64_t>(INT64_MAX)) fail(GDAP_ERR_OVERFLOW, "byte_offset {} overflows", t.byte_offset);
  if (count > 0 && t.data == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "DLPack tensor data is NULL but holds {} elements", count);
  return v;
}

// The dictionaries for a buffer of `shape`: copied, {} resolved, each checked against its extent.
DimData dims_for(const gdap_dim* dims, int64_t ndim, const std::vector<int64_t>& shape) {
  if (ndim != static_cast<int64_t>(shape.size())) {
    fail(GDAP_ERR_PROTOCOL, "dim_data has {} dimensions but the buffer has {}", ndim, shape.size());
  }
  DimData out = DimData::copy_from(dims, ndim);
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t extent = shape[static_cast<size_t>(i)];
    validate_dim(out[i], i, extent);
    out.set(i, resolve_alias(out[i], extent));
  }
  return out;
}

std::string version_or_default(const char* version) {
  if (version == nullptr) return GDAP_PROTOCOL_VERSION;
  check_protocol_version(version);
  return version;
}

gdap_array* make_array(TensorView v, DimData dims, std::string version, bool readonly,
                       std::shared_ptr<Storage> storage) {
  auto* a = new gdap_array;
  a->storage = std::move(storage);
  a->base = v.data;
  a->byte_offset = v.byte_offset;
  a->shape = std::move(v.shape);
  a->strides = std::move(v.strides);
  a->dtype = v.dtype;
  a->device = v.device;
  a->readonly = readonly;
  a->dims = std::move(dims);
  a->version = std::move(version);
  a->unstructured_index.resize(static_cast<size_t>(a->ndim()));
  for (int64_t i = 0; i < a->ndim(); ++i) {
    const gdap_dim& d = a->dims[i];
    if (d.dist_type != GDAP_DIST_UNSTRUCTURED) continue;
    auto& index = a->unstructured_index[static_cast<size_t>(i)];
    for (int64_t l = 0; l < d.num_indices; ++l) index.emplace_back(d.indices[l], l);
    std::sort(index.begin(), index.end());
  }
  return a;
}

// Shape of the section the dictionaries describe (no {} allowed: nothing to resolve it from).
std::vector<int64_t> shape_of(const gdap_dim* dims, int64_t ndim) {
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < ndim; ++i) {
    const gdap_dim d = read_dim(dims, i);
    validate_dim(d, i, -1);
    shape.push_back(local_extent(d));
  }
  return shape;
}

template <typename Managed>
gdap_array* import_tensor(Managed* tensor, const gdap_dim* dims, int64_t ndim, const char* version, bool readonly) {
  TensorView v = view_of(tensor->dl_tensor);
  DimData d = dims_for(dims, ndim, v.shape);
  std::string ver = version_or_default(version);
  gdap_array* a = make_array(std::move(v), std::move(d), std::move(ver), readonly, nullptr);
  try {  // the last step that can fail: until it succeeds the tensor stays the caller's
    a->storage = std::make_shared<Storage>([tensor] {
      if (tensor->deleter != nullptr) tensor->deleter(tensor);
    });
  } catch (...) {
    delete a;
    throw;
  }
  return a;
}

// What an exported tensor owns: a reference to the memory and its own shape and strides.
template <typename Managed>
struct ExportContext {
  std::shared_ptr<Storage> storage;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  Managed tensor{};
};

template <typename Managed>
Managed* export_tensor(const gdap_array& a) {
  auto* ctx = new ExportContext<Managed>{a.storage, a.shape, a.strides};
  DLTensor& t = ctx->tensor.dl_tensor;
  t.data = a.base;
  t.byte_offset = a.byte_offset;
  t.ndim = static_cast<int32_t>(a.ndim());
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.dtype = DLDataType{a.dtype.code, a.dtype.bits, a.dtype.lanes};
  t.device = DLDevice{static_cast<DLDeviceType>(a.device.type), a.device.id};
  ctx->tensor.manager_ctx = ctx;
  ctx->tensor.deleter = [](Managed* self) { delete static_cast<ExportContext<Managed>*>(self->manager_ctx); };
  return &ctx->tensor;
}

const gdap_array& array_ref(const gdap_array* array) {
  require(array, "array");
  return *array;
}

void check_ndim_fits(int64_t ndim) {
  if (ndim > INT32_MAX) fail(GDAP_ERR_OVERFLOW, "ndim {} does not fit DLPack's int32", ndim);
}

int64_t global_to_local_dim(const gdap_array& a, int64_t i, int64_t g) {
  const gdap_dim& d = a.dims[i];
  if (d.dist_type == GDAP_DIST_UNSTRUCTURED) {
    const auto& index = a.unstructured_index[static_cast<size_t>(i)];
    auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(g, INT64_MIN));
    if (it != index.end() && it->first == g) return it->second;
  } else if (auto l = held_local(d, g)) {
    return *l;
  }
  fail(GDAP_ERR_NOT_FOUND, "{}: global index {} is not held by this process", dim_label(d, i), g);
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
      fail(GDAP_ERR_VERSION, "DLPack tensor has major version {}; gdap reads major {}", tensor->version.major,
           DLPACK_MAJOR_VERSION);
    }
    if (tensor->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) {
      fail(GDAP_ERR_UNSUPPORTED, "DLPack tensor holds padded sub-byte elements");
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
    *out = gdap::import_tensor(tensor, dims, ndim, version, false);
  });
}

GDAP_API gdap_status gdap_array_wrap(gdap_array** out, void* data, gdap_dtype dtype, gdap_device device,
                                     const int64_t* strides, const gdap_dim* dims, int64_t ndim) {
  return guard([&] {
    require(out, "out");
    gdap::check_device(device);
    const int64_t elsize = gdap::element_size(dtype);
    gdap::TensorView v{data, 0, gdap::shape_of(dims, ndim), {}, dtype, device};
    v.strides = strides != nullptr ? std::vector<int64_t>(strides, strides + ndim) : gdap::compact_strides(v.shape);
    const int64_t count = gdap::check_extent(v.shape, v.strides, elsize);
    if (count > 0 && data == nullptr) fail(GDAP_ERR_INVALID_ARGUMENT, "data is NULL but the section holds {} elements", count);
    gdap::DimData d = gdap::dims_for(dims, ndim, v.shape);
    *out = gdap::make_array(std::move(v), std::move(d), GDAP_PROTOCOL_VERSION, false, nullptr);
  });
}

GDAP_API gdap_status gdap_array_create(gdap_array** out, gdap_dtype dtype, gdap_device device, const gdap_dim* dims,
                                       int64_t ndim) {
  return guard([&] {
    require(out, "out");
    gdap::check_device(device);
    const int64_t elsize = gdap::element_size(dtype);
    std::vector<int64_t> shape = gdap::shape_of(dims, ndim);
    std::vector<int64_t> strides = gdap::compact_strides(shape);
    const int64_t count = gdap::check_extent(shape, strides, elsize);
    gdap::DimData d = gdap::dims_for(dims, ndim, shape);
    gdap::Allocation memory = gdap::allocate(device, gdap::checked_mul(count, elsize, "allocation size"));
    auto storage = std::make_shared<gdap::Storage>(std::move(memory.release));
    gdap::TensorView v{memory.data, 0, std::move(shape), std::move(strides), dtype, device};
    *out = gdap::make_array(std::move(v), std::move(d), GDAP_PROTOCOL_VERSION, false, std::move(storage));
  });
}

GDAP_API gdap_status gdap_array_destroy(gdap_array* array) {
  return guard([&] { delete array; });
}

GDAP_API gdap_status gdap_array_to_dlpack(DLManagedTensorVersioned** out, gdap_array* array) {
  return guard([&] {
    require(out, "out");
    const gdap_array& a = gdap::array_ref(array);
    gdap::check_ndim_fits(a.ndim());
    DLManagedTensorVersioned* t = gdap::export_tensor<DLManagedTensorVersioned>(a);
    t->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    t->flags = a.readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    *out = t;
  });
}

GDAP_API gdap_status gdap_array_to_dlpack_unversioned(DLManagedTensor** out, gdap_array* array) {
  return guard([&] {
    require(out, "out");
    const gdap_array& a = gdap::array_ref(array);
    gdap::check_ndim_fits(a.ndim());
    *out = gdap::export_tensor<DLManagedTensor>(a);
  });
}

GDAP_API gdap_status gdap_array_ndim(int64_t* ndim, const gdap_array* array) {
  return guard([&] {
    require(ndim, "ndim");
    *ndim = gdap::array_ref(array).ndim();
  });
}

GDAP_API gdap_status gdap_array_data(void** data, const gdap_array* array) {
  return guard([&] {
    require(data, "data");
    *data = gdap::array_ref(array).data();
  });
}

GDAP_API gdap_status gdap_array_shape(int64_t* shape, const gdap_array* array) {
  return guard([&] {
    const gdap_array& a = gdap::array_ref(array);
    if (a.ndim() > 0) require(shape, "shape");
    std::copy(a.shape.begin(), a.shape.end(), shape);
  });
}

GDAP_API gdap_status gdap_array_strides(int64_t* strides, const gdap_array* array) {
  return guard([&] {
    const gdap_array& a = gdap::array_ref(array);
    if (a.ndim() > 0) require(strides, "strides");
    std::copy(a.strides.begin(), a.strides.end(), strides);
  });
}

GDAP_API gdap_status gdap_array_dtype(gdap_dtype* dtype, const gdap_array* array) {
  return guard([&] {
    require(dtype, "dtype");
    *dtype = gdap::array_ref(array).dtype;
  });
}

GDAP_API gdap_status gdap_array_device(gdap_device* device, const gdap_array* array) {
  return guard([&] {
    require(device, "device");
    *device = gdap::array_ref(array).device;
  });
}

GDAP_API gdap_status gdap_array_readonly(int* readonly, const gdap_array* array) {
  return guard([&] {
    require(readonly, "readonly");
    *readonly = gdap::array_ref(array).readonly ? 1 : 0;
  });
}

GDAP_API gdap_status gdap_array_dim(gdap_dim* out, const gdap_array* array, int64_t dim) {
  return guard([&] {
    require(out, "out");
    const gdap_array& a = gdap::array_ref(array);
    if (dim < 0 || dim >= a.ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", dim, a.ndim());
    *out = a.dims[dim];
  });
}

GDAP_API gdap_status gdap_array_version(const char** version, const gdap_array* array) {
  return guard([&] {
    require(version, "version");
    *version = gdap::array_ref(array).version.c_str();
  });
}

GDAP_API gdap_status gdap_array_global_to_local(int64_t* local, const gdap_array* array, const int64_t* global) {
  return guard([&] {
    const gdap_array& a = gdap::array_ref(array);
    if (a.ndim() == 0) return;
    require(local, "local");
    require(global, "global");
    std::vector<int64_t> out;
    for (int64_t i = 0; i < a.ndim(); ++i) out.push_back(gdap::global_to_local_dim(a, i, global[i]));
    std::copy(out.begin(), out.end(), local);
  });
}

GDAP_API gdap_status gdap_array_local_to_global(int64_t* global, const gdap_array* array, const int64_t* local) {
  return guard([&] {
    const gdap_array& a = gdap::array_ref(array);
    if (a.ndim() == 0) return;
    require(global, "global");
    require(local, "local");
    std::vector<int64_t> out;
    for (int64_t i = 0; i < a.ndim(); ++i) {
      if (local[i] < 0 || local[i] >= a.shape[static_cast<size_t>(i)]) {
        fail(GDAP_ERR_OUT_OF_RANGE, "{}: local index {} is outside [0, {})", gdap::dim_label(a.dims[i], i), local[i],
             a.shape[static_cast<size_t>(i)]);
      }
      out.push_back(gdap::global_of_local(a.dims[i], local[i]));
    }
    std::copy(out.begin(), out.end(), global);
  });
}

}  // extern "C"
