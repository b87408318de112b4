// The driver's in-page helpers (book.browser): every script that Browser.call runs sees this
// object as `book`; Browser.wait_for_mathjax runs mathjaxDoneInPage.
({
  sleep(ms) { return new Promise(r => setTimeout(r, ms)); },

  // Polls pred every 25 ms (errors count as false) for at most ms: whether it became true.
  async waitFor(pred, ms) {
    const t0 = Date.now();
    while (Date.now() - t0 < ms) {
      try { if (pred()) return true; } catch (e) {}
      await this.sleep(25);
    }
    return false;
  },

  // Resolves when MathJax 2 in window w has typeset its page (its "End" startup hook, then
  // Hub.Queue), at once when the page does not load MathJax. The errors MathJax signals on
  // the way, and a MathJax.js that never loads, are pushed to messages.
  async mathjaxDone(w, messages) {
    if (!w.document.querySelector("script[src*='MathJax.js']")) return;
    const ok = await this.waitFor(() => w.MathJax && w.MathJax.Hub && w.MathJax.Hub.Register,
                                  10000);
    if (!ok) { messages.push("MathJax.js did not load"); return; }
    w.MathJax.Hub.signal.Interest(function (m) {
      const s = (Array.isArray(m) ? m : [m]).map(String);
      if (/error/i.test(s[0])) messages.push(s.slice(0, 2).join(": ").slice(0, 200));
    });
    await new Promise(resolve => w.MathJax.Hub.Register.StartupHook("End", function () {
      w.MathJax.Hub.Queue(function () { setTimeout(resolve, 0); });
    }));
  },

  // The same for the page itself: the messages.
  async mathjaxDoneInPage() {
    const messages = [];
    await this.mathjaxDone(window, messages);
    return messages;
  },
})
