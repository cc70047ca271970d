"""Text from a log, made safe to print on a terminal: :mod:`buraco_log.safetext`, which the
replay page uses too."""

from buraco_log.safetext import UNSAFE, terminal_safe, terminal_safe_lines

__all__ = ["UNSAFE", "terminal_safe", "terminal_safe_lines"]
