"""ADBench BA: bundle adjustment. The objective is the vector of residuals,
each observation's reprojection error (2 values) and each weight's error
1 - w²; we differentiate its sum of squares, ½|r|² (one vector-Jacobian
product with r as the cotangent), with respect to the cameras, the points and
the weights. ADBench itself times the sparse Jacobian, which costs more passes.

Inputs (ADBench's): ``cams`` (n, 11): Rodrigues rotation (3), centre (3),
focal length, principal point (2), radial distortion (2); ``X`` (m, 3);
``w`` (p); ``obs`` (p, 2) observed projections; ``camera``, ``point`` (p)
the camera and point of each observation.

    r_i = w_i (f · distort(κ, p[:2] / p[2]) + x0 - obs_i),  p = R(rot) (X_j - C),
    distort(κ, u) = u (1 + κ0 |u|² + κ1 |u|⁴),   r'_i = 1 - w_i²
"""

from __future__ import annotations

import numpy as np
from peers import jax_numpy, to_torch, torch_module

import soac
import soac.numpy as snp

NAME = "BA"
# Camera, point and observation counts of ADBench's ba1 and ba4 files.
SIZES = {"small": dict(n=49, m=7776, p=31843), "large": dict(n=372, m=47423, p=204472)}
TINY = dict(n=2, m=3, p=4)
WRT = (0, 1, 2)  # cams, X, w


def inputs(n: int, m: int, p: int, seed: int = 0) -> tuple:
    """Seeded cameras about 5 units in front of points near the origin, so
    that every point projects; random observations and weights."""
    rng = np.random.default_rng(seed)
    cams = np.concatenate([
        rng.normal(0.0, 0.3, (n, 3)),                        # rotation
        rng.normal(0.0, 0.2, (n, 3)) + [0.0, 0.0, -5.0],     # centre
        rng.uniform(0.8, 1.2, (n, 1)),                       # focal length
        rng.normal(0.0, 0.01, (n, 2)),                       # principal point
        rng.normal(0.0, 0.01, (n, 2)),                       # radial distortion
    ], axis=1)
    X = rng.normal(0.0, 0.5, (m, 3))
    w = rng.uniform(0.5, 1.5, p)
    obs = rng.normal(0.0, 0.1, (p, 2))
    # Every camera and every point is observed at least once, as in ADBench's files.
    camera = np.concatenate([np.arange(n), rng.integers(0, n, p - n)])
    point = np.concatenate([np.arange(m), rng.integers(0, m, p - m)])
    return cams, X, w, obs, camera.astype(np.int64), point.astype(np.int64)


def reference(cams, X, w, obs, camera, point) -> float:
    """The oracle: ½|r|², vectorised numpy (the data has no zero rotation)."""
    cam, Y = cams[camera], X[point] - cams[camera, 3:6]
    rot = cam[:, 0:3]
    theta = np.sqrt(np.sum(rot**2, axis=1, keepdims=True))
    axis = rot / theta
    cos, sin = np.cos(theta), np.sin(theta)
    rotated = Y * cos + np.cross(axis, Y) * sin + axis * np.sum(axis * Y, axis=1, keepdims=True) * (1 - cos)
    u = rotated[:, :2] / rotated[:, 2:3]
    rsq = np.sum(u**2, axis=1, keepdims=True)
    distorted = u * (1 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq**2)
    residuals = (distorted * cam[:, 6:7] + cam[:, 7:9] - obs) * w[:, None]
    return 0.5 * (np.sum(residuals**2) + np.sum((1 - w**2) ** 2))


def objective(cams, X, w, obs, camera, point):
    """Ours: one map over the observations in scalars; the camera and point
    of each are read by index, so their gradients are scatter-adds."""

    def residual(k, j, wi, seen):
        cam, Xj = cams[k], X[j]
        y = [Xj[a] - cam[3 + a] for a in range(3)]
        rot = [cam[0], cam[1], cam[2]]
        x, yy, z = soac.cond(rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2] != 0.0, _rodrigues, _first_order, *rot, *y)
        u, v = x / z, yy / z
        rsq = u * u + v * v
        scale = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
        ex = (u * scale * cam[6] + cam[7] - seen[0]) * wi
        ey = (v * scale * cam[6] + cam[8] - seen[1]) * wi
        weight_error = 1.0 - wi * wi
        return ex * ex + ey * ey + weight_error * weight_error

    return 0.5 * snp.sum(soac.map(residual, camera, point, w, obs))


def _rodrigues(r0, r1, r2, y0, y1, y2):
    """R(r) y for a rotation of angle |r| about r / |r|."""
    theta = soac.math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    cos, sin = soac.math.cos(theta), soac.math.sin(theta)
    a0, a1, a2 = r0 / theta, r1 / theta, r2 / theta
    along = (a0 * y0 + a1 * y1 + a2 * y2) * (1.0 - cos)
    return (
        y0 * cos + (a1 * y2 - a2 * y1) * sin + a0 * along,
        y1 * cos + (a2 * y0 - a0 * y2) * sin + a1 * along,
        y2 * cos + (a0 * y1 - a1 * y0) * sin + a2 * along,
    )


def _first_order(r0, r1, r2, y0, y1, y2):
    """ADBench's branch for r = 0: y + r × y."""
    return y0 + (r1 * y2 - r2 * y1), y1 + (r2 * y0 - r0 * y2), y2 + (r0 * y1 - r1 * y0)


def soac_version(*inputs) -> tuple:
    return objective, inputs


def jax_version(cams, X, w, obs, camera, point) -> tuple:
    """ADBench's JAX formulation: vmap of the per-observation error."""
    jax, jnp = jax_numpy()

    def error(cam, Xj, wi, seen):
        Y = Xj - cam[3:6]
        sq = jnp.sum(cam[0:3] ** 2)
        theta = jnp.sqrt(jnp.where(sq == 0, 1.0, sq))  # a safe square root for the r = 0 branch
        axis = cam[0:3] / theta
        rodrigues = Y * jnp.cos(theta) + jnp.cross(axis, Y) * jnp.sin(theta) + axis * jnp.dot(axis, Y) * (1 - jnp.cos(theta))
        rotated = jnp.where(sq == 0, Y + jnp.cross(cam[0:3], Y), rodrigues)
        u = rotated[:2] / rotated[2]
        rsq = jnp.sum(u**2)
        residual = (u * (1 + cam[9] * rsq + cam[10] * rsq**2) * cam[6] + cam[7:9] - seen) * wi
        return jnp.sum(residual**2) + (1 - wi**2) ** 2

    def f(cams, X, w, obs, camera, point):
        return 0.5 * jnp.sum(jax.vmap(error)(cams[camera], X[point], w, obs))

    return f, (cams, X, w, obs, camera, point)


def torch_version(cams, X, w, obs, camera, point) -> tuple:
    """The same, batched over the observations in PyTorch."""
    torch = torch_module()

    def f(cams, X, w, obs, camera, point):
        cam = cams[camera]
        Y = X[point] - cam[:, 3:6]
        theta = torch.sqrt(torch.sum(cam[:, 0:3] ** 2, dim=1, keepdim=True))
        axis = cam[:, 0:3] / theta
        rotated = Y * torch.cos(theta) + torch.linalg.cross(axis, Y) * torch.sin(theta) + axis * torch.sum(axis * Y, dim=1, keepdim=True) * (1 - torch.cos(theta))
        u = rotated[:, :2] / rotated[:, 2:3]
        rsq = torch.sum(u**2, dim=1, keepdim=True)
        residuals = (u * (1 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq**2) * cam[:, 6:7] + cam[:, 7:9] - obs) * w[:, None]
        return 0.5 * (torch.sum(residuals**2) + torch.sum((1 - w**2) ** 2))

    return f, to_torch((cams, X, w, obs, camera, point))
