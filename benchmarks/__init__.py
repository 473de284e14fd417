"""tiecore's benchmark suite: figures side by side, never asserted (``benchmarks/README.md``).

``python -m benchmarks run ...`` runs the sections (one module each: :mod:`.startup`,
:mod:`.arrays`, :mod:`.modes`, :mod:`.parsing`, :mod:`.end_to_end`, :mod:`.stream`,
:mod:`.spread`, :mod:`.compare`, :mod:`.scale_out`, :mod:`.track`), on the data sets of
:mod:`.datasets`, with the timing, child processes and result lines of :mod:`.common`;
:mod:`.explorer` and :mod:`.app_memory` measure the explorer in Chromium; :mod:`.store`
keeps every figure per commit and compares a commit with its base.

Nothing is imported here: a child process (:mod:`.child`) loads only what it runs.
"""
