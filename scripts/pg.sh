#!/usr/bin/env bash
# A throw-away PostgreSQL 15 (Debian's package) on 127.0.0.1 and a free port, for the tests.
#   scripts/pg.sh run CMD ARGS...    start it, run CMD with ARENA_TEST_PG_URL set, ALWAYS stop it
#   eval "$(scripts/pg.sh start)"    start it; prints exports of ARENA_TEST_PG_URL and ARENA_TEST_PG_DIR
#   scripts/pg.sh stop DIR           stop it and delete its data folder
# Installs postgresql with apt-get when it is missing (as root). The server binaries refuse to run
# as root, so they run as the `postgres` user.
set -euo pipefail

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true; }

as_pg() {  # run a command line as the postgres user when we are root
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$1"; else bash -c "$1"; fi
}

start() {
  local bin dir port
  bin=$(pg_bin)
  if [ -z "$bin" ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "echo 'PostgreSQL is not installed (and not root to apt-get it): postgres tests will be skipped' >&2"
      return 0
    fi
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
    bin=$(pg_bin)
  fi
  dir=$(mktemp -d /tmp/arena-pg.XXXXXX)
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if ! as_pg "$bin/initdb -D $dir/data -A trust -U postgres" >/dev/null ||
     ! as_pg "$bin/pg_ctl -D $dir/data -o '-p $port -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off' -l $dir/log -w start" >/dev/null; then
    echo "PostgreSQL failed to start; log:" >&2; cat "$dir/log" >&2 2>/dev/null || true
    stop "$dir"; return 1
  fi
  echo "export ARENA_TEST_PG_URL=postgresql+psycopg://postgres@127.0.0.1:$port/postgres ARENA_TEST_PG_DIR=$dir"
}

stop() {
  local dir=${1:?usage: pg.sh stop DIR} bin
  bin=$(pg_bin)
  if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_pg "$bin/pg_ctl -D $dir/data -m fast stop" >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
stop) stop "${2:-}" ;;
run)
  shift
  exports=$(start)
  eval "$exports"
  trap '[ -n "${ARENA_TEST_PG_DIR:-}" ] && stop "$ARENA_TEST_PG_DIR"' EXIT INT TERM
  "$@"
  ;;
*) echo "usage: $0 start | stop DIR | run CMD ARGS..." >&2; exit 2 ;;
esac
