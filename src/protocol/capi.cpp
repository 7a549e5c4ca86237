// C entry points of layer 1: protocol versions and dimension descriptors.
#include "core/checked.hpp"
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

gdap_dim& block_dim(gdap_dim* dim) {
  require(dim, "dim");
  if (dim->dist_type != GDAP_DIST_BLOCK) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "padding and periodic are keys of block dimensions; this one has dist_type {}",
         dim->dist_type);
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
    gdap_dim d = GDAP_DIM_INIT;
    d.dist_type = GDAP_DIST_BLOCK;
    d.size = size;
    d.proc_grid_size = proc_grid_size;
    d.proc_grid_rank = proc_grid_rank;
    d.start = start;
    d.stop = stop;
    *dim = d;
  });
}

GDAP_API gdap_status gdap_dim_set_padding(gdap_dim* dim, int64_t lower, int64_t upper) {
  return guard([&] {
    gdap_dim& d = gdap::block_dim(dim);
    d.padding[0] = lower;
    d.padding[1] = upper;
    d.given |= GDAP_KEY_PADDING;
  });
}

GDAP_API gdap_status gdap_dim_set_periodic(gdap_dim* dim, int periodic) {
  return guard([&] {
    gdap_dim& d = gdap::block_dim(dim);
    d.periodic = periodic != 0 ? 1 : 0;
    d.given |= GDAP_KEY_PERIODIC;
  });
}

GDAP_API gdap_status gdap_dim_set_cyclic(gdap_dim* dim, int64_t size, int64_t proc_grid_size, int64_t proc_grid_rank,
                                         int64_t start, int64_t block_size) {
  return guard([&] {
    require(dim, "dim");
    gdap_dim d = GDAP_DIM_INIT;
    d.dist_type = GDAP_DIST_CYCLIC;
    d.size = size;
    d.proc_grid_size = proc_grid_size;
    d.proc_grid_rank = proc_grid_rank;
    d.start = start;
    if (block_size != 0) {
      d.block_size = block_size;
      d.given |= GDAP_KEY_BLOCK_SIZE;
    }
    *dim = d;
  });
}

GDAP_API gdap_status gdap_dim_set_unstructured(gdap_dim* dim, int64_t size, int64_t proc_grid_size,
                                               int64_t proc_grid_rank, const int64_t* indices, int64_t num_indices,
                                               int one_to_one) {
  return guard([&] {
    require(dim, "dim");
    gdap_dim d = GDAP_DIM_INIT;
    d.dist_type = GDAP_DIST_UNSTRUCTURED;
    d.size = size;
    d.proc_grid_size = proc_grid_size;
    d.proc_grid_rank = proc_grid_rank;
    d.indices = indices;
    d.num_indices = num_indices;
    if (one_to_one >= 0) {
      d.one_to_one = one_to_one != 0 ? 1 : 0;
      d.given |= GDAP_KEY_ONE_TO_ONE;
    }
    *dim = d;
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
    *count = gdap::owned_count(gdap::valid_dim(dim));
  });
}

GDAP_API gdap_status gdap_dim_local_extent(int64_t* extent, const gdap_dim* dim) {
  return guard([&] {
    require(extent, "extent");
    *extent = gdap::local_extent(gdap::valid_dim(dim));
  });
}

}  // extern "C"
