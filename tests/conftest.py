import collections
import os
import sys

# Make tests/oracle.py importable as `oracle` from every test module.
sys.path.insert(0, os.path.dirname(__file__))


def pytest_terminal_summary(terminalreporter):
    """One line saying why tests were skipped (`make test` runs quiet, so a bare count such
    as '3 skipped' would otherwise be all one sees): missing optional tools or extras, or
    a bound's question-dependent condition (a closed form's range of delta)."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    reasons = collections.Counter()
    for rep in skipped:
        lr = rep.longrepr
        reason = lr[2] if isinstance(lr, tuple) and len(lr) == 3 else str(lr)
        reason = reason.removeprefix("Skipped: ").split(" (")[0]
        reasons[reason if len(reason) <= 80 else reason[:77] + "..."] += 1
    terminalreporter.write_line(
        f"skipped {len(skipped)}, by reason: "
        + "; ".join(f"{n} x {r}" for r, n in reasons.most_common()))
