"""duckdb, imported whole: with the signals' Python handlers held off until its native module
is loaded (:func:`buraco_log.archive._import_whole` says why). Every module of the archive
that uses duckdb imports it from here, so whichever loads it first loads it so: the package
no longer imports it as it starts, which `verify`, `compact` and `ingest` never needed."""

from __future__ import annotations

from buraco_log.archive import _import_whole

_import_whole("duckdb")

import duckdb  # noqa: E402

__all__ = ["duckdb"]
