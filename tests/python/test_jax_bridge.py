"""gdap.from_jax / gdap.to_jax on JAX's CPU devices (XLA_FLAGS gives four): a jax.Array's shards as a
GlobalArray's sections and back, pointer identity both ways, values checked. Fails instead of
skipping where ctest found JAX at configure time (GDAP_TEST_REQUIRE_JAX); the GPU version is in
test_global_gpu.py."""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gdap  # noqa: E402
from gdap import layout  # noqa: E402

if not os.environ.get("GDAP_TEST_REQUIRE_JAX"):
    pytest.importorskip("jax")
import jax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

CPUS = jax.devices("cpu")
WHOLE = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)


def sharded(spec, grid=(2, 2)):
    mesh = Mesh(np.array(CPUS[:4]).reshape(grid), ("x", "y"))
    return jax.device_put(WHOLE, NamedSharding(mesh, spec))


def pointers(j):
    return sorted(s.data.unsafe_buffer_pointer() for s in j.addressable_shards)


def test_four_cpu_devices():
    assert len(CPUS) >= 4, "XLA_FLAGS=--xla_force_host_platform_device_count=4 was not in effect"


@pytest.mark.parametrize("spec,grid", [(PartitionSpec("x", "y"), (2, 2)), (PartitionSpec(None, "y"), (1, 4)),
                                       (PartitionSpec("x", None), (2, 2)), (PartitionSpec(), (2, 2))],
                         ids=["2 x 2 blocks", "columns", "rows, replicated along y", "replicated"])
def test_from_jax_shares_every_shard(spec, grid):
    j = sharded(spec, grid)
    g = gdap.from_jax(j)
    assert g.nranks == 4 and g.mode == "controller"
    assert sorted(g.section(r).data_ptr for r in range(4)) == pointers(j)
    assert (g.get() == WHOLE).all() and (g.reshard(layout.cyclic(WHOLE.shape, 4)).get() == WHOLE).all()


def test_to_jax_assembles_the_sections():
    g = gdap.distribute(WHOLE, layout.block(WHOLE.shape, (2, 2)))
    j = gdap.to_jax(g)
    assert pointers(j) == sorted(g.section(r).data_ptr for r in range(4))
    assert (np.asarray(j) == WHOLE).all() and j.sharding.spec == PartitionSpec("gdap0", "gdap1")
    back = gdap.from_jax(j)
    assert sorted(back.section(r).data_ptr for r in range(4)) == pointers(j)


def test_to_jax_refuses_what_a_sharding_cannot_say():
    with pytest.raises(gdap.UnsupportedError, match="axis 0 \\('c' over 4, size 8\\)"):
        gdap.to_jax(gdap.distribute(WHOLE, layout.cyclic(WHOLE.shape, 4)))
    odd = np.zeros((8, 6), np.float32)
    with pytest.raises(gdap.UnsupportedError, match="axis 1 \\('b' over 4, size 6\\)"):
        gdap.to_jax(gdap.distribute(odd, layout.block(odd.shape, (1, 4))))


def test_to_jax_of_a_temporary_keeps_its_memory():
    # Review s15 #4: the DLPack import did not keep the GlobalArray's sections alive, so JAX read
    # freed memory once a temporary (a.T.reshape(-1)) was collected and new arrays took its place.
    import gc
    x = np.arange(64.0).reshape(8, 8)
    a = gdap.distribute(x, layout.block(x.shape, (2, 2)))
    made = [a.T.reshape(-1).to_jax(), a.T.to_jax(), a.reshard(layout.block(x.shape, 4)).to_jax()]
    gc.collect()
    junk = [gdap.distribute(np.full((8, 8), -1.0), layout.block((8, 8), (2, 2))).T.reshape(-1) for _ in range(20)]
    for j, want in zip(made, [x.T.ravel(), x.T, x]):
        np.testing.assert_array_equal(np.asarray(j), want)
    assert len(junk) == 20


def test_to_jax_of_unaligned_host_sections_names_the_way_round():
    # Review s15 #4: a section NumPy allocated (a + 0) need not be 64-byte aligned: JAX's own
    # "unaligned data" error before; now gdap's, naming the alignment and the way round.
    x = np.arange(64.0).reshape(8, 8)
    a = gdap.distribute(x, layout.block(x.shape, (1, 4)))
    made = [a + 0 for _ in range(8)]  # NumPy promises 16 bytes: some of 32 sections are off 64
    if all(m.local_view(r).__array_interface__["data"][0] % 64 == 0 for m in made for r in range(4)):
        pytest.fail("NumPy happened to align every section: the refusal was not reached")
    for m in made:
        try:
            np.testing.assert_array_equal(np.asarray(m.to_jax()), x)
        except gdap.UnsupportedError as e:
            assert "64-byte aligned" in str(e) and "a.copy()" in str(e)
            np.testing.assert_array_equal(np.asarray(m.copy().to_jax()), x)
    # gdap's own copies are aligned: a transpose's flattened copy and copy()
    np.testing.assert_array_equal(np.asarray(a.T.reshape(-1).to_jax()), x.T.ravel())
