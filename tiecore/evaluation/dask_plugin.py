"""The dask worker plugin that :func:`tiecore.distributed.connect` registers on a
running cluster.

A module of its own because its class derives from ``distributed.WorkerPlugin``:
importing it imports dask, which :mod:`tiecore.distributed` does not
(:func:`~tiecore.distributed.local_declines` decides without it); ``connect`` imports
it inside the function, once it has a cluster to register it on.
"""

from __future__ import annotations

from collections.abc import Callable

from distributed import WorkerPlugin

__all__ = ["WarmUp"]


class WarmUp(WorkerPlugin):
    """Runs ``warm_up()`` on each worker of a cluster as the plugin is registered, and on
    the workers that join later; registered again under its name, nothing happens.

    ``warm_up`` goes to the workers pickled by reference (a module-level function,
    :func:`tiecore.distributed.warm_up`): a worker imports its module to run it.
    """

    idempotent = True

    def __init__(self, warm_up: Callable[[], object]) -> None:
        self.warm_up = warm_up

    def setup(self, worker: object) -> None:
        self.warm_up()
