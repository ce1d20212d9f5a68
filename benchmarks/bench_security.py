"""Latency of one security evaluation of a 100-line Python notebook cell, and of a 300-line TypeScript file.

Prints ``BENCH security_eval_ms_p50`` (target <= 50 ms) and ``security_eval_ms_p99``, measured
after the first evaluation has loaded bandit and detect-secrets (reported as
``security_first_eval_ms``); ``security_eval_cpu_ms_p50`` is the same median in CPU time. The cell is ordinary data work with two real findings in it, so the
timing includes building an interjection. ``security_js_eval_ms_p50`` (target <= 50 ms) is one
evaluation of an agent's Write of a 300-line TypeScript service file with two findings in it,
parsed with ast-grep. ``security_taint_ms_p50`` (target <= 50 ms) is the taint engine alone on a
300-line Flask module with 20 routes (tree-sitter parse and analysis), and ``bandit_ms_per_file``
bandit's own scan of the same file, side by side; ``*_cpu_ms_*`` are the same medians in CPU time.
``security_scaling_20k_over_2k`` (target <= 15) is how much longer a generated module of 20,000
assignments takes than one of 2,000: about ten when the cost grows with the file, not its square.
``security_shell_scaling_200k_over_20k`` (target <= 15) is the same for an agent's Bash call of a
chain of 200,000 commands against one of 20,000 (the daemon's loop waits on it: it took half a minute).
"""

from __future__ import annotations

import statistics
import time

from watcher.core.observations import CellExecuted, ToolCall
from watcher.roles import security
from watcher.roles.security import SecurityRole

HEAD = """import os
import json
import subprocess
import pandas as pd
import numpy as np
import requests

API = os.environ["SALES_API_URL"]
TOKEN = os.getenv("SALES_API_TOKEN")
"""
BLOCK = """
def load_{n}(path, columns=None):
    df = pd.read_csv(path, usecols=columns, parse_dates=["date"])
    df["month_{n}"] = df["date"].dt.to_period("M")
    df = df[df["amount"] > 0].copy()
    summary = df.groupby("month_{n}").agg(total=("amount", "sum"), n=("amount", "size"))
    summary["share"] = summary["total"] / summary["total"].sum()
    return summary.reset_index()
"""
TAIL = """
resp = requests.get(API, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
rows = json.loads(resp.text)
subprocess.run("wc -l " + rows[0]["file"], shell=True)
print(np.mean([r["amount"] for r in rows]))
"""


def cell_source() -> str:
    body = HEAD + "".join(BLOCK.format(n=n) for n in range(11)) + TAIL
    lines = body.splitlines()
    assert 95 <= len(lines) <= 105, len(lines)
    return body


TS_HEAD = """import { execFile } from "node:child_process";
import { Pool } from "pg";

const pool = new Pool({ connectionString: process.env.DATABASE_URL });
"""
TS_BLOCK = """
export interface Order{n} {{
  id: number;
  customer: string;
  total: number;
}}

export async function listOrders{n}(customer: string, limit = 20): Promise<Order{n}[]> {{
  const result = await pool.query<Order{n}>(
    "SELECT id, customer, total FROM orders WHERE customer = $1 LIMIT $2",
    [customer, limit],
  );
  return result.rows.filter((row) => row.total > 0).map((row) => ({{ ...row, total: row.total / 100 }}));
}}

export function formatOrder{n}(order: Order{n}): string {{
  return `#${{order.id}} for ${{order.customer}}: ${{order.total.toFixed(2)}}`;
}}
"""
TS_TAIL = """
export async function search(term: string): Promise<unknown[]> {
  const result = await pool.query(`SELECT id FROM orders WHERE note LIKE '%${term}%'`);
  return result.rows;
}

export function archive(name: string): void {
  execFile("tar", ["czf", `${name}.tgz`, name], { shell: true });
}
"""


def ts_source() -> str:
    body = TS_HEAD + "".join(TS_BLOCK.format(n=n) for n in range(16)) + TS_TAIL
    assert 290 <= len(body.splitlines()) <= 310, len(body.splitlines())
    return body


def js_p50(iterations: int = 100) -> float:
    source = ts_source()
    role = SecurityRole()
    write = [ToolCall(id="w0", name="Write", input={"file_path": "orders.ts", "content": source})]
    assert role.evaluate(write, 1).interjection is not None, "the TypeScript file should produce findings"
    times = []
    for i in range(iterations):
        obs = [ToolCall(id=f"w{i}", name="Write", input={"file_path": f"orders{i}.ts", "content": source})]
        security._scan.cache_clear()
        t0 = time.perf_counter()
        role.evaluate(obs, 1)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


FLASK_HEAD = """\"\"\"A shop's item listing: twenty routes reading the query string.

Each route validates its sort order against an allow-list, escapes what it echoes and binds its
search term as a query parameter; one runs a shell command built from the query string.
\"\"\"

import os
import sqlite3
import subprocess

from flask import Flask, jsonify, redirect, request, session
from markupsafe import escape

app = Flask(__name__)
db = sqlite3.connect("shop.db")
ALLOWED = {"asc", "desc"}


def clean(value):
    return value.strip().lower()
"""
FLASK_ROUTE = """

@app.route("/items/{n}")
def items_{n}():
    term = clean(request.args.get("q", ""))
    order = request.args.get("order", "asc")
    order = order if order in ALLOWED else "asc"
    limit = 10
    label = "top" if limit * 2 > 15 else term
    rows = db.execute("SELECT id, name FROM items WHERE name LIKE ? ORDER BY id " + order, (term,))
    found = [dict(id=r[0], name=r[1]) for r in rows]
    session["last_{n}"] = label
    if not found:
        return redirect("/items?page=" + str(int(request.args.get("page", "1"))))
    return "<p>" + str(escape(term)) + "</p>" + jsonify(found).get_data(as_text=True)
"""
FLASK_TAIL = """

@app.route("/run")
def run():
    subprocess.run("echo " + request.args["msg"], shell=True)
    return "ok"
"""


def flask_source() -> str:
    body = FLASK_HEAD + "".join(FLASK_ROUTE.format(n=n) for n in range(19)) + FLASK_TAIL
    assert 290 <= len(body.splitlines()) <= 340, len(body.splitlines())
    return body


def taint_p50(iterations: int = 100) -> dict[str, float]:
    """The taint engine and bandit, each on the same 300-line Flask module: medians in ms, wall and CPU."""
    from ast_grep_py import SgRoot

    from watcher.roles import _security_python
    from watcher.roles.taint import analyse
    from watcher.roles.taint.python import PythonSpec

    source = flask_source()
    flows = analyse(SgRoot(source, "python").root(), PythonSpec()).flows
    assert [f.sink.name for f in flows] == ["command"], [f.sink.name for f in flows]
    lines = source.splitlines()
    times: dict[str, list[float]] = {"taint": [], "taint_cpu": [], "bandit": [], "bandit_cpu": []}
    for _ in range(iterations):
        t0, c0 = time.perf_counter(), time.process_time()
        analyse(SgRoot(source, "python").root(), PythonSpec())
        times["taint"].append((time.perf_counter() - t0) * 1000)
        times["taint_cpu"].append((time.process_time() - c0) * 1000)
        _security_python._parse.cache_clear()
        t0, c0 = time.perf_counter(), time.process_time()
        parsed = _security_python._parse(source)
        assert parsed is not None
        _security_python._bandit_findings(parsed[0], lines, parsed[1])
        times["bandit"].append((time.perf_counter() - t0) * 1000)
        times["bandit_cpu"].append((time.process_time() - c0) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def big_module_ms(lines: int) -> float:
    """One evaluation of an agent's Write of a generated module of ``lines`` assignments (CPU ms)."""
    content = "".join(f"value_{i} = {i}\n" for i in range(lines))
    obs = [ToolCall(id="big", name="Write", input={"file_path": f"gen_{lines}.py", "content": content})]
    security._scan.cache_clear()
    started = time.process_time()
    SecurityRole().evaluate(obs, 1)
    return (time.process_time() - started) * 1000


def shell_chain_ms(commands: int) -> float:
    """One evaluation of an agent's Bash call chaining ``commands`` commands, the last an ``rm`` (CPU ms)."""
    obs = [ToolCall(id="chain", name="Bash", input={"command": "ls; " * commands + "rm -rf build"})]
    security._scan.cache_clear()
    started = time.process_time()
    SecurityRole().evaluate(obs, 1)
    return (time.process_time() - started) * 1000


def main(iterations: int = 300) -> None:
    source = cell_source()
    role = SecurityRole()
    started = time.perf_counter()
    first = role.evaluate([CellExecuted(source=source, cell_id="warm", stdout="1520.0\n")], 1)
    cold_ms = (time.perf_counter() - started) * 1000
    assert first.interjection is not None, "the benchmark cell should produce findings"
    times, cpu = [], []
    for i in range(iterations):
        obs = [CellExecuted(source=source, cell_id=f"c{i}", stdout="1520.0\n")]
        security._scan.cache_clear()  # measure a scan, not the cache of identical sources
        t0, c0 = time.perf_counter(), time.process_time()
        role.evaluate(obs, 1)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    times.sort()
    p50 = statistics.median(times)
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    print(f"BENCH security_eval_ms_p50 {p50:.2f} ms")
    print(f"BENCH security_eval_ms_p99 {p99:.2f} ms")
    print(f"BENCH security_first_eval_ms {cold_ms:.1f} ms")
    # CPU time of this process: the figure to read when other work shares the machine
    print(f"BENCH security_eval_cpu_ms_p50 {statistics.median(cpu):.2f} ms")
    print(f"BENCH security_js_eval_ms_p50 {js_p50():.2f} ms")
    taint = taint_p50()
    print(f"BENCH security_taint_ms_p50 {taint['taint']:.2f} ms")
    print(f"BENCH security_taint_cpu_ms_p50 {taint['taint_cpu']:.2f} ms")
    print(f"BENCH bandit_ms_per_file {taint['bandit']:.2f} ms")
    print(f"BENCH bandit_cpu_ms_per_file {taint['bandit_cpu']:.2f} ms")
    # a file ten times longer should cost about ten times as much (it cost a hundred: a quadratic pass)
    small, large = (min(big_module_ms(n) for _ in range(3)) for n in (2_000, 20_000))
    print(f"BENCH security_big_module_cpu_ms_20k_lines {large:.0f} ms")
    print(f"BENCH security_scaling_20k_over_2k {large / small:.1f} x")
    short, long = (min(shell_chain_ms(n) for _ in range(2)) for n in (20_000, 200_000))
    print(f"BENCH security_shell_scaling_200k_over_20k {long / short:.1f} x")


if __name__ == "__main__":
    main()
