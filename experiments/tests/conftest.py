import pytest
import torch

from .helpers import restored_registries


@pytest.fixture
def keep_threads():
    """Restores torch's thread count after a test whose benchmark or probe sets its own (the
    scripts' runs use one thread each)."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def keep_registries():
    """Restores the surrogate and prior registries after a test whose script registers a family
    or a prior of its own when imported (a probe's family, for ``train --plugin``)."""
    with restored_registries():
        yield
