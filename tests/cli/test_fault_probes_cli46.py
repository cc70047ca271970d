"""Fault probes of the CLI (round 46).

- `--progress` forced with stderr a file wrote a bare newline (rich's transient bar, which
  cannot draw there): a user who asks for progress into a log file gets plain lines, a few,
  without a carriage return or an escape sequence.
- `convert -o - -f json` printed no report at all (stdout holds the log): the report, with the
  head digest, goes to stderr as one line, in the form asked; `-o FILE` keeps it on stdout.
- Run from a directory removed while the shell was in it, `view LOG -o page.html`, `convert`,
  `ingest -a DIR` and `audit --html` blamed the log they read, named by its absolute path and
  right there ("LOG: No such file or directory"): they name the current directory and why.
- `show - -f json <&-` said on stderr that standard input is closed, and left stdout empty: a
  program reading stdout gets the JSON error object there, as for every other failure.
- `show LOG --debug` (or `--version`) said only "No such option: --debug": the line says it is
  an option of buraco-log itself, given before the command.
- `simulate --seed --overwrite` took "--overwrite" as the seed and wrote the logs with it,
  exit 0 (`review --seed --jobs 1` said "Got unexpected extra argument(s) (1)"): an option
  given another option of the command as its value is a usage error naming both.
- `review --mistakes-only -f json` (or `-f html`) ignored the option and wrote every move: it
  is refused, as `replay --step -f json` is.
- `view -o /dev/stdout --open` wrote the page into stdout and sent /dev/stdout to a browser,
  where `-o -` is refused; `BURACO_LOG_NO_BROWSER=0` (and `CI=false`) kept the browser
  closed, "is set", where the other BURACO_LOG_* switches read 0 as off.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cli.probes import ROOT, cli_batch, one_error_line

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"
SIM = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
PROGRESS = re.compile(r"buraco-log: progress: (\w+): (\d+)/(\d+) (\w+) \((\d+)%\)(, .*)?")


def _progress_lines(err: str, what: str, unit: str) -> list[tuple[int, int]]:
    """The (done, total) of every progress line on ``err``: each line whole, no control code."""
    assert "\r" not in err and "\x1b" not in err, repr(err[:300])
    found = []
    for line in err.splitlines():
        if not line.startswith("buraco-log: progress: "):
            continue
        m = PROGRESS.fullmatch(line)
        assert m is not None and (m[1], m[4]) == (what, unit), line
        done, total = int(m[2]), int(m[3])
        assert int(m[5]) == done * 100 // total, line
        found.append((done, total))
    return found


def test_progress_forced_into_a_file_is_plain_lines_from_start_to_end(tmp_path: Path) -> None:
    """Before: stderr held "\\n" and nothing else, for simulate and review alike."""
    sim, review, unasked = cli_batch([
        ["simulate", "--matches", "10", "-o", tmp_path / "sim", "--progress"],
        ["review", SIM, "--seat", "0", "--budget", "1x1", "--progress", "-o",
         tmp_path / "r.txt"],
        ["simulate", "--matches", "2", "-o", tmp_path / "quiet"]], cwd=tmp_path,
        env={"TERM": "xterm"})
    assert sim.returncode == 0, sim.stderr
    seen = _progress_lines(sim.stderr, "simulate", "matches")
    # one line at the start and one per tenth: here one per match, not none
    assert seen == [(n, 10) for n in range(11)], seen
    assert "events/s" in sim.stderr.splitlines()[-1], sim.stderr
    assert review.returncode == 0, review.stderr
    seen = _progress_lines(review.stderr, "review", "decisions")
    total = seen[0][1]
    assert seen[0] == (0, total) and seen[-1] == (total, total) and 3 <= len(seen) <= 12, seen
    assert [d for d, _ in seen] == sorted(d for d, _ in seen), seen
    # not asked for, where nobody watches: nothing
    assert unasked.returncode == 0 and unasked.stderr == "", unasked.stderr


def _converts(*runs: list[object], cwd: Path) -> list[subprocess.CompletedProcess[bytes]]:
    """``buraco-log convert ARGS`` for each of ``runs``, all at once, output as bytes."""
    procs = [subprocess.Popen([sys.executable, "-m", "cli", "convert", *map(str, args)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                              stdin=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for args in runs]
    done = []
    for args, proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    return done


def test_convert_to_standard_output_says_its_report_on_stderr(tmp_path: Path) -> None:
    """Before: `-o -` said nothing of what it wrote, `-f json` too (the head digest was lost),
    while `-o FILE -f json` prints the report on stdout."""
    to_file, to_stdout, as_text = _converts(
        [GOLDEN, "-o", tmp_path / "m.blog", "-f", "json"],
        [GOLDEN, "-o", "-", "--to", "binary", "-f", "json"],
        [GOLDEN, "-o", "-", "--to", "binary"], cwd=tmp_path)
    assert to_file.returncode == 0 and to_file.stderr == b"", to_file.stderr
    report = json.loads(to_file.stdout)
    assert to_stdout.returncode == 0, to_stdout.stderr
    # the log itself on stdout, nothing beside it: the same bytes as the file
    assert to_stdout.stdout == (tmp_path / "m.blog").read_bytes()
    lines = to_stdout.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert json.loads(lines[0]) == {**report, "path": "-"}
    assert as_text.returncode == 0 and as_text.stdout == to_stdout.stdout
    assert as_text.stderr.decode() == f"<stdout>: 18 events, head {report['head']}\n"


def test_progress_lines_come_each_tenth_and_every_30_seconds_between() -> None:
    """A slow run (an hour's review) shows life between tenths, and a fast one is not a line
    per item."""
    import contextlib
    import io

    from cli.progress import EVERY, ProgressLines

    now = [0.0]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        lines = ProgressLines("review", "decisions", None, now=lambda: now[0])
        lines.update(0, 1000)
        for done in range(1, 1001):
            now[0] += 1.0 if done <= 50 else 0.01  # 50 s for the first 5%, then fast
            lines.update(done)
    said = err.getvalue().splitlines()
    assert said[0] == "buraco-log: progress: review: 0/1,000 decisions (0%)", said
    assert said[1].startswith(f"buraco-log: progress: review: {int(EVERY)}/1,000 decisions (3%), "
                              "0:00:30 elapsed, ETA 0:16:10"), said
    assert len(said) == 12 and said[-1].startswith("buraco-log: progress: review: 1,000/1,000 "
                                                    "decisions (100%)"), said


def test_the_rule_of_a_damaged_log_is_the_same_in_its_line_and_its_json(tmp_path: Path) -> None:
    torn = tmp_path / "torn.blog"
    torn.write_bytes(SIM.read_bytes()[:5000])
    (done,) = cli_batch([["verify", torn, "-f", "json"]], cwd=tmp_path)
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["rule"] == "log.torn"
    assert done.stderr.rstrip("\n").endswith(" [log.torn]") and done.stderr.count("\n") == 1


def _in_removed_directories(tmp_path: Path, *runs: list[object]
                            ) -> list[subprocess.CompletedProcess[str]]:
    """``buraco-log ARGS`` for each of ``runs``, all at once, each started in a directory
    removed before it runs (``rm -rf`` of the directory a shell is in)."""
    procs = []
    for n, args in enumerate(runs):
        gone = tmp_path / f"gone-{n}"
        gone.mkdir()

        def enter_and_remove(gone: Path = gone) -> None:
            os.chdir(gone)
            os.rmdir(gone)

        procs.append(subprocess.Popen(
            [sys.executable, "-m", "cli", *map(str, args)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=enter_and_remove))
    done = []
    for args, proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess([str(a) for a in args], proc.returncode, out,
                                                err))
    return done


def test_a_relative_output_in_a_removed_directory_names_the_directory(tmp_path: Path) -> None:
    """Before: "LOG: No such file or directory" (exit 2), naming a log that is right there."""
    log_file = tmp_path / "m.blog"
    log_file.write_bytes(SIM.read_bytes())
    *outputs, relative, absolute = _in_removed_directories(
        tmp_path, ["view", log_file, "-o", "page.html"], ["convert", log_file, "-o", "m.jsonl"],
        ["audit", log_file, "--html", "page.html"], ["show", "m.blog"],
        ["show", log_file, "-f", "json"])
    for done in outputs:
        line = one_error_line(done, 2)
        assert line == ("buraco-log: error: .: the current directory no longer exists: cd to "
                        "one, or give absolute paths"), (done.args, line)
    # a relative name that is not found says why too; absolute names work as anywhere
    line = one_error_line(relative, 2)
    assert line.endswith("m.blog: No such file or directory (the current directory no longer "
                         "exists: cd to one, or give absolute paths)"), line
    assert absolute.returncode == 0 and json.loads(absolute.stdout)["events"] == 539


def test_a_closed_standard_input_with_json_output_gives_the_error_object() -> None:
    """Before: stdout was empty (the line on stderr only)."""
    done = subprocess.run([sys.executable, "-m", "cli", "show", "-", "-f", "json"],
                          capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=lambda: os.close(0))
    line = one_error_line(done, 2)
    assert line.endswith("<stdin>: standard input is closed; give the log's path, or pipe the "
                         "log in"), line
    error = json.loads(done.stdout)["error"]
    assert (error["exit_status"], error["code"]) == (2, "usage"), error


def test_an_option_of_the_tool_after_the_command_says_where_it_goes(tmp_path: Path) -> None:
    """Before: "No such option: --debug", as if the tool had none."""
    debug, version = cli_batch([["show", SIM, "--debug"], ["rules", "show", "classic", "-V"]],
                               cwd=tmp_path)
    line = one_error_line(debug, 2)
    assert "No such option: --debug; --debug is an option of buraco-log itself: put it " \
           "before the command (buraco-log --debug show ...)" in line, line
    line = one_error_line(version, 2)
    assert "No such option: -V; -V is an option of buraco-log itself: buraco-log -V" in line


def test_mistakes_only_with_a_format_that_holds_every_move_is_refused(tmp_path: Path) -> None:
    """Before: exit 0 and every move, as if --mistakes-only was not given."""
    as_json, as_html = cli_batch([
        ["review", SIM, "--seat", "0", "--budget", "1x1", "--mistakes-only", "-f", "json"],
        ["review", SIM, "--seat", "0", "--budget", "1x1", "--mistakes-only", "-f", "html",
         "-o", tmp_path / "r.html"]], cwd=tmp_path)
    line = one_error_line(as_json, 2)
    assert "--mistakes-only lists the text review's flagged moves; --format json holds every " \
           'move (each with "flagged")' in line, line
    assert json.loads(as_json.stdout)["error"]["exit_status"] == 2
    assert "--format html holds every move" in one_error_line(as_html, 2)
    assert not (tmp_path / "r.html").exists()


def test_open_is_refused_with_a_page_written_into_a_stream(tmp_path: Path) -> None:
    """Before: `-o /dev/stdout --open` exit 0, the page on stdout and a browser sent to
    file:///dev/stdout (here: a note saying to open it)."""
    (done,) = cli_batch([["view", SIM, "-o", "/dev/stdout", "--open"]], cwd=tmp_path,
                        env={"DISPLAY": ":0", "BROWSER": "true"})
    line = one_error_line(done, 2)
    assert line == "buraco-log: error: --open needs a file to open; it cannot go with -o " \
                   "/dev/stdout", line
    assert done.stdout == ""


def test_a_switch_set_to_0_or_false_is_off() -> None:
    from cli.view_cmd import why_not_open

    display = {"DISPLAY": ":0"}
    for off in ("0", "false", "No", "off", " "):
        assert why_not_open({**display, "BURACO_LOG_NO_BROWSER": off}, "linux") is None, off
        assert why_not_open({**display, "CI": off}, "linux") is None, off
    assert why_not_open({**display, "BURACO_LOG_NO_BROWSER": "yes"}, "linux") == \
        "BURACO_LOG_NO_BROWSER is set"


def test_an_option_given_another_option_as_its_value_is_a_usage_error(tmp_path: Path) -> None:
    """Before: the seed "--overwrite", the logs written, exit 0."""
    sim, review, meant, ended = cli_batch([
        ["simulate", "-o", tmp_path / "sim", "--seed", "--overwrite"],
        ["review", SIM, "--seat", "0", "--seed", "--jobs", "1", "--budget", "1x1"],
        ["review", SIM, "--seat", "0", "--seed=--jobs", "--budget", "1x1", "-f", "json"],
        ["convert", "-o", "--", SIM]], cwd=tmp_path)
    line = one_error_line(sim, 2)
    assert line == ("buraco-log: usage: --seed needs a value: --overwrite is an option, not its "
                    "value (if it is the value, write --seed=--overwrite) (see `buraco-log "
                    "simulate --help`)"), line
    assert not (tmp_path / "sim").exists()
    assert "--seed needs a value: --jobs is an option" in one_error_line(review, 2)
    assert meant.returncode == 0 and json.loads(meant.stdout)["seed"] == "--jobs", meant.stderr
    # "--" taken as the output: the log converted into a file named "--"
    assert "-o needs a value: -- ends the options" in one_error_line(ended, 2)
    assert not (tmp_path / "--").exists()
