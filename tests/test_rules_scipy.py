"""The scipy rules end to end (their per-function specs are in tests/specs/scipy_special.py and
scipy_stats.py): a mixture model's log-likelihood against JAX, a Gaussian process's marginal
likelihood, rules declared on a user class's method and on a bound method, frozen distributions,
the refusals (a parameter without a derivative, a distribution frozen from differentiable
parameters), and the advice of a NoRuleError (`registry.advice`)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.special
import scipy.stats
from scipy.special import logsumexp
from scipy.stats import norm

import cpsgrad
from cpsgrad.rules.registry import TABLE, advice, public_name
from cpsgrad.testing import check_grad
from cpsgrad.transforms.resolve import binding_guard

# ---- a mixture model ----------------------------------------------------------------------------


def mixture_log_likelihood(means, log_scales, logits, data):
    """log p(data) under a mixture of normals: logsumexp over the components of log weight plus
    log density, summed over the points."""
    log_weights = logits - logsumexp(logits)
    densities = norm.logpdf(data[:, None], means, np.exp(log_scales))
    return np.sum(logsumexp(densities + log_weights, axis=1))


def test_a_mixture_models_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    jnp, jsp = jax.numpy, jax.scipy
    rng = np.random.default_rng(0)
    data = rng.normal(size=20) * 2.0
    means, log_scales, logits = np.array([-1.0, 0.5, 2.0]), np.array([0.1, -0.3, 0.4]), np.array([0.2, -0.1, 0.5])

    def reference(means, log_scales, logits):
        log_weights = logits - jsp.special.logsumexp(logits)
        densities = jsp.stats.norm.logpdf(data[:, None], means, jnp.exp(log_scales))
        return jnp.sum(jsp.special.logsumexp(densities + log_weights, axis=1))

    value, gradients = cpsgrad.value_and_grad(mixture_log_likelihood, argnums=(0, 1, 2))(
        means, log_scales, logits, data)
    assert value == mixture_log_likelihood(means, log_scales, logits, data)
    with jax.enable_x64(True):
        expected = jax.grad(reference, argnums=(0, 1, 2))(means, log_scales, logits)
    for gradient, wanted in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(gradient, np.asarray(wanted), rtol=1e-12)


def test_a_gaussian_process_marginal_likelihood():
    """multivariate_normal.logpdf of a covariance built from the parameters (the covariance's
    gradient is the symmetric one)."""
    x = np.linspace(-1.0, 1.0, 6)

    def marginal(params, y):
        scale, length, noise = np.exp(params[0]), np.exp(params[1]), np.exp(params[2])
        cov = scale * np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / length**2) + noise * np.eye(6)
        return scipy.stats.multivariate_normal.logpdf(y, params[3] * np.ones(6), cov)

    check_grad(marginal, np.array([0.2, -0.3, -1.0, 0.1]), np.cos(x), rtol=1e-6)


def test_gammainc_and_bessel_orders_refuse_their_parameters():
    def incomplete(a, x):
        return scipy.special.gammainc(a, x)

    assert cpsgrad.grad(incomplete, argnums=1)(2.0, 1.5) == pytest.approx(1.5 * math.exp(-1.5))
    with pytest.raises(cpsgrad.NoRuleError, match=r"gammainc in its parameter a.*in x only"):
        cpsgrad.grad(incomplete, argnums=(0, 1))(2.0, 1.5)

    def bessel(v, x):
        return scipy.special.iv(v, x)

    with pytest.raises(cpsgrad.NoRuleError, match=r"scipy.special.iv in its order v.*not differentiable"):
        cpsgrad.grad(bessel, argnums=0)(1.5, 2.0)
    with pytest.raises(cpsgrad.NoRuleError, match=r"shape parameter df"):
        cpsgrad.grad(lambda df: scipy.stats.t.cdf(0.5, df))(3.0)


def test_gammasgn_carries_no_gradient():
    assert cpsgrad.grad(lambda x: scipy.special.gammasgn(x) * x)(-0.5) == -1.0


def test_log_ndtr_far_in_the_tail():
    """d log_ndtr(x) / dx = phi(x) / Phi(x), against its asymptotic series at x = -30."""
    t, total, term = Fraction(30), Fraction(0), Fraction(1)
    for k in range(12):
        total += term
        term *= -Fraction(2 * k + 1) / (t * t)
    assert cpsgrad.grad(scipy.special.log_ndtr)(-30.0) == pytest.approx(float(t / total), rel=1e-13)


def test_logsumexp_return_sign_and_b():
    a, b = np.array([0.3, -1.0, 2.0]), np.array([1.0, -2.0, 0.5])

    def signed(a, b):
        value, sign = logsumexp(a, b=b, return_sign=True)
        return value * sign

    check_grad(signed, a, b, argnums=(0, 1))


# ---- rules on methods ---------------------------------------------------------------------------


class Spring:
    def __init__(self, stiffness):
        self.stiffness = stiffness

    def energy(self, x):
        return 0.5 * self.stiffness * float(np.round(x * 1e6) / 1e6) ** 2  # not differentiable as written


SPRING = Spring(3.0)


@pytest.fixture
def declared():
    """Rules declared in a test, removed after it."""
    rules = []
    yield rules
    for made in rules:
        TABLE.remove(made)


def test_a_rule_on_a_class_function_applies_to_its_bound_methods(declared):
    def energy(self, x):
        y = self.energy(x)
        y_d = yield y
        x_d += y_d * self.stiffness * x  # noqa: F821, F841

    declared.append(TABLE.add(Spring.energy, energy))
    spring = Spring(3.0)

    def of_a_parameter(x, s):
        return s.energy(x) * 2.0

    def of_a_global(x):
        return SPRING.energy(x) * 2.0  # noqa: F821 (set below, as a module global)

    def of_a_local(x):
        s = Spring(3.0)
        return s.energy(x) + 1.0

    assert cpsgrad.grad(of_a_parameter)(0.5, spring) == 3.0
    assert cpsgrad.grad(of_a_global)(0.5) == 3.0
    assert cpsgrad.grad(of_a_local)(0.5) == 1.5


def test_a_rule_on_one_objects_method_applies_to_that_object(declared):
    spring = Spring(2.0)

    def energy(x):
        y = spring.energy(x)
        y_d = yield y
        x_d += y_d * 2.0 * x  # noqa: F821, F841

    declared.append(TABLE.add(spring.energy, energy))

    def uses(x, s):
        return s.energy(x)

    assert cpsgrad.grad(uses)(0.5, spring) == 1.0
    assert cpsgrad.grad(uses)(0.5, Spring(2.0)) == 0.0  # another Spring's: its source, rounded


def test_a_bound_methods_binding_holds_across_reads():
    """`norm.logpdf` is a new object at each read: the program made for it holds (equal, not the same)."""

    def f(x):
        return norm.logpdf(x)

    guard = binding_guard(f, {"norm.logpdf": norm.logpdf})
    assert guard()


# ---- frozen distributions -----------------------------------------------------------------------

FROZEN = norm(0.5, 2.0)


def test_frozen_distributions_are_differentiated_in_x():
    def local(x):
        d = norm(0.5, 2.0)
        return np.sum(d.logpdf(x)) + np.sum(d.cdf(x))

    def global_(x):
        return np.sum(FROZEN.logpdf(x)) + np.sum(FROZEN.cdf(x))

    def written_out(x):
        return np.sum(norm.logpdf(x, 0.5, 2.0)) + np.sum(norm.cdf(x, 0.5, 2.0))

    x = np.array([0.3, -1.2, 2.0])
    expected = cpsgrad.grad(written_out)(x)
    np.testing.assert_allclose(cpsgrad.grad(local)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(cpsgrad.grad(global_)(x), expected, rtol=1e-14)
    check_grad(local, x)


def test_a_distribution_frozen_from_differentiable_parameters_is_refused():
    def frozen(x, loc):
        return np.sum(norm(loc, 2.0).logpdf(x))

    with pytest.raises(cpsgrad.NoRuleError):
        cpsgrad.grad(frozen, argnums=1)(np.array([0.3, 1.0]), 0.5)
    assert "scipy.stats.norm.logpdf(x, loc, scale), not scipy.stats.norm(loc, scale).logpdf(x)" in advice(norm, "norm")


def test_the_refusal_of_a_frozen_distribution_says_how_to_rewrite_it():
    def frozen(x, loc):
        return np.sum(norm(loc, 2.0).logpdf(x))

    with pytest.raises(cpsgrad.NoRuleError, match=r"scipy\.stats\.norm\.logpdf\(x, loc, scale\)"):
        cpsgrad.grad(frozen, argnums=1)(np.array([0.3, 1.0]), 0.5)


# ---- the advice of a NoRuleError ----------------------------------------------------------------


def test_public_names():
    private = scipy.special._logsumexp.logsumexp
    assert private is logsumexp
    assert public_name(private) == "scipy.special.logsumexp"
    assert public_name(scipy.special.gamma) == "scipy.special.gamma"  # a ufunc
    assert public_name(np.ndarray.sum) == "numpy.ndarray.sum"
    assert public_name(norm.logpdf) == "scipy.stats.norm.logpdf"
    assert public_name(scipy.stats.multivariate_normal.pdf) == "scipy.stats.multivariate_normal.pdf"
    assert public_name(Spring.energy) == "tests.test_rules_scipy.Spring.energy"
    assert public_name(Spring(1.0).energy) is None


def test_advice_names_the_public_name_and_a_function_that_has_a_rule():
    assert (
        advice(scipy.special.zeta, "zeta")
        == "no derivative rule for zeta; declare one with @cpsgrad.rule(scipy.special.zeta)"
    )
    assert advice(scipy.stats.norm.ppf, "norm.ppf").endswith("@cpsgrad.rule(scipy.stats.norm.ppf)")
    assert (
        advice(logsumexp, "logsumexp")
        == "no derivative rule for logsumexp fits these arguments; see cpsgrad.rule to add one"
    )
    method = Spring(1.0).energy
    assert advice(method, "s.energy").endswith(
        "@cpsgrad.rule(s.energy) (this object's method), or @cpsgrad.rule(tests.test_rules_scipy.Spring.energy) for "
        "every instance"
    )
    assert advice(_own_erf, "erf").endswith("; math.erf and scipy.special.erf have one")  # of the same name


def _own_erf(x):  # a function named erf without a rule
    return math.erf(x)


_own_erf.__name__ = "erf"


def test_a_call_site_refusal_gives_the_advice():
    def calls(f, v, x):
        return f(v, x)

    with pytest.raises(cpsgrad.NoRuleError,
                       match=r"call of f: .*declare one with @cpsgrad\.rule\(scipy\.special\.struve\)"):
        cpsgrad.grad(calls, argnums=2)(scipy.special.struve, 1.0, 0.5)


def test_the_scipy_rules_load_once_scipy_is_imported():
    """`import cpsgrad` does not import scipy.stats (a second); the rules come with it."""
    import subprocess
    import sys

    script = (
        "import sys, cpsgrad\n"
        "assert 'scipy.stats' not in sys.modules\n"
        "import scipy.stats\n"
        "assert scipy.stats.norm.logpdf in cpsgrad.rules.TABLE\n"
        "assert cpsgrad.grad(scipy.stats.norm.logpdf)(1.0) == -1.0\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


_SINGULAR = np.diag([1.0, 1.0, 0.0, 0.0])  # variance in the first two dimensions only


def _on_support(x, mean):
    return np.concatenate([x[:2], mean[2:]])  # autograd's test_mvn_sing_cov: x varies where cov does


def singular_logpdf(x, mean):
    return scipy.stats.multivariate_normal.logpdf(_on_support(x, mean), mean, _SINGULAR, allow_singular=True)


def singular_pdf(x, mean):
    return scipy.stats.multivariate_normal.pdf(_on_support(x, mean), mean, _SINGULAR, allow_singular=True)


def singular_frozen_logpdf(x, mean):
    return scipy.stats.multivariate_normal(np.zeros(4), _SINGULAR, allow_singular=True).logpdf(_on_support(x, mean))


def in_a_singular_covariance(x, cov):
    return scipy.stats.multivariate_normal.logpdf(x, np.zeros(4), cov, allow_singular=True)


def in_a_regular_covariance(x, a):
    return scipy.stats.multivariate_normal.logpdf(x, np.zeros(4), a @ a.T + np.eye(4), allow_singular=True)


def test_multivariate_normal_with_a_singular_covariance():
    """x and mean by scipy's pseudo-inverse (its density is constant off the covariance's range);
    the singular covariance itself is refused: there its rank, and the density, jump."""
    rng = np.random.default_rng(4)
    x, mean = rng.standard_normal(4), rng.standard_normal(4)
    for function in (singular_logpdf, singular_pdf, singular_frozen_logpdf):
        check_grad(function, x, mean, argnums=(0, 1))
    gradient = cpsgrad.grad(singular_logpdf)(x, mean)
    np.testing.assert_allclose(gradient, [mean[0] - x[0], mean[1] - x[1], 0.0, 0.0])
    with pytest.raises(cpsgrad.UnsupportedError, match="allow_singular=True: the covariance is singular"):
        cpsgrad.grad(in_a_singular_covariance, argnums=1)(x, _SINGULAR)
    check_grad(in_a_regular_covariance, x, rng.standard_normal((4, 4)), argnums=(0, 1))
