// dim_data as JSON, the form the CLI, the conformance vectors and the fuzzers read:
// a list of dictionaries with the protocol's keys, padding as a 2-element list, {} for the alias.
// Unknown keys, keys of another dist_type and values of the wrong JSON type are errors that name
// the dimension and the key.
#pragma once

#include "protocol/dim_data.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gdap {

// One dictionary (dimension `dim_index` labels errors). Indices are copied into the DimData by
// dim_data_from_json; here they are appended to `indices` and dim.indices is left NULL.
gdap_dim dim_from_json(const nlohmann::json& dict, int64_t dim_index, std::vector<int64_t>& indices);

// A whole dim_data list. Throws GDAP_ERR_PROTOCOL naming what it got when it is not a list (or an
// element not a dictionary), and GDAP_ERR_OVERFLOW for an integer outside int64.
DimData dim_data_from_json(const nlohmann::json& list);

// Parses JSON text holding a dim_data list, for untrusted input (CLI files, fuzzers): malformed
// JSON, nesting deeper than a dim_data list can be (list > dict > padding/indices list) and a key
// repeated within one dictionary are GDAP_ERR_PROTOCOL, found while parsing, so hostile text
// costs no recursion and no memory beyond a small multiple of its size.
DimData dim_data_from_json_text(std::string_view text);

// The inverse: only the optional keys in `given` are written; the alias {} stays {}.
// The first key that appears twice in one JSON object of `text` (nlohmann would keep only the
// last), found in one SAX pass before anything is built; nothing if none is, or if the text is
// not JSON (its parse then names the error).
std::optional<std::string> repeated_key(std::string_view text);

nlohmann::json dim_to_json(const gdap_dim& dim);
nlohmann::json dim_data_to_json(const DimData& dims);

}  // namespace gdap
