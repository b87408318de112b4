"""The one headless-Chromium driver of the book's checks (tests/site/check_site.py and
check_live.py): one Chromium with one page, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe, fds 3 and 4), with Python's standard library only.

    with Browser(width=1280, height=900) as browser:
        browser.open("file:///.../ch01.html")          # waits for the load event
        browser.call("checks.js", "widgets", {...})    # a function of a .js file, JSON arguments
        browser.console_errors()                       # exceptions, console.error, log errors
        browser.screenshot("out.png")
        browser.print_pdf("page.pdf")                    # as printed (book.pdf)

In-page JavaScript lives in .js files: a file is one object literal of named functions, and
call() runs one of them with JSON arguments, awaiting a promise it returns. The driver's own
helpers (helpers.js beside this file: waiting for a condition, for MathJax) are in scope there
as `book`.

find_chromium() is None when Chromium is not installed: the checks then exit 77 (ctest's
SKIP_RETURN_CODE).
"""
import base64
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

HELPERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers.js")

# Keys press() knows: (key, code, Windows key code, text typed).
KEYS = {"Tab": ("Tab", "Tab", 9, ""), "Enter": ("Enter", "Enter", 13, "\r"),
        "Space": (" ", "Space", 32, " "), "Escape": ("Escape", "Escape", 27, ""),
        "ArrowLeft": ("ArrowLeft", "ArrowLeft", 37, ""), "ArrowUp": ("ArrowUp", "ArrowUp", 38, ""),
        "ArrowRight": ("ArrowRight", "ArrowRight", 39, ""),
        "ArrowDown": ("ArrowDown", "ArrowDown", 40, "")}

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--disable-extensions", "--mute-audio",
         "--remote-debugging-pipe"]


class BrowserClosed(RuntimeError):
    """Chromium went away (crashed or was killed); the message ends with what it wrote."""


def find_chromium():
    """The Chromium to run ($CHROMIUM first), or None."""
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """One headless Chromium with one page of width x height CSS pixels."""

    def __init__(self, width, height, exe=None, hide_scrollbars=False):
        exe = exe or find_chromium()
        if not exe:
            raise RuntimeError("chromium not found (apt-get install chromium)")
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()

        def child():
            a, b = os.dup(cmd_r), os.dup(out_w)  # dup2 onto 3 and 4 without clobbering
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.profile = tempfile.mkdtemp(prefix="book-chromium-")
        self.log = tempfile.TemporaryFile()  # Chromium's own output, for the reason it died
        flags = FLAGS + ["--user-data-dir=" + self.profile,
                         "--window-size=%d,%d" % (width, height)]
        if hide_scrollbars:
            flags.append("--hide-scrollbars")
        # its own process group, so that close() stops the browser with all its children
        self.proc = subprocess.Popen([exe] + flags + ["about:blank"], preexec_fn=child,
                                     close_fds=False, stdout=self.log, stderr=self.log,
                                     start_new_session=True)
        os.close(cmd_r)
        os.close(out_w)
        self._buf, self._id, self.events, self._scripts = b"", 0, [], {}
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget",
                                     {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page"):
                self.page(domain + ".enable")
            self.set_viewport(width, height)
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, method, params=None, session=None, timeout=None):
        """A DevTools command and its result; events that arrive meanwhile are kept."""
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        try:
            os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        except BrokenPipeError:
            raise self._closed() from None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"].get("message")))
                return m["result"]
            if "method" in m:  # an event; a late answer to a command that timed out is dropped
                self.events.append(m)

    def _read(self, deadline=None):
        while b"\0" not in self._buf:
            if deadline is not None and not select.select(
                    [self._out_r], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise self._closed()
            self._buf += chunk
        m, self._buf = self._buf.split(b"\0", 1)
        return json.loads(m)

    def _closed(self):
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        return BrowserClosed("Chromium exited early (status %s):\n%s" % (status, self.log_tail()))

    def page(self, method, params=None, timeout=None):
        """A command to the page (its session)."""
        return self.send(method, params, session=self.session, timeout=timeout)

    def open(self, url):
        """Navigates to url and waits for its load event (also without JavaScript)."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.page("Page.navigate", {"url": url})
        while not any(e["method"] == "Page.loadEventFired" for e in self.events):
            m = self._read()
            if "method" in m:
                self.events.append(m)

    def evaluate(self, expression, timeout=None):
        """The value of a JavaScript expression in the page (a promise is awaited);
        TimeoutError after timeout seconds."""
        r = self.page("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                           "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise RuntimeError(d.get("exception", {}).get("description") or d.get("text"))
        return r["result"].get("value")

    def call(self, script, function, *args, timeout=None):
        """Runs function(*args) of a .js file (an object literal of functions), the arguments
        passed as JSON, the driver's helpers in scope as `book`."""
        for path in (HELPERS, script):
            if path not in self._scripts:
                with open(path, encoding="utf-8") as f:
                    self._scripts[path] = f.read().strip().rstrip(";")
        return self.evaluate("(() => { const book = %s;\nreturn (%s)[%s](...%s); })()" % (
            self._scripts[HELPERS], self._scripts[script], json.dumps(function),
            json.dumps(list(args))), timeout=timeout)

    def preload(self, script):
        """Runs a script file in every document the page opens from now on, frames included,
        before the document's own scripts (e.g. axe-core, for the accessibility check)."""
        with open(script, encoding="utf-8") as f:
            self.page("Page.addScriptToEvaluateOnNewDocument", {"source": f.read()})

    def press(self, key, shift=False):
        """Presses and releases a key of KEYS as a reader does (Shift held with shift=True):
        the browser moves focus on Tab, activates a focused button on Space or Enter,
        moves a focused slider on an arrow key."""
        name, code, vk, text = KEYS[key]
        common = {"key": name, "code": code, "windowsVirtualKeyCode": vk,
                  "nativeVirtualKeyCode": vk, "modifiers": 8 if shift else 0}
        self.page("Input.dispatchKeyEvent", dict(common, type="keyDown" if text else "rawKeyDown",
                                                 text=text, unmodifiedText=text))
        self.page("Input.dispatchKeyEvent", dict(common, type="keyUp"))

    def accessible(self, expression):
        """What assistive technology is told of the element an expression evaluates to
        (e.g. document.activeElement), from Chromium's accessibility tree: {role, name}
        (None for what is not an element or is not in the tree). (The tree's "valuetext" is
        not a slider's aria-valuetext in Chromium 156: read that attribute instead.)"""
        r = self.page("Runtime.evaluate", {"expression": expression})["result"]
        if r.get("subtype") != "node":
            return None
        try:
            nodes = self.page("Accessibility.getPartialAXTree",
                              {"objectId": r["objectId"], "fetchRelatives": False})["nodes"]
        finally:
            self.page("Runtime.releaseObject", {"objectId": r["objectId"]})
        node = next((n for n in nodes if not n.get("ignored")), None)
        if node is None:
            return None
        value = lambda field: str(node.get(field, {}).get("value", ""))
        return {"role": value("role"), "name": value("name")}

    def wait_for_mathjax(self, timeout=None):
        """Waits until MathJax (if the page loads it) has typeset the page: the errors it
        signalled."""
        return self.call(HELPERS, "mathjaxDoneInPage", timeout=timeout)

    def console_errors(self):
        """Errors logged since the last call: exceptions, console.error, browser log errors."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append("uncaught: " + (d.get("exception", {}).get("description") or d["text"]))
            elif e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p["args"])))
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append("log: %s (%s)" % (p["entry"]["text"], p["entry"].get("url", "")))
        self.events = []
        return out

    def set_viewport(self, width, height):
        """The page's size in CSS pixels (a desktop, scale 1)."""
        self.page("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self, path, clip=None):
        """A PNG of the viewport, or of clip {x, y, width, height} in page coordinates."""
        params = {"format": "png"}
        if clip:
            params.update(captureBeyondViewport=True, clip=dict(clip, scale=1))
        data = self.page("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    # ---- a reader's hands (press, above; typing and clicks) as Chromium receives them from a
    # person (focus moves on Tab, Enter follows a focused link), not events made up in the page.
    def type(self, text):
        """Types text into the focused element (an input event, as from a keyboard)."""
        self.page("Input.insertText", {"text": text})

    def click(self, x, y):
        """A left click at (x, y), CSS pixels of the viewport."""
        for kind in ("mousePressed", "mouseReleased"):
            self.page("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                                   "button": "left", "clickCount": 1})

    def navigation(self, action, timeout=20):
        """Runs action() (a key press, a click) and waits for the page it opens to load;
        False if none loaded within timeout seconds."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        action()
        deadline = time.monotonic() + timeout
        while not any(e["method"] == "Page.loadEventFired" for e in self.events):
            try:
                m = self._read(deadline)
            except TimeoutError:
                return False
            if "method" in m:
                self.events.append(m)
        return True

    def print_pdf(self, path, timeout=120):
        """The page as printed (its print style, A4, backgrounds, the page size its CSS asks
        for), written to path as a PDF."""
        data = self.page("Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True,
                                             "paperWidth": 8.27, "paperHeight": 11.69},
                         timeout=timeout)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def log_tail(self, n=2000):
        """The last n characters Chromium wrote to stdout/stderr."""
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-n:]

    def close(self):
        """Stops Chromium (its whole process group) and removes its profile."""
        if self.proc.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    self.proc.wait(timeout=5)
                    break
                except subprocess.TimeoutExpired:
                    pass
        for fd in (self._cmd_w, self._out_r):
            if fd is not None:
                os.close(fd)
        self._cmd_w = self._out_r = None
        shutil.rmtree(self.profile, ignore_errors=True)
