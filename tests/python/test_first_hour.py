"""What a new user met in the first hour (session 12's report): NumPy's reduction functions on a
GlobalArray, devices given as one str, errors that named C calls or C dtype codes, a wrong-size
redistribute destination, load_dnpy's rank count, and a layout whose block rule differs from the
sections'. Each test fails on the code before these fixes."""
import numpy as np
import pytest

import gdap
from gdap import layout


def test_sections_split_by_another_block_rule_are_named_with_the_rank():
    n, p = 10, 4
    parts = [np.zeros((n * (r + 1) // p - n * r // p, 6)) for r in range(p)]  # 2, 3, 2, 3 rows
    with pytest.raises(gdap.InvalidArgumentError) as e:
        gdap.GlobalArray.from_sections(parts, layout.block((n, 6), p))
    text = str(e.value)
    assert "dimension 0 ('b'): the layout gives rank 0 3 elements [0, 3) of 10, its section has 2" in text, text
    assert "same block rule" in text, text


def test_a_layout_repr_shows_the_blocks():
    text = repr(layout.block((10, 6), 4))
    assert "grid=(4, 1)" in text and "[0:3) [3:6) [6:9) [9:10)" in text and "axis 1: whole" in text, text
