"""The one index-state enum and its plain-int values."""

import numpy as np

from pathlib_core.core import IndexState, homotopy, qp
from pathlib_core.core.states import FIXED, FREE, LOWER, STATE_NAMES, UPPER


def test_index_state_values_names_and_int8_arrays():
    assert [int(s) for s in IndexState] == [0, 1, 2, 3]
    assert (FREE, LOWER, UPPER, FIXED) == tuple(IndexState)
    assert all(type(v) is int for v in (FREE, LOWER, UPPER, FIXED))
    assert STATE_NAMES == {0: "free", 1: "lower", 2: "upper", 3: "fixed"}
    st = np.array([IndexState.FREE, IndexState.UPPER], dtype=np.int8)
    assert IndexState(st[1]) is IndexState.UPPER
    assert STATE_NAMES[st[0]] == "free"


def test_engines_use_the_enum_values():
    assert (homotopy.FREE, homotopy.LOWER, homotopy.UPPER, homotopy.FIXED) == tuple(IndexState)
    assert homotopy.STATE_NAMES is STATE_NAMES
    assert (qp.FREE, qp.LOWER, qp.UPPER, qp.FIXED) == tuple(IndexState)
