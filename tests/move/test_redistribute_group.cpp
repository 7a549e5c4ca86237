// gdap_redistribute through the in-process group (one thread per rank), element by element: every
// ordered pair of axis types in 1-d and mixes in 2-d and 3-d, on grids of different shapes and
// rank counts, four dtypes, sections allocated or wrapped with any strides (the table and checks
// are in redistribute_check.hpp, shared with the MPI program). Then the refusals: global shapes
// that differ, one rank's bad arguments (every rank fails and nothing moves), global views no rank
// may accept (the same error everywhere), and a rank that never comes (a timeout, not a hang).
#include "alternating_check.hpp"
#include "redistribute_check.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/group.hpp"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <thread>
#include <tuple>

namespace {

namespace rt = redist_test;
using rt::contains;
using rt::Layout;

// support/group.hpp: the timeout turns a hang caused by a library bug into a failure long before
// ctest's own limit.
using gdap_test::Group;
using gdap_test::on_threads;

void expect_clean(const std::vector<rt::Report>& reports) {
  for (size_t r = 0; r < reports.size(); ++r) {
    EXPECT_TRUE(reports[r].ok()) << "rank " << r << ":\n" << reports[r].text();
  }
}

// ---- the table ----

const std::vector<rt::Case>& table(int64_t nranks) {
  static std::map<int64_t, std::vector<rt::Case>> tables;  // filled before any test thread starts
  auto it = tables.find(nranks);
  if (it == tables.end()) it = tables.emplace(nranks, rt::cases(nranks)).first;
  return it->second;
}

struct Entry {
  int64_t nranks;
  size_t index;
};

std::vector<Entry> entries() {
  std::vector<Entry> out;
  for (int64_t n : {2, 3, 4}) {
    for (size_t i = 0; i < table(n).size(); ++i) out.push_back({n, i});
  }
  return out;
}

class Table : public ::testing::TestWithParam<Entry> {};

TEST_P(Table, EveryOwnedElementArrivesAndNothingElseChanges) {
  const auto [n, index] = GetParam();
  const rt::Case& c = table(n)[index];
  ASSERT_EQ(std::max(c.src.nranks(), c.dst.nranks()), n) << "the larger map spans the group";
  // A map spanning fewer ranks is built collectively by a group of just those ranks.
  Group all(n), src_ranks(c.src.nranks()), dst_ranks(c.dst.nranks());
  std::vector<rt::Report> reports(static_cast<size_t>(n));
  on_threads(n, [&](int64_t r) {
    auto map_comm = [&](const Layout& layout, const Group& own) {
      return layout.nranks() == n ? all[r] : r < layout.nranks() ? own[r] : nullptr;
    };
    rt::run_case(c, index, r, {all[r], map_comm(c.src, src_ranks), map_comm(c.dst, dst_ranks)},
                 reports[static_cast<size_t>(r)]);
  });
  expect_clean(reports);
  for (const rt::Report& report : reports) EXPECT_EQ(report.moves, 2 * static_cast<int64_t>(rt::dtypes().size()));
}

INSTANTIATE_TEST_SUITE_P(Group, Table, ::testing::ValuesIn(entries()), [](const ::testing::TestParamInfo<Entry>& p) {
  return rt::cat("N", p.param.nranks, "_", p.param.index, "_", table(p.param.nranks)[p.param.index].name);
});

TEST(TableCoverage, EveryPairOfStoragesMeets) {
  std::map<std::pair<rt::Storage, rt::Storage>, int> met;
  for (size_t index = 0; index < table(2).size(); ++index) {
    for (size_t d = 0; d < rt::dtypes().size(); ++d) ++met[rt::storages(index, d)];
  }
  EXPECT_EQ(met.size(), rt::kStorages.size() * rt::kStorages.size());
}

// The checks themselves: a destination that is right except for one element, one padding cell
// or one byte between strided elements is caught.
TEST(Checker, CatchesAWrongElementAWrittenHaloAndAWrittenGap) {
  const Layout layout{{rt::mt::padded(6, {3, 3}, 1, true), rt::mt::block(3, 1)}};  // rank 0: a halo row above
  const rt::Dtype& dt = rt::dtypes()[1];
  const rt::Oracle oracle(layout, 0);
  rt::Section s;
  rt::Report setup;
  ASSERT_TRUE(rt::make_painted(s, rt::Storage::gapped, dt, layout, 0, true, rt::kSentinel, "", setup)) << setup.text();
  const std::vector<unsigned char> right = s.image();
  auto caught = [&](const std::function<void(unsigned char* first_owned, unsigned char* halo)>& spoil) {
    s.restore(right);
    unsigned char *owned = nullptr, *halo = nullptr;
    s.for_each([&](const std::vector<int64_t>& local, unsigned char* element) {
      unsigned char*& which = oracle.linear(local) ? owned : halo;
      if (which == nullptr) which = element;
    });
    spoil(owned, halo);
    rt::Report report;
    rt::expect_image(s, right, dt, "spoiled", report);
    return !report.ok();
  };
  EXPECT_FALSE(caught([](unsigned char*, unsigned char*) {}));
  EXPECT_TRUE(caught([&](unsigned char* owned, unsigned char*) { rt::store(dt, rt::kSentinel, owned); }));
  EXPECT_TRUE(caught([&](unsigned char*, unsigned char* halo) { rt::store(dt, 5, halo); }));
  EXPECT_TRUE(caught([&](unsigned char* owned, unsigned char*) { owned[dt.bytes] ^= 1; }));  // the gap after it
}

// ---- refusals ----

const gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};

struct Map {
  rt::MapHandle handle;
  explicit Map(const Layout& layout) {
    const std::vector<gdap_dim> dims = layout.all_dims();
    EXPECT_EQ(gdap_map_create(&handle.map, layout.nranks(), layout.ndim(), dims.data()), GDAP_SUCCESS)
        << gdap_last_error();
  }
  operator const gdap_map*() const { return handle.map; }
};

// Plan creation fails, `*out` untouched, and the message names what differs.
void expect_plan_refused(const gdap_map* src, const gdap_map* dst, gdap_dtype dtype, int64_t rank, gdap_status want,
                         const std::vector<std::string>& names) {
  gdap_plan* const untouched = reinterpret_cast<gdap_plan*>(&want);
  gdap_plan* plan = untouched;
  EXPECT_EQ(gdap_plan_create(&plan, src, dst, dtype, rank), want) << gdap_last_error();
  for (const std::string& name : names) EXPECT_TRUE(contains(gdap_last_error(), name)) << gdap_last_error();
  EXPECT_EQ(plan, untouched);
}

TEST(PlanRefusals, GlobalShapesDiffer) {
  const Map a(Layout{{rt::mt::block(23, 2)}}), b(Layout{{rt::mt::cyclic(24, 2, 1)}});
  const Map a2(Layout{{rt::mt::block(23, 2), rt::mt::block(4, 1)}});
  expect_plan_refused(a, b, kF64, 0, GDAP_ERR_INVALID_ARGUMENT, {"dimension 0", "23", "24"});
  expect_plan_refused(a, a2, kF64, 0, GDAP_ERR_INVALID_ARGUMENT, {"1 dimensions", "has 2"});
}

TEST(PlanRefusals, DtypeAndRankOutOfRange) {
  const Map a(Layout{{rt::mt::block(23, 2)}}), b(Layout{{rt::mt::cyclic(23, 3, 2)}});
  expect_plan_refused(a, b, gdap_dtype{GDAP_DTYPE_INT, 12, 1}, 0, GDAP_ERR_UNSUPPORTED, {"12 bits"});
  expect_plan_refused(a, b, kF64, 3, GDAP_ERR_OUT_OF_RANGE, {"rank 3", "[0, 3)"});
  expect_plan_refused(a, b, kF64, -1, GDAP_ERR_OUT_OF_RANGE, {"rank -1"});
}

// One rank's bad argument: every rank fails, nothing moves, and the group still works after.
// Plans in turn on one communicator (alternating_check.hpp): two (forward and back) and four are
// each built once; five evict one another, and every call is right element by element.
class PlansInTurn : public ::testing::TestWithParam<std::tuple<size_t, int64_t>> {};

TEST_P(PlansInTurn, EachKeptProgramIsBuiltOnceAndEveryCallIsRight) {
  const auto [programs, n] = GetParam();
  Group group(n);
  std::vector<rt::Report> reports(static_cast<size_t>(n));
  on_threads(n, [&](int64_t r) {
    rt::run_alternating(group[r], r, n, programs, 5, "group", reports[static_cast<size_t>(r)]);
  });
  expect_clean(reports);
  for (const rt::Report& report : reports) EXPECT_EQ(report.moves, 5 * static_cast<int64_t>(programs));
}

INSTANTIATE_TEST_SUITE_P(Group, PlansInTurn, ::testing::Combine(::testing::Values(2, 4, 5), ::testing::Values(2, 4)));

class OneRankSpoils : public ::testing::TestWithParam<std::tuple<rt::Spoil, int64_t>> {};

TEST_P(OneRankSpoils, EveryRankFailsAndNothingMoves) {
  const auto [spoil, n] = GetParam();
  Group group(n);
  std::vector<rt::Report> reports(static_cast<size_t>(n));
  on_threads(n, [&](int64_t r) {
    rt::Report& report = reports[static_cast<size_t>(r)];
    rt::run_refused(group[r], r, n, spoil, n / 2, report);
    rt::run_case(table(n)[0], 0, r, {group[r], group[r], group[r]}, report);
  });
  expect_clean(reports);
}

INSTANTIATE_TEST_SUITE_P(Group, OneRankSpoils,
                         ::testing::Combine(::testing::ValuesIn(rt::kSpoils), ::testing::Values(2, 4)),
                         [](const ::testing::TestParamInfo<std::tuple<rt::Spoil, int64_t>>& p) {
                           return rt::cat(rt::spoil_name(std::get<0>(p.param)), "_N", std::get<1>(p.param));
                         });

// Plans made for a group of 4 used on a group of 2: every rank's own check fails, so each reports
// its own error (none is GDAP_ERR_REMOTE).
TEST(GroupRefusals, PlanForAnotherGroupSize) {
  const Layout src{{rt::mt::block(23, 4)}}, dst{{rt::mt::cyclic(23, 4, 1)}};
  const Map src_map(src), dst_map(dst);
  Group group(2);
  std::vector<gdap_status> status(2);
  std::vector<std::string> text(2);
  on_threads(2, [&](int64_t r) {
    rt::PlanHandle plan;
    gdap_plan_create(&plan.plan, src_map, dst_map, kF64, r);
    rt::Report unused;
    rt::Section a, b;
    rt::make_painted(a, rt::Storage::created, rt::dtypes()[0], src, r, true, rt::kPoison, "src", unused);
    rt::make_painted(b, rt::Storage::created, rt::dtypes()[0], dst, r, false, rt::kSentinel, "dst", unused);
    status[static_cast<size_t>(r)] = gdap_redistribute(group[r], plan.plan, a.array(), b.array());
    text[static_cast<size_t>(r)] = gdap_last_error();
  });
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(status[r], GDAP_ERR_INVALID_ARGUMENT) << text[r];
    EXPECT_TRUE(contains(text[r], "for 4 ranks but the communicator has 2")) << text[r];
  }
}

// A global view no rank may accept: the same GDAP_ERR_PROTOCOL and the same text on every rank.
void expect_view_refused_alike(int64_t n, bool overlap, int64_t bad) {
  Group group(n);
  std::vector<rt::Report> reports(static_cast<size_t>(n));
  std::vector<std::string> texts(static_cast<size_t>(n));
  on_threads(n, [&](int64_t r) {
    texts[static_cast<size_t>(r)] = rt::run_bad_view(group[r], r, n, overlap, bad, reports[static_cast<size_t>(r)]);
  });
  expect_clean(reports);
  for (const std::string& text : texts) EXPECT_EQ(text, texts[0]);
}

TEST(CollectiveView, OverlappingBlocksRefusedAlikeOnEveryRank) {
  expect_view_refused_alike(2, true, 1);
  expect_view_refused_alike(4, true, 3);
}

TEST(CollectiveView, DimensionCountsThatDifferRefusedAlikeOnEveryRank) {
  expect_view_refused_alike(2, false, 1);
  expect_view_refused_alike(4, false, 2);
}

TEST(CollectiveView, UnusableArgumentsOnOneRank) {
  for (const int64_t bad : {0, 2}) {
    Group group(3);
    std::vector<rt::Report> reports(3);
    on_threads(3, [&](int64_t r) { rt::run_unusable_view(group[r], r, 3, bad, reports[static_cast<size_t>(r)]); });
    expect_clean(reports);
  }
}

// ---- a rank that never comes ----

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

TEST(GroupTimeout, AMissingRankTimesOutAndBreaksTheGroup) {
  constexpr int64_t n = 3, missing = 2;
  const Layout src{{rt::mt::block(23, n)}}, dst{{rt::mt::cyclic(23, n, 1)}};
  const Map src_map(src), dst_map(dst);
  Group group(n);
  std::vector<gdap_status> status(n, GDAP_SUCCESS);
  std::vector<std::string> text(n);
  std::vector<double> took(n);
  std::vector<rt::Report> reports(n);
  on_threads(missing, [&](int64_t r) {
    const auto i = static_cast<size_t>(r);
    gdap_comm_set_timeout(group[r], 0.5);
    rt::PlanHandle plan;
    gdap_plan_create(&plan.plan, src_map, dst_map, kF64, r);
    rt::Section a, b;
    rt::make_painted(a, rt::Storage::created, rt::dtypes()[0], src, r, true, rt::kPoison, "src", reports[i]);
    rt::make_painted(b, rt::Storage::created, rt::dtypes()[0], dst, r, false, rt::kSentinel, "dst", reports[i]);
    const std::vector<unsigned char> before = b.image();
    const auto start = Clock::now();
    status[i] = gdap_redistribute(group[r], plan.plan, a.array(), b.array());
    text[i] = gdap_last_error();
    took[i] = seconds_since(start);
    rt::expect_image(b, before, rt::dtypes()[0], "destination after the timeout", reports[i]);
  });
  expect_clean(reports);
  for (int64_t r = 0; r < missing; ++r) {
    EXPECT_EQ(status[r], GDAP_ERR_TIMEOUT) << text[r];
    EXPECT_TRUE(contains(text[r], rt::cat("rank ", r))) << text[r];
    EXPECT_LT(took[r], 5.0) << "a 0.5 s timeout";
  }
  // Whoever comes later, the missing rank included (whose own timeout is 20 s), fails at once
  // instead of waiting.
  for (int64_t r : {missing, int64_t{0}}) {
    const auto start = Clock::now();
    EXPECT_EQ(gdap_comm_barrier(group[r]), GDAP_ERR_TIMEOUT);
    EXPECT_TRUE(contains(gdap_last_error(), "broken")) << gdap_last_error();
    EXPECT_LT(seconds_since(start), 5.0);
  }
}

TEST(GroupTimeout, AMissingRankInCollectiveMapCreation) {
  Group group(2);
  gdap_comm_set_timeout(group[0], 0.3);
  const std::vector<gdap_dim> dims = rt::rank_dims(Layout{{rt::mt::block(23, 2)}}, 0);
  gdap_map* const untouched = reinterpret_cast<gdap_map*>(&group);
  gdap_map* out = untouched;
  EXPECT_EQ(gdap_map_create_collective(&out, group[0], 1, dims.data()), GDAP_ERR_TIMEOUT);
  EXPECT_TRUE(contains(gdap_last_error(), "1 of 2 ranks")) << gdap_last_error();
  EXPECT_EQ(out, untouched);
}

TEST(GroupTimeout, OnlyPositiveTimeouts) {
  Group group(1);
  for (double bad : {0.0, -1.0, std::nan("")}) {
    EXPECT_EQ(gdap_comm_set_timeout(group[0], bad), GDAP_ERR_INVALID_ARGUMENT) << bad;
  }
  EXPECT_EQ(gdap_comm_set_timeout(nullptr, 1.0), GDAP_ERR_INVALID_ARGUMENT);
}

TEST(GroupTimeout, AnInfiniteTimeoutWaitsForALateRank) {
  // INFINITY (and years) must wait without a limit, not overflow the clock into an instant timeout.
  Group group(2);
  for (double forever : {static_cast<double>(INFINITY), 1e300}) {
    gdap_comm_set_timeout(group[0], forever);
    gdap_status first = GDAP_ERR_INTERNAL;
    std::thread early([&] { first = gdap_comm_barrier(group[0]); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(gdap_comm_barrier(group[1]), GDAP_SUCCESS) << gdap_last_error();
    early.join();
    EXPECT_EQ(first, GDAP_SUCCESS) << forever;
  }
}

TEST(GroupBasics, RankSizeKind) {
  Group group(3);
  for (int64_t r = 0; r < 3; ++r) {
    int64_t rank = -1, size = -1;
    gdap_comm_kind kind{};
    ASSERT_EQ(gdap_comm_rank(&rank, group[r]), GDAP_SUCCESS);
    ASSERT_EQ(gdap_comm_size(&size, group[r]), GDAP_SUCCESS);
    ASSERT_EQ(gdap_comm_kind_get(&kind, group[r]), GDAP_SUCCESS);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(size, 3);
    EXPECT_EQ(kind, GDAP_COMM_GROUP);
  }
  gdap_comm* comms[1] = {nullptr};
  EXPECT_EQ(gdap_comm_create_group(comms, 0), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(comms[0], nullptr);
}

}  // namespace
