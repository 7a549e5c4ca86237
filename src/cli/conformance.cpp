// gdap conformance [DIR] [--json] [--rule PATTERN]: checks this library against the protocol
// vectors in conformance/vectors (format: conformance/README.md). Per-process vectors go through
// gdap_protocol_version_check and gdap_dims_validate and, when the buffer's shape is known, through
// gdap_array_from_dlpack (a consumer's import); global sets through gdap_map_create; worked examples
// through gdap_array_wrap, gdap_array_local_to_global and the map's look-ups: each rank's
// expected buffer must hold the global array's element at every index the library maps it to.
// Prints a pass/fail table per rule; exit code 1 if any vector fails, 2 if none could be read.
#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "core/checked.hpp"
#include "protocol/json.hpp"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <fnmatch.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

namespace gdap::cli {
namespace {

using nlohmann::json;

struct Outcome {
  std::string id;
  std::vector<std::string> rules;
  std::string failure;  // empty: passed
};

// A vector's verdict: thrown by the checks below, caught once per vector.
struct Mismatch {
  std::string what;
};

[[noreturn]] void mismatch(std::string what) { throw Mismatch{std::move(what)}; }

// A vector that cannot be run as written (a shape of 4.5): not an Error, so that `attempt` below
// never takes it for the library's verdict; run_vector reports it as "could not run".
struct BadVector : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An integer of a vector, in int64: 4.5 is not read as 4, nor 1e300 converted with undefined
// behaviour.
int64_t strict_int(const json& v, const std::string& what) {
  const bool fits = v.is_number_integer() && (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t{INT64_MAX});
  if (!fits) throw BadVector(fmt::format("{} is {}, not an integer in int64", what, v.dump()));
  return v.get<int64_t>();
}

// A list of such integers (a shape).
std::vector<int64_t> strict_ints(const json& list, const std::string& what) {
  if (!list.is_array()) throw BadVector(fmt::format("{} is {}, not a list of integers", what, list.dump()));
  std::vector<int64_t> out;
  for (size_t i = 0; i < list.size(); ++i) out.push_back(strict_int(list[i], fmt::format("{}[{}]", what, i)));
  return out;
}

// ---- the error a vector expects -----------------------------------------------------------------

gdap_status status_of_class(const std::string& name) {
  static const std::map<std::string, gdap_status> kClasses = {{"protocol", GDAP_ERR_PROTOCOL},
                                                              {"version", GDAP_ERR_VERSION},
                                                              {"overflow", GDAP_ERR_OVERFLOW},
                                                              {"invalid_argument", GDAP_ERR_INVALID_ARGUMENT}};
  const auto it = kClasses.find(name);
  if (it == kClasses.end()) throw Error(GDAP_ERR_IO, fmt::format("unknown error class '{}' in a vector", name));
  return it->second;
}

// A rank or dimension the vector expects named: an integer in int64 (1e300 or 2^64 is the
// vector's own error, never converted).
int64_t expected_int(const json& expect, const char* key) {
  return strict_int(expect.at(key), fmt::format("expect.{}", key));
}

// Compares what the library said with what the vector expects: validity, error class, and the
// rank, dimension and key the message must name.
void compare(const json& expect, gdap_status got, const std::string& message) {
  const bool valid = expect.at("valid").get<bool>();
  if (valid) {
    if (got != GDAP_SUCCESS) mismatch(fmt::format("expected valid, got {}: {}", gdap_status_string(got), message));
    return;
  }
  if (got == GDAP_SUCCESS) mismatch("expected an error, but the library accepted it");
  const gdap_status want = status_of_class(expect.at("error").get<std::string>());
  if (got != want) {
    mismatch(fmt::format("expected {}, got {}: {}", gdap_status_string(want), gdap_status_string(got), message));
  }
  auto names = [&](const std::string& needle, const char* what) {
    if (message.find(needle) == std::string::npos) {
      mismatch(fmt::format("the error does not name the {} ('{}'): {}", what, needle, message));
    }
  };
  if (expect.contains("rank")) {  // the message starts with it: "rank 3, dimension 0 ...", "rank 3: ..."
    const std::string rank = fmt::format("rank {}", expected_int(expect, "rank"));
    const bool starts = message.rfind(rank, 0) == 0 && message.size() > rank.size() &&
                        std::strchr(",: ", message[rank.size()]) != nullptr;
    if (!starts) mismatch(fmt::format("the error does not start with '{}': {}", rank, message));
  }
  if (expect.contains("dimension")) names(fmt::format("dimension {}", expected_int(expect, "dimension")), "dimension");
  if (expect.contains("key")) names(expect["key"].get<std::string>(), "key");
}

// ---- reading a rank of a vector ------------------------------------------------------------------

std::optional<std::vector<int64_t>> shape_of(const json& rank, const char* key) {
  const auto it = rank.find(key);
  if (it == rank.end() || it->is_null()) return std::nullopt;
  return strict_ints(*it, key);
}

// One rank as the CLI's input: version, dim_data and buffer shape. A dim_data the JSON reader
// refuses (a wrong type, a missing or unknown key) throws Invalid, like any other broken rule.
RankInput rank_input(const json& rank, const std::string& version, const char* shape_key) {
  RankInput out;
  out.version = version;
  try {
    out.dims = dim_data_from_json(rank.at("dim_data"));
  } catch (const Error& e) {
    throw Invalid(e.status(), e.what());
  }
  out.shape = shape_of(rank, shape_key);
  return out;
}

// A host tensor of a rank's buffer shape whose deleter does nothing, handed to
// gdap_array_from_dlpack as a producer's tensor would be. The import reads the shape, strides and
// pointer, never an element, so one cell stands for the buffer: a declared shape of 2^31 elements
// allocated and zeroed 16 GiB that nothing read.
struct HostTensor {
  std::vector<int64_t> shape;
  double cell = 0.0;
  DLManagedTensorVersioned managed{};

  explicit HostTensor(std::vector<int64_t> s) : shape(std::move(s)) {
    managed.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    managed.dl_tensor.data = &cell;
    managed.dl_tensor.device = {kDLCPU, 0};
    managed.dl_tensor.ndim = static_cast<int32_t>(shape.size());
    managed.dl_tensor.dtype = {kDLFloat, 64, 1};
    managed.dl_tensor.shape = shape.data();
    managed.deleter = [](DLManagedTensorVersioned*) {};
  }
};

// The consumer's path through the C API: a distbuffer imported as a local array, which checks the
// version, the buffer's ndim and every per-process rule against the buffer's shape.
void import_section(const RankInput& rank) {
  HostTensor tensor(*rank.shape);
  gdap_array* array = nullptr;
  check(gdap_array_from_dlpack(&array, &tensor.managed, rank.dims.data(), rank.dims.ndim(), rank.version.c_str()));
  gdap_array_destroy(array);
}

// The per-process validator's path: the version, then gdap_dims_validate.
void validate_section(const RankInput& rank) {
  check(gdap_protocol_version_check(rank.version.c_str()));
  check(gdap_dims_validate(rank.dims.data(), rank.dims.ndim(), rank.shape ? rank.shape->data() : nullptr));
}

// The runner's own check for the one distbuffer rule gdap_dims_validate cannot see.
void check_ndim(const RankInput& rank) {
  if (rank.shape && static_cast<int64_t>(rank.shape->size()) != rank.dims.ndim()) {
    throw Invalid(GDAP_ERR_PROTOCOL, fmt::format("the buffer has {} dimensions but dim_data has {}",
                                                 rank.shape->size(), rank.dims.ndim()));
  }
}

// Runs `body`; returns its status and message as the C API would report them.
std::pair<gdap_status, std::string> attempt(const std::function<void()>& body) {
  try {
    body();
    return {GDAP_SUCCESS, ""};
  } catch (const Error& e) {
    return {e.status(), e.what()};
  }
}

// ---- the three kinds ----------------------------------------------------------------------------

// One rank's distbuffer through the validator and, when the buffer's shape is known, through the
// import a consumer makes: both must give the vector's verdict.
void check_process(const json& v) {
  const json& buffer = v.at("distbuffer");
  std::optional<RankInput> rank;
  const auto [status, message] = attempt([&] {
    // The version first: it says how the dictionaries read (0.9's are refused, not misread).
    const std::string version = buffer.at("__version__").get<std::string>();
    check(gdap_protocol_version_check(version.c_str()));
    rank = rank_input(buffer, version, "shape");
    check_ndim(*rank);
    validate_section(*rank);
  });
  compare(v.at("expect"), status, message);
  if (!rank || !rank->shape) return;
  const auto [imported, why] = attempt([&] { import_section(*rank); });
  try {
    compare(v.at("expect"), imported, why);
  } catch (const Mismatch& m) {
    mismatch("gdap_array_from_dlpack: " + m.what);
  }
}

Input input_of(const json& v, const char* shape_key) {
  Input input;
  input.all_ranks = true;
  for (const json& rank : v.at("ranks")) {
    try {
      input.ranks.push_back(rank_input(rank, GDAP_PROTOCOL_VERSION, shape_key));
    } catch (const Invalid& e) {
      throw Invalid(e.status(), fmt::format("rank {}: {}", input.ranks.size(), e.what()));
    } catch (const BadVector& e) {
      throw BadVector(fmt::format("rank {}: {}", input.ranks.size(), e.what()));
    }
  }
  return input;
}

void check_owned_shapes(const gdap_map* map, const json& expected) {
  for (size_t r = 0; r < expected.size(); ++r) {
    const auto want = strict_ints(expected[r], fmt::format("expect.owned_shapes[{}]", r));
    std::vector<int64_t> got(want.size());
    check(gdap_map_owned_shape(got.data(), map, static_cast<int64_t>(r)));
    if (got != want) {
      mismatch(fmt::format("rank {} owns shape ({}), expected ({})", r, fmt::join(got, ", "), fmt::join(want, ", ")));
    }
  }
}

void check_global(const json& v) {
  MapPtr map(nullptr, gdap_map_destroy);
  const auto [status, message] = attempt([&] {
    Input input = input_of(v, "shape");
    for (size_t r = 0; r < input.ranks.size(); ++r) {
      try {
        check_ndim(input.ranks[r]);
      } catch (const Error& e) {
        throw Invalid(e.status(), fmt::format("rank {}: {}", r, e.what()));
      }
    }
    map = checked_map(input);
  });
  compare(v.at("expect"), status, message);
  if (map) check_owned_shapes(map.get(), v.at("expect").at("owned_shapes"));
}

// ---- worked examples ----------------------------------------------------------------------------

// The global array's value at a global index: a linear formula or an explicit C-order list.
double value_at(const json& values, const std::vector<int64_t>& shape, const std::vector<int64_t>& g) {
  if (values.contains("linear")) {
    const json& f = values["linear"];
    double out = f.at("offset").get<double>();
    const auto k = strict_ints(f.at("coefficients"), "values.linear.coefficients");
    for (size_t i = 0; i < g.size(); ++i) out += static_cast<double>(k.at(i)) * static_cast<double>(g[i]);
    return out;
  }
  int64_t flat = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] < 0 || g[i] >= shape[i]) mismatch(fmt::format("global index {} is outside the explicit values", g[i]));
    flat = flat * shape[i] + g[i];
  }
  return values.at("explicit").at(static_cast<size_t>(flat)).get<double>();
}

struct DtypeInfo {
  gdap_dtype dtype;
  size_t bytes;
};

DtypeInfo dtype_named(const std::string& name) {
  static const std::map<std::string, DtypeInfo> kTypes = {
      {"float64", {{GDAP_DTYPE_FLOAT, 64, 1}, 8}}, {"float32", {{GDAP_DTYPE_FLOAT, 32, 1}, 4}},
      {"int64", {{GDAP_DTYPE_INT, 64, 1}, 8}},     {"int32", {{GDAP_DTYPE_INT, 32, 1}, 4}},
      {"int16", {{GDAP_DTYPE_INT, 16, 1}, 2}},     {"uint8", {{GDAP_DTYPE_UINT, 8, 1}, 1}}};
  const auto it = kTypes.find(name);
  if (it == kTypes.end()) throw Error(GDAP_ERR_IO, fmt::format("unknown dtype '{}' in a vector", name));
  return it->second;
}

// Element `i` of a typed buffer, as double (every vector value is a small integer).
double element(const DtypeInfo& t, const void* data, int64_t i) {
  const auto k = static_cast<size_t>(i);
  if (t.dtype.code == GDAP_DTYPE_FLOAT) {
    return t.bytes == 8 ? static_cast<const double*>(data)[k] : static_cast<const float*>(data)[k];
  }
  if (t.dtype.code == GDAP_DTYPE_UINT) return static_cast<const uint8_t*>(data)[k];
  switch (t.bytes) {
    case 8: return static_cast<double>(static_cast<const int64_t*>(data)[k]);
    case 4: return static_cast<const int32_t*>(data)[k];
    default: return static_cast<const int16_t*>(data)[k];
  }
}

// A rank's expected buffer, stored in the vector's dtype (the memory gdap_array_wrap retains).
std::vector<unsigned char> typed_buffer(const DtypeInfo& t, const std::vector<double>& values) {
  std::vector<unsigned char> out(values.size() * t.bytes + 1);
  for (size_t i = 0; i < values.size(); ++i) {
    auto* p = out.data() + i * t.bytes;
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
    if (t.dtype.code == GDAP_DTYPE_FLOAT) {
      t.bytes == 8 ? put(values[i]) : put(static_cast<float>(values[i]));
    } else if (t.dtype.code == GDAP_DTYPE_UINT) {
      put(static_cast<uint8_t>(values[i]));
    } else if (t.bytes == 8) {
      put(static_cast<int64_t>(values[i]));
    } else if (t.bytes == 4) {
      put(static_cast<int32_t>(values[i]));
    } else {
      put(static_cast<int16_t>(values[i]));
    }
  }
  return out;
}

// Local index tuple of C-order position `flat` in `shape`.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

int64_t flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < idx.size(); ++i) flat = flat * shape[i] + idx[i];
  return flat;
}

struct Example {
  json values;
  std::vector<int64_t> global_shape;
  DtypeInfo dtype;
  std::vector<std::vector<double>> buffers;      // each rank's expected buffer
  std::vector<std::vector<int64_t>> local_shapes;
};

using ArrayPtr = std::unique_ptr<gdap_array, gdap_status (*)(gdap_array*)>;

// Rank r's section wrapped as a gdap_array: every local index maps (gdap_array_local_to_global,
// and the map's gdap_map_local_to_global) to a global index whose value the buffer holds.
void check_rank_layout(const Example& ex, const gdap_map* map, const RankInput& rank, int64_t r) {
  const auto& want = ex.buffers[static_cast<size_t>(r)];
  std::vector<unsigned char> memory = typed_buffer(ex.dtype, want);
  gdap_array* raw = nullptr;
  check(gdap_array_wrap(&raw, memory.data(), ex.dtype.dtype, {GDAP_DEVICE_CPU, 0}, nullptr, rank.dims.data(),
                        rank.dims.ndim()));
  const ArrayPtr array(raw, gdap_array_destroy);
  const auto ndim = static_cast<size_t>(rank.dims.ndim());
  std::vector<int64_t> shape(ndim), global(ndim), from_map(ndim);
  check(gdap_array_shape(shape.data(), array.get()));
  if (shape != ex.local_shapes[static_cast<size_t>(r)]) {
    mismatch(fmt::format("rank {}: local shape ({}) != the vector's ({})", r, fmt::join(shape, ", "),
                         fmt::join(ex.local_shapes[static_cast<size_t>(r)], ", ")));
  }
  void* data = nullptr;
  check(gdap_array_data(&data, array.get()));
  for (int64_t k = 0; k < static_cast<int64_t>(want.size()); ++k) {
    const auto local = unflatten(k, shape);
    check(gdap_array_local_to_global(global.data(), array.get(), local.data()));
    check(gdap_map_local_to_global(from_map.data(), map, r, local.data()));
    if (global != from_map) {
      mismatch(fmt::format("rank {}, local ({}): the array maps it to ({}), the map to ({})", r, fmt::join(local, ", "),
                           fmt::join(global, ", "), fmt::join(from_map, ", ")));
    }
    const double expected = value_at(ex.values, ex.global_shape, global);
    if (element(ex.dtype, data, k) != expected) {
      mismatch(fmt::format("rank {}, local ({}) -> global ({}): the vector's buffer holds {}, the global array {}", r,
                           fmt::join(local, ", "), fmt::join(global, ", "), element(ex.dtype, data, k), expected));
    }
  }
}

// The global indices to look up: [0, size) along every dimension (a map holds unstructured indices
// in [0, size) only, and each of them).
std::vector<std::vector<int64_t>> index_sets(const std::vector<int64_t>& global_shape) {
  std::vector<std::vector<int64_t>> sets(global_shape.size());
  for (size_t i = 0; i < sets.size(); ++i) {
    for (int64_t g = 0; g < global_shape[i]; ++g) sets[i].push_back(g);
  }
  return sets;
}

// Every global element has an owner (gdap_map_owner) whose expected buffer holds its value.
void check_owners(const Example& ex, const gdap_map* map) {
  const auto sets = index_sets(ex.global_shape);
  std::vector<int64_t> counts;
  for (const auto& s : sets) counts.push_back(static_cast<int64_t>(s.size()));
  int64_t total = 1;
  for (int64_t n : counts) total *= n;
  std::vector<int64_t> global(sets.size()), local(sets.size());
  for (int64_t k = 0; k < total; ++k) {
    const auto pick = unflatten(k, counts);
    for (size_t i = 0; i < sets.size(); ++i) global[i] = sets[i][static_cast<size_t>(pick[i])];
    int64_t rank = -1;
    check(gdap_map_owner(&rank, local.data(), map, global.data()));
    const auto& shape = ex.local_shapes[static_cast<size_t>(rank)];
    const double held = ex.buffers[static_cast<size_t>(rank)][static_cast<size_t>(flatten(local, shape))];
    const double expected = value_at(ex.values, ex.global_shape, global);
    if (held != expected) {
      mismatch(fmt::format("global ({}): owner rank {} local ({}) holds {} in the vector, the global array {}",
                           fmt::join(global, ", "), rank, fmt::join(local, ", "), held, expected));
    }
  }
}

// Rank r's buffer holds exactly one value per element of its local_shape: the look-ups below index
// it by local position (a shorter buffer was read past its end, a 0 extent divided by zero).
void check_buffer_length(const std::vector<double>& buffer, const std::vector<int64_t>& local_shape, size_t r) {
  int64_t count = 1;
  for (size_t i = 0; i < local_shape.size(); ++i) {
    if (local_shape[i] < 0) throw Error(GDAP_ERR_IO, fmt::format("rank {}'s local_shape[{}] is {} < 0", r, i, local_shape[i]));
    count = checked_mul(count, local_shape[i], "the local_shape's element count");
  }
  if (static_cast<uint64_t>(count) != buffer.size()) {
    throw Error(GDAP_ERR_IO, fmt::format("rank {}'s buffer holds {} values, local_shape ({}) {}", r, buffer.size(),
                                         fmt::join(local_shape, ", "), count));
  }
}

void check_example(const json& v) {
  Example ex{v.at("values"), strict_ints(v.at("global_shape"), "global_shape"),
             dtype_named(v.at("dtype").get<std::string>()), {}, {}};
  for (const json& rank : v.at("ranks")) {
    ex.buffers.push_back(rank.at("buffer").get<std::vector<double>>());
    ex.local_shapes.push_back(strict_ints(rank.at("local_shape"), fmt::format("rank {}'s local_shape", ex.buffers.size() - 1)));
    check_buffer_length(ex.buffers.back(), ex.local_shapes.back(), ex.buffers.size() - 1);
  }
  Input input = input_of(v, "local_shape");
  MapPtr map(nullptr, gdap_map_destroy);
  const auto [status, message] = attempt([&] { map = checked_map(input); });
  if (status != GDAP_SUCCESS) mismatch(fmt::format("the example is refused: {}", message));
  std::vector<int64_t> global_shape(ex.global_shape.size());
  check(gdap_map_global_shape(global_shape.data(), map.get()));
  if (global_shape != ex.global_shape) mismatch("the map's global shape differs from the vector's");
  for (size_t r = 0; r < input.ranks.size(); ++r) {
    check_rank_layout(ex, map.get(), input.ranks[r], static_cast<int64_t>(r));
  }
  check_owners(ex, map.get());
}

// ---- running and reporting ----------------------------------------------------------------------

Outcome run_vector(const json& v) {
  Outcome out{v.at("id").get<std::string>(), v.at("rules").get<std::vector<std::string>>(), ""};
  try {
    const std::string kind = v.at("kind").get<std::string>();
    if (kind == "process") {
      check_process(v);
    } else if (kind == "global") {
      check_global(v);
    } else if (kind == "example") {
      check_example(v);
    } else {
      out.failure = fmt::format("unknown kind '{}'", kind);
    }
  } catch (const Mismatch& m) {
    out.failure = m.what;
  } catch (const std::exception& e) {  // a library call the vector needs failed, or malformed JSON
    out.failure = fmt::format("could not run: {}", e.what());
  }
  return out;
}

// A rule matches a shell pattern (fnmatch); a pattern without wildcards matches as a prefix.
bool rule_selected(const std::vector<std::string>& rules, const std::string& pattern) {
  if (pattern.empty()) return true;
  const bool glob = pattern.find_first_of("*?[") != std::string::npos;
  const std::string p = glob ? pattern : pattern + "*";
  return std::any_of(rules.begin(), rules.end(),
                     [&](const std::string& r) { return fnmatch(p.c_str(), r.c_str(), 0) == 0; });
}

std::vector<std::filesystem::path> vector_files(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  if (!fs::is_directory(path, ec)) throw Error(GDAP_ERR_IO, fmt::format("'{}' is not a file or a directory", path));
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(path)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error(GDAP_ERR_IO, fmt::format("'{}' holds no .json vector files", path));
  return files;
}

// Without a DIR: the vectors installed beside this program (<prefix>/share/gdap/conformance/vectors,
// found from /proc/self/exe), else those of the source tree it was built from.
std::string default_vectors() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed = exe.parent_path().parent_path() / GDAP_INSTALLED_VECTORS;
  if (!ec && fs::is_directory(installed, ec)) return installed.string();
  if (fs::is_directory(GDAP_SOURCE_VECTORS, ec)) return GDAP_SOURCE_VECTORS;
  throw Error(GDAP_ERR_IO, fmt::format("no conformance vectors at '{}' (installed) or '{}' (source tree); name a "
                                       "directory of vector files", installed.string(), GDAP_SOURCE_VECTORS));
}

json read_json(const std::filesystem::path& file) {
  const std::string text = read_json_text(file.string());
  if (const auto key = repeated_key(text)) {
    throw Error(GDAP_ERR_IO, fmt::format("'{}': key {} appears twice in one object", file.string(), json(*key).dump()));
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error(GDAP_ERR_IO, fmt::format("'{}' is not valid JSON: {}", file.string(), e.what()));
  }
}

// A vector file's "vectors": a list, or an error naming the file and the key.
const json& vectors_of(const json& doc, const std::string& file) {
  if (!doc.is_object() || !doc.contains("vectors")) throw Error(GDAP_ERR_IO, fmt::format("'{}': no \"vectors\" key", file));
  const json& list = doc.at("vectors");
  if (!list.is_array()) {
    throw Error(GDAP_ERR_IO, fmt::format("'{}': \"vectors\" must be a list of vectors, not {}", file, list.type_name()));
  }
  return list;
}

// A vector's "id", or an error naming the file and the vector's place in it (a missing "id" said
// "unexpected failure: [json.exception.out_of_range.403]").
std::string vector_id(const json& v, const std::string& file, int64_t index) {
  if (!v.is_object()) throw Error(GDAP_ERR_IO, fmt::format("'{}': vector {} is a {}, not an object", file, index, v.type_name()));
  const auto it = v.find("id");
  if (it == v.end() || !it->is_string()) {
    throw Error(GDAP_ERR_IO, fmt::format("'{}': vector {} has no \"id\" string", file, index));
  }
  return it->get<std::string>();
}

// A vector's "rules": a list of strings, or an error naming the file and the vector.
std::vector<std::string> vector_rules(const json& v, const std::string& file, const std::string& id) {
  const auto it = v.find("rules");
  const bool strings = it != v.end() && it->is_array() &&
                       std::all_of(it->begin(), it->end(), [](const json& r) { return r.is_string(); });
  if (!strings) throw Error(GDAP_ERR_IO, fmt::format("'{}': vector '{}' has no \"rules\" list of strings", file, id));
  return it->get<std::vector<std::string>>();
}

struct Tally {
  int64_t passed = 0, failed = 0;
};

std::map<std::string, Tally> per_rule(const std::vector<Outcome>& outcomes) {
  std::map<std::string, Tally> out;
  for (const auto& o : outcomes) {
    for (const auto& rule : o.rules) (o.failure.empty() ? out[rule].passed : out[rule].failed) += 1;
  }
  return out;
}

void print_table(const std::vector<Outcome>& outcomes, int64_t failed) {
  fmt::print("{:<34} {:>6} {:>6}  {}\n", "rule", "passed", "failed", "");
  for (const auto& [rule, t] : per_rule(outcomes)) {
    fmt::print("{:<34} {:>6} {:>6}  {}\n", rule, t.passed, t.failed, t.failed ? "FAIL" : "ok");
  }
  for (const auto& o : outcomes) {
    if (!o.failure.empty()) fmt::print("FAIL {} [{}]: {}\n", o.id, fmt::join(o.rules, ", "), o.failure);
  }
  fmt::print("conformance: {} vectors, {} passed, {} failed: {}\n", outcomes.size(),
             static_cast<int64_t>(outcomes.size()) - failed, failed, failed ? "FAILED" : "PASSED");
}

void print_json(const std::vector<Outcome>& outcomes, int64_t failed) {
  json rules = json::object(), failures = json::array();
  for (const auto& [rule, t] : per_rule(outcomes)) rules[rule] = {{"passed", t.passed}, {"failed", t.failed}};
  for (const auto& o : outcomes) {
    if (!o.failure.empty()) failures.push_back({{"id", o.id}, {"rules", o.rules}, {"message", o.failure}});
  }
  fmt::print("{}\n", json{{"vectors", outcomes.size()},
                          {"passed", static_cast<int64_t>(outcomes.size()) - failed},
                          {"failed", failed},
                          {"rules", rules},
                          {"failures", failures}}
                         .dump(2));
}

}  // namespace

int conformance(const ConformanceOptions& options) {
  return run_command("conformance", [&] {
    const std::string dir = options.dir.empty() ? default_vectors() : options.dir;
    std::vector<Outcome> outcomes;
    std::map<std::string, std::string> seen;  // vector id -> its file
    int64_t vectors = 0;
    for (const auto& file : vector_files(dir)) {
      const json doc = read_json(file);
      const json& list = vectors_of(doc, file.string());
      for (size_t index = 0; index < list.size(); ++index) {
        const json& v = list[index];
        const std::string id = vector_id(v, file.string(), static_cast<int64_t>(index));
        ++vectors;
        const auto [first, fresh] = seen.emplace(id, file.string());
        if (!fresh) {
          throw Error(GDAP_ERR_IO, fmt::format("'{}': vector id '{}' appears twice (first in '{}')", file.string(),
                                               first->first, first->second));
        }
        if (rule_selected(vector_rules(v, file.string(), id), options.rule)) outcomes.push_back(run_vector(v));
      }
    }
    if (vectors == 0) throw Error(GDAP_ERR_IO, fmt::format("'{}' holds no vectors", dir));
    if (outcomes.empty()) throw Error(GDAP_ERR_IO, fmt::format("no vector in '{}' matches --rule '{}'", dir, options.rule));
    const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return !o.failure.empty(); });
    options.as_json ? print_json(outcomes, failed) : print_table(outcomes, failed);
    return failed ? 1 : 0;
  });
}

}  // namespace gdap::cli
