// DimData: a dim_data that owns the indices of its unstructured dimensions. Every gdap_dim it hands
// out points at its own storage, so a copy never shares (or dangles on) another's indices.
#include "protocol/dim_data.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <new>
#include <utility>

namespace gdap {
namespace {

// The indices a dictionary holds, copied; empty for other dist_types or a NULL/empty list.
std::vector<int64_t> copy_indices(const gdap_dim& dim) {
  if (dim.dist_type != GDAP_DIST_UNSTRUCTURED || dim.indices == nullptr || dim.num_indices <= 0) return {};
  try {
    return std::vector<int64_t>(dim.indices, dim.indices + dim.num_indices);
  } catch (const std::bad_alloc&) {
    fail(GDAP_ERR_NO_MEMORY, "no memory to copy num_indices ({}) unstructured indices", dim.num_indices);
  }
}

}  // namespace

DimData::DimData(const DimData& other) : dims_(other.dims_), indices_(other.indices_) { repoint(); }

DimData& DimData::operator=(const DimData& other) {
  if (this != &other) {
    DimData copy(other);  // all allocation first, so a failure leaves *this as it was
    *this = std::move(copy);
  }
  return *this;
}

DimData DimData::copy_from(const gdap_dim* dims, int64_t ndim) {
  if (ndim < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
  DimData out;
  out.dims_.reserve(static_cast<size_t>(std::min<int64_t>(ndim, 64)));
  for (int64_t i = 0; i < ndim; ++i) out.push_back(read_dim(dims, i));
  return out;
}

void DimData::push_back(const gdap_dim& dim) {
  std::vector<int64_t> copy = copy_indices(dim);
  // Geometric growth: reserving one more each time made a million dimensions quadratic.
  if (dims_.size() == dims_.capacity()) dims_.reserve(std::max<size_t>(4, 2 * dims_.size()));
  if (indices_.size() == indices_.capacity()) indices_.reserve(std::max<size_t>(4, 2 * indices_.size()));
  // Nothing below allocates: both vectors stay the same length even if the copy above threw.
  dims_.push_back(dim);
  indices_.push_back(std::move(copy));
  // Moved index vectors keep their buffers, so only the new dimension needs pointing at its copy.
  if (dims_.back().dist_type == GDAP_DIST_UNSTRUCTURED) {
    dims_.back().indices = indices_.back().empty() ? nullptr : indices_.back().data();
  }
}

void DimData::set(int64_t i, const gdap_dim& dim) {
  if (i < 0 || i >= ndim()) fail(GDAP_ERR_OUT_OF_RANGE, "dimension {} is outside [0, ndim ({}))", i, ndim());
  std::vector<int64_t> copy = copy_indices(dim);
  const auto k = static_cast<size_t>(i);
  dims_[k] = dim;
  indices_[k] = std::move(copy);
  // Only dimension k changed: re-pointing them all made setting every dimension quadratic.
  if (dims_[k].dist_type == GDAP_DIST_UNSTRUCTURED) dims_[k].indices = indices_[k].empty() ? nullptr : indices_[k].data();
}

void DimData::repoint() {
  for (size_t k = 0; k < dims_.size(); ++k) {
    if (dims_[k].dist_type == GDAP_DIST_UNSTRUCTURED) {
      dims_[k].indices = indices_[k].empty() ? nullptr : indices_[k].data();
    }
  }
}

}  // namespace gdap
