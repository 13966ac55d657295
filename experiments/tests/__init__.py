"""The lab's tests: the benchmark and probe scripts of experiments/ and the pages of its log.

A package, so that its modules (``tests.helpers``, ``tests.conftest``) never share a name with
the library suite's top-level ``helpers`` and ``conftest`` when one pytest run collects both."""
