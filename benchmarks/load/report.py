#!/usr/bin/env python3
"""Turns a load harness results directory into Markdown and charts, and with --publish into docs/benchmarks.md.

    benchmarks/load/report.py DIR [--publish]

Writes DIR/results.md (every section), DIR/md/SECTION.md and DIR/images/load-*.svg. With --publish, each generated
block of docs/benchmarks.md (between `<!-- generated: NAME -->` and `<!-- end generated: NAME -->`) is replaced by the
section of the same name and the charts are copied to docs/images/; the text outside the blocks is kept as it is. The
blocks a whole run sums up (run, servers, targets) are published only by a run of every section and server (no
`--sections` or `--servers`).
Every table is headed by the run's command, commit and machine.

Medians are taken over rounds. A ratio between two servers is the median of the per-round ratios (rounds interleave
the servers, so a round's ratio compares two servers measured minutes apart), with the lowest and highest round's.
A comparison reads "ahead" only where every round's ratio is above 1, "behind" where every one is below, and
"within the spread" otherwise; a target counts as met where at least 80 % of the rounds reach it.
"""
import csv
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import HANDSHAKES, SHAPES  # noqa: E402
from servers import SERVERS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs/benchmarks.md"
SATURATED = 0.95
# The connection counts aspnet/Benchmarks runs its plaintext and JSON scenarios at; the cost tables show these.
HEADLINE = {"plaintext16": 1024, "json1": 512, "plaintext1": 256}
COLOURS = ["#1b5e9f", "#5fa8e8", "#c0392b", "#f08a7e", "#2e8b57", "#9ad0a8", "#7f7f7f", "#8e44ad", "#d4a017", "#17becf",
           "#bcbd22", "#e377c2", "#8c564b", "#393b79"]


# ---- reading --------------------------------------------------------------------------------------------------

def rows_of(directory, name):
    path = directory / f"{name}.tsv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def number(row, key):
    value = row.get(key)
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def label(name):
    server = SERVERS.get(name)
    return server.label if server else name


class Cells:
    """Rows of one section indexed by (placement, scenario, connections, server, loops)."""

    def __init__(self, rows):
        self.rows = rows
        self.index = {}
        for r in rows:
            self.index.setdefault(self.key(r), []).append(r)

    @staticmethod
    def key(r):
        return (r["placement"], r["scenario"], int(r["connections"] or 0), r["server"], r.get("loops") or "")

    def measured(self, key):
        return [r for r in self.index.get(key, []) if not r["note"] or not r["note"].startswith(("not ", "did not"))]

    def values(self, key, column):
        return [v for v in (number(r, column) for r in self.measured(key)) if v is not None]

    def median(self, key, column):
        values = self.values(key, column)
        return statistics.median(values) if values else None

    def note(self, key):
        notes = [r["note"] for r in self.index.get(key, []) if r["note"]]
        return notes[0] if notes else ""

    def by_round(self, key, column):
        return {r["round"]: number(r, column) for r in self.measured(key) if number(r, column)}

    def servers(self):
        return list(dict.fromkeys(r["server"] for r in self.rows))

    def cells(self):
        seen = {}
        for r in self.rows:
            seen.setdefault((r["placement"], r["scenario"], int(r["connections"] or 0), r.get("loops") or ""), None)
        order = {name: i for i, name in enumerate(SHAPES)}
        return sorted(seen, key=lambda k: (k[0], order.get(k[1], 99), k[2], k[3]))


def paired(cells, key_a, key_b, column="requests_per_second"):
    """Per-round ratios a / b, for the rounds both have."""
    a, b = cells.by_round(key_a, column), cells.by_round(key_b, column)
    return [a[r] / b[r] for r in a if r in b and b[r]]


def verdict(ratios):
    if not ratios:
        return "n/a"
    m = statistics.median(ratios)
    spread = f"{m:.2f}x" + (f" ({min(ratios):.2f}–{max(ratios):.2f}, {len(ratios)} rounds)" if len(ratios) > 1 else " (1 round)")
    if len(ratios) > 1 and min(ratios) > 1:
        return spread + ", ahead"
    if len(ratios) > 1 and max(ratios) < 1:
        return spread + ", behind"
    return spread + (", within the spread" if len(ratios) > 1 else "")


def target_met(ratios, target):
    if not ratios:
        return "not measured"
    reached = sum(1 for r in ratios if r >= target)
    if len(ratios) == 1:
        return f"{'reached' if reached else 'missed'} in the one round (not enough rounds to say)"
    if reached >= 0.8 * len(ratios):
        return f"**met** ({reached} of {len(ratios)} rounds)"
    if statistics.median(ratios) >= target:
        return f"at the median only ({reached} of {len(ratios)} rounds)"
    return f"**missed** ({reached} of {len(ratios)} rounds)"


# ---- formatting -----------------------------------------------------------------------------------------------

def thousands(v):
    return "-" if v is None else f"{v:,.0f}"


def micro(v):
    if v is None:
        return "-"
    return f"{v:.0f} µs" if v < 1000 else f"{v / 1000:.2f} ms" if v < 1e6 else f"{v / 1e6:.2f} s"


def fixed(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def percent(v):
    return "-" if v is None else f"{v * 100:.0f} %"


def table(header, rows, align=None):
    align = align or (["---"] + ["---:"] * (len(header) - 1))
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"] + ["| " + " | ".join(r) + " |" for r in rows] + [""]


def caption(meta, section, rounds, extra=""):
    smoke = meta.get("quick") == "true"
    head = "**Smoke run on a shared, loaded machine (`--quick`): the structure is real, the figures mean nothing.** " if smoke else ""
    return (f"{head}Measured by `{meta.get('command', '?')}` (section `{section}`) at commit `{meta.get('commit', '?')}`, "
            f"{meta.get('date', '?')}; {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores, Linux {meta.get('kernel', '?')}, "
            f"{meta.get('os', '?')}; .NET SDK {meta.get('dotnet', '?')}, wrk {meta.get('wrk', '?')}, nginx {meta.get('nginx', '?')}, "
            f"h2load {meta.get('h2load', '?')}, OpenSSL {meta.get('openssl', '?')}. {meta.get('duration', '?')} s per figure, "
            f"{rounds} round{'s' if rounds != 1 else ''}; steal over the whole run {meta.get('steal_percent', '?')} %, load average "
            f"before {meta.get('load_before', '?')}, after {meta.get('load_after', '?')}.{extra}")


def rounds_of(rows):
    return len({r["round"] for r in rows}) or 0


# ---- charts ---------------------------------------------------------------------------------------------------

def gnuplot(script, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    gp = path.with_suffix(".gp")
    gp.write_text("\n".join(script) + "\n")
    result = subprocess.run(["gnuplot", str(gp)], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"gnuplot failed for {path}: {result.stderr.strip()}", file=sys.stderr)


def bar_chart(path, title, panels, servers, ylabel, scale=1000.0, unit="k"):
    """Grouped bars with whiskers (lowest and highest round): panels is [(title, [(x label, {server: [values]})])]."""
    columns = min(len(panels), 3)
    rows = (len(panels) + columns - 1) // columns
    width = max(420 * columns + 40, 760)
    per_row = max(1, min(len(servers), width // 190))  # legend entries per line
    legend_px = 24 * ((len(servers) + per_row - 1) // per_row) + 30
    height_px = 300 * rows + 60 + legend_px
    legend, top = legend_px / height_px, 50 / height_px
    height = (1 - legend - top) / rows
    script = [f"set terminal svg size {width},{height_px} dynamic font 'sans,11' background '#ffffff'",
              f"set output '{path}'", "set style data histogram", "set style histogram errorbars gap 1.5 lw 1",
              "set style fill solid 0.9 border -1", "set boxwidth 0.9", "set grid ytics lc rgb '#dddddd'", "set yrange [0:*]",
              f"set format y '%.0f{unit}'", f"set ylabel '{ylabel}'", "set key off", "set xtics nomirror", "set bars 0.5"]
    for i in range(len(servers)):
        script.append(f"set linetype {i + 1} lc rgb '{COLOURS[i % len(COLOURS)]}'")
    script.append(f"set multiplot title '{title}'")
    for n, (panel_title, groups) in enumerate(panels):
        data = path.parent / f"{path.stem}-{n}.dat"
        with data.open("w") as f:
            f.write("# group, then median lowest highest per server: " + " ".join(servers) + "\n")
            for group, values in groups:
                cells = []
                for server in servers:
                    v = values.get(server) or [0.0]
                    cells += [f"{statistics.median(v) / scale:.3f}", f"{min(v) / scale:.3f}", f"{max(v) / scale:.3f}"]
                f.write(f"\"{group}\" " + " ".join(cells) + "\n")
        row, column = divmod(n, columns)
        script += [f"set origin {column / columns:.4f},{legend + (rows - 1 - row) * height:.4f}",
                   f"set size {1 / columns:.4f},{height:.4f}", f"set title \"{panel_title}\"",
                   "plot for [i=0:%d] '%s' using (column(2+3*i)):(column(3+3*i)):(column(4+3*i)):xtic(1) notitle" % (len(servers) - 1, data)]
    script += ["set origin 0,0", f"set size 1,{legend}", "unset border", "unset tics", "unset title", "unset grid", "unset ylabel",
               "set yrange [0:1]", "set xrange [0:1]", f"set key center center horizontal reverse Left maxcols {per_row} samplen 2",
               "plot " + ", ".join(f"NaN with boxes lt {i + 1} title '{label(s)}'" for i, s in enumerate(servers)), "unset multiplot"]
    gnuplot(script, path)


def latency_chart(path, cells, servers, meta):
    smoke = " (smoke run: meaningless)" if meta.get("quick") == "true" else ""
    script = ["set terminal svg size 980,460 dynamic font 'sans,11' background '#ffffff'", f"set output '{path}'",
              "set grid lc rgb '#dddddd'", "set logscale y", "set xlabel 'load, % of the server''s own maximum'",
              "set ylabel 'latency from the intended send time'", "set format y '%.0s %cs'", "set key below",
              "set xrange [20:95]", "set xtics 10",
              f"set multiplot layout 1,2 title 'Constant-rate latency, /plaintext without pipelining (median over rounds){smoke}'"]
    for column, title in (("p99_us", "p99"), ("p999_us", "p99.9")):
        plots = []
        for i, server in enumerate(servers):
            data = path.parent / f"{path.stem}-{server}-{column}.dat"
            with data.open("w") as f:
                loads = sorted({int(r["load_percent"]) for r in cells.rows if r["server"] == server and r["load_percent"] and int(r["load_percent"]) < 100})
                for load in loads:
                    values = [number(r, column) for r in cells.rows if r["server"] == server and r["load_percent"] == str(load) and number(r, column)]
                    if values:
                        f.write(f"{load} {statistics.median(values) * 1e-6:.9f}\n")
            plots.append(f"'{data}' using 1:2 with linespoints lw 2 pt 7 lc rgb '{COLOURS[i % len(COLOURS)]}' title '{label(server)}'")
        script += [f"set title '{title}'", "plot " + ", ".join(plots)]
    script.append("unset multiplot")
    gnuplot(script, path)


# ---- sections -------------------------------------------------------------------------------------------------

def opening(directory, meta, name):
    """A section's rows, indexed, its servers and its caption; or the line that says it did not run."""
    rows = rows_of(directory, name)
    if not rows:
        return None, [f"*Section `{name}` did not run.*", ""]
    cells = Cells(rows)
    return (rows, cells, cells.servers()), [caption(meta, name, rounds_of(rows)), ""]


def grid_section(directory, meta, name, subject_names=("falconet-libuv",), images=None):
    opened, lines = opening(directory, meta, name)
    if opened is None:
        return lines
    rows, cells, servers = opened
    keys = cells.cells()
    has_loops = any(k[3] for k in keys)
    placements = len({k[0] for k in keys}) > 1

    def scenario_label(k):
        text = SHAPES[k[1]].label if k[1] in SHAPES else k[1]
        return f"{k[0]}: {text}" if placements else text

    def cell_key(k, server):
        return (k[0], k[1], k[2], server, k[3])

    # Requests per second.
    def rps(k, server):
        key = cell_key(k, server)
        values = cells.values(key, "requests_per_second")
        note = cells.note(key)
        if not values:
            return f"*{note}*" if note else "-"
        text = thousands(statistics.median(values))
        if len(values) > 1:
            text += f" ({thousands(min(values))}–{thousands(max(values))})"
        if any((number(r, "client_busy") or 0) >= SATURATED for r in cells.measured(key)):
            text += " ‡"
        if any((number(r, "errors") or 0) > 0 for r in cells.measured(key)):
            text += " †"
        if any(r.get("client") == "loadgen" for r in cells.measured(key)):
            text += " §"
        return text

    head = ["Scenario", "Connections"] + (["Loops"] if has_loops else []) + [label(s) for s in servers]
    body = [[scenario_label(k), f"{k[2]:,}"] + ([k[3]] if has_loops else []) + [rps(k, s) for s in servers] for k in keys]
    lines += [f"Requests per second, median of the rounds (lowest–highest). ‡: the client's core was at least {SATURATED:.0%} busy "
              "in a round, so the client, not the server, may be the limit there. †: the client reported errors (logs/). §: measured "
              "with loadgen's closed loop instead of wrk (above 1,024 connections: it opens the connections before its clock "
              "starts, where wrk opens them all at once inside its measured time); every server of a row has the same client.", ""]
    lines += table(head, body, ["---", "---:"] + (["---:"] if has_loops else []) + ["---:"] * len(servers))

    # What each figure cost, at the headline counts (every count in the details block below).
    def cost_rows(selected):
        out = []
        for k in selected:
            for s in servers:
                key = cell_key(k, s)
                if not cells.measured(key):
                    continue
                m = lambda c: cells.median(key, c)  # noqa: E731
                client = m("client_busy")
                out.append([scenario_label(k), f"{k[2]:,}" + (f" ×{k[3]}" if k[3] else ""), label(s),
                            thousands(m("requests_per_second")), fixed(m("server_user_us")), fixed(m("server_system_us")),
                            fixed(m("server_busy")), fixed(m("client_us")), percent(client) + (" ‡" if (client or 0) >= SATURATED else ""),
                            fixed(m("syscalls_per_request")), fixed(m("steal_percent"), 1),
                            fixed(m("allocated_bytes_per_request"), 0) if m("allocated_bytes_per_request") is not None else "-"])
        return out

    cost_head = ["Scenario", "Connections", "Server", "Req/s", "Server user µs/req", "Server kernel µs/req", "Server cores busy",
                 "Client µs/req", "Client core busy", "Syscalls/req", "Steal %", "Alloc. B/req"]
    headline = [k for k in keys if HEADLINE.get(k[1]) == k[2]] or [k for k in keys if k[2] == max(c for _, s, c, _ in keys if s == k[1])]
    lines += ["What a request cost (medians), at the connection counts aspnet/Benchmarks runs these scenarios at "
              "(or the nearest measured): the server's CPU time split into user and kernel time, how many cores it kept "
              "busy, the client's own CPU time (wrk or h2load, from its rusage) and how busy its core was, the server's "
              "system calls per request (counted in round 1 on a separate short run), and steal. Alloc. B/req: the ASP.NET "
              "Core sample's bytes allocated per request (its /stats).", ""]
    lines += table(cost_head, cost_rows(headline), ["---", "---:", "---"] + ["---:"] * 9)
    lines += ["<details><summary>Every connection count</summary>", ""] + table(cost_head, cost_rows(keys), ["---", "---:", "---"] + ["---:"] * 9) + ["</details>", ""]

    # Falconet against each peer, per round.
    subjects = [s for s in servers if s in subject_names]
    peers = [s for s in servers if s not in subject_names]
    for subject in subjects:
        best = best_modes(cells, keys, peers)
        head = ["Scenario", "Connections"] + [label(p) for p in best["columns"]]
        body = []
        for k in keys:
            row = [scenario_label(k), f"{k[2]:,}" + (f" ×{k[3]}" if k[3] else "")]
            for column in best["columns"]:
                peer = best["pick"](k, column)
                if peer is None:
                    row.append("-")
                    continue
                ratios = paired(cells, cell_key(k, subject), cell_key(k, peer))
                row.append(verdict(ratios) + (f" (vs {SERVERS[peer].mode})" if peer != column and peer in SERVERS else ""))
            body.append(row)
        lines += [f"{label(subject)} against each peer: requests/s ratio, median of the per-round ratios (lowest–highest); "
                  "for Kestrel, against its best mode in that cell (named).", ""]
        lines += table(head, body, ["---", "---:"] + ["---:"] * len(best["columns"]))

    stats = rows_of(directory, name + "-stats")
    if stats:
        lines += ["Falconet's own counters over each server start (the sample's `--stats` line at exit: start-up, warm-up "
                  "and every figure included):", ""]
        lines += table(["Round", "Server", "Loops", "Counters"], [[r["round"], label(r["server"]), r.get("loops") or "-", f"`{r['note']}`"] for r in stats],
                       ["---:", "---", "---:", "---"])
    errors = [r for r in rows if (number(r, "errors") or 0) > 0]
    if errors:
        lines += ["Errors reported by the client (its output is in the results directory's logs/):", ""]
        lines += [f"- round {r['round']}, {label(r['server'])}, {r['scenario']}, {r['connections']} connections: {r['errors']} errors" for r in errors] + [""]
    if images is not None:
        panels = []
        for place, scenario in dict.fromkeys((k[0], k[1]) for k in keys):
            groups = []
            for k in [k for k in keys if (k[0], k[1]) == (place, scenario)]:
                groups.append((f"{k[2]}" + (f" x{k[3]}" if k[3] else ""), {s: cells.values(cell_key(k, s), "requests_per_second") for s in servers}))
            panels.append((scenario_label((place, scenario, 0, "")), groups))
        chart = images / f"load-{name}.svg"
        bar_chart(chart, "Requests per second (median; whiskers: lowest and highest round)", panels, servers, "requests/s")
        lines[2:2] = [f"![{name}: requests per second]({chart.name})", ""]
    return lines


def best_modes(cells, keys, peers):
    """The peer columns of a ratio table: one per family, Kestrel's column taking its best mode in each cell."""
    families = {}
    for p in peers:
        family = SERVERS[p].family if p in SERVERS else p
        families.setdefault(family, []).append(p)
    columns = [members[0] for members in families.values()]

    def pick(k, column):
        members = families[SERVERS[column].family if column in SERVERS else column]
        medians = [(cells.median((k[0], k[1], k[2], m, k[3]), "requests_per_second") or 0, m) for m in members]
        best = max(medians)
        return best[1] if best[0] > 0 else None
    return {"columns": columns, "pick": pick}


def latency_section(directory, meta, images):
    opened, lines = opening(directory, meta, "latency")
    if opened is None:
        return lines
    rows, cells, servers = opened
    chart = images / "load-latency.svg"
    latency_chart(chart, cells, servers, meta)
    lines += [f"![Constant-rate latency]({chart.name})", ""]
    body = []
    for server in servers:
        loads = sorted({int(r["load_percent"]) for r in rows if r["server"] == server and r["load_percent"]})
        for load in loads:
            sel = [r for r in rows if r["server"] == server and r["load_percent"] == str(load)]
            m = lambda c: statistics.median([number(r, c) for r in sel if number(r, c) is not None] or [0])  # noqa: E731
            client = m("client_busy")
            body.append([label(server), "max (wrk)" if load == 100 else f"{load} %", thousands(m("target_rate")) if load < 100 else "-",
                         thousands(m("requests_per_second")), micro(m("p50_us")), micro(m("p99_us")),
                         micro(m("p999_us")) if load < 100 else "-", micro(m("max_us")) if load < 100 else "-",
                         percent(client) + (" ‡" if client >= SATURATED else ""), fixed(m("server_busy")),
                         "; ".join(sorted({r["note"] for r in sel if r["note"] and load < 100})) or ""])
    lines += ["Latency of `/plaintext` without pipelining at fixed request rates, from each request's intended send time "
              "(benchmarks/load/loadgen.c, open loop; medians over rounds). Max (wrk): the closed-loop maximum the rates are "
              "taken from, with wrk's own percentiles (measured from the send, not the intended send).", ""]
    lines += table(["Server", "Load", "Target req/s", "Achieved req/s", "p50", "p99", "p99.9", "max", "Client core busy",
                    "Server cores busy", "Note"], body, ["---", "---:"] + ["---:"] * 8 + ["---"])
    return lines


def simple_rows_section(directory, meta, name, images):
    opened, lines = opening(directory, meta, name)
    if opened is None:
        return lines
    rows, cells, servers = opened
    if name == "churn":
        body = []
        for s in servers:
            key = ("pinned", "churn", int(rows[0]["connections"]), s, "")
            v = cells.values(key, "requests_per_second")
            m = lambda c: cells.median(key, c)  # noqa: E731
            body.append([label(s), (thousands(statistics.median(v)) + (f" ({thousands(min(v))}–{thousands(max(v))})" if len(v) > 1 else "")) if v else "-",
                         micro(m("p50_us")), micro(m("p99_us")), fixed((m("server_user_us") or 0) + (m("server_system_us") or 0), 1),
                         fixed(m("server_system_us"), 1), fixed(m("client_us"), 1), percent(m("client_busy")) + (" ‡" if (m("client_busy") or 0) >= SATURATED else ""),
                         fixed(m("syscalls_per_request"), 1), fixed(m("allocated_bytes_per_request"), 0) if m("allocated_bytes_per_request") is not None else "-"])
        lines += [f"A new connection per request: {rows[0]['connections']} client slots, each connecting, sending one request with "
                  "`Connection: close`, reading the whole response and closing (benchmarks/load/loadgen.c churn; source "
                  "addresses 127.0.0.1–4). Latency from connect() to the end of the response. Alloc. B/conn: Falconet's "
                  "`--stats` bytes allocated per request over the whole server start (one request per connection; start-up included).", ""]
        lines += table(["Server", "Connections/s", "p50", "p99", "Server µs/conn", "of which kernel", "Client µs/conn", "Client core busy",
                        "Syscalls/conn", "Alloc. B/conn"], body)
        chart = images / "load-churn.svg"
        bar_chart(chart, "New connections per second (median; whiskers: lowest and highest round)",
                  [("one request per connection", [("", {s: cells.values(("pinned", "churn", int(rows[0]["connections"]), s, ""), "requests_per_second") for s in servers})])],
                  servers, "connections/s")
        lines[2:2] = [f"![Connection churn]({chart.name})", ""]
    elif name == "handshakes":
        body = []
        kinds = [k for k, _ in HANDSHAKES]
        for s in servers:
            for kind in kinds:
                key = ("pinned", kind, int(rows[0]["connections"]), s, "")
                v = cells.values(key, "requests_per_second")
                if not v and not cells.note(key):
                    continue
                m = lambda c: cells.median(key, c)  # noqa: E731
                body.append([label(s), kind, (thousands(statistics.median(v)) + (f" ({thousands(min(v))}–{thousands(max(v))})" if len(v) > 1 else "")) if v else "-",
                             fixed((m("server_user_us") or 0) + (m("server_system_us") or 0), 0), fixed(m("client_us"), 0),
                             percent(m("client_busy")) + (" ‡" if (m("client_busy") or 0) >= SATURATED else ""),
                             fixed(m("reused_percent"), 0), cells.note(key)])
        lines += [f"TLS handshakes per second: {rows[0]['connections']} `openssl s_time` processes in parallel on the client's "
                  "core, each connecting, handshaking and closing (no request), with one self-signed P-256 certificate for "
                  "every server. Server µs per handshake is its CPU time (user + kernel) divided by the handshakes. s_time "
                  "cannot resume TLS 1.3 sessions (it never reads the ticket), so resumption is measured on TLS 1.2.", ""]
        lines += table(["Server", "Handshake", "Handshakes/s", "Server µs each", "Client µs each", "Client core busy", "Resumed %", "Note"], body,
                       ["---", "---"] + ["---:"] * 5 + ["---"])
        chart = images / "load-handshakes.svg"
        bar_chart(chart, "TLS handshakes per second (median; whiskers: lowest and highest round)",
                  [(kind, [("", {s: cells.values(("pinned", kind, int(rows[0]["connections"]), s, ""), "requests_per_second") for s in servers})]) for kind in kinds],
                  servers, "handshakes/s")
        lines[2:2] = [f"![TLS handshakes]({chart.name})", ""]
    elif name == "idle":
        body = []
        levels = sorted({int(r["connections"]) for r in rows})
        for s in servers:
            for level in levels:
                sel = [r for r in rows if r["server"] == s and int(r["connections"]) == level]
                if not sel:
                    continue
                r = sel[-1]
                body.append([label(s), f"{level:,}", thousands(number(r, "opened")), fixed((number(r, "resident_before") or 0) / 2**20, 1),
                             fixed((number(r, "resident_after") or 0) / 2**20, 1), thousands(number(r, "resident_per_connection")),
                             fixed(number(r, "seconds"), 1), r["note"]])
        lines += ["Resident memory (VmRSS of every process of the server) with idle keep-alive connections: each connection "
                  "opened, one request answered on it, then held (benchmarks/load/loadgen.c idle, source addresses "
                  "127.0.0.1–4, since one address reaches about 28,000 connections to one port). Before: after start-up and a "
                  "short warm-up. Per connection: (with − before) / connections. Kernel socket memory is not in these figures. "
                  "nginx preallocates its connection table (worker_connections, sized here to each level), so part of its "
                  "per-connection memory is in its \"before\".", ""]
        lines += table(["Server", "Connections", "Opened", "Resident before, MiB", "Resident with them, MiB", "Bytes per connection",
                        "Seconds to open", "Note"], body, ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---"])
        chart = images / "load-idle.svg"
        bar_chart(chart, "Resident bytes per idle keep-alive connection", [(f"{level:,} connections", [("", {
            s: [number(r, "resident_per_connection") for r in rows if r["server"] == s and int(r["connections"]) == level and number(r, "resident_per_connection")]
            for s in servers})]) for level in levels], servers, "bytes", scale=1.0, unit="")
        lines[2:2] = [f"![Idle connection memory]({chart.name})", ""]
    return lines


def tls_bytes_section(directory, meta):
    rows = rows_of(directory, "tls-bytes")
    if not rows:
        return []
    cells = Cells(rows)
    servers = cells.servers()
    sizes = sorted({int(r["scenario"].split("-")[1]) for r in rows})
    ciphers = {r["server"]: r.get("cipher") for r in rows if r.get("cipher")}
    body = []
    for s in servers:
        for size in sizes:
            plain = cells.median(("pinned", f"http-{size}", 64, s, ""), "bytes_per_second")
            key = ("pinned", f"https-{size}", 64, s, "")
            tls = cells.median(key, "bytes_per_second")
            client = cells.median(key, "client_busy")
            cpu = [(number(r, "server_user_us") or 0) + (number(r, "server_system_us") or 0) for r in cells.measured(key)]
            body.append([label(s), f"{size:,} B", fixed(plain / 1e9 if plain else None, 3), fixed(tls / 1e9 if tls else None, 3),
                         thousands(cells.median(key, "requests_per_second")), fixed(statistics.median(cpu) if cpu else None, 1),
                         fixed(tls / plain if tls and plain else None), percent(client) + (" ‡" if (client or 0) >= SATURATED else ""),
                         ciphers.get(s) or "-"])
    return [caption(meta, "tls", rounds_of(rows)), "",
            "Response bytes per second (wrk's Transfer/sec, GB of 10^9 bytes) for bodies of each size over plain HTTP and HTTPS "
            "on the same server: Falconet's payload server (benchmarks/PayloadServer) on each transport and nginx serving "
            "files of the same sizes (`sendfile off`, so both copy through user space), 64 connections, the server pinned to "
            "one core and wrk on the other; server CPU per HTTPS request from /proc (user and system). The cipher suite is "
            "the one each server negotiates with OpenSSL's default client offer (wrk's). wrk decrypts on its one core.", ""] + \
        table(["Server", "Body", "Plain GB/s", "TLS GB/s", "TLS req/s", "Server µs/request (TLS)", "TLS / plain", "Client core busy (TLS)", "Cipher"],
              body, ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---"])


def tls_section(directory, meta, images):
    """The HTTPS grid and the response-size table; the table alone after a run of the tlsbytes part only."""
    grid, sizes = grid_section(directory, meta, "tls", images=images), tls_bytes_section(directory, meta)
    if sizes and grid and grid[0].startswith("*Section"):
        return sizes
    return grid + sizes


def targets_section(directory, meta):
    rows = rows_of(directory, "throughput")
    lines = [caption(meta, "throughput, latency, idle", rounds_of(rows)), ""]
    cells = Cells(rows)
    body = []
    subject = "falconet-libuv"
    for scenario, name in (("plaintext16", "plaintext, 16 pipelined"), ("plaintext1", "plaintext, no pipelining"), ("json1", "JSON, no pipelining")):
        keys = [k for k in cells.cells() if k[1] == scenario and k[0] == "pinned"]
        for k in keys:
            for peer_family, target, what in (("nginx", 1.0, "≥ 1.0× nginx"), ("kestrel-platform", 1.3, "≥ 1.3× Kestrel's best (TechEmpower entry)")):
                members = [s for s in cells.servers() if SERVERS.get(s) and SERVERS[s].family == peer_family]
                if not members:
                    continue
                medians = [(cells.median((k[0], k[1], k[2], m, ""), "requests_per_second") or 0, m) for m in members]
                best = max(medians)[1]
                ratios = paired(cells, (k[0], k[1], k[2], subject, ""), (k[0], k[1], k[2], best, ""))
                saturated = any((number(r, "client_busy") or 0) >= SATURATED for r in cells.measured((k[0], k[1], k[2], subject, "")))
                body.append([f"{name}, {k[2]:,} connections, one core", what + (f" ({SERVERS[best].mode} mode)" if peer_family != "nginx" else ""),
                             verdict(ratios), target_met(ratios, target) + (" ‡ client saturated" if saturated else "")])
    latency = Cells(rows_of(directory, "latency"))
    p99 = {}
    for r in latency.rows:
        if r["load_percent"] == "75" and number(r, "p99_us"):
            p99.setdefault(r["server"], {})[r["round"]] = number(r, "p99_us")
    if subject in p99 and "nginx" in p99:
        ratios = [p99["nginx"][r] / p99[subject][r] for r in p99[subject] if r in p99["nginx"]]
        body.append(["/plaintext, no pipelining at 75 % of each server's maximum", "p99 no worse than nginx's",
                     f"Falconet {micro(statistics.median(p99[subject].values()))}, nginx {micro(statistics.median(p99['nginx'].values()))}",
                     target_met(ratios, 1.0)])
    idle = rows_of(directory, "idle")
    for level in sorted({int(r["connections"]) for r in idle}):
        f = [number(r, "resident_per_connection") for r in idle if r["server"] == subject and int(r["connections"]) == level]
        n = [number(r, "resident_per_connection") for r in idle if r["server"] == "nginx" and int(r["connections"]) == level]
        if f and n and f[0] is not None and n[0] is not None:
            body.append([f"{level:,} idle connections", "resident bytes per connection ≤ nginx's",
                         f"Falconet {f[0]:,.0f} B, nginx {n[0]:,.0f} B", "**met**" if f[0] <= n[0] else "**missed**"])
    if not body:
        return []
    lines += table(["Shape", "Target", "Measured (Falconet libuv / peer, per-round ratios)", "Verdict"], body, ["---", "---", "---", "---"])
    return lines


def notes_section(directory, meta):
    notes = []
    path = directory / "notes.tsv"
    if path.exists():
        notes = [line.split("\t", 1) for line in path.read_text().splitlines() if "\t" in line]
    skipped = json.loads(meta.get("skipped", "{}") or "{}")
    lines = [f"Run: `{meta.get('command', '?')}`, commit `{meta.get('commit', '?')}`, {meta.get('date', '?')}, "
             f"{meta.get('minutes', '?')} minutes (estimated {meta.get('estimate_minutes', '?')}); system calls counted with "
             f"`{meta.get('syscalls', '?')}`; descriptor limit {meta.get('descriptors', '?')}; TechEmpower's Kestrel entry: "
             f"{'built from a snapshot of aspnet/Benchmarks, given by `FALCONET_PLATFORM_BENCHMARKS`' if meta.get('platform_benchmarks') not in (None, 'absent') else 'absent (its rows are skipped)'}.", ""]
    lines += [f"- {section}: {text}" for section, text in notes]
    lines += [f"- skipped {name}: {reason}" for name, reason in skipped.items()]
    return lines + [""]


def servers_section(directory, meta):
    """The servers of the run, as servers.py describes them."""
    names = []
    for path in sorted(directory.glob("*.tsv")):
        if path.name != "notes.tsv":
            names += [r["server"] for r in rows_of(directory, path.stem) if r.get("server")]
    names = list(dict.fromkeys(n for n in names if n in SERVERS))
    if not names:
        return []
    body = [[f"`{n}`", label(n), SERVERS[n].description, ", ".join(sorted(SERVERS[n].protocols))] for n in names]
    return table(["Name", "In the tables", "What it is", "Protocols"], body, ["---", "---", "---", "---"])


SECTIONS = [
    ("run", lambda d, m, i: notes_section(d, m)),
    ("servers", lambda d, m, i: servers_section(d, m)),
    ("targets", lambda d, m, i: targets_section(d, m)),
    ("throughput", lambda d, m, i: grid_section(d, m, "throughput", images=i)),
    ("latency", latency_section),
    ("scaling", lambda d, m, i: grid_section(d, m, "scaling", images=i)),
    ("churn", lambda d, m, i: simple_rows_section(d, m, "churn", i)),
    ("handshakes", lambda d, m, i: simple_rows_section(d, m, "handshakes", i)),
    ("idle", lambda d, m, i: simple_rows_section(d, m, "idle", i)),
    ("tls", lambda d, m, i: tls_section(d, m, i)),
    ("aspnetcore", lambda d, m, i: grid_section(d, m, "aspnetcore", subject_names=("aspnetcore-falconet",), images=i)),
    ("h2", lambda d, m, i: grid_section(d, m, "h2", images=i)),
    ("variants", lambda d, m, i: grid_section(d, m, "variants", subject_names=(), images=i)),
]


# Blocks every section of a run feeds: a run of some sections or some servers would replace them with its part only.
SHARED = ("run", "servers", "targets")


def publish(fragments, images, meta):
    text = DOCS.read_text()
    command = meta.get("command", "")
    partial = "--sections" in command or "--servers" in command
    for name, lines in fragments.items():
        if partial and name in SHARED:
            print(f"section {name} not published: it sums up a whole run, and this one ran part of it", file=sys.stderr)
            continue
        begin, end = f"<!-- generated: {name} -->", f"<!-- end generated: {name} -->"
        if begin not in text or end not in text:
            print(f"docs/benchmarks.md has no block {begin}: section {name} not published", file=sys.stderr)
            continue
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        body = "\n".join(lines).replace("](load-", "](images/load-")
        text = f"{head}{begin}\n{body}\n{end}{tail}"
    DOCS.write_text(text)
    target = ROOT / "docs/images"
    target.mkdir(exist_ok=True)
    for svg in images.glob("load-*.svg"):
        shutil.copy(svg, target / svg.name)
    print(f"published into {DOCS} and docs/images/")


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: report.py RESULTS_DIRECTORY [--publish]")
    directory = Path(argv[0]).resolve()
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    images = directory / "images"
    images.mkdir(exist_ok=True)
    fragments = {}
    for name, render in SECTIONS:
        lines = render(directory, meta, images)
        if lines and not lines[0].startswith("*Section"):
            fragments[name] = lines
            (directory / "md").mkdir(exist_ok=True)
            (directory / "md" / f"{name}.md").write_text("\n".join(lines) + "\n")
    (directory / "results.md").write_text("\n".join(f"## {name}\n\n" + "\n".join(lines) for name, lines in fragments.items()).replace("](load-", "](images/load-"))
    print(f"Results: {directory / 'results.md'}")
    if "--publish" in argv:
        publish(fragments, images, meta)


if __name__ == "__main__":
    main(sys.argv[1:])
