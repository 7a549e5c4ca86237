// Reading the CLI's JSON input forms (see input.hpp). The file is untrusted: every shape of JSON
// gets a sentence naming the rank and what was expected, never a crash.
#include "cli/input.hpp"

#include "io/files.hpp"
#include "protocol/json.hpp"

#include <limits>
#include <set>

namespace gdap::cli {
namespace {

using json = nlohmann::json;

const char* kind(const json& value) {
  if (value.is_array()) return "a list";
  if (value.is_object()) return "a dictionary";
  if (value.is_string()) return "a string";
  if (value.is_number()) return "a number";
  if (value.is_boolean()) return "a boolean";
  return "null";
}

std::vector<int64_t> read_shape(const json& shape) {
  if (!shape.is_array()) throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("'shape' must be a list of integers, not {}", kind(shape)));
  std::vector<int64_t> out;
  for (const auto& v : shape) {
    const bool fits = v.is_number_integer() &&
                      (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()});
    if (!fits) throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("'shape' entry {} is not an int64 integer", out.size()));
    out.push_back(v.get<int64_t>());
  }
  return out;
}

void read_rank_object(const json& value, RankInput& out) {
  for (const auto& item : value.items()) {
    if (item.key() != "dim_data" && item.key() != "__version__" && item.key() != "shape") {
      throw Invalid(GDAP_ERR_PROTOCOL,
                    fmt::format("unknown key '{}' (expected 'dim_data', '__version__', 'shape')", item.key()));
    }
  }
  const auto dims = value.find("dim_data");
  if (dims == value.end()) throw Invalid(GDAP_ERR_PROTOCOL, "the dictionary has no 'dim_data'");
  out.dims = dim_data_from_json(*dims);
  if (const auto v = value.find("__version__"); v != value.end()) {
    if (!v->is_string()) throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("'__version__' must be a string, not {}", kind(*v)));
    out.version = v->get<std::string>();
  }
  if (const auto s = value.find("shape"); s != value.end()) out.shape = read_shape(*s);
}

RankInput read_rank(const json& value, size_t rank) {
  RankInput out;
  try {
    if (value.is_array()) {
      out.dims = dim_data_from_json(value);
    } else if (value.is_object()) {
      read_rank_object(value, out);
    } else {
      throw Invalid(GDAP_ERR_PROTOCOL,
                    fmt::format("expected a dim_data list or a dictionary with 'dim_data', not {}", kind(value)));
    }
  } catch (const Error& e) {
    throw Invalid(e.status(), fmt::format("rank {}: {}", rank, e.what()));
  }
  return out;
}

// A list whose first entry is itself a list or a {"dim_data": ...} dictionary lists every rank;
// a list of dimension dictionaries is one rank's dim_data.
bool is_rank_list(const json& doc) {
  return doc.is_array() && !doc.empty() && (doc[0].is_array() || (doc[0].is_object() && doc[0].contains("dim_data")));
}

// Parses strictly: a key repeated within one dictionary (which JSON parsers silently resolve to
// one of the values) and nesting deeper than any input form needs are refused while parsing.
json parse_strict(const std::string& text) {
  // A SAX pass first, then the parse: the parse callback's parser rescans a list after each
  // dictionary, which made a file of a million dictionaries take minutes.
  struct Screen : nlohmann::json_sax<json> {
    enum { kMaxDepth = 8 };  // {"ranks": [{"dim_data": [{"padding": [...]}]}]} is 6 deep
    std::vector<std::set<std::string>> keys;  // one set per open dictionary
    int open = 0;                             // containers open now
    bool value() const {
      if (open > kMaxDepth) {
        throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("the JSON nests deeper than any dim_data file ({} levels)", int{kMaxDepth}));
      }
      return true;
    }
    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override {
      value();
      keys.emplace_back();
      ++open;
      return true;
    }
    bool end_object() override {
      if (!keys.empty()) keys.pop_back();
      --open;
      return true;
    }
    bool start_array(std::size_t) override {
      value();
      ++open;
      return true;
    }
    bool end_array() override {
      --open;
      return true;
    }
    bool key(string_t& k) override {
      value();
      if (!keys.empty() && !keys.back().insert(k).second) {
        throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("key '{}' appears twice in one dictionary", k.substr(0, 40)));
      }
      return true;
    }
    // Malformed text: stop here; the parse below throws the parser's own error.
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  };
  Screen screen;
  json::sax_parse(text, &screen);
  return json::parse(text);
}

void refuse_nul(std::string_view text, const std::string& name) {
  if (const auto at = io::nul_in(text)) {
    throw Error(GDAP_ERR_IO, fmt::format("'{}' is not valid JSON: a NUL byte at offset {}", name, *at));
  }
}

json parse_text(std::string_view text, const std::string& name) {
  refuse_nul(text, name);
  try {
    return parse_strict(std::string(text));
  } catch (const json::exception& e) {
    throw Error(GDAP_ERR_IO, fmt::format("'{}' is not valid JSON: {}", name, e.what()));
  }
}

}  // namespace

std::string read_json_text(const std::string& path) {
  std::string text = io::read_bounded(path, kMaxInputBytes);
  refuse_nul(text, path);
  return text;
}

Input read_input(const std::string& path) { return parse_input(io::read_bounded(path, kMaxInputBytes), path); }

Input parse_input(std::string_view text, const std::string& name) {
  const json doc = parse_text(text, name);
  Input input;
  const json* ranks = nullptr;
  if (doc.is_object() && doc.contains("ranks")) {
    if (doc.size() != 1) throw Invalid(GDAP_ERR_PROTOCOL, "a dictionary with 'ranks' must have no other key");
    ranks = &doc["ranks"];
    if (!ranks->is_array()) throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("'ranks' must be a list, not {}", kind(*ranks)));
    if (ranks->empty()) throw Invalid(GDAP_ERR_PROTOCOL, "'ranks' is empty: there must be at least one rank");
  } else if (is_rank_list(doc)) {
    ranks = &doc;
  }
  if (ranks != nullptr) {
    input.all_ranks = true;
    for (size_t r = 0; r < ranks->size(); ++r) input.ranks.push_back(read_rank((*ranks)[r], r));
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
        throw Invalid(GDAP_ERR_PROTOCOL,
                      fmt::format("rank {}, dimension {}: the empty dictionary {{}} stands for the whole extent "
                                  "of the buffer, so the rank needs 'shape'",
                                  r, i));
      }
      gdap_dim d = GDAP_DIM_INIT;
      check(gdap_dim_set_undistributed(&d, (*rank.shape)[static_cast<size_t>(i)]));
      rank.dims.set(i, d);
    }
  }
}

}  // namespace gdap::cli
