"""Does compiling a surrogate's target path pay inside an acquisition optimiser? (issue 47 item 2)

The target path of a conditioned ``cmanp-bo`` (its decoder reading the cached memory, 4 views
x 10 targets: what one L-BFGS-B step of a 10-restart ``optimize_acqf`` asks of the network)
is run eagerly, through ``torch.compile(dynamic=True)`` and through ``torch.jit.trace``, on
one torch thread. Printed: compile seconds (the first call, forward and backward), the cost
of a new input shape and of the first call without gradients (each compiles again), seconds
per forward + backward (fastest round of 10 calls, over 20 rounds, eager and compiled
alternating) and the largest difference of the input gradient from eager.

    python experiments/probes/probe_compile_target_path.py [--skip-compile]
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch


def rounds(fn, x: torch.Tensor, n_rounds: int = 20, per: int = 10) -> tuple[float, torch.Tensor]:
    """Fastest round's mean seconds of ``fn`` (forward + input gradient) and the last gradient."""
    best = float("inf")
    for _ in range(n_rounds):
        t0 = time.perf_counter()
        for _ in range(per):
            xx = x.clone().requires_grad_(True)
            loc, scale = fn(xx)
            (grad,) = torch.autograd.grad(loc.sum() + scale.sum(), xx)
        best = min(best, (time.perf_counter() - t0) / per)
    return best, grad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-compile", action="store_true", help="torch.jit.trace only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    from npbandit.models import NPModel
    from npbandit.surrogates.layers import DecoderMemory

    g = torch.Generator().manual_seed(0)
    X = torch.rand(100, 6, generator=g, dtype=torch.float64)
    Y = (-(X - 0.35).pow(2).sum(-1)).unsqueeze(-1)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    surrogate, state = model.surrogate, model._state
    x = torch.rand(4, 10, 6, generator=g)
    memory = surrogate._decoder_memory(state, x)
    flat = [t for kv in (*memory.latents, *memory.points) for t in kv]
    layers = len(memory.latents)

    def eager(xt: torch.Tensor, *tensors: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pairs = [(tensors[2 * i], tensors[2 * i + 1]) for i in range(2 * layers)]
        dist = surrogate.decoder(xt, DecoderMemory(tuple(pairs[:layers]), tuple(pairs[layers:])))
        return dist.loc, dist.scale

    base, base_grad = rounds(lambda xx: eager(xx, *flat), x)
    print(f"eager: {1e3 * base:.2f} ms per forward + backward")
    t0 = time.perf_counter()
    traced = torch.jit.trace(eager, (x.clone().requires_grad_(True), *flat), check_trace=False)
    print(f"torch.jit.trace: {time.perf_counter() - t0:.2f} s to trace")

    def against_eager(label, fn):
        for _ in range(2):
            e, _ = rounds(lambda xx: eager(xx, *flat), x)
            t, grad = rounds(lambda xx: fn(xx, *flat), x)
            print(f"  eager {1e3 * e:.2f} ms, {label} {1e3 * t:.2f} ms ({t / e:.2f}x); gradient differs from eager "
                  f"by up to {(grad - base_grad).abs().max().item():.1e}")

    against_eager("traced", traced)
    if args.skip_compile:
        return
    compiled = torch.compile(eager, dynamic=True)
    t0, c0 = time.perf_counter(), time.process_time()
    loc, scale = compiled(x.clone().requires_grad_(True), *flat)
    (loc.sum() + scale.sum()).backward()
    print(f"torch.compile: first call {time.perf_counter() - t0:.1f} s ({time.process_time() - c0:.1f} s CPU)")
    against_eager("compiled", compiled)
    t0 = time.perf_counter()
    compiled(torch.rand(4, 512, 6).requires_grad_(True), *flat)
    print(f"  a new shape (4 x 512 targets): {time.perf_counter() - t0:.1f} s")
    with torch.no_grad():
        t0 = time.perf_counter()
        compiled(torch.rand(4, 300, 6), *flat)
        print(f"  the first call without gradients: {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
