"""Data-parallel training: every rank holds the same parameters, computes the gradient of the
loss over its shard of the step's global batch, the gradients are averaged over the ranks (one
packed all-reduce per dtype per bucket) and every rank takes the same optimizer step.

What overlaps what, exactly: cpsgrad's gradient call returns every adjoint at once (the backward
is the return path of the continuations and has no hook that fires when one parameter's adjoint
is final), so no communication overlaps the backward itself. What does overlap: the buckets'
non-blocking reductions are all started, in reverse order of the leaves, before any is waited
on, so packing the later buckets overlaps the first ones' communication, and each bucket's
parameters are clipped and updated as soon as its reduction completes, while the later buckets
are still in flight. With `clip_norm` (a norm over every gradient) the updates wait for all.
"""

from __future__ import annotations

import copy
import time

import numpy as np

from cpsgrad import optim
from cpsgrad.distributed import buffers
from cpsgrad.distributed.collectives import broadcast, reduce_arrays
from cpsgrad.distributed.comm import world
from cpsgrad.pytree import leaves, leaves_like


class DataParallel:
    """`loss(params, *batch) -> the mean loss over batch's samples`, differentiated with respect
    to `params` (any tree of float arrays) by `cpsgrad.value_and_grad`; `optimizer` a
    `cpsgrad.optim` optimizer over the same `params`.

    >>> trainer = DataParallel(loss, params, optim.Adam(params, lr=1e-3))   # doctest: +SKIP
    >>> part = shard_range(len(X))                                          # doctest: +SKIP
    >>> trainer.step(X[part.start:part.stop], y[part.start:part.stop], count=len(part))  # doctest: +SKIP

    The parameters are broadcast from rank 0 when the trainer is made (`broadcast_params`), so
    ranks that initialised them differently start the same. `bucket_bytes` (None: one bucket)
    and `timeout` are `all_reduce_mean`'s; `clip_value` clips each reduced gradient to
    [-clip_value, clip_value] before the update (min-char-rnn's clipping), `clip_norm` scales
    them to a global norm of at most `clip_norm`.
    """

    def __init__(self, loss, params, optimizer, *, comm=None, bucket_bytes: int | None = None,
                 clip_value: float | None = None, clip_norm: float | None = None,
                 broadcast_params: bool = True, timeout: float | None = None):
        import cpsgrad

        self.comm = comm or world()
        self.params = params
        self.optimizer = optimizer
        self.bucket_bytes = bucket_bytes
        self.clip_value = clip_value
        self.clip_norm = clip_norm
        self.timeout = timeout
        self._value_and_grad = cpsgrad.value_and_grad(loss)
        self._params = buffers.array_leaves(params, "params")
        own = getattr(optimizer, "_leaves", None)
        same = own is not None and len(own) == len(self._params)
        if not same or any(a is not b for a, b in zip(own, self._params, strict=True)):
            raise ValueError("the optimizer must update these params (made as optim.X(params, ...) over the same "
                             "arrays): the trainer updates each bucket's parameters through it")
        self.timing = {"gradients": 0.0, "reduce_and_update": 0.0}
        if broadcast_params:
            broadcast(params, 0, comm=self.comm, timeout=timeout)

    def _local(self, batch, count):
        start = time.perf_counter()
        if count:
            loss, grads = self._value_and_grad(self.params, *batch)
        else:  # an empty shard: nothing to differentiate, a zero contribution
            loss, grads = 0.0, copy.deepcopy(self.params)
            for leaf in leaves(grads):
                leaf[...] = 0
        self.timing["gradients"] = time.perf_counter() - start
        return float(loss), grads, buffers.array_leaves(leaves_like(self.params, grads), "grads")

    def gradients(self, *batch, count: int):
        """The loss and the gradients over every rank's batch (each rank passing its own
        `count` samples), the gradients in the parameters' structure; no update."""
        loss, grads, arrays = self._local(batch, count)
        start = time.perf_counter()
        _, (loss,) = reduce_arrays(arrays, count=count, scalars=(loss,), comm=self.comm,
                                   bucket_bytes=self.bucket_bytes, timeout=self.timeout, what="gradients")
        self.timing["reduce_and_update"] = time.perf_counter() - start
        return loss, grads

    def step(self, *batch, count: int) -> float:
        """One step: this rank's `count` samples' gradients, averaged with every rank's, then the
        optimizer's update of each bucket as its reduction completes. Returns the loss over
        every rank's samples (the same on every rank)."""
        loss, _, arrays = self._local(batch, count)
        start = time.perf_counter()
        optimizer = self.optimizer
        lr = optimizer.current_lr()
        optimizer.steps += 1

        def update(indices):
            for index in indices:
                gradient = arrays[index]
                if self.clip_value is not None:
                    np.clip(gradient, -self.clip_value, self.clip_value, out=gradient)
                param = self._params[index]
                optimizer._update(param, np.broadcast_to(gradient, param.shape), optimizer.state[index], lr)

        _, (loss,) = reduce_arrays(arrays, count=count, scalars=(loss,), comm=self.comm,
                                   bucket_bytes=self.bucket_bytes, timeout=self.timeout, what="step",
                                   on_ready=None if self.clip_norm is not None else update)
        if self.clip_norm is not None:
            optim.clip_by_global_norm(arrays, self.clip_norm)
            update(range(len(arrays)))
        self.timing["reduce_and_update"] = time.perf_counter() - start
        return loss
