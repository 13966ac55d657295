import random
import signal

import numpy as np
import pytest
import torch

from npbandit.surrogates import available_models, build


def pytest_configure(config):
    # The suite tests what Ctrl-C does, as a terminal delivers it. A shell that starts a job in
    # the background (`make test &`, some CI runners) starts it with SIGINT ignored, which Python
    # then leaves ignored, and so does npbandit (an ignored SIGINT is the caller's choice): give
    # the suite Python's usual Ctrl-C handling whatever started it (children it starts inherit it).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # BoTorch (0.18) compiles a C++ kernel for its log-EHVI acquisitions on their first use
    # (torch.utils.cpp_extension, -O3 -march=native): 30-45 s of one core, paid once per clean
    # environment, so by every CI run. The tests check NPModel and the Ax door against those
    # acquisitions' arithmetic, which BoTorch's pure-Python path (what it runs where no compiler
    # is found) computes alike: the suite takes that path. Users' runs are untouched.
    try:
        from botorch.acquisition.multi_objective import logei
    except ImportError:  # another BoTorch: nothing to skip
        return
    if hasattr(logei, "_load_attempted") and getattr(logei, "_C", None) is None:
        logei._load_attempted = True


@pytest.fixture(autouse=True)
def _global_generators_seeded():
    # Code that draws from the global generators (BoTorch's raw samples and restarts, numpy's
    # legacy functions) sees the same state in every test whichever tests ran before it in
    # the process, so a test behaves alike serially, under pytest-xdist and alone.
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)


@pytest.fixture(autouse=True)
def _torch_thread_count_kept():
    # A test that leaves torch's intra-op thread count changed runs every later test of its process
    # (its pytest-xdist worker) at that count, and more than one thread on a busy machine makes torch's
    # many small operations many times slower (npbandit/threads.py). npbandit changes the count only
    # inside torch_threads blocks, which give it back; a test that sets it must give it back too. Put
    # back here, so that a leak fails the test that made it and no other.
    before = torch.get_num_threads()
    yield
    after = torch.get_num_threads()
    if after != before:
        torch.set_num_threads(before)
        pytest.fail(f"the test left torch's intra-op thread count (torch.get_num_threads()) at {after}, "
                    f"not the {before} it started with: give it back (a fixture, monkeypatch or "
                    f"npbandit.threads.torch_threads)", pytrace=False)


@pytest.fixture(autouse=True)
def _stop_signal_handlers_kept():
    # Which tests share a pytest-xdist worker depends on the machine's timing (--dist loadfile hands
    # files to whichever worker is free), so a SIGINT / SIGTERM handler a test left installed would
    # reach a different test on each machine; the training tests wait for the trainer's handler
    # to replace the default one, and a leftover would send their SIGTERM early. Put back here, so
    # that a leak fails the test that made it and no other.
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    leaked = {sig: handler for sig, handler in before.items() if signal.getsignal(sig) is not handler}
    for sig in leaked:
        signal.signal(sig, before[sig])
    if leaked:
        pytest.fail(f"the test left a handler of {', '.join(signal.Signals(s).name for s in leaked)} installed: "
                    f"give the previous one back (npbandit.loop.stop_on_signals, a fixture or try / finally)",
                    pytrace=False)


@pytest.fixture(params=available_models())
def model_name(request) -> str:
    return request.param


def tiny_model(name: str, x_dim: int = 2, y_dim: int = 1, seed: int = 0, **config):
    """A tiny float64 model: exactness tests use float64 so rounding stays far below tolerances."""
    torch.manual_seed(seed)
    return build(name, x_dim, y_dim, size="tiny", **config).double().eval()


def random_set(batch: int, n: int, x_dim: int = 2, y_dim: int = 1, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(batch, n, x_dim, generator=g, dtype=torch.float64) * 4 - 2
    y = torch.randn(batch, n, y_dim, generator=g, dtype=torch.float64)
    return x, y
