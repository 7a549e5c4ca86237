// The CLI's JSON input forms (see input.hpp).
#include "cli/input.hpp"

#include "core/error.hpp"
#include "protocol/json.hpp"

#include <fstream>
#include <sstream>

namespace gdap::cli {
namespace {

using json = nlohmann::json;

RankInput read_rank(const json& value, size_t rank) {
  RankInput out;
  try {
    if (value.is_array()) {
      out.dims = dim_data_from_json(value);
      return out;
    }
    if (!value.is_object() || !value.contains("dim_data")) {
      fail(GDAP_ERR_PROTOCOL, "expected a dim_data list or an object with 'dim_data', got {}", value.type_name());
    }
    for (const auto& item : value.items()) {
      if (item.key() != "dim_data" && item.key() != "__version__" && item.key() != "shape") {
        fail(GDAP_ERR_PROTOCOL, "unknown key '{}' (expected '__version__', 'dim_data', 'shape')", item.key());
      }
    }
    out.dims = dim_data_from_json(value.at("dim_data"));
    if (value.contains("__version__")) {
      if (!value["__version__"].is_string()) fail(GDAP_ERR_PROTOCOL, "'__version__' must be a string");
      out.version = value["__version__"].get<std::string>();
    }
    if (value.contains("shape")) {
      const json& shape = value["shape"];
      if (!shape.is_array()) fail(GDAP_ERR_PROTOCOL, "'shape' must be a list of integers");
      std::vector<int64_t> s;
      for (const auto& v : shape) {
        if (!v.is_number_integer()) fail(GDAP_ERR_PROTOCOL, "'shape' must be a list of integers");
        s.push_back(v.get<int64_t>());
      }
      out.shape = std::move(s);
    }
  } catch (const Error& e) {
    throw Error(e.status(), fmt::format("rank {}: {}", rank, e.what()));
  }
  return out;
}

bool is_rank_list(const json& doc) {
  return doc.is_array() && !doc.empty() && (doc[0].is_array() || (doc[0].is_object() && doc[0].contains("dim_data")));
}

}  // namespace

Input read_input(const std::string& path) {
  std::ifstream file(path);
  if (!file) fail(GDAP_ERR_IO, "cannot open '{}'", path);
  std::stringstream text;
  text << file.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::parse_error& e) {
    fail(GDAP_ERR_IO, "'{}' is not valid JSON: {}", path, e.what());
  }
  Input input;
  const json* ranks = nullptr;
  if (doc.is_object() && doc.contains("ranks")) {
    ranks = &doc["ranks"];
    if (!ranks->is_array()) fail(GDAP_ERR_PROTOCOL, "'ranks' must be a list");
  } else if (is_rank_list(doc)) {
    ranks = &doc;
  }
  if (ranks != nullptr) {
    input.all_ranks = true;
    for (size_t r = 0; r < ranks->size(); ++r) input.ranks.push_back(read_rank((*ranks)[r], r));
    if (input.ranks.empty()) fail(GDAP_ERR_PROTOCOL, "'ranks' is empty");
  } else {
    input.ranks.push_back(read_rank(doc, 0));
  }
  return input;
}

void resolve_aliases(Input& input) {
  for (size_t r = 0; r < input.ranks.size(); ++r) {
    RankInput& rank = input.ranks[r];
    for (int64_t i = 0; i < rank.dims.ndim(); ++i) {
      if (rank.dims[i].dist_type != GDAP_DIST_UNDISTRIBUTED) continue;
      if (!rank.shape || static_cast<int64_t>(rank.shape->size()) != rank.dims.ndim()) {
        fail(GDAP_ERR_PROTOCOL, "rank {}, dimension {}: the empty dictionary {{}} needs the rank's 'shape'", r, i);
      }
      gdap_dim d = GDAP_DIM_INIT;
      gdap_dim_set_undistributed(&d, (*rank.shape)[static_cast<size_t>(i)]);
      rank.dims.set(i, d);
    }
  }
}

std::vector<gdap_dim> rank_major(const Input& input) {
  std::vector<gdap_dim> all;
  for (const RankInput& rank : input.ranks) {
    for (int64_t i = 0; i < rank.dims.ndim(); ++i) all.push_back(rank.dims[i]);
  }
  return all;
}

}  // namespace gdap::cli
