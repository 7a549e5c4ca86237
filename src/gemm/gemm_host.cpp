// The host engine of the distributed GEMM: panels packed into contiguous row-major buffers, local
// products by BLAS (sgemm/dgemm, row-major through the transposed column-major call) or, in a
// build without BLAS, a plain loop. Panels move by transport: the in-process group copies straight
// from the owning rank's section (every rank's section is published once per execution and stays
// valid until the closing barrier); MPI posts point-to-point messages from the owner to the other
// ranks of its grid row (A) or column (B), the next panel's while the current one is multiplied.
#include "gemm/gemm.hpp"

#include "comm/group.hpp"
#include "core/error.hpp"

#if GDAP_HAVE_MPI
#include "comm/mpi.hpp"
#endif

#include <algorithm>
#include <climits>
#include <cstring>

#if GDAP_HAVE_BLAS
extern "C" {
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha, const float* a,
            const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
}
#endif

namespace gdap::gemm {

namespace {

int blas_int(int64_t v, const char* what) {
  if (v > INT_MAX) fail(GDAP_ERR_UNSUPPORTED, "{} {} exceeds the BLAS integer range ({})", what, v, INT_MAX);
  return static_cast<int>(v);
}

// C (m x n, row stride ldc) = alpha * A (m x k, packed) * B (k x n, packed) + beta * C; beta 0
// ignores C's old values.
template <typename T>
void local_gemm(int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
#if GDAP_HAVE_BLAS
  const int mi = blas_int(m, "rows"), ni = blas_int(n, "columns"), ki = blas_int(k, "panel width");
  const int lda = std::max(1, ki), ldb = std::max(1, ni), ldci = blas_int(ldc, "row stride of C");
  if constexpr (sizeof(T) == 4) {
    sgemm_("N", "N", &ni, &mi, &ki, &alpha, b, &ldb, a, &lda, &beta, c, &ldci);
  } else {
    dgemm_("N", "N", &ni, &mi, &ki, &alpha, b, &ldb, a, &lda, &beta, c, &ldci);
  }
#else
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = beta == T(0) ? T(0) : beta * row[j];
    for (int64_t p = 0; p < k; ++p) {
      const T s = alpha * a[i * k + p];
      const T* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += s * brow[j];
    }
  }
#endif
}

// Copies rows [r0, r0 + rows) x columns [c0, c0 + cols) of a 2-d section into `dst`, packed.
template <typename T>
void pack(const gdap_array& x, int64_t r0, int64_t rows, int64_t c0, int64_t cols, T* dst) {
  const T* src = static_cast<const T*>(x.data());
  const int64_t rs = row_stride(x), cs = col_stride(x);
  for (int64_t i = 0; i < rows; ++i) {
    const T* row = src + (r0 + i) * rs + c0 * cs;
    if (cs == 1) {
      std::memcpy(dst + i * cols, row, static_cast<size_t>(cols) * sizeof(T));
    } else {
      for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = row[j * cs];
    }
  }
}

template <typename T>
struct Slots {
  std::shared_ptr<std::vector<T>> a[2], b[2];
  Slots(int64_t a_elems, int64_t b_elems) {
    for (int s = 0; s < 2; ++s) {
      a[s] = std::make_shared<std::vector<T>>(static_cast<size_t>(std::max<int64_t>(a_elems, 1)));
      b[s] = std::make_shared<std::vector<T>>(static_cast<size_t>(std::max<int64_t>(b_elems, 1)));
    }
  }
};

// How panels reach this rank: fetch starts moving panel `p` into slot `s`; ready waits for it.
template <typename T>
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void fetch(const Panel& p, int s) = 0;
  virtual void ready(int) {}
  virtual void end() {}
};

template <typename T>
class GroupTransport final : public Transport<T> {
 public:
  struct Published {
    const gdap_array* a;
    const gdap_array* b;
  };
  GroupTransport(const Job& job, Slots<T>& slots) : job_(job), slots_(slots), comm_(dynamic_cast<GroupComm&>(job.comm)) {
    mine_ = {job.a, job.b};
    for (const void* p : comm_.exchange(&mine_, nullptr)) peers_.push_back(*static_cast<const Published*>(p));
  }
  void fetch(const Panel& p, int s) override {
    const gdap_gemm& g = job_.plan;
    const gdap_array& a = *peers_[static_cast<size_t>(g.my_row * g.grid_cols + p.a_col)].a;
    const gdap_array& b = *peers_[static_cast<size_t>(p.b_row * g.grid_cols + g.my_col)].b;
    pack(a, 0, g.local_m, p.a_local, p.width, slots_.a[s]->data());
    pack(b, p.b_local, p.width, 0, g.local_n, slots_.b[s]->data());
  }
  // No rank may leave (and let its caller free its sections) while another still reads them.
  void end() override { comm_.barrier(); }

 private:
  const Job& job_;
  Slots<T>& slots_;
  GroupComm& comm_;
  Published mine_{};
  std::vector<Published> peers_;
};

#if GDAP_HAVE_MPI
template <typename T>
class MpiTransport final : public Transport<T> {
 public:
  MpiTransport(const Job& job, Slots<T>& slots) : job_(job), slots_(slots), comm_(dynamic_cast<MpiComm&>(job.comm)) {
    comm_.check_usable();
  }
  void fetch(const Panel& p, int s) override {
    const gdap_gemm& g = job_.plan;
    current_ = &requests_[s];
    current_->clear();
    const int64_t a_bytes = g.local_m * p.width * static_cast<int64_t>(sizeof(T));
    const int64_t b_bytes = p.width * g.local_n * static_cast<int64_t>(sizeof(T));
    T* abuf = slots_.a[s]->data();
    T* bbuf = slots_.b[s]->data();
    if (p.a_col == g.my_col) pack(*job_.a, 0, g.local_m, p.a_local, p.width, abuf);
    if (p.b_row == g.my_row) pack(*job_.b, p.b_local, p.width, 0, g.local_n, bbuf);
    if (a_bytes > 0) {
      for (int64_t j = 0; j < g.grid_cols; ++j) {
        const int64_t peer = g.my_row * g.grid_cols + j;
        if (j == g.my_col) continue;
        if (p.a_col == g.my_col) post(abuf, a_bytes, peer, kTagA, true);
        else if (j == p.a_col) post(abuf, a_bytes, peer, kTagA, false);
      }
    }
    if (b_bytes > 0) {
      for (int64_t i = 0; i < g.grid_rows; ++i) {
        const int64_t peer = i * g.grid_cols + g.my_col;
        if (i == g.my_row) continue;
        if (p.b_row == g.my_row) post(bbuf, b_bytes, peer, kTagB, true);
        else if (i == p.b_row) post(bbuf, b_bytes, peer, kTagB, false);
      }
    }
  }
  void ready(int s) override {
    if (requests_[s].empty()) return;
    auto keep = std::make_shared<std::pair<std::shared_ptr<std::vector<T>>, std::shared_ptr<std::vector<T>>>>(
        slots_.a[s], slots_.b[s]);
    comm_.wait(requests_[s], "gemm panel broadcast", true, keep);
    requests_[s].clear();
  }

 private:
  static constexpr int kTagA = 0x6e41, kTagB = 0x6e42;
  void post(T* buf, int64_t bytes, int64_t peer, int tag, bool send) {
    if (bytes > INT_MAX) fail(GDAP_ERR_UNSUPPORTED, "a panel of {} bytes exceeds MPI's count range; use a smaller "
                                                    "panel_width", bytes);
    MPI_Request r;
    if (send) {
      check_mpi(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(peer), tag, comm_.handle(), &r), "MPI_Isend");
    } else {
      check_mpi(MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(peer), tag, comm_.handle(), &r), "MPI_Irecv");
    }
    current_->push_back(r);
  }
  const Job& job_;
  Slots<T>& slots_;
  MpiComm& comm_;
  std::vector<MPI_Request> requests_[2];
  std::vector<MPI_Request>* current_ = &requests_[0];  // the slot fetch is posting for
};
#endif

template <typename T>
void scale(T* c, int64_t m, int64_t n, int64_t ldc, T beta) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  }
}

template <typename T>
void run(const Job& job) {
  gdap_gemm& g = job.plan;
  const auto alpha = static_cast<T>(job.alpha), beta = static_cast<T>(job.beta);
  // C in place when rows are contiguous, else through a packed copy.
  gdap_array& c = *job.c;
  const bool direct = col_stride(c) == 1 && row_stride(c) >= std::max<int64_t>(g.local_n, 1);
  std::vector<T> staged;
  T* cp = static_cast<T*>(c.data());
  int64_t ldc = row_stride(c);
  if (!direct) {
    staged.resize(static_cast<size_t>(std::max<int64_t>(g.local_m * g.local_n, 1)));
    pack(c, 0, g.local_m, 0, g.local_n, staged.data());
    cp = staged.data();
    ldc = std::max<int64_t>(g.local_n, 1);
  }
  if (g.panels.empty() || job.alpha == 0) {
    scale(cp, g.local_m, g.local_n, ldc, beta);
  } else {
    Slots<T> slots(g.local_m * g.max_width, g.max_width * g.local_n);
    std::unique_ptr<Transport<T>> t;
    if (job.comm.kind() == GDAP_COMM_GROUP) {
      t = std::make_unique<GroupTransport<T>>(job, slots);
#if GDAP_HAVE_MPI
    } else if (job.comm.kind() == GDAP_COMM_MPI) {
      t = std::make_unique<MpiTransport<T>>(job, slots);
#endif
    } else {
      fail(GDAP_ERR_UNSUPPORTED, "host sections need an in-process group or MPI communicator (NCCL moves device memory)");
    }
    auto fetch = [&](size_t p) { t->fetch(g.panels[p], static_cast<int>(p % 2)); };
    fetch(0);
    for (size_t p = 0; p < g.panels.size(); ++p) {
      if (p + 1 < g.panels.size()) fetch(p + 1);
      const int s = static_cast<int>(p % 2);
      t->ready(s);
      local_gemm<T>(g.local_m, g.local_n, g.panels[p].width, alpha, slots.a[s]->data(), slots.b[s]->data(),
                    p == 0 ? beta : T(1), cp, ldc);
    }
    t->end();
  }
  if (!direct) {
    T* dst = static_cast<T*>(c.data());
    for (int64_t i = 0; i < g.local_m; ++i) {
      for (int64_t j = 0; j < g.local_n; ++j) dst[i * row_stride(c) + j * col_stride(c)] = staged[i * g.local_n + j];
    }
  }
}

}  // namespace

void run_host(const Job& job) {
  if (job.plan.element_size == 4) {
    run<float>(job);
  } else {
    run<double>(job);
  }
}

#if !GDAP_HAVE_CUDA
void run_device(const Job&) { fail(GDAP_ERR_UNSUPPORTED, "device sections need gdap built with CUDA (cuBLAS)"); }
void release_device(gdap_gemm& plan) noexcept { plan.device.reset(); }
#endif

}  // namespace gdap::gemm
