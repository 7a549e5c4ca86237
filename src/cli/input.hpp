// Reading the CLI's JSON input: one rank's dim_data, or every rank's. Accepted forms:
//   [ {dim dict}, ... ]                                  one rank's dim_data
//   {"__version__": "0.10.0", "dim_data": [...], "shape": [...]}   one rank, optional keys
//   {"ranks": [ <one-rank form>, ... ]}  or  [ [ ... ], [ ... ] ]  every rank, in rank order
#pragma once

#include "protocol/dim_data.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gdap::cli {

struct RankInput {
  std::string version = GDAP_PROTOCOL_VERSION;
  DimData dims;
  std::optional<std::vector<int64_t>> shape;  // the buffer's shape, when the file gives it
};

struct Input {
  std::vector<RankInput> ranks;
  bool all_ranks = false;
};

// Throws gdap::Error: GDAP_ERR_IO for an unreadable file or bad JSON (with the parser's position),
// GDAP_ERR_PROTOCOL for JSON that is no dim_data (naming the rank and what is wrong).
Input read_input(const std::string& path);

// Replaces every {} by what it stands for, from the rank's shape; throws if a {} has no shape.
void resolve_aliases(Input& input);

// All ranks' dictionaries, rank-major, as gdap_map_create takes them.
std::vector<gdap_dim> rank_major(const Input& input);

}  // namespace gdap::cli
