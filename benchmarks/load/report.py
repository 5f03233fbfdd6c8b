#!/usr/bin/env python3
"""Turns a run.sh results directory (meta.env, runs.tsv, stats.tsv) into results.md and chart.svg.

    benchmarks/load/report.py DIR

Medians are taken over the interleaved rounds; ratios are ratios of medians, so one disturbed round moves them less
than it moves a mean. Run again on the same directory to redraw after editing nothing but this script.
"""
import csv
import statistics
import subprocess
import sys
from pathlib import Path

SCENARIOS = {
    "plaintext16": "/plaintext, 16 pipelined",
    "plaintext1": "/plaintext, no pipelining",
    "json1": "/json, no pipelining",
}
PLACEMENTS = {
    "pinned": "Pinned: server on CPU 0 (one loop, one nginx worker, one ceiling thread), wrk on CPU 1",
    "unpinned": "Unpinned: server and wrk on every core (one loop, worker or thread per core)",
}
# wrk 4.1 times a pipelined batch as one sample and then adds samples for coordinated omission at intervals of one
# response, some below its recorded minimum, where its percentile walk never looks: its pipelined percentiles are
# not per-request latencies and its 99th is sometimes 0. They stay in runs.tsv; the tables do not show them.
PIPELINED = {"plaintext16"}
# Bar colours in server order, readable side by side and in grey.
COLOURS = ["#1b5e9f", "#5fa8e8", "#c0392b", "#f08a7e", "#2e8b57", "#7f7f7f", "#8e44ad", "#d4a017", "#17becf",
           "#bcbd22", "#e377c2", "#8c564b", "#393b79"]


def read_meta(directory):
    meta = {}
    for line in (directory / "meta.env").read_text().splitlines():
        key, _, value = line.partition("=")
        meta[key] = value
    return meta


def read_tsv(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def ordered(values):
    """Distinct values in first-seen order."""
    return list(dict.fromkeys(values))


def requests(value):
    return f"{value:,.0f}"


def latency(microseconds):
    return f"{microseconds:.0f} µs" if microseconds < 1000 else f"{microseconds / 1000:.2f} ms"


def ratio(numerator, denominator):
    return f"{numerator / denominator:.2f}x" if numerator > 0 and denominator > 0 else "n/a"


class Figures:
    """The runs of one results directory, indexed by placement, scenario, connections and server."""

    def __init__(self, runs):
        self.runs = runs
        self.placements = ordered(r["placement"] for r in runs)
        self.scenarios = ordered(r["scenario"] for r in runs)
        self.connections = sorted(ordered(int(r["connections"]) for r in runs))
        self.servers = ordered(r["server"] for r in runs)
        self.rounds = sorted(ordered(int(r["round"]) for r in runs))
        self.cells = {}
        for r in runs:
            key = (r["placement"], r["scenario"], int(r["connections"]), r["server"])
            self.cells.setdefault(key, []).append(r)

    def values(self, placement, scenario, connections, server, column):
        return [float(r[column]) for r in self.cells.get((placement, scenario, connections, server), [])]

    def median(self, placement, scenario, connections, server, column):
        values = self.values(placement, scenario, connections, server, column)
        return statistics.median(values) if values else 0.0

    def rows(self):
        for scenario in self.scenarios:
            for connections in self.connections:
                yield scenario, connections


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def placement_section(figures, placement, stats):
    lines = [f"## {PLACEMENTS.get(placement, placement)}", ""]
    head = ["Scenario", "Connections"] + figures.servers

    def grid(cell):
        return [[SCENARIOS.get(s, s), str(c)] + [cell(s, c, server) for server in figures.servers] for s, c in figures.rows()]

    def throughput(s, c, server):
        values = figures.values(placement, s, c, server, "requests_per_second")
        if not values:
            return "-"
        spread = f" ({requests(min(values))}–{requests(max(values))})" if len(values) > 1 else ""
        return requests(statistics.median(values)) + spread

    rounds = len(figures.rounds)
    lines += [f"### Requests per second (median of {rounds} round{'s' if rounds != 1 else ''}; lowest–highest)", ""]
    lines += table(head, grid(throughput)) + [""]
    lines += ["### Latency p50 / p99 (medians over rounds)", ""]
    lines += table(head, grid(lambda s, c, server: "n/a" if s in PIPELINED else
                              f"{latency(figures.median(placement, s, c, server, 'p50_us'))} / "
                              f"{latency(figures.median(placement, s, c, server, 'p99_us'))}")) + [""]
    if any(s in PIPELINED for s in figures.scenarios):
        lines += ["n/a: wrk's percentiles of pipelined runs are not per-request latencies (report.py says why).", ""]
    lines += ["### Server CPU time per request, µs (median over rounds; lower is cheaper)", ""]
    lines += table(head, grid(lambda s, c, server: f"{figures.median(placement, s, c, server, 'cpu_us_per_request'):.2f}")) + [""]

    for subject in [s for s in figures.servers if s.startswith("falconet-")]:
        peers = [s for s in figures.servers if s != subject]
        if not peers:
            continue
        lines += [f"### {subject} against each server: requests/s ratio · CPU-per-request ratio (above 1: {subject} is faster · cheaper)", ""]

        def against(s, c, peer, subject=subject):
            rps = ratio(figures.median(placement, s, c, subject, "requests_per_second"),
                        figures.median(placement, s, c, peer, "requests_per_second"))
            cpu = ratio(figures.median(placement, s, c, peer, "cpu_us_per_request"),
                        figures.median(placement, s, c, subject, "cpu_us_per_request"))
            return f"{rps} · {cpu}"

        rows = [[SCENARIOS.get(s, s), str(c)] + [against(s, c, peer) for peer in peers] for s, c in figures.rows()]
        lines += table(["Scenario", "Connections"] + [f"/ {p}" for p in peers], rows) + [""]

    own = [r for r in stats if r["placement"] == placement]
    if own:
        lines += ["### Falconet's allocations and collections (the sample's --stats line, whole process: start-up, warm-up, every figure)", ""]
        rows = []
        for r in own:
            fields = dict(part.split("=", 1) for part in r["stats"].split() if "=" in part)
            rows.append([r["round"], r["server"], requests(float(fields.get("requests", 0))),
                         fields.get("allocated_bytes_per_request", "?"),
                         " / ".join(fields.get(g, "?") for g in ("gen0", "gen1", "gen2")),
                         fields.get("accepted_per_loop", "-")])
        lines += table(["Round", "Server", "Requests", "Allocated bytes per request", "gen0 / gen1 / gen2", "Connections per loop"], rows) + [""]
    return lines


def errors_section(figures):
    failed = [r for r in figures.runs if int(r["errors"]) > 0 or float(r["requests_per_second"]) == 0]
    lines = ["## Errors", ""]
    if not failed:
        return lines + ["wrk reported no socket error and no non-2xx answer.", ""]
    lines += ["wrk reported socket errors or non-2xx answers (or no answer at all) here; its output is in logs/:", ""]
    for r in failed:
        lines.append(f"- round {r['round']}, {r['placement']}, {r['server']}, {r['scenario']}, {r['connections']} connections: "
                     f"{r['errors']} errors, {requests(float(r['requests_per_second']))} req/s")
    return lines + [""]


def rounds_section(figures):
    lines = ["## Every round (requests/s · p99 · server CPU µs per request)", ""]
    head = ["Placement", "Scenario", "Connections", "Server"] + [f"Round {n}" for n in figures.rounds]
    rows = []
    for placement in figures.placements:
        for s, c in figures.rows():
            for server in figures.servers:
                by_round = {int(r["round"]): r for r in figures.cells.get((placement, s, c, server), [])}
                cells = [f"{requests(float(by_round[n]['requests_per_second']))} · "
                         f"{'n/a' if s in PIPELINED else latency(float(by_round[n]['p99_us']))} · "
                         f"{float(by_round[n]['cpu_us_per_request']):.2f}" if n in by_round else "-" for n in figures.rounds]
                rows.append([placement, SCENARIOS.get(s, s), str(c), server] + cells)
    lines += ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * 4 + ["---:"] * len(figures.rounds)) + " |"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows] + [""]


def chart(directory, figures):
    """One panel per placement and scenario: bars per server at each connection count, whiskers lowest to highest round."""
    rows, columns = len(figures.placements), len(figures.scenarios)
    legend, title = 0.1, 0.07  # fractions of the height kept for the key (bottom) and the title (top)
    panel_height = (1 - legend - title) / rows
    script = [
        f"set terminal svg size {380 * columns + 40},{300 * rows + 120} dynamic font 'sans,11' background '#ffffff'",
        f"set output '{directory / 'chart.svg'}'",
        "set style data histogram",
        "set style histogram errorbars gap 1.5 lw 1",
        "set style fill solid 0.9 border -1",
        "set boxwidth 0.9",
        "set grid ytics lc rgb '#dddddd'",
        "set yrange [0:*]",
        "set format y '%.0fk'",
        "set xlabel 'connections' offset 0,0.5",
        "set key off",
    ]
    for i, _ in enumerate(figures.servers):
        script.append(f"set linetype {i + 1} lc rgb '{COLOURS[i % len(COLOURS)]}'")
    rounds = len(figures.rounds)
    script.append(f"set multiplot title 'Requests per second, median of {rounds} round{'s' if rounds != 1 else ''}"
                  f"{' (whiskers: lowest and highest round)' if rounds > 1 else ''}'")
    for row, placement in enumerate(figures.placements):
        for column, scenario in enumerate(figures.scenarios):
            data = directory / f"chart-{placement}-{scenario}.dat"
            with data.open("w") as f:
                f.write("# connections, then median lowest highest (thousands of requests/s) per server: " + " ".join(figures.servers) + "\n")
                for c in figures.connections:
                    cells = []
                    for server in figures.servers:
                        values = figures.values(placement, scenario, c, server, "requests_per_second") or [0.0]
                        cells += [f"{statistics.median(values) / 1000:.1f}", f"{min(values) / 1000:.1f}", f"{max(values) / 1000:.1f}"]
                    f.write(f"{c} " + " ".join(cells) + "\n")
            script += [
                f"set origin {column / columns:.4f},{legend + (rows - 1 - row) * panel_height:.4f}",
                f"set size {1 / columns:.4f},{panel_height:.4f}",
                f"set title '{placement} · {SCENARIOS.get(scenario, scenario)}'",
                "plot for [i=0:%d] '%s' using (column(2+3*i)):(column(3+3*i)):(column(4+3*i)):xtic(1) notitle"
                % (len(figures.servers) - 1, data),
            ]
    # The key gets a strip of its own under the panels, drawn from an empty plot: one entry per server.
    script += ["set origin 0,0", f"set size 1,{legend}", "unset border", "unset tics", "unset xlabel", "unset title",
               "unset grid", "set yrange [0:1]", "set xrange [0:1]",
               f"set key center center horizontal reverse Left maxcols {min(len(figures.servers), 7)} samplen 2",
               "plot " + ", ".join(f"NaN with boxes lt {i + 1} title '{server}'" for i, server in enumerate(figures.servers)),
               "unset multiplot"]
    (directory / "chart.gp").write_text("\n".join(script) + "\n")
    subprocess.run(["gnuplot", str(directory / "chart.gp")], check=True)


def main(directory):
    meta = read_meta(directory)
    figures = Figures(read_tsv(directory / "runs.tsv"))
    stats = read_tsv(directory / "stats.tsv")
    if not figures.runs:
        sys.exit(f"{directory / 'runs.tsv'} holds no run")
    chart(directory, figures)
    lines = [
        f"# Load comparison, {meta.get('date', '?')}",
        "",
        f"Command: `{meta.get('command', '?')}`",
        "",
        f"Machine: {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores, {meta.get('kernel', '?')}; .NET SDK {meta.get('dotnet', '?')}, "
        f"wrk {meta.get('wrk', '?')}, nginx {meta.get('nginx', '?')}, gcc {meta.get('gcc', '?')}. Load average (1, 5, 15 min) "
        f"before: {meta.get('load_before', '?')}; after: {meta.get('load_after', '?')}.",
        "",
        f"Every figure is one wrk run of {meta.get('duration', '?')} s (wrk -t1 --timeout 8, TechEmpower's request headers) after "
        f"{meta.get('warmup', '?')} s of warm-up per server start; {len(figures.rounds)} interleaved round(s), medians over rounds. "
        f"Servers: {', '.join(figures.servers)}. Requests/s depends on how much of the machine each side got; server CPU "
        "time per request (user + system, from /proc) does not, so it compares servers even on a busy machine. The ceiling "
        "parses nothing: near it, the client and the kernel are the bottleneck, not the server.",
        "",
        "![Requests per second per server and scenario](chart.svg)",
        "",
    ]
    for placement in figures.placements:
        lines += placement_section(figures, placement, stats)
    lines += errors_section(figures) + rounds_section(figures)
    (directory / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIRECTORY")
    main(Path(sys.argv[1]))
