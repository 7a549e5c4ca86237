// Meetings of collective calls (see collective.hpp).
#include "comm/collective.hpp"

#include "comm/comm.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace gdap {

namespace {

std::string_view name_of(const Meeting& m) { return {m.call.data(), strnlen(m.call.data(), m.call.size())}; }

std::string describe(const Meeting& m) {
  const std::string_view name = name_of(m);
  if (name.empty()) return fmt::format("a collective step outside any C call (meeting {})", m.step + 1);
  return fmt::format("{} (its meeting {})", name, m.step + 1);
}

}  // namespace

CollectiveCall::CollectiveCall(gdap_comm& comm, const char* name) : comm_(comm), outermost_(comm.call == nullptr) {
  if (!outermost_) return;
  comm.call = name;
  comm.call_meetings = 0;
}

CollectiveCall::~CollectiveCall() {
  if (outermost_) comm_.call = nullptr;
}

Meeting next_meeting(gdap_comm& comm) {
  Meeting m;
  if (comm.call != nullptr) std::strncpy(m.call.data(), comm.call, m.call.size() - 1);
  m.step = comm.call_meetings++;
  return m;
}

std::string meetings_differ(const std::vector<Meeting>& all) {
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    return fmt::format("the ranks are in different collective calls: rank 0 is in {} but rank {} in {}; every rank "
                       "must make the same collective calls on a communicator, in the same order",
                       describe(all[0]), r, describe(all[r]));
  }
  return {};
}

void check_verdict(const std::string& verdict) {
  if (!verdict.empty()) throw Error(GDAP_ERR_INVALID_ARGUMENT, verdict);
}

}  // namespace gdap
