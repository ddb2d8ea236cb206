#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the storage tests: a cluster in a temp dir, on a loopback port, with fsync off.
#   scripts/pg-test.sh start        starts it and prints `export REINS_TEST_PG_URL=…` (eval it)
#   scripts/pg-test.sh stop         stops it and removes its directory
#   scripts/pg-test.sh restart      restarts it (pg_ctl restart: every connection is closed; the cluster tests' outage)
#   scripts/pg-test.sh run CMD…     starts it, runs CMD with REINS_TEST_PG_URL set, stops it; exits with CMD's status
# PGPORT picks the port (default 55432). Needs Debian's postgresql-15 (apt-get install postgresql-15). Run as root,
# the server runs as the `postgres` user (PostgreSQL refuses to run as root); otherwise as the current user.
set -euo pipefail

port="${PGPORT:-55432}"
bin="${PG_BIN:-/usr/lib/postgresql/15/bin}"
state="${TMPDIR:-/tmp}/reins-pg-$port.dir"
url="postgres://postgres@127.0.0.1:$port/reins_test"

as_server() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  if [ ! -x "$bin/pg_ctl" ]; then
    echo "no PostgreSQL 15 in $bin: install it with apt-get install postgresql-15 (or set PG_BIN)" >&2
    return 1
  fi
  if [ -f "$state" ] && as_server "$bin/pg_ctl" -D "$(cat "$state")/data" status >/dev/null 2>&1; then
    echo "export REINS_TEST_PG_URL=$url"
    return 0
  fi
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/reins-pg-XXXXXX")
  chmod 0755 "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  as_server "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; return 1; }
  as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c unix_socket_directories=$dir -c max_connections=200" \
    start >/dev/null || { cat "$dir/server.log" >&2; return 1; }
  echo "$dir" >"$state"
  "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres reins_test
  echo "export REINS_TEST_PG_URL=$url"
}

stop() {
  [ -f "$state" ] || return 0
  local dir
  dir=$(cat "$state")
  as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir" "$state"
}

restart() {
  [ -f "$state" ] || { echo "no test PostgreSQL on port $port: start it first" >&2; return 1; }
  as_server "$bin/pg_ctl" -D "$(cat "$state")/data" -m fast -w -t 60 restart >/dev/null
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) restart ;;
  run)
    shift
    eval "$(start)"
    export REINS_TEST_PG_URL
    set +e
    "$@"
    status=$?
    stop
    exit "$status"
    ;;
  *)
    echo "usage: $0 start | stop | restart | run CMD…" >&2
    exit 2
    ;;
esac
