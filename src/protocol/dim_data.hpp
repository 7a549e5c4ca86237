// DimData: one process's dim_data that owns its unstructured indices, so that the gdap_dim
// structs it hands out stay valid as long as it lives (copies re-point them at their own storage).
#pragma once

#include "protocol/dim.hpp"

#include <cstdint>
#include <vector>

namespace gdap {

class DimData {
 public:
  DimData() = default;
  DimData(const DimData& other);
  DimData& operator=(const DimData& other);
  DimData(DimData&&) noexcept = default;
  DimData& operator=(DimData&&) noexcept = default;

  // Copies `ndim` dictionaries from a caller's array (stride dims[0].struct_size) and their
  // indices. `dims` may be NULL when ndim == 0.
  static DimData copy_from(const gdap_dim* dims, int64_t ndim);

  // Appends a dictionary; for 'u' its indices are copied into owned storage.
  void push_back(const gdap_dim& dim);

  int64_t ndim() const { return static_cast<int64_t>(dims_.size()); }
  const gdap_dim& operator[](int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  const gdap_dim* data() const { return dims_.data(); }

  // Replaces dimension i (indices copied as in push_back).
  void set(int64_t i, const gdap_dim& dim);

 private:
  void repoint();
  std::vector<gdap_dim> dims_;
  std::vector<std::vector<int64_t>> indices_;  // indices_[i] backs dims_[i].indices for 'u'
};

}  // namespace gdap
