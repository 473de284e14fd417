# tiecore.io's public readers, each written once: type checkers read them here, and
# tiecore._lazy.attach_stub imports each on first use at run time (__init__.py).
from .archives import read_archive as read_archive
from .archives import read_folder as read_folder
from .letor import read_letor as read_letor
from .readers import read_qrels as read_qrels
from .readers import read_run as read_run
from .readers import read_runs as read_runs
from .runs import Qrels as Qrels
from .runs import Run as Run
