// gdap_gemm over MPI (host sections), on 2 or 4 processes: the cases of gemm_check.hpp that fit
// the process count, element by element against the serial reference, then a dtype mismatch on
// rank 1 (every rank fails, no data changes). A plain program: exits non-zero if any rank failed.
#include "gemm/gemm_check.hpp"

#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include <cstdio>
#include <string>

namespace {

namespace gt = gemm_test;

gt::Layout grid(int64_t rows, int64_t cols, gt::Axis d0 = {}, gt::Axis d1 = {}) { return gt::Layout{rows, cols, d0, d1}; }

std::vector<gt::Case> cases(int size) {
  const gt::Axis c2{'c', 2}, c3{'c', 3}, c16{'c', 16}, uneven{'B', 1}, empty{'E', 1}, u{'u', 1};
  const int64_t r = size == 4 ? 2 : 1, c = size == 4 ? 2 : 2;
  std::vector<gt::Case> out;
  out.push_back({"block f64", 9, 10, 11, grid(r, c), grid(r, c), grid(r, c), 64, 1.0, 1.0});
  out.push_back({"block-cyclic 2 f32", 13, 9, 17, grid(r, c, c2, c2), grid(r, c, c2, c2), grid(r, c, c2, c2), 32, 0.5, -0.5});
  out.push_back({"block-cyclic 16 f64", 70, 50, 65, grid(r, c, c16, c16), grid(r, c, c16, c16), grid(r, c, c16, c16), 64, -2.0,
                 1.0});
  out.push_back({"uneven f64", 11, 14, 19, grid(r, c, uneven, uneven), grid(r, c, uneven, uneven),
                 grid(r, c, uneven, uneven), 64, 1.0, 0.5});
  out.push_back({"empty sections f64", 6, 5, 7, grid(r, c, empty, empty), grid(r, c, empty, empty),
                 grid(r, c, empty, empty), 64, 1.0, 1.0});
  out.push_back({"A redistributed f64", 12, 10, 9, grid(size, 1), grid(r, c, {}, c3), grid(r, c, {}, c3), 64, 1.0, -1.0});
  out.push_back({"C unstructured f32", 7, 9, 5, grid(r, c), grid(r, c), grid(r, c, u, {}), 32, 1.0, 2.0});
  out.push_back({"alpha 0 f64", 6, 6, 6, grid(r, c), grid(r, c), grid(r, c), 64, 0.0, -0.5});
  out.push_back({"beta 0 NaN in C f64", 7, 8, 9, grid(r, c), grid(r, c), grid(r, c), 64, 1.0, 0.0});
  gt::Case strided{"strided f64", 9, 7, 8, grid(r, c, c2, {}), grid(r, c), grid(r, c, c2, {}), 64, 1.0, 1.0};
  strided.strided = true;
  out.push_back(strided);
  return out;
}

void run_case(gdap_comm* comm, int64_t rank, const gt::Case& c, int64_t width, bool bad_dtype,
              std::vector<std::string>& failures) {
  const auto da = gt::all_dims(c.a, c.m, c.k), db = gt::all_dims(c.b, c.k, c.n), dc = gt::all_dims(c.c, c.m, c.n);
  gdap_map* maps[3] = {};
  gdap_map_create(&maps[0], c.a.rows * c.a.cols, 2, da.data());
  gdap_map_create(&maps[1], c.b.rows * c.b.cols, 2, db.data());
  gdap_map_create(&maps[2], c.nranks(), 2, dc.data());
  const bool nan_c = c.beta == 0;
  gt::Section sa = gt::make_section(da, rank, c.strided, 0, gt::a_value);
  gt::Section sb = gt::make_section(db, rank, false, 0, gt::b_value);
  gt::Section sc = gt::make_section(dc, rank, false, c.strided ? 3 : 0, gt::c_value, nan_c);
  auto ba = gt::to_bytes(sa, c.bits), bb = gt::to_bytes(sb, c.bits), bc = gt::to_bytes(sc, c.bits);
  const bool bad = bad_dtype && rank == 1;
  const gdap_device host{GDAP_DEVICE_CPU, 0};
  gdap_array *aa = nullptr, *ab = nullptr, *ac = nullptr;
  std::vector<unsigned char> other(ba.size() * 2 + 8);
  gdap_array_wrap(&aa, bad ? other.data() : ba.data(), gt::dtype_of(bad ? (c.bits == 64 ? 32 : 64) : c.bits), host,
                  sa.strides.data(), sa.dims, 2);
  gdap_array_wrap(&ab, bb.data(), gt::dtype_of(c.bits), host, sb.strides.data(), sb.dims, 2);
  gdap_array_wrap(&ac, bc.data(), gt::dtype_of(c.bits), host, sc.strides.data(), sc.dims, 2);
  gdap_gemm_options o = GDAP_GEMM_OPTIONS_INIT;
  o.panel_width = width;
  gdap_gemm* g = nullptr;
  const std::string name = c.name + " (panel width " + std::to_string(width) + ")";
  if (gdap_gemm_create(&g, comm, maps[0], maps[1], maps[2], gt::dtype_of(c.bits), &o) != GDAP_SUCCESS) {
    failures.push_back(name + ": gdap_gemm_create: " + gdap_last_error());
  } else {
    const gdap_status st = gdap_gemm_execute(comm, g, c.alpha, aa, ab, c.beta, ac);
    const gdap_status want = !bad_dtype ? GDAP_SUCCESS : bad ? GDAP_ERR_INVALID_ARGUMENT : GDAP_ERR_REMOTE;
    if (st != want) failures.push_back(name + ": gdap_gemm_execute returned " + gdap_status_string(st) + ": " + gdap_last_error());
    for (const auto& f : gt::check_c(c, sc, bc, nan_c, !bad_dtype)) failures.push_back(name + ": " + f);
    if (!bad) {
      for (const auto& f : gt::check_same(name + ": A", sa, ba, c.bits)) failures.push_back(f);
    }
    for (const auto& f : gt::check_same(name + ": B", sb, bb, c.bits)) failures.push_back(f);
  }
  gdap_gemm_destroy(g);
  gdap_array_destroy(aa);
  gdap_array_destroy(ab);
  gdap_array_destroy(ac);
  for (gdap_map* m : maps) gdap_map_destroy(m);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gdap_comm* comm = nullptr;
  if (gdap_comm_from_mpi_comm(&comm, MPI_COMM_WORLD) != GDAP_SUCCESS) {
    std::fprintf(stderr, "rank %d: gdap_comm_from_mpi: %s\n", rank, gdap_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  gdap_comm_set_timeout(comm, 60);
  std::vector<std::string> failures;
  const auto table = cases(size);
  for (const gt::Case& c : table) {
    for (int64_t width : {0, 3}) run_case(comm, rank, c, width, false, failures);
  }
  run_case(comm, rank, table[0], 0, true, failures);
  for (const std::string& f : failures) std::fprintf(stderr, "rank %d: %s\n", rank, f.c_str());
  int mine = failures.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("gemm_mpi: %zu cases on %d ranks: %s\n", table.size(), size, any ? "FAILED" : "ok");
  gdap_comm_destroy(comm);
  MPI_Finalize();
  return any ? 1 : 0;
}
