/* Cross-language zero copy, in one process: this C program embeds Python (consumer.py beside it).
 *   C -> Python: C makes each rank's section of a 6 x 8 block x block array on a 2 x 2 grid with
 *     gdap_array_create and fills it with global positions (1000 * row + column); Python takes each
 *     as a protocol distbuffer (a memoryview of the C memory and the dim_data dictionaries) with
 *     gdap.from_distarray, checks the values, and negates them in place. C sees the negated values
 *     in its own memory, and Python's gdap saw the same address.
 *   Python -> C: Python produces NumPy sections of a 6 x 8 array in column blocks over 4 ranks as
 *     distbuffers; C reads each dictionary, wraps the buffer's memory with gdap_array_wrap, and
 *     negates every element through gdap's view; Python sees the change in its own arrays.
 * Prints "cross-language: N sections each way, zero copies, 0 failures" when all is right. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <gdap/gdap.h>

#include <stdio.h>

enum { ROWS = 6, COLS = 8, GRID = 2, RANKS = 4 };

static int failures;

static void expect(int ok, const char* what, int rank) {
  if (ok) return;
  ++failures;
  fprintf(stderr, "FAIL rank %d: %s (gdap: %s)\n", rank, what, gdap_last_error());
  if (PyErr_Occurred()) PyErr_Print();
}

static double position(int64_t row, int64_t col) { return 1000.0 * (double)row + (double)col; }

/* ---- C -> Python */

static PyObject* block_dict(const gdap_dim* d) {
  return Py_BuildValue("{s:s,s:L,s:L,s:L,s:L,s:L}", "dist_type", "b", "size", (long long)d->size, "proc_grid_size",
                       (long long)d->proc_grid_size, "proc_grid_rank", (long long)d->proc_grid_rank, "start",
                       (long long)d->start, "stop", (long long)d->stop);
}

/* The protocol distbuffer of a C section: a writable memoryview of its memory cast to its dtype
 * and shape, and its dictionaries. */
static PyObject* distbuffer_of(gdap_array* a, const gdap_dim dims[2]) {
  void* data = NULL;
  int64_t shape[2];
  if (gdap_array_data(&data, a) != GDAP_SUCCESS || gdap_array_shape(shape, a) != GDAP_SUCCESS) return NULL;
  PyObject* bytes = PyMemoryView_FromMemory(data, (Py_ssize_t)(shape[0] * shape[1] * sizeof(double)), PyBUF_WRITE);
  PyObject* view = bytes ? PyObject_CallMethod(bytes, "cast", "s(LL)", "d", (long long)shape[0], (long long)shape[1])
                         : NULL;
  Py_XDECREF(bytes);
  if (!view) return NULL;
  return Py_BuildValue("{s:s,s:N,s:(NN)}", "__version__", "0.10.0", "buffer", view, "dim_data", block_dict(&dims[0]),
                       block_dict(&dims[1]));
}

static void c_to_python(PyObject* consumer) {
  for (int r = 0; r < RANKS; ++r) {
    const int gr = r / GRID, gc = r % GRID;
    gdap_dim dims[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
    gdap_dim_set_block(&dims[0], ROWS, GRID, gr, gr * ROWS / GRID, (gr + 1) * ROWS / GRID);
    gdap_dim_set_block(&dims[1], COLS, GRID, gc, gc * COLS / GRID, (gc + 1) * COLS / GRID);
    gdap_array* a = NULL;
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
    const gdap_device cpu = {GDAP_DEVICE_CPU, 0};
    expect(gdap_array_create(&a, f64, cpu, dims, 2) == GDAP_SUCCESS, "gdap_array_create", r);
    if (!a) continue;
    double* data = NULL;
    gdap_array_data((void**)&data, a);
    const int64_t n0 = dims[0].stop - dims[0].start, n1 = dims[1].stop - dims[1].start;
    for (int64_t i = 0; i < n0; ++i) {
      for (int64_t j = 0; j < n1; ++j) data[i * n1 + j] = position(dims[0].start + i, dims[1].start + j);
    }
    PyObject* distbuffer = distbuffer_of(a, dims);
    PyObject* result = distbuffer ? PyObject_CallMethod(consumer, "consume", "O", distbuffer) : NULL;
    unsigned long long seen = 0;
    long wrong = -1;
    expect(result && PyArg_ParseTuple(result, "Kl", &seen, &wrong), "consume() returned (address, wrong)", r);
    expect(seen == (unsigned long long)(uintptr_t)data, "Python's gdap saw the C section's own address", r);
    expect(wrong == 0, "Python read every element's global position", r);
    int64_t unchanged = 0;
    for (int64_t i = 0; i < n0; ++i) {
      for (int64_t j = 0; j < n1; ++j) unchanged += data[i * n1 + j] != -position(dims[0].start + i, dims[1].start + j);
    }
    expect(unchanged == 0, "C sees Python's in-place change in its own memory", r);
    Py_XDECREF(result);
    Py_XDECREF(distbuffer);
    gdap_array_destroy(a);
  }
}

/* ---- Python -> C */

static int64_t int_item(PyObject* dict, const char* key) {
  PyObject* v = PyDict_GetItemString(dict, key); /* borrowed */
  return v ? (int64_t)PyLong_AsLongLong(v) : -1;
}

/* A block dictionary read from a protocol dict (this demo's producer gives 'b' dimensions). */
static gdap_dim dim_from_dict(PyObject* dict) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, int_item(dict, "size"), int_item(dict, "proc_grid_size"), int_item(dict, "proc_grid_rank"),
                     int_item(dict, "start"), int_item(dict, "stop"));
  return d;
}

static void python_to_c(PyObject* consumer) {
  for (int r = 0; r < RANKS; ++r) {
    PyObject* distbuffer = PyObject_CallMethod(consumer, "produce", "iiii", r, RANKS, ROWS, COLS);
    PyObject* dim_data = distbuffer ? PyDict_GetItemString(distbuffer, "dim_data") : NULL; /* borrowed */
    PyObject* buffer = distbuffer ? PyDict_GetItemString(distbuffer, "buffer") : NULL;
    Py_buffer view;
    if (!buffer || !dim_data || PyObject_GetBuffer(buffer, &view, PyBUF_RECORDS) != 0) {
      expect(0, "produce() gave a distbuffer with a writable buffer", r);
      Py_XDECREF(distbuffer);
      continue;
    }
    const gdap_dim dims[2] = {dim_from_dict(PyTuple_GetItem(dim_data, 0)), dim_from_dict(PyTuple_GetItem(dim_data, 1))};
    const int64_t strides[2] = {(int64_t)(view.strides[0] / view.itemsize), (int64_t)(view.strides[1] / view.itemsize)};
    gdap_array* a = NULL;
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
    const gdap_device cpu = {GDAP_DEVICE_CPU, 0};
    expect(gdap_array_wrap(&a, view.buf, f64, cpu, strides, dims, 2) == GDAP_SUCCESS, "gdap_array_wrap", r);
    void* data = NULL;
    int64_t shape[2] = {0, 0}, local[2], global[2];
    if (a) {
      gdap_array_data(&data, a);
      gdap_array_shape(shape, a);
    }
    expect(data == view.buf, "gdap's view is the NumPy array's own memory", r);
    for (local[0] = 0; local[0] < shape[0]; ++local[0]) {
      for (local[1] = 0; local[1] < shape[1]; ++local[1]) {
        gdap_array_local_to_global(global, a, local);
        double* at = (double*)data + local[0] * strides[0] + local[1] * strides[1];
        expect(*at == position(global[0], global[1]), "C reads the global position Python wrote", r);
        *at = -*at;
      }
    }
    gdap_array_destroy(a);
    PyBuffer_Release(&view);
    PyObject* unchanged = PyObject_CallMethod(consumer, "changed_by_c", "O", distbuffer);
    expect(unchanged && PyLong_AsLong(unchanged) == 0, "Python sees C's in-place change in its own array", r);
    Py_XDECREF(unchanged);
    Py_DECREF(distbuffer);
  }
}

int main(void) {
  Py_Initialize();
  PyObject* consumer = PyImport_ImportModule("consumer"); /* found through PYTHONPATH */
  expect(consumer != NULL, "import consumer (PYTHONPATH holds tests/cross and the gdap package)", -1);
  if (consumer) {
    c_to_python(consumer);
    python_to_c(consumer);
    Py_DECREF(consumer);
  }
  if (Py_FinalizeEx() != 0) expect(0, "Py_FinalizeEx", -1);
  printf("cross-language: %d sections each way, zero copies, %d failures\n", RANKS, failures);
  return failures == 0 ? 0 : 1;
}
