/**
 * @file gdap.h
 * gdap.h — the C ABI of gdap, an implementation of the Distributed Array Protocol (DAP 0.10.0)
 * for arrays whose local sections live in host or GPU memory.
 *
 * This header needs no MPI, CUDA or DLPack header: DLPack tensors appear only as pointers to
 * the forward-declared structs below, and gdap_dtype / gdap_device have the layout of
 * DLDataType / DLDevice. It compiles as C99 and as C++.
 *
 * Conventions (see docs/api.md):
 *  - Every function returns gdap_status; results come back through out-parameters, listed first.
 *  - On failure, gdap_last_error() gives this thread's detail, naming the dimension, key, value
 *    or rank that was wrong; nothing the caller passed is modified.
 *  - Pointer parameters say whether they are *borrowed* (read during the call only), *retained*
 *    (must outlive the handle) or *taken* (gdap frees it).
 *  - Indices, sizes, counts and strides are int64_t; strides count elements, not bytes.
 *    Every product is overflow-checked and overflow is GDAP_ERR_OVERFLOW.
 *  - Handles are opaque; gdap_x_destroy(NULL) is a no-op. A handle of the wrong kind is refused
 *    (GDAP_ERR_INVALID_ARGUMENT), and so, as a best effort, is one already destroyed (docs/api.md).
 *    Distinct handles may be used from
 *    distinct threads at once; one handle is safe to read from several threads, but not to
 *    read and destroy at once.
 *  - Collective functions must be called by every rank of their communicator, in the same order;
 *    each says "Collective" in its comment: gdap_comm_barrier, gdap_map_create_collective,
 *    gdap_redistribute, gdap_allreduce, gdap_reduce_scatter, gdap_reduce_axes, gdap_halo_exchange,
 *    gdap_halo_exchange_init, gdap_exchange_start, gdap_gemm_create, gdap_gemm_execute,
 *    gdap_save_dnpy, gdap_load_dnpy, gdap_save_zarr and gdap_load_zarr. Every other function works
 *    on the data of one process.
 */
#ifndef GDAP_H
#define GDAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Visibility and versions
 * ------------------------------------------------------------------------------------------- */

/** Marks every exported function (visibility / dllexport); define GDAP_STATIC_DEFINE when linking libgdap.a. */
#if defined(GDAP_STATIC_DEFINE)
#define GDAP_API
#elif defined(_WIN32)
#ifdef GDAP_BUILDING_LIBRARY
#define GDAP_API __declspec(dllexport)
#else
#define GDAP_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define GDAP_API __attribute__((visibility("default")))
#else
#define GDAP_API
#endif

/** Marks a name kept for one release after a rename ("Deprecated names" at the end): compilers warn
 *  where it is used and name what replaces it. */
#if defined(__GNUC__) || defined(__clang__)
#define GDAP_DEPRECATED(replacement) __attribute__((deprecated("use " #replacement)))
#else
#define GDAP_DEPRECATED(replacement)
#endif

/** Library version (semantic): a minor release adds functions and appends struct fields only. */
#define GDAP_VERSION_MAJOR 0
#define GDAP_VERSION_MINOR 2 /**< minor version: functions added, fields appended */
#define GDAP_VERSION_PATCH 0 /**< patch version: fixes only */
/** The version as one number, major * 10000 + minor * 100 + patch; compare with gdap_version(). */
#define GDAP_VERSION_NUMBER (GDAP_VERSION_MAJOR * 10000 + GDAP_VERSION_MINOR * 100 + GDAP_VERSION_PATCH)

/** The Distributed Array Protocol version gdap produces. */
#define GDAP_PROTOCOL_VERSION "0.10.0"
#define GDAP_PROTOCOL_MAJOR 0  /**< protocol major version gdap reads */
#define GDAP_PROTOCOL_MINOR 10 /**< the protocol minor version gdap reads (any patch) */

/* ---------------------------------------------------------------------------------------------
 * Status and errors
 * ------------------------------------------------------------------------------------------- */

/** The result of every gdap call. Values are stable across releases; new ones are appended. */
typedef enum gdap_status {
  GDAP_SUCCESS = 0,
  GDAP_ERR_INVALID_ARGUMENT = 1, /**< a NULL pointer, a bad enum value, a size the call cannot take */
  GDAP_ERR_PROTOCOL = 2,         /**< a descriptor breaks a rule of the protocol */
  GDAP_ERR_VERSION = 3,          /**< a protocol or DLPack version this gdap does not know */
  GDAP_ERR_OVERFLOW = 4,         /**< a size, offset or product does not fit in int64_t */
  GDAP_ERR_OUT_OF_RANGE = 5,     /**< an index, rank or dimension outside its range */
  GDAP_ERR_NOT_FOUND = 6,        /**< a global index this process (or any process) does not hold */
  GDAP_ERR_BUFFER_TOO_SMALL = 7, /**< an output buffer is smaller than the result; the count says how large */
  GDAP_ERR_NO_MEMORY = 8,        /**< an allocation failed */
  GDAP_ERR_UNSUPPORTED = 9,      /**< a device, dtype or feature this build does not support */
  GDAP_ERR_DEVICE = 10,          /**< a CUDA call failed (no device, out of device memory, ...) */
  GDAP_ERR_COMM = 11,            /**< a communication call failed (MPI, NCCL) */
  GDAP_ERR_REMOTE = 12,          /**< another rank failed a collective call */
  GDAP_ERR_TIMEOUT = 13,         /**< a collective call did not complete in time */
  GDAP_ERR_IO = 14,              /**< reading or writing a file failed */
  GDAP_ERR_INTERNAL = 15,        /**< a bug in gdap: please report it with gdap_last_error() */
  GDAP_ERR_INTERRUPTED = 16      /**< a wait at a collective call was interrupted (gdap_comm_set_interrupt) */
} gdap_status;

/** The name of a status code, e.g. "GDAP_ERR_PROTOCOL". Static string: never free it. */
GDAP_API const char* gdap_status_string(gdap_status status);

/**
 * The detail of the last failed gdap call on this thread, e.g.
 * "dimension 1 ('b'): stop (12) > size (10)". A successful call does not clear it.
 * Returns "" if no call has failed on this thread. The string is owned by gdap and valid until
 * the next failing gdap call on this thread; copy it to keep it. Thread-safe (thread-local).
 */
GDAP_API const char* gdap_last_error(void);

/**
 * Records a binding's own refusal (a check made in the binding, before any gdap call) as this
 * thread's gdap_last_error, so that callers read one place for every error's detail. Returns
 * `status` unchanged, so a wrapper can write `return gdap_last_error_set(status, reason)`.
 * `message` is copied (NULL: ""). Never fails; thread-safe (thread-local).
 */
GDAP_API gdap_status gdap_last_error_set(gdap_status status, const char* message /*or NULL*/);

/** The library version as GDAP_VERSION_NUMBER of the build that is loaded (never fails). */
GDAP_API int gdap_version(void);

/** The library version as a static string "major.minor.patch" (never fails). */
GDAP_API const char* gdap_version_string(void);

/**
 * Checks a protocol version string ("major.minor.patch").
 * Accepts GDAP_PROTOCOL_MAJOR.GDAP_PROTOCOL_MINOR with any patch (0.10.x). GDAP_ERR_VERSION for
 * another major or minor: a newer minor may add rules gdap does not know, and 0.9 gives the same
 * keys other meanings (dist_type 'n'; periodic padding as communication padding), which SemVer
 * allows before 1.0. GDAP_ERR_INVALID_ARGUMENT for a string
 * that is not three dot-separated non-negative integers. `version` is borrowed.
 */
GDAP_API gdap_status gdap_protocol_version_check(const char* version);

/* ---------------------------------------------------------------------------------------------
 * Element types and devices (DLPack-compatible)
 * ------------------------------------------------------------------------------------------- */

/**
 * Element type; the same layout and codes as DLPack's DLDataType. gdap takes the codes below at the
 * widths DLPack gives them (int and uint: 8, 16, 32, 64 bits; float: 16, 32, 64; bfloat: 16;
 * complex: 32, 64, 128; bool: 8) and refuses any other code or width with GDAP_ERR_UNSUPPORTED.
 */
typedef struct gdap_dtype {
  uint8_t code; /**< GDAP_DTYPE_* (DLPack's DLDataTypeCode) */
  uint8_t bits; /**< bits per lane */
  uint16_t lanes; /**< 1 for scalars */
} gdap_dtype;

enum {
  GDAP_DTYPE_INT = 0,
  GDAP_DTYPE_UINT = 1,
  GDAP_DTYPE_FLOAT = 2,
  GDAP_DTYPE_BFLOAT = 4,
  GDAP_DTYPE_COMPLEX = 5,
  GDAP_DTYPE_BOOL = 6
};

/** Where the data lives; the same layout and codes as DLPack's DLDevice. */
typedef struct gdap_device {
  int32_t type; /**< GDAP_DEVICE_* (DLPack's DLDeviceType) */
  int32_t id;   /**< device ordinal; 0 for host memory */
} gdap_device;

enum {
  GDAP_DEVICE_CPU = 1,          /**< ordinary host memory */
  GDAP_DEVICE_CUDA = 2,         /**< CUDA device memory */
  GDAP_DEVICE_CUDA_HOST = 3,    /**< CUDA pinned host memory */
  GDAP_DEVICE_CUDA_MANAGED = 13 /**< CUDA managed (unified) memory */
};

/* ---------------------------------------------------------------------------------------------
 * Dimension descriptors (layer 1): one protocol dimension dictionary
 * ------------------------------------------------------------------------------------------- */

/** The protocol's dist_type values; the enum value is the protocol's character. */
typedef enum gdap_dist_type {
  GDAP_DIST_UNDISTRIBUTED = 0,  /**< the empty dictionary {}: an alias resolved from the buffer shape */
  GDAP_DIST_BLOCK = 'b',        /**< block: start, stop; optional padding, periodic */
  GDAP_DIST_CYCLIC = 'c',       /**< cyclic / block-cyclic: start; optional block_size */
  GDAP_DIST_UNSTRUCTURED = 'u'  /**< unstructured: indices; optional one_to_one */
} gdap_dist_type;

/** Bits of gdap_dim.given: which optional keys the dictionary holds. */
#define GDAP_KEY_PADDING (1u << 0)    /**< 'b': padding */
#define GDAP_KEY_PERIODIC (1u << 1)   /**< 'b': periodic */
#define GDAP_KEY_BLOCK_SIZE (1u << 2) /**< 'c': block_size */
#define GDAP_KEY_ONE_TO_ONE (1u << 3) /**< 'u': one_to_one */

/**
 * Versioned structs (gdap_dim, the _options and _stats structs) begin with `uint32_t struct_size`,
 * set by their _INIT macro: a caller compiled against an older release passes its smaller struct
 * (the fields it lacks take their defaults), a newer caller its larger one (gdap reads and writes
 * the fields it knows). gdap refuses with GDAP_ERR_INVALID_ARGUMENT a struct_size below the
 * struct's first release, not a multiple of 8, or above GDAP_MAX_STRUCT_SIZE. See docs/abi.md.
 */
#define GDAP_MAX_STRUCT_SIZE 1024

/**
 * One dimension dictionary. Initialise with GDAP_DIM_INIT (or a gdap_dim_set_* call), then fill
 * the keys of its dist_type. Optional keys count only when their GDAP_KEY_* bit is in `given`;
 * an optional field holding a non-default value without its bit is an error, so a forgotten bit
 * is reported rather than ignored. Fields of other dist_types must keep their initial values.
 *
 * Growth: the struct only grows at its end; `struct_size` tells gdap how much the caller knows,
 * and arrays of gdap_dim are read with a stride of dims[0].struct_size.
 */
typedef struct gdap_dim {
  uint32_t struct_size;   /**< sizeof(gdap_dim) as the caller compiled it (GDAP_DIM_INIT sets it) */
  uint32_t given;         /**< GDAP_KEY_* bits of the optional keys present */
  int32_t dist_type;      /**< a gdap_dist_type */
  int32_t periodic;       /**< 'b': non-zero if the dimension wraps (needs GDAP_KEY_PERIODIC) */
  int64_t size;           /**< global number of elements along this dimension, >= 0 */
  int64_t proc_grid_size; /**< processes along this dimension of the process grid, >= 1 */
  int64_t proc_grid_rank; /**< this process's coordinate along it, 0 <= rank < proc_grid_size */
  int64_t start;          /**< 'b', 'c': first global index held (for 'b' including padding) */
  int64_t stop;           /**< 'b': one past the last global index held (including padding) */
  int64_t padding[2];     /**< 'b': elements of padding below and above (needs GDAP_KEY_PADDING) */
  int64_t block_size;     /**< 'c': length of the blocks dealt round-robin, >= 1 (default 1) */
  const int64_t* indices; /**< 'u': global indices held, in local order; borrowed or owned as the
                               function that filled the struct says */
  int64_t num_indices;    /**< 'u': length of `indices` */
  int32_t one_to_one;     /**< 'u': non-zero if every global index lives on exactly one process */
  int32_t reserved;       /**< must be 0 */
} gdap_dim;

/** A gdap_dim with struct_size set, block_size 1 and everything else zero (dist_type {}). */
#define GDAP_DIM_INIT {sizeof(gdap_dim), 0u, GDAP_DIST_UNDISTRIBUTED, 0, 0, 1, 0, 0, 0, {0, 0}, 1, NULL, 0, 0, 0}

/** Sets `*dim` to GDAP_DIM_INIT. `dim` is borrowed. */
GDAP_API gdap_status gdap_dim_init(gdap_dim* dim);

/** Sets `*dim` to a block dimension without optional keys. Checks nothing: see gdap_dim_validate. */
GDAP_API gdap_status gdap_dim_set_block(gdap_dim* dim, int64_t size, int64_t proc_grid_size,
                                        int64_t proc_grid_rank, int64_t start, int64_t stop);

/** Adds the optional 'padding' key to a block dimension. */
GDAP_API gdap_status gdap_dim_set_padding(gdap_dim* dim, int64_t lower, int64_t upper);

/** Adds the optional 'periodic' key to a block dimension. */
GDAP_API gdap_status gdap_dim_set_periodic(gdap_dim* dim, int periodic);

/**
 * Sets `*dim` to a cyclic dimension. `block_size` 0 leaves the optional key out (default 1);
 * any other value is given as the 'block_size' key.
 */
GDAP_API gdap_status gdap_dim_set_cyclic(gdap_dim* dim, int64_t size, int64_t proc_grid_size,
                                         int64_t proc_grid_rank, int64_t start, int64_t block_size);

/**
 * Sets `*dim` to an unstructured dimension. `indices` is retained: it must outlive every use of
 * `*dim`. `one_to_one` < 0 leaves the optional key out (default false); 0 or 1 gives it.
 */
GDAP_API gdap_status gdap_dim_set_unstructured(gdap_dim* dim, int64_t size, int64_t proc_grid_size,
                                               int64_t proc_grid_rank,
                                               const int64_t* indices /*[num_indices], retained*/,
                                               int64_t num_indices, int one_to_one);

/**
 * Sets `*dim` to what the empty dictionary {} stands for, for a buffer extent `extent`:
 * {'dist_type':'b','proc_grid_rank':0,'proc_grid_size':1,'start':0,'stop':extent,'size':extent}.
 */
GDAP_API gdap_status gdap_dim_set_undistributed(gdap_dim* dim, int64_t extent);

/**
 * Checks one dimension dictionary against every per-process rule of the protocol.
 * `extent` is the buffer's length along this dimension, or -1 if unknown (the rules that need it
 * are then skipped, and an empty dictionary {} is refused since it cannot be resolved).
 * `dim_index` only labels messages ("dimension 2 ('c'): ..."). `dim` is borrowed.
 * Returns GDAP_ERR_PROTOCOL (or GDAP_ERR_OVERFLOW) with a message naming the dimension, the key
 * and the values. Cost: O(1), except O(n log n) for the uniqueness of n unstructured indices.
 */
GDAP_API gdap_status gdap_dim_validate(const gdap_dim* dim, int64_t dim_index, int64_t extent);

/**
 * Checks a whole per-process dim_data: each dictionary as gdap_dim_validate does, with
 * `shape[i]` as dimension i's extent. `shape` may be NULL (extents unknown). `ndim` may be 0
 * (a 0-d array). `dims` (stride dims[0].struct_size) and `shape` are borrowed.
 */
GDAP_API gdap_status gdap_dims_validate(const gdap_dim* dims /*[ndim]*/, int64_t ndim,
                                        const int64_t* shape /*[ndim] or NULL*/);

/**
 * Number of global indices this process owns along one dimension: for 'b' the held range less
 * communication padding, for 'c' the protocol's count (the trailing partial block belongs to grid
 * rank (size / block_size) % proc_grid_size), for 'u' the number of indices. The dimension must be
 * valid (gdap_dim_validate); an empty dictionary is refused.
 */
GDAP_API gdap_status gdap_dim_owned_count(int64_t* count, const gdap_dim* dim);

/**
 * Buffer extent along one dimension that this dictionary implies: stop - start for 'b' (padding
 * included), the owned count for 'c', num_indices for 'u'.
 */
GDAP_API gdap_status gdap_dim_local_extent(int64_t* extent, const gdap_dim* dim);

/**
 * Local index of global index `global` in this process's buffer. GDAP_ERR_NOT_FOUND if this
 * process does not hold it. For 'b' the held range counts, padding included. O(1) for 'b' and
 * 'c'; O(n) for 'u' (use gdap_array_global_to_local or gdap_map for repeated look-ups).
 */
GDAP_API gdap_status gdap_dim_global_to_local(int64_t* local, const gdap_dim* dim, int64_t global);

/** Global index held at local index `local`; GDAP_ERR_OUT_OF_RANGE outside the buffer. O(1). */
GDAP_API gdap_status gdap_dim_local_to_global(int64_t* global, const gdap_dim* dim, int64_t local);

/* ---------------------------------------------------------------------------------------------
 * Process grid and owned runs (layer 2)
 * ------------------------------------------------------------------------------------------- */

/**
 * Grid coordinates of `rank` on a process grid of `ndim` dimensions `grid_shape`, in C order
 * (last coordinate fastest, as MPI_Cart_create). `coords` (ndim) is written; `grid_shape` borrowed.
 */
GDAP_API gdap_status gdap_grid_rank_to_coords(int64_t* coords /*[ndim]*/, int64_t ndim,
                                              const int64_t* grid_shape /*[ndim]*/, int64_t rank);

/** The rank at grid coordinates `coords` (C order). The inverse of gdap_grid_rank_to_coords. */
GDAP_API gdap_status gdap_grid_coords_to_rank(int64_t* rank, int64_t ndim, const int64_t* grid_shape /*[ndim]*/,
                                              const int64_t* coords /*[ndim]*/);

/**
 * A run of owned global indices that sit contiguously in the local buffer:
 * global indices [global_start, global_start + length) live at local
 * [local_start, local_start + length) along one dimension.
 */
typedef struct gdap_run {
  int64_t global_start; /**< first global index of the run */
  int64_t length;       /**< number of indices in the run, >= 1 */
  int64_t local_start;  /**< local index of global_start in the buffer */
} gdap_run;

/**
 * Number of owned runs along one dimension: 1 (or 0 when empty) for 'b', one per block held for
 * 'c', and for 'u' the maximal runs in which both global and local indices step by one.
 */
GDAP_API gdap_status gdap_dim_num_runs(int64_t* num_runs, const gdap_dim* dim);

/**
 * Writes runs [first, first + capacity) of one dimension, in increasing global order, to `runs`;
 * `*written` is how many were written (fewer at the end). Lets a caller walk any number of runs
 * in chunks of its choosing. O(capacity) for 'b' and 'c'; 'u' sorts its indices (O(n log n)).
 */
GDAP_API gdap_status gdap_dim_runs(gdap_run* runs /*[capacity]*/, int64_t* written, const gdap_dim* dim,
                                   int64_t first, int64_t capacity);

/* ---------------------------------------------------------------------------------------------
 * Global maps (layer 2): every rank's dim_data, checked collectively, with O(1) look-ups
 * ------------------------------------------------------------------------------------------- */

/** The global view of one distribution: every rank's dictionaries. Opaque. */
typedef struct gdap_map gdap_map;

/**
 * Builds the global view of a distribution from every rank's dim_data and checks every
 * cross-process rule of the protocol: same ndim, dist_type, size and proc_grid_size everywhere;
 * the product of proc_grid_size equals `nranks`; each rank's proc_grid_rank values are its C-order
 * grid coordinates; identical dictionaries along an axis (optional keys compared by value, a
 * missing one as its default; boundary padding may differ between edge processes); owned ranges
 * that tile [0, size) with no gap or overlap; communication padding equal to the neighbour's and
 * no wider than what the neighbour owns; unstructured indices in [0, size) covering it, each held
 * exactly once when one_to_one. Errors name the rank, the dimension and the key:
 * "rank 3, dimension 0 ('b'): ...".
 *
 * `dims` holds nranks * ndim dictionaries, rank-major (rank r's dimension i at r * ndim + i), with
 * stride dims[0].struct_size; empty dictionaries must be resolved (gdap_dim_set_undistributed).
 * `dims` and every `indices` array are borrowed: the map keeps its own copies.
 * Owner look-ups are O(1) for even 'b' and all 'c', O(log P) for irregular 'b', O(log n) for 'u'.
 * On success `*out` is a new map the caller destroys with gdap_map_destroy.
 */
GDAP_API gdap_status gdap_map_create(gdap_map** out, int64_t nranks, int64_t ndim,
                                     const gdap_dim* dims /*[nranks * ndim]*/);

/**
 * The layout of a gather's result or a scatter's source: the whole array of `ndim` >= 1 dimensions
 * and C-order `shape` on rank `root` of `nranks`, nothing on the others (dimension 0 in blocks over
 * a grid of nranks x 1 x ... whose only non-empty block is the root's). A plan from any map to it
 * gathers, a plan from it scatters; both run through gdap_redistribute on every engine. Not
 * collective. `shape` is borrowed. On success `*out` is a new map (gdap_map_destroy).
 */
GDAP_API gdap_status gdap_map_create_root(gdap_map** out, int64_t nranks, int64_t ndim,
                                          const int64_t* shape /*[ndim]*/, int64_t root);

/**
 * The layout of an allgather's result or a broadcast's destination: the whole array on every one
 * of `nranks` ranks. Dimension 0 is unstructured (every rank lists every index, one_to_one false:
 * the protocol has no replicated block), the others whole. A plan from any map to it allgathers;
 * from gdap_map_create_root's map, broadcasts. Each rank's section has the full shape, indices in
 * order. The map holds shape[0] indices per rank. Not collective. `shape` is borrowed.
 */
GDAP_API gdap_status gdap_map_create_replicated(gdap_map** out, int64_t nranks, int64_t ndim,
                                                const int64_t* shape /*[ndim]*/);

/* ---------------------------------------------------------------------------------------------
 * Layouts (layer 2): whole distributions in one call, without writing dictionaries by hand
 * ------------------------------------------------------------------------------------------- */

/**
 * Chooses a process grid for `nranks` ranks over `ndim` dimensions, as MPI_Dims_create does: on
 * entry each grid_shape[i] is 0 (free) or a fixed extent >= 1; on return every free entry is set so
 * that the product is `nranks`, the free extents as close to each other as the prime factors allow,
 * in non-increasing order (12 ranks over 2 free dimensions: 4 x 3). GDAP_ERR_INVALID_ARGUMENT when
 * an entry is negative, nranks < 1, or the fixed entries' product does not divide nranks (naming
 * both); nothing is written then. `grid_shape` (ndim values) is read and written. Not collective.
 */
GDAP_API gdap_status gdap_grid_balance(int64_t* grid_shape /*[ndim]*/, int64_t ndim, int64_t nranks);

/**
 * How gdap_map_create_grid lays out one dimension over one axis of the process grid. Initialise with
 * GDAP_AXIS_LAYOUT_INIT, then set what differs from the defaults. Grows at its end only: arrays of it
 * are read with a stride of axes[0].struct_size, as arrays of gdap_dim.
 */
typedef struct gdap_axis_layout {
  uint32_t struct_size;   /**< sizeof(gdap_axis_layout) as the caller compiled it (GDAP_AXIS_LAYOUT_INIT sets it) */
  int32_t dist_type;      /**< GDAP_DIST_BLOCK (default) or GDAP_DIST_CYCLIC */
  int64_t size;           /**< global length of the dimension, >= 0 */
  int64_t grid_size;      /**< processes along this axis of the grid, >= 1 (default 1) */
  int64_t block_size;     /**< 'c': length of the blocks dealt round-robin, >= 1 (default 1: cyclic); 'b': 1 */
  const int64_t* lengths; /**< 'b': NULL (default) for even blocks, or grid_size owned lengths >= 0 that sum
                               to size (irregular blocks); borrowed for the call. 'c': NULL */
  int64_t halo;           /**< 'b': cells of communication padding towards each neighbour, >= 0 (default 0) */
  int32_t periodic;       /**< 'b': non-zero if the dimension wraps (the 'periodic' key; see gdap_map_create_grid) */
  int32_t reserved;       /**< must be 0 */
} gdap_axis_layout;

/** A gdap_axis_layout with struct_size set: one undivided block dimension of size 0, no halo. */
#define GDAP_AXIS_LAYOUT_INIT {sizeof(gdap_axis_layout), GDAP_DIST_BLOCK, 0, 1, 1, NULL, 0, 0, 0}

/**
 * A distribution over a process grid of `ndim` >= 1 axes, axis i of axes[i].grid_size processes
 * (nranks = their product; rank r at the C-order grid coordinates of r, as everywhere in gdap), each
 * dimension laid out as its gdap_axis_layout says:
 *  - 'b', lengths NULL: even blocks, as cupyx, DTensor's Shard and gdap's own Zarr chunks split: grid
 *    coordinate c owns [min(c w, n), min((c + 1) w, n)) with w = ceil(n / grid_size), so the last
 *    blocks may be shorter or empty (10 over 4: 3, 3, 3, 1);
 *  - 'b', lengths given: irregular blocks, coordinate c owning lengths[c] cells in grid order;
 *  - 'c': coordinate c starts at c * block_size (block_size 1: cyclic; larger: block-cyclic);
 *  - halo h > 0 ('b'): each section reaches h cells into each neighbour's block (the protocol's
 *    communication padding, (h, h) between neighbours). The outer sides of the edge blocks get no
 *    padding unless the dimension is periodic: then they get h cells of boundary padding, which the
 *    protocol counts as owned and as part of `size`, and which gdap_halo_exchange fills from the
 *    opposite edge. So a periodic dimension of n interior cells and halo h has size n + 2h; its even
 *    blocks split the n interior cells and the two edge blocks add their h boundary cells;
 *  - periodic without a halo only gives the 'periodic' key.
 * A dimension with a halo gives 'padding' on every rank: (0, 0) on a non-periodic edge's outer side.
 * Errors (GDAP_ERR_INVALID_ARGUMENT, naming the axis and the value): ndim < 1, a struct_size the
 * versioned-struct policy refuses (see GDAP_MAX_STRUCT_SIZE), a dist_type other than 'b' or 'c', size < 0, grid_size < 1,
 * a block_size < 1 ('c') or other than 1 ('b'), lengths on a 'c' axis or lengths that are negative or
 * do not sum to size, a halo < 0 or on a 'c' axis, a halo wider than a neighbour's block, a periodic
 * halo h with size < 3h, periodic on a 'c' axis, reserved not 0; GDAP_ERR_OVERFLOW when the grid or
 * the map's size does not fit int64. `axes` and `lengths` are borrowed. Not
 * collective: every rank that calls it with the same axes gets the same map. Cost: O(nranks * ndim).
 * On success `*out` is a new map the caller destroys with gdap_map_destroy.
 */
GDAP_API gdap_status gdap_map_create_grid(gdap_map** out, int64_t ndim, const gdap_axis_layout* axes /*[ndim]*/);

/**
 * An unstructured distribution of an array of `ndim` >= 1 dimensions and C-order `shape` over
 * `nranks` ranks: dimension 0 is unstructured over a grid of nranks x 1 x ..., rank r holding the
 * dimension-0 indices indices[o_r, o_r + counts[r]) in that local order (o_r = counts[0] + ... +
 * counts[r - 1]); the other dimensions are whole on every rank. `one_to_one` < 0 leaves the key
 * out, 0 or 1 gives it. The protocol's rules apply as in gdap_map_create (indices unique within a
 * rank; with one_to_one 1, each index held exactly once; errors name the rank). Besides those:
 * GDAP_ERR_INVALID_ARGUMENT for nranks < 1, ndim < 1, a negative size or count, or counts that do
 * not sum to num_indices. `shape`, `counts` (nranks values) and `indices` (num_indices values) are
 * borrowed: the map keeps its own copy. Not collective. On success `*out` is a new map the caller
 * destroys with gdap_map_destroy.
 */
GDAP_API gdap_status gdap_map_create_unstructured(gdap_map** out, int64_t nranks, int64_t ndim,
                                                  const int64_t* shape /*[ndim]*/, const int64_t* counts /*[nranks]*/,
                                                  const int64_t* indices /*[num_indices]*/, int64_t num_indices,
                                                  int one_to_one);

/** Destroys a map. NULL is a no-op. */
GDAP_API gdap_status gdap_map_destroy(gdap_map* map);

/** Number of array dimensions of the distribution. */
GDAP_API gdap_status gdap_map_ndim(int64_t* ndim, const gdap_map* map);
/** Number of ranks (processes) of the distribution. */
GDAP_API gdap_status gdap_map_nranks(int64_t* nranks, const gdap_map* map);

/** Global shape: each dimension's size (ndim values written to `shape`). */
GDAP_API gdap_status gdap_map_global_shape(int64_t* shape /*[ndim]*/, const gdap_map* map);
/** Process grid shape: each dimension's proc_grid_size (ndim values). */
GDAP_API gdap_status gdap_map_grid_shape(int64_t* grid_shape /*[ndim]*/, const gdap_map* map);

/** Rank `rank`'s own dictionary for dimension `dim` (as that rank gave it, boundary padding and
 *  optional keys included), copied into `*out`; its `indices` (for 'u')
 *  point into the map and stay valid while the map lives. */
GDAP_API gdap_status gdap_map_dim(gdap_dim* out, const gdap_map* map, int64_t rank, int64_t dim);

/** Rank `rank`'s buffer shape, padding included (ndim values). */
GDAP_API gdap_status gdap_map_local_shape(int64_t* shape /*[ndim]*/, const gdap_map* map, int64_t rank);
/** Rank `rank`'s owned shape: owned indices per dimension (ndim values). */
GDAP_API gdap_status gdap_map_owned_shape(int64_t* shape /*[ndim]*/, const gdap_map* map, int64_t rank);

/** Number of elements rank `rank` owns (the product of its owned shape; overflow-checked). */
GDAP_API gdap_status gdap_map_owned_count(int64_t* count, const gdap_map* map, int64_t rank);

/**
 * The rank owning global index `global` (ndim coordinates) and the local index (ndim) there.
 * For unstructured dimensions without one_to_one, the lowest such rank. GDAP_ERR_OUT_OF_RANGE
 * outside [0, size) along any dimension; every index inside has an owner (gdap_map_create checked
 * it, unstructured indices included). `local` may be NULL.
 */
GDAP_API gdap_status gdap_map_owner(int64_t* rank, int64_t* local /*[ndim] or NULL*/, const gdap_map* map,
                                    const int64_t* global /*[ndim]*/);

/**
 * Every rank that owns global index `global` (replicas of unstructured dimensions included),
 * ascending, into `ranks` (capacity `capacity`); GDAP_ERR_OUT_OF_RANGE outside [0, size) along any
 * dimension. `*count` is the total; GDAP_ERR_BUFFER_TOO_SMALL
 * if it exceeds `capacity` (then nothing is written). `ranks` may be NULL with capacity 0 to count.
 */
GDAP_API gdap_status gdap_map_owners(int64_t* ranks /*[capacity] or NULL*/, int64_t* count, const gdap_map* map,
                                     const int64_t* global /*[ndim]*/, int64_t capacity);

/**
 * Batched gdap_map_owner for `count` global indices: `globals` is count x ndim (row-major); for
 * each, ranks[k] gets the owning rank (-1 if no rank owns it or it is out of range: one bad index
 * does not fail the batch) and, if `locals` is not NULL, locals[k * ndim + i] its local index.
 * `device` says where the three arrays live. Host memory (GDAP_DEVICE_CPU, CUDA_HOST, CUDA_MANAGED):
 * computed on the CPU before the call returns; `stream` is ignored. CUDA device memory: computed
 * by a kernel enqueued on `stream` (a cudaStream_t; NULL is the legacy default stream), so the call
 * returns before the results are ready; the map's tables are copied to that device once and
 * cached. The arrays are borrowed for the call (and, on a device, until the stream reaches that
 * point). The map must outlive the queued work. GDAP_ERR_UNSUPPORTED without CUDA.
 */
GDAP_API gdap_status gdap_map_owner_batch(int64_t* ranks /*[count], host or device*/,
                                          int64_t* locals /*[count * ndim] or NULL, host or device*/,
                                          const gdap_map* map,
                                          const int64_t* globals /*[count * ndim], host or device*/,
                                          int64_t count, gdap_device device, void* stream);

/** Global index (ndim) held at local index `local` (ndim) of rank `rank`'s buffer. */
GDAP_API gdap_status gdap_map_local_to_global(int64_t* global /*[ndim]*/, const gdap_map* map, int64_t rank,
                                              const int64_t* local /*[ndim]*/);

/** Number of owned runs of rank `rank` along dimension `dim` (as gdap_dim_num_runs). */
GDAP_API gdap_status gdap_map_num_runs(int64_t* num_runs, const gdap_map* map, int64_t rank, int64_t dim);
/** Owned runs [first, first + capacity) of rank `rank` along dimension `dim` (as gdap_dim_runs). */
GDAP_API gdap_status gdap_map_runs(gdap_run* runs /*[capacity]*/, int64_t* written, const gdap_map* map,
                                   int64_t rank, int64_t dim, int64_t first, int64_t capacity);

/* ---------------------------------------------------------------------------------------------
 * Local arrays (layer 3): one process's section plus its distribution; zero-copy DLPack
 * ------------------------------------------------------------------------------------------- */

struct DLManagedTensorVersioned; /* dlpack.h, DLPack >= 1.0 */
struct DLManagedTensor;          /* dlpack.h, the unversioned form older producers hand out */

/** One process's local section and its distribution. Opaque. */
typedef struct gdap_array gdap_array;

/**
 * Wraps a DLPack tensor as a local array, without copying any element.
 * Checks the tensor (DLPack major 1, a supported device and dtype, shape and strides whose
 * extent fits int64_t) and the dictionaries against it (gdap_dims_validate with the tensor's
 * shape; ndim must equal the tensor's ndim; empty dictionaries are resolved from the shape).
 * `version` is the producer's protocol version string, or NULL for GDAP_PROTOCOL_VERSION.
 *
 * Ownership: on success `tensor` is *taken*: gdap calls its deleter exactly once, when the array
 * and every tensor exported from it are gone. On failure it is untouched and still the caller's,
 * who must call its deleter (safe even when the DLPack major differs). `dims`, their `indices`
 * and `version` are borrowed (copied). Cost: O(ndim) plus a copy of unstructured indices.
 * On success `*out` is a new array the caller destroys with gdap_array_destroy.
 */
GDAP_API gdap_status gdap_array_from_dlpack(gdap_array** out, struct DLManagedTensorVersioned* tensor,
                                            const gdap_dim* dims /*[ndim]*/, int64_t ndim,
                                            const char* version /*or NULL*/);

/** As gdap_array_from_dlpack, for the unversioned DLManagedTensor (taken on success likewise). */
GDAP_API gdap_status gdap_array_from_dlpack_unversioned(gdap_array** out, struct DLManagedTensor* tensor,
                                                        const gdap_dim* dims /*[ndim]*/, int64_t ndim,
                                                        const char* version /*or NULL*/);

/**
 * Wraps memory the caller keeps: `data` is *retained* (it must outlive the array and every tensor
 * exported from it; gdap never frees it). `strides` (ndim, in elements) may be NULL for a
 * C-contiguous buffer; the shape is each dictionary's local extent. `dims` are borrowed (copied).
 * This is how C and Fortran codes hand their own arrays to gdap.
 */
GDAP_API gdap_status gdap_array_wrap(gdap_array** out, void* data /*retained*/, gdap_dtype dtype,
                                     gdap_device device, const int64_t* strides /*[ndim] or NULL*/,
                                     const gdap_dim* dims /*[ndim]*/, int64_t ndim);

/**
 * Allocates a C-contiguous local section owned by the array, with the shape the dictionaries
 * imply, on `device`: host memory (64-byte aligned, zero-filled), or, when gdap was built with
 * CUDA, device, pinned or managed memory (not initialised). GDAP_ERR_UNSUPPORTED for a CUDA
 * device in a build without CUDA; GDAP_ERR_DEVICE if the CUDA allocation fails (message says why).
 */
GDAP_API gdap_status gdap_array_create(gdap_array** out, gdap_dtype dtype, gdap_device device,
                                       const gdap_dim* dims /*[ndim]*/, int64_t ndim);

/**
 * Destroys the handle. The memory is released (deleter called, or freed if gdap allocated it)
 * once no exported tensor still refers to it. NULL is a no-op.
 */
GDAP_API gdap_status gdap_array_destroy(gdap_array* array);

/**
 * Exports the local section as a new DLPack tensor sharing the same memory (no element copied).
 * The caller owns `*out` and must call `(*out)->deleter(*out)` exactly once; the memory stays
 * valid until then, even after gdap_array_destroy. The flags carry read-only if the imported
 * tensor was read-only. O(ndim).
 */
GDAP_API gdap_status gdap_array_to_dlpack(struct DLManagedTensorVersioned** out, gdap_array* array);

/**
 * As gdap_array_to_dlpack, as an unversioned DLManagedTensor (for consumers of DLPack < 1.0).
 * GDAP_ERR_UNSUPPORTED for a read-only array: the unversioned struct cannot say read-only.
 */
GDAP_API gdap_status gdap_array_to_dlpack_unversioned(struct DLManagedTensor** out, gdap_array* array);

/** Number of dimensions of the local section. */
GDAP_API gdap_status gdap_array_ndim(int64_t* ndim, const gdap_array* array);

/** Address of element (0, ..., 0) (data plus byte offset). Borrowed: valid while the array lives. */
GDAP_API gdap_status gdap_array_data(void** data, const gdap_array* array);

/** Shape of the local section (ndim values, padding included). */
GDAP_API gdap_status gdap_array_shape(int64_t* shape /*[ndim]*/, const gdap_array* array);
/** Strides in elements (ndim values; always filled, also for compact buffers). */
GDAP_API gdap_status gdap_array_strides(int64_t* strides /*[ndim]*/, const gdap_array* array);

/** Element type of the section. */
GDAP_API gdap_status gdap_array_dtype(gdap_dtype* dtype, const gdap_array* array);
/** Where the section's memory lives. */
GDAP_API gdap_status gdap_array_device(gdap_device* device, const gdap_array* array);

/** Non-zero if the section may not be written (DLPack read-only flag). */
GDAP_API gdap_status gdap_array_readonly(int* readonly, const gdap_array* array);

/**
 * Dimension `dim`'s dictionary, copied into `*out` (empty dictionaries resolved). Its `indices`
 * (for 'u') point into the array and stay valid while the array lives.
 */
GDAP_API gdap_status gdap_array_dim(gdap_dim* out, const gdap_array* array, int64_t dim);

/** The protocol version string the array was described with. Borrowed: valid while it lives. */
GDAP_API gdap_status gdap_array_version(const char** version, const gdap_array* array);

/**
 * Local index (ndim) of global index `global` (ndim) in this section; GDAP_ERR_NOT_FOUND if not
 * held here (padding counts as held). O(1) for 'b' and 'c', O(log n) for 'u' (index built once).
 */
GDAP_API gdap_status gdap_array_global_to_local(int64_t* local /*[ndim]*/, const gdap_array* array,
                                                const int64_t* global /*[ndim]*/);

/** Global index (ndim) of local index `local` (ndim). */
GDAP_API gdap_status gdap_array_local_to_global(int64_t* global /*[ndim]*/, const gdap_array* array,
                                                const int64_t* local /*[ndim]*/);

/* ---------------------------------------------------------------------------------------------
 * Communicators (layer 4): wrap what the caller already has
 * ------------------------------------------------------------------------------------------- */

/** One rank's handle on a group of processes or threads. Opaque. */
typedef struct gdap_comm gdap_comm;

/** What a communicator moves data with. */
typedef enum gdap_comm_kind {
  GDAP_COMM_GROUP = 1, /**< an in-process group: ranks are threads of this process */
  GDAP_COMM_MPI = 2,   /**< an MPI communicator (gdap_mpi.h) */
  GDAP_COMM_NCCL = 3   /**< an NCCL communicator and a CUDA stream (gdap_cuda.h) */
} gdap_comm_kind;

/*
 * MPI communicators (gdap_comm_from_mpi, gdap_mpi.h) and MPI_COMM_WORLD's error handler: while a
 * gdap call on an MPI communicator waits on its requests, gdap sets MPI_COMM_WORLD's error handler
 * to MPI_ERRORS_RETURN, and puts back the handler it found once the last such wait in the process
 * ends (waits of several threads are counted). Why: Open MPI 4.1 reports the failure of a
 * non-blocking request (ranks whose collective calls are out of step) to MPI_COMM_WORLD's handler,
 * fatal by default, so one rank's misuse would abort the job instead of failing the gdap call
 * (GDAP_ERR_COMM). The change is process-wide: under MPI_THREAD_MULTIPLE, the program's own MPI
 * calls on MPI_COMM_WORLD from other threads during such a wait return error codes instead of
 * aborting (check them), and a handler the program sets on MPI_COMM_WORLD while a gdap wait is in
 * progress is replaced by the one gdap found when that wait ends: set handlers before or after gdap
 * calls, never during one. gdap holds no reference to MPI_COMM_WORLD's handler between calls.
 */

/**
 * Creates an in-process group of `nranks` ranks and writes one communicator per rank to
 * comms[0] to comms[nranks - 1]. Rank r's collective calls are made by one thread with comms[r]; every
 * rank must make the same collective calls in the same order (ranks in different calls all get
 * GDAP_ERR_INVALID_ARGUMENT naming both at their first meeting). A rank that waits longer than the
 * group's timeout (gdap_comm_set_timeout, 300 s by default) for the others returns
 * GDAP_ERR_TIMEOUT, and every later collective call of the group fails at once: a missing rank
 * never hangs the others forever. Arrays of a group may live in host memory (host, pinned,
 * managed: moved with memcpy) or on CUDA devices (each rank on its own GPU or not; moved by copy
 * kernels reading peers' memory over NVLink/PCIe peer access).
 * Ownership: each comms[r] is the caller's, destroyed with gdap_comm_destroy from any thread; the
 * group lives until the last is destroyed. On failure nothing is written.
 */
GDAP_API gdap_status gdap_comm_create_group(gdap_comm** comms /*[nranks]*/, int64_t nranks);

/**
 * Destroys a communicator (never the MPI or NCCL communicator it wraps) and the buffers gdap kept
 * on it; a device buffer is freed after the queued work that last used it has finished (this call
 * waits for that work). NULL is a no-op.
 * Ownership: `comm` is the caller's, and this call ends it; any thread may make it. gdap keeps a
 * process-wide registry of live communicators, and every call that takes one finds it there before
 * touching it, so a destroy can race calls on other threads safely: a call already holding `comm`
 * makes the destroy fail with GDAP_ERR_INVALID_ARGUMENT ("is in a call on another thread", nothing
 * freed: destroy it after that call returns); a call that starts after the destroy, a second
 * destroy, or a pointer that never was a communicator, gets GDAP_ERR_INVALID_ARGUMENT ("not a live
 * gdap_comm handle") without gdap reading the pointed-to memory. Exception: once a new communicator
 * is created at a destroyed one's address, that pointer names the new communicator.
 */
GDAP_API gdap_status gdap_comm_destroy(gdap_comm* comm);

/** This rank's number, in [0, size). */
GDAP_API gdap_status gdap_comm_rank(int64_t* rank, const gdap_comm* comm);
/** The number of ranks. */
GDAP_API gdap_status gdap_comm_size(int64_t* size, const gdap_comm* comm);
/** What the communicator moves data with. */
GDAP_API gdap_status gdap_comm_kind_get(gdap_comm_kind* kind, const gdap_comm* comm);

/**
 * The CUDA stream (a cudaStream_t; NULL for the legacy default stream) on which this rank's
 * device work is queued: collective calls on device arrays return once the work is queued, in
 * order with what the caller queued before on that stream. Borrowed: it must outlive its use.
 * On an NCCL communicator, work queued on the new stream waits for the work queued on the previous
 * one before this call (gdap reuses its staging buffers from call to call).
 */
GDAP_API gdap_status gdap_comm_set_stream(gdap_comm* comm, void* stream);

/**
 * How long (seconds, > 0; INFINITY for ever) this rank waits for the others at a collective call
 * before it returns GDAP_ERR_TIMEOUT and the communicator breaks (300 s by default). Not
 * collective. On an NCCL communicator it bounds the agreement that precedes every data movement
 * (the data itself moves asynchronously on the caller's stream, which gdap does not wait for);
 * after a timeout the NCCL communicator is the caller's to ncclCommAbort, before gdap_comm_destroy.
 */
GDAP_API gdap_status gdap_comm_set_timeout(gdap_comm* comm, double seconds);

/**
 * A function gdap calls while a rank waits for the others at a collective call (see
 * gdap_comm_set_interrupt); non-zero stops the wait. `user` is what was passed with it.
 */
typedef int (*gdap_interrupt_check)(void* user);

/**
 * Sets the function gdap calls, with `user`, about every 100 ms while this rank waits for the
 * others at a collective call on `comm` (NULL, the default: none). When it returns non-zero the
 * rank stops waiting: the call returns GDAP_ERR_INTERRUPTED and the communicator breaks as after a
 * timeout (every later collective call on it fails at once; on an in-process group the ranks
 * waiting with it return GDAP_ERR_INTERRUPTED at once too, naming this rank). This is how a
 * program stops a stuck collective on Ctrl-C: its SIGINT handler sets a flag that `check` reads
 * (gdap installs no signal handler of its own; the Python binding sets a check that runs Python's
 * signal handlers, so Ctrl-C raises KeyboardInterrupt within a tenth of a second). `check` runs on
 * the waiting thread, must not call gdap on this communicator, and should return quickly; it is
 * never called by a call that does not wait. `user` is retained (it must outlive its use).
 * Not collective; not thread-safe against a collective call on `comm` in progress.
 */
GDAP_API gdap_status gdap_comm_set_interrupt(gdap_comm* comm, gdap_interrupt_check check, void* user);

/**
 * Says that this rank fails its next collective call on `comm`, with `status` and `reason`: a rank
 * whose own arguments are unusable (a binding that could not build them) still makes the call, so
 * that its peers do not wait for it, and its peers learn the real cause. That call, whatever its
 * arguments (which it does not read: they may be NULL), fails at its agreement, before any data
 * moves: this rank returns `status` with `reason` as gdap_last_error(), every other rank
 * GDAP_ERR_REMOTE "rank R failed (STATUS): reason". gdap_exchange_start has no agreement: there
 * only this rank fails, at once, and its peers are not told (they wait for its part until their
 * timeout). Calls that are not collective are unaffected meanwhile; a later
 * gdap_comm_fail_next replaces an earlier one not yet used.
 * `status` must be an error (not GDAP_SUCCESS: GDAP_ERR_INVALID_ARGUMENT); `reason` is copied (NULL:
 * "no reason given"; longer than 4096 bytes: cut there). Not collective; not thread-safe against a
 * collective call on `comm` in progress.
 */
GDAP_API gdap_status gdap_comm_fail_next(gdap_comm* comm, gdap_status status, const char* reason /*or NULL*/);

/** Collective: returns once every rank has called it. */
GDAP_API gdap_status gdap_comm_barrier(gdap_comm* comm);

/**
 * Collective: builds the global view of a distribution from each rank's own dictionaries
 * (`ndim` of them, stride dims[0].struct_size; allgathers bounds and unstructured indices) and
 * checks it as gdap_map_create does. Every rank gets the same map, or the same error naming the
 * offending rank ("rank 3, dimension 0 ('b'): ..."). A rank whose own arguments are unusable
 * (NULL, ndim out of range) returns its own error; the others return GDAP_ERR_REMOTE naming it.
 * `dims` are borrowed. On success `*out` is a new map the caller destroys with gdap_map_destroy.
 */
GDAP_API gdap_status gdap_map_create_collective(gdap_map** out, gdap_comm* comm, int64_t ndim,
                                                const gdap_dim* dims /*[ndim]*/);

/* ---------------------------------------------------------------------------------------------
 * Redistribution (layer 5): plans and their execution
 * ------------------------------------------------------------------------------------------- */

/** One rank's part of a redistribution between two distributions. Opaque, read-only, reusable. */
typedef struct gdap_plan gdap_plan;

/**
 * Plans rank `rank`'s part of moving an array of `dtype` from distribution `src` to distribution
 * `dst`: what it sends to, receives from and copies within itself, as N-d blocks of contiguous
 * runs found by interval arithmetic (never per element for 'b' and 'c'). Any pair of 'b'
 * (irregular, padded: only owned elements move), 'c', block-cyclic and 'u', in any number of
 * dimensions, on grids of different shapes and rank counts (the group is max of both counts).
 * GDAP_ERR_INVALID_ARGUMENT if the global shapes differ (every map holds each index of [0, size),
 * so two maps of one shape hold the same indices), GDAP_ERR_OUT_OF_RANGE for a bad rank.
 * The maps are borrowed (the plan keeps what it needs). Cost: O(runs and segments this rank
 * meets + messages). On success `*out` is a new plan the caller destroys with gdap_plan_destroy.
 */
GDAP_API gdap_status gdap_plan_create(gdap_plan** out, const gdap_map* src, const gdap_map* dst, gdap_dtype dtype,
                                      int64_t rank);

/**
 * Writes the destination roles that keep the most elements on their rank (COSTA's relabeling).
 * With roles, rank r holds destination rank roles[r]'s section instead of its own, which a caller
 * adopts by renumbering its ranks after the move (e.g. MPI_Comm_split with key roles[r]) so that
 * `dst` describes the renumbered ranks. The roles are chosen greedily over the plan's messages,
 * largest first; an identity or rank-permuted redistribution then moves nothing between ranks.
 * `roles` is the caller's, `nroles` entries: the larger map's rank count, else
 * GDAP_ERR_INVALID_ARGUMENT (roles untouched).
 * Every rank computes the same roles; nothing is communicated. The maps are borrowed. Cost: every
 * message of the whole plan (O(ranks^2) for an all-to-all), held at once.
 */
GDAP_API gdap_status gdap_plan_roles_keeping(int64_t* roles /*[nroles]*/, int64_t nroles, const gdap_map* src,
                                             const gdap_map* dst);

/**
 * gdap_plan_create with destination roles: rank `rank`'s destination section is that of `dst`'s
 * rank roles[rank] (gdap_plan_roles_keeping says why). `roles` (borrowed for the call) holds
 * `nroles` entries, a permutation of 0 .. nroles - 1 with nroles the larger map's rank count;
 * GDAP_ERR_INVALID_ARGUMENT names the first entry out of range or repeated. Every rank's plan of
 * one redistribution must have the same roles (gdap_redistribute refuses otherwise, on every rank).
 * On success `*out` is a new plan the caller destroys with gdap_plan_destroy.
 */
GDAP_API gdap_status gdap_plan_create_with_roles(gdap_plan** out, const gdap_map* src, const gdap_map* dst,
                                                 gdap_dtype dtype, int64_t rank, const int64_t* roles /*[nroles]*/,
                                                 int64_t nroles);

/** Destroys a plan. NULL is a no-op. */
GDAP_API gdap_status gdap_plan_destroy(gdap_plan* plan);

/** What one rank's plan moves. Messages and sent bytes exclude its copy within itself. */
typedef struct gdap_plan_stats {
  uint32_t struct_size;  /**< set by the caller to sizeof(gdap_plan_stats) (GDAP_PLAN_STATS_INIT) */
  uint32_t reserved_head; /**< 0 */
  int64_t rank;          /**< the rank planned */
  int64_t nranks;        /**< ranks in the group */
  int64_t send_messages; /**< messages to other ranks */
  int64_t recv_messages; /**< messages from other ranks */
  int64_t send_bytes;    /**< bytes to other ranks */
  int64_t recv_bytes;    /**< bytes from other ranks */
  int64_t local_bytes;   /**< bytes copied within the rank */
  int64_t send_runs;     /**< contiguous runs sent (C-order local sections) */
  int64_t recv_runs;     /**< contiguous runs received */
  int64_t local_runs;    /**< contiguous runs copied within the rank */
} gdap_plan_stats;

/** A gdap_plan_stats with struct_size set and every count zero. */
#define GDAP_PLAN_STATS_INIT {sizeof(gdap_plan_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/** Fills `*stats` (whose struct_size the caller sets) with the plan's counts. O(1). */
GDAP_API gdap_status gdap_plan_stats_get(gdap_plan_stats* stats, const gdap_plan* plan);

/**
 * Collective: moves every owned element of `src` (this rank's section of the plan's source
 * distribution) to `dst` (its section of the destination distribution), out of place: `src` is
 * only read, and only the owned elements of `dst` are written (padding and halos untouched).
 * `plan` is this rank's plan (its rank must be the communicator's, its group size the
 * communicator's size). Each array must have the plan's dtype and the local shape its map gives
 * this rank; `dst` must be writable. Any strides. Every rank checks its own arguments, then the
 * ranks agree: if any rank's check fails, no rank moves anything and every rank returns an error
 * (the failing rank its own, the others GDAP_ERR_REMOTE naming it).
 * Device arrays: queued on the communicator's stream and returns without waiting for the copy
 * (group: every rank's stream waits for its peers' before and after, so no rank reads or writes
 * a peer's section while that peer's earlier or later work touches it).
 */
GDAP_API gdap_status gdap_redistribute(gdap_comm* comm, const gdap_plan* plan, const gdap_array* src, gdap_array* dst);

/** Reductions (gdap_allreduce, gdap_reduce_scatter, gdap_reduce_axes). */
typedef enum gdap_reduce_op {
  GDAP_REDUCE_SUM = 1,
  GDAP_REDUCE_PROD = 2,
  GDAP_REDUCE_MIN = 3,
  GDAP_REDUCE_MAX = 4,
  GDAP_REDUCE_MEAN = 5 /**< gdap_reduce_axes only, float32/64: the sum over the count of elements */
} gdap_reduce_op;

/**
 * Collective, in place: every rank's `section` becomes the element-wise `op` of all ranks'
 * sections, the all-reduce of replicated or partial sections (cupyx.distributed.array's sum, prod,
 * min and max modes made replicas again). Every rank must pass rank 0's op, and its section must
 * have rank 0's shape, dtype and kind of memory (strides may differ); otherwise every rank gets
 * GDAP_ERR_INVALID_ARGUMENT naming the first rank that differs, and no section changes. Dtypes: int8/32/64, uint8/32/64,
 * float32/64. Every rank ends with bitwise the same values. Engines: the in-process group reads
 * its peers' host sections directly (device sections: GDAP_ERR_UNSUPPORTED, use NCCL); MPI runs
 * MPI_Allreduce (host-accessible memory; a strided section goes through a packed copy); NCCL runs
 * ncclAllReduce on the communicator's stream (C-contiguous device sections) and returns once it
 * is queued. `section` is borrowed.
 */
GDAP_API gdap_status gdap_allreduce(gdap_comm* comm, gdap_array* section, gdap_reduce_op op);

/**
 * Collective, out of place: the reduce-scatter of replicated or overlapping sections. Every
 * global element of `result` that this rank owns becomes the `op` (sum, prod, min, max) of that
 * element over every rank whose `source` section holds it as an owned element (replicas of
 * unstructured dimensions without one_to_one each count; padding never does; a rank whose section
 * does not hold an element contributes nothing; an element no rank holds gets the op's identity:
 * 0, 1, the dtype's largest or smallest value, +-inf for floats). `source` and `result` may have
 * any distributions (gdap_map_create_replicated's, block, cyclic, unstructured, padded) of one
 * global shape and dtype; `result`'s padding is untouched, `source` is only read. Dtypes as
 * gdap_allreduce. Host-accessible sections on an in-process group or MPI; device sections on
 * the GPU of an NCCL communicator (queued on its stream: the call returns once the work is queued).
 * Every rank checks its own arguments (NULLs, dtypes,
 * shapes, writable result, memory), then the ranks agree and check that every rank passed the same
 * op and a source of the same ndim, dtype and kind of memory (else GDAP_ERR_INVALID_ARGUMENT on
 * every rank, naming the first rank that differs and what: "rank 1 passed source dtype float32
 * but rank 0 float64"); a failure leaves every result unchanged and every rank returns an error (the failing rank its
 * own, the others GDAP_ERR_REMOTE naming it). Both distributions are gathered and checked as
 * gdap_map_create_collective does, and remembered on the communicator (the last 8, up to 256 MiB
 * of dictionaries in all, freed by gdap_comm_destroy): a call that repeats every rank's
 * distributions exchanges only a few bytes per rank before its data moves, in one exchange
 * together with the agreement. Cost: each rank fills a buffer that the ranks reduce. When
 * every result element has one owner (no replicas), the buffer has one segment per rank, each
 * the size of the largest result section, and the ranks reduce-scatter it, so each receives only
 * its own part. Otherwise, or when padding and uneven blocks would make the segments' total twice
 * the global size or more, the buffer is the whole result and the ranks all-reduce it. The
 * buffer (host or device memory) is kept on the communicator for later reductions, and
 * gdap_comm_destroy frees it. On every communicator the buffer is skipped where it would only copy: a
 * source whose owned elements already lie in segment order (a replicated C-order array into row
 * blocks) is sent as it is, and a result section that is its segment (no padding, C order)
 * receives its part in place. On MPI, a call that then times out (GDAP_ERR_TIMEOUT) leaves its
 * operation with MPI, which may still read that source and write that result: keep both alive
 * until the job ends, as for gdap_allreduce's in-place section. `source` and `result` are borrowed.
 */
GDAP_API gdap_status gdap_reduce_scatter(gdap_comm* comm, const gdap_array* source, gdap_array* result,
                                         gdap_reduce_op op);

/**
 * Collective, out of place: the global reduction of the distributed array `source` over the axes
 * `axes[0..naxes)` (each in [-ndim, ndim), negative counting from the end as in NumPy; no axis
 * twice), with `op` sum, prod, min, max or mean (mean: float32/64 only). `axes` NULL (with naxes 0)
 * reduces every axis; a non-NULL `axes` with naxes 0 reduces none (mind an empty std::vector, whose
 * data() may be NULL). Each global element counts once: only owned elements are read (padding
 * never), and a replicated element (unstructured dimensions without one_to_one) is read on its
 * lowest-ranked holder only. The reduced axes are removed (NumPy's default, keepdims=False):
 * `result` describes an array of ndim - naxes dimensions whose sizes are `source`'s kept sizes, in
 * any distribution (replicated through gdap_map_create_replicated, block, cyclic, ...); every rank
 * writes the elements it owns. When every axis is reduced, `result` is a 0-d section on every rank
 * (one element, the whole reduction). Mean divides the sum by the number of global elements
 * reduced: the product of the reduced axes' sizes, counting only indices some rank holds (NaN when
 * that is 0). A result element into which no element reduces (a kept unstructured index no rank
 * holds) gets the op's identity. Dtypes as gdap_allreduce; `result` must have `source`'s dtype.
 * Host-accessible sections on an in-process group or MPI; device sections on the GPU of an NCCL
 * communicator (queued on its stream, reproducible: a fixed reduction order). Errors (an axis out of range or repeated, a dtype or shape mismatch, a
 * read-only result, ranks passing different ops, axes or source dtypes) reach every rank as for
 * gdap_reduce_scatter, and no result changes. Cost: each rank reduces its owned elements into a
 * buffer laid out as gdap_reduce_scatter's (one segment per owner, reduce-scattered, or the kept
 * global shape, all-reduced). `source`, `result` and `axes` are borrowed.
 */
GDAP_API gdap_status gdap_reduce_axes(gdap_comm* comm, const gdap_array* source, gdap_array* result,
                                      gdap_reduce_op op, const int64_t* axes /*[naxes] or NULL*/,
                                      int64_t naxes);

/* ---------------------------------------------------------------------------------------------
 * Halo exchange (layer 5): filling padding from the neighbours' owned elements (periodic wrap included)
 * ------------------------------------------------------------------------------------------- */

/** One rank's part of a halo exchange on one distribution. Opaque, read-only, reusable. */
typedef struct gdap_halo gdap_halo;

/** How a halo is exchanged. Initialise with GDAP_HALO_OPTIONS_INIT; grows at its end only. */
typedef struct gdap_halo_options {
  uint32_t struct_size;  /**< sizeof(gdap_halo_options) as the caller compiled it */
  int32_t corners;       /**< non-zero (default): edges and corners too (a full-neighbourhood stencil);
                              0: faces only (cells that differ from owned ones along one dimension) */
  const int64_t* widths; /**< NULL (default): all padding; else ndim caps >= 0: along dimension i
                              only the widths[i] cells next to the kept ones (owned, less periodic
                              boundary padding) on each side
                              are filled (0: none). A cap > 0 on a dimension that is not 'b' is an
                              error. Borrowed: read during gdap_halo_create only. */
} gdap_halo_options;

/** A gdap_halo_options with struct_size set, corners on and no width caps. */
#define GDAP_HALO_OPTIONS_INIT {sizeof(gdap_halo_options), 1, NULL}

/**
 * Plans rank `rank`'s halo exchange on distribution `map` for elements of `dtype`: which boxes of
 * its padding each rank fills and which boxes of its owned elements it sends. Filled are the
 * communication padding of 'b' dimensions (the 'padding' on sides with a neighbour, DAP 0.10),
 * from the neighbour's owned cells, and on a 'periodic' dimension the edge ranks' boundary padding
 * (grid rank 0's padding[0], the last grid rank's padding[1]), from the periodic image: with
 * boundary padding bl and bu, a cell g < bl gets g + n and a cell g >= size - bu gets g - n, where
 * n = size - bl - bu (onto the rank itself when the dimension has one grid rank). Boundary padding
 * of non-periodic dimensions is never written. Other dimensions are carried along whole.
 * `options` may be NULL (defaults). Not collective, but every rank of the map computes the same
 * verdict: GDAP_ERR_INVALID_ARGUMENT if no rank has padding to exchange into (under the caps), a
 * cap is asked on a dimension that is not 'b', or a periodic dimension's boundary padding is wider
 * than n or differs between the ranks at one edge (the protocol allows it, a period does not);
 * GDAP_ERR_OUT_OF_RANGE for a bad rank, GDAP_ERR_UNSUPPORTED for a
 * dtype that is not whole bytes. `map` and `options` are borrowed (the halo keeps what it needs).
 * Cost: O(3^ndim * ndim) boxes (a side cut where it mirrors several ranks' cells counts each cut).
 * On success `*out` is a new halo the caller destroys with gdap_halo_destroy.
 */
GDAP_API gdap_status gdap_halo_create(gdap_halo** out, const gdap_map* map, gdap_dtype dtype, int64_t rank,
                                      const gdap_halo_options* options /*or NULL*/);

/** Destroys a halo. NULL is a no-op. */
GDAP_API gdap_status gdap_halo_destroy(gdap_halo* halo);

/** What one rank's halo exchange moves. Messages and bytes exclude its copies within itself. */
typedef struct gdap_halo_stats {
  uint32_t struct_size;  /**< set by the caller to sizeof(gdap_halo_stats) (GDAP_HALO_STATS_INIT) */
  uint32_t reserved_head; /**< 0 */
  int64_t rank;          /**< the rank planned */
  int64_t nranks;        /**< ranks in the group */
  int64_t send_messages; /**< messages to other ranks (one per neighbour rank) */
  int64_t recv_messages; /**< messages from other ranks */
  int64_t send_bytes;    /**< bytes to other ranks */
  int64_t recv_bytes;    /**< bytes from other ranks */
  int64_t local_bytes;   /**< bytes copied within the rank (a periodic wrap onto itself) */
} gdap_halo_stats;

/** A gdap_halo_stats with struct_size set and every count zero. */
#define GDAP_HALO_STATS_INIT {sizeof(gdap_halo_stats), 0, 0, 0, 0, 0, 0, 0, 0}

/** Fills `*stats` (whose struct_size the caller sets) with the halo's counts. O(1). */
GDAP_API gdap_status gdap_halo_stats_get(gdap_halo_stats* stats, const gdap_halo* halo);

/**
 * Collective: fills the padding of `local` (this rank's section of the halo's distribution) as
 * gdap_halo_create says, in place: the cells it fills are only written and every other element
 * only read; boundary padding of non-periodic dimensions is untouched. `halo` is this rank's (its rank the communicator's, its group size
 * the communicator's size). `local` must have the halo's dtype, the local shape and dictionaries the
 * map gives this rank, and be writable; any strides. Every rank checks its own arguments, then the
 * ranks agree: if any rank's check fails, no rank touches any data and every rank returns an error
 * (the failing rank its own, the others GDAP_ERR_REMOTE naming it). Every rank's halo must come
 * from the same map (compared by digest), dtype, corners and widths: otherwise every rank returns
 * GDAP_ERR_INVALID_ARGUMENT naming the first rank that differs and what, and nothing moves.
 * Host-accessible sections: in-process group or MPI; returns when this rank's padding is filled.
 * Device sections: in-process group or NCCL; queued on the communicator's stream and returns
 * without waiting (group: every rank's stream waits for its peers' before and after, as
 * gdap_redistribute). `local` is borrowed (and, on a device, until the stream reaches that point).
 */
GDAP_API gdap_status gdap_halo_exchange(gdap_comm* comm, const gdap_halo* halo, gdap_array* local);

/**
 * A persistent halo exchange: one rank's halo bound to its communicator and section, run again and
 * again by gdap_exchange_start (MPI's persistent collectives work so: an _init call, then starts).
 */
typedef struct gdap_exchange gdap_exchange;

/**
 * Collective: binds `halo` to `comm` and `local` for repeated exchanges. Every check of
 * gdap_halo_exchange runs here, once, with the ranks' agreement: if any rank's check fails, every
 * rank returns an error (the failing rank its own, the others GDAP_ERR_REMOTE naming it) and no
 * exchange is made. Moves no data. `comm`, `halo` and `local` are borrowed: they must outlive the
 * exchange. On success `*out` is a new exchange the caller destroys with gdap_exchange_destroy.
 * On an NCCL communicator whose ranks share one host and reach each other's GPUs (peer access, or
 * CUDA IPC between processes), each rank also allocates a receive staging of twice its halo's
 * received bytes and maps its neighbours' (one more allgather), so that starts write directly;
 * otherwise, or with GDAP_NCCL_PEER=0 on any rank, starts use NCCL send/receive.
 */
GDAP_API gdap_status gdap_halo_exchange_init(gdap_exchange** out, gdap_comm* comm, const gdap_halo* halo,
                                             gdap_array* local);

/**
 * Collective: one halo exchange of a bound exchange, as gdap_halo_exchange would make it, without
 * its checks and, on MPI and NCCL, without its agreement, which are a round trip of their own: on
 * NCCL a start queues on the communicator's stream one kernel that writes this rank's faces packed
 * into its neighbours' staging and then signals them through flags there, and one kernel that
 * waits for its neighbours' signals and unpacks its own staging into the padding (or, without
 * direct writes, the pack kernel, one NCCL group and the unpack kernel), and returns without
 * waiting on the host. A neighbour that does not start within the communicator's timeout (at init)
 * leaves that start's padding partly unfilled and makes every later start return GDAP_ERR_TIMEOUT. Every rank starts its exchange of the same halo,
 * as many times. On the in-process group a start is gdap_halo_exchange (its agreement is the
 * rendezvous its copies need anyway). GDAP_ERR_TIMEOUT at once on a communicator that an earlier
 * call broke; a rank that never starts costs the others what a missing rank costs
 * gdap_halo_exchange's data step (docs/api.md, faults).
 */
GDAP_API gdap_status gdap_exchange_start(gdap_exchange* exchange);

/**
 * Destroys an exchange (not collective; nothing it borrows). NULL is a no-op. An exchange with
 * direct writes first waits for its GPU's queued work: a neighbour's start writes into this
 * rank's staging, so every rank destroys its exchange only after its last start.
 */
GDAP_API gdap_status gdap_exchange_destroy(gdap_exchange* exchange);

/* ---------------------------------------------------------------------------------------------
 * .dnpy files: DistArray's per-rank format, one `<prefix>_<rank>.dnpy` per rank holding
 * that rank's __version__, dim_data and local buffer (padding included). See docs/dnpy.md.
 * ------------------------------------------------------------------------------------------- */

/**
 * Collective: every rank writes its own section (dim_data, protocol version and every element,
 * padding included, in C order) to `<prefix>_<rank>.dnpy`, byte for byte as DistArray 0.6 writes it
 * under the NumPy it runs on (< 1.24: the .npy header dict padded to 64 bytes, without the room
 * newer NumPy adds; see docs/dnpy.md), through a temporary file of its own in the file's folder
 * (O_CREAT|O_EXCL|O_NOFOLLOW, an unpredictable name) renamed into place: an existing file, or a
 * symbolic link, at the name is replaced, as DistArray and numpy.save replace it, never written
 * through; a failed write removes the temporary. No rank renames its file into place before every
 * rank has written, flushed (fsync) and closed its own: a rank's refusal or write error leaves every
 * old file as it was. If a rank's rename then fails, every rank puts its old file back (kept under
 * a hidden hard link meanwhile) or removes its new one where there was none, and every rank returns
 * the failing rank's error naming its path: the files are never of two saves. Unstructured indices
 * are written as a list. Device
 * sections are copied through pinned host memory once the communicator's stream has reached this
 * call; returns when the file is written. Dtypes: bool, int8-64, uint8-64, float16/32/64,
 * complex64/128 (GDAP_ERR_UNSUPPORTED otherwise). GDAP_ERR_INVALID_ARGUMENT when the header would
 * pass the format's 65535 bytes; GDAP_ERR_IO naming the file and the system's reason. Errors are
 * agreed: every rank returns one (the others GDAP_ERR_REMOTE naming the failing rank). Every rank
 * must pass rank 0's `prefix` (as written and as it resolves on that rank) and a section of its
 * dtype and global shape: otherwise every rank returns GDAP_ERR_INVALID_ARGUMENT naming the first
 * rank that differs and what differs, and no file is replaced. `prefix` and `section` are borrowed.
 */
GDAP_API gdap_status gdap_dnpy_save(gdap_comm* comm, const gdap_array* section, const char* prefix);

/**
 * Collective: every rank reads `<prefix>_<rank>.dnpy` (written by gdap, DistArray or any writer of
 * the format) into a new C-contiguous section on `device` (host; or, in a CUDA build, device memory
 * staged through pinned host memory, pinned or managed memory), with the file's dim_data, dtype and
 * protocol version. Only a regular file is read, opened without blocking (a FIFO, a folder or a
 * device is GDAP_ERR_IO naming it). The file is parsed without evaluating anything: malformed files
 * give GDAP_ERR_IO naming the file, the byte offset and the key (bad magic, truncation, a header
 * length past the end, an unknown or missing key, bytes after the payload); a payload dtype gdap
 * does not hold or a big-endian one GDAP_ERR_UNSUPPORTED naming the descr; dim_data that breaks the
 * protocol or does not match the payload's shape GDAP_ERR_PROTOCOL; a file whose grid coordinates
 * are another rank's, or whose grid is not the communicator's size, GDAP_ERR_INVALID_ARGUMENT.
 * Every rank must pass rank 0's `prefix` (as written and as it resolves on that rank): otherwise
 * every rank returns GDAP_ERR_INVALID_ARGUMENT naming the first rank that differs, so that no load
 * mixes two saves' files. `*out` is set only when every rank read its file; the caller destroys it
 * with gdap_array_destroy. Returns when the data is in place. `prefix` is borrowed.
 */
GDAP_API gdap_status gdap_dnpy_load(gdap_array** out, gdap_comm* comm, const char* prefix, gdap_device device);

/* ---------------------------------------------------------------------------------------------
 * Zarr v3 stores: collective save and load of a distributed array, each rank reading or writing
 * only the chunks it needs. See docs/zarr.md.
 * ------------------------------------------------------------------------------------------- */

/** Codecs gdap_zarr_save can write (gdap_zarr_load reads these and more: docs/zarr.md). */
typedef enum gdap_zarr_codec {
  GDAP_ZARR_RAW = 0,        /**< "bytes" (little endian) only: uncompressed */
  GDAP_ZARR_ZSTD = 1,       /**< "bytes" then "zstd" (zarr-python's default) */
  GDAP_ZARR_BLOSC_LZ4 = 2,  /**< "bytes" then "blosc" with lz4 (numcodecs' default), shuffled by `shuffle` */
  GDAP_ZARR_BLOSC_ZSTD = 3  /**< "bytes" then "blosc" with zstd, shuffled by `shuffle` */
} gdap_zarr_codec;

/** How gdap_zarr_save lays out the store's files. */
typedef enum gdap_zarr_layout {
  GDAP_ZARR_SHARDS = 0, /**< one shard ("sharding_indexed") per rank's block, of inner chunks of at most
                             chunk_bytes (default): a reader of any layout reads only the inner chunks it needs */
  GDAP_ZARR_CHUNKS = 1  /**< one chunk file per rank's block, no sharding (gdap 0.1's only layout) */
} gdap_zarr_layout;

/** How blosc rearranges the bytes of a chunk before compressing them. */
typedef enum gdap_zarr_shuffle {
  GDAP_ZARR_SHUFFLE = 0,   /**< bytes grouped by their position in an element (blosc's and gdap's default) */
  GDAP_ZARR_NOSHUFFLE = 1, /**< as they are */
  GDAP_ZARR_BITSHUFFLE = 2 /**< bits grouped by their position in an element */
} gdap_zarr_shuffle;

/**
 * Options of gdap_zarr_save. Fields may be appended after struct_size in minor releases; gdap reads
 * only the fields the caller's struct_size covers and gives the others their defaults (those of
 * GDAP_ZARR_OPTIONS_INIT). A struct_size the versioned-struct policy refuses (below 24, the size of
 * 0.1's struct, not a multiple of 8, or above GDAP_MAX_STRUCT_SIZE) is GDAP_ERR_INVALID_ARGUMENT.
 */
typedef struct gdap_zarr_options {
  uint32_t struct_size;   /**< set by the caller to sizeof(gdap_zarr_options) (GDAP_ZARR_OPTIONS_INIT) */
  uint32_t reserved_head; /**< 0 */
  int32_t codec;       /**< a gdap_zarr_codec */
  int32_t zstd_level;  /**< the codec's level: zstd 1 to 22 (0: zstd's default, 3); blosc 1 to 9 (0: 5);
                            ignored for GDAP_ZARR_RAW. Ranks are compared, and zarr.json records the
                            level, as it takes effect (0 and 3 agree) */
  int32_t overwrite;   /**< nonzero: replace a store already at the path; 0: refuse it */
  int32_t reserved;    /**< 0 */
  /* Appended in gdap 0.2. */
  int32_t layout;      /**< a gdap_zarr_layout: GDAP_ZARR_SHARDS (default) or GDAP_ZARR_CHUNKS */
  int32_t shuffle;     /**< a gdap_zarr_shuffle, for the blosc codecs */
  int64_t chunk_bytes; /**< GDAP_ZARR_SHARDS: the most bytes of an inner chunk (0: 2 MiB); each inner
                            chunk extent divides the block's, halving the widest until it fits */
} gdap_zarr_options;

/** gdap_zarr_options: shards of inner chunks of at most 2 MiB, zstd at its default level, no overwrite. */
#define GDAP_ZARR_OPTIONS_INIT {sizeof(gdap_zarr_options), 0, GDAP_ZARR_ZSTD, 0, 0, 0, GDAP_ZARR_SHARDS, GDAP_ZARR_SHUFFLE, 0}

/**
 * Collective: writes the distributed array whose sections are `section` on each rank (this rank's
 * section of `map`, which spans the communicator) to a Zarr v3 directory store at `path`
 * (zarr.json and one file per shard or chunk). The grid of shards (GDAP_ZARR_SHARDS, the default)
 * or chunks (GDAP_ZARR_CHUNKS) comes from the distribution: along a block dimension with equal
 * blocks one block, along a cyclic one one block of block_size, along an undistributed one the
 * whole extent; any other layout (irregular blocks, unstructured, replicas) is first redistributed
 * to equal blocks on the same grid. So each file has one writer: each rank writes only its own
 * (edges padded with the fill value 0; a shard's inner chunks wholly past the array's end are left
 * empty in its index), and rank 0 writes zarr.json last, once every rank has written, so a store
 * whose save failed has no zarr.json. A shard is "sharding_indexed" with inner chunks of at most
 * options->chunk_bytes (default 2 MiB; each extent a divisor of the block's), the chosen codec on
 * each inner chunk, and an index of "bytes" and "crc32c" at its end. Only owned elements are
 * written (padding never). Device sections are staged through host memory. `options` may be NULL
 * (GDAP_ZARR_OPTIONS_INIT). Every rank must pass rank 0's `path` (as written, and as it resolves in
 * that rank's working folder), options, dtype and map (by value: a map made alike on each rank):
 * otherwise every rank returns GDAP_ERR_INVALID_ARGUMENT naming the first rank that differs and what
 * differs, before anything is written. Errors are collective: every rank returns one (GDAP_ERR_IO naming the
 * file and the system's reason; GDAP_ERR_INVALID_ARGUMENT if a store exists at `path` and overwrite
 * is 0, if something there is not provably a Zarr array store (overwrite removes only a store whose
 * zarr.json is a regular file of Zarr v3 array metadata and whose other entries are all its chunk
 * keys; anything else is refused, naming it, before anything is removed), for a bad option naming it, or for GDAP_ZARR_CHUNKS with a block of more than 2 GiB;
 * GDAP_ERR_UNSUPPORTED for a codec this build lacks). The new store is written into a hidden folder
 * inside `path` (".gdap-new-<random>"; the folder `path` itself is never renamed or replaced, so a
 * mount point, its mode and xattrs stay), flushed to the disk, and moved in only once every rank has
 * written its chunks: a refusal or a write error on any rank (a full disk, a device error while
 * staging) leaves an old store at `path` as it was and removes the hidden folder (docs/zarr.md tells
 * what a crash can leave and how to finish it). Dtypes: bool, int8-64, uint8-64,
 * float16/32/64, complex64/128. Everything is borrowed; `section` is only read.
 */
GDAP_API gdap_status gdap_zarr_save(gdap_comm* comm, const gdap_map* map, const gdap_array* section,
                                    const char* path, const gdap_zarr_options* options /*or NULL*/);

/**
 * Collective: fills the owned elements of `section` (this rank's section of `map`, which spans the
 * communicator and has the store's global shape and dtype) from the Zarr v3 array at `path`, with
 * any chunk grid (written by gdap, zarr-python, TensorStore or others): each rank reads only the
 * chunks its owned elements fall in, and of a shard only its index and the inner chunks it needs;
 * a chunk file or inner chunk that is absent reads as the fill value (nothing of its size is
 * allocated for it). Codecs: "transpose", "bytes" (either endian), "sharding_indexed" (nested
 * codecs, nested shards, the index at the start or the end, with or without "crc32c"), "zstd",
 * "blosc" (any compressor and shuffle of c-blosc 1), "gzip" and "crc32c"; any other gives
 * GDAP_ERR_UNSUPPORTED naming it. Chunk keys: "default" and "v2" encodings. Only regular files are
 * read, opened without blocking (a folder, FIFO or device where a file should be is GDAP_ERR_IO
 * naming it); a piece decoded whole (a chunk, or an inner chunk of a shard) of more than 2 GiB, a
 * zarr.json of more than 16 MiB or holding a NUL byte, and a fill value outside its data type are
 * refused before anything is allocated for them; a shard index entry past the file's end, data
 * that decodes to more than its chunk, or a checksum that does not match is GDAP_ERR_IO naming the
 * chunk (docs/zarr.md, "Limits"). Nothing is written to `section` unless every rank read everything
 * it needs (a missing store, a malformed zarr.json or a corrupt chunk on any rank: every rank
 * returns an error, the others GDAP_ERR_REMOTE naming it). Every rank must pass rank 0's `path` (as
 * written and as it resolves on that rank), dtype and map: otherwise every rank returns
 * GDAP_ERR_INVALID_ARGUMENT naming the first rank that differs and what differs, and no section
 * changes. Padding is not touched. Device sections are staged through host memory. Everything is
 * borrowed.
 */
GDAP_API gdap_status gdap_zarr_load(gdap_comm* comm, const gdap_map* map, gdap_array* section, const char* path);

/**
 * Reads the global shape and dtype of the Zarr v3 array at `path` (its zarr.json), so that a caller
 * can build a map for gdap_zarr_load. `shape` (may be NULL when `capacity` is 0) receives up to
 * `capacity` extents and `*ndim` the number of dimensions: GDAP_ERR_BUFFER_TOO_SMALL if `shape` is
 * too short (with `*ndim` set, so a caller may ask with capacity 0 first). `dtype` may be NULL.
 * Not collective. Borrowed arguments.
 */
GDAP_API gdap_status gdap_zarr_shape_read(int64_t* shape /*[capacity] or NULL*/, int64_t* ndim,
                                          gdap_dtype* dtype /*or NULL*/, const char* path, int64_t capacity);

/* ---------------------------------------------------------------------------------------------
 * Distributed GEMM (layer 5): C = alpha * A * B + beta * C, SUMMA over a 2-d process grid
 * ------------------------------------------------------------------------------------------- */

/** One rank's part of a distributed matrix product. Opaque; reusable; not for two threads at once. */
typedef struct gdap_gemm gdap_gemm;

/** How the local products are computed. Tensor-core modes are used only when asked for. */
typedef enum gdap_gemm_mode {
  GDAP_GEMM_EXACT = 0, /**< default: fp32 products for float32, fp64 for float64 */
  GDAP_GEMM_TF32 = 1,  /**< float32 only, device only: inputs rounded to TF32 on tensor cores */
  GDAP_GEMM_BF16 = 2   /**< float32 only, device only: inputs rounded to bfloat16 on tensor cores */
} gdap_gemm_mode;

/** Options of gdap_gemm_create. Initialise with GDAP_GEMM_OPTIONS_INIT; grows at its end only. */
typedef struct gdap_gemm_options {
  uint32_t struct_size; /**< sizeof(gdap_gemm_options) as the caller compiled it */
  int32_t mode;         /**< a gdap_gemm_mode (default GDAP_GEMM_EXACT) */
  int64_t panel_width;  /**< widest k-panel broadcast per SUMMA step, >= 0; 0 (default) picks 1024 */
} gdap_gemm_options;

/** A gdap_gemm_options with struct_size set, exact arithmetic and the default panel width. */
#define GDAP_GEMM_OPTIONS_INIT {sizeof(gdap_gemm_options), GDAP_GEMM_EXACT, 0}

/**
 * Collective: plans this rank's part of C = alpha * A * B + beta * C for matrices of `dtype`
 * (float32 or float64) distributed as `a` (M x K), `b` (K x N) and `c` (M x N), each a 2-d map over
 * the communicator's ranks. No transposes. SUMMA works on C's grid when C is 'b' (no padding) or
 * 'c' / block-cyclic along both dimensions, A's rows are laid out as C's rows, B's columns as C's
 * columns, and A's columns and B's rows are 'b' or 'c' over the same grid. An operand that does not
 * fit is redistributed internally (gdap_plan) into one that does at every gdap_gemm_execute (C also
 * back again; a C that does not fit is worked on in even blocks over a near-square grid), and
 * gdap_gemm_stats_get says which and how many bytes move. Errors, the same on every rank (a rank's
 * own, the others GDAP_ERR_REMOTE): GDAP_ERR_INVALID_ARGUMENT for a map that is not 2-d, shapes that
 * do not chain (naming the dimensions and sizes), maps over another number of ranks than the
 * communicator's, a dtype other than float32/float64, a tensor-core mode with float64, a bad mode
 * or panel width, and ranks whose M, K, N, dtype, mode, panel width or maps (compared by digest)
 * differ from rank 0's (naming the rank and what differs). `comm`, the maps and `options` (may be NULL) are borrowed. On success `*out` is a
 * new plan destroyed with gdap_gemm_destroy.
 */
GDAP_API gdap_status gdap_gemm_create(gdap_gemm** out, gdap_comm* comm, const gdap_map* a, const gdap_map* b,
                                      const gdap_map* c, gdap_dtype dtype,
                                      const gdap_gemm_options* options /*or NULL*/);

/** Destroys a plan and the buffers it keeps (host and device). Not collective. NULL is a no-op. */
GDAP_API gdap_status gdap_gemm_destroy(gdap_gemm* gemm);

/** What one rank's gemm plan does per gdap_gemm_execute. */
typedef struct gdap_gemm_stats {
  uint32_t struct_size;       /**< set by the caller to sizeof(gdap_gemm_stats) (GDAP_GEMM_STATS_INIT) */
  uint32_t reserved_head;     /**< 0 */
  int64_t rank;               /**< the rank planned */
  int64_t nranks;             /**< ranks in the group */
  int64_t grid_rows;          /**< rows of the process grid SUMMA runs on */
  int64_t grid_cols;          /**< columns of that grid */
  int64_t redistributed_a;    /**< 1 if A is redistributed to fit SUMMA at each execute, else 0 */
  int64_t redistributed_b;    /**< 1 if B is */
  int64_t redistributed_c;    /**< 1 if C is (in before the product and out after it) */
  int64_t redistribute_bytes; /**< bytes this rank sends and receives in those redistributions */
  int64_t panels;             /**< SUMMA steps (k-panels) */
  int64_t panel_bytes;        /**< bytes of panels this rank receives from other ranks */
  int64_t local_m;            /**< rows of this rank's working block of C */
  int64_t local_n;            /**< columns of this rank's working block of C */
  int64_t flops;              /**< floating-point operations of this rank's local products (2 m n k);
                                   INT64_MAX (9.2e18) where that exceeds int64 */
} gdap_gemm_stats;

/** A gdap_gemm_stats with struct_size set and every count zero. */
#define GDAP_GEMM_STATS_INIT {sizeof(gdap_gemm_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

/** Fills `*stats` (whose struct_size the caller sets) with the plan's counts. O(1). Not collective. */
GDAP_API gdap_status gdap_gemm_stats_get(gdap_gemm_stats* stats, const gdap_gemm* gemm);

/**
 * Collective: C = alpha * A * B + beta * C with this rank's sections `a`, `b` and `c` of the plan's
 * three maps (local shapes as the maps give this rank, the plan's dtype, any strides on the host;
 * device sections need unit stride along dimension 1). beta = 0 ignores C's old values (NaN
 * included); alpha = 0 or K = 0 only scales C. `comm` must be the one the plan was made with.
 * Every rank checks its arguments (dtype, shape, a writable C that shares no memory with A or B,
 * all three in one kind of memory, that kind, alpha and beta the same on every rank, a tensor-core
 * mode only for device sections), then the ranks agree: on any failure no rank touches any data and every rank
 * returns an error (the failing rank its own, the others GDAP_ERR_REMOTE naming it).
 * Host sections (in-process group or MPI): BLAS products, the next panel's broadcast overlapping
 * the current product on MPI; returns when C is done. Device sections (in-process group or NCCL):
 * cuBLAS products on the communicator's stream, panels double-buffered and moved on a second stream
 * so that moving panel p+1 overlaps multiplying panel p; returns once the work is queued (with
 * redistributed operands, after the host-side steps of those redistributions).
 * `a` and `b` are only read; everything is borrowed (device sections until the stream gets there).
 * `gemm` keeps buffers between calls: one plan must not run on two threads at once.
 */
GDAP_API gdap_status gdap_gemm_execute(gdap_comm* comm, gdap_gemm* gemm, double alpha, const gdap_array* a,
                                       const gdap_array* b, double beta, gdap_array* c);

/* ---------------------------------------------------------------------------------------------
 * Sharing sections between processes of one node: IPC handles over CUDA IPC (device memory) and
 * POSIX shared memory (host memory). See docs/ipc.md for the handle's layout and lifetime rules.
 * ------------------------------------------------------------------------------------------- */

/** Bytes of an IPC handle: every handle has exactly this size, whatever the array. */
#define GDAP_IPC_HANDLE_SIZE 2048
/** The most dimensions a section shared through an IPC handle may have. */
#define GDAP_IPC_MAX_NDIM 8
/** The 8 bytes an IPC handle starts with (no terminating NUL in the handle). */
#define GDAP_IPC_MAGIC "GDAP-IPC"
/** The layout version of IPC handles this gdap writes and reads. */
#define GDAP_IPC_FORMAT_VERSION 2

/**
 * Allocates a C-contiguous host section (zero-filled) in a new POSIX shared-memory segment, so that
 * gdap_ipc_export can share it with other processes of the node. `name` is the segment's name as
 * shm_open takes it ("/" then up to 254 characters, no other "/"), or NULL or "" for a fresh
 * "/gdap-<pid>-<n>-<random>"; an existing name, or one holding a control character (a newline), is
 * refused (GDAP_ERR_INVALID_ARGUMENT), nothing is overwritten. The whole segment is reserved in
 * /dev/shm now (posix_fallocate): one larger than /dev/shm holds is GDAP_ERR_NO_MEMORY naming the
 * free space, never a SIGBUS at a later write. The shape comes from the dictionaries, as
 * gdap_array_create. The array owns the segment: when the array and every tensor exported from it
 * are gone, this process unmaps it and unlinks the name; importers that already mapped it keep
 * their mapping (the memory is freed when the last mapping goes), but no new importer can open it.
 * GDAP_ERR_IO / GDAP_ERR_NO_MEMORY (with the system's reason) when creating, sizing or mapping it
 * fails. `name` and `dims` are borrowed. Not collective. On success `*out` is a new array the
 * caller destroys with gdap_array_destroy.
 */
GDAP_API gdap_status gdap_array_create_shm(gdap_array** out, const char* name /*or NULL*/, gdap_dtype dtype,
                                           const gdap_dim* dims /*[ndim]*/, int64_t ndim);

/**
 * Writes an IPC handle for `array`'s local section to `handle` (GDAP_IPC_HANDLE_SIZE bytes; a
 * `capacity` below that is GDAP_ERR_BUFFER_TOO_SMALL): plain bytes that may travel over any
 * channel (a file, a socket, MPI) to another process of the same node, which opens the same memory
 * with gdap_ipc_open. The handle holds the memory's name (CUDA IPC handle of the allocation plus
 * the section's offset, or shared-memory segment name and offset), dtype, shape, strides, every
 * dictionary, the protocol version and this node's identity (host name and boot id).
 * Device memory (GDAP_DEVICE_CUDA, from cudaMalloc: gdap_array_create, CuPy, PyTorch) is shared by
 * CUDA IPC; host memory only when it lies in a POSIX shared-memory segment (gdap_array_create_shm,
 * or any mapping of a file under /dev/shm). Ordinary host memory, pinned and managed memory give
 * GDAP_ERR_UNSUPPORTED naming the reason, as do unstructured dimensions (their indices do not fit
 * a fixed size) and more than GDAP_IPC_MAX_NDIM dimensions. Lifetime: the exporter's array must
 * outlive every importer's use of the memory (docs/ipc.md says what happens otherwise). Exporting
 * reads no element and may be repeated. `array` is borrowed; `handle` is written only on success.
 * Not collective.
 */
GDAP_API gdap_status gdap_ipc_export(void* handle /*[capacity]*/, int64_t capacity, const gdap_array* array);

/**
 * Opens an IPC handle made by gdap_ipc_export in another process of this node, as a new array
 * over the same memory (no element copied; writes on either side are seen by the other, ordered
 * by the processes' own synchronisation). `size` must be GDAP_IPC_HANDLE_SIZE. Checks, before any
 * memory is touched: size, magic, format version (GDAP_ERR_VERSION), a checksum over the bytes,
 * the node (a handle from another node or boot is refused), the protocol version, the dictionaries
 * against the shape; then that the memory still exists: an exited (or killed) exporter, found by its
 * pid and start time, an unlinked or re-created shared-memory segment, one whose owner or mode
 * changed since the export or that every user may write, or a CUDA allocation of another size give
 * GDAP_ERR_INVALID_ARGUMENT
 * naming it, and CUDA's own refusals GDAP_ERR_DEVICE (CUDA does not refuse every freed allocation
 * of a live exporter: see docs/ipc.md). A CUDA handle cannot be opened by the process that made it
 * (CUDA refuses it). The array is on the GPU with the exporter's UUID (its ordinal in this process
 * may differ) or on the host; read-only if the exporter's was. Destroying it unmaps or closes the
 * memory in this process only. `handle` is borrowed. Not collective. On success `*out` is a new
 * array the caller destroys with gdap_array_destroy.
 */
GDAP_API gdap_status gdap_ipc_open(gdap_array** out, const void* handle /*[size]*/, int64_t size);

/* ---------------------------------------------------------------------------------------------
 * Deprecated names: the 0.1 names of the functions 0.2 renamed to gdap_<noun>_<verb> with their
 * out-parameters first (docs/abi.md, "Names"). Each does what its replacement does, with the 0.1
 * parameter order; the library exports them for one release (removed in 0.3), and the bindings
 * wrap only the replacements.
 * ------------------------------------------------------------------------------------------- */

/** Deprecated: gdap_dnpy_save (same parameters). */
GDAP_API GDAP_DEPRECATED(gdap_dnpy_save) gdap_status gdap_save_dnpy(gdap_comm* comm, const gdap_array* section,
                                                                    const char* prefix);
/** Deprecated: gdap_dnpy_load(out, comm, prefix, device). */
GDAP_API GDAP_DEPRECATED(gdap_dnpy_load) gdap_status gdap_load_dnpy(gdap_comm* comm, gdap_array** out,
                                                                    const char* prefix, gdap_device device);
/** Deprecated: gdap_zarr_save (same parameters). */
GDAP_API GDAP_DEPRECATED(gdap_zarr_save) gdap_status gdap_save_zarr(gdap_comm* comm, const gdap_map* map,
                                                                    const gdap_array* section, const char* path,
                                                                    const gdap_zarr_options* options /*or NULL*/);
/** Deprecated: gdap_zarr_load (same parameters). */
GDAP_API GDAP_DEPRECATED(gdap_zarr_load) gdap_status gdap_load_zarr(gdap_comm* comm, const gdap_map* map,
                                                                    gdap_array* section, const char* path);
/** Deprecated: gdap_zarr_shape_read(shape, ndim, dtype, path, capacity). */
GDAP_API GDAP_DEPRECATED(gdap_zarr_shape_read) gdap_status gdap_zarr_shape(const char* path, int64_t* ndim,
                                                                           int64_t* shape /*[capacity] or NULL*/,
                                                                           int64_t capacity,
                                                                           gdap_dtype* dtype /*or NULL*/);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GDAP_H */
