// Local arrays: building a gdap_array around retained memory or a fresh allocation, destroying
// it, and reading it back (layout, dictionaries, global <-> local indices). DLPack import and
// export live in dlpack.cpp. No element is ever touched, except zero-filling new host memory.
#include "array/array.hpp"

#include "array/device_memory.hpp"
#include "array/layout.hpp"
#include "core/checked.hpp"
#include "maps/dim_map.hpp"
#include "protocol/dim.hpp"
#include "protocol/version.hpp"

#include <algorithm>

namespace gdap {

// check_layout proved every element's byte offset fits int64.
Footprint footprint_of(const gdap_array& a) {
  const int64_t es = element_size(a.section.dtype);
  Footprint f{reinterpret_cast<uintptr_t>(a.data()), es, a.section.shape, a.section.strides};
  for (int64_t& s : f.strides) s *= es;
  return f;
}

ByteSpan byte_span(const gdap_array& a) { return span_of(footprint_of(a)); }

bool may_share_memory(const gdap_array& a, const gdap_array& b) { return may_share_bytes(footprint_of(a), footprint_of(b)); }

DimData dims_for_shape(const gdap_dim* dims, int64_t ndim, const std::vector<int64_t>& shape) {
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "dim_data ndim ({}) < 0", ndim);
  if (ndim != static_cast<int64_t>(shape.size())) {
    fail(GDAP_ERR_PROTOCOL, "dim_data has {} dimensions but the buffer has {}", ndim, shape.size());
  }
  DimData out = DimData::copy_from(dims, ndim);
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t extent = shape[static_cast<size_t>(i)];
    validate_dim(out[i], i, extent);  // checks {} too: no stray keys
    out.set(i, resolve_alias(out[i], extent));
  }
  return out;
}

std::string checked_version(const char* version) {
  if (version == nullptr) return GDAP_PROTOCOL_VERSION;
  check_protocol_version(version);  // what gdap_protocol_version_check runs, as a throw
  return version;
}

void check_destination(const gdap_array& a, const char* role, const char* why) {
  if (a.readonly) fail(GDAP_ERR_INVALID_ARGUMENT, "{} is read-only{}", role, why);
  check_distinct_elements(a.section.shape, a.section.strides, role);
}

std::unique_ptr<gdap_array> make_array(Section section, DimData dims, std::string version, bool readonly) {
  auto a = std::make_unique<gdap_array>();
  a->section = std::move(section);
  a->readonly = readonly;
  a->dims = std::move(dims);
  a->version = std::move(version);
  a->unstructured_index.resize(static_cast<size_t>(a->ndim()));
  for (int64_t i = 0; i < a->ndim(); ++i) {
    const gdap_dim& d = a->dims[i];
    if (d.dist_type != GDAP_DIST_UNSTRUCTURED) continue;
    auto& index = a->unstructured_index[static_cast<size_t>(i)];
    index.reserve(static_cast<size_t>(d.num_indices));
    for (int64_t l = 0; l < d.num_indices; ++l) index.emplace_back(d.indices[l], l);
    std::sort(index.begin(), index.end());
  }
  return a;
}

namespace {

// The dictionaries of a section whose shape they alone define (wrap, create), and that shape.
// {} is refused: it stands for "the buffer's extent", and there is no buffer to take it from.
DimData dims_defining_shape(const gdap_dim* dims, int64_t ndim, const char* function,
                            std::vector<int64_t>& shape) {
  DimData out = DimData::copy_from(dims, ndim);
  shape.clear();
  for (int64_t i = 0; i < ndim; ++i) {
    if (out[i].dist_type == GDAP_DIST_UNDISTRIBUTED) {
      fail(GDAP_ERR_PROTOCOL,
           "{}: the empty dictionary {{}} stands for the buffer's extent, but {} takes the shape from the "
           "dictionaries; describe it with gdap_dim_set_undistributed(dim, extent)",
           dim_label(out[i], i), function);
    }
    validate_dim(out[i], i, -1);  // the extent rule holds by construction: shape[i] comes from it
    shape.push_back(local_extent(out[i]));
  }
  return out;
}

int64_t global_to_local_dim(const gdap_array& a, int64_t i, int64_t g) {
  const gdap_dim& d = a.dims[i];
  if (d.dist_type == GDAP_DIST_UNSTRUCTURED) {
    const auto& index = a.unstructured_index[static_cast<size_t>(i)];
    const auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(g, INT64_MIN));
    if (it != index.end() && it->first == g) return it->second;
  } else if (const auto l = held_local(d, g)) {  // 'b' (padding held), 'c': O(1)
    return *l;
  }
  fail(GDAP_ERR_NOT_FOUND, "{}: global index {} is not held by this process", dim_label(d, i), g);
}

}  // namespace

std::unique_ptr<gdap_array> create_array(gdap_dtype dtype, gdap_device device, const gdap_dim* dims, int64_t ndim) {
  check_device(device);
  const int64_t element_bytes = element_size(dtype);
  Section s;
  DimData d = dims_defining_shape(dims, ndim, "gdap_array_create", s.shape);
  s.strides = compact_strides(s.shape);
  s.dtype = dtype;
  s.device = device;
  const int64_t count = check_layout(s.shape, s.strides, element_bytes, 0, "new section");
  const int64_t bytes = checked_mul(count, element_bytes, "allocation size");
  auto a = make_array(std::move(s), std::move(d), GDAP_PROTOCOL_VERSION, false);
  Allocation memory = allocate(device, bytes);  // last: nothing below can fail but make_shared
  try {
    a->storage = std::make_shared<Storage>(memory.release);
  } catch (...) {
    if (memory.release) memory.release();
    throw;
  }
  a->section.base = memory.data;
  return a;
}

}  // namespace gdap

using gdap::fail;
using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_array_wrap(gdap_array** out, void* data, gdap_dtype dtype, gdap_device device,
                                     const int64_t* strides, const gdap_dim* dims, int64_t ndim) {
  return guard([&] {
    require(out, "out");
    gdap::check_device(device);
    const int64_t element_bytes = gdap::element_size(dtype);
    gdap::Section s;
    gdap::DimData d = gdap::dims_defining_shape(dims, ndim, "gdap_array_wrap", s.shape);
    s.base = data;
    s.dtype = dtype;
    s.device = device;
    s.strides = strides != nullptr ? std::vector<int64_t>(strides, strides + ndim) : gdap::compact_strides(s.shape);
    const int64_t count = gdap::check_layout(s.shape, s.strides, element_bytes, 0, "wrapped buffer");
    if (count > 0 && data == nullptr) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "data is NULL but the section holds {} elements", count);
    }
    if (count > 0) gdap::check_aligned(reinterpret_cast<uintptr_t>(data), dtype, "data");
    auto a = gdap::make_array(std::move(s), std::move(d), GDAP_PROTOCOL_VERSION, false);
    a->storage = std::make_shared<gdap::Storage>(nullptr);  // retained: the caller frees it
    *out = a.release();
  });
}

GDAP_API gdap_status gdap_array_create(gdap_array** out, gdap_dtype dtype, gdap_device device, const gdap_dim* dims,
                                       int64_t ndim) {
  return guard([&] {
    require(out, "out");
    *out = gdap::create_array(dtype, device, dims, ndim).release();
  });
}

GDAP_API gdap_status gdap_array_destroy(gdap_array* array) {
  return guard([&] { delete gdap::handle_or_null(array, "array"); });
}

GDAP_API gdap_status gdap_array_ndim(int64_t* ndim, const gdap_array* array) {
  return guard([&] {
    require(ndim, "ndim");
    *ndim = gdap::handle(array, "array").ndim();
  });
}

GDAP_API gdap_status gdap_array_data(void** data, const gdap_array* array) {
  return guard([&] {
    require(data, "data");
    *data = gdap::handle(array, "array").data();
  });
}

GDAP_API gdap_status gdap_array_shape(int64_t* shape, const gdap_array* array) {
  return guard([&] {
    const gdap_array& a = gdap::handle(array, "array");
    if (a.ndim() == 0) return;
    require(shape, "shape");
    std::copy(a.section.shape.begin(), a.section.shape.end(), shape);
  });
}

GDAP_API gdap_status gdap_array_strides(int64_t* strides, const gdap_array* array) {
  return guard([&] {
    const gdap_array& a = gdap::handle(array, "array");
    if (a.ndim() == 0) return;
    require(strides, "strides");
    std::copy(a.section.strides.begin(), a.section.strides.end(), strides);
  });
}

GDAP_API gdap_status gdap_array_dtype(gdap_dtype* dtype, const gdap_array* array) {
  return guard([&] {
    require(dtype, "dtype");
    *dtype = gdap::handle(array, "array").section.dtype;
  });
}

GDAP_API gdap_status gdap_array_device(gdap_device* device, const gdap_array* array) {
  return guard([&] {
    require(device, "device");
    *device = gdap::handle(array, "array").section.device;
  });
}

GDAP_API gdap_status gdap_array_readonly(int* readonly, const gdap_array* array) {
  return guard([&] {
    require(readonly, "readonly");
    *readonly = gdap::handle(array, "array").readonly ? 1 : 0;
  });
}

GDAP_API gdap_status gdap_array_dim(gdap_dim* out, const gdap_array* array, int64_t dim) {
  return guard([&] {
    require(out, "out");
    const gdap_array& a = gdap::handle(array, "array");
    if (dim < 0 || dim >= a.ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, {})", dim, a.ndim());
    *out = a.dims[dim];
  });
}

GDAP_API gdap_status gdap_array_version(const char** version, const gdap_array* array) {
  return guard([&] {
    require(version, "version");
    *version = gdap::handle(array, "array").version.c_str();
  });
}

GDAP_API gdap_status gdap_array_global_to_local(int64_t* local, const gdap_array* array, const int64_t* global) {
  return guard([&] {
    const gdap_array& a = gdap::handle(array, "array");
    if (a.ndim() == 0) return;
    require(local, "local");
    require(global, "global");
    std::vector<int64_t> result;  // written to `local` only once every dimension succeeded
    result.reserve(static_cast<size_t>(a.ndim()));
    for (int64_t i = 0; i < a.ndim(); ++i) result.push_back(gdap::global_to_local_dim(a, i, global[i]));
    std::copy(result.begin(), result.end(), local);
  });
}

GDAP_API gdap_status gdap_array_local_to_global(int64_t* global, const gdap_array* array, const int64_t* local) {
  return guard([&] {
    const gdap_array& a = gdap::handle(array, "array");
    if (a.ndim() == 0) return;
    require(global, "global");
    require(local, "local");
    std::vector<int64_t> result;
    result.reserve(static_cast<size_t>(a.ndim()));
    for (int64_t i = 0; i < a.ndim(); ++i) {
      const int64_t extent = a.section.shape[static_cast<size_t>(i)];
      if (local[i] < 0 || local[i] >= extent) {
        fail(GDAP_ERR_OUT_OF_RANGE, "{}: local index {} is outside [0, {})", gdap::dim_label(a.dims[i], i), local[i],
             extent);
      }
      result.push_back(gdap::global_of_local(a.dims[i], local[i]));
    }
    std::copy(result.begin(), result.end(), global);
  });
}

}  // extern "C"
