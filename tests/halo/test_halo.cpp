// gdap_halo_exchange through the in-process group (one thread per rank), element by element
// against the serial reference of halo_check.hpp: the table of 1-d to 3-d cases on 1 to 4 ranks.
// Then the counts of a hand-checked case, and the refusals: nothing to exchange into, a width on
// a dimension that is not 'b', a wrong dtype, shape or rank on one rank (every rank fails and no
// padding changes anywhere).
#include "halo/halo_check.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/group.hpp"

#include <functional>
#include <map>
#include <thread>

namespace {

namespace ht = halo_test;

using gdap_test::Group;
using gdap_test::on_threads;

// A case's map, per-rank halos and painted sections wrapped as arrays.
struct Exchange {
  const ht::Case& c;
  gdap_map* map = nullptr;
  std::vector<gdap_halo*> halos;
  std::vector<ht::Section> sections;
  std::vector<gdap_array*> arrays;

  explicit Exchange(const ht::Case& k, gdap_dtype dtype = ht::float64()) : c(k) {
    const std::vector<gdap_dim> all = ht::all_dims(c);
    EXPECT_EQ(gdap_map_create(&map, c.nranks(), static_cast<int64_t>(c.axes.size()), all.data()), GDAP_SUCCESS)
        << c.name << ": " << gdap_last_error();
    gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
    options.corners = c.corners ? 1 : 0;
    options.widths = c.caps.empty() ? nullptr : c.caps.data();
    for (int64_t r = 0; r < c.nranks(); ++r) {
      gdap_halo* h = nullptr;
      EXPECT_EQ(gdap_halo_create(&h, map, dtype, r, &options), GDAP_SUCCESS) << c.name << ": " << gdap_last_error();
      halos.push_back(h);
      sections.push_back(ht::make_section(c, map, r));
    }
    for (ht::Section& s : sections) {
      gdap_array* a = nullptr;
      EXPECT_EQ(gdap_array_wrap(&a, s.data.data(), ht::float64(), gdap_device{GDAP_DEVICE_CPU, 0}, s.strides.data(),
                                s.dims.data(), static_cast<int64_t>(s.dims.size())),
                GDAP_SUCCESS)
          << c.name << ": " << gdap_last_error();
      arrays.push_back(a);
    }
  }
  ~Exchange() {
    for (gdap_array* a : arrays) gdap_array_destroy(a);
    for (gdap_halo* h : halos) gdap_halo_destroy(h);
    gdap_map_destroy(map);
  }

  void expect_sections(bool touched) const {
    for (int64_t r = 0; r < c.nranks(); ++r) {
      for (const std::string& f : ht::check(c, map, r, sections[static_cast<size_t>(r)], touched)) ADD_FAILURE() << f;
    }
  }
};

struct Entry {
  int64_t nranks;
  size_t index;
};

const std::vector<ht::Case>& table(int64_t n) {
  static std::map<int64_t, std::vector<ht::Case>> tables;
  auto it = tables.find(n);
  if (it == tables.end()) it = tables.emplace(n, ht::cases(n)).first;
  return it->second;
}

std::vector<Entry> entries() {
  std::vector<Entry> out;
  for (int64_t n : {1, 2, 3, 4}) {
    for (size_t i = 0; i < table(n).size(); ++i) out.push_back({n, i});
  }
  return out;
}

class Table : public ::testing::TestWithParam<Entry> {};

// Rule: every communication padding cell (within caps, corners on request) gets its owner's value;
// owned elements and boundary padding are untouched; run twice, the same result (cached programs).
TEST_P(Table, EveryPaddingCellHoldsItsOwnersValue) {
  const ht::Case& c = table(GetParam().nranks)[GetParam().index];
  Exchange s(c);
  Group group(c.nranks());
  for (int round = 0; round < 2; ++round) {
    std::vector<gdap_status> status(static_cast<size_t>(c.nranks()));
    on_threads(c.nranks(), [&](int64_t r) {
      status[static_cast<size_t>(r)] = gdap_halo_exchange(group[r], s.halos[static_cast<size_t>(r)], s.arrays[static_cast<size_t>(r)]);
    });
    for (gdap_status st : status) ASSERT_EQ(st, GDAP_SUCCESS) << c.name;
    s.expect_sections(true);
  }
}

// Rule: a persistent exchange (gdap_halo_exchange_init, then gdap_exchange_start) fills the same
// cells as gdap_halo_exchange, at every start.
TEST_P(Table, PersistentExchangeFillsTheSameCells) {
  const ht::Case& c = table(GetParam().nranks)[GetParam().index];
  Exchange s(c);
  Group group(c.nranks());
  std::vector<gdap_exchange*> bound(static_cast<size_t>(c.nranks()), nullptr);
  std::vector<gdap_status> status(bound.size());
  on_threads(c.nranks(), [&](int64_t r) {
    const auto k = static_cast<size_t>(r);
    status[k] = gdap_halo_exchange_init(&bound[k], group[r], s.halos[k], s.arrays[k]);
  });
  for (gdap_status st : status) ASSERT_EQ(st, GDAP_SUCCESS) << c.name;
  s.expect_sections(false);  // binding moves nothing
  for (int round = 0; round < 2; ++round) {
    on_threads(c.nranks(), [&](int64_t r) { status[static_cast<size_t>(r)] = gdap_exchange_start(bound[static_cast<size_t>(r)]); });
    for (gdap_status st : status) ASSERT_EQ(st, GDAP_SUCCESS) << c.name;
    s.expect_sections(true);
  }
  for (gdap_exchange* e : bound) EXPECT_EQ(gdap_exchange_destroy(e), GDAP_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Group, Table, ::testing::ValuesIn(entries()), [](const ::testing::TestParamInfo<Entry>& p) {
  return "N" + std::to_string(p.param.nranks) + "_" + table(p.param.nranks)[p.param.index].name;
});

TEST(TableCoverage, EveryGroupSizeHasCases) {
  for (int64_t n : {1, 2, 3, 4}) EXPECT_FALSE(table(n).empty()) << n;
}

// Rule: stats count one message per neighbour rank and the bytes of the faces (2 ranks, 1-d,
// width 1: one float64 each way; periodic on one rank: copies onto itself, no messages).
TEST(Stats, CountMessagesAndBytes) {
  const ht::Case two{"two", {ht::b({5, 4}, 1)}};
  Exchange s(two);
  gdap_halo_stats st = GDAP_HALO_STATS_INIT;
  ASSERT_EQ(gdap_halo_stats_get(&st, s.halos[0]), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(st.rank, 0);
  EXPECT_EQ(st.nranks, 2);
  EXPECT_EQ(st.send_messages, 1);
  EXPECT_EQ(st.recv_messages, 1);
  EXPECT_EQ(st.send_bytes, 8);
  EXPECT_EQ(st.recv_bytes, 8);
  EXPECT_EQ(st.local_bytes, 0);
  const ht::Case one{"one", {ht::b({7}, 2, true, 2), ht::b({3}, 1, true, 1)}};
  Exchange t(one);
  ASSERT_EQ(gdap_halo_stats_get(&st, t.halos[0]), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(st.send_messages + st.recv_messages + st.send_bytes, 0);
  EXPECT_EQ(st.local_bytes, (11 * 5 - 7 * 3) * 8);  // the boundary frame of an 11 x 5 section around 7 x 3
  gdap_halo_stats small = GDAP_HALO_STATS_INIT;
  small.struct_size = 8;
  EXPECT_EQ(gdap_halo_stats_get(&small, t.halos[0]), GDAP_ERR_INVALID_ARGUMENT);
}

// A map of `all` (nranks x ndim dictionaries) whose halo gdap_halo_create refuses for rank 0 with
// GDAP_ERR_INVALID_ARGUMENT and a message holding `words`, writing no halo.
void expect_no_halo(const std::vector<gdap_dim>& all, int64_t nranks, int64_t ndim, const std::string& words) {
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, nranks, ndim, all.data()), GDAP_SUCCESS) << gdap_last_error();
  gdap_halo* h = nullptr;
  EXPECT_EQ(gdap_halo_create(&h, map, ht::float64(), 0, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find(words), std::string::npos) << gdap_last_error();
  EXPECT_EQ(h, nullptr);
  gdap_map_destroy(map);
}

// Rule: a map without padding to fill has nothing to exchange into.
TEST(Refusals, NoPaddingToExchangeInto) {
  expect_no_halo(ht::all_dims(ht::Case{"flat", {ht::b({3, 3}, 0)}}), 2, 1, "no rank of the map has padding to exchange into");
  // Boundary padding of a dimension that is not periodic is never filled either.
  expect_no_halo(ht::all_dims(ht::Case{"boundary", {ht::b({3, 3}, 0, false, 2)}}), 2, 1, "no rank of the map has padding");
  // Caps of 0 everywhere leave nothing either.
  const ht::Case padded{"padded", {ht::b({3, 3}, 1)}};
  const std::vector<gdap_dim> pd = ht::all_dims(padded);
  gdap_map* pmap = nullptr;
  ASSERT_EQ(gdap_map_create(&pmap, 2, 1, pd.data()), GDAP_SUCCESS) << gdap_last_error();
  const int64_t zero = 0;
  gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
  options.widths = &zero;
  gdap_halo* h = nullptr;
  EXPECT_EQ(gdap_halo_create(&h, pmap, ht::float64(), 0, &options), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_halo_create(&h, pmap, ht::float64(), 2, nullptr), GDAP_ERR_OUT_OF_RANGE);
  gdap_map_destroy(pmap);
}

// Rule: a periodic halo fills boundary padding from the interior's far end, which must be at least as
// wide; and from one period, so the ranks at one edge must give the same boundary padding (the
// protocol lets edge processes differ, a period cannot).
TEST(Refusals, PeriodicBoundaryPaddingWithoutOnePeriod) {
  // size 5: boundary padding 2 and 2 around 1 interior cell
  expect_no_halo(ht::all_dims(ht::Case{"narrow", {ht::b({1}, 0, true, 2)}}), 1, 1, "around an interior of 1 (size 5)");
  // Ranks 0 and 1 share dimension 0's one grid coordinate; rank 1 gives boundary padding 2, not 1.
  std::vector<gdap_dim> all = ht::all_dims(ht::Case{"k", {ht::b({4}, 0, true, 1), ht::b({3, 3}, 1)}});
  ASSERT_EQ(gdap_dim_set_padding(&all[2], 2, 2), GDAP_SUCCESS);
  expect_no_halo(all, 2, 2, "rank 1, dimension 0 ('b'): periodic, with boundary padding (2, 2)");
}

// Rule: only 'b' dimensions have padding; a width asked on a cyclic one is refused.
TEST(Refusals, WidthOnANonBlockDimension) {
  const ht::Case k{"bc", {ht::b({4, 3}, 1), ht::c(5)}};
  const std::vector<gdap_dim> all = ht::all_dims(k);
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, 4, 2, all.data()), GDAP_SUCCESS) << gdap_last_error();
  const int64_t widths[2] = {1, 1};
  gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
  options.widths = widths;
  gdap_halo* h = nullptr;
  EXPECT_EQ(gdap_halo_create(&h, map, ht::float64(), 0, &options), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("dimension 1 ('c')"), std::string::npos) << gdap_last_error();
  const int64_t negative[2] = {-1, 0};
  options.widths = negative;
  EXPECT_EQ(gdap_halo_create(&h, map, ht::float64(), 0, &options), GDAP_ERR_INVALID_ARGUMENT);
  gdap_map_destroy(map);
}

// Runs one exchange where rank `bad` passes `array` (and halo `halo`) instead of its own; every
// rank must fail (the bad one with `status`, the others GDAP_ERR_REMOTE) and no padding change.
void expect_refused(Exchange& s, int64_t bad, gdap_array* array, const gdap_halo* halo, gdap_status status,
                    const std::string& words) {
  Group group(s.c.nranks());
  std::vector<gdap_status> got(static_cast<size_t>(s.c.nranks()));
  std::vector<std::string> errors(got.size());
  on_threads(s.c.nranks(), [&](int64_t r) {
    const auto k = static_cast<size_t>(r);
    got[k] = gdap_halo_exchange(group[r], r == bad ? halo : s.halos[k], r == bad ? array : s.arrays[k]);
    errors[k] = gdap_last_error();
  });
  for (size_t r = 0; r < got.size(); ++r) {
    EXPECT_EQ(got[r], static_cast<int64_t>(r) == bad ? status : GDAP_ERR_REMOTE) << "rank " << r << ": " << errors[r];
    EXPECT_NE(errors[r].find(words), std::string::npos) << "rank " << r << ": " << errors[r];
  }
  s.expect_sections(false);
}

// Rule: a dtype other than the halo's is refused on every rank, and no data moves.
TEST(Refusals, DtypeMismatchOnOneRank) {
  const ht::Case k{"k", {ht::b({4, 3, 5}, 1, true)}};
  Exchange s(k);
  gdap_halo* h32 = nullptr;
  ASSERT_EQ(gdap_halo_create(&h32, s.map, gdap_dtype{GDAP_DTYPE_FLOAT, 32, 1}, 1, nullptr), GDAP_SUCCESS);
  expect_refused(s, 1, s.arrays[1], h32, GDAP_ERR_INVALID_ARGUMENT, "dtype");
  gdap_halo_destroy(h32);
}

// Rule: an array that is not the map's section of this rank is refused on every rank.
TEST(Refusals, ArrayOfAnotherRank) {
  const ht::Case k{"k", {ht::b({4, 3, 5}, 1, true)}};
  Exchange s(k);
  expect_refused(s, 0, s.arrays[2], s.halos[0], GDAP_ERR_INVALID_ARGUMENT, "shape");
  // Same shape, other place: rank 0's and rank 2's sections both hold 5 elements.
  const ht::Case even{"even", {ht::b({4, 4, 4}, 1, true)}};
  Exchange e(even);
  expect_refused(e, 0, e.arrays[2], e.halos[0], GDAP_ERR_INVALID_ARGUMENT, "differs from the halo's map");
}

// Rule: a persistent exchange is refused as gdap_halo_exchange is, on every rank, at its init: no
// exchange is made and no data moves. A NULL exchange is refused at start.
TEST(Refusals, PersistentExchangeRefusedAtInit) {
  const ht::Case k{"k", {ht::b({4, 3, 5}, 1, true)}};
  Exchange s(k);
  gdap_halo* h32 = nullptr;
  ASSERT_EQ(gdap_halo_create(&h32, s.map, gdap_dtype{GDAP_DTYPE_FLOAT, 32, 1}, 1, nullptr), GDAP_SUCCESS);
  Group group(3);
  std::vector<gdap_exchange*> bound(3, nullptr);
  std::vector<gdap_status> got(3);
  std::vector<std::string> errors(3);
  on_threads(3, [&](int64_t r) {
    const auto i = static_cast<size_t>(r);
    got[i] = gdap_halo_exchange_init(&bound[i], group[r], r == 1 ? h32 : s.halos[i], s.arrays[i]);
    errors[i] = gdap_last_error();
  });
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(got[r], r == 1 ? GDAP_ERR_INVALID_ARGUMENT : GDAP_ERR_REMOTE) << errors[r];
    EXPECT_NE(errors[r].find("dtype"), std::string::npos) << errors[r];
    EXPECT_EQ(bound[r], nullptr);
  }
  s.expect_sections(false);
  gdap_halo_destroy(h32);
  EXPECT_EQ(gdap_exchange_start(nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("exchange"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_exchange_destroy(nullptr), GDAP_SUCCESS);
}

// Rule: a halo planned for another rank, a NULL array, or a NULL halo is refused on every rank.
TEST(Refusals, WrongRankNullArrayNullHalo) {
  const ht::Case k{"k", {ht::b({4, 3}, 1, true)}};
  Exchange s(k);
  expect_refused(s, 1, s.arrays[1], s.halos[0], GDAP_ERR_INVALID_ARGUMENT, "rank");
  expect_refused(s, 0, nullptr, s.halos[0], GDAP_ERR_INVALID_ARGUMENT, "NULL");
  expect_refused(s, 1, s.arrays[1], nullptr, GDAP_ERR_INVALID_ARGUMENT, "NULL");
}

}  // namespace
