"""`evalkit sweep [DIR]` — the baseline sweep and the new-vs-baseline arm table (spec §7, §8)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from evalkit.commands import add_engine_options, add_prices_option
from evalkit.errors import UsageError
from evalkit.formats.names import FORMATS
from evalkit.outputs import caveats

DESCRIPTION = """\
Sweep every session in a corpus directory and print the explore allocation
baseline: the corpus line, the slice table (all / single-question /
multi-turn: n, pooled, median, p25, p75, min, path-cited only), the per-call
median and p25, the pass/repo x arm table (median [min–max], n, pooled), the
lowest sessions with their calls, the quantile method, the caveats, and what
became of every file in the tree.

Sessions are found by the reference harness's directory layout:
  <pass>/ab-<repo>/run-{baseline,new}-<i>.jsonl          A/B arms
  <pass>/<repo>/run<n>/run-<label>.jsonl + .t2, .t3       campaign runs
  X.jsonl + X.t2.jsonl + X.t3.jsonl …                     one multi-turn session
  <project-log-dir>/<uuid>.jsonl (+ <uuid>/subagents/)   Claude Code interactive
Any other *.jsonl(.gz) is a session labelled only as far as its path says.
run-<label>.jsonl beside run-<label>-<i>.jsonl makes the indexed runs ignored,
and a zero-padded index (run-new-01) is a crash, as in the reference harness
(compare-arms.mjs).
A session whose parse raises is a crash: counted, reported, excluded.
Codex CLI rollouts and `codex exec --json` captures (*.jsonl) and Inspect AI
logs (*.eval, *.json) are recognised by their content: listed with the other
files, kept out of the explore tables (Claude Code metrics), and summarised in
an agent table (sessions, tool calls, tokens, outcomes per agent and arm).
--format forces one reader for every session instead: a file that reader
cannot read is a crash naming it, and the rest still load.

With no DIR, sweeps the bundled synthetic corpus (data/corpus), whose numbers
demonstrate the pipeline and say nothing about any real tool.

Any retrieval tool, other layouts, task outcomes: --layout, --profile or
--outcomes turn the sweep into a trial sweep. Every run is read with the tool
profile (which tools are the tool under test: codegraph by default, or the
sourcegraph preset, or your own TOML file), its outcome is joined, and the
report shows the per-arm comparison with the profile's families, the per-task
outcome table between two arms (helps / hurts / tie / incomplete, with an
exact test from six non-tied tasks), cost, tokens, duration and tool calls per
task, read allocation per arm (evalkit's own metric), and the accounting.
Each run's status (ok, agent_error, rate_limited, max_turns, timeout,
infra_error, empty, cancelled, unknown) is read from its log and its
result.json; the comparisons leave out runs that did not end ok and count them
per arm (--include-failed keeps them), and the infra-error rate per arm is
printed.
Cost is what each log records (Claude Code's total_cost_usd, an Inspect
total_cost, a trajectory's total_cost_usd), else its tokens priced per model
on the session's date from the bundled genai-prices table (--prices FILE.toml
for your own); the accounting says how many of each, and in how many runs the
recorded and priced costs differ by more than 5%.
  --layout harbor       <suite>/<arm>/<task>/<trial>/agent/claude-code.txt,
                        the outcome from <trial>/result.json
  --layout PATTERN      e.g. {suite}/{arm}/{task}/{trial}/agent/claude-code.txt
                        (placeholders {suite} {pass} {repo} {task} {arm}
                        {trial} {run}; * inside a component; ** for folders)
With no --layout, a harbor tree (a result.json beside agent/claude-code.txt
or another agent's log) is recognised and swept as one; with no --profile,
the profile comes from the tools the runs call (mcp__sourcegraph__* gives
sourcegraph, another MCP server a profile made for it: --profile
mcp:SERVER); the report says which, and why, in one line.

A corpus whose sessions make no explore call gets the comparison every
corpus has instead of empty explore tables: sessions (by status), outcomes,
tool calls by family, tokens, cost and duration per agent and arm, and the
lowest and highest sessions by cost and by reward."""

EPILOG = """\
examples:
  evalkit sweep                          the bundled corpus
  evalkit sweep /private/tmp             every A/B log under /private/tmp
  evalkit sweep DIR --markdown sweep.md  also write the tables as markdown
  evalkit sweep DIR --json | jq .arms    machine-readable (fractions, not percents)
  evalkit sweep DIR --no-cache -j 1      re-parse everything in one process
  evalkit sweep runs/ --layout harbor --profile sourcegraph
                                         an MCP A/B in harbor trial folders
  evalkit sweep DIR --layout harbor --outcomes rewards.csv --arms baseline,mcp
  python -m evalkit.synthetic harbor /tmp/h   a small synthetic one to try
  evalkit sweep DIR --verify             re-hash every file before trusting the store
  evalkit sweep DIR --engine dask --scheduler tcp://10.0.0.5:8786

Parsed sessions are kept in a store (default $XDG_CACHE_HOME/evalkit or
~/.cache/evalkit), keyed by the content of each file and evalkit's own code; it
never changes a number. A later sweep trusts a file whose size, modification
time and inode are unchanged and reads nothing from it; --verify re-reads and
re-hashes every file instead. The output is stored too: the same command on a
tree where no file or folder changed prints it again without computing
anything (any change, and the sweep runs as before). `evalkit cache` shows what the store holds and
`evalkit cache prune` removes what no sweep will read again. A progress bar is
drawn on stderr when stderr is a terminal.

Corpora past one machine: --engine dask parses on a Dask cluster (pip install
"evalkit[dask]"): --scheduler tcp://HOST:8786 for a running cluster, else a
local one with -j workers. Every worker must see the corpus at the same path;
the workers only parse, and the store is read and written by this command
alone (point --cache-dir at a shared path to share it between machines).

A file over a reading limit (EVALKIT_MAX_DECOMPRESSED_MB, EVALKIT_MAX_LINE_MB,
EVALKIT_MAX_SESSION_MB; see `evalkit run --help`) is skipped with its reason, not fatal.

exit status: 0 swept (crashed sessions are reported, not fatal); 2 unusable
input (no such directory, bad option, an --arms label no session has);
130 interrupted."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="baseline sweep and new-vs-baseline arm table over a corpus directory",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="corpus directory (default: the bundled synthetic corpus)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON document instead of the text report"
    )
    p.add_argument(
        "--markdown", metavar="FILE", type=Path, help="also write the tables as markdown to FILE"
    )
    p.add_argument(
        "--arms",
        metavar="A,B",
        help="arm labels for the arm table, in column order "
        "(default: baseline,new when present, else every arm found); in a trial sweep "
        "BASELINE,CANDIDATE of the outcome table (default: baseline, then the other arm)",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="also print the full ARM COMPARISON (behaviour, occupancy, sufficiency, "
        "allocation, contamination) for every pass / repo in the text report (in Python: "
        "arm_frame(full=True))",
    )
    p.add_argument(
        "--exclude",
        metavar="RULES",
        help="drop runs from the arm table by rule: any of raced, contaminated, failed, "
        "comma-separated (default: none, as compare-arms.mjs); the report says how many "
        "each rule dropped, per arm",
    )
    p.add_argument(
        "--tail",
        type=int,
        default=5,
        metavar="N",
        help="how many of the lowest sessions to show (default 5)",
    )
    p.add_argument(
        "--list-files",
        action="store_true",
        help="list every parsed file too, not only the ones outside the sweep",
    )
    p.add_argument(
        "-j", "--jobs", type=int, metavar="N", help="parser processes (default: every core)"
    )
    p.add_argument("--no-cache", action="store_true", help="parse everything, cache nothing")
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-hash every file of a stored session instead of trusting its size and times",
    )
    add_engine_options(p)
    p.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="which reader reads every session (default auto: each file's own, recognised "
        "from its content)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        help="cache location (default $XDG_CACHE_HOME/evalkit or ~/.cache/evalkit)",
    )
    t = p.add_argument_group("trial sweep (any retrieval tool, layouts, outcomes)")
    t.add_argument(
        "--layout",
        metavar="PATTERN",
        help="find runs by a path pattern, or `harbor` (see above); default: the harness's rules",
    )
    t.add_argument(
        "--profile",
        metavar="NAME|FILE",
        help="tool profile: codegraph, sourcegraph, mcp:SERVER, or a TOML file (default: "
        "chosen from the tools the runs call)",
    )
    t.add_argument(
        "--outcomes",
        metavar="FILE.csv",
        type=Path,
        help="rewards per run: columns log, or task,arm,trial, plus reward and/or passed",
    )
    t.add_argument(
        "--include-failed",
        action="store_true",
        help="keep runs that did not end ok (rate-limited, errored, timed out, infra errors, "
        "…) in the outcome and cost comparisons; by default they are left out and counted "
        "per arm",
    )
    add_prices_option(
        t, "for the runs whose log records no cost (and the priced cost beside the recorded one)"
    )
    t.add_argument(
        "--pass-threshold",
        type=float,
        default=1.0,
        metavar="R",
        help="a run passed when its reward is at least R (default 1.0)",
    )
    p.set_defaults(func=_run)


def _trial_mode(args) -> bool:
    return (
        args.layout is not None
        or args.profile is not None
        or args.outcomes is not None
        or args.prices is not None
    )


def _run_trials(args, arms, make_writer) -> int:
    """The trial sweep, printed; what is printed also goes to the snapshot's writer (see
    `_sweep`)."""
    from evalkit.outputs.trials_text import (
        render_trials_json,
        render_trials_markdown,
        render_trials_text,
    )
    from evalkit.tables.compare import parse_exclude
    from evalkit.tables.trials import run_trial_sweep

    result = run_trial_sweep(
        args.dir,
        exclude=parse_exclude(args.exclude),
        layout=args.layout,
        profile=args.profile,
        outcomes=args.outcomes,
        pass_threshold=args.pass_threshold,
        arms=arms,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        jobs=args.jobs,
        progress=None,
        include_failed=args.include_failed,
        prices=args.prices,
    )
    writer = make_writer()
    out = sys.stdout if writer is None else _Tee(sys.stdout, writer)
    if args.markdown is not None:
        _markdown(args.markdown, render_trials_markdown(result), writer)
    if args.json:
        out.write(render_trials_json(result))
    else:
        out.write(render_trials_text(result, every_file=args.list_files))
    return 0


def _run(args) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if args.scheduler is not None and args.engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    if args.tail < 0:
        raise UsageError(f"--tail must be 0 or more, got {args.tail}")
    if args.cache_dir is not None and args.cache_dir.exists() and not args.cache_dir.is_dir():
        # The store treats an unusable directory as a miss (it only costs speed); a path the
        # user named and that can never hold the store is a mistake worth saying.
        raise UsageError(f"--cache-dir {args.cache_dir}: not a directory")
    arms = None
    if args.arms is not None:
        arms = tuple(a.strip() for a in args.arms.split(",") if a.strip())
        if not arms:
            raise UsageError("--arms needs at least one arm label")
    trials = _trial_mode(args)
    if not trials and args.dir is not None and args.format == "auto":
        from evalkit.corpus.layouts import detect_layout

        # A harbor tree needs no --layout (issue 23): the trial sweep recognises it and says so.
        trials = os.path.isdir(args.dir) and detect_layout(args.dir) is not None
    if args.include_failed and not trials:
        raise UsageError(
            "--include-failed is for a trial sweep (--layout, --profile or --outcomes), whose "
            "outcome and cost comparisons leave out runs that did not end ok"
        )
    if trials:
        if args.format != "auto":
            raise UsageError(
                "--format is not used by a trial sweep (--layout, --profile, --outcomes), "
                "which reads Claude Code runs"
            )
        if args.dir is None:
            raise UsageError("a trial sweep (--layout, --profile, --outcomes) needs DIR")
        if not math.isfinite(args.pass_threshold):
            raise UsageError(f"--pass-threshold must be a number, got {args.pass_threshold}")
    snap = _snapshot(args, arms, trials)
    jobs = _workers_ahead(args, trials, snap)
    if jobs is None:
        if snap is not None:
            snap.walk()
        return _swept(args, arms, trials, snap)
    from evalkit.corpus.parse import workers_ahead

    # Every session will be parsed: the parser workers start now, and the first walks the tree
    # for the snapshot while this process discovers the sessions (issue 26).
    with workers_ahead(jobs) as pool:
        if snap is not None:
            snap.walk(pool)
        return _swept(args, arms, trials, snap)


def _workers_ahead(args, trials: bool, snap) -> int | None:
    """The parser processes to start before the sweep discovers its sessions, or None.

    Only for a local parallel sweep that will parse every session (its parse needs the
    workers and the parsing stack anyway): `--no-cache`, or a store holding neither a shard
    nor this command's stored output. Anything else (a warm store, a trial sweep, `-j 1`,
    Dask) starts as before: a sweep that parses nothing pays for no worker."""
    if trials or (args.dir is not None and not os.path.isdir(args.dir)):
        return None  # a trial sweep starts as before; a missing directory: the sweep says so
    if not args.no_cache and (snap is None or snap.exists()):
        return None
    from evalkit.corpus.parse import jobs_ahead

    return jobs_ahead(args.jobs, args.engine, None if args.no_cache else snap.path.parent)


def _swept(args, arms, trials: bool, snap) -> int:
    """The sweep (or the trial sweep) printed, or its stored output printed again."""
    if snap is not None and not args.verify:
        stored = snap.read()
        if stored is not None:
            with stored:
                if len(stored.sizes) == 1 + (args.markdown is not None):
                    return _replay(args, snap, stored)
    from evalkit.store.shards import writes_after_output

    made: list = []  # the snapshot's writer, made once the sweep is done (`writer`)

    def writer():
        """The writer of the snapshot (None: none is written), made on first use: after the
        sweep, whose tree walk may still be running in a parser worker."""
        if not made:
            made.append(snap.writer() if snap is not None else None)
        return made[0]

    # The output first: the store's last shards are written meanwhile, by the parser workers,
    # and waited for once it is out (the command still ends only when they are written).
    with writes_after_output(exits=getattr(args, "command_line", False)):
        try:
            code = (_run_trials if trials else _sweep)(args, arms, writer)
            if writer() is not None and _same_code():
                writer().commit()
        finally:
            if made and made[0] is not None:
                made[0].discard()  # a no-op once committed
        sys.stdout.flush()
    return code


def _sweep(args, arms, make_writer) -> int:
    """Run the sweep and print it; what is printed also goes to `make_writer()`, a snapshot
    being written (None: none), asked for once the sweep is done."""
    from evalkit.outputs.sweep_text import (
        needs_generic,
        render_json,
        render_markdown,
        render_text,
        write_json,
    )
    from evalkit.tables.compare import parse_exclude
    from evalkit.tables.sweep import run_sweep

    exclude = parse_exclude(args.exclude)
    result = run_sweep(
        args.dir,
        arms=arms,
        exclude=exclude,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        jobs=args.jobs,
        progress=None,
        verify=args.verify,
        engine=args.engine,
        scheduler=args.scheduler,
        format=args.format,
    )
    if arms is not None:
        from evalkit.corpus.discover import natural_key

        present = sorted(
            {r.arm for r in result.records if r.arm and r.status not in ("crash", "skipped")},
            key=natural_key,
        )
        missing = [a for a in arms if a not in present]
        if missing:
            raise UsageError(
                f"--arms: no session is in arm {', '.join(missing)}; arms found: "
                + (", ".join(present) if present else "none (no file name gives an arm)")
            )
    writer = make_writer()
    out = sys.stdout if writer is None else _Tee(sys.stdout, writer)
    if args.markdown is not None:
        _markdown(args.markdown, render_markdown(result, tail=args.tail), writer)
    if args.json:
        _json_note(result.bundled)
        if _writes_any_text(sys.stdout):
            write_json(result, out)  # piece by piece: never the whole text in memory
        else:
            # An output that cannot show every character gets the text whole or not at all,
            # never a JSON document cut off where the first such character stood.
            out.write(render_json(result))
    elif needs_generic(result):
        out.write(_generic_text(args, result))
    else:
        out.write(render_text(result, tail=args.tail, every_file=args.list_files, full=args.full))
    return 0


def _generic_text(args, result) -> str:
    """The report of a corpus whose sessions hold no explore call (issue 23): the generic
    comparison of its frames, read with the profile its tools call for (said in one line)."""
    from evalkit.corpus.load import load_corpus_frames
    from evalkit.outputs.generic_text import generic_lines
    from evalkit.outputs.sweep_text import render_generic_text
    from evalkit.tables.generic import generic_comparison

    corpus = load_corpus_frames(
        result.root,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        jobs=args.jobs,
        progress=False,
        verify=args.verify,
        format=None if args.format == "auto" else args.format,
    )
    cmp = generic_comparison(corpus.frame("sessions"), corpus.frame("tool_calls"))
    notes = []
    choice = corpus.profile_choice
    calls_mcp = any(
        isinstance(n, str) and n.startswith("mcp__")
        for n in corpus.frame("tool_calls")["name"].dropna()
    )
    if choice is not None and (not choice.profile.is_default or calls_mcp):
        notes.append(choice.line())
        notes.append(
            "  (the arm comparison with the tool under test's residual and the outcomes: "
            f"evalkit sweep DIR --profile {choice.flag})"
        )
    return render_generic_text(result, generic_lines(cmp), notes, every_file=args.list_files)


def _markdown(path: Path, text: str, writer=None) -> None:
    """Write `--markdown`'s file (and the same text as the first part of a snapshot)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--markdown {path}: cannot write ({exc.strerror})") from None
    if writer is not None:
        writer.write(text)
        writer.end_part()


def _json_note(bundled: bool) -> None:
    if bundled:
        print(f"note: {caveats.SYNTHETIC_CORPUS}", file=sys.stderr)


class _Tee:
    """A text stream writing to standard output and to a snapshot being written."""

    def __init__(self, out, writer) -> None:
        self.out, self.writer = out, writer

    def write(self, text: str) -> int:
        self.out.write(text)
        self.writer.write(text)
        return len(text)


def _snapshot(args, arms, trials: bool):
    """The snapshot of this command's output (`evalkit.store.snapshot`), or None when the
    command uses no store (`--no-cache`) or standard output cannot show every character (the
    output then depends on which characters it holds)."""
    if args.no_cache or not _writes_any_text(sys.stdout):
        return None
    from evalkit.paths import bundled_corpus, is_bundled_corpus
    from evalkit.store.keys import (
        default_cache_dir,
        limits_suffix,
        store_directory,
        sweep_fingerprint,
    )
    from evalkit.store.snapshot import Snapshot, file_digest, file_state

    root = os.fspath(args.dir if args.dir is not None else bundled_corpus())
    if not os.path.isdir(root):
        return None  # the sweep says what is wrong with it
    fmt = None if args.format == "auto" else args.format
    resolved = os.path.realpath(root)
    options = {
        "command": "sweep",
        "dir": args.dir,
        "resolved": resolved,
        "bundled": is_bundled_corpus(root),  # the sweep's own rule
        "json": args.json,
        "markdown": args.markdown is not None,
        "arms": None if arms is None else list(arms),
        "full": args.full,
        "exclude": args.exclude,
        "tail": args.tail,
        "list_files": args.list_files,
        "format": fmt,
    }
    inputs = []
    if trials:
        # What a trial sweep reads besides the tree: a profile file and an outcomes file (either
        # may be anywhere), by their content; each one's state is taken before its content is
        # read, and a snapshot is written only if it still holds then (`Snapshot.unchanged`).
        inputs = [(p, file_state(p)) for p in (args.profile, args.outcomes) if p is not None]
        options["trials"] = {
            "layout": args.layout,
            "profile": args.profile,
            "profile_file": file_digest(args.profile) if args.profile is not None else None,
            "outcomes": None if args.outcomes is None else os.fspath(args.outcomes),
            "outcomes_file": file_digest(args.outcomes) if args.outcomes is not None else None,
            "pass_threshold": args.pass_threshold,
            "include_failed": args.include_failed,
        }
        if args.outcomes is not None and options["trials"]["outcomes_file"] is None:
            return None  # an outcomes file that cannot be read: the sweep says so
        if (
            args.profile is not None
            and options["trials"]["profile_file"] is None
            and os.path.exists(args.profile)
        ):
            # A path the sweep reads as the profile (`load_profile`: an existing path, preset
            # name or not) whose content is no key: a pipe (`<(...)`, /dev/stdin), whose next
            # content may differ under the same name, or a directory the sweep refuses.
            return None
    fingerprint = sweep_fingerprint(fmt) + limits_suffix()
    store = store_directory(args.cache_dir or default_cache_dir(), fingerprint, root)
    # Walked by the caller (`_run`): here, or by a parser worker started ahead.
    return Snapshot(store, root, options, inputs, fingerprint, later=True)


def _same_code() -> bool:
    """Whether evalkit's code is still what keyed the snapshot: an edit or a checkout while the
    sweep ran would else store the new code's output under the old code's digest."""
    from evalkit.store.keys import code_fingerprint

    return code_fingerprint.__wrapped__() == code_fingerprint()


def _replay(args, snap, stored) -> int:
    """Print a stored output exactly as the sweep that stored it did (standard output a chunk at
    a time, as the sweep wrote its JSON)."""
    if args.markdown is not None:
        _markdown(args.markdown, stored.text(0))
    if args.json and "trials" not in snap.options:
        _json_note(snap.options["bundled"])
    stored.copy(len(stored.sizes) - 1, sys.stdout)
    return 0


def _writes_any_text(stream: object) -> bool:
    """Whether `stream` encodes every character (a UTF encoding), so a write cannot fail half
    way on a character it lacks."""
    import codecs

    try:
        name = codecs.lookup(getattr(stream, "encoding", None) or "").name
    except (LookupError, TypeError):
        return False
    return name in ("utf-8", "utf-16", "utf-32")
