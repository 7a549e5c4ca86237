// gdap_gemm through the in-process group (one thread per rank), element by element against the
// serial reference of gemm_check.hpp: the table of grids (1x1, 2x2, 1x3, 2x3), layouts (even,
// uneven, empty sections, block-cyclic 2 to 64, unstructured, mismatched grids that are
// redistributed), dtypes and scalars; then the statistics and the refusals (shape, dtype, grid,
// aliasing, tensor-core modes), each leaving every section as it was.
#include "gemm/gemm_check.hpp"

#include "comm/comm.hpp"  // gdap_comm::call_meetings: how often the last call met its peers

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <thread>

namespace {

namespace gt = gemm_test;

void on_threads(int64_t n, const std::function<void(int64_t)>& body) {
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

const gdap_device kHost{GDAP_DEVICE_CPU, 0};

// One case on an in-process group: maps, sections, arrays; run() multiplies on every rank.
struct GemmRun {
  const gt::Case& c;
  int64_t n;
  std::vector<gdap_comm*> comms;
  gdap_map* maps[3] = {};
  std::vector<gt::Section> sa, sb, sc;
  std::vector<std::vector<unsigned char>> ba, bb, bc;
  std::vector<gdap_array*> aa, ab, ac;
  std::vector<gdap_gemm*> gemms;
  std::vector<gdap_status> created, executed;
  std::vector<std::string> errors;
  bool nan_c;

  explicit GemmRun(const gt::Case& k, gdap_gemm_options options = GDAP_GEMM_OPTIONS_INIT) : c(k), n(k.nranks()) {
    nan_c = c.beta == 0;
    comms.assign(static_cast<size_t>(n), nullptr);
    EXPECT_EQ(gdap_comm_create_group(comms.data(), n), GDAP_SUCCESS) << gdap_last_error();
    for (gdap_comm* cm : comms) gdap_comm_set_timeout(cm, 30);
    const auto da = gt::all_dims(c.a, c.m, c.k), db = gt::all_dims(c.b, c.k, c.n), dc = gt::all_dims(c.c, c.m, c.n);
    EXPECT_EQ(gdap_map_create(&maps[0], c.a.rows * c.a.cols, 2, da.data()), GDAP_SUCCESS) << c.name << gdap_last_error();
    EXPECT_EQ(gdap_map_create(&maps[1], c.b.rows * c.b.cols, 2, db.data()), GDAP_SUCCESS) << c.name << gdap_last_error();
    EXPECT_EQ(gdap_map_create(&maps[2], n, 2, dc.data()), GDAP_SUCCESS) << c.name << gdap_last_error();
    for (int64_t r = 0; r < n; ++r) {
      sa.push_back(gt::make_section(da, r, c.strided, 0, gt::a_value));
      sb.push_back(gt::make_section(db, r, false, 0, gt::b_value));
      sc.push_back(gt::make_section(dc, r, false, c.strided ? 3 : 0, gt::c_value, nan_c));
    }
    for (int64_t r = 0; r < n; ++r) {
      ba.push_back(gt::to_bytes(sa[r], c.bits));
      bb.push_back(gt::to_bytes(sb[r], c.bits));
      bc.push_back(gt::to_bytes(sc[r], c.bits));
    }
    for (int64_t r = 0; r < n; ++r) {
      aa.push_back(wrap(ba[r], sa[r]));
      ab.push_back(wrap(bb[r], sb[r]));
      ac.push_back(wrap(bc[r], sc[r]));
    }
    gemms.assign(static_cast<size_t>(n), nullptr);
    created.assign(static_cast<size_t>(n), GDAP_SUCCESS);
    executed.assign(static_cast<size_t>(n), GDAP_SUCCESS);
    errors.assign(static_cast<size_t>(n), "");
    on_threads(n, [&](int64_t r) {
      created[r] = gdap_gemm_create(&gemms[r], comms[r], maps[0], maps[1], maps[2], gt::dtype_of(c.bits), &options);
      if (created[r] != GDAP_SUCCESS) errors[r] = gdap_last_error();
    });
  }
  gdap_array* wrap(std::vector<unsigned char>& bytes, gt::Section& s) {
    gdap_array* x = nullptr;
    EXPECT_EQ(gdap_array_wrap(&x, bytes.data(), gt::dtype_of(c.bits), kHost, s.strides.data(), s.dims, 2), GDAP_SUCCESS)
        << c.name << ": " << gdap_last_error();
    return x;
  }
  // Runs every rank's execute (with `a_of(r)` as rank r's A, default its own).
  void run(const std::function<gdap_array*(int64_t)>& a_of = nullptr) {
    on_threads(n, [&](int64_t r) {
      executed[r] = gdap_gemm_execute(comms[r], gemms[r], c.alpha, a_of ? a_of(r) : aa[r], ab[r], c.beta, ac[r]);
      if (executed[r] != GDAP_SUCCESS) errors[r] = gdap_last_error();
    });
  }
  void expect_result(bool changed) const {
    for (int64_t r = 0; r < n; ++r) {
      for (const auto& f : gt::check_c(c, sc[r], bc[r], nan_c, changed)) ADD_FAILURE() << "rank " << r << ": " << f;
      for (const auto& f : gt::check_same(c.name + ": A", sa[r], ba[r], c.bits)) ADD_FAILURE() << "rank " << r << ": " << f;
      for (const auto& f : gt::check_same(c.name + ": B", sb[r], bb[r], c.bits)) ADD_FAILURE() << "rank " << r << ": " << f;
    }
  }
  ~GemmRun() {
    for (gdap_gemm* g : gemms) gdap_gemm_destroy(g);
    for (auto* v : {&aa, &ab, &ac}) {
      for (gdap_array* x : *v) gdap_array_destroy(x);
    }
    for (gdap_map* m : maps) gdap_map_destroy(m);
    for (gdap_comm* cm : comms) gdap_comm_destroy(cm);
  }
};

gt::Layout grid(int64_t rows, int64_t cols, gt::Axis d0 = {}, gt::Axis d1 = {}) { return gt::Layout{rows, cols, d0, d1}; }
gt::Axis cyc(int64_t bs) { return gt::Axis{'c', bs}; }
const gt::Axis kUneven{'B', 1}, kEmpty{'E', 1}, kUnstructured{'u', 1};

std::vector<gt::Case> cases() {
  std::vector<gt::Case> out;
  // Rule: SUMMA on the caller's layout gives the serial product (grids 1x1, 2x2, 1x3, 2x3).
  out.push_back({"1x1 block f64", 5, 7, 3, grid(1, 1), grid(1, 1), grid(1, 1)});
  out.push_back({"2x2 block f64", 9, 10, 11, grid(2, 2), grid(2, 2), grid(2, 2), 64, 1.0, 1.0});
  out.push_back({"2x2 block-cyclic 2 f32", 13, 9, 17, grid(2, 2, cyc(2), cyc(2)), grid(2, 2, cyc(2), cyc(2)),
                 grid(2, 2, cyc(2), cyc(2)), 32, 0.5, -0.5});
  out.push_back({"1x3 block-cyclic 64 f64", 200, 130, 150, grid(1, 3, cyc(64), cyc(64)), grid(1, 3, cyc(64), cyc(64)),
                 grid(1, 3, cyc(64), cyc(64)), 64, -2.0, 1.0});
  out.push_back({"2x3 uneven blocks f64", 11, 14, 19, grid(2, 3, kUneven, kUneven), grid(2, 3, kUneven, kUneven),
                 grid(2, 3, kUneven, kUneven), 64, 1.0, 0.5});
  out.push_back({"2x3 block-cyclic 3 and 5 mixed f32", 20, 21, 23, grid(2, 3, cyc(3), cyc(5)), grid(2, 3, cyc(4), cyc(5)),
                 grid(2, 3, cyc(3), cyc(5)), 32});
  // Rule: empty local sections take part (they own no rows, columns or k).
  out.push_back({"2x2 empty sections f64", 6, 5, 7, grid(2, 2, kEmpty, kEmpty), grid(2, 2, kEmpty, kEmpty),
                 grid(2, 2, kEmpty, kEmpty), 64, 1.0, 1.0});
  // Rule: an operand that does not fit SUMMA is redistributed and the product is the same.
  out.push_back({"2x3 A on a 3x2 grid (redistributed) f64", 12, 10, 9, grid(3, 2), grid(2, 3, {}, cyc(3)),
                 grid(2, 3, {}, cyc(3)), 64, 1.0, -1.0});
  out.push_back({"2x2 B with other column blocks (redistributed) f32", 8, 12, 10, grid(2, 2), grid(2, 2, {}, kUneven),
                 grid(2, 2), 32});
  out.push_back({"2x2 C unstructured (redistributed) f64", 7, 9, 5, grid(2, 2), grid(2, 2),
                 grid(2, 2, kUnstructured, {}), 64, 1.0, 2.0});
  out.push_back({"1x3 A 3x1 block rows, C 1x3 (redistributed) f64", 9, 9, 9, grid(3, 1), grid(1, 3), grid(1, 3)});
  // Rule: alpha 0 and K 0 only scale C; beta 0 ignores C's old values (NaN here).
  out.push_back({"2x2 alpha 0 f64", 6, 6, 6, grid(2, 2), grid(2, 2), grid(2, 2), 64, 0.0, -0.5});
  out.push_back({"2x2 alpha 0 beta 0 f32", 6, 6, 6, grid(2, 2), grid(2, 2), grid(2, 2), 32, 0.0, 0.0});
  out.push_back({"2x2 K 0 f64", 5, 6, 0, grid(2, 2), grid(2, 2), grid(2, 2), 64, 1.0, 2.0});
  out.push_back({"2x2 beta 0 with NaN in C f64", 7, 8, 9, grid(2, 2), grid(2, 2), grid(2, 2), 64, 1.0, 0.0});
  // Rule: any strides on the host (A column-major, C with padded rows).
  gt::Case strided{"2x2 strided A and C f64", 9, 7, 8, grid(2, 2, cyc(2), {}), grid(2, 2, {}, {}), grid(2, 2, cyc(2), {}),
                   64, 1.0, 1.0};
  strided.strided = true;
  out.push_back(strided);
  return out;
}

TEST(Gemm, GroupCasesMatchTheSerialProduct) {
  for (const gt::Case& c : cases()) {
    for (int64_t width : {0, 2}) {  // default panels, and narrow ones (many SUMMA steps)
      gdap_gemm_options o = GDAP_GEMM_OPTIONS_INIT;
      o.panel_width = width;
      GemmRun run(c, o);
      for (int64_t r = 0; r < run.n; ++r) ASSERT_EQ(run.created[r], GDAP_SUCCESS) << c.name << ": " << run.errors[r];
      run.run();
      for (int64_t r = 0; r < run.n; ++r) EXPECT_EQ(run.executed[r], GDAP_SUCCESS) << c.name << ": " << run.errors[r];
      run.expect_result(true);
    }
  }
}

// Rule: a plan runs many times (buffers reused): a second execute with beta 1 adds the product again.
TEST(Gemm, PlanRunsRepeatedly) {
  gt::Case c{"2x2 twice", 8, 8, 8, grid(2, 2, cyc(3), cyc(2)), grid(2, 2, cyc(2), cyc(2)), grid(2, 2, cyc(3), cyc(2)), 64, 1.0,
             0.0};
  GemmRun run(c);
  run.run();
  run.expect_result(true);
  // Second time C holds A*B; with beta 1 it becomes 2 A*B.
  gt::Case twice = c;
  twice.alpha = 2.0;
  twice.beta = 0.0;
  on_threads(run.n, [&](int64_t r) { EXPECT_EQ(gdap_gemm_execute(run.comms[r], run.gemms[r], 1.0, run.aa[r], run.ab[r], 1.0, run.ac[r]), GDAP_SUCCESS) << gdap_last_error(); });
  for (int64_t r = 0; r < run.n; ++r) {
    for (const auto& f : gt::check_c(twice, run.sc[r], run.bc[r], false, true)) ADD_FAILURE() << f;
  }
}

TEST(Gemm, StatsSayWhatIsRedistributed) {
  gt::Case fits{"fits", 8, 8, 8, grid(2, 2, cyc(2), cyc(2)), grid(2, 2, cyc(2), cyc(2)), grid(2, 2, cyc(2), cyc(2))};
  GemmRun a(fits);
  gdap_gemm_stats s = GDAP_GEMM_STATS_INIT;
  ASSERT_EQ(gdap_gemm_stats_get(&s, a.gemms[0]), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(s.grid_rows, 2);
  EXPECT_EQ(s.grid_cols, 2);
  EXPECT_EQ(s.redistributed_a + s.redistributed_b + s.redistributed_c, 0);
  EXPECT_EQ(s.redistribute_bytes, 0);
  EXPECT_EQ(s.panels, 4);  // k blocks of 2
  EXPECT_EQ(s.local_m, 4);
  EXPECT_EQ(s.flops, 2 * 4 * 4 * 8);
  EXPECT_EQ(s.panel_bytes, 2 * (4 * 4 * 8));  // half of A's and B's panels come from a peer
  gt::Case moved{"moved", 8, 8, 8, grid(4, 1), grid(2, 2), grid(2, 2, kUnstructured, {})};
  GemmRun b(moved);
  ASSERT_EQ(gdap_gemm_stats_get(&s, b.gemms[1]), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(s.redistributed_a, 1);
  EXPECT_EQ(s.redistributed_b, 0);
  EXPECT_EQ(s.redistributed_c, 1);
  EXPECT_GT(s.redistribute_bytes, 0);
  gdap_gemm_stats small{8};
  EXPECT_EQ(gdap_gemm_stats_get(&small, b.gemms[0]), GDAP_ERR_INVALID_ARGUMENT);
}

// Rule: flops is 2 m n k, INT64_MAX where that exceeds int64 (M = N = 2^22, K = 2^21 is 2^66: it
// overflowed, undefined behaviour, and read 0). Making a plan allocates no section.
TEST(Gemm, FlopsSaturateAtInt64Max) {
  const int64_t m = int64_t{1} << 22, k = int64_t{1} << 21;
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS) << gdap_last_error();
  const auto whole = [](int64_t rows, int64_t cols) {
    gdap_dim dims[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
    gdap_dim_set_block(&dims[0], rows, 1, 0, 0, rows);
    gdap_dim_set_block(&dims[1], cols, 1, 0, 0, cols);
    gdap_map* map = nullptr;
    EXPECT_EQ(gdap_map_create(&map, 1, 2, dims), GDAP_SUCCESS) << gdap_last_error();
    return map;
  };
  gdap_map *a = whole(m, k), *b = whole(k, m), *c = whole(m, m);
  gdap_gemm* g = nullptr;
  ASSERT_EQ(gdap_gemm_create(&g, comm, a, b, c, gt::dtype_of(64), nullptr), GDAP_SUCCESS) << gdap_last_error();
  gdap_gemm_stats s = GDAP_GEMM_STATS_INIT;
  ASSERT_EQ(gdap_gemm_stats_get(&s, g), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(s.local_m, m);
  EXPECT_EQ(s.local_n, m);
  EXPECT_EQ(s.flops, INT64_MAX);
  gdap_gemm_destroy(g);
  for (gdap_map* map : {a, b, c}) gdap_map_destroy(map);
  gdap_comm_destroy(comm);
}

// Rule: bad requests fail on every rank with a message naming what is wrong; no data changes.
TEST(Gemm, ShapeMismatchNamesTheDimensions) {
  gt::Case c{"shapes", 4, 4, 4, grid(1, 2), grid(1, 2), grid(1, 2)};
  // Build B as 5 x 4 by hand: a GemmRun with k 4 for A and C but B's map of 5 rows.
  std::vector<gdap_comm*> comms(2);
  ASSERT_EQ(gdap_comm_create_group(comms.data(), 2), GDAP_SUCCESS);
  const auto da = gt::all_dims(c.a, 4, 4), db = gt::all_dims(c.b, 5, 4), dc = gt::all_dims(c.c, 4, 4);
  gdap_map *ma = nullptr, *mb = nullptr, *mc = nullptr;
  ASSERT_EQ(gdap_map_create(&ma, 2, 2, da.data()), GDAP_SUCCESS);
  ASSERT_EQ(gdap_map_create(&mb, 2, 2, db.data()), GDAP_SUCCESS);
  ASSERT_EQ(gdap_map_create(&mc, 2, 2, dc.data()), GDAP_SUCCESS);
  std::vector<std::string> msg(2);
  std::vector<gdap_status> st(2);
  on_threads(2, [&](int64_t r) {
    gdap_gemm* g = nullptr;
    st[r] = gdap_gemm_create(&g, comms[r], ma, mb, mc, gt::dtype_of(64), nullptr);
    msg[r] = gdap_last_error();
    gdap_gemm_destroy(g);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(st[r], GDAP_ERR_INVALID_ARGUMENT);
    EXPECT_NE(msg[r].find("A's dimension 1 (K = 4) != B's dimension 0 (5)"), std::string::npos) << msg[r];
  }
  // Incompatible grids: maps over 2 ranks, a communicator of 1.
  gdap_comm* one = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&one, 1), GDAP_SUCCESS);
  gdap_gemm* g = nullptr;
  EXPECT_EQ(gdap_gemm_create(&g, one, ma, ma, ma, gt::dtype_of(64), nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("incompatible grids"), std::string::npos) << gdap_last_error();
  // dtypes and modes gemm does not take.
  EXPECT_EQ(gdap_gemm_create(&g, one, ma, ma, ma, gdap_dtype{GDAP_DTYPE_INT, 32, 1}, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  gdap_gemm_destroy(g);
  gdap_comm_destroy(one);
  gdap_map_destroy(ma);
  gdap_map_destroy(mb);
  gdap_map_destroy(mc);
  for (gdap_comm* cm : comms) gdap_comm_destroy(cm);
}

TEST(Gemm, TensorCoreModesOnlyWhenTheyApply) {
  gt::Case c{"tf32 with f64", 4, 4, 4, grid(1, 1), grid(1, 1), grid(1, 1)};
  gdap_gemm_options o = GDAP_GEMM_OPTIONS_INIT;
  o.mode = GDAP_GEMM_TF32;
  {
    GemmRun run(c, o);
    EXPECT_EQ(run.created[0], GDAP_ERR_INVALID_ARGUMENT);
    EXPECT_NE(run.errors[0].find("float32 only"), std::string::npos) << run.errors[0];
  }
  c.bits = 32;
  c.name = "bf16 on the host";
  o.mode = GDAP_GEMM_BF16;
  GemmRun run(c, o);
  ASSERT_EQ(run.created[0], GDAP_SUCCESS) << run.errors[0];
  run.run();
  EXPECT_EQ(run.executed[0], GDAP_ERR_UNSUPPORTED);
  EXPECT_NE(run.errors[0].find("needs device sections"), std::string::npos) << run.errors[0];
  run.expect_result(false);
  o.mode = 7;
  GemmRun bad(c, o);
  EXPECT_EQ(bad.created[0], GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(bad.errors[0].find("mode 7"), std::string::npos) << bad.errors[0];
}

TEST(Gemm, DtypeMismatchOnOneRankFailsEveryRank) {
  gt::Case c{"dtype on rank 1", 6, 6, 6, grid(2, 2), grid(2, 2), grid(2, 2), 64, 1.0, 1.0};
  GemmRun run(c);
  std::vector<float> other(64, 1.0f);
  gdap_array* wrong = nullptr;
  ASSERT_EQ(gdap_array_wrap(&wrong, other.data(), gt::dtype_of(32), kHost, nullptr, run.sa[1].dims, 2), GDAP_SUCCESS);
  run.run([&](int64_t r) { return r == 1 ? wrong : run.aa[r]; });
  for (int64_t r = 0; r < run.n; ++r) {
    EXPECT_EQ(run.executed[r], r == 1 ? GDAP_ERR_INVALID_ARGUMENT : GDAP_ERR_REMOTE) << run.errors[r];
    EXPECT_NE(run.errors[r].find("dtype mismatch: A"), std::string::npos) << run.errors[r];
  }
  EXPECT_NE(run.errors[0].find("rank 1"), std::string::npos) << run.errors[0];
  run.expect_result(false);
  gdap_array_destroy(wrong);
}

TEST(Gemm, AliasingCWithAIsRefused) {
  gt::Case c{"C aliases A", 4, 4, 4, grid(1, 1), grid(1, 1), grid(1, 1), 64, 1.0, 1.0};
  GemmRun run(c);
  gdap_array* alias = nullptr;
  ASSERT_EQ(gdap_array_wrap(&alias, run.bc[0].data(), gt::dtype_of(64), kHost, nullptr, run.sa[0].dims, 2), GDAP_SUCCESS);
  run.run([&](int64_t) { return alias; });
  EXPECT_EQ(run.executed[0], GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(run.errors[0].find("C shares memory with A"), std::string::npos) << run.errors[0];
  run.expect_result(false);
  gdap_array_destroy(alias);
}

TEST(Gemm, ScalarsMustAgree) {
  gt::Case c{"alpha differs", 4, 4, 4, grid(1, 2), grid(1, 2), grid(1, 2), 64, 1.0, 1.0};
  GemmRun run(c);
  on_threads(2, [&](int64_t r) {
    run.executed[r] = gdap_gemm_execute(run.comms[r], run.gemms[r], r == 0 ? 1.0 : 2.0, run.aa[r], run.ab[r], 1.0, run.ac[r]);
    run.errors[r] = gdap_last_error();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(run.executed[r], GDAP_ERR_INVALID_ARGUMENT);
    EXPECT_NE(run.errors[r].find("rank 1 passed alpha 2"), std::string::npos) << run.errors[r];
  }
  run.expect_result(false);
}

// Hunt 16a #5: the handle check made an agreement of its own before execute's, a round trip more per
// call. An alpha-0 execute on a 1x1 grid moves no panels and redistributes nothing, so its one
// agreement is its only meeting (2 on the old code).
TEST(Gemm, ExecuteMakesOneAgreement) {
  gt::Case c{"1x1 alpha 0", 5, 7, 3, grid(1, 1), grid(1, 1), grid(1, 1), 64, 0.0, 1.0};
  GemmRun run(c);
  run.run();
  EXPECT_EQ(run.executed[0], GDAP_SUCCESS) << run.errors[0];
  EXPECT_EQ(run.comms[0]->call_meetings, 1) << "gdap_gemm_execute met its peers more than once";
  run.expect_result(true);
}

}  // namespace
