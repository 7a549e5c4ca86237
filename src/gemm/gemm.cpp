// The distributed GEMM's planning and execution (the C entry points are capi.cpp). Planning decides, from the three global maps,
// whether each operand fits SUMMA as it is (C 'b' or 'c' along both dimensions; A's rows laid out
// as C's rows and its columns 'b' or 'c' over C's grid columns; B likewise) or must be moved into
// a working layout by a redistribution plan, then lists the k-panels: the global k range cut at
// every run boundary of A's columns and of B's rows, and at the panel width. Execution checks and
// agrees, redistributes what needs it, and hands the working sections to the engine of their memory.
#include "gemm/gemm.hpp"

#include "array/layout.hpp"
#include "core/checked.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/versioned.hpp"
#include "exchange/engine.hpp"
#include "maps/dim_map.hpp"
#include "maps/layouts.hpp"
#include "maps/map.hpp"
#include "plan/planner.hpp"
#include "protocol/dim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gdap::gemm {

namespace {

using Dims = std::vector<std::vector<gdap_dim>>;  // [rank][dimension]

Dims dims_of(const gdap_map& map, int64_t nranks) {
  Dims all(static_cast<size_t>(nranks), std::vector<gdap_dim>(2));
  for (int64_t r = 0; r < nranks; ++r) {
    for (int64_t i = 0; i < 2; ++i) all[r][i] = map.dim(r, i);
  }
  return all;
}

bool summa_dim(const gdap_dim& d) {
  return d.dist_type == GDAP_DIST_CYCLIC ||
         (d.dist_type == GDAP_DIST_BLOCK && d.padding[0] == 0 && d.padding[1] == 0);
}

bool same_layout(const gdap_dim& x, const gdap_dim& y) {
  if (x.dist_type != y.dist_type || x.size != y.size || x.proc_grid_size != y.proc_grid_size ||
      x.proc_grid_rank != y.proc_grid_rank || x.start != y.start) {
    return false;
  }
  if (x.dist_type == GDAP_DIST_BLOCK) return x.stop == y.stop;
  return x.block_size == y.block_size;
}

// Builds a working map from every rank's two dictionaries.
std::unique_ptr<gdap_map> make_map(const Dims& dims) {
  std::vector<gdap_dim> flat;
  for (const auto& r : dims) flat.insert(flat.end(), r.begin(), r.end());
  return std::make_unique<gdap_map>(static_cast<int64_t>(dims.size()), 2, flat.data());
}

int64_t plan_bytes(const gdap_plan& plan) { return plan.stats.send_bytes + plan.stats.recv_bytes; }

// Moves operand `op` from the caller's `user` map into the working dictionaries `work`.
void make_working(Operand& op, const gdap_map& user, const Dims& work, gdap_dtype dtype, int64_t rank, bool back) {
  op.work = make_map(work);
  op.work_dims = work[static_cast<size_t>(rank)];
  op.in = plan::make_plan(user, *op.work, dtype, rank);
  op.bytes = plan_bytes(*op.in);
  if (back) {
    op.out = plan::make_plan(*op.work, user, dtype, rank);
    op.bytes += plan_bytes(*op.out);
  }
}

struct Run {
  int64_t start, length, owner, local;
};

// The runs of one dimension over its grid: `rep(q)` is a rank at coordinate q along it.
template <typename Rep>
std::vector<Run> runs_of(const Dims& dims, int64_t dim, int64_t parts, Rep rep) {
  int64_t count = 0;  // counted first: a 'c' dimension of block size 1 has one run per index
  for (int64_t q = 0; q < parts; ++q) {
    count = checked_add(count, num_runs(dims[static_cast<size_t>(rep(q))][static_cast<size_t>(dim)]), "runs");
  }
  const plan::RunsLimit limit = plan::max_plan_runs();
  if (count > limit.runs) {
    fail(GDAP_ERR_NO_MEMORY, "the k dimension of {} has {} runs (one per block of its layout), more than the limit "
         "of {} ({}); a larger block size along k or the limit would let it through", dim == 1 ? "A" : "B", count,
         limit.runs, limit.set_by);
  }
  std::vector<Run> all;
  for (int64_t q = 0; q < parts; ++q) {
    const gdap_dim& d = dims[static_cast<size_t>(rep(q))][static_cast<size_t>(dim)];
    for (const gdap_run& r : runs(d, 0, num_runs(d))) all.push_back({r.global_start, r.length, q, r.local_start});
  }
  std::sort(all.begin(), all.end(), [](const Run& x, const Run& y) { return x.start < y.start; });
  return all;
}

// How many panels cut_panels makes, counted from the run boundaries alone (O(runs), not O(k/width)):
// each stretch between two boundaries takes ceil(length / width). At most k: it fits int64.
int64_t count_panels(const std::vector<Run>& a, const std::vector<Run>& b, int64_t k, int64_t width) {
  std::vector<int64_t> cuts{0, k};
  for (const std::vector<Run>* runs : {&a, &b}) {
    for (const Run& r : *runs) {
      if (r.start > 0 && r.start < k) cuts.push_back(r.start);
      if (r.length < k - r.start) cuts.push_back(r.start + r.length);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  int64_t count = 0;
  for (size_t i = 1; i < cuts.size(); ++i) {
    const int64_t length = cuts[i] - cuts[i - 1];
    count += length / width + (length % width != 0 ? 1 : 0);
  }
  return count;
}

// Refuses, before any panel is listed, a K that cuts into more panels than a plan may list runs
// (GDAP_PLAN_MAX_RUNS): each panel holds two broadcast programs, and a hostile K would otherwise
// fill the memory one panel at a time.
void check_panel_count(const std::vector<Run>& a, const std::vector<Run>& b, int64_t k, int64_t width) {
  const int64_t panels = count_panels(a, b, k, width);
  const plan::RunsLimit limit = plan::max_plan_runs();
  if (panels > limit.runs) {
    fail(GDAP_ERR_NO_MEMORY, "K = {} cut into panels of at most {} columns (and at the run boundaries of A's columns "
         "and B's rows) makes {} panels, more than the limit of {} ({}): each panel is planned and held at once; "
         "raise options->panel_width or the limit", k, width, panels, limit.runs, limit.set_by);
  }
}

// Cuts [0, k) at every run boundary of A's columns and B's rows and at `width`.
std::vector<Panel> cut_panels(const std::vector<Run>& a, const std::vector<Run>& b, int64_t k, int64_t width) {
  check_panel_count(a, b, k, width);
  std::vector<Panel> panels;
  size_t i = 0, j = 0;
  int64_t pos = 0;
  while (pos < k) {
    while (i < a.size() && a[i].start + a[i].length <= pos) ++i;
    while (j < b.size() && b[j].start + b[j].length <= pos) ++j;
    if (i == a.size() || j == b.size() || a[i].start > pos || b[j].start > pos) {
      fail(GDAP_ERR_INTERNAL, "global k {} is owned by no rank of A's columns or B's rows", pos);
    }
    const int64_t end = std::min({a[i].start + a[i].length, b[j].start + b[j].length, pos + width});
    panels.push_back({pos, end - pos, a[i].owner, a[i].local + (pos - a[i].start), b[j].owner,
                      b[j].local + (pos - b[j].start)});
    pos = end;
  }
  return panels;
}

constexpr int64_t kDefaultPanelWidth = 1024;  // options->panel_width 0

// How the engines move panels: broadcasts from their owner, A's and B's under tags of their own.
constexpr exchange::Style kPanelsOfA{"gemm panels of A", 0x6e41, 0, false, true};
constexpr exchange::Style kPanelsOfB{"gemm panels of B", 0x6e42, 0, false, true};

// The segments of the programs, owned by them.
struct Segments {
  std::vector<exchange::Segment> all;
};

// One panel's move as this rank takes part in it: a broadcast of the owner's `rows` x `cols`
// block (the segments along each dimension) to the other ranks of its `group` (grid ranks, this
// one among them): the owner copies it into its own buffer and sends that to each; the others
// receive it. Nothing moves for an empty block.
exchange::Program broadcast(const gdap_gemm& g, const exchange::Style& style, exchange::Segment rows,
                            exchange::Segment cols, const std::vector<int64_t>& group, int64_t owner) {
  using exchange::Part;
  auto segments = std::make_shared<Segments>();
  segments->all = {rows, cols};
  exchange::Program p(g.rank, g.nranks, 2, g.element_size, style);
  const std::span<const exchange::Segment> lists[] = {{&segments->all[0], 1}, {&segments->all[1], 1}};
  const int64_t elements = rows.length * cols.length;
  if (elements > 0 && owner == g.rank) {
    p.add_message(Part::local, g.rank);
    p.add_set(lists, elements);
    for (int64_t peer : group) {
      if (peer == g.rank) continue;
      p.add_message(Part::send, peer);
      p.add_set(lists, elements);
    }
  } else if (elements > 0) {
    p.add_message(Part::recv, owner);
    p.add_set(lists, elements);
  }
  p.keep(std::move(segments));
  p.finish();
  return p;
}

// Every panel's moves on this rank: A's panel from grid column a_col of this rank's grid row, all
// local_m rows of its k-columns; B's from grid row b_row of this rank's grid column.
void compile_moves(gdap_gemm& g) {
  std::vector<int64_t> row_group, column_group;
  for (int64_t j = 0; j < g.grid_cols; ++j) row_group.push_back(g.my_row * g.grid_cols + j);
  for (int64_t i = 0; i < g.grid_rows; ++i) column_group.push_back(i * g.grid_cols + g.my_col);
  for (const Panel& p : g.panels) {
    g.a_moves.push_back(broadcast(g, kPanelsOfA, {0, g.local_m, 0, 0}, {p.k0, p.width, p.a_local, 0}, row_group,
                                  g.my_row * g.grid_cols + p.a_col));
    g.b_moves.push_back(broadcast(g, kPanelsOfB, {p.k0, p.width, p.b_local, 0}, {0, g.local_n, 0, 0}, column_group,
                                  p.b_row * g.grid_cols + g.my_col));
  }
}

// The part of the plan every rank computes the same from the maps (so errors are the same too).
void plan_layouts(gdap_gemm& g, const gdap_map& a, const gdap_map& b, const gdap_map& c, int64_t width) {
  const int64_t P = g.nranks;
  const Dims ad = dims_of(a, P), bd = dims_of(b, P), cd = dims_of(c, P);
  g.a.user_dims = ad[g.rank];
  g.b.user_dims = bd[g.rank];
  g.c.user_dims = cd[g.rank];
  for (auto* op : {&g.a, &g.b, &g.c}) {
    for (const gdap_dim& d : op->user_dims) op->user_shape.push_back(local_extent(d));
  }
  // C's grid, or a near-square one of even blocks.
  bool c_fits = true;
  for (const auto& r : cd) c_fits = c_fits && summa_dim(r[0]) && summa_dim(r[1]);
  Dims cw = cd;
  if (c_fits) {
    g.grid_rows = cd[0][0].proc_grid_size;
    g.grid_cols = cd[0][1].proc_grid_size;
  } else {
    g.grid_rows = 1;
    for (int64_t d = 1; d * d <= P; ++d) {
      if (P % d == 0) g.grid_rows = d;
    }
    g.grid_cols = P / g.grid_rows;
    for (int64_t r = 0; r < P; ++r) {
      cw[r] = {even_block(g.m, g.grid_rows, r / g.grid_cols), even_block(g.n, g.grid_cols, r % g.grid_cols)};
    }
    make_working(g.c, c, cw, g.dtype, g.rank, true);
  }
  const int64_t R = g.grid_rows, C = g.grid_cols;
  g.my_row = g.rank / C;
  g.my_col = g.rank % C;
  // A: rows as C's, columns 'b' or 'c' over the grid columns; B: rows over the grid rows, columns as C's.
  bool a_fits = true, b_fits = true;
  for (int64_t r = 0; r < P; ++r) {
    a_fits = a_fits && ad[r][0].proc_grid_size == R && ad[r][1].proc_grid_size == C && same_layout(ad[r][0], cw[r][0]) &&
             summa_dim(ad[r][1]);
    b_fits = b_fits && bd[r][0].proc_grid_size == R && bd[r][1].proc_grid_size == C && same_layout(bd[r][1], cw[r][1]) &&
             summa_dim(bd[r][0]);
  }
  Dims aw = ad, bw = bd;
  if (!a_fits) {
    for (int64_t r = 0; r < P; ++r) aw[r] = {cw[r][0], even_block(g.k, C, r % C)};
    make_working(g.a, a, aw, g.dtype, g.rank, false);
  }
  if (!b_fits) {
    for (int64_t r = 0; r < P; ++r) bw[r] = {even_block(g.k, R, r / C), cw[r][1]};
    make_working(g.b, b, bw, g.dtype, g.rank, false);
  }
  g.local_m = local_extent(cw[g.rank][0]);
  g.local_n = local_extent(cw[g.rank][1]);
  g.a_cols = local_extent(aw[g.rank][1]);
  g.b_rows = local_extent(bw[g.rank][0]);
  const auto a_runs = runs_of(aw, 1, C, [](int64_t q) { return q; });
  const auto b_runs = runs_of(bw, 0, R, [C](int64_t q) { return q * C; });
  g.panels = cut_panels(a_runs, b_runs, g.k, width);
  compile_moves(g);
  for (const Panel& p : g.panels) {
    g.max_width = std::max(g.max_width, p.width);
    if (p.a_col != g.my_col) g.panel_bytes += g.local_m * p.width * g.element_size;
    if (p.b_row != g.my_row) g.panel_bytes += p.width * g.local_n * g.element_size;
  }
}

void check_maps(const gdap_gemm& g, const gdap_map* a, const gdap_map* b, const gdap_map* c) {
  const char* names[3] = {"A", "B", "C"};
  const gdap_map* maps[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    const gdap_map& map = handle(maps[i], names[i]);
    const int64_t ndim = map.ndim(), nranks = map.nranks;
    if (ndim != 2) fail(GDAP_ERR_INVALID_ARGUMENT, "{}'s map has {} dimensions; gemm multiplies matrices (2)", names[i], ndim);
    if (nranks != g.nranks) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "incompatible grids: {}'s map spans {} ranks but the communicator has {}", names[i],
           nranks, g.nranks);
    }
  }
  const auto& as = a->global_shape;
  const auto& bs = b->global_shape;
  const auto& cs = c->global_shape;
  if (as[1] != bs[0]) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shape mismatch: A is {} x {} and B is {} x {}: A's dimension 1 (K = {}) != B's "
         "dimension 0 ({})", as[0], as[1], bs[0], bs[1], as[1], bs[0]);
  }
  if (cs[0] != as[0]) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shape mismatch: C's dimension 0 ({}) != A's dimension 0 (M = {})", cs[0], as[0]);
  }
  if (cs[1] != bs[1]) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "shape mismatch: C's dimension 1 ({}) != B's dimension 1 (N = {})", cs[1], bs[1]);
  }
}

gdap_gemm_options read_options(const gdap_gemm_options* options) {
  if (options == nullptr) return GDAP_GEMM_OPTIONS_INIT;
  return read_versioned(options, gdap_gemm_options GDAP_GEMM_OPTIONS_INIT, "options", "GDAP_GEMM_OPTIONS_INIT");
}

void check_section(const gdap_gemm& g, const gdap_array* x, const Operand& op, const char* name) {
  handle(x, name);
  if (!same_dtype(x->section.dtype, g.dtype)) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "dtype mismatch: {} has dtype {} but the gemm was planned for {}", name,
         dtype_text(x->section.dtype), dtype_text(g.dtype));
  }
  if (x->section.shape != op.user_shape) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "{}'s local section is {} but its map gives this rank {} x {}", name,
         x->section.shape.size() == 2 ? fmt::format("{} x {}", x->section.shape[0], x->section.shape[1])
                                      : fmt::format("{}-d", x->section.shape.size()),
         op.user_shape[0], op.user_shape[1]);
  }
  if (memory_of(x) == Memory::none) {
    fail(GDAP_ERR_UNSUPPORTED, "{} lives on device type {}, which gemm cannot use", name, x->section.device.type);
  }
}

// A working section for a redistributed operand, on `device`; reused between executions.
void working(std::unique_ptr<gdap_array>& slot, const Operand& op, gdap_dtype dtype, gdap_device device) {
  if (!slot) slot = create_array(dtype, device, op.work_dims.data(), 2);
}

void drop_working(gdap_gemm& g) {
  g.a_work.reset();
  g.b_work.reset();
  g.c_work.reset();
}

void local_checks(gdap_gemm& g, const gdap_array* a, const gdap_array* b, gdap_array* c) {
  check_section(g, a, g.a, "A");
  check_section(g, b, g.b, "B");
  check_section(g, c, g.c, "C");
  check_destination(*c, "C", "; gemm writes it");
  check_apart(*c, "C", *a, "A", "gdap_gemm_execute");
  check_apart(*c, "C", *b, "B", "gdap_gemm_execute");
  const Memory mem = memory_of(c);
  if (memory_of(a) != mem || memory_of(b) != mem) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "A, B and C must all be host-accessible or all on a CUDA device");
  }
  if (mem == Memory::device) {
    const int id = c->section.device.id;
    const char* names[3] = {"A", "B", "C"};
    const gdap_array* xs[3] = {a, b, c};
    for (int i = 0; i < 3; ++i) {
      const auto& st = xs[i]->section.strides;
      if (xs[i]->section.shape[1] > 1 && st[1] != 1) {
        fail(GDAP_ERR_UNSUPPORTED, "{} is a device section with stride {} along dimension 1; gemm needs 1 there", names[i], st[1]);
      }
      if (xs[i]->section.shape[0] > 1 && st[0] < xs[i]->section.shape[1]) {
        fail(GDAP_ERR_UNSUPPORTED, "{} is a device section with row stride {} < its {} columns", names[i], st[0],
             xs[i]->section.shape[1]);
      }
    }
    if (a->section.device.id != id || b->section.device.id != id) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "A (device {}), B (device {}) and C (device {}) must be on one device",
           a->section.device.id, b->section.device.id, id);
    }
  } else if (g.mode != GDAP_GEMM_EXACT) {
    fail(GDAP_ERR_UNSUPPORTED, "mode {} (tensor cores) needs device sections; host sections are multiplied exactly",
         g.mode == GDAP_GEMM_TF32 ? "GDAP_GEMM_TF32" : "GDAP_GEMM_BF16");
  }
  const gdap_device dev = c->section.device;
  if (g.work_device.type != dev.type || g.work_device.id != dev.id) drop_working(g);
  g.work_device = dev;
  if (g.a.in != nullptr) working(g.a_work, g.a, g.dtype, dev);
  if (g.b.in != nullptr) working(g.b_work, g.b, g.dtype, dev);
  if (g.c.in != nullptr) working(g.c_work, g.c, g.dtype, dev);
}

// What every rank's gemm of one multiplication must share: the shapes, dtype, mode, panel width
// and the three distributions (their digests), or ranks would move panels of other sizes or types.
// The panel width is compared as passed, so that a refusal quotes what each rank gave (0 used to
// read as 1024).
std::string gemm_token(const gdap_gemm& g, const gdap_map& a, const gdap_map& b, const gdap_map& c,
                       int64_t passed_panel_width) {
  const auto hex = [](const gdap_map& map) { return fmt::format("{:#018x}", digest(map)); };
  const std::string panel_width = passed_panel_width == 0 ? fmt::format("0 (the default, {})", kDefaultPanelWidth)
                                                          : std::to_string(passed_panel_width);
  return field_token({{"M", std::to_string(g.m)}, {"K", std::to_string(g.k)}, {"N", std::to_string(g.n)},
                      {"dtype", dtype_text(g.dtype)}, {"mode", std::to_string(g.mode)},
                      {"panel width", panel_width}, {"A map digest", hex(a)},
                      {"B map digest", hex(b)}, {"C map digest", hex(c)}});
}

// This rank's checks of an execution, its handle, arguments and sections: the checked gemm.
gdap_gemm& check_execute(gdap_comm& comm, gdap_gemm* plan, const gdap_array* a, const gdap_array* b, gdap_array* c) {
  gdap_gemm& g = handle(plan, "gemm");
  if (comm.rank != g.rank || comm.size != g.nranks) {
    fail(GDAP_ERR_INVALID_ARGUMENT, "the gemm is rank {} of {} but the communicator is rank {} of {}", g.rank, g.nranks,
         comm.rank, comm.size);
  }
  local_checks(g, a, b, c);
  exchange::touches(comm, "A", a, false);
  exchange::touches(comm, "B", b, false);
  exchange::touches(comm, "C", c, true);
  return g;
}

}  // namespace

void execute(gdap_comm& comm, gdap_gemm* plan, double alpha, const gdap_array* a, const gdap_array* b, double beta,
             gdap_array* c) {
  // One agreement: every rank passed its checks (a valid gemm handle among them), runs a gemm of
  // rank 0's (one made together), has its sections in rank 0's kind of memory (the engines pair
  // host with host) and passed rank 0's alpha and beta (a rank skipping the panels for alpha 0
  // would leave its peers waiting).
  gdap_gemm* checked = nullptr;
  agree_gather(comm, [&] {
    checked = &check_execute(comm, plan, a, b, c);
    return Share{checked->token + field_token({{"sections in memory", memory_name(memory_of(c))},
                                              {"alpha", fmt::format("{}", alpha)}, {"beta", fmt::format("{}", beta)}}),
                 {}};
  }, field_mismatch("gemm", "every rank of gdap_gemm_execute runs its part of one gemm (made by one gdap_gemm_create), "
                            "with the same alpha and beta and sections in the same kind of memory"));
  gdap_gemm& g = *checked;
  const char mine = memory_of(c) == Memory::device ? 'd' : 'h';
  // The operands' redistributions and the panels run nested in this call (comm/collective.hpp): the
  // memory they touch is A, B and C, declared above, or gdap's own working sections.
  const CollectiveCall nested(comm, "gdap_gemm_execute");
  const gdap_array* wa = a;
  const gdap_array* wb = b;
  gdap_array* wc = c;
  if (g.a.in != nullptr) {
    plan::redistribute(comm, g.a.in.get(), a, g.a_work.get());
    wa = g.a_work.get();
  }
  if (g.b.in != nullptr) {
    plan::redistribute(comm, g.b.in.get(), b, g.b_work.get());
    wb = g.b_work.get();
  }
  if (g.c.in != nullptr) plan::redistribute(comm, g.c.in.get(), c, wc = g.c_work.get());
  const Job job{comm, g, wa, wb, wc, alpha, beta};
  if (mine == 'd') {
    run_device(job);
  } else {
    run_host(job);
  }
  if (g.c.out != nullptr) plan::redistribute(comm, g.c.out.get(), g.c_work.get(), c);
}

std::unique_ptr<gdap_gemm> create(gdap_comm& comm, const gdap_map* a, const gdap_map* b, const gdap_map* c,
                                  gdap_dtype dtype, const gdap_gemm_options* options,
                                  const std::function<void()>& also) {
  auto g = std::make_unique<gdap_gemm>();
  agree_gather(comm, [&] {
    also();
    g->rank = comm.rank;
    g->nranks = comm.size;
    const gdap_gemm_options o = read_options(options);
    if (dtype.code != GDAP_DTYPE_FLOAT || (dtype.bits != 32 && dtype.bits != 64) || dtype.lanes != 1) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "dtype {} is not float32 or float64, the dtypes gemm multiplies", dtype_text(dtype));
    }
    if (o.mode != GDAP_GEMM_EXACT && o.mode != GDAP_GEMM_TF32 && o.mode != GDAP_GEMM_BF16) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "options->mode {} is not a gdap_gemm_mode", o.mode);
    }
    if (o.mode != GDAP_GEMM_EXACT && dtype.bits != 32) {
      fail(GDAP_ERR_INVALID_ARGUMENT, "mode {} applies to float32 only, not float64",
           o.mode == GDAP_GEMM_TF32 ? "GDAP_GEMM_TF32" : "GDAP_GEMM_BF16");
    }
    if (o.panel_width < 0) fail(GDAP_ERR_INVALID_ARGUMENT, "options->panel_width {} is < 0", o.panel_width);
    g->dtype = dtype;
    g->element_size = dtype.bits / 8;
    g->mode = o.mode;
    check_maps(*g, a, b, c);
    g->m = a->global_shape[0];
    g->k = a->global_shape[1];
    g->n = b->global_shape[1];
    plan_layouts(*g, *a, *b, *c, o.panel_width == 0 ? kDefaultPanelWidth : o.panel_width);
    g->token = gemm_token(*g, *a, *b, *c, o.panel_width);
    return Share{g->token, {}};
  }, field_mismatch("gemm", "every rank of gdap_gemm_create passes the same three maps (so the same M, K and N), dtype "
                            "and options"));
  return g;
}

}  // namespace gdap::gemm

gdap_gemm::~gdap_gemm() { gdap::gemm::release_device(*this); }
