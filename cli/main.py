"""The `buraco-log` application: one typer app, one module per command group."""

from __future__ import annotations

import contextlib
import enum
import importlib
import inspect
import os
import sys
from typing import Annotated, Any

import typer

from buraco_log import FORMAT_VERSION, __version__
from cli import coercion, helpfmt
from cli.common import (
    CONTEXT,
    EXIT_USAGE,
    HIDDEN_ALIASES,
    NamedStdout,
    State,
    bytes_shown,
    drop_stdout,
    emit_json,
    error_object,
    show_traceback,
)
from cli.entry import argv_wants_json as _argv_wants_json
from cli.signals import STOPPED, hold_late, lost, stopped_by, terminate_as_interrupt

helpfmt.install()
coercion.install()

_app = typer.Typer(
    name="buraco-log",
    help="Replay, audit and query Buraco match logs. `buraco-log help COMMAND` (or `COMMAND "
         "--help`) shows a command's help.",
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
)

# Developer commands: they work, but stay out of the user's help.
HIDDEN = {"schema"}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"buraco-log {__version__} (log format {FORMAT_VERSION})")
        raise typer.Exit()


@_app.callback()
def main(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True,
                     help="Print the version and exit."),
    ] = False,
) -> None:
    State.debug = debug


MODULES: tuple[str, ...] = ("rules_cmd", "log_cmd", "dispute_cmd", "moves_cmd", "archive_cmd",
                            "demo_cmd", "simulate_cmd", "view_cmd", "review_cmd", "keys_cmd")
"""The command modules, in the order their commands are registered (and listed in help)."""

COMMANDS: dict[str, str] = {
    "rules": "rules_cmd", "convert": "log_cmd", "schema": "log_cmd", "seal": "log_cmd",
    "repair": "log_cmd", "fold": "log_cmd", "verify": "log_cmd", "show": "dispute_cmd",
    "replay": "dispute_cmd",
    "diff": "dispute_cmd", "explain": "dispute_cmd", "audit": "dispute_cmd",
    "moves": "moves_cmd", "ingest": "archive_cmd", "query": "archive_cmd",
    "report": "archive_cmd", "compact": "archive_cmd", "demo": "demo_cmd",
    "simulate": "simulate_cmd", "view": "view_cmd", "review": "review_cmd", "keys": "keys_cmd",
}
"""The module of each top-level command or group. A command named on the command line loads
its own module only: importing and building every command was most of the start of
`buraco-log show LOG` (benchmarks/bench_cli_start.py). Help, completion and a name that is
no command load them all, so what they list is unchanged (a test holds this table to what
the modules register)."""

_loaded: list[str] = []


def _load(modules: list[str]) -> typer.Typer:
    """The app with the commands of ``modules`` (in :data:`MODULES` order) registered. Asked
    for more than it holds, it registers them all again from the start, so that the order of
    every listing stays the modules' order."""
    wanted = [m for m in MODULES if m in modules or m in _loaded]
    if wanted == _loaded:
        return _app
    if _loaded:
        _app.registered_commands.clear()
        _app.registered_groups.clear()
    for name in wanted:
        module = importlib.import_module(f"cli.{name}")
        if name == "rules_cmd":
            _app.add_typer(module.app, name="rules")
        else:
            module.register(_app)
    _loaded[:] = wanted
    _finish_help()
    return _app


def _full() -> typer.Typer:
    return _load(list(MODULES))


def __getattr__(name: str) -> Any:
    """``cli.main.app``: the app with every command (docgen, the tests' CliRunner)."""
    if name == "app":
        return _full()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_GLOBAL_FLAGS = frozenset({"--debug"})


def _for_argv(argv: list[str]) -> typer.Typer:
    """The app a command line needs: the module of the command it names, none for
    ``--version`` alone, every one for anything else (help, completion, a typo, no command)."""
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return _full()
    for word in argv:
        if word in _GLOBAL_FLAGS:
            continue
        if word in ("-V", "--version"):
            return _load([])
        if word in COMMANDS:
            return _load([COMMANDS[word]])
        break
    return _full()


def reflow(doc: str) -> str:
    """A docstring as help text: each paragraph on one line, for the terminal to wrap (typer's
    rich help keeps a docstring's line breaks, which land mid-sentence in a narrow terminal)."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def _finish_help() -> None:
    """Every registered command's help from its docstring, reflowed; developer commands
    hidden."""
    for group in (_app, *(g.typer_instance for g in _app.registered_groups)):
        for info in group.registered_commands:  # type: ignore[union-attr]
            if info.help is None and info.callback is not None and info.callback.__doc__:
                info.help = reflow(info.callback.__doc__)
            if (info.name or getattr(info.callback, "__name__", "")) in HIDDEN:
                info.hidden = True


def _click_errors(name: str) -> tuple[type[BaseException], ...]:
    """The click exception class ``name`` from every click typer may be using (recent typer
    vendors its own copy)."""
    found: list[type[BaseException]] = []
    for module in ("typer._click.exceptions", "click.exceptions"):
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


_NO_ARGS = _click_errors("NoArgsIsHelpError")
_USAGE = _click_errors("UsageError")
_ABORT = _click_errors("Abort")


def _dash_file(argv: list[str]) -> str:
    """The hint for a usage error where a word taken as an option is a file's name: it said
    only "No such option: -x" (`show -x.blog`), and nothing at all where the name began with
    a real option, read with its value (`show -f.blog`: "'.blog' is not one of 'table', ...";
    `audit -q.blog`: "No such option: -.")."""
    for word in argv:
        if word == "--":
            break
        if word.startswith("-") and word not in ("-", "--") and os.path.lexists(word):
            return f"; {word} is a file: name it ./{word}, or put -- before it"
    return ""


def _misplaced_global(exc: BaseException) -> str:
    """The hint for an option of buraco-log itself given after the command (`show LOG
    --debug`): it said only "No such option: --debug", as if there were none."""
    name = getattr(exc, "option_name", None)
    if name in ("--version", "-V"):
        return f"; {name} is an option of buraco-log itself: buraco-log {name}"
    if name not in _GLOBAL_FLAGS:
        return ""
    command = _named_command().removeprefix("buraco-log").strip() or "COMMAND"
    return (f"; {name} is an option of buraco-log itself: put it before the command "
            f"(buraco-log {name} {command} ...)")


def _aliases_read(command: Any, argv: list[str]) -> list[str]:
    """``argv`` with each hidden alias (:data:`HIDDEN_ALIASES`) as the option it stands for,
    where the command has that option and not the alias itself: ``convert LOG --out FILE``
    was "No such option: --out", which `demo` and `simulate` took."""
    out: list[str] = []
    for i, word in enumerate(argv):
        if word == "--":
            return [*out, *argv[i:]]
        sub = getattr(command, "commands", {}).get(word)
        if sub is not None:
            command = sub
        name, eq, value = word.partition("=")
        meant = HIDDEN_ALIASES.get(name)
        if meant is not None and not hasattr(command, "commands") and \
                _has(command, meant) and not _has(command, name):
            *given, last = meant.split()  # "--format html --output": options, then the value's
            out.extend(given)
            word = f"{last}{eq}{value}"
        out.append(word)
    return out


def _has(command: Any, words: str) -> bool:
    """Does ``command`` take ``words``: its options, each value a choice of the option
    before it (``--format html``: a command whose format has no html has no such alias)?"""
    options = {o: p for p in command.params if p.param_type_name == "option" for o in p.opts}
    before = None
    for word in words.split():
        if word.startswith("-"):
            before = options.get(word)
            if before is None:
                return False
        elif before is None or word not in _choices(before):
            return False
    return True


def _choices(option: Any) -> set[str]:
    """The values an option takes from a fixed list (its enum's), else none."""
    annotation = getattr(getattr(option, "type_descriptor", None), "annotation", None)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {str(m.value) for m in annotation}
    return set(getattr(getattr(option, "type", None), "choices", None) or ())


def _refuse_an_option_as_a_value(command: Any, argv: list[str]) -> None:
    """A usage error for an option given another option of the command as its value
    (`simulate --seed --overwrite`): click took "--overwrite" as the seed, and the logs were
    written with it, exit 0 (`review --seed --jobs 1` said only "unexpected extra argument")."""
    words = iter(argv)
    for word in words:  # down to the command: global flags and group names
        if word in _GLOBAL_FLAGS:
            continue
        sub = getattr(command, "commands", {}).get(word)
        if sub is None:
            return
        command = sub
        if not hasattr(command, "commands"):
            break
    else:
        return
    takes: dict[str, Any] = {}
    names = {"-h", "--help"}
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") != "option":
            continue
        names.update(param.opts, param.secondary_opts)
        if not (param.is_flag or param.count):
            takes.update(dict.fromkeys(param.opts, param))
    for word in words:
        if word == "--":
            return
        if word not in takes:
            continue
        value = next(words, None)
        if value in names:
            how = f" (if it is the value, write {word}={value})" if word.startswith("--") else ""
            raise _USAGE[0](f"{word} needs a value: {value} is an option, not its value{how}")
        if value == "--":  # `convert -o -- -x`: "--" was the output, then "No such option: -x"
            raise _USAGE[0](f"{word} needs a value: -- ends the options, it is no value")


def _named_command() -> str:
    """The command the command line names, as help calls it (`buraco-log rules show`): an
    option missing its value (`show -f`) is refused before click makes the command's context,
    and the line gave no hint where every other usage error says which help to read."""
    words = ["buraco-log"]
    groups = {g.name for g in _app.registered_groups}
    for word in sys.argv[1:]:
        if word in _GLOBAL_FLAGS:
            continue
        first = len(words) == 1 and word in COMMANDS
        if first or (len(words) == 2 and words[1] in groups and not word.startswith("-")):
            words.append(word)
            continue
        break
    return " ".join(words)


def run() -> None:
    """The console script: usage errors become one line on stderr and exit status 2."""
    sys.stdout = NamedStdout(sys.stdout)  # a failed write names <stdout>
    State.own_process = True
    # SIGTERM (`kill`, `timeout`, a service manager) ends every command as Ctrl-C does: its
    # cleanup runs, and one line says so (at its default action the process died without a
    # word, and `simulate` or `audit` left their workers' output to chance)
    with terminate_as_interrupt() as met:
        code = _run()
        if code not in STOPPED and lost(met):  # its KeyboardInterrupt swallowed on its way
            code = _say_stopped()
    if code in STOPPED:
        # interrupted: every output was already removed or left whole by the code it cut
        # short; skip the interpreter's exit hooks, where a process pool's cleanup races its
        # dying workers and prints a traceback ("Exception ignored in ... _python_exit")
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    code = code if isinstance(code, int) else 0
    try:
        hold_late(code)  # a signal from here on is said by the last exit hook
    except KeyboardInterrupt:  # one that came just before: said as every other
        code = _say_stopped()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def help_as_option(argv: list[str]) -> list[str]:
    """``help [COMMAND...]`` as ``[COMMAND...] --help``: users type `buraco-log help` and
    `buraco-log help show`, which were "No such command 'help'". A word of the command line,
    not a command: the listing of commands stays the tool's own."""
    for i, word in enumerate(argv):
        if word in _GLOBAL_FLAGS:
            continue
        if word == "help":  # `help help` too: the tool's help, not "No such command"
            rest = help_as_option(argv[i + 1:])
            return [*argv[:i], *(rest if rest[-1:] == ["--help"] else [*rest, "--help"])]
        break
    return argv


def _say_stopped() -> int:
    """An interrupt outside every command said as inside one: its line, and with ``-f json``
    its JSON error on stdout (there was none), unless the command had written there."""
    how, code = stopped_by()
    typer.echo(f"buraco-log: error: {how}", err=True)
    if _argv_wants_json(sys.argv[1:]) and getattr(sys.stdout, "written", None) is False:
        try:
            emit_json({"error": error_object(how, code)})
            sys.stdout.flush()
        except OSError:
            drop_stdout()
    return code


def _run() -> int | Any:
    """The command's exit status, every usage error said in one line."""
    sys.argv[1:] = help_as_option(sys.argv[1:])
    try:
        # one name in usage lines and hints, however started (`python -m cli`, the script)
        command = typer.main.get_command(_for_argv(sys.argv[1:]))
        sys.argv[1:] = _aliases_read(command, sys.argv[1:])
        _refuse_an_option_as_a_value(command, sys.argv[1:])
        code = command(standalone_mode=False, prog_name="buraco-log")
        if code == 130 and not State.stop_said:
            # typer's own answer to an interrupt outside the command (while parsing the
            # options, or running the main callback): 130 without a word, even for a SIGTERM
            code = _say_stopped()
    except _NO_ARGS:  # no group asks for it now: a missing command is a usage error (2)
        code = EXIT_USAGE
    except SystemExit as exc:
        # help or version meeting a closed pipe (`--help | head`): rich's printer and click
        # exit 1 themselves, after making standard output quiet; the status every command
        # has for it instead
        piped = (isinstance(exc.__context__, BrokenPipeError)
                 or type(sys.stdout).__name__ == "PacifyFlushWrapper")
        if exc.code != 1 or not piped:
            raise
        drop_stdout()
        code = 141
    except _USAGE as exc:
        if State.debug:  # the traceback, then the same line and exit status as without
            show_traceback(exc)
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path if ctx is not None else _named_command()} --help`)"
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        message = bytes_shown(" ".join(message.split()))  # choices were listed on lines
        dash = _dash_file(sys.argv[1:]) or _misplaced_global(exc)
        message = message.removesuffix(".") + dash if dash else message
        if message == "Missing command." and ctx is not None:  # a group given no command
            names: list[str] = getattr(ctx.command, "list_commands", lambda _c: [])(ctx)
            shown = [n for n in names if n not in HIDDEN]
            message = f"missing command: one of {', '.join(shown)}" if shown else message
        typer.echo(f"buraco-log: usage: {message}{hint}", err=True)
        if _argv_wants_json(sys.argv[1:]):  # -f json: stdout is JSON on a usage error too
            try:
                emit_json({"error": error_object(f"{message}{hint}", EXIT_USAGE)})
                sys.stdout.flush()
            except OSError:  # stdout closed, full or gone: the line on stderr said it, exit 2
                drop_stdout()
        code = EXIT_USAGE
    except _ABORT:  # an EOF where a prompt waited: said as every interrupt is
        code = _say_stopped()
    except KeyboardInterrupt:
        # before a command ran: typer builds the click group from every command's signature
        # first (a second, loaded), outside click's own catch (a SIGTERM there was a traceback
        # and death by SIGINT, -2)
        code = _say_stopped()
    except BrokenPipeError:  # help or version into `| head`: stop quietly, as commands do
        with contextlib.suppress(OSError):
            sys.stderr.close()
        drop_stdout()
        code = 141
    except OSError as exc:  # help or version into a full disk: one line, as commands say it
        if State.debug:
            show_traceback(exc)
        drop_stdout()
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"buraco-log: error: {where}{exc.strerror or exc}", err=True)
        code = 1
    return code


if __name__ == "__main__":
    run()
