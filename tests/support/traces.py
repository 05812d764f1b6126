"""Stack traces as five runtimes print them (Python's through the shop of ``project.py``): one
set of samples for the tests that read traces and for those that read them as logs deliver
them, and :func:`finds_the_raise_site`, what each of those expects of the shop's answer."""

from __future__ import annotations

from pathlib import Path

from code_evidence.api import FindRequest, FindResult
from code_evidence.engine import Engine

PY = """Traceback (most recent call last):
  File "/home/dev/shop/app.py", line 3, in <module>
    main()
  File "/home/dev/shop/src/shop/cart.py", line 20, in total
    subtotal -= subtotal * discount_for(self.code)
  File "/home/dev/shop/src/shop/pricing.py", line 6, in discount_for
    if code.startswith("VIP"):
AttributeError: 'NoneType' object has no attribute 'startswith'"""

JS = """TypeError: Cannot read properties of undefined (reading 'id')
    at getUser (/app/src/users.ts:42:17)
    at async handler (file:///app/src/routes/index.js:10:3)"""

GO = """panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.lookup(...)
\t/home/u/proj/cmd/tool/main.go:12 +0x1d
main.main()
\t/home/u/proj/cmd/tool/main.go:20 +0x25"""

RUST = """thread 'main' panicked at src/parser.rs:88:14:
called `Option::unwrap()` on a `None` value"""

JAVA = """Exception in thread "main" java.lang.IllegalStateException: Queue full for group orders
\tat com.acme.queue.Broker.offer(Broker.java:57)
\tat com.acme.App.main(App.java:12)"""


def finds_the_raise_site(project: Path, index: Path, query: str) -> FindResult:
    """The shop's answer to ``query``, a paste of :data:`PY`'s failure however delivered: the
    function that raised it first, read from the trace's innermost frame, and not refused."""
    with Engine(project, index) as eng:
        res = eng.find(FindRequest(query))
    top = res.results[0]
    assert (top.path, top.symbol) == ("src/shop/pricing.py", "discount_for")
    assert "innermost-frame" in top.reasons
    assert top.line == 6  # it opens at the innermost frame's line, not at the def
    assert not res.insufficient, res.insufficient_reason
    return res
