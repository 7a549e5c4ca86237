// A load that meets a save of the same path reads again until every rank read one save's array
// (docs/zarr.md and docs/dnpy.md, "Loads and saves at the same time"): after each try every rank
// votes, and every rank sees every vote, so all of them read again, finish or give up together.
#pragma once

#include "comm/comm.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gdap::io {

// One rank's vote after a try: why to read again (empty: it read a whole array), the generation it
// read (every rank's must be the same), and whether it has waited its limit.
struct Settled {
  std::string again, generation;
  bool late = false;
};

// When the ranks first agreed to read again (every rank sets it after the same vote), so that the
// wait is measured from the first sighting of a save, never from entering the call: a rank that
// arrived late or read slowly still reads again at least once before anyone gives up.
using SettleClock = std::optional<std::chrono::steady_clock::time_point>;

// Every rank's vote: `again()` and `generation()` are this rank's, late once `wait` has passed since
// `since` (never before the ranks first agreed to read again).
// (Gathered as one string per rank: 'L' or '-' for late, the reason's length, ':', the reason, the generation.)
inline std::vector<Settled> settled_votes(gdap_comm& comm, const SettleClock& since, std::chrono::seconds wait,
                                   const std::function<std::string()>& again, const std::function<std::string()>& generation) {
  const std::vector<std::string> shares = agree_shares(comm, [&] {
    const std::string why = again();
    const bool waited = since && std::chrono::steady_clock::now() - *since >= wait;
    return fmt::format("{}{}:{}{}", waited ? 'L' : '-', why.size(), why, generation());
  });
  std::vector<Settled> votes;
  for (const std::string& s : shares) {
    const size_t colon = s.find(':');
    const size_t length = std::stoul(s.substr(1, colon - 1));
    votes.push_back({s.substr(colon + 1, length), s.substr(colon + 1 + length), s[0] == 'L'});
  }
  return votes;
}

// Why the ranks must read again: the first rank's reason, or "ranks read two saves' arrays" when
// their generations differ; nothing when every rank read one and the same.
inline std::optional<std::string> unsettled(const std::vector<Settled>& votes) {
  for (const Settled& v : votes) {
    if (!v.again.empty()) return v.again;
  }
  const bool one = std::all_of(votes.begin(), votes.end(), [&](const Settled& v) { return v.generation == votes[0].generation; });
  if (!one) return std::string("ranks that read two saves' arrays");
  return std::nullopt;
}

// A file's identity as every host sees it: inode, size and change time. Never st_dev, which a
// network or parallel file system numbers per client, so that ranks on several hosts would always
// disagree (docs/zarr.md, "Loads and saves at the same time").
inline std::string shared_identity(const struct stat& st) {
  return fmt::format("{}:{}:{}.{}", st.st_ino, st.st_size, st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

// True once any rank has waited its limit.
inline bool late(const std::vector<Settled>& votes) {
  return std::any_of(votes.begin(), votes.end(), [](const Settled& v) { return v.late; });
}

}  // namespace gdap::io
