/* gdap_c.i — the SWIG interface that makes the extension module gdap._gdap_c from the C ABI.
 *
 * Every function of gdap.h is wrapped, one Python function per C function with the same name.
 * The typemaps below only translate, they decide nothing (house rule 16):
 *  - a gdap_status result becomes an exception when it is not GDAP_SUCCESS: the class is
 *    gdap._errors.error_class(status) (gdap.ProtocolError, ...), the text is gdap_last_error();
 *    on success the function returns its out-parameters (none: None; one: it; several: a tuple);
 *  - out-parameters are not passed from Python: int64_t scalars come back as ints, arrays of
 *    ndim values (sized from the handle passed beside them) as tuples, handles as opaque
 *    pointer objects, DLPack tensors as PyCapsules;
 *  - const int64_t* arrays come from Python sequences of integers; their length is checked
 *    against the ndim the C call will read, so a short sequence is an error, never a read past
 *    its end; arrays of gdap_dim come from sequences of gdap_dim objects;
 *  - gdap_dtype and gdap_device are (code, bits, lanes) and (type, id) tuples;
 *  - raw addresses (gdap_array_wrap's data, gdap_map_owner_batch's arrays and stream, CUDA
 *    streams and NCCL communicators) are ints;
 *  - communicators and plans are opaque pointer objects like maps; gdap_comm_create_group returns
 *    a list of nranks of them, gdap_plan_stats_get a dict of the gdap_plan_stats counts;
 *  - halos and persistent exchanges too; gdap_halo_create's options are None or (corners, widths
 *    or None), and gdap_halo_stats_get returns a dict of the gdap_halo_stats counts;
 *  - IPC handles are bytes: gdap_ipc_export returns GDAP_IPC_HANDLE_SIZE of them, gdap_ipc_open
 *    takes any bytes-like object (its length is the size gdap checks);
 *  - collective calls (and gdap_plan_create, gdap_comm_destroy) release the GIL while they run: the
 *    ranks of an in-process group are Python threads that must all be inside the call at once.
 * The typemaps that follow from the headers alone (handles a call creates, the statistics dicts, the
 * calls without the GIL) are generated into gdap_c_generated.i by tools/abigen.
 * gdap_mpi.h and gdap_cuda.h are wrapped too: gdap_comm_from_mpi takes the communicator's Fortran
 * handle as an int (mpi4py: comm.py2f()), gdap_comm_from_nccl an ncclComm_t address.
 *
 * DLPack capsules follow the Python DLPack specification: an exported tensor is a capsule named
 * "dltensor_versioned" ("dltensor" for the unversioned struct) whose destructor calls the
 * tensor's deleter unless a consumer renamed it "used_dltensor_versioned" ("used_dltensor");
 * gdap_array_from_dlpack takes a producer's capsule and, once gdap has taken the tensor, renames
 * it to the "used_" name. gdap_py_tensor_from_pointer (below) is the one piece of glue with no C
 * counterpart: it packs memory that a Python object owns (a __cuda_array_interface__ producer)
 * as a DLPack tensor whose deleter releases that object, so that gdap's own ownership rules keep
 * the memory alive for every tensor later exported from the array.
 */
%module(package="gdap") gdap_c

%{
#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>
#include <gdap/gdap_mpi.h>
#include <dlpack/dlpack.h>

#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------------------ */

/* Raises gdap._errors.error_class(status)(python_text(message)): the message with the C calls it names
 * as the fix in their Python spelling; RuntimeError(message) if that module is missing. */
static void gdap_py_raise(int status, const char* message) {
  PyObject* cls = NULL;
  PyObject* text = NULL;
  PyObject* errors = PyImport_ImportModule("gdap._errors");
  if (errors != NULL) {
    cls = PyObject_CallMethod(errors, "error_class", "i", status);
    text = cls != NULL ? PyObject_CallMethod(errors, "python_text", "s", message) : NULL;
    Py_DECREF(errors);
  }
  if (cls == NULL || text == NULL) {
    PyErr_Clear();
    Py_XDECREF(cls);
    cls = PyExc_RuntimeError;
    Py_INCREF(cls);
    Py_XDECREF(text);
    text = PyUnicode_FromString(message);
  }
  if (text != NULL) PyErr_SetObject(cls, text);
  Py_XDECREF(text);
  Py_DECREF(cls);
}

static void gdap_py_raise_status(gdap_status status) { gdap_py_raise((int)status, gdap_last_error()); }

/* A str argument (or None: NULL) as the C string gdap reads; 0, or -1 with TypeError, or ValueError
 * for a str holding a NUL character (its C string would end there and name another file or
 * segment: "out/x\0y" would write out/x_0.dnpy). */
static int gdap_py_c_string(PyObject* input, const char* what, char** out) {
  *out = NULL;
  if (input == Py_None) return 0;
  Py_ssize_t n = 0;
  const char* s = PyUnicode_Check(input) ? PyUnicode_AsUTF8AndSize(input, &n) : NULL;
  if (s == NULL) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s must be a str or None, not %s", what, Py_TYPE(input)->tp_name);
    return -1;
  }
  if ((Py_ssize_t)strlen(s) != n) {
    PyErr_Format(PyExc_ValueError, "%s holds a NUL character at position %zd: a C string would end there", what,
                 (Py_ssize_t)strlen(s));
    return -1;
  }
  *out = (char*)s;
  return 0;
}

/* ---- results: a list of outputs while the wrapper runs, collapsed when it returns -------- */

static int gdap_py_append(PyObject* outputs, PyObject* value) {
  if (value == NULL) return -1;
  int rc = PyList_Append(outputs, value);
  Py_DECREF(value);
  return rc;
}

static PyObject* gdap_py_collapse(PyObject* outputs) {
  if (outputs == NULL || !PyList_Check(outputs)) return outputs;
  PyObject* result;
  Py_ssize_t n = PyList_GET_SIZE(outputs);
  if (n == 0) {
    result = Py_None;
    Py_INCREF(result);
  } else if (n == 1) {
    result = PyList_GET_ITEM(outputs, 0);
    Py_INCREF(result);
  } else {
    result = PyList_AsTuple(outputs);
  }
  Py_DECREF(outputs);
  return result;
}

/* ---- int64 arrays that know their length ------------------------------------------------- */
/* One int64 before the first element holds the count, so that a check typemap can compare the
 * length of a sequence with the ndim the C function will read. */

static int64_t* gdap_py_i64_alloc(int64_t n) {
  int64_t* block = (int64_t*)calloc((size_t)(n > 0 ? n : 0) + 1, sizeof(int64_t));
  if (block == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  block[0] = n;
  return block + 1;
}

static int64_t gdap_py_i64_len(const int64_t* a) { return a == NULL ? -1 : a[-1]; }

static void gdap_py_i64_free(const int64_t* a) {
  if (a != NULL) free((void*)(a - 1));
}

/* One integer (an int, a NumPy integer, anything with __index__) as int64; on failure -1 with a
 * gdap error set that names `what`: InvalidArgumentError for a non-integer, SizeOverflowError for
 * a value outside int64 (never Python's bare TypeError or OverflowError). */
static int gdap_py_i64_from_obj(PyObject* input, const char* what, int64_t* out) {
  PyObject* index = PyNumber_Index(input);
  long long v = index != NULL ? PyLong_AsLongLong(index) : -1;
  if (v == -1 && PyErr_Occurred()) {
    const int overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
    PyErr_Clear();
    PyObject* text = overflow ? PyObject_Repr(index) : NULL;
    const char* shown = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
    char message[240];
    if (overflow) {
      snprintf(message, sizeof message, "%s (%.60s) does not fit in int64", what, shown != NULL ? shown : "?");
    } else {
      snprintf(message, sizeof message, "%s must be an integer, not %.80s", what, Py_TYPE(input)->tp_name);
    }
    Py_XDECREF(text);
    Py_XDECREF(index);
    PyErr_Clear();
    gdap_py_raise(overflow ? GDAP_ERR_OVERFLOW : GDAP_ERR_INVALID_ARGUMENT, message);
    return -1;
  }
  Py_XDECREF(index);
  *out = (int64_t)v;
  return 0;
}

/* A sequence of integers (ints, NumPy integers, anything with __index__) as an int64 array;
 * None as NULL when allow_none. NULL with an exception set on failure: a gdap error naming the
 * entry ("dimension 1: shape[1] (...) does not fit in int64") for an entry gdap_py_i64_from_obj
 * refuses. */
static int gdap_py_i64_from_seq(PyObject* input, const char* what, int allow_none, int64_t** out) {
  *out = NULL;
  if (input == Py_None && allow_none) return 0;
  PyObject* seq = PySequence_Fast(input, "");
  if (seq == NULL) {
    char message[200];
    PyErr_Clear();
    snprintf(message, sizeof message, "%s must be a sequence of integers, not %.80s", what, Py_TYPE(input)->tp_name);
    gdap_py_raise(GDAP_ERR_INVALID_ARGUMENT, message);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int64_t* a = gdap_py_i64_alloc((int64_t)n);
  if (a == NULL) {
    Py_DECREF(seq);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    char entry[120];
    if (strcmp(what, "axes") == 0 || strcmp(what, "roles") == 0) {  /* one entry per axis / rank */
      snprintf(entry, sizeof entry, "%s[%zd]", what, i);
    } else {  /* one entry per dimension */
      snprintf(entry, sizeof entry, "dimension %zd: %s[%zd]", i, what, i);
    }
    if (gdap_py_i64_from_obj(PySequence_Fast_GET_ITEM(seq, i), entry, &a[i]) != 0) {
      gdap_py_i64_free(a);
      Py_DECREF(seq);
      return -1;
    }
  }
  Py_DECREF(seq);
  *out = a;
  return 0;
}

static PyObject* gdap_py_i64_tuple(const int64_t* a, int64_t n) {
  PyObject* t = PyTuple_New((Py_ssize_t)(n > 0 ? n : 0));
  for (int64_t i = 0; t != NULL && i < n; ++i) {
    PyObject* v = PyLong_FromLongLong((long long)a[i]);
    if (v == NULL) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
  }
  return t;
}

/* Fails (InvalidArgumentError) unless the sequence `a` holds exactly `ndim` values. */
static int gdap_py_check_len(const int64_t* a, int64_t ndim, const char* what) {
  if (a == NULL || gdap_py_i64_len(a) == ndim) return 0;
  char message[200];
  snprintf(message, sizeof message, "%s has %lld values but the call reads %lld (ndim)", what,
           (long long)gdap_py_i64_len(a), (long long)ndim);
  gdap_py_raise(GDAP_ERR_INVALID_ARGUMENT, message);
  return -1;
}

static int64_t gdap_py_map_ndim(const gdap_map* map) {
  int64_t n = 0;
  return map != NULL && gdap_map_ndim(&n, map) == GDAP_SUCCESS ? n : 0;
}

static int64_t gdap_py_array_ndim(const gdap_array* array) {
  int64_t n = 0;
  return array != NULL && gdap_array_ndim(&n, array) == GDAP_SUCCESS ? n : 0;
}

/* Parses a tuple (or list) of 2 or 3 values with PyArg_ParseTuple's `format`; 0 with TypeError set. */
static int gdap_py_parse_pair_or_triple(PyObject* input, const char* format, void* a, void* b, void* c) {
  if (!PyTuple_Check(input) && !PyList_Check(input)) {
    PyErr_SetString(PyExc_TypeError, strchr(format, ';') + 1);
    return 0;
  }
  PyObject* t = PySequence_Tuple(input);
  if (t == NULL) return 0;
  int ok = c != NULL ? PyArg_ParseTuple(t, format, a, b, c) : PyArg_ParseTuple(t, format, a, b);
  Py_DECREF(t);
  return ok;
}

/* ---- arrays of gdap_dim ---------------------------------------------------------------- */
/* Copied from a sequence of gdap_dim objects into one block, its count kept before it. */

typedef struct gdap_py_dims {
  int64_t count;
  int64_t pad; /* keeps the gdap_dim array 16-byte aligned */
  gdap_dim dims[1];
} gdap_py_dims;

static void gdap_py_dims_free(const gdap_dim* dims) {
  if (dims != NULL) free((char*)dims - offsetof(gdap_py_dims, dims));
}

static int64_t gdap_py_dims_len(const gdap_dim* dims) {
  return dims == NULL ? -1 : ((const gdap_py_dims*)((const char*)dims - offsetof(gdap_py_dims, dims)))->count;
}

/* A sequence of gdap_dim objects, copied into a new block; -1 with an exception on failure. */
static int gdap_py_dims_from_seq(PyObject* input, gdap_dim** out) {
  *out = NULL;
  PyObject* seq = PySequence_Fast(input, "dims must be a sequence of gdap_dim objects");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  gdap_py_dims* block = (gdap_py_dims*)calloc(1, sizeof(gdap_py_dims) + (size_t)n * sizeof(gdap_dim));
  if (block == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  block->count = (int64_t)n;
  gdap_dim_init(&block->dims[0]); /* what a reader of dims[0].struct_size finds when n == 0 */
  for (Py_ssize_t i = 0; i < n; ++i) {
    gdap_dim* item = NULL;
    int res = SWIG_ConvertPtr(PySequence_Fast_GET_ITEM(seq, i), (void**)&item, SWIGTYPE_p_gdap_dim, 0);
    if (!SWIG_IsOK(res) || item == NULL) {
      PyErr_Format(PyExc_TypeError, "dims[%zd] must be a gdap_dim, not %.80s", i,
                   Py_TYPE(PySequence_Fast_GET_ITEM(seq, i))->tp_name);
      free(block);
      Py_DECREF(seq);
      return -1;
    }
    block->dims[i] = *item;
  }
  Py_DECREF(seq);
  *out = block->dims;
  return 0;
}

/* ---- arrays of gdap_axis_layout ---------------------------------------------------------- */
/* One block holding the count, the axes and each axis's copy of its lengths. */

typedef struct gdap_py_axes {
  int64_t count;
  int64_t pad;
  gdap_axis_layout axes[1];
} gdap_py_axes;

static int64_t gdap_py_axes_len(const gdap_axis_layout* axes) {
  return axes == NULL ? -1 : ((const gdap_py_axes*)((const char*)axes - offsetof(gdap_py_axes, axes)))->count;
}

static void gdap_py_axes_free(const gdap_axis_layout* axes) {
  if (axes == NULL) return;
  for (int64_t i = 0; i < gdap_py_axes_len(axes); ++i) gdap_py_i64_free(axes[i].lengths);
  free((char*)axes - offsetof(gdap_py_axes, axes));
}

/* One (dist_type, size, grid_size, block_size, lengths or None, halo, periodic) tuple. */
static int gdap_py_axis_from_tuple(PyObject* item, Py_ssize_t i, gdap_axis_layout* axis) {
  PyObject* lengths = NULL;
  long long size, grid, block, halo;
  int dist, periodic;
  if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "iLLLOLp", &dist, &size, &grid, &block, &lengths, &halo, &periodic)) {
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "axes[%zd] must be a tuple (dist_type, size, grid_size, block_size, lengths or "
                   "None, halo, periodic)", i);
    }
    return -1;
  }
  axis->dist_type = dist;
  axis->size = (int64_t)size;
  axis->grid_size = (int64_t)grid;
  axis->block_size = (int64_t)block;
  axis->halo = (int64_t)halo;
  axis->periodic = periodic;
  return gdap_py_i64_from_seq(lengths, "lengths", 1, (int64_t**)&axis->lengths);
}

/* A sequence of axis tuples, copied into a new block; -1 with an exception on failure. */
static int gdap_py_axes_from_seq(PyObject* input, gdap_axis_layout** out) {
  *out = NULL;
  PyObject* seq = PySequence_Fast(input, "axes must be a sequence of tuples");
  if (seq == NULL) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  gdap_py_axes* block = (gdap_py_axes*)calloc(1, sizeof(gdap_py_axes) + (size_t)n * sizeof(gdap_axis_layout));
  if (block == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  block->count = 0;
  const gdap_axis_layout init = GDAP_AXIS_LAYOUT_INIT;
  block->axes[0] = init; /* what a reader of axes[0].struct_size finds when n == 0 */
  for (Py_ssize_t i = 0; i < n; ++i) {
    block->axes[i] = init;
    block->count = (int64_t)i + 1; /* so that a failure frees the lengths read so far */
    if (gdap_py_axis_from_tuple(PySequence_Fast_GET_ITEM(seq, i), i, &block->axes[i]) != 0) {
      Py_DECREF(seq);
      gdap_py_axes_free(block->axes);
      return -1;
    }
  }
  Py_DECREF(seq);
  *out = block->axes;
  return 0;
}

/* ---- DLPack capsules ------------------------------------------------------------------- */

static void gdap_py_versioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor_versioned")) return; /* a consumer took it */
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback); /* keep any exception in flight */
  struct DLManagedTensorVersioned* t =
      (struct DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
  if (t == NULL) {
    PyErr_WriteUnraisable(capsule);
  } else if (t->deleter != NULL) {
    t->deleter(t);
  }
  PyErr_Restore(type, value, traceback);
}

static void gdap_py_unversioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  struct DLManagedTensor* t = (struct DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
  if (t == NULL) {
    PyErr_WriteUnraisable(capsule);
  } else if (t->deleter != NULL) {
    t->deleter(t);
  }
  PyErr_Restore(type, value, traceback);
}

/* The tensor inside a producer's capsule, which must still be unconsumed. */
static void* gdap_py_capsule_tensor(PyObject* capsule, const char* name, const char* used_name) {
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError, "expected a DLPack PyCapsule named '%s', not %.80s", name, Py_TYPE(capsule)->tp_name);
    return NULL;
  }
  if (PyCapsule_IsValid(capsule, used_name)) {
    PyErr_Format(PyExc_ValueError, "the DLPack capsule was already consumed (it is named '%s')", used_name);
    return NULL;
  }
  if (!PyCapsule_IsValid(capsule, name)) {
    const char* actual = PyCapsule_GetName(capsule);
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "expected a DLPack capsule named '%s', not '%.80s'", name, actual ? actual : "(null)");
    return NULL;
  }
  return PyCapsule_GetPointer(capsule, name);
}

/* ---- Ctrl-C in collective calls ------------------------------------------------------------ */

/* SIGINTs that gdap's handler noted (gdap/_comm.py installs it in place of Python's default one),
 * and, per thread, how many there were when its collective call began. */
static volatile long gdap_py_sigints = 0;
static _Thread_local long gdap_py_call_sigints = 0;

/* The interrupt check of every Comm (gdap_comm_set_interrupt), run on the waiting thread every
 * 100 ms or so. On the main thread it runs Python's pending signal handlers: Ctrl-C's raises
 * KeyboardInterrupt, which stays set and which the call then raises (the gdap_status typemap). On
 * any thread it stops a call during which a Ctrl-C came (the main thread may be in join()). While
 * the interpreter shuts down it stops every wait: nothing is left to wait for. */
static int gdap_py_interrupted(void* user) {
  (void)user;
#if PY_VERSION_HEX >= 0x030D0000
  if (Py_IsFinalizing()) return 1;
#else
  if (_Py_IsFinalizing()) return 1;
#endif
  PyGILState_STATE state = PyGILState_Ensure();
  const int raised = PyErr_CheckSignals() != 0;
  PyGILState_Release(state);
  return raised || gdap_py_sigints != gdap_py_call_sigints;
}

/* ---- memory a Python object owns, as a DLPack tensor ------------------------------------- */

typedef struct gdap_py_owned_tensor {
  struct DLManagedTensorVersioned managed;
  PyObject* owner;
  int64_t extents[1]; /* shape then strides: 2 * ndim values */
} gdap_py_owned_tensor;

static void gdap_py_owned_tensor_deleter(struct DLManagedTensorVersioned* self) {
  gdap_py_owned_tensor* t = (gdap_py_owned_tensor*)self->manager_ctx;
  /* gdap may drop its last reference on any thread, with or without the GIL. */
  if (t->owner != NULL && Py_IsInitialized()) {
    PyGILState_STATE state = PyGILState_Ensure();
    Py_DECREF(t->owner);
    PyGILState_Release(state);
  }
  free(t);
}
%}


/* The DLPack version of the dlpack.h gdap was built with: what gdap asks producers for. */
%constant int GDAP_PY_DLPACK_MAJOR = DLPACK_MAJOR_VERSION;
%constant int GDAP_PY_DLPACK_MINOR = DLPACK_MINOR_VERSION;

%include <stdint.i>

/* Every int64 argument: a gdap error naming it for a non-integer or a value past int64. */
%typemap(in) int64_t {
  if (gdap_py_i64_from_obj($input, "$1_name", &$1) != 0) SWIG_fail;
}

/* ---- gdap_status: raise, or return the out-parameters ------------------------------------ */

%typemap(out) gdap_status {
  if ($1 == GDAP_ERR_INTERRUPTED && PyErr_Occurred()) SWIG_fail; /* the signal handler's own exception */
  if ($1 != GDAP_SUCCESS) {
    gdap_py_raise_status($1);
    SWIG_fail;
  }
  $result = PyList_New(0);
  if ($result == NULL) SWIG_fail;
}
%typemap(ret) gdap_status {
  $result = gdap_py_collapse($result);
}

/* ---- string inputs: a str (or None for NULL) -------------------------------------------------- */

/* A str holding a NUL character raises ValueError (gdap_py_c_string). */
%typemap(in) const char* prefix, const char* path, const char* name, const char* version {
  if (gdap_py_c_string($input, "$1_name", &$1) != 0) SWIG_fail;
}

/* ---- scalar outputs ------------------------------------------------------------------------ */

%typemap(in, numinputs=0) int64_t* count (int64_t temp), int64_t* extent (int64_t temp),
    int64_t* num_runs (int64_t temp), int64_t* ndim (int64_t temp), int64_t* nranks (int64_t temp),
    int64_t* rank (int64_t temp), int64_t* size (int64_t temp) {
  temp = 0;
  $1 = &temp;
}
%typemap(argout) int64_t* count, int64_t* extent, int64_t* num_runs, int64_t* ndim, int64_t* nranks, int64_t* rank,
    int64_t* size {
  if (gdap_py_append($result, PyLong_FromLongLong((long long)*$1)) != 0) SWIG_fail;
}

/* gdap_dim_global_to_local / gdap_dim_local_to_global: one index out, the dimension in. */
%typemap(in) (int64_t* local, const gdap_dim* dim) (int64_t temp, int res),
             (int64_t* global, const gdap_dim* dim) (int64_t temp, int res) {
  temp = 0;
  $1 = &temp;
  res = SWIG_ConvertPtr($input, (void**)&$2, $descriptor(gdap_dim*), 0);
  if (!SWIG_IsOK(res)) SWIG_exception_fail(SWIG_ArgError(res), "in method '$symname', expected a gdap_dim");
}
%typemap(argout) (int64_t* local, const gdap_dim* dim), (int64_t* global, const gdap_dim* dim) {
  if (gdap_py_append($result, PyLong_FromLongLong((long long)*$1)) != 0) SWIG_fail;
}

%typemap(in, numinputs=0) int* readonly (int temp) {
  temp = 0;
  $1 = &temp;
}
%typemap(argout) int* readonly {
  if (gdap_py_append($result, PyBool_FromLong(*$1)) != 0) SWIG_fail;
}

%typemap(in, numinputs=0) const char** version (const char* temp) {
  temp = NULL;
  $1 = ($1_ltype)&temp;
}
%typemap(argout) const char** version {
  if (gdap_py_append($result, PyUnicode_FromString(*$1 ? *$1 : "")) != 0) SWIG_fail;
}

%typemap(in, numinputs=0) void** data (void* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) void** data {
  if (gdap_py_append($result, PyLong_FromVoidPtr(*$1)) != 0) SWIG_fail;
}

/* ---- ndim outputs, sized from the handle that follows them -------------------------------- */

%define GDAP_NDIM_OUTPUT(NAME, HANDLE, VAR, NDIM)
%typemap(in) (int64_t* NAME, const HANDLE* VAR) (int res) {
  res = SWIG_ConvertPtr($input, (void**)&$2, $descriptor(HANDLE*), 0);
  if (!SWIG_IsOK(res)) SWIG_exception_fail(SWIG_ArgError(res), "in method '$symname', expected a HANDLE handle");
  $1 = gdap_py_i64_alloc(NDIM($2));
  if ($1 == NULL) SWIG_fail;
}
%typemap(argout) (int64_t* NAME, const HANDLE* VAR) {
  if (gdap_py_append($result, gdap_py_i64_tuple($1, gdap_py_i64_len($1))) != 0) SWIG_fail;
}
%typemap(freearg) (int64_t* NAME, const HANDLE* VAR) {
  gdap_py_i64_free($1);
}
%enddef

/* The parameter names of gdap.h: `map` for a gdap_map, `array` for a gdap_array. */
GDAP_NDIM_OUTPUT(shape, gdap_map, map, gdap_py_map_ndim)
GDAP_NDIM_OUTPUT(grid_shape, gdap_map, map, gdap_py_map_ndim)
GDAP_NDIM_OUTPUT(local, gdap_map, map, gdap_py_map_ndim)
GDAP_NDIM_OUTPUT(global, gdap_map, map, gdap_py_map_ndim)
GDAP_NDIM_OUTPUT(shape, gdap_array, array, gdap_py_array_ndim)
GDAP_NDIM_OUTPUT(strides, gdap_array, array, gdap_py_array_ndim)
GDAP_NDIM_OUTPUT(local, gdap_array, array, gdap_py_array_ndim)
GDAP_NDIM_OUTPUT(global, gdap_array, array, gdap_py_array_ndim)

/* ---- int64 array inputs -------------------------------------------------------------------- */

%typemap(in) const int64_t* global, const int64_t* local, const int64_t* coords {
  if (gdap_py_i64_from_seq($input, "$1_name", 0, (int64_t**)&$1) != 0) SWIG_fail;
}
%typemap(in) const int64_t* shape, const int64_t* strides {
  if (gdap_py_i64_from_seq($input, "$1_name", 1, (int64_t**)&$1) != 0) SWIG_fail;
}
%typemap(freearg) const int64_t* global, const int64_t* local, const int64_t* coords, const int64_t* shape,
    const int64_t* strides {
  gdap_py_i64_free($1);
}

/* The axes of gdap_reduce_axes: a sequence of ints (empty: none), or None for every axis. */
%typemap(in) (const int64_t* axes, int64_t naxes) {
  if (gdap_py_i64_from_seq($input, "axes", 1, (int64_t**)&$1) != 0) SWIG_fail;
  $2 = $1 == NULL ? 0 : gdap_py_i64_len($1);
}
%typemap(freearg) (const int64_t* axes, int64_t naxes) {
  gdap_py_i64_free($1);
}

/* Destination roles: in, a sequence of ints (gdap_plan_create_with_roles); out, as many as the
 * int given for them (gdap_plan_roles_keeping), returned as a tuple. */
%typemap(in) (const int64_t* roles, int64_t nroles) {
  if (gdap_py_i64_from_seq($input, "roles", 0, (int64_t**)&$1) != 0) SWIG_fail;
  $2 = gdap_py_i64_len($1);
}
%typemap(freearg) (const int64_t* roles, int64_t nroles) {
  gdap_py_i64_free($1);
}
%typemap(in) (int64_t* roles, int64_t nroles) {
  if (gdap_py_i64_from_obj($input, "nroles", &$2) != 0) SWIG_fail;
  if ($2 < 0) {
    gdap_py_raise(GDAP_ERR_INVALID_ARGUMENT, "nroles must be >= 0");
    SWIG_fail;
  }
  $1 = gdap_py_i64_alloc($2);
  if ($1 == NULL) SWIG_fail;
}
%typemap(argout) (int64_t* roles, int64_t nroles) {
  if (gdap_py_append($result, gdap_py_i64_tuple($1, $2)) != 0) SWIG_fail;
}
%typemap(freearg) (int64_t* roles, int64_t nroles) {
  gdap_py_i64_free($1);
}

/* Lengths: each array must hold the ndim its function reads. */
%typemap(check) (const gdap_map* map, const int64_t* global) {
  if (gdap_py_check_len($2, gdap_py_map_ndim($1), "global") != 0) SWIG_fail;
}
%typemap(check) (const gdap_map* map, int64_t rank, const int64_t* local) {
  if (gdap_py_check_len($3, gdap_py_map_ndim($1), "local") != 0) SWIG_fail;
}
%typemap(check) (const gdap_array* array, const int64_t* global) {
  if (gdap_py_check_len($2, gdap_py_array_ndim($1), "global") != 0) SWIG_fail;
}
%typemap(check) (const gdap_array* array, const int64_t* local) {
  if (gdap_py_check_len($2, gdap_py_array_ndim($1), "local") != 0) SWIG_fail;
}
%typemap(check) (int64_t ndim, const int64_t* shape) {
  if (gdap_py_check_len($2, $1, "shape") != 0) SWIG_fail;
}
%typemap(check) (const int64_t* strides, const gdap_dim* dims, int64_t ndim) {
  if (gdap_py_check_len($1, $3, "strides") != 0) SWIG_fail;
}

/* Process grids: the grid shape gives ndim; coordinates in and out have that length. */
%typemap(in) (int64_t* coords, int64_t ndim, const int64_t* grid_shape) {
  if (gdap_py_i64_from_seq($input, "grid_shape", 0, (int64_t**)&$3) != 0) SWIG_fail;
  $2 = gdap_py_i64_len($3);
  $1 = gdap_py_i64_alloc($2);
  if ($1 == NULL) SWIG_fail;
}
%typemap(argout) (int64_t* coords, int64_t ndim, const int64_t* grid_shape) {
  if (gdap_py_append($result, gdap_py_i64_tuple($1, $2)) != 0) SWIG_fail;
}
%typemap(freearg) (int64_t* coords, int64_t ndim, const int64_t* grid_shape) {
  gdap_py_i64_free($1);
  gdap_py_i64_free($3);
}
%typemap(in) (int64_t ndim, const int64_t* grid_shape) {
  if (gdap_py_i64_from_seq($input, "grid_shape", 0, (int64_t**)&$2) != 0) SWIG_fail;
  $1 = gdap_py_i64_len($2);
}
%typemap(freearg) (int64_t ndim, const int64_t* grid_shape) {
  gdap_py_i64_free($2);
}

/* gdap_grid_balance: the grid shape in (0 = free) and out, as a tuple of the same length. */
%typemap(in) (int64_t* grid_shape, int64_t ndim) {
  if (gdap_py_i64_from_seq($input, "grid_shape", 0, (int64_t**)&$1) != 0) SWIG_fail;
  $2 = gdap_py_i64_len($1);
}
%typemap(argout) (int64_t* grid_shape, int64_t ndim) {
  if (gdap_py_append($result, gdap_py_i64_tuple($1, $2)) != 0) SWIG_fail;
}
%typemap(freearg) (int64_t* grid_shape, int64_t ndim) {
  gdap_py_i64_free($1);
}

/* gdap_map_create_grid's axes: a sequence of (dist_type, size, grid_size, block_size, lengths or
 * None, halo, periodic) tuples; the lengths arrays live until the call returns. */
%typemap(in) (int64_t ndim, const gdap_axis_layout* axes) {
  if (gdap_py_axes_from_seq($input, (gdap_axis_layout**)&$2) != 0) SWIG_fail;
  $1 = gdap_py_axes_len($2);
}
%typemap(freearg) (int64_t ndim, const gdap_axis_layout* axes) {
  gdap_py_axes_free($2);
}

/* gdap_map_create_unstructured: counts holds one value per rank (and shape one per dimension). */
%typemap(in) const int64_t* counts {
  if (gdap_py_i64_from_seq($input, "counts", 0, (int64_t**)&$1) != 0) SWIG_fail;
}
%typemap(freearg) const int64_t* counts {
  gdap_py_i64_free($1);
}
%typemap(check) (int64_t nranks, int64_t ndim, const int64_t* shape, const int64_t* counts) {
  if (gdap_py_check_len($3, $2, "shape") != 0) SWIG_fail;
  if (gdap_py_i64_len($4) != $1) {
    char message[200];
    snprintf(message, sizeof message, "counts has %lld values but nranks is %lld", (long long)gdap_py_i64_len($4),
             (long long)$1);
    gdap_py_raise(GDAP_ERR_INVALID_ARGUMENT, message);
    SWIG_fail;
  }
}
%typemap(check) (const int64_t* grid_shape, const int64_t* coords) {
  if (gdap_py_check_len($2, gdap_py_i64_len($1), "coords") != 0) SWIG_fail;
}

/* ---- owners and runs: buffers sized by the capacity argument ----------------------------- */

%typemap(in, numinputs=0) (int64_t* ranks, int64_t* count) (int64_t temp) {
  $1 = NULL;
  temp = 0;
  $2 = &temp;
}
%typemap(check) (int64_t* ranks, int64_t* count, const gdap_map* map, const int64_t* global, int64_t capacity) {
  if (gdap_py_check_len($4, gdap_py_map_ndim($3), "global") != 0) SWIG_fail;
  if ($5 > 0) {
    $1 = gdap_py_i64_alloc($5);
    if ($1 == NULL) SWIG_fail;
  }
}
%typemap(argout) (int64_t* ranks, int64_t* count) {
  int64_t n = *$2 < gdap_py_i64_len($1) ? *$2 : gdap_py_i64_len($1);
  if (gdap_py_append($result, gdap_py_i64_tuple($1, n)) != 0) SWIG_fail;
  if (gdap_py_append($result, PyLong_FromLongLong((long long)*$2)) != 0) SWIG_fail;
}
%typemap(freearg) (int64_t* ranks, int64_t* count) {
  gdap_py_i64_free($1);
}

%typemap(in, numinputs=0) (gdap_run* runs, int64_t* written) (int64_t temp) {
  $1 = NULL;
  temp = 0;
  $2 = &temp;
}
%typemap(check) (gdap_run* runs, int64_t* written, const gdap_dim* dim, int64_t first, int64_t capacity) {
  if ($5 > 0 && ($1 = (gdap_run*)calloc((size_t)$5, sizeof(gdap_run))) == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
}
%typemap(check) (gdap_run* runs, int64_t* written, const gdap_map* map, int64_t rank, int64_t dim, int64_t first,
                 int64_t capacity) {
  if ($7 > 0 && ($1 = (gdap_run*)calloc((size_t)$7, sizeof(gdap_run))) == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
}
%typemap(argout) (gdap_run* runs, int64_t* written) {
  PyObject* list = PyList_New(0);
  for (int64_t i = 0; list != NULL && i < *$2; ++i) {
    if (gdap_py_append(list, Py_BuildValue("(LLL)", (long long)$1[i].global_start, (long long)$1[i].length,
                                            (long long)$1[i].local_start)) != 0) {
      Py_CLEAR(list);
    }
  }
  if (gdap_py_append($result, list) != 0) SWIG_fail;
}
%typemap(freearg) (gdap_run* runs, int64_t* written) {
  free($1);
}

/* ---- gdap_map_owner_batch: raw addresses (host or device memory) ------------------------ */

%typemap(in) int64_t* ranks, int64_t* locals, const int64_t* globals, void* stream, void* data, void* nccl_comm {
  $1 = $input == Py_None ? NULL : ($1_ltype)PyLong_AsVoidPtr($input);
  if ($1 == NULL && PyErr_Occurred()) {
    PyErr_Clear();
    SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument '$1_name' must be an address (int) or None");
  }
}

/* ---- dtype and device as tuples ----------------------------------------------------------- */

%typemap(in) gdap_dtype {
  unsigned int code = 0, bits = 0, lanes = 0;
  if (!gdap_py_parse_pair_or_triple($input, "III;dtype must be a (code, bits, lanes) tuple", &code, &bits, &lanes)) {
    SWIG_fail;
  }
  if (code > 255 || bits > 255 || lanes > 65535) SWIG_exception_fail(SWIG_OverflowError, "dtype field out of range");
  $1.code = (uint8_t)code;
  $1.bits = (uint8_t)bits;
  $1.lanes = (uint16_t)lanes;
}
%typemap(in) gdap_device {
  int type = 0, id = 0;
  if (!gdap_py_parse_pair_or_triple($input, "ii;device must be a (type, id) tuple", &type, &id, NULL)) SWIG_fail;
  $1.type = type;
  $1.id = id;
}
%typemap(in, numinputs=0) gdap_dtype* dtype (gdap_dtype temp) {
  memset(&temp, 0, sizeof temp);
  $1 = &temp;
}
%typemap(argout) gdap_dtype* dtype {
  if (gdap_py_append($result, Py_BuildValue("(iii)", (int)$1->code, (int)$1->bits, (int)$1->lanes)) != 0) SWIG_fail;
}
%typemap(in, numinputs=0) gdap_device* device (gdap_device temp) {
  memset(&temp, 0, sizeof temp);
  $1 = &temp;
}
%typemap(argout) gdap_device* device {
  if (gdap_py_append($result, Py_BuildValue("(ii)", (int)$1->type, (int)$1->id)) != 0) SWIG_fail;
}

/* ---- gdap_dim: objects, sequences of them, and copies handed out ------------------------- */

%typemap(in) (const gdap_dim* dims, int64_t ndim) {
  if (gdap_py_dims_from_seq($input, (gdap_dim**)&$1) != 0) SWIG_fail;
  $2 = gdap_py_dims_len($1);
}
%typemap(freearg) (const gdap_dim* dims, int64_t ndim) {
  gdap_py_dims_free($1);
}
%typemap(in) const gdap_dim* dims {
  if (gdap_py_dims_from_seq($input, (gdap_dim**)&$1) != 0) SWIG_fail;
}
%typemap(freearg) const gdap_dim* dims {
  gdap_py_dims_free($1);
}
%typemap(check) (int64_t nranks, int64_t ndim, const gdap_dim* dims) {
  if ($1 >= 0 && $2 >= 0 && ($2 == 0 ? 0 : $1 > INT64_MAX / $2 ? -1 : $1 * $2) != gdap_py_dims_len($3)) {
    char message[200];
    snprintf(message, sizeof message, "dims holds %lld dictionaries but nranks * ndim is %lld * %lld",
             (long long)gdap_py_dims_len($3), (long long)$1, (long long)$2);
    gdap_py_raise(GDAP_ERR_INVALID_ARGUMENT, message);
    SWIG_fail;
  }
}

%typemap(in, numinputs=0) gdap_dim* out {
  $1 = (gdap_dim*)calloc(1, sizeof(gdap_dim));
  if ($1 == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
}
%typemap(argout) gdap_dim* out {
  if (gdap_py_append($result, SWIG_NewPointerObj($1, $descriptor(gdap_dim*), SWIG_POINTER_OWN)) != 0) {
    $1 = NULL; /* owned by the object or freed with it */
    SWIG_fail;
  }
  $1 = NULL;
}
%typemap(freearg) gdap_dim* out {
  free($1);
}

/* Unstructured indices are retained by the dictionary: they are read from a C-contiguous int64
 * buffer (a NumPy int64 array) which the caller keeps alive as long as the gdap_dim. */
%typemap(in) (const int64_t* indices, int64_t num_indices) (Py_buffer view) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) SWIG_fail;
  if (view.itemsize != 8 || view.ndim > 1 || view.format == NULL ||
      !(strcmp(view.format, "q") == 0 || strcmp(view.format, "l") == 0 || strcmp(view.format, "<q") == 0 ||
        strcmp(view.format, "<l") == 0 || strcmp(view.format, "=q") == 0 || strcmp(view.format, "@q") == 0 ||
        strcmp(view.format, "@l") == 0 || strcmp(view.format, "=l") == 0)) {
    PyBuffer_Release(&view);
    SWIG_exception_fail(SWIG_TypeError, "in method '$symname', indices must be a C-contiguous 1-d int64 buffer");
  }
  $1 = ($1_ltype)view.buf;
  $2 = (int64_t)(view.len / 8);
  PyBuffer_Release(&view); /* the caller keeps the object, and so the memory, alive */
}

/* ---- what follows from the headers alone (tools/abigen writes it): typemaps for the handles a call
 * creates and for the statistics structs, and the list of calls that run without the GIL ------- */
%include "gdap_c_generated.i"

/* ---- communicators and plans ------------------------------------------------------------ */

/* gdap_comm_create_group: nranks in, a list of nranks communicator handles out. */
%typemap(in) (gdap_comm** comms, int64_t nranks) {
  PyObject* index = PyNumber_Index($input);
  long long n = index != NULL ? PyLong_AsLongLong(index) : -1;
  Py_XDECREF(index);
  if (n == -1 && PyErr_Occurred()) SWIG_fail;
  $2 = (int64_t)n;
  /* Room for at least one handle, so a bad count reaches gdap, which says what is wrong with it. */
  $1 = (gdap_comm**)calloc((size_t)(n > 0 ? n : 1), sizeof(gdap_comm*));
  if ($1 == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
}
%typemap(argout) (gdap_comm** comms, int64_t nranks) {
  PyObject* list = PyList_New(0);
  for (int64_t r = 0; list != NULL && r < $2; ++r) {
    if (gdap_py_append(list, SWIG_NewPointerObj($1[r], $descriptor(gdap_comm*), 0)) != 0) Py_CLEAR(list);
  }
  if (list == NULL || gdap_py_append($result, list) != 0) {
    for (int64_t r = 0; r < $2; ++r) gdap_comm_destroy($1[r]); /* the pointer objects never own */
    SWIG_fail;
  }
}
%typemap(freearg) (gdap_comm** comms, int64_t nranks) {
  free($1);
}

%typemap(in, numinputs=0) gdap_comm_kind* kind (gdap_comm_kind temp) {
  temp = (gdap_comm_kind)0;
  $1 = &temp;
}
%typemap(argout) gdap_comm_kind* kind {
  if (gdap_py_append($result, PyLong_FromLong((long)*$1)) != 0) SWIG_fail;
}

/* ---- halos ------------------------------------------------------------------------------- */

/* gdap_halo_options from None (defaults) or a pair (corners, widths): widths None or a sequence
 * of integers, whose length must be the map's ndim (the map is gdap_halo_create's arg2). */
%typemap(in) const gdap_halo_options* options (gdap_halo_options temp) {
  $1 = NULL;
  if ($input != Py_None) {
    PyObject* corners = NULL;
    PyObject* widths = NULL;
    if (!PyArg_ParseTuple($input, "OO", &corners, &widths)) SWIG_fail;
    const int on = PyObject_IsTrue(corners);
    if (on < 0) SWIG_fail;
    memset(&temp, 0, sizeof temp);
    temp.struct_size = (uint32_t)sizeof temp;
    temp.corners = on;
    if (gdap_py_i64_from_seq(widths, "widths", 1, (int64_t**)&temp.widths) != 0) SWIG_fail;
    $1 = &temp;
  }
}
%typemap(check) const gdap_halo_options* options {
  if ($1 != NULL && gdap_py_check_len($1->widths, gdap_py_map_ndim(arg2), "widths") != 0) SWIG_fail;
}
%typemap(freearg) const gdap_halo_options* options {
  if ($1 != NULL) gdap_py_i64_free($1->widths);
}

/* ---- Zarr stores --------------------------------------------------------------------------- */

/* gdap_zarr_options from None (defaults) or a tuple (codec, zstd_level, overwrite, layout, shuffle,
 * chunk_bytes); the last three may be left out (their defaults). */
%typemap(in) const gdap_zarr_options* options (gdap_zarr_options temp) {
  $1 = NULL;
  if ($input != Py_None) {
    int codec = 0, level = 0, overwrite = 0, layout = GDAP_ZARR_SHARDS, shuffle = GDAP_ZARR_SHUFFLE;
    long long chunk_bytes = 0;
    if (!PyArg_ParseTuple($input, "iip|iiL", &codec, &level, &overwrite, &layout, &shuffle, &chunk_bytes)) SWIG_fail;
    memset(&temp, 0, sizeof temp);
    temp.struct_size = (uint32_t)sizeof temp;
    temp.codec = codec;
    temp.zstd_level = level;
    temp.overwrite = overwrite;
    temp.layout = layout;
    temp.shuffle = shuffle;
    temp.chunk_bytes = (int64_t)chunk_bytes;
    $1 = &temp;
  }
}

/* gdap_zarr_shape_read(path, capacity) -> (shape, ndim, (code, bits, lanes)): one read of the store's
 * zarr.json, into a buffer of `capacity` extents. The shape tuple holds min(ndim, capacity) of them;
 * when ndim > capacity (GDAP_ERR_BUFFER_TOO_SMALL, not raised here) the caller asks again with
 * capacity ndim and takes only that answer, so every extent, the rank and the dtype are of one read
 * even when a save replaces the store between two calls (_zarr.zarr_shape). */
%typemap(in, numinputs=0) (int64_t* shape, int64_t* ndim) (int64_t temp) {
  temp = 0;
  $1 = NULL;
  $2 = &temp;
}
%typemap(check) (int64_t* shape, int64_t* ndim, gdap_dtype* dtype, const char* path, int64_t capacity) {
  if ($5 > 0 && ($1 = (int64_t*)PyMem_Calloc((size_t)$5, sizeof(int64_t))) == NULL) {
    PyErr_NoMemory();
    SWIG_fail;
  }
}
%typemap(out) gdap_status gdap_zarr_shape_read {
  if ($1 != GDAP_SUCCESS && $1 != GDAP_ERR_BUFFER_TOO_SMALL) {
    gdap_py_raise_status($1);
    SWIG_fail;
  }
  $result = PyList_New(0);
  if ($result == NULL) SWIG_fail;
}
%typemap(argout) (int64_t* shape, int64_t* ndim) {
  const int64_t n = *$2 < arg5 ? *$2 : arg5;
  PyObject* t = PyTuple_New((Py_ssize_t)n);
  if (t == NULL) SWIG_fail;
  for (int64_t i = 0; i < n; ++i) PyTuple_SET_ITEM(t, (Py_ssize_t)i, PyLong_FromLongLong((long long)$1[i]));
  if (gdap_py_append($result, t) != 0) SWIG_fail;
  if (gdap_py_append($result, PyLong_FromLongLong((long long)*$2)) != 0) SWIG_fail;
}
%typemap(freearg) (int64_t* shape, int64_t* ndim) {
  PyMem_Free($1);
}

/* The dictionaries must number ndim, so gdap never reads past the block. A negative ndim goes
 * through: gdap refuses it collectively, the other ranks learning which rank it was. */
%typemap(check) (gdap_comm* comm, int64_t ndim, const gdap_dim* dims) {
  if ($2 >= 0 && $2 != gdap_py_dims_len($3)) {
    char message[200];
    snprintf(message, sizeof message, "dims holds %lld dictionaries but ndim is %lld",
             (long long)gdap_py_dims_len($3), (long long)$2);
    gdap_py_raise(GDAP_ERR_INVALID_ARGUMENT, message);
    SWIG_fail;
  }
}

/* ---- distributed GEMM ---------------------------------------------------------------------- */
/* gdap_gemm_options from None (defaults) or a pair (mode, panel_width). */
%typemap(in) const gdap_gemm_options* options (gdap_gemm_options temp) {
  $1 = NULL;
  if ($input != Py_None) {
    int mode = 0;
    long long width = 0;
    if (!PyArg_ParseTuple($input, "iL", &mode, &width)) SWIG_fail;
    memset(&temp, 0, sizeof temp);
    temp.struct_size = (uint32_t)sizeof temp;
    temp.mode = mode;
    temp.panel_width = (int64_t)width;
    $1 = &temp;
  }
}
/* ---- DLPack -------------------------------------------------------------------------------- */

%typemap(in, numinputs=0) struct DLManagedTensorVersioned** out (struct DLManagedTensorVersioned* temp),
    struct DLManagedTensor** out (struct DLManagedTensor* temp) {
  temp = NULL;
  $1 = &temp;
}
%typemap(argout) struct DLManagedTensorVersioned** out {
  PyObject* capsule = PyCapsule_New(*$1, "dltensor_versioned", gdap_py_versioned_capsule_destructor);
  if (capsule == NULL) (*$1)->deleter(*$1);
  if (gdap_py_append($result, capsule) != 0) SWIG_fail;
}
%typemap(argout) struct DLManagedTensor** out {
  PyObject* capsule = PyCapsule_New(*$1, "dltensor", gdap_py_unversioned_capsule_destructor);
  if (capsule == NULL) (*$1)->deleter(*$1);
  if (gdap_py_append($result, capsule) != 0) SWIG_fail;
}

%typemap(in) struct DLManagedTensorVersioned* tensor {
  $1 = (struct DLManagedTensorVersioned*)gdap_py_capsule_tensor($input, "dltensor_versioned", "used_dltensor_versioned");
  if ($1 == NULL) SWIG_fail;
}
%typemap(argout) struct DLManagedTensorVersioned* tensor {
  PyCapsule_SetName($input, "used_dltensor_versioned"); /* gdap took the tensor: its deleter is gdap's to call */
}
%typemap(in) struct DLManagedTensor* tensor {
  $1 = (struct DLManagedTensor*)gdap_py_capsule_tensor($input, "dltensor", "used_dltensor");
  if ($1 == NULL) SWIG_fail;
}
%typemap(argout) struct DLManagedTensor* tensor {
  PyCapsule_SetName($input, "used_dltensor");
}

/* ---- the structs ---------------------------------------------------------------------------- */

/* Fields that a pointer or a length hangs on are read-only: they are set by gdap_dim_set_*. */
%immutable gdap_dim::struct_size;
%immutable gdap_dim::padding;
%immutable gdap_dim::num_indices;
%ignore gdap_dim::indices;
%ignore gdap_axis_layout; /* passed as tuples (gdap_py_axes_from_seq) */
%typemap(out) int64_t padding[2] {
  $result = Py_BuildValue("(LL)", (long long)$1[0], (long long)$1[1]);
}
%extend gdap_dim {
  /* A new dictionary set to GDAP_DIM_INIT (the empty dictionary {}). */
  gdap_dim() {
    gdap_dim* d = (gdap_dim*)calloc(1, sizeof(gdap_dim));
    if (d != NULL) gdap_dim_init(d);
    return d;
  }
  /* The unstructured indices as bytes (num_indices native int64 values), a copy. */
  PyObject* indices_bytes() {
    if ($self->num_indices <= 0 || $self->indices == NULL) return PyBytes_FromStringAndSize("", 0);
    return PyBytes_FromStringAndSize((const char*)$self->indices, (Py_ssize_t)($self->num_indices * 8));
  }
}

/* Ctrl-C for collective calls: the Python package sets the interrupt check above on every Comm,
 * and its SIGINT handler notes each Ctrl-C (gdap/_comm.py). gdap_comm_set_interrupt itself takes a
 * C function pointer, which Python has no use for. */
%ignore gdap_comm_set_interrupt;
%inline %{
gdap_status gdap_py_set_interrupt(gdap_comm* comm) { return gdap_comm_set_interrupt(comm, gdap_py_interrupted, NULL); }
void gdap_py_note_interrupt(void) { gdap_py_sigints = gdap_py_sigints + 1; }
%}

/* The PyCapsule glue, visible from Python as gdap_py_tensor_from_pointer. */
%inline %{
/* A "dltensor_versioned" capsule for memory at `data` that `owner` keeps alive: the tensor holds a
 * reference to `owner` and releases it in its deleter. shape and strides (in elements) are
 * sequences of ndim integers (strides may be None: C-contiguous). Checks nothing about the
 * memory itself: gdap_array_from_dlpack does that. */
PyObject* gdap_py_tensor_from_pointer(PyObject* data, PyObject* shape, PyObject* strides, gdap_dtype dtype,
                                      gdap_device device, int readonly, PyObject* owner) {
  void* address = data == Py_None ? NULL : PyLong_AsVoidPtr(data);
  if (address == NULL && PyErr_Occurred()) return NULL;
  int64_t *c_shape = NULL, *c_strides = NULL;
  if (gdap_py_i64_from_seq(shape, "shape", 0, &c_shape) != 0) return NULL;
  if (gdap_py_i64_from_seq(strides, "strides", 1, &c_strides) != 0 ||
      gdap_py_check_len(c_strides, gdap_py_i64_len(c_shape), "strides") != 0) {
    gdap_py_i64_free(c_shape);
    gdap_py_i64_free(c_strides);
    return NULL;
  }
  const int64_t ndim = gdap_py_i64_len(c_shape);
  gdap_py_owned_tensor* t = NULL;
  if (ndim >= 0 && ndim <= 1024) {
    t = (gdap_py_owned_tensor*)calloc(1, sizeof(gdap_py_owned_tensor) + (size_t)(2 * ndim) * sizeof(int64_t));
  }
  if (t == NULL) {
    gdap_py_i64_free(c_shape);
    gdap_py_i64_free(c_strides);
    return ndim > 1024 ? PyErr_Format(PyExc_ValueError, "ndim %lld is too large", (long long)ndim) : PyErr_NoMemory();
  }
  for (int64_t i = 0; i < ndim; ++i) {
    t->extents[i] = c_shape[i];
    t->extents[ndim + i] = c_strides != NULL ? c_strides[i] : 0;
  }
  gdap_py_i64_free(c_shape);
  gdap_py_i64_free(c_strides);
  DLTensor* dl = &t->managed.dl_tensor;
  dl->data = address;
  dl->device.device_type = (DLDeviceType)device.type;
  dl->device.device_id = device.id;
  dl->ndim = (int32_t)ndim;
  dl->dtype.code = dtype.code;
  dl->dtype.bits = dtype.bits;
  dl->dtype.lanes = dtype.lanes;
  dl->shape = ndim > 0 ? t->extents : NULL;
  dl->strides = ndim > 0 && strides != Py_None ? t->extents + ndim : NULL;
  dl->byte_offset = 0;
  t->managed.version.major = DLPACK_MAJOR_VERSION;
  t->managed.version.minor = DLPACK_MINOR_VERSION;
  t->managed.flags = readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  t->managed.manager_ctx = t;
  t->managed.deleter = gdap_py_owned_tensor_deleter;
  t->owner = owner;
  Py_INCREF(owner);
  PyObject* capsule = PyCapsule_New(&t->managed, "dltensor_versioned", gdap_py_versioned_capsule_destructor);
  if (capsule == NULL) gdap_py_owned_tensor_deleter(&t->managed);
  return capsule;
}

/* The name of a PyCapsule (None if it has none): tells a versioned DLPack capsule from an old one. */
PyObject* gdap_py_capsule_name(PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule)) return PyErr_Format(PyExc_TypeError, "expected a PyCapsule, not %.80s",
                                                          Py_TYPE(capsule)->tp_name);
  const char* name = PyCapsule_GetName(capsule);
  if (name == NULL) {
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
  }
  return PyUnicode_FromString(name);
}

/* The ndim of the tensor in an unconsumed DLPack capsule, versioned or not. */
PyObject* gdap_py_capsule_ndim(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    struct DLManagedTensorVersioned* t =
        (struct DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (t->version.major != DLPACK_MAJOR_VERSION) {
      gdap_py_raise(GDAP_ERR_VERSION, "the DLPack capsule's tensor has a DLPack major version gdap does not read");
      return NULL;
    }
    return PyLong_FromLong((long)t->dl_tensor.ndim);
  }
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    return PyLong_FromLong((long)((struct DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor"))->dl_tensor.ndim);
  }
  return gdap_py_capsule_tensor(capsule, "dltensor_versioned", "used_dltensor_versioned") == NULL ? NULL : PyLong_FromLong(0);
}
%}

/* ---- IPC handles ----------------------------------------------------------------------------- */

/* gdap_ipc_export: the handle comes back as bytes of GDAP_IPC_HANDLE_SIZE (nothing passed in). */
%typemap(in, numinputs=0) (void* handle, int64_t capacity) (unsigned char temp[GDAP_IPC_HANDLE_SIZE]) {
  $1 = temp;
  $2 = (int64_t)GDAP_IPC_HANDLE_SIZE;
}
%typemap(argout) (void* handle, int64_t capacity) {
  if (gdap_py_append($result, PyBytes_FromStringAndSize((const char*)$1, (Py_ssize_t)$2)) != 0) SWIG_fail;
}
/* gdap_ipc_open: any bytes-like object, its length passed as the size (gdap checks it). gdap reads
 * the bytes only when the size is GDAP_IPC_HANDLE_SIZE, so at most that many are copied here. */
%typemap(in) (const void* handle, int64_t size) (Py_buffer view, unsigned char temp[GDAP_IPC_HANDLE_SIZE]) {
  if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    SWIG_exception_fail(SWIG_TypeError, "in method '$symname', handle must be bytes-like (bytes, bytearray, memoryview)");
  }
  memcpy(temp, view.buf, (size_t)(view.len < GDAP_IPC_HANDLE_SIZE ? view.len : GDAP_IPC_HANDLE_SIZE));
  $1 = temp;
  $2 = (int64_t)view.len;
  PyBuffer_Release(&view);
}

#define GDAP_API
%include <gdap/gdap.h>
%include <gdap/gdap_mpi.h>
%include <gdap/gdap_cuda.h>
