// libFuzzer target: arbitrary bytes as a dim_data JSON document (one rank's list, or a list of
// every rank's lists), through the parser, the per-process rules and, for all ranks, gdap_map_create.
// Any crash, leak or sanitizer report is a bug; errors are the expected outcome for most inputs.
#include "core/error.hpp"
#include "protocol/json.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace {

void exercise_one_rank(const gdap::DimData& dims) {
  if (gdap_dims_validate(dims.data(), dims.ndim(), nullptr) != GDAP_SUCCESS) return;
  for (int64_t i = 0; i < dims.ndim(); ++i) {
    int64_t count = 0, runs = 0, written = 0;
    gdap_dim_owned_count(&count, &dims[i]);
    if (gdap_dim_num_runs(&runs, &dims[i]) == GDAP_SUCCESS && runs > 0) {
      gdap_run first[4];
      gdap_dim_runs(first, &written, &dims[i], 0, 4);
    }
    int64_t local = 0;
    gdap_dim_global_to_local(&local, &dims[i], dims[i].start);
  }
}

void exercise_all_ranks(const std::vector<gdap::DimData>& ranks) {
  std::vector<gdap_dim> all;
  for (const auto& r : ranks) {
    if (r.ndim() != ranks[0].ndim()) return;
    for (int64_t i = 0; i < r.ndim(); ++i) all.push_back(r[i]);
  }
  gdap_map* map = nullptr;
  if (gdap_map_create(&map, static_cast<int64_t>(ranks.size()), ranks[0].ndim(), all.empty() ? nullptr : all.data()) !=
      GDAP_SUCCESS) {
    return;
  }
  std::vector<int64_t> global(static_cast<size_t>(ranks[0].ndim()), 0), local(global.size());
  int64_t rank = 0;
  gdap_map_owner(&rank, local.data(), map, global.data());
  gdap_map_destroy(map);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  (void)gdap::guard([&] {
    if (doc.is_array() && !doc.empty() && doc[0].is_array()) {
      std::vector<gdap::DimData> ranks;
      for (const auto& r : doc) ranks.push_back(gdap::dim_data_from_json(r));
      if (ranks.size() <= 64) exercise_all_ranks(ranks);
    } else {  // the entry point for untrusted text: depth and repeated keys checked while parsing
      exercise_one_rank(gdap::dim_data_from_json_text(
          std::string_view(reinterpret_cast<const char*>(data), size)));
    }
  });
  return 0;
}
