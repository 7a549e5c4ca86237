// Compile-time proof of the public structs' layout: sizes and field offsets are part of the ABI
// (Fortran and Julia mirror them field by field), and gdap_dtype / gdap_device must stay
// byte-compatible with DLPack's DLDataType / DLDevice. A change here is an ABI break: see docs/abi.md.
#include <gdap/gdap.h>

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace {

static_assert(sizeof(gdap_dim) == 104, "gdap_dim layout is ABI");
static_assert(offsetof(gdap_dim, struct_size) == 0);
static_assert(offsetof(gdap_dim, given) == 4);
static_assert(offsetof(gdap_dim, dist_type) == 8);
static_assert(offsetof(gdap_dim, periodic) == 12);
static_assert(offsetof(gdap_dim, size) == 16);
static_assert(offsetof(gdap_dim, proc_grid_size) == 24);
static_assert(offsetof(gdap_dim, proc_grid_rank) == 32);
static_assert(offsetof(gdap_dim, start) == 40);
static_assert(offsetof(gdap_dim, stop) == 48);
static_assert(offsetof(gdap_dim, padding) == 56);
static_assert(offsetof(gdap_dim, block_size) == 72);
static_assert(offsetof(gdap_dim, indices) == 80);
static_assert(offsetof(gdap_dim, num_indices) == 88);
static_assert(offsetof(gdap_dim, one_to_one) == 96);
static_assert(offsetof(gdap_dim, reserved) == 100);

// Every versioned struct begins with a uint32_t struct_size (core/versioned.hpp reads them all).
template <typename T>
constexpr bool versioned = std::is_same_v<decltype(T::struct_size), uint32_t> && offsetof(T, struct_size) == 0;
static_assert(versioned<gdap_dim> && versioned<gdap_plan_stats> && versioned<gdap_halo_options> &&
              versioned<gdap_halo_stats> && versioned<gdap_zarr_options> && versioned<gdap_gemm_options> &&
              versioned<gdap_gemm_stats>);

static_assert(sizeof(gdap_run) == 24);
static_assert(offsetof(gdap_run, global_start) == 0);
static_assert(offsetof(gdap_run, length) == 8);
static_assert(offsetof(gdap_run, local_start) == 16);

static_assert(sizeof(gdap_dtype) == sizeof(DLDataType));
static_assert(offsetof(gdap_dtype, code) == offsetof(DLDataType, code));
static_assert(offsetof(gdap_dtype, bits) == offsetof(DLDataType, bits));
static_assert(offsetof(gdap_dtype, lanes) == offsetof(DLDataType, lanes));
constexpr int code(int value) { return value; }
static_assert(code(GDAP_DTYPE_INT) == kDLInt && code(GDAP_DTYPE_UINT) == kDLUInt &&
              code(GDAP_DTYPE_FLOAT) == kDLFloat && code(GDAP_DTYPE_BFLOAT) == kDLBfloat &&
              code(GDAP_DTYPE_COMPLEX) == kDLComplex && code(GDAP_DTYPE_BOOL) == kDLBool);

static_assert(sizeof(gdap_device) == sizeof(DLDevice));
static_assert(offsetof(gdap_device, type) == offsetof(DLDevice, device_type));
static_assert(offsetof(gdap_device, id) == offsetof(DLDevice, device_id));
static_assert(code(GDAP_DEVICE_CPU) == kDLCPU && code(GDAP_DEVICE_CUDA) == kDLCUDA &&
              code(GDAP_DEVICE_CUDA_HOST) == kDLCUDAHost && code(GDAP_DEVICE_CUDA_MANAGED) == kDLCUDAManaged);

// Halo structs, as the Fortran and Julia bindings mirror them.
static_assert(sizeof(gdap_halo_options) == 16 && offsetof(gdap_halo_options, corners) == 4 &&
              offsetof(gdap_halo_options, widths) == 8);
static_assert(sizeof(gdap_halo_stats) == 64 && offsetof(gdap_halo_stats, reserved_head) == 4 &&
              offsetof(gdap_halo_stats, rank) == 8 && offsetof(gdap_halo_stats, local_bytes) == 56);
static_assert(sizeof(gdap_plan_stats) == 88 && offsetof(gdap_plan_stats, reserved_head) == 4 &&
              offsetof(gdap_plan_stats, rank) == 8 && offsetof(gdap_plan_stats, local_runs) == 80);

// GEMM structs, as the Fortran and Julia bindings mirror them.
static_assert(sizeof(gdap_axis_layout) == 56 && offsetof(gdap_axis_layout, dist_type) == 4 &&
              offsetof(gdap_axis_layout, size) == 8 && offsetof(gdap_axis_layout, grid_size) == 16 &&
              offsetof(gdap_axis_layout, block_size) == 24 && offsetof(gdap_axis_layout, lengths) == 32 &&
              offsetof(gdap_axis_layout, halo) == 40 && offsetof(gdap_axis_layout, periodic) == 48 &&
              offsetof(gdap_axis_layout, reserved) == 52);

static_assert(sizeof(gdap_gemm_options) == 16 && offsetof(gdap_gemm_options, mode) == 4 &&
              offsetof(gdap_gemm_options, panel_width) == 8);
static_assert(sizeof(gdap_gemm_stats) == 112 && offsetof(gdap_gemm_stats, reserved_head) == 4 &&
              offsetof(gdap_gemm_stats, rank) == 8 && offsetof(gdap_gemm_stats, flops) == 104);

// Zarr options, as the Fortran and Julia bindings mirror them.
static_assert(sizeof(gdap_zarr_options) == 40 && offsetof(gdap_zarr_options, reserved_head) == 4 &&
              offsetof(gdap_zarr_options, codec) == 8 &&
              offsetof(gdap_zarr_options, zstd_level) == 12 && offsetof(gdap_zarr_options, overwrite) == 16 &&
              offsetof(gdap_zarr_options, layout) == 24 && offsetof(gdap_zarr_options, shuffle) == 28 &&
              offsetof(gdap_zarr_options, chunk_bytes) == 32);

}  // namespace
