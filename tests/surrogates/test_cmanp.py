"""CMANP's streaming invariants: exact updates, chunking, constant-size state."""

import dataclasses

import pytest
import torch
from conftest import random_set, tiny_model

from npbandit.surrogates import CMANPState, build
from npbandit.surrogates.attention import SoftmaxState, StreamingReader


def max_diff(a, b) -> float:
    return max((a.loc - b.loc).abs().max().item(), (a.scale - b.scale).abs().max().item())


@pytest.mark.parametrize("n_old,n_new", [(0, 30), (0, 1), (1, 1), (29, 1), (10, 20), (25, 5), (30, 0)])
def test_update_equals_condition_on_union(n_old, n_new):
    model = tiny_model("cmanp")
    x, y = random_set(3, n_old + n_new, seed=n_old)
    xt, _ = random_set(3, 9, seed=99)
    streamed = model.update(model.condition(x[:, :n_old], y[:, :n_old]), x[:, n_old:], y[:, n_old:])
    at_once = model.condition(x, y)
    assert streamed.num_points == at_once.num_points == n_old + n_new
    assert max_diff(model.predict(streamed, xt), model.predict(at_once, xt)) < 1e-6


def test_single_point_updates_equal_condition():
    model = tiny_model("cmanp")
    x, y = random_set(2, 40, seed=3)
    xt, _ = random_set(2, 7, seed=4)
    state = model.condition(x[:, :0], y[:, :0])
    for i in range(40):
        state = model.update(state, x[:, i:i + 1], y[:, i:i + 1])
    assert max_diff(model.predict(state, xt), model.predict(model.condition(x, y), xt)) < 1e-6


@pytest.mark.parametrize("chunk", [1, 7, 37])
def test_chunked_conditioning_equals_unchunked(chunk):
    model = tiny_model("cmanp")
    x, y = random_set(2, 37, seed=5)
    xt, _ = random_set(2, 6, seed=6)
    chunked = model.predict(model.condition(x, y, chunk_size=chunk), xt)
    unchunked = model.predict(model.condition(x, y, chunk_size=37), xt)
    assert max_diff(chunked, unchunked) < 1e-10


def test_chunking_does_not_change_the_config_path():
    # chunk_size from the config is used when no override is passed
    model = tiny_model("cmanp", chunk_size=4)
    x, y = random_set(1, 10, seed=7)
    xt, _ = random_set(1, 3, seed=8)
    chunked = model.predict(model.condition(x, y, chunk_size=10), xt)
    assert max_diff(model.predict(model.condition(x, y), xt), chunked) < 1e-10
    with pytest.raises(ValueError, match="chunk_size"):
        model.condition(x, y, chunk_size=0)


def state_tensors(obj):
    """Every tensor reachable from a state (dataclasses, tuples, lists)."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from state_tensors(getattr(obj, f.name))
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from state_tensors(item)


def test_state_holds_nothing_that_grows_with_n():
    model = tiny_model("cmanp")
    xt, _ = random_set(2, 3, seed=1)
    shapes = []
    for n in (5, 400):
        x, y = random_set(2, n, seed=n)
        state = model.condition(x, y)
        model.predict(state, xt)  # fills the latent cache too
        tensors = list(state_tensors(state))
        assert tensors, "the walker found no tensors; it is not looking at the state"
        assert all(n not in t.shape for t in tensors if n == 400)
        shapes.append(sorted(tuple(t.shape) for t in tensors))
    assert shapes[0] == shapes[1]


def test_state_keeps_no_raw_data():
    model = tiny_model("cmanp")
    x, y = random_set(1, 50, seed=2)
    state = model.condition(x, y)
    fields = {f.name for f in dataclasses.fields(CMANPState)}
    assert fields == {"data_state", "reader", "n_points", "n_batch", "grad_enabled", "latent_cache", "elite",
                      "memory_cache", "fused"}
    assert isinstance(state.data_state, SoftmaxState) and isinstance(state.reader, StreamingReader)
    assert state.elite is None  # the paper's CMANP (n_elite = 0) keeps no point at all


@pytest.mark.parametrize("n_elite", [0, 4])
def test_what_targets_read_is_projected_once_per_state(n_elite, monkeypatch):
    model = build("cmanp", 2, 1, size="small", n_elite=n_elite).double()
    x, y = random_set(2, 20, seed=11)
    xt, _ = random_set(2, 5, seed=12)
    state = model.condition(x, y)
    projections = []
    real = model.decoder.memory
    monkeypatch.setattr(model.decoder, "memory", lambda *a: projections.append(1) or real(*a))
    first = model.predict(state, xt)
    again = model.predict(state, xt + 0.1)
    assert len(projections) == 1, "the context's keys and values were projected again for new targets"
    points = None if state.elite is None else model.embed(state.elite)
    uncached = model.decoder(xt, real(model.latents(state), points))
    assert max_diff(first, uncached) == 0.0 and max_diff(again, first) > 0.0
    moved = model.update(state, x[:, :3] * 0.5, y[:, :3] + 1.0)
    assert max_diff(model.predict(moved, xt), first) > 1e-6 and len(projections) == 2


def _elite_model(k: int = 4):

    torch.manual_seed(0)
    plain = build("cmanp", 2, 1, size="small").double()
    elite = build("cmanp", 2, 1, size="small", n_elite=k).double()
    elite.initialise_from(plain)
    return plain, elite


def test_an_elite_memory_starts_as_the_cmanp_it_was_initialised_from():
    plain, elite = _elite_model()
    x, y = random_set(3, 12, seed=4)
    xt, _ = random_set(3, 5, seed=5)
    assert max_diff(plain.predict(plain.condition(x, y), xt), elite.predict(elite.condition(x, y), xt)) == 0.0
    with pytest.raises(ValueError, match="config"):  # another change than n_elite is refused
        build("cmanp", 2, 1, size="small", n_elite=4, n_latents=4).initialise_from(plain)
    with pytest.raises(ValueError, match="n_elite"):
        build("cmanp", 2, 1, size="small", n_elite=-1)


def test_an_elite_memory_of_another_size_starts_from_every_weight():
    _, elite = _elite_model(k=4)
    for block in elite.decoder.point_layers:  # as if trained, so a dropped reader would show
        torch.nn.init.normal_(block.attention.to_out.weight, std=0.2)
    larger = build("cmanp", 2, 1, size="small", n_elite=8).double()
    larger.initialise_from(elite)
    assert all(torch.equal(a, b) for a, b in zip(elite.state_dict().values(), larger.state_dict().values()))
    x, y = random_set(2, 4, seed=7)  # no more points than either memory holds: the same prediction
    xt, _ = random_set(2, 3, seed=8)
    assert max_diff(elite.predict(elite.condition(x, y), xt), larger.predict(larger.condition(x, y), xt)) == 0.0
    x, y = random_set(2, 12, seed=7)  # more: the larger memory reads more points
    assert max_diff(elite.predict(elite.condition(x, y), xt), larger.predict(larger.condition(x, y), xt)) > 1e-6
    with pytest.raises(ValueError, match="config"):  # an elite reader cannot be dropped
        build("cmanp", 2, 1, size="small").double().initialise_from(elite)


def test_contextual_elites_start_as_the_cmanp_they_were_initialised_from_and_then_read_the_latents():
    _, elite = _elite_model(k=4)
    for block in elite.decoder.point_layers:
        torch.nn.init.normal_(block.attention.to_out.weight, std=0.2)
    contextual = build("cmanp", 2, 1, size="small", n_elite=4, elite_context=True).double()
    contextual.initialise_from(elite)
    x, y = random_set(2, 12, seed=4)
    xt, _ = random_set(2, 5, seed=5)
    assert max_diff(elite.predict(elite.condition(x, y), xt),
                    contextual.predict(contextual.condition(x, y), xt)) == 0.0
    for block in contextual.decoder.point_context_layers:  # as if trained: the elites now carry the latents
        torch.nn.init.normal_(block.attention.to_out.weight, std=0.2)
    assert max_diff(elite.predict(elite.condition(x, y), xt),
                    contextual.predict(contextual.condition(x, y), xt)) > 1e-6
    with pytest.raises(ValueError, match="config"):  # contextual elites cannot be dropped
        build("cmanp", 2, 1, size="small", n_elite=4).double().initialise_from(contextual)
    with pytest.raises(ValueError, match="elite_context needs"):
        build("cmanp", 2, 1, size="small", elite_context=True)


def test_the_elite_memory_keeps_the_k_best_points_and_updates_exactly():
    _, elite = _elite_model(k=4)
    for block in elite.decoder.point_layers:  # as if trained: predictions now depend on the elite points
        torch.nn.init.normal_(block.attention.to_out.weight, std=0.2)
    x, y = random_set(2, 30, seed=6)
    y[:, 3] = y[:, 20] = y.max() + 1.0  # a tie at the top: the point seen first ranks first
    xt, _ = random_set(2, 7, seed=7)
    once = elite.condition(x, y)
    best = torch.sort(y[..., 0], dim=1, descending=True, stable=True).indices[:, :4]
    assert torch.equal(once.elite[..., 2], torch.gather(y[..., 0], 1, best))
    assert torch.equal(once.elite[:, 0, :2], x[:, 3]) and torch.equal(once.elite[:, 1, :2], x[:, 20])
    streamed = elite.condition(x[:, :1], y[:, :1])
    for i in range(1, 30):
        streamed = elite.update(streamed, x[:, i:i + 1], y[:, i:i + 1])
    assert torch.equal(streamed.elite, once.elite) and streamed.elite.shape == (2, 4, 3)
    assert max_diff(elite.predict(streamed, xt), elite.predict(once, xt)) < 1e-5
    with torch.no_grad():
        moved = elite.predict(once, xt).mean
        without = elite.decoder(xt, elite.decoder.memory(elite.latents(once))).mean
    assert (moved - without).abs().max() > 1e-3, "the elite points do not reach the prediction"


def test_update_leaves_old_state_usable():
    model = tiny_model("cmanp")
    x, y = random_set(2, 20, seed=9)
    xt, _ = random_set(2, 4, seed=10)
    old = model.condition(x[:, :10], y[:, :10])
    before = model.predict(old, xt)
    model.update(old, x[:, 10:], y[:, 10:])
    after = model.predict(old, xt)
    assert max_diff(before, after) == 0.0
    assert old.num_points == 10


def test_update_is_exact_in_float32_too():
    torch.manual_seed(0)
    from npbandit.surrogates import build

    model = build("cmanp", 1, 1, size="small").eval()
    x = torch.rand(1, 300, 1)
    y = torch.sin(6 * x)
    xt = torch.rand(1, 20, 1)
    state = model.condition(x[:, :100], y[:, :100])
    for i in range(100, 300, 50):
        state = model.update(state, x[:, i:i + 50], y[:, i:i + 50])
    assert max_diff(model.predict(state, xt), model.predict(model.condition(x, y), xt)) < 1e-4


class _LargestTensor(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the largest tensor any op produces while active."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel())
        return out


def test_chunked_conditioning_allocates_nothing_that_grows_with_n():
    # peak memory independent of N: no intermediate (embeddings included) scales with N
    model = tiny_model("cmanp", chunk_size=16)
    with torch.no_grad():  # the derived weights of the fused path, built once (not a function of N)
        model.condition(*random_set(1, 1))
    largest = []
    for n in (64, 4096):
        x, y = random_set(1, n, seed=n)
        with torch.no_grad(), _LargestTensor() as probe:
            model.latents(model.condition(x, y))
        largest.append(probe.largest)
    assert largest[0] == largest[1]
    # while unchunked conditioning does grow (the probe sees it)
    x, y = random_set(1, 4096, seed=1)
    with torch.no_grad(), _LargestTensor() as probe:
        model.condition(x, y, chunk_size=4096)
    assert probe.largest > 4 * largest[1]


def test_widened_model_computes_the_same_function():
    model = tiny_model("cmanp", x_dim=2).double().eval()
    c = model.config
    wide = model.widened(3 * c.n_latents, 2 * c.n_block_latents)
    assert (wide.config.n_latents, wide.config.n_block_latents) == (3 * c.n_latents, 2 * c.n_block_latents)
    assert wide.initial_latents.shape[0] == 3 * c.n_latents
    xc, yc = torch.rand(2, 9, 2, dtype=torch.float64), torch.randn(2, 9, 1, dtype=torch.float64)
    xt = torch.rand(2, 5, 2, dtype=torch.float64)
    with torch.no_grad():
        narrow_pred, wide_pred = model.predict(model.condition(xc, yc), xt), wide.predict(wide.condition(xc, yc), xt)
        torch.testing.assert_close(wide_pred.mean, narrow_pred.mean)
        torch.testing.assert_close(wide_pred.stddev, narrow_pred.stddev)
        noisy = model.widened(2 * c.n_latents, c.n_block_latents, noise_std=0.1,
                              generator=torch.Generator().manual_seed(0))
        assert not torch.allclose(noisy.predict(noisy.condition(xc, yc), xt).mean, narrow_pred.mean)


@pytest.mark.parametrize("kwargs", [{"n_latents": 5}, {"n_block_latents": 1}, {"noise_std": -1.0}])
def test_widened_rejects_counts_that_are_not_multiples(kwargs):
    model = tiny_model("cmanp", x_dim=2)
    args = {"n_latents": 2 * model.config.n_latents, "n_block_latents": 2 * model.config.n_block_latents, **kwargs}
    noise = args.pop("noise_std", 0.0)
    with pytest.raises(ValueError, match="n_latents|n_block_latents|noise_std"):
        model.widened(**args, noise_std=noise)
