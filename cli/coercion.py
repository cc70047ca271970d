"""Option and argument values converted without importing pydantic, where typer's result is
plain.

typer 0.29 converts every value through a pydantic ``TypeAdapter``: importing pydantic (with
pydantic-core and annotated-types) and building the adapters was about a third of the CPU of
every command's start (benchmarks/bench_cli_start.py). For the values this command line
takes, most of those adapters only wrap a function of typer's own (a choice, a path) or of
ours (``parser=``), or convert a plain number; this module calls those directly. Anything
else, and every value those refuse, goes through typer's own conversion, so results, errors
and their messages are typer's. On a typer without these hooks nothing is changed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_NOT_MINE = object()
_INT = re.compile(r"-?[0-9]{1,18}")  # what int() and pydantic read alike
_FLOAT = re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,15})?")


def install() -> None:
    try:
        from typer import _coercion, _param_types, core
    except ImportError:  # an older typer: click's own types, no pydantic to avoid
        return
    parameter: Any = getattr(core, "_TyperParameter", None)
    runtime: Any = getattr(_coercion, "RuntimeParam", None)
    build: Any = getattr(_coercion, "build_runtime_param", None)
    choices: Any = getattr(_param_types, "choice_coercion_annotation", None)
    choose: Any = getattr(_param_types, "coerce_cli_choice", None)
    routes: Any = getattr(_param_types, "routes_to_path", None)
    to_path: Any = getattr(_param_types, "coerce_cli_path", None)
    if (parameter is None or not hasattr(parameter, "get_runtime_param") or runtime is None
            or None in (build, choices, choose, routes, to_path)):
        return
    from dataclasses import dataclass

    def leaf(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
        """``value`` as typer's adapter for ``annotation`` returns it, or ``_NOT_MINE``."""
        if info.parser is not None:
            return info.parser(value)
        choice = choices(annotation, info)
        if choice is not None:
            return choose(value, choices=choice[0], case_sensitive=choice[1], ctx=ctx)
        if annotation is int or annotation is float:
            if info.clamp:
                return _NOT_MINE
            if type(value) is str and (_INT if annotation is int else _FLOAT).fullmatch(value):
                value = annotation(value)
            if type(value) is not annotation:
                return _NOT_MINE
            low, high = info.min, info.max
            if (low is not None and value < low) or (high is not None and value > high):
                return _NOT_MINE  # typer's error message
            return value
        if annotation is str:
            return value if type(value) is str else _NOT_MINE
        if routes(annotation, info):
            kind = info.path_type
            if kind is None and isinstance(annotation, type) and issubclass(annotation, Path):
                kind = annotation
            if kind is Path and type(value) is str:
                value = Path(value)  # what pydantic makes of a str for a Path
            elif kind is not None and kind not in (str, bytes) and not isinstance(value, kind):
                return _NOT_MINE
            return to_path(value, info, path_type=kind, param=param, ctx=ctx)
        return _NOT_MINE

    def convert(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
        if getattr(annotation, "__origin__", None) is list:
            (item,) = annotation.__args__
            items = value if isinstance(value, (list, tuple)) else [value]
            done = [leaf(item, info, one, param, ctx) for one in items]
            return _NOT_MINE if any(d is _NOT_MINE for d in done) else done
        return leaf(annotation, info, value, param, ctx)

    @dataclass(frozen=True)
    class Direct(runtime):  # type: ignore[misc]
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                done = convert(self.annotation, self.parameter_info, value, param, ctx)
            except Exception:  # refused: typer says why, in its own words
                done = _NOT_MINE
            if done is _NOT_MINE:
                return build(self.descriptor)._coerce_value(value, param=param, ctx=ctx)
            return done

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            found = self.type_descriptor
            self._runtime_param = (
                build(found) if found.file_annotation is not None
                else Direct(parameter_info=found.parameter_info, annotation=found.annotation,
                            descriptor=found))
        return self._runtime_param

    parameter.get_runtime_param = get_runtime_param
