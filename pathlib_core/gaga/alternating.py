r"""Alternate convex search (ACS, Algorithm 1 of Qu, Li, Zhao and Gu, NeurIPS 2022), shared by
every model.

ACS alternates the two convex half-steps of the SPL objective (2):

.. math::

    v \leftarrow v^*(\ell(w), \lambda) \quad \text{(closed form, } \texttt{sp\_weights}
    \text{)}, \qquad
    w \leftarrow \operatorname*{arg\,min}_w \; R(w) + \sum_i v_i \, \ell_i(w),

and stops when ``w`` is stationary for the weighted problem with the weights ``v*(l(w))`` of
its own losses (the partial-optimum certificate). Near a fold of the age-path ACS converges
only linearly; once the sample sets have stopped changing, :func:`alternate` tries Newton
steps on the piece's stationarity system (5) in those sets.

The same loop serves the Lasso, logistic regression and the SVM: a *problem* provides

- ``losses(x)`` -- the per-sample losses at the parameters ``x``;
- ``weighted_fit(v, x0)`` -- the minimizer of the weighted problem (warm-started at ``x0``);
- ``kkt(x, v, slope)`` -- the relative stationarity residual of ``x`` for the weights ``v``
  (``slope = |dv*/dl|`` adds the rounding of the weights);

and an *accelerator* (an age-path engine) provides ``sets_key(x, loss, age)`` (bytes that
change when a sample or coefficient changes set) and ``newton(age, x)`` (Newton steps on (5)
in the sets of ``x``).
"""

from __future__ import annotations

from .regularizers import _sp_slope, sp_weights


def weighted_residual(problem, x, age, regularizer, mixture) -> tuple[float, object]:
    """The partial-optimum residual of ``x`` at ``age`` and the weights ``v*(l(x), age)``:
    ``problem.kkt`` with the weights of its own losses and their slope (a loss within 1e-8
    of a threshold of ``v*`` is on either side of it)."""
    loss = problem.losses(x)
    v = sp_weights(loss, age, regularizer=regularizer, mixture=mixture)
    return problem.kkt(x, v, _sp_slope(loss, age, regularizer, mixture, 1e-8)), v


def alternate(problem, age, x, *, regularizer, mixture, max_iter, tol, accelerator=None,
              first_newton: int = 3):
    """ACS at ``age`` from ``x``, with Newton acceleration when an ``accelerator`` is given.

    Parameters
    ----------
    problem, accelerator
        See the module docstring.
    age : float
        The age (in the problem's internal units).
    x : ndarray
        Starting parameters (the weights ``v*(l(x))`` of its losses are the first ``v``).
    regularizer, mixture
        The SP-regularizer and the mixture parameter (internal units).
    max_iter : int
        Cap on the ACS iterations.
    tol : float
        The partial-optimum tolerance that stops the search.
    first_newton : int, default 3
        Newton steps are tried once the sets have been stable for this many iterations, then
        after twice as many after each failed attempt in the same sets (each attempt costs
        about twenty linear solves).

    Returns
    -------
    x : ndarray
        The last iterate (a certified partial optimum when ``converged``).
    v : ndarray
        The weights of the last ``v``-step (``v*(l(x))`` when ``converged``).
    n_iter : int
        ACS iterations done.
    converged : bool
        Whether the residual reached ``tol``.
    """
    v = sp_weights(problem.losses(x), age, regularizer=regularizer, mixture=mixture)
    prev, stable, next_try = None, 0, first_newton
    for k in range(1, max_iter + 1):
        x = problem.weighted_fit(v, x)
        loss = problem.losses(x)
        v = sp_weights(loss, age, regularizer=regularizer, mixture=mixture)
        # converged: x is stationary for the weighted problem with ITS OWN weights v*(l(x))
        if problem.kkt(x, v, _sp_slope(loss, age, regularizer, mixture, 1e-8)) <= tol:
            return x, v, k, True
        if accelerator is None:
            continue
        key = accelerator.sets_key(x, loss, age)
        if key != prev:
            prev, stable, next_try = key, 0, first_newton
            continue
        stable += 1
        if stable >= next_try:
            next_try *= 2
            cand = accelerator.newton(age, x)
            r, v_cand = weighted_residual(problem, cand, age, regularizer, mixture)
            if r <= tol:
                return cand, v_cand, k, True
    return x, v, max_iter, False


def polish(problem, accelerator, age, x, regularizer, mixture):
    """``x`` after Newton steps on (5) in its sets, kept only where they do not make the
    partial-optimum residual worse (ACS converges linearly; Newton steps in fixed sets know
    nothing of the sets' inequalities and can leave them on an ill-conditioned piece)."""
    x1 = accelerator.newton(age, x)
    if (weighted_residual(problem, x1, age, regularizer, mixture)[0]
            <= weighted_residual(problem, x, age, regularizer, mixture)[0]):
        return x1
    return x
