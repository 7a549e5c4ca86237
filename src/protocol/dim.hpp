// The protocol's dimension dictionary inside gdap: reading the caller's gdap_dim arrays (whose
// stride is the caller's struct_size), the per-process rules, and the per-dimension counts that
// every higher layer uses. Everything here throws gdap::Error; the C entry points guard it.
#pragma once

#include <gdap/gdap.h>

#include <cstdint>
#include <string>

namespace gdap {

// Copies dimension `i` of a caller's array: reads dims[0].struct_size bytes per element (the
// caller's layout), fills fields the caller's struct does not cover with GDAP_DIM_INIT values.
// Throws GDAP_ERR_INVALID_ARGUMENT for a NULL array or a struct_size smaller than the first
// release's gdap_dim or not a multiple of 8.
gdap_dim read_dim(const gdap_dim* dims, int64_t i);

// Said after "dist_type 'n' is not 'b', 'c' or 'u'" wherever a dictionary is read.
inline constexpr const char* kNotN =
    " ('n', undistributed, is DAP 0.9's; 0.10 writes the empty dictionary {} or 'b' over one grid rank)";

// "dimension 2 ('c')" — the label every message about a dimension starts with.
std::string dim_label(const gdap_dim& dim, int64_t dim_index);

// Per-process rules of PROTOCOL.md for one dictionary; `extent` is the buffer length along it
// or -1 if unknown. Throws GDAP_ERR_PROTOCOL / GDAP_ERR_OVERFLOW naming dimension, key, values.
void validate_dim(const gdap_dim& dim, int64_t dim_index, int64_t extent);

// Replaces an empty dictionary {} by what it stands for, given the buffer extent.
gdap_dim resolve_alias(const gdap_dim& dim, int64_t extent);

// Effective optional values (defaults when the key was not given).
int64_t block_size_of(const gdap_dim& dim);  // 'c': 1 unless given
bool is_periodic(const gdap_dim& dim);       // 'b'
bool is_one_to_one(const gdap_dim& dim);     // 'u'

// Communication padding below / above for 'b' (0 for other types): padding on a side with a
// neighbour (grid rank > 0 below, < proc_grid_size - 1 above), periodic or not.
int64_t comm_padding_lower(const gdap_dim& dim);
int64_t comm_padding_upper(const gdap_dim& dim);
// Boundary padding below / above for 'b' (0 for other types): grid rank 0's padding[0] and the last
// grid rank's padding[1]. Owned and counted in size; a periodic halo exchange fills it.
int64_t boundary_padding_lower(const gdap_dim& dim);
int64_t boundary_padding_upper(const gdap_dim& dim);

// Owned global indices along the dimension (see gdap_dim_owned_count). Needs a valid dictionary.
int64_t owned_count(const gdap_dim& dim);

// Buffer extent the dictionary implies (see gdap_dim_local_extent).
int64_t local_extent(const gdap_dim& dim);

// GDAP_DIM_INIT with the keys every dist_type has; the setters add their own.
gdap_dim common_keys(int32_t dist_type, int64_t size, int64_t grid_size, int64_t grid_rank);

// Dictionaries as the setters make them (unchecked, as gdap_dim_set_block and
// gdap_dim_set_unstructured): a 'b' dimension of `size` over `grid_size` grid ranks, rank
// `grid_rank` holding [start, stop); a 'u' one holding `num_indices` indices (borrowed by the
// dictionary), `one_to_one` given when >= 0.
gdap_dim block_dim(int64_t size, int64_t grid_size, int64_t grid_rank, int64_t start, int64_t stop);
gdap_dim unstructured_dim(int64_t size, int64_t grid_size, int64_t grid_rank, const int64_t* indices,
                          int64_t num_indices, int one_to_one);
// A 'c' dimension as gdap_dim_set_cyclic makes it: block_size given unless 0.
gdap_dim cyclic_dim(int64_t size, int64_t grid_size, int64_t grid_rank, int64_t start, int64_t block_size);
// `d` (a 'b' dictionary) with padding, or periodic, given, as gdap_dim_set_padding and
// gdap_dim_set_periodic add them.
gdap_dim with_padding(gdap_dim d, int64_t lower, int64_t upper);
gdap_dim with_periodic(gdap_dim d, bool periodic);

// Owned count of grid rank `grid_rank` of a cyclic dimension of `size` over `grid_size` ranks
// in blocks of `block_size` (the protocol's rule: the partial block goes to rank nb % P).
int64_t cyclic_owned_count(int64_t size, int64_t grid_size, int64_t block_size, int64_t grid_rank);

}  // namespace gdap
