"""int8 and uint8 sums over 3 MPI processes wrap around as NumPy's do (small_int_sums_mpi_ranks.py):
gdap.allreduce, GlobalArray.sum(axis, dtype=int8) (gdap_reduce_axes) and a pending sum read back
(gdap_reduce_scatter). Open MPI 4.1's op/avx saturated 8-bit sums of 16 or more elements (3 x 100
gave 127, not 44); gdap now sums them with an MPI op of its own. GlobalArray.sum without dtype sums
small integers in 64 bits, as NumPy does, and was right before."""
from conftest import every_rank_ok


def test_eight_bit_sums_over_three_mpi_processes_wrap():
    every_rank_ok("small_int_sums_mpi_ranks.py", 3, timeout=300)
