"""The Python half of cross_language.c, which embeds this interpreter: a consumer that takes a C
producer's distbuffer with gdap.from_distarray and changes it in place, and a producer whose
NumPy sections C changes in place. Both report addresses, so the C side can prove no copy."""
import numpy as np

import gdap


def consume(distbuffer):
    """Negates every element of a C section in place; returns (the section's address as gdap sees
    it, the number of elements whose value was not their global position before the change)."""
    la = gdap.from_distarray(distbuffer)
    x = np.asarray(la)
    wrong = sum(x[i] != _position(la.local_to_global(i)) for i in np.ndindex(*x.shape))
    x *= -1
    return la.data_ptr, int(wrong)


def produce(rank, nranks, rows, cols):
    """Rank `rank`'s section of a rows x cols array in column blocks, holding global positions."""
    lo, hi = cols * rank // nranks, cols * (rank + 1) // nranks
    dim_data = (dict(dist_type="b", size=rows, proc_grid_size=1, proc_grid_rank=0, start=0, stop=rows),
                dict(dist_type="b", size=cols, proc_grid_size=nranks, proc_grid_rank=rank, start=lo, stop=hi))
    section = np.fromfunction(lambda i, j: _position((i, j + lo)), (rows, hi - lo))
    return {"__version__": gdap.PROTOCOL_VERSION, "buffer": section, "dim_data": dim_data}


def changed_by_c(distbuffer):
    """The number of elements of a section that C did not change to -position (in the same array
    object this module produced)."""
    x, lo = distbuffer["buffer"], distbuffer["dim_data"][1]["start"]
    return int(sum(x[i, j] != -_position((i, j + lo)) for i, j in np.ndindex(*x.shape)))


def _position(index):
    return 1000.0 * index[0] + index[1]
