"""Tests of the shared result type :class:`pathlib_core.core.solution_path.SolutionPath`."""

import json
from dataclasses import dataclass

import numpy as np
import pytest

from pathlib_core.core.solution_path import (
    Event,
    FunctionSegment,
    LinearSegment,
    SolutionPath,
    lerp_record,
)


@dataclass(frozen=True)
class Rec:
    coef: np.ndarray
    intercept: float
    labels: np.ndarray


def rec(c0, c1, b, labels=(1, -1)):
    return Rec(np.array([c0, c1], dtype=float), float(b), np.array(labels))


def jump_path():
    # affine on [0, 1], a jump at t = 1 (labels flip), affine on [1, 3]
    params = [0.0, 1.0, 1.0, 3.0]
    records = [rec(0, 0, 0), rec(1, 2, 1), rec(5, 5, -1, (1, 1)), rec(7, 1, -3, (1, 1))]
    events = [Event(1.0, "jump", (1,)), Event(0.0, "start")]
    return SolutionPath.piecewise_linear("C", params, records, events,
                                 residual=lambda t, r: abs(r.intercept) * 1e-12)


def test_breakpoints_sorted_with_both_ends_and_events_sorted():
    p = jump_path()
    np.testing.assert_array_equal(p.breakpoints, [0.0, 1.0, 3.0])
    assert len(p) == 3
    assert [e.param for e in p.events] == [0.0, 1.0]
    assert p.param_range == (0.0, 3.0)
    assert p.events_of("jump")[0].indices == (1,)


def test_at_interpolates_float_fields_exactly_and_keeps_integer_fields():
    p = jump_path()
    r = p.at(0.25)
    np.testing.assert_allclose(r.coef, [0.25, 0.5], rtol=0, atol=1e-15)
    assert r.intercept == pytest.approx(0.25)
    np.testing.assert_array_equal(r.labels, [1, -1])
    r = p.at(2.0)
    np.testing.assert_allclose(r.coef, [6.0, 3.0])
    np.testing.assert_array_equal(r.labels, [1, 1])


def test_at_a_jump_returns_the_side_asked_for_and_after_jump_by_default():
    p = jump_path()
    assert p.at(1.0, side="left").intercept == 1.0
    assert p.at(1.0, side="right").intercept == -1.0
    assert p.at(1.0).intercept == -1.0  # traced upward: after the jump is the right side
    down = SolutionPath.piecewise_linear("C", [0.0, 1.0, 1.0, 3.0],
                                 [rec(0, 0, 0), rec(1, 2, 1), rec(5, 5, -1), rec(7, 1, -3)],
                                 direction=-1)
    assert down.at(1.0).intercept == 1.0


def test_at_outside_range_or_bad_side_raises_value_error_naming_parameter():
    p = jump_path()
    with pytest.raises(ValueError, match="C=3.5 is outside"):
        p.at(3.5)
    with pytest.raises(ValueError, match="side"):
        p.at(1.0, side="up")
    with pytest.raises(ValueError, match="C must be a real number"):
        p.at("x")
    with pytest.raises(ValueError, match="C must be finite"):
        p.at(float("nan"))


def test_at_accepts_parameters_within_rounding_of_the_ends():
    p = jump_path()
    lo, hi = p.param_range
    for t, end in [(np.nextafter(hi, np.inf), hi), (hi * (1 + 4e-16), hi),
                   (np.nextafter(lo, -np.inf), lo)]:
        assert p.at(t) == p.at(end)
    with pytest.raises(ValueError, match="outside"):
        p.at(hi * (1 + 1e-13))
    small = SolutionPath.piecewise_linear("alpha", [1e-300, 2e-300], [np.zeros(1), np.ones(1)])
    np.testing.assert_array_equal(small.at(np.nextafter(2e-300, 1.0)), np.ones(1))


def test_records_list_both_sides_at_jumps_and_kkt_takes_the_worse_side():
    p = jump_path()
    sides = [(t, s) for t, s, _ in p.records()]
    assert sides == [(0.0, "both"), (1.0, "left"), (1.0, "right"), (3.0, "both")]
    res = p.kkt_residuals()
    np.testing.assert_allclose(res, [0.0, 1e-12, 3e-12])


def test_kkt_residuals_without_residual_function_raises():
    p = SolutionPath.piecewise_linear("t", [0, 1], [rec(0, 0, 0), rec(1, 1, 1)])
    with pytest.raises(ValueError, match="residual"):
        p.kkt_residuals()


def test_to_rows_and_json_round_trip():
    p = jump_path()
    rows = p.to_rows(fields=["coef"])
    assert len(rows) == 4
    assert rows[1]["side"] == "left" and rows[1]["events"] == "jump"
    assert rows[3]["coef[1]"] == 1.0
    assert "kkt_residual" in rows[0]
    d = json.loads(p.to_json())
    assert d["param_name"] == "C"
    assert d["breakpoints"] == [0.0, 1.0, 3.0]
    assert d["events"][1] == {"param": 1.0, "kind": "jump", "indices": [1], "info": {}}
    assert d["records"][2]["record"]["intercept"] == -1.0


def test_function_segments_and_contiguity_check():
    seg1 = FunctionSegment(0.0, 1.0, lambda t: np.array([t**2]))
    seg2 = FunctionSegment(1.0, 2.0, lambda t: np.array([2 * t - 1]))
    p = SolutionPath("age", [seg2, seg1])
    assert p.at(0.5)[0] == pytest.approx(0.25)
    assert p.at(1.5)[0] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="contiguous"):
        SolutionPath("age", [seg1, FunctionSegment(1.5, 2.0, lambda t: np.array([t]))])
    with pytest.raises(ValueError, match="lo < hi"):
        LinearSegment(1.0, 1.0, 0.0, 0.0)


def test_single_point_path():
    p = SolutionPath.piecewise_linear("mu", [2.0], [rec(1, 1, 1)])
    assert len(p) == 1
    assert p.at(2.0).intercept == 1.0
    with pytest.raises(ValueError):
        p.at(2.5)


def test_lerp_record_on_dicts_arrays_and_unknown_types():
    d = lerp_record({"a": 1.0, "k": "x"}, {"a": 3.0, "k": "y"}, 0.5)
    assert d == {"a": 2.0, "k": "x"}
    np.testing.assert_allclose(lerp_record(np.zeros(2), np.ones(2), 0.25), [0.25, 0.25])
    with pytest.raises(TypeError):
        lerp_record(object(), object(), 0.5)


def test_plot_marks_events(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    p = jump_path()
    ax = p.plot("coef")
    kinds = {t.get_text() for t in ax.get_legend().get_texts()}
    assert kinds == {"jump", "start"}
    # the line is broken at the jump: a NaN separates the two sides
    x = ax.get_lines()[0].get_xdata()
    assert np.isnan(x).sum() == 1
