"""Fault probes of the referee's page and the log's signatures.

- Neither `view` nor `audit --html` said whether the log was signed: a page of a log signed
  and verified by the site's trusted key, of an unsigned log, of one re-signed by another key
  and of one whose tail no signature covers looked the same (only `sign.*` findings showed, as
  marks at a seq of the audit's page). A referee who printed it for a hearing could not tell
  them apart. The page now says it under the head digest, one line from what the audit's own
  check finds; `view` takes audit's --keys and --receipt, and without keys says the
  signatures were not checked, never "verified".
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import signing_options
from buraco_log.view import page_for_log
from tests.signing.helpers import audit, held
from tests.view.pages import data_of
from tests.view.signed_logs import SignedLogs

ROOT = Path(__file__).parents[2]
BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> SignedLogs:
    return SignedLogs(tmp_path_factory.mktemp("sigpage58"))


def _expected(logs: SignedLogs) -> dict[tuple[str, bool], list[str]]:
    """(log, keys given) -> what its line must say."""
    k, f, n, t = logs.site.key_id, logs.forger.key_id, logs.last, logs.tail_at
    return {
        ("signed", True): ["verified", f"by key {k} (trusted)", f"seq 0 to {n} covered"],
        ("signed", False): ["NOT checked", "--keys", f"by key {k}", f"after seq {n}"],
        ("unsigned", True): ["unsigned"],
        ("unsigned", False): ["unsigned"],
        ("resigned", True): ["NOT verified", f"by key {f}", "sign.untrusted"],
        ("resigned", False): ["NOT checked", f"by key {f}"],
        ("tail", True): ["verified", f"seq 0 to {t} covered",
                         f"seq {t + 1} to {n} covered by no signature"],
        ("tail", False): ["NOT checked", f"seq {t + 1} to {n} covered by no signature"],
    }


def _check(line: str, want: list[str], verified: bool) -> None:
    for words in want:
        assert words in line, (words, line)
    # "verified" only where the audit with the site's keys verified every signature
    assert bool(re.search(r"(?<!NOT )verified", line)) == verified, line


def test_the_page_says_whether_the_log_is_signed_and_verified(logs: SignedLogs) -> None:
    keyed = signing_options([str(logs.keys)])
    for (name, with_keys), want in _expected(logs).items():
        path = getattr(logs, name)
        line = data_of(page_for_log(path, signing=keyed if with_keys else None).html)[
            "signing"]  # was: no such key, the page said nothing of the signatures
        # the same answer as the audit's, which the line is said from
        verdict = audit(path, keyed.keyring if with_keys else None)
        _check(line, want, verdict.signing.verified is True)
    # a player's receipt: the site's log extends it; the re-signed one does not
    receipts = dataclasses.replace(keyed, receipts=(held(logs.receipt),))
    for name, want in (("signed", "1 receipt checked: the log extends it"),
                       ("resigned", "1 receipt checked: a receipt disagrees "
                                    "[sign.receipt_changed]")):
        line = data_of(page_for_log(getattr(logs, name), signing=receipts).html)["signing"]
        assert want in line, line
    # a seat's copy says it too: it names no card
    seat = data_of(page_for_log(logs.resigned, seat=1, signing=keyed).html)["signing"]
    assert "sign.untrusted" in seat


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
def test_view_and_audit_html_take_the_audits_keys(logs: SignedLogs, tmp_path: Path) -> None:
    exp = _expected(logs)
    for name in ("signed", "resigned", "tail"):
        page = tmp_path / f"{name}.html"
        done = _cli("view", getattr(logs, name), "--keys", logs.keys, "-o", page)
        assert done.returncode == 0, done.stderr  # was: no such option --keys (exit 2)
        _check(data_of(page.read_bytes())["signing"], exp[name, True], name != "resigned")
        audited = tmp_path / f"audit-{name}.html"
        done = _cli("audit", getattr(logs, name), "--keys", logs.keys, "--html", audited)
        assert audited.is_file(), done.stderr
        # the audit's page says what its verdict found (was: nothing)
        _check(data_of(audited.read_bytes())["signing"], exp[name, True], name != "resigned")
    # a receipt needs keys, as audit says it; a bad key folder is one line, exit 2
    receipt = tmp_path / "r.json"
    receipt.write_text("{}")
    for args in (("--receipt", receipt), ("--keys", tmp_path / "none")):
        done = _cli("view", logs.signed, *args, "-o", tmp_path / "x.html")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "x.html").exists()


def _pdf_text(browser: Any, page: Path) -> str:
    import base64

    from tests.view.pdftext import pdf_pages

    browser.get("about:blank")
    browser.get(page.as_uri())
    pages = pdf_pages(base64.b64decode(browser.print_page()))
    return unicodedata.normalize("NFKC", " ".join(p.text() for p in pages))


def _spoken(browser: Any) -> str:
    """Every name in the page's accessibility tree, as a screen reader reads them."""
    tree = browser.execute_cdp_cmd("Accessibility.getFullAXTree", {})
    return " ".join(str(n.get("name", {}).get("value", "")) for n in tree["nodes"]
                    if not n.get("ignored"))


@BROWSER
@pytest.mark.slow
def test_the_signing_line_prints_and_is_read_aloud(browser: Any, logs: SignedLogs,
                                                   tmp_path: Path) -> None:
    from buraco_log.view import write_page

    keyed = signing_options([str(logs.keys)])
    for (name, with_keys), want in _expected(logs).items():
        page = tmp_path / f"{name}-{with_keys}.html"
        html = page_for_log(getattr(logs, name), signing=keyed if with_keys else None).html
        write_page(page, html)
        line = data_of(html)["signing"]
        printed = re.sub(r"\s+", " ", _pdf_text(browser, page))
        for words in ("Signing:", *want):  # was: none of it on paper
            assert words in printed, (words, printed[:600])
        assert browser.find_element("id", "logsign").is_displayed()
        assert line in _spoken(browser), line
        # the page's policy stays strict: no script or style from anywhere, no request
        csp = re.search(r'Content-Security-Policy" content="([^"]+)"', html)
        assert csp is not None and "default-src 'none'" in csp[1]
        assert "'unsafe-eval'" not in csp[1] and "http" not in csp[1]


def test_a_damaged_log_is_not_said_to_hold_no_signature() -> None:
    # the read stops at the damage: a signature past it was never read (was: "unsigned: the
    # log holds no signature", of a log whose signed part may be the one cut off)
    line = data_of(page_for_log(ROOT / "examples" / "disputes" / "tampered.log").html)[
        "signing"]
    assert "read intact" in line and "holds no signature" not in line, line
