// What the CLI prints about a distribution: the per-rank table and the ownership picture (text
// and SVG), all computed through the public C API from a gdap_map.
#pragma once

#include <gdap/gdap.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gdap::cli {

struct RankSummary {
  int64_t rank;
  std::vector<int64_t> grid;         // grid coordinates
  std::vector<int64_t> local_shape;  // the buffer, padding included
  std::vector<int64_t> owned_shape;
  int64_t owned;
};

// Throws gdap::Error with gdap_last_error() when a C call fails.
void check(gdap_status status);

std::vector<RankSummary> summarize(const gdap_map* map);
std::string table(const std::vector<RankSummary>& ranks);
nlohmann::json to_json(const std::vector<RankSummary>& ranks);
std::string tuple(const std::vector<int64_t>& values, const char* separator = ", ");

// One character per cell (0-9, a-z, A-Z, then '#'; '.' where nobody owns), for 1-d and 2-d maps;
// arrays wider than `max_cols` or taller than `max_rows` are sampled (the header says the step).
std::string picture(const gdap_map* map, int64_t max_cols = 64, int64_t max_rows = 32);

// The same picture as SVG: one coloured rectangle per cell, a legend of ranks, labelled axes.
std::string svg(const gdap_map* map, int64_t max_cols = 128, int64_t max_rows = 128);

}  // namespace gdap::cli
