// What every rank of a collective save or load must pass alike (the path as given and as it
// resolves on that rank, the options, the array's dtype, shape and map), as named fields packed
// into the call's agreement token: a rank that differs is refused on every rank at the call's one
// agreement, naming the rank and the first field that differs, instead of writing into another
// rank's store or mixing two saves' files.
#pragma once

#include "comm/comm.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct gdap_map;

namespace gdap::io {

class CallFields {
 public:
  // `value` as a message shows it ("'/data/a'", "float32", "(4, 6)").
  void add(std::string name, std::string value);
  // `path` given as is and made absolute without '.' or '..' (a relative path differs across ranks
  // whose working folders differ); symbolic links are not followed (ranks on other hosts may reach
  // one shared store through different links).
  void add_path(const std::string& name, const std::string& path);
  void add_dtype(gdap_dtype dtype);
  void add_shape(const std::vector<int64_t>& shape);
  void add_map(const gdap_map& map);  // its global shape, then its digest (maps/map.hpp)
  std::string token() const;          // field_token of every name and value (comm/comm.hpp)

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// The Share agree_gather wants from a rank's checks that end in `fields`.
Share share_of(const CallFields& fields);

// agree_gather's Mismatch for tokens made by CallFields::token: "<call>: rank 1 passed path 'b',
// rank 0 'a': every rank must pass the same path".
Mismatch fields_mismatch(const char* call);

}  // namespace gdap::io
