"""Data-parallel training with soac gradients and torch.distributed.

soac has no distribution layer of its own: each process computes the
gradient of its shard of the data with soac (compiled for the CPU), and
torch.distributed (the gloo backend) averages the gradients across
processes. With equal shards, the average of the shard gradients is the
full-batch gradient, so every process follows the same parameters as one
process training on all the data: the script checks that at the end.

    python examples/distributed_training.py          # 2 processes on this machine
"""

from __future__ import annotations

import os
import sys

import numpy as np

import soac
import soac.numpy as jnp

STEPS, LEARNING_RATE, WORLD = 20, 0.5, 2


def loss(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((hidden @ params["w2"] - y) ** 2)


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 4))
    y = np.sin(x.sum(axis=1))
    params = {"w1": rng.standard_normal((4, 8)) * 0.5, "b1": np.zeros(8), "w2": rng.standard_normal(8) * 0.5}
    return x, y, params


def sgd(params, gradients):
    return soac.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, gradients)


def worker(rank: int, world: int, port: str, results) -> None:
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    soac.set_num_threads(1)
    x, y, params = data()
    shard = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
    gradient = soac.jit(soac.value_and_grad(loss))
    for _ in range(STEPS):
        value, gradients = gradient(params, x[shard], y[shard])
        for name in sorted(gradients):  # the average over processes, in place
            tensor = torch.from_numpy(np.ascontiguousarray(gradients[name]))
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
            gradients[name] = tensor.numpy() / world
        params = sgd(params, gradients)
    results[rank] = {name: value.tolist() for name, value in params.items()}
    dist.destroy_process_group()


def main() -> int:
    import torch.multiprocessing as mp

    port = str(29500 + os.getpid() % 1000)
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(worker, args=(WORLD, port, results), nprocs=WORLD, join=True)
        trained = [{k: np.array(v) for k, v in results[rank].items()} for rank in range(WORLD)]
    x, y, params = data()
    full_batch = soac.jit(soac.grad(loss))
    for _ in range(STEPS):
        params = sgd(params, full_batch(params, x, y))
    same = all(np.allclose(trained[r][k], trained[0][k], rtol=0, atol=0) for r in range(WORLD) for k in params)
    matches = all(np.allclose(trained[0][k], params[k], rtol=1e-10, atol=1e-12) for k in params)
    print(f"{WORLD} processes, {STEPS} steps: loss {soac.jit(loss)(trained[0], x, y):.6f} "
          f"(from {soac.jit(loss)(data()[2], x, y):.6f}); processes agree: {same}; "
          f"equal to full-batch training in one process: {matches}")
    return 0 if same and matches else 1


if __name__ == "__main__":
    sys.exit(main())
