// DimData: a dim_data that owns the indices of its unstructured dimensions.
#include "protocol/dim_data.hpp"

#include "core/error.hpp"

namespace gdap {

DimData::DimData(const DimData& other) : dims_(other.dims_), indices_(other.indices_) { repoint(); }

DimData& DimData::operator=(const DimData& other) {
  if (this != &other) {
    dims_ = other.dims_;
    indices_ = other.indices_;
    repoint();
  }
  return *this;
}

DimData DimData::copy_from(const gdap_dim* dims, int64_t ndim) {
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
  DimData out;
  for (int64_t i = 0; i < ndim; ++i) out.push_back(read_dim(dims, i));
  return out;
}

void DimData::push_back(const gdap_dim& dim) {
  dims_.push_back(dim);
  indices_.emplace_back();
  set(ndim() - 1, dim);
}

void DimData::set(int64_t i, const gdap_dim& dim) {
  auto k = static_cast<size_t>(i);
  dims_[k] = dim;
  std::vector<int64_t> copy;
  if (dim.dist_type == GDAP_DIST_UNSTRUCTURED && dim.indices != nullptr && dim.num_indices > 0) {
    copy.assign(dim.indices, dim.indices + dim.num_indices);
  }
  indices_[k] = std::move(copy);
  repoint();
}

void DimData::repoint() {
  for (size_t k = 0; k < dims_.size(); ++k) {
    if (dims_[k].dist_type == GDAP_DIST_UNSTRUCTURED) {
      dims_[k].indices = indices_[k].empty() ? nullptr : indices_[k].data();
    }
  }
}

}  // namespace gdap
