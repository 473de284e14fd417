"""Arrow arrays and numpy without pandas and without :mod:`pyarrow.compute`'s import.

``tiecore eval`` evaluates arrow columns with numpy; pyarrow's own conversions go
through its pandas shim (which imports pandas) and :mod:`pyarrow.compute` wraps every
kernel on import (0.1-0.25 s): :func:`kernel` calls a kernel by name (its options from
:data:`Kernels`), and :func:`to_arrow` and :func:`to_numpy` convert directly.  A module
off ``tiecore eval``'s path imports :mod:`pyarrow.compute` itself, at its top.

Arrow's own conveniences import one or the other too: ``pa.array``, ``pa.scalar`` and
``Array.to_numpy`` (pandas, and with it :mod:`pyarrow.compute`), ``Array.take``,
``Array.filter`` and ``Array.is_valid`` (:mod:`pyarrow.compute`); on ``tiecore eval``'s
path :func:`to_arrow`, :func:`to_numpy` and ``kernel("take", ...)`` stand in for them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow._compute as _kernels  # arrow's kernels; pyarrow.compute wraps them (see kernel)

__all__ = ["Kernels", "kernel", "offsets", "to_arrow", "to_numpy"]


def kernel(name: str, *args: object, options: object = None) -> Any:
    """Arrow's compute function ``name`` on ``args``, as ``pyarrow.compute.<name>`` calls
    it (``call_function``, default options unless given), without importing
    :mod:`pyarrow.compute`.  A Python number or string among ``args`` works too (arrow
    makes it a scalar, through ``pa.scalar``: pandas is imported); on ``tiecore eval``'s
    path a kernel's parameters go in its ``options``, or as arrays.

    >>> found = Kernels.SetLookupOptions(pa.array(["b"]))
    >>> kernel("index_in", pa.array(["b", "x"]), options=found).to_pylist()
    [0, None]
    """
    return _kernels.call_function(name, list(args), options)


#: The kernels' option classes (``SetLookupOptions``, ``SortOptions``, ``CastOptions``...).
Kernels = _kernels


def to_arrow(values: np.ndarray) -> pa.Array:
    """A numpy array of numbers or booleans as an arrow array, without pandas: ``pa.array``
    asks pyarrow's pandas shim about its input, which imports pandas (half a second of
    ``tiecore eval``'s start); numbers share the numpy memory.

    >>> to_arrow(np.array([3, 1])).to_pylist(), to_arrow(np.array([True, False])).type
    ([3, 1], DataType(bool))
    """
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        bits = np.packbits(values, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    typ = pa.from_numpy_dtype(values.dtype)
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])


def to_numpy(values: pa.Array | pa.ChunkedArray, fill: object = None) -> np.ndarray:
    """A numeric or boolean arrow array as numpy, nulls replaced by ``fill`` (an error
    if there are nulls and no ``fill``), without pandas: ``Array.to_numpy`` goes through
    arrow's pandas conversion, which imports pandas.

    >>> import pyarrow.compute as pc
    >>> to_numpy(pc.index_in(pa.array(["b", "x", "a"]), value_set=pa.array(["a", "b"])), -1)
    array([ 1, -1,  0], dtype=int32)
    """
    if isinstance(values, pa.ChunkedArray):
        chunks = [to_numpy(chunk, fill) for chunk in values.chunks]
        dtype = values.type.to_pandas_dtype() if not chunks else chunks[0].dtype
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype)
    n, start = len(values), values.offset
    validity, data = values.buffers()[:2]
    if pa.types.is_boolean(values.type):
        out = _bits(data, start, n)
    else:
        dtype = np.dtype(values.type.to_pandas_dtype())
        out = (
            np.frombuffer(data, dtype, count=n, offset=start * dtype.itemsize)
            if n
            else (np.zeros(0, dtype))
        )
    if values.null_count:
        if fill is None:
            raise ValueError("nulls without a fill value")
        out = np.where(_bits(validity, start, n), out, np.asarray(fill, out.dtype))
    return out


def _bits(buffer: pa.Buffer, start: int, n: int) -> np.ndarray:
    """Bits ``start .. start + n`` of an arrow bitmap as a numpy bool array."""
    if not n:
        return np.zeros(0, bool)
    raw = np.frombuffer(buffer, np.uint8, count=(start + n + 7) // 8)
    # unpackbits gives 0 or 1 per byte: a valid bool array as it is, no copy
    return np.unpackbits(raw, bitorder="little", count=start + n)[start:].view(bool)


def offsets(arr: pa.Array) -> np.ndarray:
    """The offsets of a (large) string array as a zero-copy numpy view."""
    kind = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    buf = arr.buffers()[1]
    return np.frombuffer(buf, kind, count=len(arr) + 1, offset=arr.offset * np.dtype(kind).itemsize)
