"""Display: the one chart helper, tables with CSV downloads, and what the jargon means.

:func:`show` applies the shared plotly layout (height, margins, legend, axis
titles, hover labels) and draws the figure; pages build traces only.
:func:`show_table` draws a table with its column help and, beside it, a CSV
download that carries its provenance (data set, measure, tie mode, ...,
tiecore version) and no float noise (:func:`tiecore.report.to_csv`).
"""

from __future__ import annotations

import html
import textwrap
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app_lib.glossary import TERMS
from app_lib.recent import Recent, store
from app_lib.settings import cache_bytes
from tiecore import report

MODE_COLORS = {"oblivious": "#8c8c8c", "aware": "#1f77b4", "sampled": "#ff7f0e"}
FLAG_COLOR = "#d62728"
#: Short explanations of the oblivious tie-break policies.
TIEBREAK_HELP = {
    "trec_eval": "score descending (as 32-bit floats), then docno descending (trec_eval 9's order)",
    "trec_eval_double": "score descending as given, then docno descending (trec_eval 10's order)",
    "docno_asc": "score descending, then docno ascending",
    "file_order": "score descending, then the order of the rows in the file",
    "optimistic": "relevant (higher-gain) documents first inside each tie",
    "pessimistic": "relevant (higher-gain) documents last inside each tie",
    "random": "a random order inside each tie (seeded)",
}
#: The tie-break policies (and the tie treatments a chart compares) in plain words.
TIEBREAK_NAMES = {
    "trec_eval": "trec_eval",
    "trec_eval_double": "trec_eval 10",
    "docno_asc": "docno ascending",
    "file_order": "file order",
    "optimistic": "optimistic",
    "pessimistic": "pessimistic",
    "random": "random",
    "aware": "tie-aware",
}
#: The glossary's terms (:data:`app_lib.glossary.TERMS`), under the name pages have used.
GLOSSARY = TERMS


def tiebreak_name(name: str) -> str:
    """A tie-break policy as a reader says it (``docno_asc`` -> ``docno ascending``)."""
    return TIEBREAK_NAMES.get(name, str(name).replace("_", " "))


def how_it_works(text: str) -> None:
    """The page's method in a collapsed box (Markdown), under its title."""
    with st.expander("How it works", icon=":material/help:"):
        st.markdown(text)


def tiebreak_help(name: str) -> str:
    """One line on a tie-break policy (its name when there is none)."""
    return TIEBREAK_HELP.get(name, name)


def help_of(column: str) -> str | None:
    """The glossary line for a table column (None when there is none)."""
    return GLOSSARY.get(column)


class _Drawn(go.Figure):
    """A laid-out figure kept as its dict.

    ``st.plotly_chart`` asks a figure for ``to_dict`` only, so a kept dict is drawn
    without building and validating plotly's objects again (most of a redraw's
    time with many traces).  ``go.Figure.__init__`` is skipped on purpose.
    """

    def __init__(self, spec: dict) -> None:  # nothing to build or validate
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict:
        return self._spec


#: Laid-out figures kept by :func:`show` (each also dropped once unused for the cache's ttl,
#: and the least recently used past the bytes of the figures' share of the caches).
FIGURES_KEPT = 256


def _figures() -> Recent:
    """Figures of the data in use: the server's for the samples, the session's for uploads."""
    return store("figures", FIGURES_KEPT, cache_bytes("figures"))


def show(
    figure: go.Figure | dict | Callable[[], go.Figure | dict],
    key: str,
    *,
    cache: tuple | None = None,
    height: int = 400,
    x_title: str | None = None,
    y_title: str | None = None,
    title: str | None = None,
    legend: bool | str = True,
    top: int = 40,
    **layout,
) -> None:
    """Apply the shared layout and draw ``figure`` full width.

    ``legend`` True puts a horizontal legend above the plot, a string also
    titles it, False hides it; ``layout`` passes anything else to
    ``update_layout`` (axes, shapes, ``barmode`` ...).  ``figure`` may be
    plotly's JSON as plain dicts (``{"data": [...], "layout": {...}}``, traces
    with their ``type``), which is drawn without building plotly's objects
    (most of a redraw's time with many traces).  With ``cache`` (a
    hashable key of everything the figure shows) and ``figure`` a function
    that builds it, the laid-out figure is kept, and a rerun with the same key
    and layout draws it without calling the function.
    """
    options = (height, x_title, y_title, title, legend, top, repr(sorted(layout.items())))
    store, memo = _figures(), (key, cache, options)
    spec = store.get(memo) if cache is not None else None
    if spec is None:
        built = figure() if callable(figure) else figure
        if isinstance(built, dict):  # plotly's JSON as plain dicts: nothing to validate
            spec = built
            _lay_out_spec(spec, height, x_title, y_title, title, legend, top, layout)
        else:
            _lay_out(built, height, x_title, y_title, title, legend, top, layout)
            spec = built.to_dict()
    if cache is not None:
        store.put(memo, spec)
    st.plotly_chart(_Drawn(spec), key=key, config=_config(key))
    if _browser() is not None:  # the PNG is drawn on click only, by kaleido in that browser
        st.download_button(
            "PNG",
            lambda: png(spec),
            file_name=f"{key}.png",
            mime="image/png",
            key=f"{key}_png",
            on_click="ignore",
            type="tertiary",
            icon=":material/image:",
            help="this figure as a PNG image; the camera above the chart saves it as SVG",
        )


def _config(key: str) -> dict:
    """The modebar: no plotly logo; the camera saves an SVG (vector, for papers) named ``key``."""
    return {"displaylogo": False, "toImageButtonOptions": {"format": "svg", "filename": key}}


#: Browsers kaleido can draw a PNG in (it drives an installed Chrome or Chromium).
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _browser() -> str | None:
    """The installed browser kaleido would use (None: no PNG button, the SVG camera stays)."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("kaleido") is None:
        return None
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


@st.cache_resource(show_spinner=False)
def _image_server() -> bool:
    """kaleido's browser, started once per server: a PNG then takes ~0.3 s instead of ~4 s."""
    import kaleido

    # offline: no MathJax from a CDN (the figures set no TeX), and the browser's own
    # requests (its background networking) sent to a closed local port, not outside
    kaleido.start_sync_server(silence_warnings=True, mathjax=False, proxy_server=NO_PROXY)
    return True


#: A closed port of this machine, as kaleido's browser's proxy: nothing it asks for leaves.
NO_PROXY = "127.0.0.1:9"


def png(spec: dict, width: int = 1000, scale: float = 2.0) -> bytes:
    """A drawn figure (plotly JSON) as PNG bytes, ``width`` CSS pixels at ``scale``."""
    import plotly.io as pio

    _image_server()
    height = int(spec.get("layout", {}).get("height", 450))
    with warnings.catch_warnings():  # plotly's note that a running server ignores its options
        warnings.filterwarnings("ignore", "The kopts argument is ignored", UserWarning)
        return pio.to_image(go.Figure(spec), format="png", width=width, height=height, scale=scale)


def band(x, low, high, name: str, fill: str = "rgba(31,119,180,0.15)") -> go.Scatter:
    """A shaded band between ``low`` and ``high`` along ``x`` (a min-max range, a ±2 sd
    interval): one closed outline, no line, no markers, no hover."""
    x, low, high = np.asarray(x), np.asarray(low, np.float64), np.asarray(high, np.float64)
    return go.Scatter(
        x=np.concatenate([x, x[::-1]]),
        y=np.concatenate([high, low[::-1]]),
        mode="lines",  # no markers: plotly marks each point of a short trace by default
        fill="toself",
        fillcolor=fill,
        line={"width": 0},
        name=name,
        hoverinfo="skip",
    )


#: Characters per line of a chart's title: what a phone's 390 px holds.  Plotly does not wrap
#: text, so :func:`wrap` breaks longer titles between words.
TITLE_LINE = 44


def wrap(text: str, width: int = TITLE_LINE) -> str:
    """``text`` with plotly's line breaks (``<br>``) between words, no line over ``width``.

    >>> wrap("trec_eval − tie-aware (red: the tie-break flatters the system)", 30)
    'trec_eval − tie-aware (red:<br>the tie-break flatters the<br>system)'
    """
    return "<br>".join(textwrap.wrap(text, width)) if len(text) > width else text


def _shared_layout(height, title, legend, top) -> dict:
    title = wrap(title) if title else title
    lines = title.count("<br>") + 1 if title else 0
    shared: dict = {
        "height": int(height) + 20 * max(lines - 1, 0),
        "margin": {"t": top + 24 * lines, "l": 10, "r": 10, "b": 10},
        "hoverlabel": {"namelength": -1},
    }
    if title:  # from the top of the figure down, above the legend and the plot
        shared["title"] = {
            "text": title, "x": 0, "xanchor": "left", "y": 1, "yanchor": "top",
            "yref": "container", "pad": {"t": 10},
        }  # fmt: skip
    if legend:
        shared["legend"] = {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0}
        if isinstance(legend, str):
            shared["legend"]["title"] = {"text": legend}
    else:
        shared["showlegend"] = False
    return shared


def _lay_out(figure, height, x_title, y_title, title, legend, top, layout) -> None:
    """The shared layout (see :func:`show`) on a plotly figure."""
    figure.update_layout(**_shared_layout(height, title, legend, top))
    if x_title is not None:
        figure.update_layout(xaxis_title=x_title)
    if y_title is not None:
        figure.update_layout(yaxis_title=y_title)
    if layout:
        figure.update_layout(**layout)


def _lay_out_spec(spec, height, x_title, y_title, title, legend, top, layout) -> None:
    """The shared layout (see :func:`show`) merged into a figure's JSON dict."""
    target = spec.setdefault("layout", {})
    _merge(target, _shared_layout(height, title, legend, top))
    if x_title is not None:
        _merge(target, {"xaxis": {"title": x_title}})
    if y_title is not None:
        _merge(target, {"yaxis": {"title": y_title}})
    _merge(target, layout)
    for name, axis in target.items():  # plotly.js takes an axis title as {"text": ...}
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis.get("title"), str):
            axis["title"] = {"text": axis["title"]}


def _merge(target: dict, updates: Mapping) -> None:
    """Nested dicts merged into ``target`` (as ``update_layout`` merges them)."""
    for key, value in updates.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = dict(value) if isinstance(value, Mapping) else value


def stacked_layout(
    rows: int, *, titles: Sequence[str] = (), gap: float = 0.06, heights: Sequence[float] = ()
) -> tuple[dict, list[tuple[str, str]]]:
    """Layout of ``rows`` charts stacked vertically on one shared x axis.

    A light replacement for ``plotly.subplots.make_subplots`` (which costs a
    tenth of a second per figure, too slow for instant re-renders).  Returns
    the layout dict and the ``(xaxis, yaxis)`` names of each row, top first.
    """
    heights = np.asarray(heights or [1.0] * rows, dtype=float)
    spans = heights / heights.sum() * (1 - gap * (rows - 1))
    tops = 1 - np.concatenate(([0.0], np.cumsum(spans[:-1] + gap)))
    layout: dict = {"annotations": []}
    axes = []
    for row in range(rows):
        suffix = "" if row == 0 else str(row + 1)
        x, y = f"x{suffix}", f"y{suffix}"
        layout[f"xaxis{suffix}"] = {"anchor": y, "showticklabels": row == rows - 1}
        low, high = max(tops[row] - spans[row], 0.0), min(tops[row], 1.0)
        layout[f"yaxis{suffix}"] = {"anchor": x, "domain": [round(low, 9), round(high, 9)]}
        if row < len(titles):
            layout["annotations"].append(
                {
                    "text": wrap(titles[row]),
                    "x": 0.5,
                    "xref": "paper",
                    "xanchor": "center",
                    "y": tops[row],
                    "yref": "paper",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "font": {"size": 14},
                }
            )
        axes.append((x, y))
    for row in range(rows - 1):
        suffix = "" if row == 0 else str(row + 1)
        layout[f"xaxis{suffix}"]["matches"] = f"x{rows}"
    return layout, axes


def short(name: str, limit: int = 28) -> str:
    """A label cut to ``limit`` characters (the full name stays in the hover text)."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def short_labels(names: Sequence[str], limit: int = 28) -> list[str]:
    """Unique shortened labels for a chart's axis: a clash keeps the full names apart with
    a suffix; HTML-escaped (:func:`plain`), since plotly renders its HTML subset in them."""
    out, seen = [], {}
    for name in names:
        label = short(name, limit)
        count = seen.get(label, 0)
        seen[label] = count + 1
        out.append(plain(label if count == 0 else f"{label} ({count + 1})"))
    return out


def plain(name: object) -> str:
    """A user's name (run tag, query id) as plotly text that shows it as typed: plotly
    renders ``<b>``, ``<i>`` and ``<a href>`` in titles, ticks, legends and hover texts.

    >>> plain("<b>run</b> & co")
    '&lt;b&gt;run&lt;/b&gt; &amp; co'
    """
    return html.escape(str(name), quote=False)


def top_slider(total: int, key: str, label: str, default: int = 30, unit: str = "systems") -> int:
    """How many items a chart shows: a slider when there are more than ``default``."""
    if total <= default:
        return total
    return int(
        st.slider(
            label,
            5,
            total,
            default,
            step=1,
            key=key,
            help=f"charts stay readable with the top {default}; all {total} {unit} are in the "
            "table and its download",
        )
    )


def pick_one(
    label: str,
    options: Sequence[str],
    *,
    key: str,
    default: str | None = None,
    follow: Callable[[str], str] | None = None,
    help: str | None = None,
) -> str:
    """One of ``options`` as a row of buttons; the choice is kept while it is offered.

    When the kept choice is gone (the sidebar's measures changed), ``follow(old)``
    names its successor (``nDCG@10`` -> ``nDCG(gain=exp)@10`` after a gain change)
    if that is offered, else ``default`` (else the first option) is chosen.
    """
    options = list(options)
    kept = st.session_state.get(key)
    if kept not in options:
        successor = None
        if kept is not None and follow is not None:
            try:
                successor = follow(kept)
            except (IndexError, ValueError):  # no successor: the default
                successor = None
        fallback = default if default in options else options[0]
        st.session_state[key] = successor if successor in options else fallback
    # wrap: many measures take several lines instead of running off the right edge
    return st.segmented_control(label, options, key=key, required=True, help=help, wrap=True)


def size_bins(sizes: pd.DataFrame) -> pd.DataFrame:
    """Group-size histogram (columns size, groups) binned by powers of two: 1, 2, 3-4, 5-8, ...

    Returns columns ``sizes`` (bin label), ``groups``, ``rows`` and ``share_rows``.
    """
    size = sizes["size"].to_numpy()
    upper = 2 ** np.ceil(np.log2(np.maximum(size, 1))).astype(np.int64)
    frame = pd.DataFrame(
        {"upper": upper, "groups": sizes["groups"].to_numpy(), "rows": size * sizes["groups"]}
    )
    out = frame.groupby("upper", as_index=False).sum()
    lower = np.maximum(out["upper"] // 2 + 1, 1)
    out["sizes"] = [
        f"{lo}" if lo == hi else f"{lo}–{hi}" for lo, hi in zip(lower, out["upper"], strict=True)
    ]
    out["share_rows"] = out["rows"] / max(int(out["rows"].sum()), 1)
    return out[["sizes", "groups", "rows", "share_rows"]]


def row_height(count: int, per_row: int = 22, least: int = 300) -> int:
    """Chart height that keeps one readable row per item."""
    return max(least, per_row * count + 120)


def column_config(frame: pd.DataFrame, **overrides) -> dict:
    """Column help from the glossary, 4 decimals for values, p-values in scientific notation."""
    config = {}
    for column in frame.columns:
        text = help_of(str(column))
        if column in overrides:
            continue
        dtype = frame[column].dtype
        if "pvalue" in str(column) or str(column) == "p_value":
            config[column] = st.column_config.NumberColumn(help=text, format="%.2e")
        elif pd.api.types.is_float_dtype(dtype):
            config[column] = st.column_config.NumberColumn(help=text, format="%.4f")
        elif text:
            config[column] = st.column_config.Column(help=text)
    config.update(overrides)
    for column in frame.columns:  # human headers: tie_sd -> "tie sd" (the CSV keeps the names)
        name, given = str(column), config.get(column, {})
        if "_" in name and isinstance(given, dict) and "label" not in given:
            config[column] = {**given, "label": name.replace("_", " ")}
    return config


def share_tied_column(**extra) -> dict:
    """The "share tied" column of a tie profile: a bar from 0 to 100 % (``extra``: width...)."""
    return st.column_config.ProgressColumn(
        "share tied",
        format="percent",
        min_value=0.0,
        max_value=1.0,
        help=GLOSSARY["share_tied_rows"],
        **extra,
    )


def show_table(
    frame: pd.DataFrame,
    name: str,
    *,
    key: str,
    provenance: Mapping[str, object] | None = None,
    column_config: Mapping | None = None,
    numbers: pd.DataFrame | None = None,
    **kwargs,
) -> None:
    """A table (columns sized to their content, help on hover) and a CSV download beside it
    (of ``numbers`` when given: full precision where the table prints text)."""
    config = globals()["column_config"](frame, **dict(column_config or {}))
    kwargs.setdefault("hide_index", frame.index.name is None)  # an unnamed index means nothing
    st.dataframe(frame, column_config=config, width="stretch", **kwargs)
    st.download_button(
        f"Download {report.escape_markdown(name)} (CSV)",  # a run or query named in Markdown
        lambda: report.to_csv(frame if numbers is None else numbers, provenance),  # on click
        file_name=f"{name.replace(' ', '_')}.csv",
        mime="text/csv",
        key=key,
        on_click="ignore",
        icon=":material/download:",
        help="with the settings behind it (data set, measure, tie mode, tie-break, samples, "
        "seed, relevance level, tiecore version) as # lines",
    )


def dataset_caption(dataset) -> None:
    """One line about the data in use (and notes such as skipped queries or runs)."""
    st.caption(f"**{report.escape_markdown(dataset.label)}** · {dataset.summary}")
    for note in dataset.notes[:8]:  # they name runs and queries as the files do
        st.caption(f":material/info: {report.escape_markdown(note)}")
    if len(dataset.notes) > 8:
        st.caption(f":material/info: ... and {len(dataset.notes) - 8} more notes")
