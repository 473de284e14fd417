# tiecore's public names, each written once: type checkers read them here, and
# tiecore._lazy.attach_stub imports each on first use at run time (tiecore/__init__.py).
from . import compare as compare
from . import distributed as distributed
from . import explain as explain
from . import interop as interop
from . import ir_measures_provider as ir_measures_provider
from . import metrics as metrics
from . import pytrec as pytrec
from . import spread as spread
from . import stats as stats
from .compare import Comparison as Comparison
from .errors import InputError as InputError
from .errors import Refusal as Refusal
from .errors import TieCoreWarning as TieCoreWarning
from .evaluation.core import evaluate as evaluate
from .io import Qrels as Qrels
from .io import Run as Run
from .io import read_letor as read_letor
from .io import read_qrels as read_qrels
from .io import read_run as read_run
from .io import read_runs as read_runs
from .spread import evaluate_spread as evaluate_spread
from .version import __version__ as __version__
