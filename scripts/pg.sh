#!/usr/bin/env bash
# Start or stop a throw-away PostgreSQL 15 on 127.0.0.1 for the tests.
#   eval "$(scripts/pg.sh start)"   -> exports ARENA_TEST_PG_URL and ARENA_TEST_PG_DIR
#   scripts/pg.sh stop "$ARENA_TEST_PG_DIR"
set -euo pipefail
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
case "${1:-}" in
start)
  if [ -z "$BIN" ]; then
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >&2
      BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    else
      echo "echo 'PostgreSQL not installed; postgres tests will be skipped' >&2"; exit 0
    fi
  fi
  DIR=$(mktemp -d /tmp/arena-pg.XXXXXX)
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  RUN_AS=(); [ "$(id -u)" = 0 ] && { chown postgres "$DIR"; RUN_AS=(su postgres -c); }
  if [ ${#RUN_AS[@]} -gt 0 ]; then
    su postgres -c "$BIN/initdb -D $DIR/data -A trust -U postgres" >/dev/null
    su postgres -c "$BIN/pg_ctl -D $DIR/data -o '-p $PORT -k /tmp -c listen_addresses=127.0.0.1' -l $DIR/log -w start" >/dev/null
  else
    "$BIN/initdb" -D "$DIR/data" -A trust -U postgres >/dev/null
    "$BIN/pg_ctl" -D "$DIR/data" -o "-p $PORT -k /tmp -c listen_addresses=127.0.0.1" -l "$DIR/log" -w start >/dev/null
  fi
  echo "export ARENA_TEST_PG_URL=postgresql+psycopg://postgres@127.0.0.1:$PORT/postgres ARENA_TEST_PG_DIR=$DIR"
  ;;
stop)
  DIR=${2:?usage: pg.sh stop DIR}
  if [ "$(id -u)" = 0 ]; then su postgres -c "$BIN/pg_ctl -D $DIR/data -m fast stop" >/dev/null || true
  else "$BIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null || true; fi
  rm -rf "$DIR"
  ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
