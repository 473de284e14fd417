"""The warm-up process: ``python -m app_lib.warmup DIR`` (started by :func:`app_lib.warm.start`).

It computes what the MSLR sample's Overview shows under the default settings
(:func:`app_lib.cache.warm_plan`) and pickles each result into ``DIR``, named by
:func:`app_lib.warm.name_of`, where :func:`app_lib.warm.fetch` finds it.  It sits
above :mod:`app_lib.cache` (whose computations it runs), which sits above
:mod:`app_lib.warm`: no module of the app layer imports this one.
"""

from __future__ import annotations

import os
import pickle
import sys
import warnings
from pathlib import Path

from app_lib import cache, warm


def _save(folder: Path, name: str, value: object) -> None:
    """Write atomically: a reader sees the whole file or none."""
    partial = folder / (name + ".part")
    with open(partial, "wb") as file:
        pickle.dump(value, file, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(partial, folder / name)


def main(folder: Path) -> None:
    """Compute the MSLR sample's default Overview (see :func:`app_lib.cache.warm_plan`)."""
    warnings.simplefilter("ignore")
    dataset = warm.name_of("dataset", ("mslr",))
    _save(folder, dataset, cache.mslr_sample())
    plan = cache.warm_plan()
    names = [warm.name_of(kind, key) for kind, key, _ in plan]
    _save(folder, "plan.pkl", [*names, dataset])
    for kind, key, compute in plan:
        _save(folder, warm.name_of(kind, key), compute())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
