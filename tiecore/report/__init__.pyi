# tiecore.report's public names, each written once: type checkers read them here, and
# tiecore._lazy.attach_stub imports each on first use at run time (__init__.py).
from .effects import COLUMNS as COLUMNS
from .effects import FLAG_Z as FLAG_Z
from .effects import MISSING as MISSING
from .effects import NOISE as NOISE
from .effects import PRINTED_DIGITS as PRINTED_DIGITS
from .effects import combine_modes as combine_modes
from .effects import effect_sentence as effect_sentence
from .effects import expected_flags as expected_flags
from .effects import flag_verdict as flag_verdict
from .effects import format_shift as format_shift
from .effects import format_value as format_value
from .effects import modes_table as modes_table
from .effects import printed as printed
from .escape import escape_markdown as escape_markdown
from .formats import DIGITS as DIGITS
from .formats import provenance as provenance
from .formats import to_csv as to_csv
from .latex import frame_to_latex as frame_to_latex
from .latex import to_latex as to_latex
from .markdown import to_markdown as to_markdown
from .pairs import closest_pairs as closest_pairs
from .pairs import nearest_pairs as nearest_pairs
from .significance import CORRECTION_NAMES as CORRECTION_NAMES
from .significance import significance_vs_best as significance_vs_best
from .tables import format_pvalue as format_pvalue
