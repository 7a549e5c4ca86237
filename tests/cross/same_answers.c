/* The same dim_data gives the same answer in C and in Python (issue 22's cases: periodic padding,
 * padding on some ranks, boundary padding that differs on edge processes, version 0.9, look-ups near
 * the int64 limits, the grid and gap messages, out-of-range unstructured indices). This C program
 * embeds Python (answers.py beside it): each case's dictionaries are built here with gdap_dim_set_*,
 * checked here through the C API, turned into protocol dicts and checked again by gdap's Python
 * package; the status and gdap_last_error()'s text must be the same on both sides.
 * Prints "same answers: N cases, M failures". */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <gdap/gdap.h>

#include <stdio.h>
#include <string.h>

enum { MAX_DIMS = 8 };

static int failures, cases;

typedef struct {
  const char* name;
  int64_t nranks, ndim; /* nranks 0: one process, checked per process against `shape` */
  gdap_dim dims[MAX_DIMS];
  int64_t shape[2];
} Case;

/* Sets out[key] = value, taking the new reference `value`. */
static void set(PyObject* out, const char* key, PyObject* value) {
  PyDict_SetItemString(out, key, value);
  Py_XDECREF(value);
}

/* The protocol dict of a dictionary gdap_dim_set_* made: the keys it gives, and only those. */
static PyObject* dim_dict(const gdap_dim* d) {
  PyObject* out = Py_BuildValue("{s:C,s:L,s:L,s:L}", "dist_type", (int)d->dist_type, "size", (long long)d->size,
                                "proc_grid_size", (long long)d->proc_grid_size, "proc_grid_rank",
                                (long long)d->proc_grid_rank);
  if (d->dist_type == GDAP_DIST_BLOCK || d->dist_type == GDAP_DIST_CYCLIC) set(out, "start", PyLong_FromLongLong(d->start));
  if (d->dist_type == GDAP_DIST_BLOCK) set(out, "stop", PyLong_FromLongLong(d->stop));
  if (d->given & GDAP_KEY_PADDING) set(out, "padding", Py_BuildValue("(LL)", (long long)d->padding[0], (long long)d->padding[1]));
  if (d->given & GDAP_KEY_PERIODIC) set(out, "periodic", PyBool_FromLong(d->periodic));
  if (d->given & GDAP_KEY_BLOCK_SIZE) set(out, "block_size", PyLong_FromLongLong(d->block_size));
  if (d->dist_type == GDAP_DIST_UNSTRUCTURED) {
    PyObject* list = PyList_New((Py_ssize_t)d->num_indices);
    for (int64_t k = 0; k < d->num_indices; ++k) PyList_SET_ITEM(list, (Py_ssize_t)k, PyLong_FromLongLong(d->indices[k]));
    set(out, "indices", list);
  }
  if (d->given & GDAP_KEY_ONE_TO_ONE) set(out, "one_to_one", PyBool_FromLong(d->one_to_one));
  return out;
}

/* Compares C's verdict (status, text) with Python's (answers.verdict's (status, text)). */
static void compare(const char* name, gdap_status status, const char* text, PyObject* python) {
  ++cases;
  long py_status = -1;
  const char* py_text = NULL;
  if (python == NULL || !PyArg_ParseTuple(python, "ls", &py_status, &py_text)) {
    ++failures;
    fprintf(stderr, "FAIL %s: Python gave no verdict\n", name);
    if (PyErr_Occurred()) PyErr_Print();
    return;
  }
  if (py_status != (long)status || (status != GDAP_SUCCESS && strcmp(py_text, text) != 0)) {
    ++failures;
    fprintf(stderr, "FAIL %s:\n  C:      %s: %s\n  Python: %s: %s\n", name, gdap_status_string(status),
            status ? text : "", gdap_status_string((gdap_status)py_status), py_status ? py_text : "");
  }
}

static void check_case(PyObject* answers, const Case* c) {
  const int64_t ranks = c->nranks > 0 ? c->nranks : 1;
  gdap_status status;
  char text[1024];
  if (c->nranks == 0) {
    status = gdap_dims_validate(c->dims, c->ndim, c->shape);
  } else {
    gdap_map* map = NULL;
    status = gdap_map_create(&map, c->nranks, c->ndim, c->dims);
    gdap_map_destroy(map);
  }
  snprintf(text, sizeof text, "%s", gdap_last_error());
  PyObject* per_rank = PyList_New(0);
  for (int64_t r = 0; r < ranks; ++r) {
    PyObject* dim_data = PyTuple_New((Py_ssize_t)c->ndim);
    for (int64_t i = 0; i < c->ndim; ++i) PyTuple_SET_ITEM(dim_data, (Py_ssize_t)i, dim_dict(&c->dims[r * c->ndim + i]));
    PyList_Append(per_rank, dim_data);
    Py_DECREF(dim_data);
  }
  PyObject* shape = c->nranks == 0 ? Py_BuildValue("(L)", (long long)c->shape[0]) : Py_BuildValue("");
  PyObject* python = PyObject_CallMethod(answers, "verdict", "OO", per_rank, shape);
  compare(c->name, status, text, python);
  Py_XDECREF(python);
  Py_DECREF(shape);
  Py_DECREF(per_rank);
}

static gdap_dim block(int64_t size, int64_t P, int64_t r, int64_t start, int64_t stop) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, size, P, r, start, stop);
  return d;
}
static gdap_dim padded(gdap_dim d, int64_t lo, int64_t hi) {
  gdap_dim_set_padding(&d, lo, hi);
  return d;
}
static gdap_dim periodic(gdap_dim d) {
  gdap_dim_set_periodic(&d, 1);
  return d;
}
static gdap_dim unstructured(int64_t size, int64_t P, int64_t r, const int64_t* indices, int64_t n, int one_to_one) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_unstructured(&d, size, P, r, indices, n, one_to_one);
  return d;
}

static const int64_t kLow[] = {-1, 0}, kTwo[] = {2}, kReplicas[] = {0, 1}, kPast[] = {1, 7};

static void dictionary_cases(PyObject* answers) {
  const Case table[] = {
      {"periodic padded single rank (the text's valid case)", 0, 1, {periodic(padded(block(10, 1, 0, 0, 10), 2, 2))}, {10}},
      {"a periodic wrap as start = -padding[0]", 0, 1, {periodic(padded(block(10, 2, 0, -1, 6), 1, 1))}, {7}},
      {"a periodic wrap as stop = size + padding[1]", 0, 1, {periodic(padded(block(10, 2, 1, 4, 11), 1, 1))}, {7}},
      {"padding on one rank only", 2, 1, {padded(block(10, 2, 0, 0, 5), 1, 0), block(10, 2, 1, 5, 10)}, {0}},
      {"a missing padding against a halo", 2, 1, {padded(block(10, 2, 0, 0, 6), 0, 1), block(10, 2, 1, 5, 10)}, {0}},
      {"edge processes with different boundary padding", 4, 2,
       {block(4, 2, 0, 0, 2), block(6, 2, 0, 0, 3), block(4, 2, 0, 0, 2), block(6, 2, 1, 3, 6),
        block(4, 2, 1, 2, 4), padded(block(6, 2, 0, 0, 3), 2, 0), block(4, 2, 1, 2, 4), block(6, 2, 1, 3, 6)}, {0}},
      {"a periodic map in the text's form", 2, 1,
       {periodic(padded(block(10, 2, 0, 0, 6), 1, 1)), periodic(padded(block(10, 2, 1, 4, 10), 1, 2))}, {0}},
      {"a grid of 3 for 2 ranks", 2, 1, {block(10, 3, 0, 0, 5), block(10, 2, 1, 5, 10)}, {0}},
      {"a gap between blocks", 2, 1, {block(10, 2, 0, 0, 4), block(10, 2, 1, 5, 10)}, {0}},
      {"one_to_one index below 0", 2, 1, {unstructured(3, 2, 0, kLow, 2, 1), unstructured(3, 2, 1, kTwo, 1, 1)}, {0}},
      {"an index past size, replicas allowed", 2, 1,
       {unstructured(3, 2, 0, kReplicas, 2, 0), unstructured(3, 2, 1, kPast, 2, 0)}, {0}},
      {"an index nobody holds", 2, 1, {unstructured(3, 2, 0, kReplicas, 1, 1), unstructured(3, 2, 1, kTwo, 1, 1)}, {0}},
  };
  for (size_t k = 0; k < sizeof table / sizeof table[0]; ++k) check_case(answers, &table[k]);
}

/* Calls that take no dictionaries list: a version, a look-up near the int64 limits. */
static void call_cases(PyObject* answers) {
  const char* versions[] = {"0.10.0", "0.10.5", "0.9.0", "0.11.0", "1.0.0"};
  for (size_t k = 0; k < sizeof versions / sizeof versions[0]; ++k) {
    const gdap_status status = gdap_protocol_version_check(versions[k]);
    char text[1024];
    snprintf(text, sizeof text, "%s", gdap_last_error());
    PyObject* python = PyObject_CallMethod(answers, "version_verdict", "s", versions[k]);
    compare(versions[k], status, text, python);
    Py_XDECREF(python);
  }
  const gdap_dim d = periodic(block(INT64_MAX, 1, 0, 0, INT64_MAX));
  const int64_t lookups[] = {-INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MAX};
  for (size_t k = 0; k < sizeof lookups / sizeof lookups[0]; ++k) {
    int64_t local = -7;
    const gdap_status status = gdap_dim_global_to_local(&local, &d, lookups[k]);
    char text[1024];
    snprintf(text, sizeof text, "%s", gdap_last_error());
    PyObject* python = PyObject_CallMethod(answers, "lookup_verdict", "NL", dim_dict(&d), (long long)lookups[k]);
    compare("a look-up near the int64 limits", status, text, python);
    if (status == GDAP_SUCCESS && python != NULL && local != lookups[k]) {
      ++failures;
      fprintf(stderr, "FAIL look-up of %lld gave local %lld\n", (long long)lookups[k], (long long)local);
    }
    Py_XDECREF(python);
  }
}

int main(void) {
  Py_Initialize();
  PyObject* answers = PyImport_ImportModule("answers"); /* found through PYTHONPATH */
  if (answers == NULL) {
    PyErr_Print();
    ++failures;
  } else {
    dictionary_cases(answers);
    call_cases(answers);
    Py_DECREF(answers);
  }
  if (Py_FinalizeEx() != 0) ++failures;
  printf("same answers: %d cases, %d failures\n", cases, failures);
  return failures == 0 && cases > 0 ? 0 : 1;
}
