"""The Python half of same_answers.c, which embeds this interpreter: gdap's Python package's verdict
on the dictionaries C built, as (status, message); status 0 when gdap accepts them."""
import gdap


def _verdict(call):
    try:
        call()
    except gdap.Error as e:
        return (int(e.status), str(e))
    return (0, "")


def verdict(ranks, shape):
    """One process's dim_data checked against its buffer `shape`, or (shape None) every rank's
    dim_data checked together."""
    if shape is not None:
        return _verdict(lambda: gdap.validate(ranks[0], shape))
    return _verdict(lambda: gdap.GlobalMap(ranks))


def version_verdict(version):
    return _verdict(lambda: gdap.protocol_version_check(version))


def lookup_verdict(dim, global_index):
    return _verdict(lambda: gdap.dim_global_to_local(dim, global_index))
