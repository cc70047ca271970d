"""Text from a log, made safe to print on a terminal, and padded to a width in terminal
columns, not characters: :mod:`buraco_log.safetext`, which the replay page and the review's
text use too."""

from buraco_log.safetext import UNSAFE, columns, pad, terminal_safe, terminal_safe_lines

__all__ = ["UNSAFE", "columns", "pad", "terminal_safe", "terminal_safe_lines"]
