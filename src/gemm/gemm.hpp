// gdap_gemm: one rank's plan of a distributed C = alpha * A * B + beta * C (SUMMA). The plan fixes
// the working layouts (the caller's, or ones that fit SUMMA plus the redistribution plans into and
// out of them), the k-panels in global order with who owns each, and keeps the buffers each
// execution reuses. The loop itself is generic (gemm.cpp); the products and panel moves are
// engines per kind of memory and communicator: host (gemm_host.cpp) and device (gemm_device.cpp).
#pragma once

#include "array/array.hpp"
#include "array/memory.hpp"
#include "comm/comm.hpp"
#include "core/handle.hpp"
#include "maps/map.hpp"
#include "exchange/program.hpp"
#include "plan/redistribute.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gdap::gemm {

// One SUMMA step: global k in [k0, k0 + width), held by grid column `a_col` of A at local column
// `a_local` and by grid row `b_row` of B at local row `b_local`.
struct Panel {
  int64_t k0 = 0, width = 0;
  int64_t a_col = 0, a_local = 0;
  int64_t b_row = 0, b_local = 0;
};

// One operand as SUMMA sees it: the caller's map, or a working one with the plans that move the
// caller's section in (and, for C, out again).
struct Operand {
  std::vector<int64_t> user_shape;  // this rank's local shape in the caller's map
  std::vector<gdap_dim> user_dims;  // this rank's dictionaries in the caller's map
  std::unique_ptr<gdap_map> work;   // NULL: the caller's layout is used as is
  std::unique_ptr<gdap_plan> in;    // caller -> work
  std::unique_ptr<gdap_plan> out;   // work -> caller (C only)
  std::vector<gdap_dim> work_dims;  // this rank's dictionaries in the working map
  int64_t bytes = 0;                // sent + received by this rank through in and out
};

// Whatever an engine keeps between executions (device buffers, streams, cuBLAS handle).
struct Resources {
  virtual ~Resources() = default;
};

}  // namespace gdap::gemm

struct gdap_gemm : gdap::Tagged<gdap_gemm> {
  gdap_gemm() = default;
  ~gdap_gemm();
  gdap_gemm(const gdap_gemm&) = delete;
  gdap_gemm& operator=(const gdap_gemm&) = delete;

  int64_t rank = 0, nranks = 0;
  int64_t grid_rows = 1, grid_cols = 1, my_row = 0, my_col = 0;
  gdap_dtype dtype{};
  int64_t element_size = 0;
  int32_t mode = GDAP_GEMM_EXACT;
  int64_t m = 0, n = 0, k = 0;                // global
  std::string token;  // what every rank's gemm of one multiplication shares (comm.hpp's field_token)
  int64_t local_m = 0, local_n = 0;           // this rank's working block of C
  int64_t a_cols = 0, b_rows = 0;             // local columns of working A, rows of working B
  gdap::gemm::Operand a, b, c;
  std::vector<gdap::gemm::Panel> panels;
  // Per panel, this rank's part of moving it: A's along its grid row, B's along its grid column
  // (exchange programs of broadcasts from the owner).
  std::vector<gdap::exchange::Program> a_moves, b_moves;
  int64_t max_width = 0;
  int64_t panel_bytes = 0;  // received from other ranks per execution
  // Working sections allocated for redistributed operands, reused while the device stays the same.
  std::unique_ptr<gdap_array> a_work, b_work, c_work;
  gdap_device work_device{};
  std::unique_ptr<gdap::gemm::Resources> host, device;
};

namespace gdap::gemm {

// The working sections of one execution and the scalars; what an engine multiplies.
struct Job {
  gdap_comm& comm;
  gdap_gemm& plan;
  const gdap_array* a;  // working A: local_m x a_cols
  const gdap_array* b;  // working B: b_rows x local_n
  gdap_array* c;        // working C: local_m x local_n
  double alpha, beta;
};

// Collective: rank comm.rank's plan of C = A * B for matrices distributed by the three maps
// (borrowed for the call); `options` may be NULL (gdap_gemm_create). `also` (the caller's own checks)
// runs among the agreed checks, so a pending gdap_comm_fail_next wins over them on every rank.
std::unique_ptr<gdap_gemm> create(gdap_comm& comm, const gdap_map* a, const gdap_map* b, const gdap_map* c,
                                  gdap_dtype dtype, const gdap_gemm_options* options,
                                  const std::function<void()>& also);
// Collective: C = alpha * A * B + beta * C with `plan`'s layouts (gdap_gemm_execute); `plan` is
// the caller's handle, checked among the other checks of the call's one agreement.
void execute(gdap_comm& comm, gdap_gemm* plan, double alpha, const gdap_array* a, const gdap_array* b, double beta,
             gdap_array* c);

// Engines: each runs the whole SUMMA loop (or, with no panels or alpha 0, scales C by beta) after
// the agreement, on the memory of this job's sections.
void run_host(const Job& job);
void run_device(const Job& job);

// Frees a plan's engine resources (device ones need the device set). Never throws.
void release_device(gdap_gemm& plan) noexcept;

// Row stride and element stride of a 2-d section, as engines need them.
inline int64_t row_stride(const gdap_array& a) { return a.section.strides[0]; }
inline int64_t col_stride(const gdap_array& a) { return a.section.strides[1]; }

}  // namespace gdap::gemm
