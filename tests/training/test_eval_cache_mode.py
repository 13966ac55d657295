"""The evaluation-set cache (``eval_batches(..., cache=True)``) is a file the umask lets others
read, as a checkpoint is: ``$NPBANDIT_CACHE`` may be a directory several users or a worker of
another uid share, which a file readable by its owner alone would fail for."""

import os
import stat

from npbandit.priors import GP1DPrior
from npbandit.training import eval_batches


def test_a_cached_evaluation_set_is_readable_as_the_umask_allows(tmp_path, monkeypatch):
    monkeypatch.setenv("NPBANDIT_CACHE", str(tmp_path))
    previous = os.umask(0o022)
    try:
        list(eval_batches(GP1DPrior(), 2, cache=True))
    finally:
        os.umask(previous)
    (path,) = (tmp_path / "evalsets").iterdir()  # the set, and no temporary file beside it
    assert path.suffix == ".safetensors" and stat.S_IMODE(path.stat().st_mode) == 0o644
