"""Solution paths survive pickling and a JSON round trip.

Paths of every kind are tried: the piecewise-linear SVM and Lasso paths, the GAGA age-path
(pieces given by functions of the age) and a path of the ODE follower whose functions are
local closures.
"""

import copy
import json
import pickle
from dataclasses import dataclass, fields, is_dataclass

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from pathlib_core.core.io import ByValue, to_jsonable
from pathlib_core.core.ode_path import follow_path
from pathlib_core.core.solution_path import FunctionSegment, SolutionPath
from pathlib_core.gaga import age_path
from pathlib_core.primer import lasso_path, svm_path


def _svm():
    X, y = make_classification(40, 4, random_state=0)
    return svm_path(X @ X.T, 2 * y - 1, C_max=10.0)


def _lasso():
    X, y = make_regression(30, 6, noise=1.0, random_state=1)
    return lasso_path(X, y)


def _age():
    X, y = make_regression(30, 4, noise=5.0, random_state=2)
    return age_path(X, y, model="lasso", regularizer="linear", alpha=0.5, age_min=0.1,
                    age_max=40.0)


def _ode():
    # dz/dt = s z, s flips between +1 and -1 when z reaches 2 or 1: every function is a closure
    turns = []

    def events(t, z, s):
        return np.array([2.0 - z[0]]) if s > 0 else np.array([z[0] - 1.0])

    def update(t, z, s, fired):
        turns.append(t)
        return -s, None, "turning", {"from": s}

    return follow_path([1.0], (0.0, 3.0), rhs=lambda t, z, s: s * z, events=events,
                       update=update, residual=lambda t, z, s: 0.0 * abs(z[0]), state=1)


PATHS = {"svm": _svm, "lasso": _lasso, "age": _age, "ode": _ode}
LINEAR = {"svm", "lasso"}


@pytest.fixture(scope="module", params=sorted(PATHS))
def named_path(request):
    return request.param, PATHS[request.param]()


def _same(a, b) -> bool:
    if is_dataclass(a):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name))
                                          for f in fields(a))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=np.asarray(a).dtype.kind == "f")


def _interior(path, n=7, seed=0):
    lo, hi = path.param_range
    return np.random.default_rng(seed).uniform(lo, hi, n)


def _events(path):
    return [(e.param, e.kind, e.indices, to_jsonable(e.info)) for e in path.events]


def test_pickle_round_trip_keeps_values_everywhere(named_path):
    name, path = named_path
    back = pickle.loads(pickle.dumps(path))
    assert type(back) is SolutionPath and back.param_name == path.param_name
    np.testing.assert_array_equal(back.breakpoints, path.breakpoints)
    assert _events(back) == _events(path)
    for t in [*_interior(path), *path.breakpoints]:
        assert _same(back.at(t), path.at(t)), (name, t)
    np.testing.assert_array_equal(back.kkt_residuals(), path.kkt_residuals())
    assert _same(copy.deepcopy(path).at(path.breakpoints[1]), path.at(path.breakpoints[1]))


def test_json_round_trip_keeps_breakpoints_events_records_and_residuals(named_path, tmp_path):
    name, path = named_path
    text = path.to_json(tmp_path / "path.json")
    for back in (SolutionPath.from_json(text), SolutionPath.from_json(tmp_path / "path.json"),
                 SolutionPath.from_dict(json.loads(text))):
        assert back.param_name == path.param_name and back.direction == path.direction
        np.testing.assert_array_equal(back.breakpoints, path.breakpoints)
        assert _events(back) == _events(path)
        np.testing.assert_array_equal(back.kkt_residuals(), path.kkt_residuals())
        assert len(back.records()) == len(path.records())
        for (t0, s0, r0), (t1, s1, r1) in zip(path.records(), back.records(), strict=True):
            assert (t0, s0) == (t1, s1) and _same(r0, r1), (name, t0)
        for t in path.breakpoints:
            for side in ("left", "right"):
                assert _same(back.at(t, side=side), path.at(t, side=side))
        assert back.to_rows() == path.to_rows()
        assert back.info == to_jsonable(path.info)


def test_json_path_is_exact_inside_linear_pieces_and_refuses_function_pieces(named_path):
    name, path = named_path
    back = SolutionPath.from_json(path.to_json())
    for t in _interior(path):
        if name in LINEAR:
            assert _same(back.at(t), path.at(t)), (name, t)
        elif t not in path.breakpoints:
            with pytest.raises(ValueError, match="pickle the path"):
                back.at(t)


@dataclass(frozen=True)
class Rec:
    coef: np.ndarray
    scale: float
    labels: np.ndarray
    note: str


def _toy():
    recs = [Rec(np.array([0.0, 1.0]), 1.0, np.array([1, -1], dtype=np.int8), "a"),
            Rec(np.array([np.nan, 2.0]), np.inf, np.array([1, 1], dtype=np.int8), "b"),
            Rec(np.array([3.0, -np.inf]), -1.5, np.array([-1, 1], dtype=np.int8), "c")]
    return SolutionPath.piecewise_linear("C", [0.0, 1.0, 2.0], recs,
                                         residual=lambda t, r: abs(r.scale))


def test_json_keeps_dtypes_non_finite_values_and_record_types():
    path = _toy()
    back = SolutionPath.from_json(path.to_json())
    for t in (0.0, 1.0, 2.0):
        a, b = path.at(t), back.at(t)
        assert isinstance(b, Rec) and b.labels.dtype == np.int8 and b.note == a.note
        assert _same(a, b) and (b.scale == a.scale or np.isnan(a.scale))
    np.testing.assert_array_equal(back.kkt_residuals(), [1.0, np.inf, 1.5])


def test_json_records_of_unknown_classes_come_back_as_dicts():
    data = _toy().to_dict()
    data["record_type"] = "dataclass:no_such_module:Rec"
    rec = SolutionPath.from_dict(data).at(0.0)
    assert isinstance(rec, dict) and rec["note"] == "a"
    np.testing.assert_array_equal(rec["coef"], [0.0, 1.0])
    with pytest.raises(ValueError, match="keys"):
        SolutionPath.from_dict({"param_name": "C"})
    with pytest.raises(ValueError, match="source"):
        SolutionPath.from_json(3)


def test_function_segments_and_by_value_stand_ins_pickle_alone():
    offset = 2.0
    seg = FunctionSegment(0.0, 1.0, lambda t: np.array([t + offset]))
    back = pickle.loads(pickle.dumps(seg))
    np.testing.assert_array_equal(back.evaluate(0.5), [2.5])
    fn = pickle.loads(pickle.dumps(ByValue(lambda x: x * offset)))
    assert fn(3.0) == 6.0
