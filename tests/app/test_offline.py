"""The explorer stays on this machine: no connection leaves it, from the server or the browser.

The server runs as the README starts it (``streamlit run app.py``, the project's
``.streamlit/config.toml`` deciding the address), under ``strace``, which records every
``connect``, ``sendto`` and ``bind`` of the server and of the processes it starts
(kaleido's Chromium, which draws a chart's PNG).  A visitor opens the Overview in
Chromium and downloads a chart as PNG.  Then: every address the server's processes
connected or sent to is this machine's loopback (before, Streamlit looked up
``checkip.amazonaws.com`` and kaleido loaded MathJax from a CDN), the server listened
on 127.0.0.1 only (before, on every interface), and the browser asked nothing of
another host.
"""

from __future__ import annotations

import re
import shutil

import pytest
from browser_kit import SHOTS, launch, new_tab, outside, record_requests, serve, wait_until_rendered

pytestmark = pytest.mark.slow

#: One traced call: its name, its socket's protocol (strace ``-yy``: ``TCP``, ``UDPv6``,
#: ``UNIX`` ...) and the rest of the line.
CALL = re.compile(r"\b(connect|sendto|sendmsg|sendmmsg|bind)\(\d+<([A-Za-z0-9]+):(.*)")
#: An IP address: in a socket address (``inet_addr("...")``) or a connected socket's peer.
ADDRESS = re.compile(r'inet_(?:addr|pton)\((?:AF_INET6, )?"([^"]+)"|->\[?([0-9a-f.:]+?)\]?:\d+\]')
LOOPBACK = re.compile(r"^(127\.|::1$|::ffff:127\.)")


def leaving(trace: str) -> list[str]:
    """The traced calls that reach another host: a TCP connection opened to it, a
    datagram sent to it, or a name looked up (DNS, even through a resolver on
    loopback).  A UDP ``connect`` alone sends nothing: Chromium connects one to a
    public address to learn whether IPv6 is routable, and sends nothing on it."""
    found = []
    for line in trace.splitlines():
        call = CALL.search(line)
        if call is None or call[1] == "bind":
            continue
        addresses = [a or b for a, b in ADDRESS.findall(call[3])]
        outside = [a for a in addresses if not LOOPBACK.match(a) and a not in ("0.0.0.0", "::")]
        sending = call[1] != "connect" or call[2].startswith("TCP")
        dns = re.search(r"htons\(53\)|:53\]", call[3])  # a name looked up, even locally
        if sending and (outside or dns):
            found.append(line)
    return found


def bound(trace: str) -> list[str]:
    """The IP addresses the traced processes bound a socket to."""
    return [
        a or b
        for line in trace.splitlines()
        if (call := CALL.search(line)) and call[1] == "bind"
        for a, b in ADDRESS.findall(call[3])
    ]


def test_nothing_leaves_the_machine(tmp_path):
    assert shutil.which("strace"), "strace is missing: apt-get install -y strace"
    trace_file = tmp_path / "server.strace"
    prefix = ["strace", "-f", "-qq", "-yy", "-e", "trace=connect,sendto,sendmsg,sendmmsg,bind"]
    prefix += ["-o", str(trace_file)]
    urls: list[str] = []
    with serve("streamlit_offline.log", prefix=prefix, as_configured=True) as url:
        with launch() as browser:
            context, tab = new_tab(browser, width=1440)
            urls = record_requests(context)
            tab.goto(f"{url}/overview")  # its first chart has a PNG button
            wait_until_rendered(tab)
            png = tab.locator('[data-testid="stDownloadButton"] button', has_text="PNG").first
            with tab.expect_download() as download:
                png.click()
            image = download.value.path().read_bytes()
            context.close()
    assert image.startswith(b"\x89PNG\r\n\x1a\n")  # kaleido drew it, offline
    trace = trace_file.read_text()
    (SHOTS / "offline.strace").write_text(trace)  # kept for a reader of a failure
    assert "connect(" in trace, "strace recorded no connection (the websocket is one)"
    assert leaving(trace) == [], leaving(trace)[:5]
    listening = bound(trace)
    assert listening and all(LOOPBACK.match(a) for a in listening), listening
    assert outside(urls) == [], sorted(set(outside(urls)))[:10]
