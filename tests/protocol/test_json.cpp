// dim_data as JSON: round trips of canonical dictionaries and every way a dictionary can be wrong.
#include "protocol/json.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using json = nlohmann::json;

TEST(Json, RoundTripsCanonicalDimData) {
  const char* texts[] = {
      R"([{"dist_type":"b","size":18,"proc_grid_size":2,"proc_grid_rank":0,"start":0,"stop":10,"padding":[1,1]}])",
      R"([{"dist_type":"b","size":8,"proc_grid_size":1,"proc_grid_rank":0,"start":-2,"stop":10,"padding":[2,2],"periodic":true}])",
      R"([{"dist_type":"c","size":10,"proc_grid_size":2,"proc_grid_rank":1,"start":2,"block_size":2},{"dist_type":"c","size":5,"proc_grid_size":1,"proc_grid_rank":0,"start":0}])",
      R"([{"dist_type":"u","size":30,"proc_grid_size":3,"proc_grid_rank":1,"indices":[6,13,3],"one_to_one":true}])",
      R"([{}])",
      R"([])",
  };
  for (const char* text : texts) {
    const json in = json::parse(text);
    const gdap::DimData dims = gdap::dim_data_from_json(in);
    EXPECT_EQ(gdap::dim_data_to_json(dims), in) << text;
    const gdap::DimData copy = dims;  // copies keep their own indices
    EXPECT_EQ(gdap::dim_data_to_json(copy), in);
  }
}

TEST(Json, GivenBitsFollowTheKeysPresent) {
  const auto dims = gdap::dim_data_from_json(json::parse(
      R"([{"dist_type":"c","size":10,"proc_grid_size":2,"proc_grid_rank":0,"start":0,"block_size":1}])"));
  EXPECT_EQ(dims[0].given, GDAP_KEY_BLOCK_SIZE) << "a default value given explicitly is still given";
  EXPECT_EQ(gdap_dim_validate(&dims[0], 0, 5), GDAP_SUCCESS) << gdap_last_error();
}

struct Bad {
  const char* rule;
  const char* text;
  gdap_status status;
  const char* words;
};

TEST(Json, EveryMistakeNamesDimensionAndKey) {
  const Bad cases[] = {
      {"not a list", R"({"dist_type":"b"})", GDAP_ERR_PROTOCOL, "dim_data must be a JSON list"},
      {"not a dict", R"([3])", GDAP_ERR_PROTOCOL, "dimension 0: a dimension dictionary must be a JSON object"},
      {"missing dist_type", R"([{"size":3}])", GDAP_ERR_PROTOCOL, "missing required key 'dist_type'"},
      {"unknown dist_type", R"([{"dist_type":"z"}])", GDAP_ERR_PROTOCOL, "dist_type 'z'"},
      {"dist_type not a string", R"([{"dist_type":98}])", GDAP_ERR_PROTOCOL, "'dist_type' must be a string"},
      {"missing stop", R"([{"dist_type":"b","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":0}])",
       GDAP_ERR_PROTOCOL, "dimension 0 ('b'): missing required key 'stop'"},
      {"missing common key",
       R"([{},{"dist_type":"c","size":3,"proc_grid_size":1,"start":0}])", GDAP_ERR_PROTOCOL,
       "dimension 1 ('c'): missing required key 'proc_grid_rank'"},
      {"key of another type",
       R"([{"dist_type":"c","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"padding":[0,0]}])",
       GDAP_ERR_PROTOCOL, "key 'padding' is not a key of dist_type 'c'"},
      {"unknown key", R"([{"dist_type":"u","size":0,"proc_grid_size":1,"proc_grid_rank":0,"indices":[],"colour":1}])",
       GDAP_ERR_PROTOCOL, "unknown key 'colour'"},
      {"float size", R"([{"dist_type":"b","size":3.5,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":3}])",
       GDAP_ERR_PROTOCOL, "key 'size' must be an integer"},
      {"bool start", R"([{"dist_type":"b","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":true,"stop":3}])",
       GDAP_ERR_PROTOCOL, "key 'start' must be an integer"},
      {"huge size", R"([{"dist_type":"b","size":18446744073709551615,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":3}])",
       GDAP_ERR_OVERFLOW, "does not fit in int64"},
      {"padding of 3", R"([{"dist_type":"b","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":3,"padding":[0,0,0]}])",
       GDAP_ERR_PROTOCOL, "'padding' must be a list of 2 integers"},
      {"periodic not bool", R"([{"dist_type":"b","size":3,"proc_grid_size":1,"proc_grid_rank":0,"start":0,"stop":3,"periodic":1}])",
       GDAP_ERR_PROTOCOL, "key 'periodic' must be a boolean"},
      {"indices not a list", R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0,"indices":5}])",
       GDAP_ERR_PROTOCOL, "'indices' must be a list"},
      {"index not an integer", R"([{"dist_type":"u","size":3,"proc_grid_size":1,"proc_grid_rank":0,"indices":[1,"2"]}])",
       GDAP_ERR_PROTOCOL, "key 'indices' must be an integer"},
  };
  for (const auto& c : cases) {
    const gdap_status s = gdap::guard([&] { (void)gdap::dim_data_from_json(json::parse(c.text)); });
    EXPECT_EQ(s, c.status) << c.rule << ": " << gdap_last_error();
    EXPECT_NE(std::string(gdap_last_error()).find(c.words), std::string::npos) << c.rule << ": " << gdap_last_error();
  }
}

}  // namespace
