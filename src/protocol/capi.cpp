// C entry points of layer 1: protocol versions and dimension descriptors. Each body runs in
// gdap::guard and computes into locals, so a failing call leaves every output as it was.
#include "core/error.hpp"
#include "protocol/dim.hpp"
#include "protocol/version.hpp"

namespace gdap {
namespace {

gdap_dim valid_dim(const gdap_dim* dim) {
  gdap_dim d = read_dim(dim, 0);
  validate_dim(d, 0, -1);
  return d;
}

// padding and periodic are added to a dictionary gdap_dim_set_block made.
gdap_dim& made_block(gdap_dim* dim, const char* key) {
  require(dim, "dim");
  if (dim->dist_type != GDAP_DIST_BLOCK) {
    const bool printable = dim->dist_type >= 32 && dim->dist_type < 127;
    fail(GDAP_ERR_INVALID_ARGUMENT, "key '{}' is a key of dist_type 'b', but dim has dist_type {}{}{} ({}); call "
         "gdap_dim_set_block first", key, printable ? "'" : "", printable ? static_cast<char>(dim->dist_type) : '?',
         printable ? "'" : "", dim->dist_type);
  }
  return *dim;
}

}  // namespace
}  // namespace gdap

using gdap::guard;
using gdap::require;

extern "C" {

GDAP_API gdap_status gdap_protocol_version_check(const char* version) {
  return guard([&] { gdap::check_protocol_version(version); });
}

GDAP_API gdap_status gdap_dim_init(gdap_dim* dim) {
  return guard([&] {
    require(dim, "dim");
    *dim = GDAP_DIM_INIT;
  });
}

GDAP_API gdap_status gdap_dim_set_block(gdap_dim* dim, int64_t size, int64_t proc_grid_size, int64_t proc_grid_rank,
                                        int64_t start, int64_t stop) {
  return guard([&] {
    require(dim, "dim");
    *dim = gdap::block_dim(size, proc_grid_size, proc_grid_rank, start, stop);
  });
}

GDAP_API gdap_status gdap_dim_set_padding(gdap_dim* dim, int64_t lower, int64_t upper) {
  return guard([&] {
    gdap_dim& d = gdap::made_block(dim, "padding");
    d = gdap::with_padding(d, lower, upper);
  });
}

GDAP_API gdap_status gdap_dim_set_periodic(gdap_dim* dim, int periodic) {
  return guard([&] {
    gdap_dim& d = gdap::made_block(dim, "periodic");
    d = gdap::with_periodic(d, periodic != 0);
  });
}

GDAP_API gdap_status gdap_dim_set_cyclic(gdap_dim* dim, int64_t size, int64_t proc_grid_size, int64_t proc_grid_rank,
                                         int64_t start, int64_t block_size) {
  return guard([&] {
    require(dim, "dim");
    *dim = gdap::cyclic_dim(size, proc_grid_size, proc_grid_rank, start, block_size);
  });
}

GDAP_API gdap_status gdap_dim_set_unstructured(gdap_dim* dim, int64_t size, int64_t proc_grid_size,
                                               int64_t proc_grid_rank, const int64_t* indices, int64_t num_indices,
                                               int one_to_one) {
  return guard([&] {
    require(dim, "dim");
    *dim = gdap::unstructured_dim(size, proc_grid_size, proc_grid_rank, indices, num_indices, one_to_one);
  });
}

GDAP_API gdap_status gdap_dim_set_undistributed(gdap_dim* dim, int64_t extent) {
  return guard([&] {
    require(dim, "dim");
    if (extent < 0) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "extent ({}) < 0", extent);
    gdap_dim init = GDAP_DIM_INIT;
    *dim = gdap::resolve_alias(init, extent);
  });
}

GDAP_API gdap_status gdap_dim_validate(const gdap_dim* dim, int64_t dim_index, int64_t extent) {
  return guard([&] { gdap::validate_dim(gdap::read_dim(dim, 0), dim_index, extent); });
}

GDAP_API gdap_status gdap_dims_validate(const gdap_dim* dims, int64_t ndim, const int64_t* shape) {
  return guard([&] {
    if (ndim < 0) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "ndim ({}) < 0", ndim);
    for (int64_t i = 0; i < ndim; ++i) {
      const int64_t extent = shape != nullptr ? shape[i] : -1;
      if (shape != nullptr && extent < 0) {
        gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "shape[{}] ({}) < 0", i, extent);
      }
      gdap::validate_dim(gdap::read_dim(dims, i), i, extent);
    }
  });
}

GDAP_API gdap_status gdap_dim_owned_count(int64_t* count, const gdap_dim* dim) {
  return guard([&] {
    require(count, "count");
    const int64_t result = gdap::owned_count(gdap::valid_dim(dim));
    *count = result;
  });
}

GDAP_API gdap_status gdap_dim_local_extent(int64_t* extent, const gdap_dim* dim) {
  return guard([&] {
    require(extent, "extent");
    const int64_t result = gdap::local_extent(gdap::valid_dim(dim));
    *extent = result;
  });
}

}  // extern "C"
