// dim_data as JSON, the form the CLI, the conformance vectors and the fuzzers read:
// a list of dictionaries with the protocol's keys, padding as a 2-element list, {} for the alias.
// Unknown keys, keys of another dist_type and values of the wrong JSON type are errors that name
// the dimension and the key.
#pragma once

#include "protocol/dim_data.hpp"

#include <nlohmann/json.hpp>

namespace gdap {

// One dictionary (dimension `dim_index` labels errors). Indices are copied into the DimData by
// dim_data_from_json; here they are appended to `indices` and dim.indices is left NULL.
gdap_dim dim_from_json(const nlohmann::json& dict, int64_t dim_index, std::vector<int64_t>& indices);

// A whole dim_data list. Throws GDAP_ERR_PROTOCOL (or GDAP_ERR_INVALID_ARGUMENT when not a list).
DimData dim_data_from_json(const nlohmann::json& list);

// The inverse: only the optional keys in `given` are written; the alias {} stays {}.
nlohmann::json dim_to_json(const gdap_dim& dim);
nlohmann::json dim_data_to_json(const DimData& dims);

}  // namespace gdap
