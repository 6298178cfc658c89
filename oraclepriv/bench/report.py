"""What every benchmark report shares: the machine line, load averages, a Markdown table, a JSON file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oraclepriv.provenance import machine_description

__all__ = ["markdown_table", "write_json"]


def markdown_table(title: str, command: str, rows: list[dict[str, Any]], columns: list[str], note: str = "") -> str:
    """A generic benchmark table: title, the command and machine that produced it, one row per dict."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    lines = [f"# {title}", "", f"Produced by `{command}` on: {machine_description()}.", ""]
    if note:
        lines += [note, ""]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def write_json(path: Path | str, data: Any) -> None:
    """``data`` as indented JSON (numpy values as plain numbers) with a final newline."""
    from oraclepriv.io import to_json

    Path(path).write_text(to_json(data, indent=2) + "\n", encoding="utf-8")
