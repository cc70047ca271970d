"""Write docs/cli.md from the command line itself: `python -m cli.docgen > docs/cli.md`.

Every command, argument and option comes from the typer app, so the page cannot drift from the
tool (tests/docs/test_cli_reference.py compares the two).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import typer

from cli import jsonkeys
from cli.main import HIDDEN, app

INTRO = """\
# Command-line reference

Made by `python -m cli.docgen > docs/cli.md` from the commands themselves; a test fails when
the two differ. For a guided start, see the [README](../README.md).

## Conventions

Every command follows the same rules:

- **Exit status**, the same for every command:
  - `0`: fine. A log of a match that never received an event (a header alone, an empty file)
    is no finding.
  - `1`: the log or archive has a finding: damage (a file that begins as a log, then holds a
    record that does not decode, an integer outside the signed 64-bit range among them), an
    illegal move, a wrong score, a refused ingest (`show`, `replay` and `view` first show what
    is intact and legal). Also: an output could not be written (a full disk), or an internal
    error.
  - `2`: a usage error (a bad option, a missing command, an `audit` directory holding no
    log), or an input that is not readable as
    a log (a missing path, a directory, a FIFO, a read error such as EIO, a file that does not
    begin like a log, a format version newer than this tool; as an archive: no archive, or
    one of a layout version this tool does not read), or a seq, hand, turn or seat
    the match does not have (a match not started has none). A name too long for any file,
    or a loop of symbolic links, is `2` too, whatever the file is for (a log, a rules file, a
    key, an output); so is an output that cannot be made where it is named (a missing
    directory, one without write permission, a read-only file system), nothing written. A
    write that fails part-way (a full disk) is `1`.
  - `--at N` of a log with an illegal event, the same for `explain`, `replay`, `moves` and
    `view`: a seq the log does not hold is `2`, whatever else the log holds; a seq it holds
    past the first illegal event is a finding, `1` (its JSON error names the `rule`); a seq
    before it is answered, `0`, the illegal event noted on stderr (`explain` of the illegal
    event itself explains it, `0`). So is `replay --hand H [--turn T]`: a hand the log holds
    past the illegal event is `1`. A damaged log whose reading stopped short of its end (a
    torn tail, a record that does not decode; `view` without `--ignore-integrity` stops at
    the first damage): a seq, hand or turn past the events read is a finding, `1`, naming
    the damage's rule (`log.torn`, `log.decode`, `log.jsonl`, ...), as `verify` names it: the
    unread part may hold it. A changed log read anyway to its end (`--ignore-integrity`) holds
    no seq past its last event: `2`.
    Any seq of a log that failed its integrity check, read anyway, is shown and is a finding,
    `1`, in `replay`, `moves` and `view`: the log is not sound (`explain` answers, `0`).
  - `130`: interrupted (Ctrl-C, SIGINT); `143`: terminated (SIGTERM); `129`: hung up
    (SIGHUP: the terminal or ssh session closed; a SIGHUP the process ignores, as under
    `nohup`, stays ignored). Each is one line and the command's clean-up, as for Ctrl-C. A
    SIGTERM or SIGHUP in the first tens of milliseconds, before Python has run any of
    buraco-log's code, ends the process by the signal itself, without a line (a shell still
    reports 143 or 129); nothing is read or written by then.
  - `141`: standard output was closed by its reader (`| head`): the command stops quietly,
    `--help` too. Started without standard output (`>&-`), or onto a full device
    (`/dev/full`), it is `1`, one line naming `<stdout>`; a write that standard output takes
    only in part (a reader gone midway, a file size limit) is never taken for a whole one,
    `PYTHONUNBUFFERED=1` or not.
- **Errors** are one line on stderr, `buraco-log: error: FILE, byte N, seq S: ... [rule]` (an
  illegal move's: `FILE: seq S: ... [rule]`; notes alike), the rule last, with nothing
  half-written; a defect of the tool itself says `internal error` (exit 1). `--debug`
  (before the command) prints the traceback before that line; the exit status stays the same.
  Report lines on stdout are data, not errors: a finding there names its place, then its rule,
  then what happened (`audit`'s `seq N [rule] message`, `ingest`'s `refused: FILE: seq N [rule]
  message`).
- **`--format json`** (`-f json`) prints stable JSON (sorted keys) on stdout; `-f table` and
  `-f text` are the same words for people. On failure, stdout holds `{"error": {"code",
  "message", "exit_status", ...}}` beside the line on stderr, so a program reading stdout
  always gets JSON; an interrupt too (`"exit_status": 130`). An answer streamed an item at a
  time (`audit` and `verify` of several logs, `query -f json` and `-f jsonl`) that a failure
  or an interrupt cuts short ends with that object as its last item (JSON Lines: its last
  line), which no verdict or row is: the list parses, and is never taken for whole.
- **`-`** in place of a log reads it from standard input (binary or JSON Lines, told apart by
  the first bytes); `-o -` writes to standard output (not for `simulate`, which writes a
  directory of logs, nor `demo`, whose report is on standard output); bytes for programs (a
  binary log, `query -f parquet`) go there into a pipe or a file, never onto a terminal (exit
  2, as gzip refuses). A report that goes to stdout beside a file (`convert`'s events and
  head digest) goes to stderr instead when stdout holds the data, as one line (`-f json`: one
  line of JSON). `seal` and `repair`
  rewrite a file in place and take no `-`. Standard input that is a terminal is refused at
  once (exit 2): nobody types a log. Standard input that is a directory
  (`show - < DIR`) is refused by Python itself before buraco-log starts, in Python's words
  (`Fatal Python error: init_sys_streams: <stdin> is a directory`, exit 1): no program
  Python runs can say otherwise.
- **`-o`/`--output`** always names what the command writes (`--out` is read as `--output`,
  an older spelling kept out of the help). A command that writes logs
  (`convert`, `simulate`, `demo`) never replaces a file unless told so (`--overwrite`). A page
  or a report (`view`, `review`, `audit --html`, `query`, `report`) replaces the file it names,
  written whole beside it and renamed, but never a file that holds a match log (exit 2). A
  FIFO, or a path in /dev such as `/dev/stdout`, named as the output of `convert`, `view`,
  `review`, `audit --html`, `query` or `report` is written into as it is; a FIFO that no
  program opens for reading within 10 s is an error (exit 1), nothing written, not a wait for
  ever. A name of the command's own standard output or error (`/dev/stdout`, `/dev/stderr`,
  `/dev/fd/N`) is written where that output stands, as `-o -` writes, after what the shell
  already put there (`{ echo title; buraco-log query ... -o /dev/stdout; } > out`), never
  cut short; `report -f html` writes no match pages beside such an output. A symbolic
  link named as an output is written through by every command (a link to a shared folder
  stays one): the file it names is replaced, or made if it does not exist yet; `demo` and
  `simulate` refuse a link to a FIFO or a device (exit 2), as they write only files.
- **An empty name** (`''`, as an unset shell variable gives) as a log, a key or page path, or
  `-o` of the log commands (all but the archive's) is a usage error naming the argument or
  option (exit 2); it is never taken as the current directory.
- **Paths and names are printed safely**: a control or bidi character in a path, or in a name
  read from a log, is shown as an escape (`\\x1b`), on stdout as in errors. Output is UTF-8
  whatever the locale says (`LC_ALL=C`, `PYTHONIOENCODING=ascii`); a byte of a file name that
  is not UTF-8 is shown `\\xNN`, in `--format json` too (the text `a\\xff.log`, as the
  archive's `source_path` holds it: JSON has no way to hold the byte itself, and the lone
  surrogate `\\udcff` Python would write is refused by strict JSON readers). Arguments are
  read as UTF-8 too: under `LC_ALL=C PYTHONUTF8=0` the command starts again in Python's UTF-8
  mode, so `--seed Zoë` is the same seed, and gives the same logs, in every locale.
- **`--at N`** names a seq (`--seq N` is read as `--at N`: every error line says `seq N`).
- **`--jobs N`** (`-j`): worker processes; `0` is one per CPU, at most 8 (the default, but for
  `review`, which uses one unless told).
- **The archive** is `--archive DIR` (`-a`) for every archive command, or the environment
  variable `BURACO_LOG_ARCHIVE`; `query` and `report` also take it as their first argument.
- **Progress bars** go to stderr, and only when stderr is a terminal that can redraw one
  (not `TERM=dumb`); data goes to stdout. `--progress` (`audit`, `ingest`, `verify` of
  several logs, `simulate`, `review`) forced where no bar can be drawn (a file, a pipe, a
  cron job's log, `TERM=dumb`) writes plain lines instead, without control codes:
  `buraco-log: progress: WHAT: DONE/TOTAL UNIT (P%), H:MM:SS elapsed, ETA H:MM:SS`, one
  at the start, at each tenth done, at the end, and at least every 30 s between them.
  `NO_COLOR` is respected, and nothing is coloured when stdout is not a terminal.
"""


def _command() -> Any:
    return typer.main.get_command(app)


def _walk(group: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    for name in sorted(group.commands):
        command = group.commands[name]
        if name in HIDDEN or getattr(command, "hidden", False):
            continue
        path = f"{prefix} {name}"
        if hasattr(command, "commands"):
            yield from _walk(command, path)
        else:
            yield path, command


def _option(param: Any, ctx: Any) -> str:
    """One option as the help shows it: its names, its value, its help and default."""
    record = param.get_help_record(ctx)
    if record is None:
        return ""
    names, text = record
    return f"- `{names}`: {_one_line(text)}"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def render() -> str:
    root = _command()
    out = [INTRO]
    root_ctx = typer.Context(root, info_name="buraco-log")
    out.append("## Global options\n")
    for param in root.params:
        if param.name in ("install_completion", "show_completion"):
            continue
        out.append(_option(param, root_ctx))
    out.append("- `--install-completion`, `--show-completion`: shell completion (preset names "
               "complete for `rules show`).")
    out.append("- `help [COMMAND]`: the same as `--help`, or `COMMAND --help` (`buraco-log help "
               "rules show`).\n")
    out.append("## Commands\n")
    commands = list(_walk(root, "buraco-log"))
    for path, _ in commands:
        out.append(f"- [`{path}`](#{path.replace(' ', '-')})")
    out.append("")
    for path, command in commands:
        ctx = typer.Context(command, info_name=path, parent=root_ctx)
        out.append(f"## {path}\n")
        pieces = " ".join(command.collect_usage_pieces(ctx))
        out.append(f"```text\n{path} {pieces}\n```\n")
        doc = (command.help or "").strip()
        if doc:
            out.append("\n\n".join(_one_line(p) for p in doc.split("\n\n")) + "\n")
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        options = [p for p in command.params if p.param_type_name == "option"
                   and p.name != "help"]
        if arguments:
            out.append("Arguments:\n")
            for p in arguments:
                meta = " ".join(p.get_usage_pieces(ctx))
                out.append(f"- `{meta}`: {_one_line(getattr(p, 'help', ''))}")
            out.append("")
        if options:
            out.append("Options:\n")
            out.extend(line for p in options if (line := _option(p, ctx)))
            out.append("")
        keys = jsonkeys.KEYS.get(path.removeprefix("buraco-log "))
        if keys:
            out.append("JSON (`-f json`): an object with these keys, every one always there "
                       "(null or empty where it does not apply):\n")
            out.extend(f"- `{key}`: {text}" for key, text in sorted(keys.items()))
            out.append("")
    out.append("## The JSON error object\n")
    out.append("Every command asked for `-f json` answers a failure with `{\"error\": {...}}` "
               "on stdout, beside the line on stderr:\n")
    out.extend(f"- `{key}`: {text}" for key, text in jsonkeys.ERROR.items())
    out.append(f"\n{jsonkeys.CUT_SHORT}")
    out.append("\nA log read with `--ignore-integrity` that fails its check puts the answer "
               "under `result`, beside `integrity_warning` (docs/rules.md).")
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
