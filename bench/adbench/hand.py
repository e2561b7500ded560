"""ADBench HAND (simple variant): fitting a skinned hand model to points.
The objective is the vector of residuals ``points - vertices[correspondences]``;
we differentiate its sum of squares, ½|r|², with respect to the 26 pose
parameters (one vector-Jacobian product with r as the cotangent; ADBench
times the 3·npts × 26 Jacobian).

The model has ADBench's structure: 22 bones (a root, a palm, five fingers of
four bones), each bone's rest transform relative to its parent and the
inverse of its rest transform relative to the root, rest vertices and
skinning weights. ADBench's hand mesh is a data file that is not available
offline, so the model here is a seeded synthetic one with that structure
(544 vertices as ADBench's, each bound to two bones). Vertices and points
are stored one per row.

    pose (25 × 3) from θ: global rotation, scale (ones), translation, then
        Euler angles of bones 2.. (2 for a finger's first bone, 1 for the next
        two, none for its tip);
    relative_b = rest_b · rot(pose[b + 3]),  absolute_b = absolute_parent(b) · relative_b,
    vertex_v = Σ_b weight_vb · absolute_b · inverse_rest_b · rest_vertex_v,
    position_v = R(θ[0:3]) vertex_v + θ[3:6].
"""

from __future__ import annotations

import numpy as np
from peers import jax_numpy, to_torch, torch_module

import soac
import soac.numpy as snp

NAME = "HAND"
# ADBench's hand1_t26_c100 and hand12_t26_c100000 correspondence counts.
SIZES = {"small": dict(npts=100), "large": dict(npts=100_000)}
TINY = dict(npts=5, nverts=8)
WRT = (0,)  # theta
PARENTS = np.array([-1, 0] + [p for f in range(5) for p in (1, 2 + 4 * f, 3 + 4 * f, 4 + 4 * f)], dtype=np.int64)


def pose_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each of the 25 × 3 pose parameters comes from: ``pose =
    mask · θ[index] + fill`` (ADBench's to_pose_params as a table)."""
    index, mask, fill = np.zeros((25, 3), np.int64), np.zeros((25, 3)), np.zeros((25, 3))
    fill[1] = 1.0  # the scale
    index[0], index[2] = [0, 1, 2], [3, 4, 5]
    mask[0] = mask[2] = 1.0
    row, parameter = 5, 6
    for _ in range(5):
        for bone in range(3):
            for column in range(2 if bone == 0 else 1):
                index[row, column], mask[row, column] = parameter, 1.0
                parameter += 1
            row += 1
        row += 1  # the fingertip has no parameters
    return index, mask, fill


def euler_rotation(xzy: np.ndarray) -> np.ndarray:
    """ADBench's euler_angles_to_rotation_matrix: Rz Ry Rx, angles stored x, z, y."""
    tx, tz, ty = xzy
    Rx = np.array([[1, 0, 0], [0, np.cos(tx), -np.sin(tx)], [0, np.sin(tx), np.cos(tx)]])
    Ry = np.array([[np.cos(ty), 0, np.sin(ty)], [0, 1, 0], [-np.sin(ty), 0, np.cos(ty)]])
    Rz = np.array([[np.cos(tz), -np.sin(tz), 0], [np.sin(tz), np.cos(tz), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def angle_axis_rotation(angle_axis: np.ndarray) -> np.ndarray:
    """ADBench's angle_axis_to_rotation_matrix (the identity below 1e-4)."""
    n = np.sqrt(np.sum(angle_axis**2))
    if n < 1e-4:
        return np.eye(3)
    x, y, z = angle_axis / n
    s, c = np.sin(n), np.cos(n)
    return np.array([
        [x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
        [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
        [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c],
    ])


def rest_model(nverts: int, rng: np.random.Generator) -> tuple:
    """Bones 1 unit long along y, bent a little; vertices near the bones."""
    rest = np.zeros((22, 4, 4))
    for b in range(22):
        rest[b, :3, :3] = euler_rotation(rng.normal(0.0, 0.2, 3))
        rest[b, :3, 3] = [0.0, 0.0 if b == 0 else 1.0, 0.0]
        rest[b, 3, 3] = 1.0
    absolute = np.zeros_like(rest)
    for b in range(22):
        absolute[b] = rest[b] if PARENTS[b] < 0 else absolute[PARENTS[b]] @ rest[b]
    inverse_rest = np.linalg.inv(absolute)
    bone = rng.integers(0, 22, nverts)
    vertices = np.concatenate([absolute[bone, :3, 3] + rng.normal(0.0, 0.3, (nverts, 3)), np.ones((nverts, 1))], axis=1)
    weights = np.zeros((nverts, 22))
    share = rng.uniform(0.5, 1.0, nverts)
    weights[np.arange(nverts), bone] = share
    weights[np.arange(nverts), np.maximum(PARENTS[bone], 0)] += 1.0 - share
    return rest, inverse_rest, vertices, weights


def reference_vertices(theta, rest, inverse_rest, vertices, weights) -> np.ndarray:
    """ADBench's get_skinned_vertex_positions with the global transform, in numpy."""
    index, mask, fill = pose_table()
    pose = mask * theta[index] + fill
    absolute = np.zeros_like(rest)
    for b in range(22):
        relative = rest[b].copy()
        relative[:, :3] = rest[b][:, :3] @ euler_rotation(pose[b + 3])
        absolute[b] = relative if PARENTS[b] < 0 else absolute[PARENTS[b]] @ relative
    transforms = absolute @ inverse_rest
    skinned = np.einsum("vb,brc,vc->vr", weights, transforms, vertices)[:, :3]
    R = angle_axis_rotation(pose[0]) * pose[1][None, :]
    return skinned @ R.T + pose[2]


def inputs(npts: int, nverts: int = 544, seed: int = 0) -> tuple:
    """A seeded model, and points: the model at a random pose plus noise."""
    rng = np.random.default_rng(seed)
    rest, inverse_rest, vertices, weights = rest_model(nverts, rng)
    correspondences = rng.integers(0, nverts, npts).astype(np.int64)
    posed = reference_vertices(rng.normal(0.0, 0.3, 26), rest, inverse_rest, vertices, weights)
    points = posed[correspondences] + rng.normal(0.0, 0.05, (npts, 3))
    theta = rng.normal(0.0, 0.3, 26)
    return theta, rest, inverse_rest, vertices, weights, correspondences, points


def reference(theta, rest, inverse_rest, vertices, weights, correspondences, points) -> float:
    """The oracle: ½ |points - vertices[correspondences]|²."""
    return 0.5 * float(np.sum((points - reference_vertices(theta, rest, inverse_rest, vertices, weights)[correspondences]) ** 2))


def objective(theta, rest, inverse_rest, vertices, weights, correspondences, points, parents, is_root, levels,
              pose_index, pose_mask, pose_fill):
    """Ours. Bone b's absolute transform needs its parent's: instead of a
    sequential walk, ``levels`` rounds (the tree's height) of
    absolute_b ← absolute_parent(b) · relative_b for all bones in parallel,
    which settles one more level of the tree per round."""
    pose = soac.map(lambda i, k, f: soac.map(lambda ij, kj, fj: kj * theta[ij] + fj, i, k, f), pose_index, pose_mask, pose_fill)
    relatives = soac.map(lambda b, r: r @ _euler_transform(pose[b + 3]), soac.iota(snp.size(rest, 0)), rest)

    def settle(_, absolute):
        return soac.map(lambda relative, parent, root: snp.where(root, relative, absolute[parent] @ relative), relatives, parents, is_root)

    absolute = soac.fori_loop(0, levels, settle, relatives)
    transforms = soac.map(lambda a, inverse: a @ inverse, absolute, inverse_rest)
    rotation = _angle_axis_rotation(pose[0][0], pose[0][1], pose[0][2]) * pose[1]
    translation = pose[2]

    def skin(w, vertex):
        blended = w @ soac.map(lambda transform: transform @ vertex, transforms)
        return rotation @ snp.array([blended[0], blended[1], blended[2]]) + translation

    positions = soac.map(skin, weights, vertices)
    errors = soac.map(lambda c, point: snp.sum((point - positions[c]) ** 2), correspondences, points)
    return 0.5 * snp.sum(errors)


def _euler_transform(xzy):
    """[[Rz Ry Rx, 0], [0, 1]] for angles stored x, z, y (the product written out)."""
    cx, sx = soac.math.cos(xzy[0]), soac.math.sin(xzy[0])
    cz, sz = soac.math.cos(xzy[1]), soac.math.sin(xzy[1])
    cy, sy = soac.math.cos(xzy[2]), soac.math.sin(xzy[2])
    return snp.array([
        [cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx, 0.0],
        [sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx, 0.0],
        [-sy, cy * sx, cy * cx, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])


def _angle_axis_rotation(a0, a1, a2):
    def rotation(a0, a1, a2):
        n = soac.math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        x, y, z, s, c = a0 / n, a1 / n, a2 / n, soac.math.sin(n), soac.math.cos(n)
        return snp.array([
            [x * x + (1.0 - x * x) * c, x * y * (1.0 - c) - z * s, x * z * (1.0 - c) + y * s],
            [x * y * (1.0 - c) + z * s, y * y + (1.0 - y * y) * c, y * z * (1.0 - c) - x * s],
            [x * z * (1.0 - c) - y * s, z * y * (1.0 - c) + x * s, z * z + (1.0 - z * z) * c],
        ])

    identity = lambda a0, a1, a2: snp.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # noqa: E731
    return soac.cond(a0 * a0 + a1 * a1 + a2 * a2 < 1e-8, identity, rotation, a0, a1, a2)


def tree_height(parents: np.ndarray) -> int:
    """The number of bones on the longest root-to-leaf path."""
    depth = np.zeros(len(parents), np.int64)
    for b, p in enumerate(parents):
        depth[b] = 0 if p < 0 else depth[p] + 1
    return int(depth.max()) + 1


def soac_version(*inputs) -> tuple:
    """Ours: ``objective`` and its arguments (the inputs, then the tree and pose tables)."""
    extras = (np.maximum(PARENTS, 0), PARENTS < 0, tree_height(PARENTS) - 1, *pose_table())
    return objective, (*inputs, *extras)


def jax_version(theta, rest, inverse_rest, vertices, weights, correspondences, points) -> tuple:
    """ADBench's JAX formulation: the bones unrolled in Python, einsum skinning."""
    jax, jnp = jax_numpy()
    index, mask, fill = pose_table()

    def euler(xzy):
        tx, tz, ty = xzy[0], xzy[1], xzy[2]
        Rx = jnp.array([[1, 0, 0], [0, jnp.cos(tx), -jnp.sin(tx)], [0, jnp.sin(tx), jnp.cos(tx)]])
        Ry = jnp.array([[jnp.cos(ty), 0, jnp.sin(ty)], [0, 1, 0], [-jnp.sin(ty), 0, jnp.cos(ty)]])
        Rz = jnp.array([[jnp.cos(tz), -jnp.sin(tz), 0], [jnp.sin(tz), jnp.cos(tz), 0], [0, 0, 1]])
        return Rz @ Ry @ Rx

    def angle_axis(a):
        sq = jnp.sum(a**2)
        n = jnp.sqrt(jnp.where(sq < 1e-8, 1.0, sq))
        x, y, z = a / n
        s, c = jnp.sin(n), jnp.cos(n)
        R = jnp.array([
            [x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
            [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
            [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c],
        ])
        return jnp.where(sq < 1e-8, jnp.eye(3), R)

    def f(theta, rest, inverse_rest, vertices, weights, correspondences, points):
        pose = mask * theta[index] + fill
        absolute = []
        for b in range(22):
            relative = rest[b].at[:, :3].set(rest[b][:, :3] @ euler(pose[b + 3]))
            absolute.append(relative if PARENTS[b] < 0 else absolute[PARENTS[b]] @ relative)
        transforms = jnp.stack(absolute) @ inverse_rest
        skinned = jnp.einsum("vb,brc,vc->vr", weights, transforms, vertices)[:, :3]
        positions = skinned @ (angle_axis(pose[0]) * pose[1][None, :]).T + pose[2]
        return 0.5 * jnp.sum((points - positions[correspondences]) ** 2)

    return f, (theta, rest, inverse_rest, vertices, weights, correspondences, points)


def torch_version(theta, rest, inverse_rest, vertices, weights, correspondences, points) -> tuple:
    """ADBench's PyTorch formulation: the bones in a Python loop."""
    torch = torch_module()
    index, mask, fill = (torch.as_tensor(t) for t in pose_table())

    def euler(xzy):
        tx, tz, ty = xzy[0], xzy[1], xzy[2]
        one, zero = torch.ones(()), torch.zeros(())
        Rx = torch.stack([torch.stack([one, zero, zero]), torch.stack([zero, tx.cos(), -tx.sin()]), torch.stack([zero, tx.sin(), tx.cos()])])
        Ry = torch.stack([torch.stack([ty.cos(), zero, ty.sin()]), torch.stack([zero, one, zero]), torch.stack([-ty.sin(), zero, ty.cos()])])
        Rz = torch.stack([torch.stack([tz.cos(), -tz.sin(), zero]), torch.stack([tz.sin(), tz.cos(), zero]), torch.stack([zero, zero, one])])
        return Rz @ Ry @ Rx

    def angle_axis(a):
        n = torch.sqrt(torch.sum(a**2))
        if n < 1e-4:
            return torch.eye(3)
        x, y, z = a / n
        s, c = torch.sin(n), torch.cos(n)
        return torch.stack([
            torch.stack([x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s]),
            torch.stack([x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s]),
            torch.stack([x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]),
        ])

    def f(theta, rest, inverse_rest, vertices, weights, correspondences, points):
        pose = mask * theta[index] + fill
        absolute = []
        for b in range(22):
            relative = torch.cat([rest[b][:, :3] @ euler(pose[b + 3]), rest[b][:, 3:]], dim=1)
            absolute.append(relative if PARENTS[b] < 0 else absolute[PARENTS[b]] @ relative)
        transforms = torch.stack(absolute) @ inverse_rest
        skinned = torch.einsum("vb,brc,vc->vr", weights, transforms, vertices)[:, :3]
        positions = skinned @ (angle_axis(pose[0]) * pose[1][None, :]).T + pose[2]
        return 0.5 * torch.sum((points - positions[correspondences]) ** 2)

    return f, to_torch((theta, rest, inverse_rest, vertices, weights, correspondences, points))
