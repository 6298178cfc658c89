"""What the commands share: the one-line error exit, argument checks, options that read alike, where
parallel work runs (:mod:`oraclepriv.execution`), the progress bar, the log switch, and interrupts
(Ctrl-C exits 130, SIGTERM 143; an interrupted command's output folder is marked ``PARTIAL``)."""

from __future__ import annotations

import contextlib
import datetime
import logging
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup, TyperOption

if TYPE_CHECKING:
    from oraclepriv.execution import Execution


def output_path(text: str) -> Path:
    """The parser of every output option (``--out``, ``--report``): an empty path is refused here, since
    once it is a ``Path`` it reads as ``.``, the current folder."""
    if not str(text):
        raise typer.BadParameter("got '' (an empty path); give a file or folder name")
    return Path(text)


#: ``--out FILE`` of the commands that print rows
JsonOut = Annotated[
    Path | None, typer.Option("--out", help="Also write the rows as JSON to this file.", parser=output_path)
]
#: ``--report FILE`` of the commands that print rows
MarkdownOut = Annotated[
    Path | None,
    typer.Option("--report", help="Also write a Markdown table (for results/) to this file.", parser=output_path),
]
Seed = Annotated[int, typer.Option("--seed")]

#: the execution switch of every parallel command (:func:`parallel`)
Jobs = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        help="Local worker processes (joblib; -1: every CPU; default 1, in this process). With --scheduler local: "
        "the cluster's worker processes. Results do not depend on it.",
        show_default=False,
    ),
]
ParallelBackend = Annotated[
    str | None,
    typer.Option(
        "--parallel-backend",
        help="loky (local processes, the default) | dask (a dask.distributed cluster: --scheduler; "
        "without it, a local one).",
        show_default=False,
    ),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="A running dask scheduler (tcp://HOST:8786), or 'local' to start a LocalCluster sized to this "
        "machine, closed at exit. Implies --parallel-backend dask; the tasks run on every worker thread.",
        show_default=False,
    ),
]
Resume = Annotated[
    bool,
    typer.Option(
        "--resume/--no-resume",
        help="Keep the cells an interrupted run left in --out/cells.jsonl (same configuration) instead of computing "
        "them again (default), or compute every cell.",
    ),
]
Quiet = Annotated[
    bool,
    typer.Option("--quiet", help="No progress bar (there is none either when output is not a terminal)."),
]


def _flags_take_no_value() -> None:
    """typer (0.2x) shows a type beside every option in --help, flags too (``--json <bool>``), as if they took a
    value, while ``--json true`` is an error: a flag shows none (``--json``, ``--resume/--no-resume``)."""
    shown = TyperOption.display_type_rich
    if getattr(shown, "flags_untyped", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich.flags_untyped = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_take_no_value()


def _help_keeps_words_whole() -> None:
    """Plain ``--help`` (:func:`plain_help`) wraps lines at spaces only: click's wrapper also breaks words at
    hyphens, which splits flags and backend specs across lines (``scip-`` / ``bc:workers=2``)."""
    try:
        from typer._click import _textwrap
    except ImportError:  # a typer without its own copy of click: its wrapper as it is
        return
    base = _textwrap.TextWrapper
    if getattr(base, "keeps_words_whole", False):
        return

    class WholeWords(base):  # type: ignore[misc, valid-type]
        keeps_words_whole = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("break_on_hyphens", False)
            super().__init__(*args, **kwargs)

    _textwrap.TextWrapper = WholeWords  # type: ignore[misc]


_help_keeps_words_whole()


def echo(message: str) -> None:
    """A result line on stdout, written through ``sys.stdout`` as it is now, so that while a progress bar
    is live (it redirects stdout) the line is printed above the bar rather than across it."""
    typer.echo(message, file=sys.stdout)


def fail(message: str) -> NoReturn:
    """Bad input: one line on stderr, exit code 2 (never a traceback)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def check_seed(seed: int) -> None:
    """Seeds feed numpy's SeedSequence, which takes non-negative integers only."""
    if seed < 0:
        fail(f"--seed must be >= 0; got {seed}")


def _first_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (the folder a new path would be created in)."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _creatable_in(folder: Path) -> bool:
    """Whether files can be created in ``folder`` (tried, not guessed from permission bits: root, read-only
    mounts and /proc all answer differently)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _check_output(path: Path | None, option: str, folder: bool) -> None:
    if path is None:
        return
    try:
        _check_output_path(path, f"{option} {str(path)!r}", folder)
    except OSError as exc:  # a name too long, a folder that cannot be searched, ...
        fail(f"{option} {str(path)!r}: {exc.strerror or exc}")


def _check_output_path(path: Path, shown: str, folder: bool) -> None:
    if path.exists():
        if folder and not path.is_dir():
            fail(f"{shown} is a file; a folder is expected")
        if not folder and path.is_dir():
            fail(f"{shown} is a directory; a file is expected")
        if folder and not _creatable_in(path):
            fail(f"{shown}: cannot write into this folder")
        if not folder and not os.access(path, os.W_OK):
            fail(f"{shown}: the file is not writable")
        return
    base = _first_existing(path)
    if not base.is_dir():
        fail(f"{shown}: {str(base)!r} is a file, so nothing can be created under it")
    if not _creatable_in(base):
        fail(f"{shown}: cannot create it ({str(base)!r} is not writable)")


def create_output_folders(path: Path | None, option: str) -> None:
    """The missing folders above an output file, created once every output of the command has been checked."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"{option} {str(path)!r}: cannot create its folder ({exc.strerror or exc})")


def check_output_file(path: Path | None, option: str, *, create_folders: bool = True) -> None:
    """The one helper for an output file a command will write (``None``: not asked for), called before any work
    starts: not a directory, not under a file, creatable; its missing parent folders are created now (as an output
    folder is: :func:`check_output_dir`), so every command writes to a new folder alike. ``create_folders=False``
    leaves that to :func:`create_output_folders`, for a command with checks of its own still to make."""
    _check_output(path, option, folder=False)
    if create_folders:
        create_output_folders(path, option)


def check_output_dir(path: Path | None, option: str) -> None:
    """An output folder a command will write into, checked before any work starts: not a file, and writable
    (or creatable under its nearest existing ancestor; the command creates it)."""
    _check_output(path, option, folder=True)


def check_out_and_report(out: Path | None, report: Path | None) -> None:
    """The ``--out`` (JSON) and ``--report`` (Markdown) files of a command that prints rows: each writable,
    and not the same file (the second write would silently replace the first); then their missing folders are
    created (:func:`check_output_file`)."""
    _check_output(out, "--out", folder=False)
    _check_output(report, "--report", folder=False)
    if out is not None and report is not None and _same_file(out, report):
        fail(f"--out {str(out)!r} and --report {str(report)!r} are the same file; give them different paths")
    create_output_folders(out, "--out")
    create_output_folders(report, "--report")


def _same_file(a: Path, b: Path) -> bool:
    """Whether two output paths name one file (through links too, when it exists)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def check_input_file(path: Path | None, what: str) -> None:
    """An input file (``what`` names it: "--public", "data file"): it must exist and not be a directory."""
    if path is None:
        return
    try:
        is_dir, exists = path.is_dir(), path.exists()
    except OSError as exc:  # a name too long, a folder that cannot be searched, ...
        fail(f"{what} {str(path)!r}: {exc.strerror or exc}")
    if is_dir:
        fail(f"{what} {str(path)!r} is a directory; a CSV file is expected")
    if not exists:
        fail(f"{what} {str(path)!r} does not exist")


class HypothesisClass(str, Enum):
    """The hypothesis classes a command's ``--hypothesis-class`` takes (typer refuses any other by name)."""

    threshold = "threshold"
    stump = "stump"
    halfspace = "halfspace"


def check_threshold_features(hypothesis_class: str, path: Path, feature_names: tuple[str, ...]) -> None:
    """``--hypothesis-class threshold`` on a CSV file with more than one feature column: a ValueError named by the
    flag and the file (the library says ``X_private``, a name the command line never shows). Called where the
    command turns a ValueError into :func:`fail` (``learn``'s block catches RuntimeError too, which
    ``typer.Exit`` is)."""
    if hypothesis_class == "threshold" and len(feature_names) != 1:
        raise ValueError(
            f"--hypothesis-class threshold needs data with one feature; {str(path)!r} has {len(feature_names)} "
            f"({', '.join(feature_names)})"
        )


def backend_oracle(
    backend: str, hypothesis_class: str, option: str = "--backend", *, time_limit_flag: bool = True
) -> Any:
    """The oracle ``--backend NAME[:key=value,...]`` selects for ``hypothesis_class``, built now: a bad name,
    option or value is a one-line error naming the option and the spec as typed (an unknown option with the
    options a spec takes: :func:`check_backend_options`)."""
    from oraclepriv.backends import parse_backend_spec
    from oraclepriv.oracle import make_oracle

    check_backend_options(backend, option, time_limit_flag=time_limit_flag)
    try:
        name, options = parse_backend_spec(backend)
        return make_oracle(hypothesis_class, backend=name, **options)
    except (ValueError, ImportError) as exc:
        fail(f"{option} {backend!r}: {exc}")


def check_backend_options(backend: str | None, option: str = "--backend", *, time_limit_flag: bool = True) -> None:
    """The option names of a backend spec (NAME[:key=value,...]), checked before any work: an unknown one is a
    one-line error naming the option and the spec, and listing the options a spec takes. The time limit is not
    one of them (a spec giving it is refused by :func:`check_backend_time_limit`, or by the command); where the
    command has --time-limit (``time_limit_flag``), the error names it. A spec that does not parse, or names no
    registered backend, is left to the command's own error."""
    if backend is None:
        return
    from oraclepriv.backends import backend_class, parse_backend_spec

    try:
        name, options = parse_backend_spec(backend)
        allowed = backend_class(name).options
    except (ValueError, ImportError):
        return
    unknown = sorted(set(options) - set(allowed) - {"time_limit"})  # time_limit: refused with its own message
    if not unknown:
        return
    takes = f"its spec takes: {', '.join(sorted(allowed))}" if allowed else "its spec takes no options"
    fail(
        f"{option} {backend!r}: backend {name!r}: unknown option(s) {unknown}; {takes}"
        + ("; the time limit is --time-limit" if time_limit_flag else "")
    )


def restricted_backend_problem(backend: str, restriction: str, hypothesis_class: str, option: str = "--backend") -> str:
    """The first half of the refusal of a backend whose bounds cover a restricted class only (a margin, a box),
    named by the option and the spec; the caller says who needs an exact backend and what to do instead."""
    return f"{option} {backend!r} proves its bounds only over {restriction}, not over all {hypothesis_class}s"


def check_epsilon(epsilon: float, option: str = "--epsilon", *, allow_inf: bool = False) -> float:
    """``--epsilon`` by the library's one rule (:func:`oraclepriv.validation.check_epsilon`: a number in
    (0, 700]; ``inf`` only with ``allow_inf``, a mechanism's non-private debug mode), its error named by the flag."""
    from oraclepriv.validation import check_epsilon as check_value

    try:
        return check_value(epsilon, option, allow_inf=allow_inf)
    except ValueError as exc:
        fail(str(exc))


def check_delta(delta: float | None, option: str = "--delta") -> None:
    """``--delta`` by the library's one rule (:func:`oraclepriv.validation.check_delta`: a number in [0, 1)),
    its error named by the flag (None: not given)."""
    from oraclepriv.validation import check_delta as check_value

    if delta is not None:
        try:
            check_value(delta, option)
        except ValueError as exc:
            fail(str(exc))


def check_time_limit(seconds: float | None, option: str = "--time-limit") -> None:
    """A time limit in seconds: a number > 0 and at most the solvers' maximum (None: not given)."""
    from oraclepriv.solvers.runtime.deadline import check_time_limit as check_seconds

    if seconds is not None:
        try:
            check_seconds(seconds, option)
        except ValueError as exc:
            fail(str(exc))


def check_backend_time_limit(backend: str | None, time_limit: float | None, option: str = "--backend") -> None:
    """A ``time_limit`` inside a backend spec (``scip-bc:time_limit=5``) beside ``--time-limit``: one of them
    would be ignored, so the pair is refused (the spec's own is also refused: --time-limit is the way)."""
    if backend is None:
        return
    from oraclepriv.backends import parse_backend_spec

    try:
        _, options = parse_backend_spec(backend)
    except ValueError as exc:
        fail(str(exc))
    if "time_limit" in options:
        also = f" (and --time-limit {time_limit:g} was given too)" if time_limit is not None else ""
        fail(
            f"{option} {backend!r} sets time_limit inside the backend spec{also}; "
            "give the time limit with --time-limit instead"
        )


def check_at_least(value: int, minimum: int, option: str, maximum: int | None = None) -> None:
    """A count option (runs, draws, repeats, ...) below its minimum, or above its maximum when it has one (a
    count the machine cannot hold would fail deep inside numpy), is a one-line error."""
    if value < minimum:
        fail(f"{option} must be >= {minimum}; got {value}")
    if maximum is not None and value > maximum:
        fail(f"{option} must be at most {maximum:,}; got {value:,}")


def check_parallel_options(jobs: int | None, backend: str | None, scheduler: str | None) -> None:
    """The execution options' own errors, without connecting to anything (call it with the other checks)."""
    from oraclepriv.execution import ExecutionError, check_options

    try:
        check_options(jobs, backend, scheduler)
    except ExecutionError as exc:
        fail(str(exc))
    if jobs is not None and jobs > max_jobs():
        fail(
            f"--jobs {jobs} is more than this machine can use: at most {max_jobs()} (4 x its {os.cpu_count() or 1} "
            "CPUs; -1 means one per CPU)"
        )


def max_jobs() -> int:
    """The largest --jobs taken: 4 worker processes per CPU, and never more than 256."""
    return min(256, 4 * (os.cpu_count() or 1))


@contextlib.contextmanager
def parallel(jobs: int | None, backend: str | None, scheduler: str | None) -> Iterator[Execution]:
    """:func:`oraclepriv.execution.execution` for a command: a setup error is a one-line exit 2 (before
    any work starts); the cluster, if one was started, is closed when the block ends."""
    from oraclepriv.execution import ExecutionError, execution

    stack = contextlib.ExitStack()
    try:
        environment = stack.enter_context(execution(jobs, backend, scheduler))
    except ExecutionError as exc:
        fail(str(exc))
    with stack:
        yield environment


def parallel_note(environment: Execution) -> str:
    """The options that reproduce a run's execution, for the command line a report prints (empty: serial)."""
    if environment.backend == "dask":
        return " --parallel-backend dask"
    return f" --jobs {environment.n_jobs}" if environment.n_jobs != 1 else ""


def _terminal() -> bool:
    return sys.stdout.isatty() and sys.stderr.isatty()


class ProgressBar:
    """A rich progress display on stderr with one bar per phase (:meth:`phase`), each showing units
    done / total and the elapsed time; inert (every callback a no-op) when switched off."""

    def __init__(self, display: object | None) -> None:
        self._display = display

    def phase(self, description: str) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` callable that drives a new bar named ``description``."""
        display = self._display
        if display is None:
            return lambda done, total: None
        task = display.add_task(description, total=None)  # type: ignore[attr-defined]

        def update(done: int, total: int) -> None:
            display.update(task, completed=done, total=total)  # type: ignore[attr-defined]

        return update


@contextlib.contextmanager
def progress_bar(quiet: bool = False) -> Iterator[ProgressBar]:
    """Progress on stderr while the block runs, unless ``quiet`` or stdout/stderr is not a terminal
    (then results and JSON on stdout stay exactly what they are)."""
    if quiet or not _terminal():
        yield ProgressBar(None)
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    display = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    with display:
        yield ProgressBar(display)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record is emitted (test runners swap it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def configure_warnings() -> None:
    """Python warnings as one line each on stderr, ``warning: MESSAGE (Category)``, each text once per
    command: the default format adds the library's file, line and source line (not a user's concern), and a
    numerical warning raised in a loop would fill the screen."""
    import warnings

    seen: set[tuple[str, str]] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001 - warnings' API
        key = (category.__name__, str(message))
        if key in seen:
            return
        seen.add(key)
        typer.echo(f"warning: {message} ({category.__name__})", err=True)

    warnings.showwarning = show


def configure_logging(verbose: bool) -> None:
    """``--verbose``: the library's DEBUG log (``oraclepriv.*`` loggers) on stderr; otherwise left alone."""
    logger = logging.getLogger("oraclepriv")
    for handler in [h for h in logger.handlers if isinstance(h, _StderrHandler)]:
        logger.removeHandler(handler)
    if not verbose:
        logger.setLevel(logging.NOTSET)
        return
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


# ------------------------------------------------------------------------------------------ interrupts

#: the exit codes of an interrupted command (128 + the signal number, as a shell reports them)
EXIT_SIGINT = 130
EXIT_SIGTERM = 143
#: the file that marks an output folder as incomplete
PARTIAL = "PARTIAL"


class Terminated(KeyboardInterrupt):
    """SIGTERM while a command runs: unwinds like Ctrl-C (solvers stop, a process pool kills its
    workers, an output folder stays marked partial), then the command exits with code 143."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated()


def plain_help(command: Any) -> None:
    """``--help`` of ``command`` and every command under it as plain text (click's), not rich's framed boxes:
    for output that is not a terminal (a pipe, a file, a test), where the boxes' wrapping and frame characters
    get in the way of grep, less and diffs."""
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


class Group(TyperGroup):
    """The root command group: while a command runs, SIGTERM raises :class:`Terminated` (Ctrl-C raises
    KeyboardInterrupt, which typer turns into exit code 130); afterwards the previous handler is back. A usage
    error (a missing option, a value of the wrong type, an unknown option) is one line on stderr, exit 2, like
    the commands' own checks (:func:`fail`), instead of typer's framed box."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:

        if not sys.stdout.isatty():
            plain_help(self)
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            self._main_standalone(args, prog_name, complete_var, **extra)
        except KeyboardInterrupt:  # a Ctrl-C while the command unwinds (a second one, say): 130, no traceback
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # one more during interpreter shutdown ends it by SIGINT
            sys.exit(EXIT_SIGINT)

    def _main_standalone(self, args: Any, prog_name: str | None, complete_var: str | None, **extra: Any) -> None:
        from typer._click.exceptions import ClickException, NoArgsIsHelpError
        from typer.exceptions import Abort

        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:  # a group without its command: its help, exit 2
            exc.show()
            sys.exit(exc.exit_code)
        except ClickException as exc:
            context = getattr(exc, "ctx", None)
            where = f" (see '{context.command_path} --help')" if context is not None else ""
            message = " ".join(exc.format_message().split())
            typer.echo(f"error: {message}{where}", err=True)
            sys.exit(exc.exit_code)
        except Abort:
            typer.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _terminated)
        try:
            return super().invoke(ctx)
        except Terminated as exc:
            raise typer.Exit(code=EXIT_SIGTERM) from exc
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def partial_outputs(folder: Path, command: str, resume: str = "Rerun the command to complete it.") -> Iterator[Path]:
    """The output folder of a long command while the block runs: the folder is created with a ``PARTIAL``
    file in it, which is removed only when the block completes. An interrupt (or any failure) leaves it,
    saying what happened, and a line on stderr names the folder; ``resume`` tells how to finish the run."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / PARTIAL
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")

    def note(state: str) -> None:
        marker.write_text(
            f"This folder is incomplete: {state}. Its files are not the results of a finished run.\n"
            f"command: {command}\nstarted: {started}\n{resume}\n",
            encoding="utf-8",
        )

    note("the run is still going, or was killed before it finished")
    try:
        yield folder
    except BaseException as exc:
        if isinstance(exc, Terminated):
            state = "the run was interrupted (SIGTERM)"
        elif isinstance(exc, KeyboardInterrupt):
            state = "the run was interrupted (Ctrl-C)"
        elif isinstance(exc, typer.Exit) and exc.exit_code == 2:
            state = "the run stopped at an error in its input"
        else:
            state = f"the run failed ({type(exc).__name__})"
        with contextlib.suppress(OSError):
            note(state)
        typer.echo(f"{state}: {folder} holds partial outputs (marked {marker}). {resume}", err=True)
        raise
    marker.unlink(missing_ok=True)
