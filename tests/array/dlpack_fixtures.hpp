// DLPack producers for tests: a tensor (over memory the test keeps) whose deleter counts its
// calls, so that tests can prove gdap calls it exactly once, only when it owns it, and that a
// refused tensor comes back exactly as it went in.
#pragma once

#include <gdap/gdap.h>

#include <dlpack/dlpack.h>

#include "support/dims.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gdap_test {

struct Producer {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::atomic<int> deleted{0};
  DLManagedTensorVersioned versioned{};
  DLManagedTensor unversioned{};

  // A tensor over `data` (not owned), C-contiguous unless strides are given.
  Producer(void* data, std::vector<int64_t> s, DLDataType dtype = {kDLFloat, 64, 1}, std::vector<int64_t> st = {},
           DLDevice device = {kDLCPU, 0})
      : shape(std::move(s)), strides(std::move(st)) {
    DLTensor t{};
    t.data = data;
    t.device = device;
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    versioned.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    versioned.dl_tensor = t;
    versioned.manager_ctx = this;
    versioned.deleter = [](DLManagedTensorVersioned* self) { static_cast<Producer*>(self->manager_ctx)->deleted++; };
    unversioned.dl_tensor = t;
    unversioned.manager_ctx = this;
    unversioned.deleter = [](DLManagedTensor* self) { static_cast<Producer*>(self->manager_ctx)->deleted++; };
  }
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  // Points both tensors at the current shape and strides vectors (after a test changed them).
  void repoint() {
    for (DLTensor* t : {&versioned.dl_tensor, &unversioned.dl_tensor}) {
      t->shape = shape.data();
      t->strides = strides.empty() ? nullptr : strides.data();
    }
  }
};

// Everything a consumer could change in a producer's tensor: the structs and the arrays they
// point at. Equal snapshots before and after a refused import prove it was left alone.
struct Snapshot {
  DLManagedTensorVersioned versioned;
  DLManagedTensor unversioned;
  std::vector<int64_t> shape, strides;

  explicit Snapshot(const Producer& p)
      : versioned(p.versioned), unversioned(p.unversioned), shape(p.shape), strides(p.strides) {}
  bool same_as(const Producer& p) const {
    return std::memcmp(&versioned, &p.versioned, sizeof versioned) == 0 &&
           std::memcmp(&unversioned, &p.unversioned, sizeof unversioned) == 0 && shape == p.shape &&
           strides == p.strides;
  }
};

}  // namespace gdap_test
