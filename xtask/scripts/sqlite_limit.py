#!/usr/bin/env python3
"""SQLite's own write rate on this machine for what `POST /tasks` writes.

Each "task" is one row in `tasks` (with all its indexes), one in `events` and one in
`nonces`, copied from rows already there with new time-ordered ids, written from one
thread with the service's pragmas (WAL, synchronous = NORMAL, temp_store = MEMORY):
one task per commit, then groups of 8 and 32 per commit, with and without a savepoint
around each task (as the group commit runs units). No HTTP, no Rust, nothing else
running: the ceiling the engine sets on this disk. Python's own cost is under 4 us per
task (three statements), far below what is measured.

Usage: take a copy of a seeded database (for instance of a bench run's, while it runs:
`sqlite3 /tmp/muster-bench-*/muster.db ".backup /tmp/seeded.db"`), then
`python3 xtask/scripts/sqlite_limit.py /tmp/seeded.db /tmp/work.db`. The second file is
overwritten; put it on the disk you want to measure.
"""
import shutil
import sqlite3
import sys
import time
import uuid

src, work = sys.argv[1], sys.argv[2]
shutil.copy(src, work)
con = sqlite3.connect(work, isolation_level=None)
for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON",
               "temp_store = MEMORY"):
    con.execute(f"PRAGMA {pragma}")

def template(table):
    cur = con.execute(f"SELECT * FROM {table} LIMIT 1")
    return [d[0] for d in cur.description], list(cur.fetchone())

tcols, trow = template("tasks")
ecols, erow = template("events")
ncols, nrow = template("nonces")
tid, eid = tcols.index("id"), ecols.index("id")
eent = ecols.index("entity_id") if "entity_id" in ecols else None
nn = ncols.index("nonce")
tsql = f"INSERT INTO tasks ({','.join(tcols)}) VALUES ({','.join('?'*len(tcols))})"
esql = f"INSERT INTO events ({','.join(ecols)}) VALUES ({','.join('?'*len(ecols))})"
nsql = f"INSERT INTO nonces ({','.join(ncols)}) VALUES ({','.join('?'*len(ncols))})"

def v7():
    """A time-ordered id, as the service makes them (UUIDv7's layout, text form)."""
    ms = time.time_ns() // 1_000_000
    return str(uuid.UUID(int=(ms << 80) | (7 << 76) | (uuid.uuid4().int & ((1 << 76) - 1))))

def one():
    t, e, n = list(trow), list(erow), list(nrow)
    t[tid], e[eid], n[nn] = v7(), v7(), uuid.uuid4().hex
    if eent is not None:
        e[eent] = t[tid]
    con.execute(tsql, t)
    con.execute(esql, e)
    con.execute(nsql, n)

for group, savepoints in ((1, False), (8, False), (32, False), (8, True), (32, True)):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 5:
        con.execute("BEGIN IMMEDIATE")
        for _ in range(group):
            if savepoints:
                con.execute("SAVEPOINT unit")
            one()
            if savepoints:
                con.execute("RELEASE unit")
        con.execute("COMMIT")
        n += group
    el = time.perf_counter() - start
    label = " (each in a savepoint)" if savepoints else ""
    print(f"{group:>3} per commit{label}: {n / el:,.0f} tasks/s")
