"""For the MPI rank scripts (functions_mpi_ranks.py, ufunc_mpi_ranks.py): NoGather makes every
gathering method of GlobalArray raise while it is entered, so that a call that should stay
distributed fails loudly if it gathers."""
import gdap

GATHERS = ("get", "__array__", "gather", "allgather", "reshard", "_moved_to")


def _refuse(*args, **kwargs):
    raise AssertionError("a silent gather")


class NoGather:
    """Every gathering method raises meanwhile."""
    def __enter__(self):
        self.saved = {n: getattr(gdap.GlobalArray, n) for n in GATHERS}
        for n in GATHERS:
            setattr(gdap.GlobalArray, n, _refuse)

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(gdap.GlobalArray, n, f)
