// dim_data as JSON: round trips of canonical dictionaries, the given bits, every way a document can
// be wrong (each naming the dimension and the key), and hostile text (depth, duplicates, garbage).
#include "protocol/json.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

using json = nlohmann::json;

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

TEST(Json, RoundTripsCanonicalDimData) {
  const char* texts[] = {
      R"([{"dist_type":"b","size":18,"proc_grid_size":2,"proc_grid_rank":0,"start":0,"stop":10,"padding":[1,1]}])",
      R"([{"dist_type":"b","size":18,"proc_grid_size":2,"proc_grid_rank":1,"start":8,"stop":18,"padding":[1,1]}])",
      R"([{"dist_type":"b","size":10,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":10,"padding":[2,2],"periodic":true}])",
      R"([{"dist_type":"b","size":8,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":8,"periodic":false}])",
      R"([{"dist_type":"c","size":10,"proc_grid_size":2,"proc_grid_rank":1,"start":2,"block_size":2},{"dist_type":"c","size":5,"proc_grid_size":1,"proc_grid_rank":0,"start":0}])",
      R"([{"dist_type":"u","size":30,"proc_grid_size":3,"proc_grid_rank":1,"indices":[6,13,3,-4],"one_to_one":true}])",
      R"([{"dist_type":"u","size":0,"proc_grid_size":1,"proc_grid_rank":0,"indices":[],"one_to_one":false}])",
      R"([{"dist_type":"b","size":9223372036854775807,"proc_grid_size":1,"proc_grid_rank":0,"start":-9223372036854775808,"stop":9223372036854775807}])",
      R"([{},{"dist_type":"b","size":4,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":4},{}])",
      R"([])",
  };
  for (const char* text : texts) {
    const json in = json::parse(text);
    const gdap::DimData dims = gdap::dim_data_from_json(in);
    EXPECT_EQ(gdap::dim_data_to_json(dims), in) << text;
    const gdap::DimData copy = dims;  // copies keep their own indices
    EXPECT_EQ(gdap::dim_data_to_json(copy), in) << text;
    EXPECT_EQ(gdap::dim_data_to_json(gdap::dim_data_from_json_text(text)), in) << text;
  }
}

TEST(Json, ParsedExampleValidates) {
  const auto dims = gdap::dim_data_from_json_text(
      R"([{"dist_type":"b","size":18,"proc_grid_size":2,"proc_grid_rank":1,"start":8,"stop":18,"padding":[1,1]},{}])");
  const int64_t shape[2] = {10, 3};
  EXPECT_EQ(gdap_dims_validate(dims.data(), dims.ndim(), shape), GDAP_SUCCESS) << gdap_last_error();
}

TEST(Json, GivenBitsFollowTheKeysPresent) {
  struct Case {
    const char* rule;
    const char* dict;
    uint32_t given;
  };
  const Case cases[] = {
      {"no optional key", R"({"dist_type":"b","size":4,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":4})", 0},
      {"padding", R"({"dist_type":"b","size":4,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":4,"padding":[0,0]})",
       GDAP_KEY_PADDING},
      {"periodic false is still given",
       R"({"dist_type":"b","size":4,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":4,"periodic":false})",
       GDAP_KEY_PERIODIC},
      {"block_size 1 is still given",
       R"({"dist_type":"c","size":10,"proc_grid_size":2,"proc_grid_rank":0,"start":0,"block_size":1})",
       GDAP_KEY_BLOCK_SIZE},
      {"one_to_one", R"({"dist_type":"u","size":4,"proc_grid_size":1,"proc_grid_rank":0,"indices":[1],"one_to_one":true})",
       GDAP_KEY_ONE_TO_ONE},
  };
  for (const auto& c : cases) {
    std::vector<int64_t> indices{42};
    const gdap_dim d = gdap::dim_from_json(json::parse(c.dict), 0, indices);
    EXPECT_EQ(d.given, c.given) << c.rule;
    EXPECT_EQ(d.indices, nullptr) << c.rule << ": dim_from_json leaves indices to the caller";
    EXPECT_EQ(gdap_dim_validate(&d, 0, -1), d.num_indices > 0 ? GDAP_ERR_PROTOCOL : GDAP_SUCCESS) << c.rule;
  }
  std::vector<int64_t> indices{42};
  const gdap_dim u = gdap::dim_from_json(
      json::parse(R"({"dist_type":"u","size":9,"proc_grid_size":1,"proc_grid_rank":0,"indices":[7,-1]})"), 0, indices);
  EXPECT_EQ(indices, (std::vector<int64_t>{42, 7, -1})) << "indices are appended";
  EXPECT_EQ(u.num_indices, 2);
}

struct Bad {
  const char* rule;
  gdap_status status;
  const char* words;  // the dimension label and the key, with what was wrong
};

const char* kB = R"("dist_type":"b","size":3,"proc_grid_size":1,"proc_grid_rank":0)";

std::string with_b(const std::string& more) { return std::string("[{") + kB + more + "}]"; }

TEST(Json, EveryMistakeNamesDimensionAndKey) {
  const std::string b_start = with_b(R"(,"start":0)");
  const std::vector<std::pair<Bad, std::string>> cases = {
      // shape of the document
      {{"dim_data is a list", GDAP_ERR_PROTOCOL,
        "dim_data must be a JSON list of dimension dictionaries, not a dictionary of 1 keys"},
       R"({"dist_type":"b"})"},
      {{"dim_data is not a string", GDAP_ERR_PROTOCOL, "not string \"b\""}, R"("b")"},
      {{"dim_data is not null", GDAP_ERR_PROTOCOL, "not null"}, "null"},
      {{"a dimension is a dictionary", GDAP_ERR_PROTOCOL,
        "dimension 0: a dimension dictionary must be a JSON object, not integer 3"},
       "[3]"},
      {{"a dimension is not a list", GDAP_ERR_PROTOCOL, "dimension 1: a dimension dictionary must be a JSON "
                                                                 "object, not a list of 0 entries"},
       "[{},[]]"},
      // dist_type
      {{"dist_type is required", GDAP_ERR_PROTOCOL, "dimension 0: missing required key 'dist_type'"},
       R"([{"size":3}])"},
      {{"dist_type is 'b', 'c' or 'u'", GDAP_ERR_PROTOCOL, "dimension 0: dist_type 'z' is not 'b', 'c' or 'u'"},
       R"([{"dist_type":"z"}])"},
      {{"dist_type is one character", GDAP_ERR_PROTOCOL, "dist_type 'bb'"}, R"([{"dist_type":"bb"}])"},
      {{"dist_type is a string", GDAP_ERR_PROTOCOL, "dimension 0: key 'dist_type' must be a string, not integer 98"},
       R"([{"dist_type":98}])"},
      // required keys
      {{"'b' needs stop", GDAP_ERR_PROTOCOL, "dimension 0 ('b'): missing required key 'stop'"}, b_start},
      {{"'b' needs start", GDAP_ERR_PROTOCOL, "dimension 0 ('b'): missing required key 'start'"},
       with_b(R"(,"stop":3)")},
      {{"'c' needs start", GDAP_ERR_PROTOCOL, "dimension 0 ('c'): missing required key 'start'"},
       R"([{"dist_type":"c","size":3,"proc_grid_size":1,"proc_grid_rank":0}])"},
      {{"'u' needs indices", GDAP_ERR_PROTOCOL, "dimension 0 ('u'): missing required key 'indices'"},
       R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0}])"},
      {{"size is required", GDAP_ERR_PROTOCOL, "dimension 0 ('u'): missing required key 'size'"},
       R"([{"dist_type":"u","proc_grid_size":1,"proc_grid_rank":0,"indices":[]}])"},
      {{"proc_grid_size is required", GDAP_ERR_PROTOCOL,
        "dimension 0 ('c'): missing required key 'proc_grid_size'"},
       R"([{"dist_type":"c","size":3,"proc_grid_rank":0,"start":0}])"},
      {{"proc_grid_rank is required", GDAP_ERR_PROTOCOL,
        "dimension 1 ('c'): missing required key 'proc_grid_rank'"},
       R"([{},{"dist_type":"c","size":3,"proc_grid_size":1,"start":0}])"},
      // keys of another dist_type, unknown keys
      {{"'c' has no padding", GDAP_ERR_PROTOCOL,
        "dimension 1 ('c'): key 'padding' is not a key of dist_type 'c'"},
       R"([{},{"dist_type":"c","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"padding":[0,0]}])"},
      {{"'c' has no one_to_one", GDAP_ERR_PROTOCOL, "dimension 0 ('c'): key 'one_to_one' is not a key of "
                                                             "dist_type 'c'"},
       R"([{"dist_type":"c","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"one_to_one":true}])"},
      {{"'b' has no block_size", GDAP_ERR_PROTOCOL,
        "dimension 0 ('b'): key 'block_size' is not a key of dist_type 'b'"},
       with_b(R"(,"start":0,"stop":3,"block_size":1)")},
      {{"'b' has no indices", GDAP_ERR_PROTOCOL, "dimension 0 ('b'): key 'indices' is not a key of dist_type 'b'"},
       with_b(R"(,"start":0,"stop":3,"indices":[])")},
      {{"'u' has no start", GDAP_ERR_PROTOCOL, "dimension 0 ('u'): key 'start' is not a key of dist_type 'u'"},
       R"([{"dist_type":"u","size":0,"proc_grid_size":1,"proc_grid_rank":0,"indices":[],"start":0}])"},
      {{"'u' has no periodic", GDAP_ERR_PROTOCOL,
        "dimension 0 ('u'): key 'periodic' is not a key of dist_type 'u'"},
       R"([{"dist_type":"u","size":0,"proc_grid_size":1,"proc_grid_rank":0,"indices":[],"periodic":false}])"},
      {{"unknown keys are refused", GDAP_ERR_PROTOCOL, "dimension 0 ('u'): unknown key 'colour'"},
       R"([{"dist_type":"u","size":0,"proc_grid_size":1,"proc_grid_rank":0,"indices":[],"colour":1}])"},
      {{"unknown keys are quoted escaped", GDAP_ERR_PROTOCOL, "unknown key 'a\\x0ab'"},
       with_b(R"(,"start":0,"stop":3,"a\nb":1)")},
      // integers are JSON integers in int64 range
      {{"size is an integer, not a float", GDAP_ERR_PROTOCOL,
        "dimension 0 ('b'): key 'size' must be an integer, not number 3.5"},
       R"([{"dist_type":"b","size":3.5,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":3}])"},
      // hunt 11 item 7c: a whole float is shown as written (1.0, not 1) with what to write instead
      {{"1.0 is a float", GDAP_ERR_PROTOCOL,
        "key 'proc_grid_size' must be an integer, not number 1.0 (an integer is written without a decimal point or exponent)"},
       R"([{"dist_type":"b","size":3,"proc_grid_size":1.0,"proc_grid_rank":0,"start":0,"stop":3}])"},
      {{"4e0 is a float", GDAP_ERR_PROTOCOL, "key 'size' must be an integer, not number 4.0 (an integer is written without"},
       R"([{"dist_type":"b","size":4e0,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":3}])"},
      {{"a float among the indices is named by its position", GDAP_ERR_PROTOCOL,
        "dimension 0 ('u'): key 'indices[1]' must be an integer, not number 1.0"},
       R"([{"dist_type":"u","size":4,"indices":[0,1.0,2,3],"proc_grid_size":1,"proc_grid_rank":0}])"},
      {{"start is an integer, not a boolean", GDAP_ERR_PROTOCOL,
        "dimension 0 ('b'): key 'start' must be an integer, not boolean true"},
       with_b(R"(,"start":true,"stop":3)")},
      {{"stop is an integer, not a string", GDAP_ERR_PROTOCOL, "key 'stop' must be an integer, not string \"3\""},
       with_b(R"(,"start":0,"stop":"3")")},
      {{"proc_grid_rank is not null", GDAP_ERR_PROTOCOL, "key 'proc_grid_rank' must be an integer, not null"},
       R"([{"dist_type":"c","size":3,"proc_grid_size":1,"proc_grid_rank":null,"start":0}])"},
      {{"uint64 max does not fit in int64", GDAP_ERR_OVERFLOW,
        "dimension 0 ('b'): key 'size' (18446744073709551615) does not fit in int64"},
       R"([{"dist_type":"b","size":18446744073709551615,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":3}])"},
      {{"INT64_MAX + 1 does not fit in int64", GDAP_ERR_OVERFLOW,
        "key 'stop' (9223372036854775808) does not fit in int64"},
       with_b(R"(,"start":0,"stop":9223372036854775808)")},
      {{"INT64_MIN - 1 does not fit in int64", GDAP_ERR_OVERFLOW, "key 'start'"},
       with_b(R"(,"start":-9223372036854775809,"stop":3)")},
      {{"beyond uint64 does not fit in int64", GDAP_ERR_OVERFLOW, "key 'stop'"},
       with_b(R"(,"start":0,"stop":99999999999999999999999)")},
      // padding, booleans, block_size, indices
      {{"padding has 2 entries", GDAP_ERR_PROTOCOL,
        "dimension 0 ('b'): key 'padding' must be a list of 2 integers, not a list of 3 entries"},
       with_b(R"(,"start":0,"stop":3,"padding":[0,0,0])")},
      {{"padding is a list", GDAP_ERR_PROTOCOL, "key 'padding' must be a list of 2 integers, not integer 1"},
       with_b(R"(,"start":0,"stop":3,"padding":1)")},
      {{"padding entries are integers", GDAP_ERR_PROTOCOL, "key 'padding' must be an integer, not number 0.5"},
       with_b(R"(,"start":0,"stop":3,"padding":[0,0.5])")},
      {{"periodic is a boolean", GDAP_ERR_PROTOCOL,
        "dimension 0 ('b'): key 'periodic' must be a boolean (true or false), not integer 1"},
       with_b(R"(,"start":0,"stop":3,"periodic":1)")},
      {{"one_to_one is a boolean", GDAP_ERR_PROTOCOL, "dimension 0 ('u'): key 'one_to_one' must be a boolean"},
       R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0,"indices":[],"one_to_one":"yes"}])"},
      {{"block_size is an integer", GDAP_ERR_PROTOCOL, "dimension 0 ('c'): key 'block_size' must be an integer"},
       R"([{"dist_type":"c","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"block_size":2.0}])"},
      {{"indices is a list", GDAP_ERR_PROTOCOL,
        "dimension 0 ('u'): key 'indices' must be a list of integers, not integer 5"},
       R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0,"indices":5}])"},
      {{"indices is not a dictionary", GDAP_ERR_PROTOCOL, "not a dictionary of 0 keys"},
       R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0,"indices":{}}])"},
      {{"each index is an integer", GDAP_ERR_PROTOCOL,
        "dimension 0 ('u'): key 'indices[1]' must be an integer, not string \"2\""},
       R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0,"indices":[1,"2"]}])"},
      {{"each index is not a boolean", GDAP_ERR_PROTOCOL, "not boolean false"},
       R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0,"indices":[false]}])"},
  };
  for (const auto& [c, text] : cases) {
    const gdap_status s = gdap::guard([&] { (void)gdap::dim_data_from_json(json::parse(text)); });
    EXPECT_EQ(s, c.status) << c.rule << ": " << gdap_last_error();
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << c.rule << ": " << gdap_last_error();
    // The text parser reaches the same verdict.
    EXPECT_EQ(gdap::guard([&] { (void)gdap::dim_data_from_json_text(text); }), c.status) << c.rule;
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << c.rule << " (text): " << gdap_last_error();
  }
}

TEST(Json, HostileTextIsRefusedWhileParsing) {
  struct Case {
    const char* rule;
    std::string text;
    const char* words;
  };
  const Case cases[] = {
      {"truncated JSON", "[{", "dim_data is not valid JSON"},
      {"empty text", "", "dim_data is not valid JSON"},
      {"trailing garbage", "[] x", "dim_data is not valid JSON"},
      {"invalid UTF-8 in a string", "[{\"dist_type\":\"\xff\"}]", "dim_data is not valid JSON"},
      {"a NUL byte", std::string("[\0]", 3), "dim_data is not valid JSON"},
      {"a NUL byte and garbage after the document", std::string("[{}]\0[1, 2", 10), "a NUL byte at offset 4"},
      {"deep nesting of lists", std::string(1000000, '['), "nests lists or dictionaries 4 deep"},
      {"deep nesting of dictionaries", "[{\"a\":{\"b\":{\"c\":{}}}}]", "nests lists or dictionaries 4 deep"},
      {"a list inside padding", with_b(R"(,"start":0,"stop":3,"padding":[[1],0])"), "4 deep"},
      {"a repeated key", std::string("[{},{") + kB + R"(,"size":4,"start":0,"stop":3}])",
       "dimension 1: key 'size' appears twice"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gdap::guard([&] { (void)gdap::dim_data_from_json_text(c.text); }), GDAP_ERR_PROTOCOL) << c.rule;
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << c.rule << ": " << gdap_last_error();
    EXPECT_LT(std::string(gdap_last_error()).size(), 400u) << c.rule << ": messages quote only a little of the input";
  }
}

TEST(Json, LongIndexListsParse) {
  std::string text = R"([{"dist_type":"u","size":100000,"proc_grid_size":1,"proc_grid_rank":0,"indices":[)";
  for (int i = 0; i < 100000; ++i) text += (i ? "," : "") + std::to_string(99999 - i);
  text += "]}]";
  const auto dims = gdap::dim_data_from_json_text(text);
  ASSERT_EQ(dims.ndim(), 1);
  EXPECT_EQ(dims[0].num_indices, 100000);
  EXPECT_EQ(dims[0].indices[0], 99999);
  EXPECT_EQ(gdap_dim_validate(&dims[0], 0, 100000), GDAP_SUCCESS) << gdap_last_error();
}

// A cheap stand-in for the fuzzer: mutated documents never crash (ASan/UBSan builds check memory and
// arithmetic) and only ever give success or the parser's own statuses; what parses also validates
// without crashing.
TEST(Json, RandomMutationsGiveOnlyParserStatuses) {
  const std::string seeds[] = {
      R"([{"dist_type":"b","size":18,"proc_grid_size":2,"proc_grid_rank":1,"start":8,"stop":18,"padding":[1,1],"periodic":false}])",
      R"([{"dist_type":"c","size":10,"proc_grid_size":2,"proc_grid_rank":1,"start":2,"block_size":2},{}])",
      R"([{"dist_type":"u","size":30,"proc_grid_size":3,"proc_grid_rank":1,"indices":[6,13,3,-4],"one_to_one":true}])",
  };
  using namespace std::string_literals;
  const std::string alphabet = "[]{}\",:-0123456789eE.tfnbcu \\\x00\xff"s;  // NUL and a non-UTF-8 byte too
  const std::string numbers[] = {"9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                 "18446744073709551616", "1e400", "-0", "0.0"};
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text = seeds[trial % 3];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      switch (rng() % 4) {
        case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(at, 1 + rng() % 8); break;
        case 2: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: text.insert(at, numbers[rng() % 7]); break;
      }
    }
    gdap::DimData dims;
    const gdap_status s = gdap::guard([&] { dims = gdap::dim_data_from_json_text(text); });
    ASSERT_TRUE(s == GDAP_SUCCESS || s == GDAP_ERR_PROTOCOL || s == GDAP_ERR_OVERFLOW)
        << gdap_status_string(s) << " for " << text << ": " << gdap_last_error();
    if (s != GDAP_SUCCESS) continue;
    const gdap_status v = gdap_dims_validate(dims.data(), dims.ndim(), nullptr);
    ASSERT_TRUE(v == GDAP_SUCCESS || v == GDAP_ERR_PROTOCOL || v == GDAP_ERR_OVERFLOW)
        << gdap_status_string(v) << " for " << text << ": " << gdap_last_error();
    EXPECT_EQ(gdap::dim_data_from_json(gdap::dim_data_to_json(dims)).ndim(), dims.ndim()) << text;
  }
}

TEST(Json, SerialisingRefusesWhatHasNoJsonForm) {
  gdap_dim d = GDAP_DIM_INIT;
  d.dist_type = 'x';
  EXPECT_EQ(gdap::guard([&] { (void)gdap::dim_to_json(d); }), GDAP_ERR_PROTOCOL);
  gdap_dim u = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_dim_set_unstructured(&u, 4, 1, 0, nullptr, 3, -1), GDAP_SUCCESS);
  EXPECT_EQ(gdap::guard([&] { (void)gdap::dim_to_json(u); }), GDAP_ERR_PROTOCOL) << "NULL indices are not read";
  gdap_dim b = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_dim_set_block(&b, 8, 2, 0, 0, 5), GDAP_SUCCESS);
  ASSERT_EQ(gdap_dim_set_padding(&b, 0, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap::dim_to_json(b), json::parse(R"({"dist_type":"b","size":8,"proc_grid_size":2,"proc_grid_rank":0,
                                                  "start":0,"stop":5,"padding":[0,1]})"));
}

}  // namespace
