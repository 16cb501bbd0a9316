"""The command line (`python -m lnpaper --help`).

`figures` with no names draws every figure of the book into figures/ and writes CLAIMS.md from the
same run, both from the record in results/; a PNG whose redraw shows the same picture, within the
pixel tolerance `PNG_TOLERANCE`, is left as it is. `--check` draws into a temporary folder instead
and fails, naming each difference, if a picture differs beyond that tolerance or CLAIMS.md differs
at all (it is text, compared exactly). That is the drift gate `make test` ends with. `record`
recomputes entries of the record; `reproduce` recomputes all of it elsewhere and compares
(`lnpaper.reproduce`); `stale` lists in seconds the entries whose experiment's code changed since
they were recorded (`lnpaper.companion.fingerprint`).
"""

import argparse
import sys
import tempfile
from pathlib import Path

from lnpaper import bench, book, ledger, reproduce
from lnpaper.companion import entries, record
from lnpaper.companion.fingerprint import code_fingerprint, stale_entries
from lnpaper.companion.png import PNG_TOLERANCE, png_difference, write_png_if_changed
from lnpaper.companion.runtime import setup
from lnpaper.count_work import count
from lnpaper.recompute import default_workers
from lnpaper.reproduce import typed_entries

FIGURES = book.figures()

CLAIMS_FILE = Path("CLAIMS.md")


def write_figures(names, out: Path) -> int:
    """Draw `names` into `out`, leaving a PNG that its redraw matches within tolerance; how many written."""
    out.mkdir(parents=True, exist_ok=True)
    return sum(write_png_if_changed(FIGURES[name].render(), out / f"{name}.png") for name in names)


def compare_figures(names, committed: Path, every: bool) -> list[str]:
    """Committed PNGs that a fresh drawing of `names` does not match within PNG_TOLERANCE."""
    problems = []
    with tempfile.TemporaryDirectory() as fresh_dir:
        fresh = Path(fresh_dir)
        write_figures(names, fresh)
        for name in names:
            old = committed / f"{name}.png"
            if not old.exists():
                problems.append(f"{old} is missing: run `make figures`")
            elif difference := png_difference(old, fresh / f"{name}.png"):
                problems.append(
                    f"{old} differs from a fresh drawing of figure {name!r}: {difference}"
                )
    if every:
        for stale in sorted(set(p.stem for p in committed.glob("*.png")) - set(FIGURES)):
            problems.append(f"{committed / stale}.png has no figure function: delete it")
    return problems


def _drift(problems: list[str]) -> int:
    for problem in problems:
        print(f"drift: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _write_claims() -> int:
    CLAIMS_FILE.write_text(ledger.markdown())
    print(f"wrote {CLAIMS_FILE}")
    return 0


def compare_claims() -> list[str]:
    if not CLAIMS_FILE.exists():
        return [f"{CLAIMS_FILE} is missing: run `make figures`"]
    if CLAIMS_FILE.read_text() != ledger.markdown():
        return [f"{CLAIMS_FILE} differs from a fresh run of the claim checks"]
    return []


def figures_command(args) -> int:
    if args.list:
        for name, spec in FIGURES.items():
            print(f"{name:28s} notebook {spec.notebook}")
        return 0
    unknown = [name for name in args.names if name not in FIGURES]
    if unknown:
        print(f"unknown figure(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    if args.out.exists() and not args.out.is_dir():
        print(f"--out must be a folder, got {str(args.out)!r}, which is a file", file=sys.stderr)
        return 2
    if not args.check:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            print(f"--out {str(args.out)!r} cannot be made: {error.strerror}", file=sys.stderr)
            return 2
    every = not args.names
    names = args.names or list(FIGURES)
    if args.check:
        problems = compare_figures(names, args.out, every) + (compare_claims() if every else [])
        if problems:
            return _drift(problems)
        print(
            f"figures --check: {len(names)} figures"
            + (" and CLAIMS.md" if every else "")
            + f" match a fresh run (PNGs within RMS {PNG_TOLERANCE})"
        )
        return 0
    written = write_figures(names, args.out)
    print(
        f"wrote {written} of {len(names)} figures to {args.out}/; the other "
        f"{len(names) - written} match their redraw within RMS {PNG_TOLERANCE} and are left as they are"
    )
    return _write_claims() if every else 0


def claims_command(args) -> int:
    return _drift(compare_claims()) if args.check else _write_claims()


def at_least_one(text: str) -> int:
    """--workers of `record`: a whole number of processes, at least 1 (checked before anything in
    the record is touched)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def record_command(args) -> int:
    if args.stamp:
        return stamp_command(args.names)
    if args.prune:
        return prune_command()
    return reproduce.record_command(args.names, args.workers)


def stamp_command(names) -> int:
    """Write the current code's fingerprint into every entry (or those of `names`), recomputing
    nothing, and without a `calls` field (the experiment calls an entry made, which the record of
    leaf runs does not keep). Only for a record the reproduction check has just confirmed on this
    code (entries recorded before they carried a fingerprint, or a change to what the fingerprint
    covers): the stamp then says the code each entry is known to match."""
    experiments = book.experiments()
    directory = record.record_dir()
    stamped = 0
    for entry in typed_entries(directory):
        name = entry["experiment"]
        if name not in experiments or (names and name not in names):
            continue
        fingerprint = code_fingerprint(experiments[name])
        if entry.get("code") == fingerprint and "calls" not in entry:
            continue
        entry = {k: v for k, v in entry.items() if k != "calls"} | {"code": fingerprint}
        ordered = {k: entry[k] for k in ("experiment", "key", "arguments", "code")} | entry
        entries.write_entry(directory / f"{name}-{entry['key']}.json", ordered)
        stamped += 1
    print(f"record --stamp: fingerprinted {stamped} entries in {directory}")
    return 0


def prune_command() -> int:
    """Delete the entries of experiments no chapter lists (a study turned into an analysis of
    the runs it gathers, say), naming each."""
    directory = record.record_dir()
    experiments = book.experiments()
    pruned = [e for e in record.entries(directory) if e["experiment"] not in experiments]
    for entry in pruned:
        path = directory / f"{entry['experiment']}-{entry['key']}.json"
        path.unlink()
        print(f"record --prune: removed {path.name} (no experiment {entry['experiment']!r})")
    print(f"record --prune: removed {len(pruned)} entries from {directory}")
    return 0


def stale_command(args) -> int:
    directory = record.record_dir()
    found = typed_entries(directory)
    lines = stale_entries(found, book.experiments())
    for line in lines:
        print(line)
    print(
        f"stale: {len(lines)} of {len(found)} entries in {directory} are not of the current code"
        + ("; `python -m lnpaper record NAME` recomputes an experiment's entries" if lines else "")
    )
    return 1 if lines else 0


def reproduce_command(args) -> int:
    return reproduce.reproduce_command(args.workers, args.report, args.names, args.keep, args.flops)


def work_command(args) -> int:
    """Count every record entry's FLOPs once (a multiple of the entry's time) into args.out,
    entry by entry; entries already counted for their current code are skipped."""
    entries = typed_entries(record.record_dir())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        counts = count(entries, args.workers, Path(scratch), args.out)
    print(f"work: {sum(c['flops'] for c in counts.values()) / 1e12:.1f} TFLOP in {len(counts)} "
          f"of {len(entries)} entries, in {args.out}")  # fmt: skip
    return 0


def bench_command(args) -> int:
    bench.main(pin=not args.no_pin)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lnpaper", description="The lnpaper companion's command line."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    figures = commands.add_parser("figures", help="draw figures/ and write CLAIMS.md")
    figures.add_argument("names", nargs="*", metavar="NAME", help="only these figures")
    figures.add_argument("--list", action="store_true", help="list the figures")
    figures.add_argument("--out", type=Path, default=Path("figures"), help="folder for the PNGs")
    figures.add_argument("--check", action="store_true", help="fail if anything would change")
    figures.set_defaults(run=figures_command)
    claims_parser = commands.add_parser("claims", help="write CLAIMS.md only")
    claims_parser.add_argument("--check", action="store_true", help="fail if it would change")
    claims_parser.set_defaults(run=claims_command)
    record_parser = commands.add_parser("record", help="recompute entries of the record")
    record_parser.add_argument("names", nargs="*", metavar="NAME", help="only these experiments")
    record_parser.add_argument("--workers", type=at_least_one, default=default_workers())
    record_parser.add_argument(
        "--stamp",
        action="store_true",
        help="write the current code's fingerprint into the entries, recomputing nothing (only "
        "for a record the reproduction check has just confirmed on the current code)",
    )
    record_parser.add_argument(
        "--prune",
        action="store_true",
        help="remove the entries of experiments no chapter lists, recomputing nothing",
    )
    record_parser.set_defaults(run=record_command)
    stale_parser = commands.add_parser(
        "stale", help="list record entries whose experiment's code changed since they were recorded"
    )
    stale_parser.set_defaults(run=stale_command)
    reproduce_parser = commands.add_parser(
        "reproduce", help="recompute every experiment and compare it with the record"
    )
    reproduce_parser.add_argument("names", nargs="*", metavar="NAME", help="only these experiments")
    reproduce_parser.add_argument("--workers", type=int, default=default_workers())
    reproduce_parser.add_argument("--report", type=Path, help="also write the report here")
    reproduce_parser.add_argument(
        "--keep",
        type=Path,
        help="keep the recomputed record in this folder (emptied first), e.g. to run the notebooks "
        "on it with LNPAPER_RECORD_DIR",
    )
    reproduce_parser.add_argument(
        "--flops",
        type=Path,
        help="the entries' FLOP counts (`work --out`): the report then states the check's rate",
    )
    reproduce_parser.set_defaults(run=reproduce_command)
    work_parser = commands.add_parser(
        "work", help="count each record entry's floating-point work once, for the check's rate"
    )
    work_parser.add_argument("--workers", type=at_least_one, default=default_workers())
    work_parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    work_parser.set_defaults(run=work_command)
    bench_parser = commands.add_parser(
        "bench", help="time the normalizers and the recurrent cells, as ratios"
    )
    bench_parser.add_argument(
        "--no-pin", action="store_true", help="leave glibc's allocator as it is"
    )
    bench_parser.set_defaults(run=bench_command)
    args = parser.parse_args(argv)
    setup(quiet=True)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
