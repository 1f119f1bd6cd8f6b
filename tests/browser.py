"""Headless Chromium for the tests of ``ndagent html``, with no DevTools: a page is
loaded from a file with ``--dump-dom`` (what the page became, scripts run if any ran),
Chromium's log on standard error (each console message is a ``CONSOLE`` line, a
Content-Security-Policy violation included) and every connection sent to a loopback
sink that records it (``--proxy-server``, loopback not bypassed): a page that fetches
anything, anywhere, is seen.

  python tests/browser.py screenshots DIR   # the sample runs' pages as PNG screenshots
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from contextlib import suppress
from pathlib import Path

# Debian's package names its command chromium; elsewhere it may be one of the others.
NAMES = ("chromium", "chromium-browser", "google-chrome")
# Chromium's own background work (updates, sync, metrics, the network time, sign-in)
# is turned off or pointed at an address that takes no connection (0.0.0.0), so that
# any connection the sink sees is the page's.
NOWHERE = "http://0.0.0.0:1/"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-sync", "--disable-default-apps",
         "--disable-extensions", "--disable-component-extensions-with-background-pages",
         "--disable-domain-reliability", "--disable-client-side-phishing-detection",
         "--disable-field-trial-config", "--disable-breakpad", "--metrics-recording-only",
         "--no-default-browser-check", "--safebrowsing-disable-auto-update",
         "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,"
         "Translate,AutofillServerCommunication,OptimizationGuideModelDownloading,"
         "CertificateTransparencyComponentUpdater,DialMediaRouteProvider",
         f"--component-updater=url-source={NOWHERE},disable-background-downloads",
         f"--gaia-url={NOWHERE}", f"--lso-url={NOWHERE}", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--proxy-bypass-list=<-loopback>")
CONSOLE = re.compile(r":CONSOLE[:(\]].*")
TIMEOUT = 60


def chromium():
    """The path of a Chromium command, or None."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Sink:
    """A loopback TCP server that records every connection made to it, as it is
    accepted, then as the first line sent on it (a proxy's request line: ``GET
    http://host/path``, ``CONNECT host:443``), and answers 404.  A connection that
    sends nothing (a browser's speculative one) stays recorded as such."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.seen = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:  # closed
                return
            self.seen.append("(a connection, no request line yet)")
            threading.Thread(target=self._answer, args=(connection, len(self.seen) - 1),
                             daemon=True).start()

    def _answer(self, connection, index):
        with connection:
            connection.settimeout(5)
            try:
                first = connection.recv(4096).split(b"\r\n", 1)[0]
            except OSError:
                return
            self.seen[index] = first.decode("latin-1")
            with suppress(OSError):  # the browser may have gone
                connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
                                   b"Connection: close\r\n\r\n")

    def close(self):
        self.server.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def load(page, sink, screenshot=None, size=(900, 700), dark=False):
    """Load the HTML file ``page`` in headless Chromium, every connection sent to
    ``sink``: (the DOM after loading, as HTML; the console messages logged). With
    ``screenshot`` (a path) a PNG of the window is written there instead of the DOM
    (then "")."""
    with tempfile.TemporaryDirectory(prefix="ndagent-chromium-") as profile:
        argv = [chromium(), *FLAGS, f"--user-data-dir={profile}",
                f"--proxy-server=http://127.0.0.1:{sink.port}",
                f"--window-size={size[0]},{size[1]}"]
        if dark:
            argv.append("--force-dark-mode")
        argv.append(f"--screenshot={screenshot}" if screenshot else "--dump-dom")
        argv.append(Path(page).resolve().as_uri())
        done = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, cwd=profile,
                              env={**os.environ, "HOME": profile})
    log = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, log[-2000:]
    console = [found[0] for found in CONSOLE.finditer(log)]
    return done.stdout.decode("utf-8", "replace"), console


# The sample runs shown in the README: tests/fixtures/logs/AGENT.ndjson.
SAMPLES = ("cursor", "claude", "codex", "gemini")


def screenshots(folder):
    """Write FOLDER/AGENT.png of each sample run's page (light)."""
    root = Path(__file__).resolve().parent
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ndagent = Path(sys.executable).parent / "ndagent"
    with tempfile.TemporaryDirectory() as work, Sink() as sink:
        for agent in SAMPLES:
            page = Path(work) / f"{agent}.html"
            with page.open("wb") as out:
                # The sample's name as the page shows it, not this machine's path.
                subprocess.run([str(ndagent), "html", f"{agent}.ndjson"], stdout=out,
                               cwd=root / "fixtures" / "logs", check=False)
            target = folder / f"{agent}.png"
            load(page, sink, screenshot=target.resolve(), size=(900, 800))
            print(f"{target}: {target.stat().st_size:,} bytes")
        assert not sink.seen, sink.seen


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "screenshots":
        sys.exit(__doc__)
    if chromium() is None:
        sys.exit("browser.py: no chromium on PATH ('make chromium' installs Debian's)")
    screenshots(sys.argv[2])
