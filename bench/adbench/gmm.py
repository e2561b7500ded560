"""ADBench GMM: the negative log-likelihood of a Gaussian mixture with a
Wishart prior on the precisions, differentiated with respect to the mixture
weights, the means and the inverse covariance factors.

Inputs (ADBench's): ``alphas`` (K), ``means`` (K, d), ``icf`` (K, d(d+1)/2),
``x`` (n, d), the Wishart prior's ``gamma`` and ``m``. Row k of ``icf`` holds
log diag(Q_k) in its first d entries, then the strictly lower triangle of Q_k
column by column (ADBench's packing); Q_k = diag(exp(log diag)) + L_k.

    f = -n d/2 log 2π + Σ_i logsumexp_k(α_k + Σ log diag(Q_k) - ½ |Q_k (x_i - μ_k)|²)
        - n logsumexp(α) + Σ_k (½ γ² (|diag Q_k|² + |L_k|²_F) - m Σ log diag(Q_k)) - K C(γ, m, d)
"""

from __future__ import annotations

import math

import numpy as np
from peers import jax_numpy, to_torch, torch_module

import soac
import soac.numpy as snp

NAME = "GMM"
# ADBench's d=10 K=25 n=1000 file, and a larger one that one run of the suite affords.
SIZES = {"small": dict(d=10, K=25, n=1000), "large": dict(d=20, K=50, n=10000)}
TINY = dict(d=3, K=2, n=4)
WRT = (0, 1, 2)  # alphas, means, icf


def inputs(d: int, K: int, n: int, seed: int = 0) -> tuple:
    """Random parameters and points (seeded), gamma 1, m 0 as in ADBench's files."""
    rng = np.random.default_rng(seed)
    alphas = rng.standard_normal(K)
    means = rng.uniform(0.0, 1.0, (K, d))
    icf = rng.uniform(0.0, 1.0, (K, d * (d + 1) // 2)) * 0.5
    x = rng.uniform(0.0, 1.0, (n, d))
    return alphas, means, icf, x, np.float64(1.0), np.float64(0.0)


def lower_positions(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the strictly lower triangle in ``icf``'s order
    (column-major), so that ``icf[:, d + j]`` is ``L[rows[j], cols[j]]``."""
    pairs = [(r, c) for c in range(d) for r in range(c + 1, d)]
    return np.array([r for r, _ in pairs], dtype=np.int64), np.array([c for _, c in pairs], dtype=np.int64)


def constant(n: int, d: int, K: int, gamma: float, m: float) -> float:
    """The parameter-free terms: the Gaussians' normalisation and the
    Wishart prior's, K C(γ, m, d)."""
    dof = d + m + 1
    log_gamma_distribution = 0.25 * d * (d - 1) * math.log(math.pi) + sum(math.lgamma(0.5 * dof + 0.5 * (1 - j)) for j in range(1, d + 1))
    C = dof * d * (math.log(gamma) - 0.5 * math.log(2)) - log_gamma_distribution
    return -n * d * 0.5 * math.log(2 * math.pi) - K * C


def reference(alphas, means, icf, x, gamma, m) -> float:
    """The oracle: ADBench's formula in numpy, with dense Q_k."""
    (n, d), K = x.shape, len(alphas)
    rows, cols = lower_positions(d)
    Q = np.zeros((K, d, d))
    Q[:, rows, cols] = icf[:, d:]
    Q[:, np.arange(d), np.arange(d)] = np.exp(icf[:, :d])
    centred = x[:, None, :] - means[None, :, :]
    scaled = np.einsum("kij,nkj->nki", Q, centred)
    inner = alphas + icf[:, :d].sum(1) - 0.5 * (scaled**2).sum(2)
    peak = inner.max(1)
    likelihood = np.sum(peak + np.log(np.exp(inner - peak[:, None]).sum(1)))
    mixture = n * (alphas.max() + np.log(np.exp(alphas - alphas.max()).sum()))
    prior = np.sum(0.5 * gamma**2 * (np.exp(2 * icf[:, :d]).sum(1) + (icf[:, d:] ** 2).sum(1)) - m * icf[:, :d].sum(1))
    return constant(n, d, K, gamma, m) + likelihood - mixture + prior


def objective(alphas, means, icf, x, gamma, m, diagonal, lower_index, lower_mask, offset):
    """Ours. The packed ``icf`` is read through index tables built from d
    (``diagonal`` = 0..d-1, and for each (r, c) of the dense L its position in
    ``icf`` and a 0/1 mask), since traced arrays have no slices; the gradient
    of those reads is a scatter-add into ``icf``."""
    log_diagonals = soac.map(lambda row: soac.map(lambda j: row[j], diagonal), icf)
    Ls = soac.map(
        lambda row: soac.map(lambda index, mask: soac.map(lambda j, keep: keep * row[j], index, mask), lower_index, lower_mask), icf
    )
    Qdiags = soac.math.exp(log_diagonals)
    sum_qs = snp.sum(log_diagonals, axis=1)

    def point(xi):
        def component(alpha, sum_q, mean, qdiag, L):
            centred = xi - mean
            scaled = qdiag * centred + L @ centred
            return alpha + sum_q - 0.5 * snp.sum(scaled * scaled)

        return snp.logsumexp(soac.map(component, alphas, sum_qs, means, Qdiags, Ls))

    n = snp.size(x, 0)
    prior = snp.sum(0.5 * gamma * gamma * (snp.sum(Qdiags * Qdiags, axis=1) + snp.sum(snp.sum(Ls * Ls, axis=2), axis=1)) - m * sum_qs)
    return offset + snp.sum(soac.map(point, x)) - n * snp.logsumexp(alphas) + prior


def soac_version(alphas, means, icf, x, gamma, m) -> tuple:
    """Ours: ``objective`` and its arguments (the inputs, then the index tables
    and the constant it reads)."""
    (n, d), K = x.shape, len(alphas)
    rows, cols = lower_positions(d)
    lower_index = np.zeros((d, d), dtype=np.int64)
    lower_index[rows, cols] = d + np.arange(len(rows))
    lower_mask = (lower_index > 0).astype(np.float64)
    extras = (np.arange(d, dtype=np.int64), lower_index, lower_mask, np.float64(constant(n, d, K, gamma, m)))
    return objective, (alphas, means, icf, x, gamma, m, *extras)


def jax_version(alphas, means, icf, x, gamma, m) -> tuple:
    """ADBench's JAX formulation (dense L_k, einsum); returns (f, args)."""
    jax, jnp = jax_numpy()
    from jax.scipy.special import logsumexp

    (n, d), K = x.shape, len(alphas)
    rows, cols = lower_positions(d)

    def f(alphas, means, icf, x, gamma, m, offset):
        Qdiags = jnp.exp(icf[:, :d])
        sum_qs = jnp.sum(icf[:, :d], axis=1)
        Ls = jnp.zeros((K, d, d)).at[:, rows, cols].set(icf[:, d:])
        centred = x[:, None, :] - means[None]
        scaled = Qdiags[None] * centred + jnp.einsum("kij,nkj->nki", Ls, centred)
        inner = alphas + sum_qs - 0.5 * jnp.sum(scaled**2, axis=2)
        prior = jnp.sum(0.5 * gamma**2 * (jnp.sum(Qdiags**2, axis=1) + jnp.sum(icf[:, d:] ** 2, axis=1)) - m * sum_qs)
        return offset + jnp.sum(logsumexp(inner, axis=1)) - n * logsumexp(alphas) + prior

    return f, (alphas, means, icf, x, gamma, m, constant(n, d, K, gamma, m))


def torch_version(alphas, means, icf, x, gamma, m) -> tuple:
    """ADBench's PyTorch formulation (dense L_k); returns (f, tensor args)."""
    torch = torch_module()
    (n, d), K = x.shape, len(alphas)
    rows, cols = (torch.as_tensor(v) for v in lower_positions(d))

    def f(alphas, means, icf, x, gamma, m, offset):
        Qdiags = torch.exp(icf[:, :d])
        sum_qs = torch.sum(icf[:, :d], dim=1)
        Ls = torch.zeros((K, d, d)).index_put((torch.arange(K)[:, None], rows[None], cols[None]), icf[:, d:])
        centred = x[:, None, :] - means[None]
        scaled = Qdiags[None] * centred + torch.einsum("kij,nkj->nki", Ls, centred)
        inner = alphas + sum_qs - 0.5 * torch.sum(scaled**2, dim=2)
        prior = torch.sum(0.5 * gamma**2 * (torch.sum(Qdiags**2, dim=1) + torch.sum(icf[:, d:] ** 2, dim=1)) - m * sum_qs)
        return offset + torch.sum(torch.logsumexp(inner, dim=1)) - n * torch.logsumexp(alphas, dim=0) + prior

    return f, to_torch((alphas, means, icf, x, gamma, m, constant(n, d, K, gamma, m)))
