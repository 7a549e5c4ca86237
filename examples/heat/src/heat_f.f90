! heat_f: the Fortran driver of the gdap heat-equation example, the same solver as the C driver
! (heat_solver.c) written against gdap's Fortran module. gdap describes the grid as padded blocks,
! exchanges halos through a bound exchange, all-reduces the residual, writes Zarr checkpoints and
! restarts from them onto any process grid; the stencil is the example's C kernels (host) or CUDA
! C kernels (device: the sections are device memory held as type(c_ptr)).
!
! Ranks: OpenMP threads of one process over gdap's in-process group (--comm group), or MPI
! processes (--comm mpi; NCCL between their GPUs). Threads make the in-process group natural in
! Fortran: each thread holds its rank's communicator and calls the same run_rank, whose locals
! are its own (no SAVE variables below: nothing in a procedure is initialised where declared).
module heat_run
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use gdap
  use heat_kernels
  !$ use omp_lib, only: omp_get_thread_num, omp_get_num_threads
  implicit none
  private
  public :: run_rank, make_dir

  type, public :: heat_options
    integer :: ndim = 2
    integer(c_int64_t) :: n(3) = [64_c_int64_t, 48_c_int64_t, 1_c_int64_t]
    integer(c_int64_t) :: grid(3) = 0
    integer(c_int32_t) :: periodic(3) = 0
    integer(c_int32_t) :: mode(3) = 1
    integer :: bits = 64
    logical :: on_device = .false., overlap = .true., check = .true., bench = .false.
    integer(c_int64_t) :: steps = 100, residual_every = 10, checkpoint_every = 0
    character(len=1024) :: checkpoint_dir = '', restart = '', share_dir = ''
    real(c_double) :: r = 0, hold = 0
  end type heat_options

  !> One rank's state: gdap handles (type(c_ptr)), the section's view and boxes for the kernels.
  type :: rank_state
    type(heat_options) :: o
    type(c_ptr) :: comm = c_null_ptr, map = c_null_ptr, halo = c_null_ptr
    type(c_ptr) :: field(0:1) = c_null_ptr, exchange(0:1) = c_null_ptr, data(0:1) = c_null_ptr
    type(c_ptr) :: total(0:1) = c_null_ptr, device_total(0:1) = c_null_ptr, scratch = c_null_ptr
    type(c_ptr) :: stream_c = c_null_ptr, stream_i = c_null_ptr, ev_c = c_null_ptr, ev_i = c_null_ptr
    logical :: own_stream_c = .false., nccl = .false.
    integer :: kind = 0, device = 0, cur = 0
    integer(c_int64_t) :: rank = 0, nranks = 1, step = 0, bytes = 0
    integer(c_int64_t) :: grid(3) = 1, coords(3) = 0
    type(heat_problem) :: problem
    type(gdap_dim) :: dims(3)
    type(gdap_dtype) :: dtype
    type(heat_view) :: view
    type(heat_box) :: owned, update
    type(heat_boxes) :: boundary, interior
    integer(c_int64_t), allocatable :: res_step(:)
    real(c_double), allocatable :: res_value(:)
    real(c_double) :: seconds = 0
    integer(c_int64_t) :: timed = 0
  end type rank_state

  integer, parameter :: HEAT_BENCH_WARMUP = 10  ! untimed steps before a --bench timing

  interface
    function c_rename(from, to) bind(C, name='rename') result(e)
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: from(*), to(*)
      integer(c_int) :: e
    end function
    function c_mkdir(path, mode) bind(C, name='mkdir') result(e)
      import :: c_char, c_int
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: mode
      integer(c_int) :: e
    end function
    function c_usleep(microseconds) bind(C, name='usleep') result(e)
      import :: c_int
      integer(c_int), value :: microseconds
      integer(c_int) :: e
    end function
  end interface

contains

  ! ---- errors: each check prints what failed on which rank and says whether to go on ----

  logical function ok(status, s, what)
    integer(c_int), intent(in) :: status
    type(rank_state), intent(in) :: s
    character(*), intent(in) :: what
    ok = status == GDAP_SUCCESS
    if (.not. ok) write(error_unit, '(a,i0,5a)') 'heat: rank ', s%rank, ': ', what, ': ', gdap_status_name(status), &
                                     ': '//gdap_error_message()
  end function ok

  logical function cuda_ok(code, s, what)
    integer(c_int), intent(in) :: code
    type(rank_state), intent(in) :: s
    character(*), intent(in) :: what
    cuda_ok = code == 0
    if (.not. cuda_ok) write(error_unit, '(a,i0,4a)') 'heat: rank ', s%rank, ': ', what, ': ', heat_cuda_message(code)
  end function cuda_ok

  logical function fail(s, what)
    type(rank_state), intent(in) :: s
    character(*), intent(in) :: what
    write(error_unit, '(a,i0,2a)') 'heat: rank ', s%rank, ': ', what
    fail = .false.
  end function fail

  integer function make_dir(path) result(failed)
    character(*), intent(in) :: path
    logical :: there
    failed = 0
    inquire(file=trim(path)//'/.', exist=there)
    if (there) return
    if (c_mkdir(trim(path)//c_null_char, int(o'777', c_int)) /= 0) then
      print '(3a)', 'heat: cannot create ', trim(path)
      failed = 1
    end if
  end function make_dir

  ! ---- the grid: dictionaries, boxes ----

  !> A process grid for `nranks` ranks: each prime factor, largest first, goes to the dimension
  !> with the most unknowns per rank so far (as the C driver chooses).
  subroutine default_grid(nd, n, nranks, grid)
    integer, intent(in) :: nd
    integer(c_int64_t), intent(in) :: n(3), nranks
    integer(c_int64_t), intent(out) :: grid(3)
    integer(c_int64_t) :: primes(64), rest, q
    integer :: count, i, d, best
    grid = 1
    count = 0
    rest = nranks
    q = 2
    do while (rest > 1)
      if (q * q > rest) q = rest
      do while (mod(rest, q) == 0)
        count = count + 1
        primes(count) = q
        rest = rest / q
      end do
      q = q + 1
    end do
    do i = count, 1, -1
      best = 1
      do d = 2, nd
        if (n(d) * grid(best) > n(best) * grid(d)) best = d
      end do
      grid(best) = grid(best) * primes(i)
    end do
  end subroutine default_grid

  !> Rank's dictionary along dimension d (1-based here, C order): its share of the unknowns plus
  !> one cell each side; the owned cells as gdap counts them, the section's extent, the update box.
  logical function describe_dim(s, d) result(good)
    type(rank_state), intent(inout) :: s
    integer, intent(in) :: d
    integer(c_int64_t) :: lo, hi, written
    type(gdap_run) :: run(1)
    associate (p => s%problem, dim => s%dims(d))
      lo = s%coords(d) * p%n(d) / s%grid(d)
      hi = (s%coords(d) + 1) * p%n(d) / s%grid(d)
      good = ok(gdap_dim_set_block(dim, heat_problem_size(p, d - 1), s%grid(d), s%coords(d), p%origin(d) + lo - 1, &
                                   p%origin(d) + hi + 1), s, 'gdap_dim_set_block')
      if (good) good = ok(gdap_dim_set_padding(dim, 1_c_int64_t, 1_c_int64_t), s, 'gdap_dim_set_padding')
      if (good .and. p%periodic(d) /= 0) good = ok(gdap_dim_set_periodic(dim, 1_c_int), s, 'gdap_dim_set_periodic')
      if (good) good = ok(gdap_dim_runs(run, written, dim, 0_c_int64_t, 1_c_int64_t), s, 'gdap_dim_runs')
      if (.not. good) return
      s%owned%lo(d) = run(1)%local_start
      s%owned%hi(d) = run(1)%local_start + run(1)%length
      s%view%shape(d) = dim%stop - dim%start
      s%view%start(d) = dim%start
      s%update%lo(d) = 1
      s%update%hi(d) = s%view%shape(d) - 1
    end associate
  end function describe_dim

  logical function describe(s) result(good)
    type(rank_state), intent(inout) :: s
    integer :: d, nd
    integer(c_int64_t) :: ranks
    nd = s%problem%ndim
    good = ok(gdap_comm_rank(s%rank, s%comm), s, 'gdap_comm_rank')
    if (good) good = ok(gdap_comm_size(s%nranks, s%comm), s, 'gdap_comm_size')
    if (good) good = ok(gdap_comm_kind_get(s%kind, s%comm), s, 'gdap_comm_kind_get')
    if (.not. good) return
    s%nccl = s%o%on_device .and. s%kind == GDAP_COMM_NCCL
    if (s%o%grid(1) > 0) then
      s%grid = s%o%grid
      s%grid(nd + 1:) = 1
    else
      call default_grid(nd, s%problem%n, s%nranks, s%grid)
    end if
    ranks = product(s%grid(1:nd))
    if (ranks /= s%nranks) then
      good = fail(s, 'the process grid has '//itoa(ranks)//' ranks, the communicator '//itoa(s%nranks))
      return
    end if
    do d = 1, nd
      if (s%grid(d) > s%problem%n(d)) then
        good = fail(s, 'dimension '//itoa(int(d - 1, c_int64_t))//': '//itoa(s%grid(d))//' ranks for '// &
                       itoa(s%problem%n(d))//' unknowns: every rank needs one')
        return
      end if
    end do
    good = ok(gdap_grid_rank_to_coords(s%coords, int(nd, c_int64_t), s%grid, s%rank), s, 'gdap_grid_rank_to_coords')
    if (.not. good) return
    s%view%ndim = nd
    s%view%bits = s%o%bits
    s%dtype = gdap_dtype(GDAP_DTYPE_FLOAT, int(s%o%bits, c_int8_t), 1_c_int16_t)
    do d = 1, nd
      if (.not. describe_dim(s, d)) then
        good = .false.
        return
      end if
    end do
    call heat_split(s%update, int(nd, c_int), s%boundary, s%interior)
    s%bytes = s%o%bits / 8 * product(s%view%shape(1:nd))
    good = ok(gdap_map_create_collective(s%map, s%comm, int(nd, c_int64_t), s%dims), s, 'gdap_map_create_collective')
  end function describe

  ! ---- memory: sections, exchanges, the device's streams ----

  logical function allocate_all(s) result(good)
    type(rank_state), intent(inout) :: s
    type(gdap_device) :: where, host
    type(gdap_halo_options) :: faces
    type(gdap_dim) :: one(1)
    type(gdap_dtype) :: kinds(0:1)
    integer :: b, k, nd
    logical :: halo
    nd = s%problem%ndim
    host = gdap_device(GDAP_DEVICE_CPU, 0)
    where = host
    good = .true.
    if (s%o%on_device) then
      where = gdap_device(GDAP_DEVICE_CUDA, s%device)
      if (.not. c_associated(s%stream_c)) then
        good = cuda_ok(heat_cuda_stream_create(s%stream_c, 1_c_int), s, 'a CUDA stream')
        s%own_stream_c = good
        if (good) good = ok(gdap_comm_set_stream(s%comm, s%stream_c), s, 'gdap_comm_set_stream')
      end if
      if (good) good = cuda_ok(heat_cuda_stream_create(s%stream_i, 0_c_int), s, 'a CUDA stream')
      if (good) good = cuda_ok(heat_cuda_event_create(s%ev_c), s, 'a CUDA event')
      if (good) good = cuda_ok(heat_cuda_event_create(s%ev_i), s, 'a CUDA event')
      if (good) good = cuda_ok(heat_cuda_malloc(s%scratch, heat_cuda_scratch_bytes()), s, 'cudaMalloc')
      if (.not. good) return
    end if
    do b = 0, 1
      ! Sections shared with the companion live in shared memory (host) or plain device memory.
      if (len_trim(s%o%share_dir) > 0 .and. .not. s%o%on_device) then
        good = ok(gdap_array_create_shm(s%field(b), c_null_char, s%dtype, s%dims, int(nd, c_int64_t)), s, &
                  'gdap_array_create_shm')
      else
        good = ok(gdap_array_create(s%field(b), s%dtype, where, s%dims, int(nd, c_int64_t)), s, 'gdap_array_create')
      end if
      if (good) good = ok(gdap_array_data(s%data(b), s%field(b)), s, 'gdap_array_data')
      if (.not. good) return
    end do
    ! gdap refuses a halo with nothing to exchange (one rank, no periodic dimension).
    halo = any(s%grid(1:nd) > 1 .or. s%problem%periodic(1:nd) /= 0)
    if (halo) then
      faces%corners = 0  ! a 5- or 7-point stencil reads no edge or corner cell
      good = ok(gdap_halo_create(s%halo, s%map, s%dtype, s%rank, faces), s, 'gdap_halo_create')
      do b = 0, 1
        if (good) good = ok(gdap_halo_exchange_init(s%exchange(b), s%comm, s%halo, s%field(b)), s, &
                            'gdap_halo_exchange_init')
      end do
      if (.not. good) return
    end if
    ! One float64 and one uint64 for the all-reduces, where the engine reduces them.
    good = ok(gdap_dim_set_undistributed(one(1), 1_c_int64_t), s, 'gdap_dim_set_undistributed')
    kinds(0) = gdap_dtype(GDAP_DTYPE_FLOAT, 64_c_int8_t, 1_c_int16_t)
    kinds(1) = gdap_dtype(GDAP_DTYPE_UINT, 64_c_int8_t, 1_c_int16_t)
    do k = 0, 1
      if (s%nccl) then
        if (good) good = ok(gdap_array_create(s%total(k), kinds(k), where, one, 1_c_int64_t), s, 'gdap_array_create')
        if (good) good = ok(gdap_array_data(s%device_total(k), s%total(k)), s, 'gdap_array_data')
      else
        if (good) good = ok(gdap_array_create(s%total(k), kinds(k), host, one, 1_c_int64_t), s, 'gdap_array_create')
        if (good .and. s%o%on_device) good = cuda_ok(heat_cuda_malloc(s%device_total(k), 8_c_int64_t), s, 'cudaMalloc')
      end if
    end do
  end function allocate_all

  subroutine release(s)
    type(rank_state), intent(inout) :: s
    integer :: b, k, e
    integer(c_int) :: st
    do b = 0, 1
      st = gdap_exchange_destroy(s%exchange(b))
    end do
    st = gdap_halo_destroy(s%halo)
    do b = 0, 1
      st = gdap_array_destroy(s%field(b))
    end do
    do k = 0, 1
      if (s%o%on_device .and. .not. s%nccl .and. c_associated(s%device_total(k))) e = heat_cuda_free(s%device_total(k))
      st = gdap_array_destroy(s%total(k))
    end do
    st = gdap_map_destroy(s%map)
    if (c_associated(s%scratch)) e = heat_cuda_free(s%scratch)
    if (c_associated(s%ev_c)) e = heat_cuda_event_destroy(s%ev_c)
    if (c_associated(s%ev_i)) e = heat_cuda_event_destroy(s%ev_i)
    if (c_associated(s%stream_i)) e = heat_cuda_stream_destroy(s%stream_i)
    if (s%own_stream_c) e = heat_cuda_stream_destroy(s%stream_c)
  end subroutine release

  !> Every rank's value combined by `op`. This rank's part is `value` (8 bytes at c_loc(value)),
  !> or, when `from_kernel`, what a device kernel left in device_total(k). k: 0 float64, 1 uint64.
  logical function combine(s, k, value, from_kernel, op) result(good)
    type(rank_state), intent(inout) :: s
    integer, intent(in) :: k
    type(c_ptr), intent(in) :: value
    logical, intent(in) :: from_kernel
    integer(c_int), intent(in) :: op
    type(c_ptr) :: part
    integer(c_int8_t), pointer :: src(:), dst(:)
    part = s%device_total(k)
    good = .true.
    if (.not. s%nccl) good = ok(gdap_array_data(part, s%total(k)), s, 'gdap_array_data')
    if (good .and. from_kernel .and. .not. s%nccl) then
      good = cuda_ok(heat_cuda_copy_sync(part, s%device_total(k), 8_c_int64_t, s%stream_c), s, 'cudaMemcpy')
    else if (good .and. .not. from_kernel .and. s%nccl) then
      good = cuda_ok(heat_cuda_copy_sync(part, value, 8_c_int64_t, s%stream_c), s, 'cudaMemcpy')
    else if (good .and. .not. from_kernel) then
      call c_f_pointer(part, dst, [8])
      call c_f_pointer(value, src, [8])
      dst = src
    end if
    if (good) good = ok(gdap_allreduce(s%comm, s%total(k), op), s, 'gdap_allreduce')
    if (.not. good) return
    if (s%nccl) then
      good = cuda_ok(heat_cuda_copy_sync(value, part, 8_c_int64_t, s%stream_c), s, 'cudaMemcpy')
    else
      call c_f_pointer(part, src, [8])
      call c_f_pointer(value, dst, [8])
      dst = src
    end if
  end function combine

  !> Waits for the device work queued so far, both streams' (host: nothing to wait for).
  logical function settle(s) result(good)
    type(rank_state), intent(inout) :: s
    good = .true.
    if (.not. s%o%on_device) return
    good = cuda_ok(heat_cuda_stream_wait(s%stream_c, s%ev_i), s, 'cudaStreamWaitEvent')
    if (good) good = cuda_ok(heat_cuda_stream_sync(s%stream_c), s, 'cudaStreamSynchronize')
  end function settle

  ! ---- records: the state file the companion reads, a checkpoint's step and problem ----

  !> Writes the record (rank 0 only) through a temporary file renamed into place; the same
  !> format as the C driver's, so either driver restarts from the other's checkpoints.
  logical function write_record(s, path, done) result(good)
    type(rank_state), intent(in) :: s
    character(*), intent(in) :: path
    logical, intent(in) :: done
    integer :: unit, ios, nd, i
    character(len=8) :: device
    good = .true.
    if (s%rank /= 0) return
    nd = s%problem%ndim
    device = 'cpu'
    if (s%o%on_device) device = 'cuda'
    open(newunit=unit, file=path//'.tmp', status='replace', action='write', iostat=ios)
    if (ios /= 0) then
      good = fail(s, 'cannot write '//path//'.tmp')
      return
    end if
    write(unit, '(a)') 'heat 1'
    write(unit, '(a,i0)') 'ndim ', nd
    write(unit, '(a,i0)') 'dtype float', s%o%bits
    write(unit, '(a,*(1x,i0))') 'n', s%problem%n(1:nd)
    write(unit, '(a,*(1x,i0))') 'periodic', s%problem%periodic(1:nd)
    write(unit, '(a,*(1x,i0))') 'origin', s%problem%origin(1:nd)
    write(unit, '(a,*(1x,i0))') 'mode', s%problem%mode(1:nd)
    write(unit, '(a,*(1x,i0))') 'grid', s%grid(1:nd)
    write(unit, '(a,es24.17)') 'r ', s%problem%r
    write(unit, '(a,i0)') 'step ', s%step
    write(unit, '(a,i0)') 'nranks ', s%nranks
    write(unit, '(a,i0)') 'current ', s%cur
    write(unit, '(2a)') 'device ', trim(device)
    write(unit, '(a,i0)') 'done ', merge(1, 0, done)
    if (allocated(s%res_step)) then
      do i = 1, size(s%res_step)
        write(unit, '(a,i0,1x,es24.17)') 'residual ', s%res_step(i), s%res_value(i)
      end do
    end if
    close(unit, iostat=ios)
    if (ios /= 0 .or. c_rename(path//'.tmp'//c_null_char, path//c_null_char) /= 0) good = fail(s, 'cannot write '//path)
  end function write_record

  !> Reads a checkpoint's record into the options' problem, the step and the residual history.
  logical function read_record(s, path, o) result(good)
    type(rank_state), intent(inout) :: s
    character(*), intent(in) :: path
    type(heat_options), intent(inout) :: o
    character(len=512) :: line, key
    integer :: unit, ios, k
    integer(c_int64_t) :: step
    real(c_double) :: value
    logical :: seen
    seen = .false.
    open(newunit=unit, file=path, status='old', action='read', iostat=ios)
    if (ios /= 0) then
      good = fail(s, 'cannot read the checkpoint''s record '//path)
      return
    end if
    do
      read(unit, '(a)', iostat=ios) line
      if (ios /= 0) exit
      k = index(line, ' ')
      key = line(:k - 1)
      line = line(k + 1:)
      select case (trim(key))
      case ('heat')
        seen = trim(line) == '1'
      case ('ndim')
        read(line, *) o%ndim
      case ('dtype')
        read(line(6:), *) o%bits
      case ('n')
        read(line, *) o%n(1:o%ndim)
      case ('periodic')
        read(line, *) o%periodic(1:o%ndim)
      case ('mode')
        read(line, *) o%mode(1:o%ndim)
      case ('r')
        read(line, *) o%r
      case ('step')
        read(line, *) s%step
      case ('residual')
        read(line, *) step, value
        call record_residual(s, step, value)
      end select
    end do
    close(unit)
    good = seen
    if (.not. seen) good = fail(s, path//' is not a heat checkpoint record (no ''heat 1'' line)')
  end function read_record

  subroutine record_residual(s, step, value)
    type(rank_state), intent(inout) :: s
    integer(c_int64_t), intent(in) :: step
    real(c_double), intent(in) :: value
    if (.not. allocated(s%res_step)) then
      allocate(s%res_step(0), s%res_value(0))
    end if
    s%res_step = [s%res_step, step]
    s%res_value = [s%res_value, value]
  end subroutine record_residual

  logical function checkpoint(s) result(good)
    type(rank_state), intent(inout) :: s
    character(len=:), allocatable :: path
    character(len=32) :: name
    type(gdap_zarr_options) :: z
    write(name, '(a,i8.8,a)') 'step', s%step, '.zarr'
    path = trim(s%o%checkpoint_dir)//'/'//trim(name)
    good = settle(s)
    z%codec = GDAP_ZARR_RAW
    z%overwrite = 1
    if (good) good = ok(gdap_zarr_save(s%comm, s%map, s%field(s%cur), path//c_null_char, z), s, 'gdap_zarr_save')
    if (good) good = write_record(s, path//'.heat', .false.)
    if (good .and. s%rank == 0) print '(a,i0,2a)', 'heat: step ', s%step, ' checkpoint ', path
  end function checkpoint

  ! ---- the steps ----

  integer(c_int) function start_exchange(exchange) result(status)
    type(c_ptr), intent(in) :: exchange
    status = GDAP_SUCCESS
    if (c_associated(exchange)) status = gdap_exchange_start(exchange)
  end function start_exchange

  logical function fill(s, b, owned) result(good)
    type(rank_state), intent(inout) :: s
    integer, intent(in) :: b
    type(heat_box), intent(in) :: owned
    good = .true.
    if (s%o%on_device) then
      good = cuda_ok(heat_cuda_fill(s%view, s%data(b), owned, s%problem, s%stream_c), s, 'the fill kernel')
    else
      call heat_host_fill(s%view, s%data(b), owned, s%problem)
    end if
  end function fill

  !> Step 0, or the checkpoint's step: both fields hold it, field(0)'s halo exchanged.
  logical function initial(s) result(good)
    type(rank_state), intent(inout) :: s
    type(heat_box) :: none
    integer(c_int8_t), pointer :: a(:), b(:)
    if (len_trim(s%o%restart) > 0) then
      none%hi = 0
      good = fill(s, 0, none)  ! NaN everywhere, until the load and the exchange write it
      if (good) good = ok(gdap_zarr_load(s%comm, s%map, s%field(0), trim(s%o%restart)//c_null_char), s, 'gdap_zarr_load')
    else
      good = fill(s, 0, s%owned)
    end if
    if (.not. good) return
    if (s%o%on_device) then
      good = cuda_ok(heat_cuda_copy_sync(s%data(1), s%data(0), s%bytes, s%stream_c), s, 'cudaMemcpy')
    else
      call c_f_pointer(s%data(0), a, [s%bytes])
      call c_f_pointer(s%data(1), b, [s%bytes])
      b = a
    end if
    s%cur = 0
    if (good) good = ok(start_exchange(s%exchange(0)), s, 'gdap_exchange_start')
    if (good .and. s%o%on_device) good = cuda_ok(heat_cuda_event_record(s%ev_c, s%stream_c), s, 'cudaEventRecord')
  end function initial

  !> The interior on a second thread while this one exchanges the halo (in turn without one).
  logical function exchange_beside_interior(s, exchange, u, v) result(good)
    type(rank_state), intent(inout) :: s
    type(c_ptr), intent(in) :: exchange, u, v
    integer(c_int) :: started
    integer :: t, n
    started = GDAP_SUCCESS
    !$omp parallel num_threads(2) private(t, n) shared(s, started)
    t = 0
    n = 1
    !$ t = omp_get_thread_num()
    !$ n = omp_get_num_threads()
    if (t == 0) started = start_exchange(exchange)  ! the rank's own thread: MPI's funnelled one
    if (t == n - 1) call heat_host_step(s%view, u, v, s%interior, s%problem%r)
    !$omp end parallel
    good = ok(started, s, 'gdap_exchange_start')
  end function exchange_beside_interior

  logical function step(s) result(good)
    type(rank_state), intent(inout) :: s
    integer :: from, to
    from = s%cur
    to = 1 - s%cur
    good = .true.
    associate (u => s%data(from), v => s%data(to), r => s%problem%r)
      if (.not. s%o%on_device .and. s%o%overlap .and. c_associated(s%exchange(to))) then
        call heat_host_step(s%view, u, v, s%boundary, r)
        good = exchange_beside_interior(s, s%exchange(to), u, v)
      else if (.not. s%o%on_device) then
        call heat_host_step(s%view, u, v, s%boundary, r)
        call heat_host_step(s%view, u, v, s%interior, r)
        good = ok(start_exchange(s%exchange(to)), s, 'gdap_exchange_start')
      else if (s%o%overlap) then
        ! stream_c: boundary layer, then the exchange; stream_i: the interior, beside it.
        good = cuda_ok(heat_cuda_stream_wait(s%stream_c, s%ev_i), s, 'cudaStreamWaitEvent')
        if (good) good = cuda_ok(heat_cuda_stream_wait(s%stream_i, s%ev_c), s, 'cudaStreamWaitEvent')
        if (good) good = cuda_ok(heat_cuda_step(s%view, u, v, s%boundary, r, s%stream_c), s, 'the step kernel')
        if (good) good = ok(start_exchange(s%exchange(to)), s, 'gdap_exchange_start')
        if (good) good = cuda_ok(heat_cuda_event_record(s%ev_c, s%stream_c), s, 'cudaEventRecord')
        if (good) good = cuda_ok(heat_cuda_step(s%view, u, v, s%interior, r, s%stream_i), s, 'the step kernel')
        if (good) good = cuda_ok(heat_cuda_event_record(s%ev_i, s%stream_i), s, 'cudaEventRecord')
      else
        good = cuda_ok(heat_cuda_step(s%view, u, v, s%boundary, r, s%stream_c), s, 'the step kernel')
        if (good) good = cuda_ok(heat_cuda_step(s%view, u, v, s%interior, r, s%stream_c), s, 'the step kernel')
        if (good) good = ok(start_exchange(s%exchange(to)), s, 'gdap_exchange_start')
      end if
    end associate
    s%cur = to
    s%step = s%step + 1
  end function step

  !> The residual norm ||u_step - u_step-1|| over the unknowns, all-reduced.
  logical function residual(s, norm) result(good)
    type(rank_state), intent(inout) :: s
    real(c_double), intent(out), target :: norm
    norm = 0
    good = .true.
    if (s%o%on_device) then
      good = cuda_ok(heat_cuda_stream_wait(s%stream_c, s%ev_i), s, 'cudaStreamWaitEvent')
      if (good) good = cuda_ok(heat_cuda_sqdiff(s%view, s%data(1 - s%cur), s%data(s%cur), s%update, &
                                                s%device_total(0), s%scratch, s%stream_c), s, 'the residual kernel')
    else
      norm = heat_host_sqdiff(s%view, s%data(1 - s%cur), s%data(s%cur), s%update)
    end if
    if (good) good = combine(s, 0, c_loc(norm), s%o%on_device, GDAP_REDUCE_SUM)
    norm = sqrt(norm)
    call record_residual(s, s%step, norm)
  end function residual

  ! ---- the companion: IPC handles and the state file ----

  logical function share(s) result(good)
    type(rank_state), intent(inout) :: s
    integer(c_int8_t) :: handle(GDAP_IPC_HANDLE_SIZE)
    character(len=64) :: name
    integer :: b, unit, ios
    good = .true.
    do b = 0, 1
      good = ok(gdap_ipc_export(handle, GDAP_IPC_HANDLE_SIZE, s%field(b)), s, 'gdap_ipc_export')
      if (.not. good) return
      write(name, '(a,i0,a,i0,a)') '/rank', s%rank, '.field', b, '.ipc'
      open(newunit=unit, file=trim(s%o%share_dir)//trim(name), access='stream', status='replace', action='write', &
           iostat=ios)
      if (ios == 0) write(unit, iostat=ios) handle
      if (ios == 0) close(unit, iostat=ios)
      if (ios /= 0) then
        good = fail(s, 'cannot write '//trim(s%o%share_dir)//trim(name))
        return
      end if
    end do
  end function share

  logical function state(s, done) result(good)
    type(rank_state), intent(in) :: s
    logical, intent(in) :: done
    good = .true.
    if (len_trim(s%o%share_dir) > 0) good = write_record(s, trim(s%o%share_dir)//'/state.txt', done)
  end function state

  !> Keeps the sections alive until the companion has read them (it creates `release`), or `hold` s.
  logical function hold(s) result(good)
    type(rank_state), intent(inout) :: s
    logical :: released
    integer(c_int64_t) :: t0, t, rate
    integer(c_int) :: e
    good = .true.
    if (len_trim(s%o%share_dir) == 0 .or. s%o%hold <= 0) return
    good = ok(gdap_comm_barrier(s%comm), s, 'gdap_comm_barrier')
    if (good .and. s%rank == 0) then
      call system_clock(t0, rate)
      do
        inquire(file=trim(s%o%share_dir)//'/release', exist=released)
        call system_clock(t)
        if (released .or. real(t - t0, c_double) / rate > s%o%hold) exit
        e = c_usleep(20000_c_int)
      end do
      print '(2a)', 'heat: sections ', trim(merge('released by the companion  ', 'held until the time ran out', released))
    end if
    if (good) good = ok(gdap_comm_barrier(s%comm), s, 'gdap_comm_barrier')
  end function hold

  ! ---- the run ----

  logical function run_steps(s) result(good)
    type(rank_state), intent(inout) :: s
    integer(c_int64_t) :: t0, t1, rate, first, last
    real(c_double), target :: elapsed, norm
    integer :: k
    good = .true.
    if (s%o%bench) then  ! warm-up, untimed: first launches, first exchanges
      do k = 1, HEAT_BENCH_WARMUP
        if (good) good = step(s)
      end do
    end if
    first = s%step
    last = s%o%steps
    if (s%o%bench) last = first + s%o%steps
    if (good) good = settle(s)
    if (good) good = ok(gdap_comm_barrier(s%comm), s, 'gdap_comm_barrier')
    call system_clock(t0, rate)
    do while (good .and. s%step < last)
      good = step(s)
      if (.not. good .or. s%o%bench) cycle
      if (s%o%residual_every > 0) then
        if (mod(s%step, s%o%residual_every) == 0) then
          good = residual(s, norm)
          if (good .and. s%rank == 0) print '(a,i0,a,es17.10)', 'heat: step ', s%step, ' residual ', norm
          if (good) good = state(s, .false.)
        end if
      end if
      if (good .and. s%o%checkpoint_every > 0) then
        if (mod(s%step, s%o%checkpoint_every) == 0) good = checkpoint(s)
      end if
    end do
    if (good) good = settle(s)
    if (good) good = ok(gdap_comm_barrier(s%comm), s, 'gdap_comm_barrier')
    call system_clock(t1)
    elapsed = real(t1 - t0, c_double) / rate
    if (good) good = combine(s, 0, c_loc(elapsed), .false., GDAP_REDUCE_MAX)
    s%seconds = elapsed
    s%timed = s%step - first
  end function run_steps

  !> Compares the field with the exact discrete solution and the last residual with its
  !> prediction (the bounds are the C driver's: see heat_solver.c), prints the fingerprint.
  logical function check(s, passed) result(good)
    type(rank_state), intent(inout) :: s
    logical, intent(out) :: passed
    real(c_double), target :: error
    integer(c_int64_t), target :: fingerprint
    real(c_double) :: g, decay, eps, bound, tolerance, left, predicted, relative, allowed
    integer :: last
    g = heat_problem_growth(s%problem)
    decay = g**s%step
    passed = .false.
    if (s%o%on_device) then
      good = cuda_ok(heat_cuda_error(s%view, s%data(s%cur), s%update, s%problem, decay, s%device_total(0), s%scratch, &
                                     s%stream_c), s, 'the error kernel')
      if (good) good = combine(s, 0, c_loc(error), .true., GDAP_REDUCE_MAX)
      if (good) good = cuda_ok(heat_cuda_fingerprint(s%view, s%data(s%cur), s%update, s%problem, s%device_total(1), &
                                                     s%scratch, s%stream_c), s, 'the fingerprint kernel')
      if (good) good = combine(s, 1, c_loc(fingerprint), .true., GDAP_REDUCE_SUM)
    else
      error = heat_host_error(s%view, s%data(s%cur), s%update, s%problem, decay)
      good = combine(s, 0, c_loc(error), .false., GDAP_REDUCE_MAX)
      fingerprint = heat_host_fingerprint(s%view, s%data(s%cur), s%update, s%problem)
      if (good) good = combine(s, 1, c_loc(fingerprint), .false., GDAP_REDUCE_SUM)
    end if
    if (.not. good) return
    eps = merge(epsilon(1.0_c_double), real(epsilon(1.0_c_float), c_double), s%o%bits == 64) / 2
    bound = 8 * eps * heat_problem_bound(s%problem) * max(s%step, 1_c_int64_t)
    tolerance = bound
    if (s%o%bits == 64 .and. bound < 1d-10) tolerance = 1d-10
    left = abs(s%problem%amplitude * decay)
    passed = error <= tolerance .and. left > 10 * tolerance  ! else dropping the mode would pass
    if (s%rank == 0) then
      print '(a,z16.16)', 'heat: fingerprint ', fingerprint
      print '(a,es10.3,a,i0,a,es8.1,a,es8.1,2a)', 'heat: check: max |u - exact| = ', error, ' after ', s%step, &
        ' steps (tolerance ', tolerance, ', rounding bound ', bound, '): ', trim(merge('ok    ', 'FAILED', error <= tolerance))
      if (left <= 10 * tolerance) print '(a,es8.1,a)', 'heat: check: the eigenmode has decayed to ', left, &
        ', too little for the check to see: FAILED (fewer steps, or a lower mode)'
    end if
    if (allocated(s%res_step) .and. s%step > 0) then
      last = size(s%res_step)
      if (last > 0) then
        if (s%res_step(last) == s%step) then
          predicted = abs(g**(s%step - 1) * (g - 1)) * heat_problem_mode_norm(s%problem)
          relative = abs(s%res_value(last) - predicted) / predicted
          allowed = merge(1d-8, 1d-2, s%o%bits == 64)
          passed = passed .and. relative <= allowed
          if (s%rank == 0) print '(a,es17.10,a,es17.10,a,es8.1,a,es8.1,2a)', 'heat: check: residual ', &
            s%res_value(last), ', predicted ', predicted, ' (relative difference ', relative, ', allowed ', allowed, &
            '): ', trim(merge('ok    ', 'FAILED', relative <= allowed))
        end if
      end if
    end if
  end function check

  function itoa(i) result(text)
    integer(c_int64_t), intent(in) :: i
    character(len=:), allocatable :: text
    character(len=24) :: buffer
    write(buffer, '(i0)') i
    text = trim(buffer)
  end function itoa

  subroutine print_header(s)
    type(rank_state), intent(in) :: s
    character(len=:), allocatable :: line, engine
    integer :: d
    select case (s%kind)
    case (GDAP_COMM_GROUP)
      engine = 'in-process group (OpenMP threads)'
    case (GDAP_COMM_MPI)
      engine = 'MPI communicator'
    case default
      engine = 'NCCL communicator'
    end select
    line = 'heat: '//itoa(int(s%problem%ndim, c_int64_t))//'-d float'//itoa(int(s%o%bits, c_int64_t))//', unknowns'
    do d = 1, s%problem%ndim
      if (d > 1) line = line//' x'
      line = line//' '//itoa(s%problem%n(d))
      if (s%problem%periodic(d) /= 0) line = line//' (periodic)'
    end do
    line = line//', process grid'
    do d = 1, s%problem%ndim
      if (d > 1) line = line//' x'
      line = line//' '//itoa(s%grid(d))
    end do
    line = line//', '//itoa(s%nranks)//' rank'//trim(merge('s', ' ', s%nranks > 1))//' over the '//engine
    if (s%o%on_device) then
      line = line//', CUDA device memory'
    else
      line = line//', host memory'
    end if
    print '(a)', line//', Fortran driver'
  end subroutine print_header

  logical function solve(s, passed) result(good)
    type(rank_state), intent(inout) :: s
    logical, intent(out) :: passed
    passed = .false.
    good = describe(s)
    if (good) good = allocate_all(s)
    if (good .and. len_trim(s%o%share_dir) > 0) good = share(s)
    if (good) good = initial(s)
    if (.not. good) return
    if (s%rank == 0) then
      call print_header(s)
      if (len_trim(s%o%restart) > 0) print '(3a,i0)', 'heat: restarted from ', trim(s%o%restart), ' at step ', s%step
    end if
    good = state(s, .false.)
    if (good) good = run_steps(s)
    if (.not. good) return
    if (s%rank == 0) print '(a,i0,a,f0.3,a,f0.4,a)', 'heat: ', s%timed, ' steps in ', s%seconds, ' s, ', &
      1d3 * s%seconds / max(s%timed, 1_c_int64_t), ' ms per step'
    passed = .true.
    if (s%o%check) good = check(s, passed)
    if (good) good = settle(s)
    if (good) good = state(s, .true.)
    if (good) good = hold(s)
  end function solve

  !> Runs rank `comm`'s part of the solve; 0 when every step and check passed, 1 otherwise.
  !> `comm_stream`: the CUDA stream an NCCL communicator was made with (c_null_ptr otherwise).
  integer function run_rank(o, comm, comm_stream, device) result(failed)
    type(heat_options), intent(in) :: o
    type(c_ptr), intent(in) :: comm, comm_stream
    integer, intent(in) :: device
    type(rank_state) :: s
    character(kind=c_char) :: why(256)
    integer(c_int64_t) :: ndim, shape(3)
    type(gdap_dtype) :: dtype
    logical :: passed, good
    integer :: d, i
    failed = 1
    s%o = o
    s%comm = comm
    s%stream_c = comm_stream
    s%device = device
    if (.not. ok(gdap_comm_rank(s%rank, comm), s, 'gdap_comm_rank')) return
    if (len_trim(o%restart) > 0) then
      if (.not. read_record(s, trim(o%restart)//'.heat', s%o)) return
    end if
    if (s%o%grid(1) > 0 .and. count(s%o%grid > 0) /= s%o%ndim) then
      good = fail(s, '--grid has '//itoa(int(count(s%o%grid > 0), c_int64_t))//' values for the '// &
                     itoa(int(s%o%ndim, c_int64_t))//'-d grid')
      return
    end if
    why = ' '
    if (heat_problem_init(s%problem, s%o%ndim, s%o%n, s%o%periodic, s%o%mode, s%o%r, why, 256_c_int) /= 0) then
      i = 1
      do while (i < 256 .and. why(i) /= c_null_char)
        i = i + 1
      end do
      good = fail(s, transfer(why(1:i - 1), repeat(' ', i - 1)))
      return
    end if
    if (len_trim(o%restart) > 0) then
      shape = 0
      if (.not. ok(gdap_zarr_shape_read(shape, ndim, dtype, trim(o%restart)//c_null_char, 3_c_int64_t), s, &
                   'gdap_zarr_shape_read')) return
      do d = 1, s%o%ndim
        if (ndim /= s%o%ndim .or. shape(d) /= heat_problem_size(s%problem, d - 1) .or. dtype%bits /= s%o%bits) then
          good = fail(s, 'checkpoint '//trim(o%restart)//' does not hold the array its record describes')
          return
        end if
      end do
    end if
    good = solve(s, passed)
    call release(s)
    if (.not. good) return
    if (s%rank == 0) then
      if (.not. s%o%check) then
        print '(a)', 'heat: done (not checked)'
      else
        print '(2a)', 'heat: ', trim(merge('checks passed', 'checks FAILED', passed))
      end if
    end if
    if (passed) failed = 0
  end function run_rank

end module heat_run

program heat_f
  use, intrinsic :: iso_c_binding
  use gdap
  use heat_kernels
  use heat_run
  !$ use omp_lib, only: omp_get_thread_num, omp_set_max_active_levels
#ifdef HEAT_HAVE_MPI
  use mpi
#endif
  implicit none
  type(heat_options) :: o
  character(len=8) :: mode
  integer(c_int64_t) :: ranks
  integer :: failed

  failed = parse(o, mode, ranks)
  !$ call omp_set_max_active_levels(2)  ! ranks as threads, each with a second thread beside its exchange
  if (failed == 0) then
    select case (mode)
    case ('group')
      failed = run_group(o, ranks)
    case ('mpi')
      failed = run_mpi(o)
    case default
      print '(3a)', 'heat: --comm ', trim(mode), ': the Fortran driver takes group or mpi'
      failed = 1
    end select
  end if
  if (failed /= 0) stop 1

contains

  integer function parse(o, mode, ranks) result(failed)
    type(heat_options), intent(inout) :: o
    character(len=8), intent(out) :: mode
    integer(c_int64_t), intent(out) :: ranks
    character(len=1024) :: key, value
    integer :: i, count, ios, k
    integer(c_int64_t) :: list(3)
    failed = 1
    mode = 'group'
    ranks = 0
    count = command_argument_count()
    i = 1
    do while (i <= count)
      call get_command_argument(i, key)
      value = ''
      if (i < count) call get_command_argument(i + 1, value)
      i = i + 2
      ios = 0
      select case (trim(key))
      case ('--dims')
        o%ndim = parse_list(value, 'x', o%n)
        if (o%ndim < 2) ios = 1
      case ('--grid')
        if (parse_list(value, 'x', o%grid) < 2) ios = 1
      case ('--periodic')
        if (trim(value) /= 'none') then
          k = parse_list(value, ',', list, 0_c_int64_t)
          if (k == 0 .or. any(list(1:max(k, 1)) > 2)) ios = 1
          if (ios == 0) o%periodic(list(1:k) + 1) = 1
        end if
      case ('--mode')
        k = parse_list(value, 'x', list)
        if (k < 2) ios = 1
        if (ios == 0) o%mode(1:k) = int(list(1:k), c_int32_t)
      case ('--dtype')
        if (trim(value) == 'float64') then
          o%bits = 64
        else if (trim(value) == 'float32') then
          o%bits = 32
        else
          ios = 1
        end if
      case ('--device')
        if (trim(value) /= 'cpu' .and. trim(value) /= 'cuda') ios = 1
        o%on_device = trim(value) == 'cuda'
      case ('--comm')
        mode = value(1:8)
      case ('--ranks')
        read(value, *, iostat=ios) ranks
      case ('--steps')
        read(value, *, iostat=ios) o%steps
      case ('--residual-every')
        read(value, *, iostat=ios) o%residual_every
      case ('--checkpoint-every')
        read(value, *, iostat=ios) o%checkpoint_every
      case ('--checkpoint-dir')
        o%checkpoint_dir = value
      case ('--restart')
        o%restart = value
      case ('--share')
        o%share_dir = value
      case ('--hold')
        read(value, *, iostat=ios) o%hold
      case ('--r')
        read(value, *, iostat=ios) o%r
      case ('--no-overlap', '--no-check', '--bench')
        i = i - 1  ! no value
        if (trim(key) == '--no-overlap') o%overlap = .false.
        if (trim(key) == '--no-check') o%check = .false.
        if (trim(key) == '--bench') o%bench = .true.
      case default
        print '(3a)', 'heat: unknown option ', trim(key), ' (the C driver''s options: heat --help)'
        return
      end select
      if (ios /= 0) then
        print '(5a)', 'heat: ', trim(key), ' ''', trim(value), ''': not a value this option takes (heat --help)'
        return
      end if
    end do
    if (o%grid(1) > 0 .and. count_set(o%grid) /= o%ndim .and. len_trim(o%restart) == 0) then
      print '(a)', 'heat: --grid and --dims have different numbers of dimensions'
      return
    end if
    if (o%checkpoint_every > 0 .and. len_trim(o%checkpoint_dir) == 0) then
      print '(a)', 'heat: --checkpoint-every needs --checkpoint-dir'
      return
    end if
    if (ranks == 0) then
      ranks = 1
      if (o%grid(1) > 0) ranks = product(o%grid, mask=o%grid > 0)
    end if
    if (len_trim(o%checkpoint_dir) > 0) then
      if (make_dir(o%checkpoint_dir) /= 0) return
    end if
    if (len_trim(o%share_dir) > 0) then
      if (make_dir(o%share_dir) /= 0) return
    end if
    failed = 0
  end function parse

  integer function count_set(values)
    integer(c_int64_t), intent(in) :: values(3)
    count_set = count(values > 0)
  end function count_set

  !> "64x48x32" into up to 3 values >= least (default 1); how many, 0 if malformed.
  integer function parse_list(text, sep, out, least) result(n)
    character(*), intent(in) :: text
    character, intent(in) :: sep
    integer(c_int64_t), intent(inout) :: out(3)
    integer(c_int64_t), intent(in), optional :: least
    integer :: a, b, ios
    integer(c_int64_t) :: v, low
    low = 1
    if (present(least)) low = least
    n = 0
    a = 1
    do while (n < 3)
      b = index(text(a:), sep)
      if (b == 0) then
        b = len_trim(text) + 1
      else
        b = a + b - 1
      end if
      read(text(a:b - 1), *, iostat=ios) v
      if (ios /= 0 .or. v < low .or. b == a) then
        n = 0
        return
      end if
      n = n + 1
      out(n) = v
      if (b > len_trim(text)) return
      a = b + 1
    end do
    n = 0
  end function parse_list

  integer function device_for(o, rank, device) result(failed)
    type(heat_options), intent(in) :: o
    integer(c_int64_t), intent(in) :: rank
    integer, intent(out) :: device
    integer(c_int) :: count, e
    failed = 0
    device = 0
    if (.not. o%on_device) return
    count = 0
    e = heat_cuda_device_count(count)
    if (e /= 0 .or. count == 0) then
      print '(a,i0,a)', 'heat: rank ', rank, ': no CUDA device'
      failed = 1
      return
    end if
    device = int(mod(rank, int(count, c_int64_t)))
    e = heat_cuda_set_device(device)
    if (e /= 0) then
      print '(a,i0,2a)', 'heat: rank ', rank, ': cudaSetDevice: ', heat_cuda_message(e)
      failed = 1
    end if
  end function device_for

  !> One rank per OpenMP thread over an in-process group (host or device memory).
  integer function run_group(o, ranks) result(failed)
    type(heat_options), intent(in) :: o
    integer(c_int64_t), intent(in) :: ranks
    type(c_ptr), allocatable :: comms(:)
    integer(c_int64_t) :: rank
    integer :: device
    integer(c_int) :: st
    allocate(comms(ranks))
    failed = 0
    if (gdap_comm_create_group(comms, ranks) /= GDAP_SUCCESS) then
      print '(2a)', 'heat: gdap_comm_create_group: ', gdap_error_message()
      failed = 1
      return
    end if
    !$omp parallel num_threads(int(ranks)) private(rank, device, st) shared(comms, o) reduction(max:failed)
    rank = 0
    !$ rank = omp_get_thread_num()
    failed = device_for(o, rank, device)
    if (failed == 0) failed = run_rank(o, comms(rank + 1), c_null_ptr, device)
    st = gdap_comm_destroy(comms(rank + 1))
    !$omp end parallel
  end function run_group

  !> One rank per MPI process: gdap over MPI on the host, over NCCL (made over MPI) on GPUs.
  integer function run_mpi(o) result(failed)
    type(heat_options), intent(in) :: o
#ifdef HEAT_HAVE_MPI
    type(c_ptr) :: comm, stream, nccl
    integer :: provided, ierr, rank, local, node, device
    integer(c_int) :: st, e
    call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)
    call MPI_Comm_rank(node, local, ierr)
    call MPI_Comm_free(node, ierr)
    comm = c_null_ptr
    stream = c_null_ptr
    nccl = c_null_ptr
    device = 0
    failed = 0
    if (provided < MPI_THREAD_FUNNELED) then
      print '(a)', 'heat: this MPI gives no MPI_THREAD_FUNNELED'
      failed = 1
    else if (.not. o%on_device) then
      ! gdap takes the communicator as Fortran MPI holds it: an INTEGER handle.
      if (gdap_comm_from_mpi(comm, MPI_COMM_WORLD) /= GDAP_SUCCESS) then
        print '(a,i0,2a)', 'heat: rank ', rank, ': gdap_comm_from_mpi: ', gdap_error_message()
        failed = 1
      end if
    else
      ! One GPU per process of a node; NCCL between them, set up over MPI by the C helper.
      failed = device_for(o, int(local, c_int64_t), device)
      e = 0
      if (failed == 0) e = heat_nccl_from_mpi(nccl, MPI_COMM_WORLD, device)
      if (e /= 0) print '(a,i0,2a)', 'heat: rank ', rank, ': an NCCL communicator over MPI: ', heat_nccl_message(e)
      if (e /= 0) failed = 1
      if (failed == 0) e = heat_cuda_stream_create(stream, 1_c_int)
      if (failed == 0 .and. e == 0) then
        if (gdap_comm_from_nccl(comm, nccl, stream) /= GDAP_SUCCESS) then
          print '(a,i0,2a)', 'heat: rank ', rank, ': gdap_comm_from_nccl: ', gdap_error_message()
          failed = 1
        end if
      else if (failed == 0) then
        failed = 1
      end if
    end if
    if (failed == 0) failed = run_rank(o, comm, stream, device)
    st = gdap_comm_destroy(comm)
    if (c_associated(stream)) e = heat_cuda_stream_destroy(stream)
    if (c_associated(nccl)) e = heat_nccl_destroy(nccl)
    call MPI_Finalize(ierr)
#else
    print '(a)', 'heat: this build has no MPI (gdap was installed without it)'
    failed = 1
    if (o%ndim < 0) failed = 2
#endif
  end function run_mpi

end program heat_f
