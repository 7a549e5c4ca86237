// Global views of distributions gathered over a communicator (gdap_map_create_collective), and the
// few that the reductions gathered last, remembered per communicator: a call that repeats its
// distributions (a reduction in a solver's loop) then skips gathering every rank's dictionaries
// and checking the map, which for an unstructured dimension of many indices took longer than the
// data's own work (a millisecond for 16384 indices).
#pragma once

#include "comm/comm.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct gdap_map;

namespace gdap {

using SharedMap = std::shared_ptr<const gdap_map>;

// Wire form of one rank's dictionaries: ndim, then per dimension the gdap_dim (indices zeroed)
// followed by its indices. Every rank runs the same build, so the struct's bytes are the format.
// Checks ndim and the pointers.
std::string pack_dims(int64_t ndim, const gdap_dim* dims);

// The global view built from every rank's packed dictionaries (rank order); rank 0's dimension
// count is the reference, so every rank reports the same mismatch. Throws the map's own errors.
gdap_map* map_from_packed(const std::vector<std::string>& every, int64_t nranks);

// Gathers several maps in two steps, so that the first rides in the caller's agreement:
//   MapGather g(comm);
//   auto shares = agree_gather(comm, [&] { ...checks...; g.add("source", ndim, dims); return g.offer(); }, ...);
//   std::vector<SharedMap> maps = g.finish(shares);
// A remembered map is taken only when every rank's dictionaries are byte for byte those it gave
// when the map was built, and every rank holds it in the same slot with the same fingerprint (a
// hash of all ranks' dictionaries, which also catches ranks whose memories diverged after a
// failure). Otherwise the missing maps are gathered in one more exchange, built, and remembered.
// Any map's error names it: "<which>'s distribution: ...", the same on every rank.
class MapGather {
 public:
  explicit MapGather(gdap_comm& comm) : comm_(comm) {}

  // This rank's part: packs `dims` (borrowed for the call).
  void add(std::string which, int64_t ndim, const gdap_dim* dims);
  // This rank's share of the agreement: its slots' fingerprints and, per map, the slots that match.
  std::string offer() const;
  // Collective: the maps, in the order added, from every rank's offer (in rank order).
  std::vector<SharedMap> finish(const std::vector<std::string>& offers);

 private:
  gdap_comm& comm_;
  std::vector<std::string> which_, mine_;
};

}  // namespace gdap
