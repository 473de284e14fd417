"""The one lazy facade: a package's public names, declared once in its ``__init__.pyi``.

A facade package (``tiecore``, ``tiecore.io``, ``tiecore.report``) writes each public
name once, as a relative import in the stub beside its ``__init__.py``::

    from .readers import read_run as read_run   # a name, from the module that defines it
    from . import spread as spread              # a public submodule

Type checkers read the stub (the package ships ``py.typed``, PEP 561), so they see each
name's real signature; at run time :func:`attach_stub` reads the same lines and imports
a name's module when the name is first used (PEP 562), so that ``import tiecore`` loads
neither numpy, pandas nor pyarrow.  ``__all__`` is every name of the stub that does not
start with ``_``; the modules the names come from (one level down) are attributes too.
The stub itself is parsed on first use, not at import.  This is the idea of
lazy_loader's ``attach_stub``, without the dependency.
"""

from __future__ import annotations

import importlib
import os
import sys

TYPE_CHECKING = False  # typing's, without importing typing at start-up
if TYPE_CHECKING:
    from collections.abc import Callable


def read_stub(package: str, path: str) -> dict[str, tuple[str, str | None]]:
    """Each name the stub at ``path`` declares -> (its module, the attribute or None).

    ``from .m import a as a`` declares ``a`` -> ``("package.m", "a")``; ``from . import
    m as m`` declares the submodule ``m`` -> ``("package.m", None)``.  Other statements
    (the docstring) declare nothing.
    """
    import ast  # lazy: ast (~2 ms) paid on a lazy name's first use, not on import

    try:
        with open(path, encoding="utf-8") as file:
            tree = ast.parse(file.read(), path)
    except OSError as error:
        raise ImportError(f"{package}: its stub {path} is missing ({error})") from error
    declared: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                name = alias.asname or alias.name
                if node.module is None:
                    declared[name] = (f"{package}.{alias.name}", None)
                else:
                    declared[name] = (f"{package}.{node.module}", alias.name)
    return declared


def attach_stub(
    package: str, init_file: str
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, from the stub beside ``init_file``.

    Parameters
    ----------
    package : str
        The package's name (its ``__name__``).
    init_file : str
        Its ``__init__.py`` (its ``__file__``); the stub is ``__init__.pyi`` beside it.

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``, to assign at the package's top level.  A value, once
        imported, is stored in the package, so later lookups skip ``__getattr__``.
    """
    stub = os.path.join(os.path.dirname(init_file), "__init__.pyi")
    declared: dict[str, tuple[str, str | None]] = {}

    def names() -> dict[str, tuple[str, str | None]]:
        if not declared:
            declared.update(read_stub(package, stub))
        return declared

    def __getattr__(name: str) -> object:
        home, attribute = names().get(name, (None, None))
        value: object
        if name == "__all__":
            value = sorted(n for n in names() if not n.startswith("_"))
        elif home is not None:
            module = importlib.import_module(home)
            value = module if attribute is None else getattr(module, attribute)
        elif f"{package}.{name}" in {h for h, _ in names().values()}:
            return importlib.import_module(f"{package}.{name}")  # a home: its own attribute now
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)  # later lookups skip this hook
        return value

    def __dir__() -> list[str]:
        module = sys.modules[package]
        public = module.__all__  # first: stored in the module from now on
        return sorted({*vars(module), *public})

    return __getattr__, __dir__
