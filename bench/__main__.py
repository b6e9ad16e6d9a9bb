"""`python -m bench [--quick] [--runs N] [NAME ...]`: run the benchmarks, print their figures, and append a
row per benchmark to bench/RESULTS.md (not in quick mode). See bench/README.md."""

from __future__ import annotations

import argparse
import datetime
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from bench.harness import BENCH, Result, commit, machine
from bench.suite import BENCHMARKS, Config

RESULTS = BENCH / "RESULTS.md"
RESULTS_HEADER = (
    "# Benchmark results\n\n"
    "Appended by `.venv/bin/python -m bench` (one row per benchmark and run of the suite; quick mode records "
    "nothing). Medians of the runs given in each row.\n\n"
    "| date | commit | machine | runs | benchmark | figures | targets |\n"
    "|---|---|---|---|---|---|---|\n"
)


def _mark(met: bool | None) -> str:
    return {True: "met", False: "MISSED", None: "not judged"}[met]


def show(result: Result) -> None:
    print(f"\n== {result.name}")
    for name, value in result.figures.items():
        print(f"  {name}: {value}")
    for target in result.targets:
        print(f"  [{_mark(target.met)}] {target.what}")
    for note in result.notes:
        print(f"  note: {note}")


def record(results: list[Result], runs: int) -> None:
    if not RESULTS.exists():
        RESULTS.write_text(RESULTS_HEADER, encoding="utf-8")
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %z")
    where, revision = machine(), commit()
    rows = []
    for result in results:
        figures = "<br>".join(f"{k}: {v}" for k, v in result.figures.items()).replace("|", "\\|")
        targets = "<br>".join(f"{_mark(t.met)}: {t.what}" for t in result.targets).replace("|", "\\|")
        rows.append(f"| {date} | {revision} | {where} | {runs} | {result.name} | {figures} | {targets} |\n")
    with RESULTS.open("a", encoding="utf-8") as out:
        out.writelines(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "names", nargs="*", choices=[*BENCHMARKS, []], help="benchmarks to run (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run, no judging, no recording")
    parser.add_argument("--runs", type=int, default=None, help="runs per measurement (default 5; quick: 1)")
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args(argv)
    runs = args.runs or (1 if args.quick else 5)
    names = args.names or list(BENCHMARKS)
    scratch = Path(tempfile.mkdtemp(prefix="acp-bench-"))
    config = Config(quick=args.quick, runs=runs, scratch=scratch)
    mode = " (quick)" if args.quick else ""
    print(f"acp.nvim benchmarks: commit {commit()}, {machine()}, {runs} run(s){mode}")
    results: list[Result] = []
    failed = False
    try:
        for name in names:
            print(f"\n.. {name}", flush=True)
            try:
                result = BENCHMARKS[name](config)
            except Exception:
                failed = True
                print(f"== {name}: FAILED")
                traceback.print_exc()
                continue
            results.append(result)
            show(result)
            sys.stdout.flush()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if results and not args.quick and not args.no_record:
        record(results, runs)
        print(f"\nrecorded in {RESULTS.relative_to(BENCH.parent)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
