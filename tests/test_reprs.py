"""What a notebook or a console shows for results: readable reprs, HTML, whole names."""

import shuffledp as sd
from shuffledp.accounting.ledger import EntryShare, LedgerResult

LONG = "dp_accounting:PoissonSampledDpEvent"


def _ledger_result(**kw):
    entries = (EntryShare("daily telemetry", 30, "blanket", 0.001, "k-RR"),
               EntryShare("weekly survey", 52, "fmt20-sampled", 0.016, "ldp"),
               EntryShare("server-side Gaussian steps", 1000, LONG, 0.983, "central"))
    base = dict(question="epsilon", epsilon=2.83485, delta=1e-6, composition="pld",
                kind="upper", valid_for="a AND b AND c " * 20,
                relation="replace-one (neighbouring datasets differ in one record)",
                entries=entries, composers=(("pld", 2.83485, None, 1.5),
                                            ("rdp", None, "needs an RDP view", 0.0)),
                share_basis="expected privacy loss (KL)")
    base.update(kw)
    return LedgerResult(**base)


def test_compose_table_prints_bound_names_whole():
    table = _ledger_result().table()
    row = next(l for l in table.splitlines() if "server-side" in l)
    assert LONG in row.split()
    header = next(l for l in table.splitlines() if "rounds" in l and "bound" in l)
    assert header.index("bound") == row.index(LONG) == table.splitlines()[-2].index("fmt20-sampled")


def test_ledger_result_repr_is_a_few_readable_lines():
    text = repr(_ledger_result())
    lines = text.splitlines()
    assert lines[0].startswith("LedgerResult(epsilon=2.83485 at delta=1e-06, upper bound")
    assert "relation='replace-one'" in lines[1]
    assert all(len(l) <= 100 for l in lines), max(map(len, lines))
    assert sum(1 for l in lines if " x " in l) == 3           # one line per entry
    assert any(LONG in l and "98.3%" in l for l in lines) and text.endswith(")")


def test_ledger_result_html_has_the_answer_composers_and_entries():
    html = _ledger_result()._repr_html_()
    assert "epsilon=2.83485 at delta=1e-06" in html
    assert html.count("<table>") == 2 and LONG in html and "98.3%" in html
    assert "font-weight:bold'><td>pld" in html        # the winning composer stands out
    assert "replace-one" in html


def test_calibration_html_states_value_guarantee_bound_and_relation():
    c = sd.calibrate.users(sd.LDP(2.0), epsilon=0.5, delta=1e-6)
    html = c._repr_html_()
    assert f"<b>users = {int(c.value)}</b>" in html
    assert f"{c.epsilon:.6g} &lt;= target 0.5" in html and c.bound in html
    assert "replacement" in html and "alone would allow users" in html


def test_calibration_html_of_sigma_gives_the_noise_multiplier_too():
    c = sd.calibrate.sigma(n=1000, epsilon=2.0, delta=1e-5)
    html = c._repr_html_()
    assert f"<b>sigma = {c.value:.8g}</b>" in html
    assert f"noise multiplier</th><td>{2 * c.value:.8g}" in html     # z = 2 sigma
