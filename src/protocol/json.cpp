// dim_data as JSON (the CLI's and the conformance vectors' form). Strict: a wrong type, an unknown
// key or a key of another dist_type is an error naming the dimension and the key.
#include "protocol/json.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace gdap {
namespace {

using json = nlohmann::json;

int64_t to_int(const json& value, const std::string& label, const char* key) {
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(GDAP_ERR_OVERFLOW, "{}: key '{}' ({}) does not fit in int64", label, key, value.dump());
    }
    return value.get<int64_t>();
  }
  fail(GDAP_ERR_PROTOCOL, "{}: key '{}' must be an integer, not {} ({})", label, key, value.type_name(),
       value.dump().substr(0, 40));
}

int32_t to_bool(const json& value, const std::string& label, const char* key) {
  if (!value.is_boolean()) {
    fail(GDAP_ERR_PROTOCOL, "{}: key '{}' must be a boolean, not {}", label, key, value.type_name());
  }
  return value.get<bool>() ? 1 : 0;
}

int32_t parse_dist_type(const json& dict, int64_t dim_index) {
  auto it = dict.find("dist_type");
  if (it == dict.end()) fail(GDAP_ERR_PROTOCOL, "dimension {}: missing required key 'dist_type'", dim_index);
  if (!it->is_string()) {
    fail(GDAP_ERR_PROTOCOL, "dimension {}: key 'dist_type' must be a string, not {}", dim_index, it->type_name());
  }
  const auto text = it->get<std::string>();
  if (text == "b") return GDAP_DIST_BLOCK;
  if (text == "c") return GDAP_DIST_CYCLIC;
  if (text == "u") return GDAP_DIST_UNSTRUCTURED;
  fail(GDAP_ERR_PROTOCOL, "dimension {}: dist_type '{}' is not 'b', 'c' or 'u'", dim_index, text.substr(0, 20));
}

// Keys each dist_type may hold, the protocol's required ones and its optional ones.
struct KeySet {
  std::vector<std::string> required;
  std::vector<std::string> optional;
};

const KeySet& keys_for(int32_t dist_type) {
  static const KeySet block{{"start", "stop"}, {"padding", "periodic"}};
  static const KeySet cyclic{{"start"}, {"block_size"}};
  static const KeySet unstructured{{"indices"}, {"one_to_one"}};
  return dist_type == GDAP_DIST_BLOCK ? block : dist_type == GDAP_DIST_CYCLIC ? cyclic : unstructured;
}

bool listed(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

void check_keys(const json& dict, int32_t dist_type, const std::string& label) {
  static const std::vector<std::string> common = {"dist_type", "size", "proc_grid_size", "proc_grid_rank"};
  static const std::vector<std::string> any_type = {"start",      "stop",    "padding",   "periodic",
                                                    "block_size", "indices", "one_to_one"};
  const KeySet& keys = keys_for(dist_type);
  for (const auto& item : dict.items()) {
    const std::string& key = item.key();
    if (listed(common, key) || listed(keys.required, key) || listed(keys.optional, key)) continue;
    if (listed(any_type, key)) {
      fail(GDAP_ERR_PROTOCOL, "{}: key '{}' is not a key of dist_type '{}'", label, key,
           static_cast<char>(dist_type));
    }
    fail(GDAP_ERR_PROTOCOL, "{}: unknown key '{}'", label, key.substr(0, 40));
  }
  for (const auto* list : {&common, &keys.required}) {
    for (const std::string& key : *list) {
      if (!dict.contains(key)) fail(GDAP_ERR_PROTOCOL, "{}: missing required key '{}'", label, key);
    }
  }
}

void read_block_keys(const json& dict, gdap_dim& dim, const std::string& label) {
  dim.start = to_int(dict.at("start"), label, "start");
  dim.stop = to_int(dict.at("stop"), label, "stop");
  if (auto it = dict.find("padding"); it != dict.end()) {
    if (!it->is_array() || it->size() != 2) {
      fail(GDAP_ERR_PROTOCOL, "{}: key 'padding' must be a list of 2 integers", label);
    }
    dim.padding[0] = to_int((*it)[0], label, "padding");
    dim.padding[1] = to_int((*it)[1], label, "padding");
    dim.given |= GDAP_KEY_PADDING;
  }
  if (auto it = dict.find("periodic"); it != dict.end()) {
    dim.periodic = to_bool(*it, label, "periodic");
    dim.given |= GDAP_KEY_PERIODIC;
  }
}

void read_unstructured_keys(const json& dict, gdap_dim& dim, const std::string& label, std::vector<int64_t>& indices) {
  const json& list = dict.at("indices");
  if (!list.is_array()) fail(GDAP_ERR_PROTOCOL, "{}: key 'indices' must be a list of integers", label);
  indices.reserve(indices.size() + list.size());
  for (const auto& value : list) indices.push_back(to_int(value, label, "indices"));
  dim.num_indices = static_cast<int64_t>(list.size());
  if (auto it = dict.find("one_to_one"); it != dict.end()) {
    dim.one_to_one = to_bool(*it, label, "one_to_one");
    dim.given |= GDAP_KEY_ONE_TO_ONE;
  }
}

}  // namespace

gdap_dim dim_from_json(const json& dict, int64_t dim_index, std::vector<int64_t>& indices) {
  gdap_dim dim = GDAP_DIM_INIT;
  if (!dict.is_object()) {
    fail(GDAP_ERR_PROTOCOL, "dimension {}: a dimension dictionary must be a JSON object, not {}", dim_index,
         dict.type_name());
  }
  if (dict.empty()) return dim;  // the {} alias
  dim.dist_type = parse_dist_type(dict, dim_index);
  const std::string label = dim_label(dim, dim_index);
  check_keys(dict, dim.dist_type, label);
  dim.size = to_int(dict.at("size"), label, "size");
  dim.proc_grid_size = to_int(dict.at("proc_grid_size"), label, "proc_grid_size");
  dim.proc_grid_rank = to_int(dict.at("proc_grid_rank"), label, "proc_grid_rank");
  if (dim.dist_type == GDAP_DIST_BLOCK) read_block_keys(dict, dim, label);
  if (dim.dist_type == GDAP_DIST_CYCLIC) {
    dim.start = to_int(dict.at("start"), label, "start");
    if (auto it = dict.find("block_size"); it != dict.end()) {
      dim.block_size = to_int(*it, label, "block_size");
      dim.given |= GDAP_KEY_BLOCK_SIZE;
    }
  }
  if (dim.dist_type == GDAP_DIST_UNSTRUCTURED) read_unstructured_keys(dict, dim, label, indices);
  return dim;
}

DimData dim_data_from_json(const json& list) {
  if (!list.is_array()) {
    fail(GDAP_ERR_PROTOCOL, "dim_data must be a JSON list of dimension dictionaries, not {}", list.type_name());
  }
  DimData out;
  int64_t i = 0;
  for (const auto& dict : list) {
    std::vector<int64_t> indices;
    gdap_dim dim = dim_from_json(dict, i++, indices);
    dim.indices = indices.empty() ? nullptr : indices.data();
    out.push_back(dim);  // copies the indices
  }
  return out;
}

json dim_to_json(const gdap_dim& dim) {
  json out = json::object();
  if (dim.dist_type == GDAP_DIST_UNDISTRIBUTED) return out;
  out["dist_type"] = std::string(1, static_cast<char>(dim.dist_type));
  out["size"] = dim.size;
  out["proc_grid_size"] = dim.proc_grid_size;
  out["proc_grid_rank"] = dim.proc_grid_rank;
  if (dim.dist_type == GDAP_DIST_BLOCK) {
    out["start"] = dim.start;
    out["stop"] = dim.stop;
    if (dim.given & GDAP_KEY_PADDING) out["padding"] = {dim.padding[0], dim.padding[1]};
    if (dim.given & GDAP_KEY_PERIODIC) out["periodic"] = dim.periodic != 0;
  } else if (dim.dist_type == GDAP_DIST_CYCLIC) {
    out["start"] = dim.start;
    if (dim.given & GDAP_KEY_BLOCK_SIZE) out["block_size"] = dim.block_size;
  } else {
    json indices = json::array();
    for (int64_t i = 0; i < dim.num_indices; ++i) indices.push_back(dim.indices[i]);
    out["indices"] = std::move(indices);
    if (dim.given & GDAP_KEY_ONE_TO_ONE) out["one_to_one"] = dim.one_to_one != 0;
  }
  return out;
}

json dim_data_to_json(const DimData& dims) {
  json out = json::array();
  for (int64_t i = 0; i < dims.ndim(); ++i) out.push_back(dim_to_json(dims[i]));
  return out;
}

}  // namespace gdap
