// DLPack producers for tests: a host (or any-device) tensor whose deleter counts its calls, so
// that tests can prove gdap calls it exactly once, and only when it owns it.
#pragma once

#include <gdap/gdap.h>

#include <dlpack/dlpack.h>

#include "support/dims.hpp"

#include <atomic>
#include <cstdint>
#include <vector>

namespace gdap_test {

struct Producer {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::atomic<int> deleted{0};
  DLManagedTensorVersioned versioned{};
  DLManagedTensor unversioned{};

  // A tensor over `data` (not owned), C-contiguous unless strides are given.
  Producer(void* data, std::vector<int64_t> s, DLDataType dtype = {kDLFloat, 64, 1},
           std::vector<int64_t> st = {}, DLDevice device = {kDLCPU, 0})
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
    versioned.deleter = [](DLManagedTensorVersioned* self) {
      static_cast<Producer*>(self->manager_ctx)->deleted++;
    };
    unversioned.dl_tensor = t;
    unversioned.manager_ctx = this;
    unversioned.deleter = [](DLManagedTensor* self) { static_cast<Producer*>(self->manager_ctx)->deleted++; };
  }
};


}  // namespace gdap_test
