import pytest
import torch


@pytest.fixture
def keep_threads():
    """Restores torch's thread count after a test whose benchmark or probe sets its own (the
    scripts' runs use one thread each)."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)
