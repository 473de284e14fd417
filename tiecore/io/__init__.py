"""Read TREC runs, TREC qrels and LETOR (svmlight) files into pandas DataFrames (or arrow).

Formats
-------
run
    ``qid Q0 docno rank score tag``, fields separated by any mix of spaces and tabs.
    The ``Q0`` and ``rank`` fields are ignored (trec_eval ranks by score) and the
    ``tag`` may be missing on every line (5 fields). The first line fixes the number
    of fields and every line must have as many: a docno or tag with a space would
    otherwise be read shifted, as trec_eval silently does. Fields after the tag are
    ignored, as trec_eval does, and may vary once the first line has some (as in
    trec_eval's own ``results.trunc``) and another line has some too: a first line
    alone with more fields is refused, as such a line is anywhere else. A docno may
    appear only once per query.
qrels
    ``qid iter docno level``: exactly 4 fields, an integer ``level`` written in decimal
    (negative levels allowed, a leading ``+`` read as trec_eval's ``atol`` reads it;
    ``0x1`` refused), one judgment per (qid, docno). A run given as qrels, or qrels given
    as a run, is named as such in the error.
LETOR / svmlight
    ``label qid:Q i:v i:v ... # comment`` with a non-negative integer label (a grade)
    and strictly increasing 1-based decimal feature indexes; a missing feature counts
    as 0; some line must have one. A ``#`` anywhere starts a comment, as in svmlight.

Every format: plain text or gzip (recognised by its magic bytes, not by the name),
UTF-8; a line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (old Mac files), and
``\\v``, ``\\f`` are whitespace; blank lines and lines whose first field starts with
``#`` are skipped, like trec_eval does. Line numbers in errors are physical lines of
the (decompressed) file.

Modules
-------
:mod:`~tiecore.io.trec` (TREC runs and qrels as text, on :mod:`~tiecore.io.fastpath`,
pyarrow's parallel parse, and :mod:`~tiecore.io.text`, the careful tokenizer that names
lines), :mod:`~tiecore.io.letor`, :mod:`~tiecore.io.sources` (Parquet, JSON Lines,
stdin, ir_measures records), :mod:`~tiecore.io.frames` (the same rules for DataFrames),
:mod:`~tiecore.io.peers` (ranx and trectools objects), :mod:`~tiecore.io.ids` (the
duplicate test, whose codes and hashes a run keeps for the judgments' lookup) and
:mod:`~tiecore.io.hashing` (the package's one mixer and one string hasher of row keys;
FNV-1a for the per-query keys of the seeded draws). :mod:`~tiecore.io.arrays` converts
between arrow and numpy without pandas. The readers live in :mod:`~tiecore.io.readers`
and :mod:`~tiecore.io.letor`, imported on first use: ``import tiecore.io`` loads
neither pyarrow nor pandas.
"""

from tiecore import _lazy

#: The public readers are those of ``__init__.pyi``, each written there once
#: (tiecore._lazy): imported on first use, so that ``import tiecore.io.files``
#: (``tiecore eval`` of a small run) loads neither pyarrow nor pandas.
__getattr__, __dir__ = _lazy.attach_stub(__name__, __file__)
