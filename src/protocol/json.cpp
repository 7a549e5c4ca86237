// dim_data as JSON (the CLI's, the conformance vectors' and the fuzzers' form). Strict: a wrong
// type, an unknown key or a key of another dist_type is an error naming the dimension and the key.
// Input may be hostile: nothing here recurses into values, messages quote at most a few dozen
// bytes of the input (escaped), and allocations are bounded by the size of the parsed document.
#include "protocol/json.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

namespace gdap {
namespace {

using json = nlohmann::json;

constexpr size_t kQuoteMax = 40;  // bytes of input quoted in a message

// `text` for a message: at most `max` bytes, non-printable bytes as \xNN.
std::string printable(std::string_view text, size_t max = kQuoteMax) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

// What a JSON value is, for "must be X, not Y" messages; never dumps a whole container.
std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::string: return fmt::format("string \"{}\"", printable(value.get_ref<const std::string&>()));
    case json::value_t::array: return fmt::format("a list of {} entries", value.size());
    case json::value_t::object: return fmt::format("a dictionary of {} keys", value.size());
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "boolean true" : "boolean false";
    case json::value_t::number_float: return fmt::format("number {}", value.dump());  // 4.0 stays 4.0, not 4
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return fmt::format("integer {}", value.dump());
    default: return value.type_name();
  }
}

int64_t to_int(const json& value, const std::string& label, const char* key) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(GDAP_ERR_OVERFLOW, "{}: key '{}' ({}) does not fit in int64", label, key, v);
    }
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  // nlohmann stores an integer literal outside [INT64_MIN, UINT64_MAX] as a double: name it as an
  // overflow rather than as "not an integer".
  if (value.is_number_float()) {
    const double v = value.get<double>();
    if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) >= 9.2233720368547758e18) {
      fail(GDAP_ERR_OVERFLOW, "{}: key '{}' ({}) does not fit in int64", label, key, v);
    }
  }
  const bool whole = value.is_number_float() && value.get<double>() == std::trunc(value.get<double>());
  fail(GDAP_ERR_PROTOCOL, "{}: key '{}' must be an integer, not {}{}", label, key, describe(value),
       whole ? " (an integer is written without a decimal point or exponent)" : "");
}

int32_t to_bool(const json& value, const std::string& label, const char* key) {
  if (!value.is_boolean()) {
    fail(GDAP_ERR_PROTOCOL, "{}: key '{}' must be a boolean (true or false), not {}", label, key, describe(value));
  }
  return value.get<bool>() ? 1 : 0;
}

int32_t parse_dist_type(const json& dict, int64_t dim_index) {
  auto it = dict.find("dist_type");
  if (it == dict.end()) fail(GDAP_ERR_PROTOCOL, "dimension {}: missing required key 'dist_type'", dim_index);
  if (!it->is_string()) {
    fail(GDAP_ERR_PROTOCOL, "dimension {}: key 'dist_type' must be a string, not {}", dim_index, describe(*it));
  }
  const auto& text = it->get_ref<const std::string&>();
  if (text == "b") return GDAP_DIST_BLOCK;
  if (text == "c") return GDAP_DIST_CYCLIC;
  if (text == "u") return GDAP_DIST_UNSTRUCTURED;
  fail(GDAP_ERR_PROTOCOL, "dimension {}: dist_type '{}' is not 'b', 'c' or 'u'{}", dim_index, printable(text),
       text == "n" ? kNotN : "");
}

// Keys each dist_type may hold: the protocol's required ones and its optional ones.
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

// Unknown keys and keys of another dist_type first (they explain a missing key), then missing ones.
void check_keys(const json& dict, int32_t dist_type, const std::string& label) {
  static const std::vector<std::string> common = {"dist_type", "size", "proc_grid_size", "proc_grid_rank"};
  static const std::vector<std::string> any_type = {"start",      "stop",    "padding",   "periodic",
                                                    "block_size", "indices", "one_to_one"};
  const KeySet& keys = keys_for(dist_type);
  for (const auto& item : dict.items()) {
    const std::string& key = item.key();
    if (listed(common, key) || listed(keys.required, key) || listed(keys.optional, key)) continue;
    if (listed(any_type, key)) {
      fail(GDAP_ERR_PROTOCOL, "{}: key '{}' is not a key of dist_type '{}'", label, key, static_cast<char>(dist_type));
    }
    fail(GDAP_ERR_PROTOCOL, "{}: unknown key '{}'", label, printable(key));
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
      fail(GDAP_ERR_PROTOCOL, "{}: key 'padding' must be a list of 2 integers, not {}", label, describe(*it));
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

void read_cyclic_keys(const json& dict, gdap_dim& dim, const std::string& label) {
  dim.start = to_int(dict.at("start"), label, "start");
  if (auto it = dict.find("block_size"); it != dict.end()) {
    dim.block_size = to_int(*it, label, "block_size");
    dim.given |= GDAP_KEY_BLOCK_SIZE;
  }
}

void read_unstructured_keys(const json& dict, gdap_dim& dim, const std::string& label, std::vector<int64_t>& indices) {
  const json& list = dict.at("indices");
  if (!list.is_array()) fail(GDAP_ERR_PROTOCOL, "{}: key 'indices' must be a list of integers, not {}", label,
                             describe(list));
  indices.reserve(indices.size() + list.size());  // bounded by the parsed document
  for (const auto& value : list) {
    const std::string key = fmt::format("indices[{}]", indices.size());  // the entry's position
    indices.push_back(to_int(value, label, key.c_str()));
  }
  dim.num_indices = static_cast<int64_t>(list.size());
  if (auto it = dict.find("one_to_one"); it != dict.end()) {
    dim.one_to_one = to_bool(*it, label, "one_to_one");
    dim.given |= GDAP_KEY_ONE_TO_ONE;
  }
}

// The deepest a dim_data list nests: list (0) > dictionary (1) > padding or indices list (2).
constexpr int kMaxContainerDepth = 2;

}  // namespace

gdap_dim dim_from_json(const json& dict, int64_t dim_index, std::vector<int64_t>& indices) {
  gdap_dim dim = GDAP_DIM_INIT;
  if (!dict.is_object()) {
    fail(GDAP_ERR_PROTOCOL, "dimension {}: a dimension dictionary must be a JSON object, not {}", dim_index,
         describe(dict));
  }
  if (dict.empty()) return dim;  // the {} alias
  dim.dist_type = parse_dist_type(dict, dim_index);
  const std::string label = dim_label(dim, dim_index);
  check_keys(dict, dim.dist_type, label);
  dim.size = to_int(dict.at("size"), label, "size");
  dim.proc_grid_size = to_int(dict.at("proc_grid_size"), label, "proc_grid_size");
  dim.proc_grid_rank = to_int(dict.at("proc_grid_rank"), label, "proc_grid_rank");
  if (dim.dist_type == GDAP_DIST_BLOCK) read_block_keys(dict, dim, label);
  if (dim.dist_type == GDAP_DIST_CYCLIC) read_cyclic_keys(dict, dim, label);
  if (dim.dist_type == GDAP_DIST_UNSTRUCTURED) read_unstructured_keys(dict, dim, label, indices);
  return dim;
}

DimData dim_data_from_json(const json& list) {
  if (!list.is_array()) {
    fail(GDAP_ERR_PROTOCOL, "dim_data must be a JSON list of dimension dictionaries, not {}", describe(list));
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

namespace {

// A SAX pass that looks at structure and keys only: every value is passed over.
struct KeysOnly : nlohmann::json_sax<json> {
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
};

// The checks of a first, SAX-only pass over untrusted text, so a hostile document is refused
// before any of it is built: nesting depth and, per open dictionary, the keys seen so far
// (nlohmann would keep only the last duplicate). A SAX pass rather than a parse callback: the
// callback parser rescans a list for discarded values after each dictionary, which made a list
// of a million dictionaries quadratic (minutes for 3 MB).
struct Screen : KeysOnly {
  std::vector<std::set<std::string>> open_keys;
  int depth = 0;             // containers open now
  int64_t dictionaries = 0;  // dictionaries opened at depth 1 so far: the current one is dimension dictionaries - 1

  bool open(bool object) {
    if (depth > kMaxContainerDepth) {
      fail(GDAP_ERR_PROTOCOL, "dim_data nests lists or dictionaries {} deep; a dim_data list nests at most {}",
           depth + 1, kMaxContainerDepth + 1);
    }
    if (object) {
      open_keys.emplace_back();
      if (depth == 1) ++dictionaries;
    }
    ++depth;
    return true;
  }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override {
    if (!open_keys.empty()) open_keys.pop_back();
    --depth;
    return true;
  }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override {
    --depth;
    return true;
  }
  bool key(string_t& k) override {
    if (!open_keys.empty() && !open_keys.back().insert(k).second) {
      fail(GDAP_ERR_PROTOCOL, "dimension {}: key '{}' appears twice", std::max<int64_t>(dictionaries - 1, 0),
           printable(k));
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail(GDAP_ERR_PROTOCOL, "dim_data is not valid JSON: {}", printable(e.what(), 200));
  }
};

}  // namespace

namespace {

// Refuses nothing itself: it stops at the first repeated key, or quietly at malformed text.
struct RepeatedKeys : KeysOnly {
  std::vector<std::set<std::string>> open_keys;
  std::optional<std::string> repeated;

  bool start_object(std::size_t) override {
    open_keys.emplace_back();
    return true;
  }
  bool end_object() override {
    open_keys.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool key(string_t& k) override {
    if (open_keys.back().insert(k).second) return true;
    repeated = k;
    return false;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

std::optional<std::string> repeated_key(std::string_view text) {
  RepeatedKeys screen;
  json::sax_parse(text.begin(), text.end(), &screen);
  return screen.repeated;
}

DimData dim_data_from_json_text(std::string_view text) {
  // nlohmann's parser takes a NUL byte for the end of the text: what follows would be ignored.
  if (const size_t at = text.find('\0'); at != std::string_view::npos) {
    fail(GDAP_ERR_PROTOCOL, "dim_data is not valid JSON: a NUL byte at offset {}", at);
  }
  Screen screen;
  json::sax_parse(text.begin(), text.end(), &screen);
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    fail(GDAP_ERR_PROTOCOL, "dim_data is not valid JSON: {}", printable(e.what(), 200));
  }
  return dim_data_from_json(doc);
}

json dim_to_json(const gdap_dim& dim) {
  json out = json::object();
  if (dim.dist_type == GDAP_DIST_UNDISTRIBUTED) return out;
  if (dim.dist_type != GDAP_DIST_BLOCK && dim.dist_type != GDAP_DIST_CYCLIC &&
      dim.dist_type != GDAP_DIST_UNSTRUCTURED) {
    fail(GDAP_ERR_PROTOCOL, "dist_type {} is not 'b', 'c' or 'u'; it has no JSON form", dim.dist_type);
  }
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
    if (dim.num_indices < 0 || (dim.num_indices > 0 && dim.indices == nullptr)) {
      fail(GDAP_ERR_PROTOCOL, "'u' dimension: indices is NULL or num_indices ({}) < 0", dim.num_indices);
    }
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
