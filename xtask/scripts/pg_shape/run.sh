#!/usr/bin/env bash
# PostgreSQL's own rate on this machine for the statements a `POST /tasks` and a
# `POST /tasks/:id/transition` send (create.sql, transition.sql), with pgbench: 32
# clients, prepared statements, nothing else running. Each script is run as the service
# sends it (a round trip per statement) and in one pipeline (every statement of the
# transaction sent at once, one round trip), and a single-row INSERT per transaction
# gives the commit rate. The ceiling the engine sets for these transactions, with no
# server and no load generator sharing the cores.
#
# Usage: xtask/scripts/pg_shape/run.sh [path/to/muster] [seconds]
# Needs a PostgreSQL server at 127.0.0.1:5432 (user postgres, trust) and pgbench.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
muster=${1:-target/release/muster}
seconds=${2:-10}
db=muster_pg_shape_$$
admin="psql -h 127.0.0.1 -U postgres -d postgres -qAt"
work=$(mktemp -d)
trap '$admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; rm -rf "$work"' EXIT
$admin -c "CREATE DATABASE $db"
boot=$(MUSTER_SECRET_KEY=$(openssl rand -hex 32) \
    MUSTER_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable" \
    "$muster" bootstrap --org-name Shape --admin-email shape@example.com \
    --admin-password shape-password --log warn)
org=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["orgId"])' "$boot")
agent=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["hrAgent"]["id"])' "$boot")
psql -h 127.0.0.1 -U postgres -d "$db" -q <<SQL
CREATE SEQUENCE pg_shape_ids START 100000;
INSERT INTO tasks (id, org_id, title, status, priority, creator_id, approval_required, tags,
    metadata, created_at, updated_at, version, status_changed_at, last_activity_at)
SELECT ('00000000-0000-7000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, '$org', 'Seed task',
    'todo', 'normal', '$agent', false, '[]', '{}', now(), now(), 1, now(), now()
FROM generate_series(1, 10000) AS n;
SQL
grep -v '^--' "$here/create.sql" | grep '^INSERT INTO events' | sed 's/task.created/bench/' > "$work/single.sql"
for script in create transition; do
    { grep '^\\set' "$here/$script.sql" || true
      echo '\startpipeline'
      grep -v -e '^--' -e '^\\set' "$here/$script.sql"
      echo '\endpipeline'; } > "$work/$script-pipelined.sql"
done
bench() {
    pgbench -h 127.0.0.1 -U postgres -n -M prepared -c 32 -j 2 -T "$seconds" \
        -D org="$org" -D agent="$agent" -f "$1" "$db" 2>&1 | sed -n 's/^tps = \([0-9]*\).*/\1/p'
}
echo "single-row INSERT: $(bench "$work/single.sql") tps"
for script in create transition; do
    echo "$script, a round trip per statement: $(bench "$here/$script.sql") tps"
    echo "$script, pipelined: $(bench "$work/$script-pipelined.sql") tps"
done
