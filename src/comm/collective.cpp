// Meetings of collective calls (see collective.hpp).
#include "comm/collective.hpp"

#include "comm/comm.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

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
  ++comm.busy;
  ++comm.call_depth;
  if (!outermost_) return;
  comm.call = name;
  comm.call_meetings = 0;
  comm.touched.clear();
  comm.call_fails = std::exchange(comm.fail_next, GDAP_SUCCESS);
  comm.call_fails_reason = std::move(comm.fail_next_reason);
  comm.fail_next_reason.clear();
}

CollectiveCall::~CollectiveCall() {
  --comm_.busy;
  --comm_.call_depth;
  if (!outermost_) return;
  comm_.call = nullptr;
  comm_.touched.clear();
  comm_.call_fails = GDAP_SUCCESS;
  comm_.call_fails_reason.clear();
}

void touches(gdap_comm& comm, const Region& region) {
  if (comm.call_depth <= 1) comm.touched.push_back(region);
}

std::string regions_clash(const std::vector<const std::vector<Region>*>& by_rank) {
  struct Entry {
    size_t rank;
    const Region* region;
    ByteSpan span;
  };
  std::vector<Entry> all;
  for (size_t r = 0; r < by_rank.size(); ++r) {
    if (by_rank[r] == nullptr) continue;
    for (const Region& g : *by_rank[r]) {
      const ByteSpan span = span_of(g.bytes);
      if (!span.empty()) all.push_back({r, &g, span});
    }
  }
  // Sorted by first byte, each region is compared with the earlier ones whose spans reach it (those
  // still open); spans that overlap are then compared byte for byte (interleaved views pass).
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    return a.span.first != b.span.first ? a.span.first < b.span.first : a.rank < b.rank;
  });
  std::vector<const Entry*> open;
  for (const Entry& e : all) {
    std::erase_if(open, [&](const Entry* o) { return o->span.last < e.span.first; });
    for (const Entry* o : open) {
      if (!o->region->written && !e.region->written) continue;
      if (!may_share_bytes(o->region->bytes, e.region->bytes)) continue;
      const Entry& a = o->rank <= e.rank ? *o : e;
      const Entry& b = o->rank <= e.rank ? e : *o;
      return fmt::format("rank {}'s {} and rank {}'s {} share memory, and at least one of them is written: every "
                         "section a rank of an in-process group writes must be apart from its other sections and "
                         "from every other rank's (the ranks share one address space); use separate arrays",
                         a.rank, a.region->what, b.rank, b.region->what);
    }
    open.push_back(&e);
  }
  return {};
}

namespace {

// Names of regions that came from another rank: the few argument names gdap declares, kept as
// static strings (a Region names its argument by a const char*).
const char* known_name(std::string_view what) {
  for (const char* name : {"src", "dst", "section", "source", "result", "local", "A", "B", "C"}) {
    if (what == name) return name;
  }
  return "section";
}

void put(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

uint64_t take(std::string_view& in) {
  uint64_t v = 0;
  if (in.size() < sizeof v) fail(GDAP_ERR_INTERNAL, "a peer's segment regions are cut short");
  std::memcpy(&v, in.data(), sizeof v);
  in.remove_prefix(sizeof v);
  return v;
}

std::string_view take_text(std::string_view& in) {
  const uint64_t n = take(in);
  if (n > in.size()) fail(GDAP_ERR_INTERNAL, "a peer's segment regions are cut short");
  const std::string_view text = in.substr(0, n);
  in.remove_prefix(n);
  return text;
}

}  // namespace

// Per region in a segment: device, inode, written, the footprint (base offset, item size, number
// of dimensions, then each dimension's extent and byte stride), then the argument's and the
// segment's names, each with its length. Every rank runs the same build.
std::string packed_segment_regions(const std::vector<Region>& touched) {
  std::string out;
  for (const Region& g : touched) {
    if (g.segment.empty()) continue;
    const Footprint& f = g.segment_bytes;
    for (uint64_t v : {g.segment_device, g.segment_inode, uint64_t{g.written}, f.base, static_cast<uint64_t>(f.itemsize),
                       uint64_t{f.shape.size()}}) {
      put(out, v);
    }
    for (size_t k = 0; k < f.shape.size(); ++k) {
      put(out, static_cast<uint64_t>(f.shape[k]));
      put(out, static_cast<uint64_t>(f.strides[k]));
    }
    const std::string_view what = g.what;
    put(out, what.size());
    out.append(what);
    put(out, g.segment.size());
    out.append(g.segment);
  }
  return out;
}

std::vector<Region> unpack_segment_regions(std::string_view in) {
  std::vector<Region> out;
  while (!in.empty()) {
    Region g{};
    g.segment_device = take(in);
    g.segment_inode = take(in);
    g.written = take(in) != 0;
    Footprint& f = g.segment_bytes;
    f.base = take(in);
    f.itemsize = static_cast<int64_t>(take(in));
    const uint64_t ndim = take(in);
    if (ndim > in.size() / (2 * sizeof(uint64_t))) fail(GDAP_ERR_INTERNAL, "a peer's segment regions are cut short");
    for (uint64_t k = 0; k < ndim; ++k) {
      f.shape.push_back(static_cast<int64_t>(take(in)));
      f.strides.push_back(static_cast<int64_t>(take(in)));
    }
    g.what = known_name(take_text(in));
    g.segment = std::string(take_text(in));
    out.push_back(std::move(g));
  }
  return out;
}

std::string segments_clash(const std::vector<std::vector<Region>>& by_rank) {
  for (size_t a = 0; a < by_rank.size(); ++a) {
    for (const Region& w : by_rank[a]) {
      if (!w.written) continue;
      for (size_t b = 0; b < by_rank.size(); ++b) {
        if (b == a) continue;  // within one rank the call's own checks compare addresses
        for (const Region& o : by_rank[b]) {
          if (o.segment_device != w.segment_device || o.segment_inode != w.segment_inode) continue;
          if (!may_share_bytes(w.segment_bytes, o.segment_bytes)) continue;
          const ByteSpan ws = span_of(w.segment_bytes), os = span_of(o.segment_bytes);
          return fmt::format("rank {}'s {} (bytes {}..{} of shared-memory segment '{}') and rank {}'s {} (bytes {}..{} "
                             "of it) overlap in bytes {}..{}, and rank {} writes them: the bytes a section one rank "
                             "writes must be apart from every other rank's sections, also across processes "
                             "(strided sections are compared byte for byte: interleaved views of one array that "
                             "share no byte pass); use separate arrays",
                             a, w.what, ws.first, ws.last, w.segment, b, o.what, os.first, os.last,
                             std::max(ws.first, os.first), std::min(ws.last, os.last), a);
        }
      }
    }
  }
  return {};
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
