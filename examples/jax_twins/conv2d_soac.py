"""A 'valid' 2-D convolution of a batch of images by a small kernel, written
as a sum of shifted slices, then a ReLU and a mean-square loss; the gradient
with respect to the kernel and the images."""

import numpy as np
import soac.numpy as jnp
from soac import grad, jit

ARGS = ("kernel", "images")


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    return {"kernel": rng.standard_normal((3, 3)), "images": rng.standard_normal((n, 12, 12))}


def conv2d(kernel, images):
    kh, kw = kernel.shape
    height, width = images.shape[1] - kh + 1, images.shape[2] - kw + 1
    out = jnp.zeros((images.shape[0], height, width))
    for i in range(kh):
        for j in range(kw):
            out = out + kernel[i, j] * images[:, i:i + height, j:j + width]
    return out


def loss(kernel, images):
    return jnp.mean(jnp.maximum(conv2d(kernel, images), 0.0) ** 2)


primal = jit(loss)
gradient = jit(grad(loss, argnums=(0, 1)))


def run(inputs):
    args = [inputs[name] for name in ARGS]
    return {"value": primal(*args), "grad": gradient(*args), "feature_maps": jit(conv2d)(*args)}
