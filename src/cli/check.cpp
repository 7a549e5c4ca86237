// Checking the CLI's input through the public C API (see input.hpp).
#include "cli/input.hpp"

#include <fmt/format.h>

namespace gdap::cli {

void check_rank(const RankInput& rank, size_t r) {
  auto invalid = [&](gdap_status s) {
    if (s != GDAP_SUCCESS) throw Invalid(s, fmt::format("rank {}: {}", r, gdap_last_error()));
  };
  invalid(gdap_protocol_version_check(rank.version.c_str()));
  if (rank.shape && static_cast<int64_t>(rank.shape->size()) != rank.dims.ndim()) {
    throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("rank {}: 'shape' has {} entries but dim_data has {} dimensions", r,
                                                 rank.shape->size(), rank.dims.ndim()));
  }
  invalid(gdap_dims_validate(rank.dims.data(), rank.dims.ndim(), rank.shape ? rank.shape->data() : nullptr));
}

bool whole_grid(const Input& input) {
  if (input.all_ranks) return true;
  const DimData& dims = input.ranks[0].dims;
  for (int64_t i = 0; i < dims.ndim(); ++i) {
    if (dims[i].dist_type != GDAP_DIST_UNDISTRIBUTED && dims[i].proc_grid_size != 1) return false;
  }
  return true;
}

MapPtr checked_map(Input& input) {
  for (size_t r = 0; r < input.ranks.size(); ++r) check_rank(input.ranks[r], r);
  resolve_aliases(input);
  const int64_t ndim = input.ranks[0].dims.ndim();
  std::vector<gdap_dim> all;
  for (size_t r = 0; r < input.ranks.size(); ++r) {
    const DimData& dims = input.ranks[r].dims;
    if (dims.ndim() != ndim) {
      throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("rank {} has {} dimensions but rank 0 has {}", r, dims.ndim(), ndim));
    }
    all.insert(all.end(), dims.data(), dims.data() + ndim);  // rank-major, as gdap_map_create takes them
  }
  gdap_map* map = nullptr;
  const gdap_status s =
      gdap_map_create(&map, static_cast<int64_t>(input.ranks.size()), ndim, all.empty() ? nullptr : all.data());
  if (s != GDAP_SUCCESS) throw Invalid(s, gdap_last_error());  // the message names the rank
  return MapPtr(map, gdap_map_destroy);
}

MapPtr read_whole_map(const std::string& path, const char* command) {
  Input input = read_input(path);
  if (!whole_grid(input)) {
    check_rank(input.ranks[0], 0);  // an invalid rank says so first
    throw Error(GDAP_ERR_INVALID_ARGUMENT,
                fmt::format("'{}' holds one rank's dim_data of a larger grid; {} needs every rank's "
                            "(a list of dim_data lists, or {{\"ranks\": [...]}})",
                            path, command));
  }
  return checked_map(input);
}

}  // namespace gdap::cli
