/* gdap_c_generated.i: the part of the SWIG interface (gdap_c.i) that follows from the public headers.
 * GENERATED from the headers by tools/abigen/generate.py: do not edit. After changing a header, run
 *   tools/abigen/generate.py --write
 * (the ctest bindings.generated fails while this file differs from what the generator writes). */

/* ---- handles a call creates: opaque pointer objects ---------------------------------------- */
%typemap(in, numinputs=0) gdap_map** out (gdap_map* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) gdap_map** out {
  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(gdap_map*), 0)) != 0) {
    gdap_map_destroy(*$1);
    SWIG_fail;
  }
}
%typemap(in, numinputs=0) gdap_array** out (gdap_array* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) gdap_array** out {
  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(gdap_array*), 0)) != 0) {
    gdap_array_destroy(*$1);
    SWIG_fail;
  }
}
%typemap(in, numinputs=0) gdap_comm** out (gdap_comm* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) gdap_comm** out {
  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(gdap_comm*), 0)) != 0) {
    gdap_comm_destroy(*$1);
    SWIG_fail;
  }
}
%typemap(in, numinputs=0) gdap_plan** out (gdap_plan* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) gdap_plan** out {
  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(gdap_plan*), 0)) != 0) {
    gdap_plan_destroy(*$1);
    SWIG_fail;
  }
}
%typemap(in, numinputs=0) gdap_halo** out (gdap_halo* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) gdap_halo** out {
  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(gdap_halo*), 0)) != 0) {
    gdap_halo_destroy(*$1);
    SWIG_fail;
  }
}
%typemap(in, numinputs=0) gdap_exchange** out (gdap_exchange* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) gdap_exchange** out {
  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(gdap_exchange*), 0)) != 0) {
    gdap_exchange_destroy(*$1);
    SWIG_fail;
  }
}
%typemap(in, numinputs=0) gdap_gemm** out (gdap_gemm* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) gdap_gemm** out {
  if (gdap_py_append($result, SWIG_NewPointerObj(*$1, $descriptor(gdap_gemm*), 0)) != 0) {
    gdap_gemm_destroy(*$1);
    SWIG_fail;
  }
}

/* ---- statistics: a dict of every field but struct_size and reserved ones ------------------ */
%typemap(in, numinputs=0) gdap_plan_stats* stats (gdap_plan_stats temp) {
  memset(&temp, 0, sizeof temp);
  temp.struct_size = (uint32_t)sizeof temp;
  $1 = &temp;
}
%typemap(argout) gdap_plan_stats* stats {
  PyObject* d = Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "rank", (long long)$1->rank,
                              "nranks", (long long)$1->nranks, "send_messages", (long long)$1->send_messages,
                              "recv_messages", (long long)$1->recv_messages,
                              "send_bytes", (long long)$1->send_bytes,
                              "recv_bytes", (long long)$1->recv_bytes,
                              "local_bytes", (long long)$1->local_bytes,
                              "send_runs", (long long)$1->send_runs, "recv_runs", (long long)$1->recv_runs,
                              "local_runs", (long long)$1->local_runs);
  if (gdap_py_append($result, d) != 0) SWIG_fail;
}
%typemap(in, numinputs=0) gdap_halo_stats* stats (gdap_halo_stats temp) {
  memset(&temp, 0, sizeof temp);
  temp.struct_size = (uint32_t)sizeof temp;
  $1 = &temp;
}
%typemap(argout) gdap_halo_stats* stats {
  PyObject* d = Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "rank", (long long)$1->rank,
                              "nranks", (long long)$1->nranks, "send_messages", (long long)$1->send_messages,
                              "recv_messages", (long long)$1->recv_messages,
                              "send_bytes", (long long)$1->send_bytes,
                              "recv_bytes", (long long)$1->recv_bytes,
                              "local_bytes", (long long)$1->local_bytes);
  if (gdap_py_append($result, d) != 0) SWIG_fail;
}
%typemap(in, numinputs=0) gdap_gemm_stats* stats (gdap_gemm_stats temp) {
  memset(&temp, 0, sizeof temp);
  temp.struct_size = (uint32_t)sizeof temp;
  $1 = &temp;
}
%typemap(argout) gdap_gemm_stats* stats {
  PyObject* d = Py_BuildValue("{s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L}", "rank", (long long)$1->rank,
                              "nranks", (long long)$1->nranks, "grid_rows", (long long)$1->grid_rows,
                              "grid_cols", (long long)$1->grid_cols,
                              "redistributed_a", (long long)$1->redistributed_a,
                              "redistributed_b", (long long)$1->redistributed_b,
                              "redistributed_c", (long long)$1->redistributed_c,
                              "redistribute_bytes", (long long)$1->redistribute_bytes,
                              "panels", (long long)$1->panels, "panel_bytes", (long long)$1->panel_bytes,
                              "local_m", (long long)$1->local_m, "local_n", (long long)$1->local_n,
                              "flops", (long long)$1->flops);
  if (gdap_py_append($result, d) != 0) SWIG_fail;
}

/* ---- calls that wait for other ranks (or work at length) run without the GIL -------------- */
/* Each notes how many Ctrl-Cs came before it (gdap_c.i), so that its interrupt check stops it at
 * the next one. */
%define GDAP_WITHOUT_GIL(NAME)
%exception NAME {
  gdap_py_call_sigints = gdap_py_sigints;
  Py_BEGIN_ALLOW_THREADS
  $action
  Py_END_ALLOW_THREADS
}
%enddef
GDAP_WITHOUT_GIL(gdap_comm_destroy) /* waits for the device work that last used the communicator's buffers */
GDAP_WITHOUT_GIL(gdap_comm_barrier)
GDAP_WITHOUT_GIL(gdap_map_create_collective)
GDAP_WITHOUT_GIL(gdap_plan_create) /* plans at length on large maps */
GDAP_WITHOUT_GIL(gdap_redistribute)
GDAP_WITHOUT_GIL(gdap_allreduce)
GDAP_WITHOUT_GIL(gdap_reduce_scatter)
GDAP_WITHOUT_GIL(gdap_reduce_axes)
GDAP_WITHOUT_GIL(gdap_halo_exchange)
GDAP_WITHOUT_GIL(gdap_halo_exchange_init)
GDAP_WITHOUT_GIL(gdap_exchange_start)
GDAP_WITHOUT_GIL(gdap_dnpy_save)
GDAP_WITHOUT_GIL(gdap_dnpy_load)
GDAP_WITHOUT_GIL(gdap_zarr_save)
GDAP_WITHOUT_GIL(gdap_zarr_load)
GDAP_WITHOUT_GIL(gdap_gemm_create)
GDAP_WITHOUT_GIL(gdap_gemm_execute)

/* ---- deprecated names: not wrapped (Python has the functions that replace them) ------------ */
%ignore gdap_save_dnpy; /* use gdap_dnpy_save */
%ignore gdap_load_dnpy; /* use gdap_dnpy_load */
%ignore gdap_save_zarr; /* use gdap_zarr_save */
%ignore gdap_load_zarr; /* use gdap_zarr_load */
%ignore gdap_zarr_shape; /* use gdap_zarr_shape_read */
