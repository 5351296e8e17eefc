#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the web game's tests, on 127.0.0.1 only.
#
#   scripts/pg-test-cluster.sh start [DIR] [PORT]   # prints the URL to export
#   scripts/pg-test-cluster.sh stop  [DIR]
#
# Typical use (CI):
#   export KOIKOI_TEST_DATABASE_URL="$(scripts/pg-test-cluster.sh start)"
#   ... run the tests ...
#   scripts/pg-test-cluster.sh stop
#
# Needs the PostgreSQL server binaries (Debian: apt-get install -y postgresql).
# As root, the cluster runs as the 'postgres' user (or 'nobody'); the data
# directory lives under DIR (default: ${TMPDIR:-/tmp}/koikoi-pg-test) and is
# removed by 'stop'. Authentication is 'trust' on 127.0.0.1: for tests only.
set -euo pipefail

cmd="${1:-}"
dir="${2:-${TMPDIR:-/tmp}/koikoi-pg-test}"
port="${3:-${KOIKOI_PG_PORT:-55432}}"
db="koikoi_test"
user="koikoi"

find_bin() {
  local name="$1"
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/$name" ]; then
    echo "$(pg_config --bindir)/$name"
    return
  fi
  local candidate
  candidate="$(ls -d /usr/lib/postgresql/*/bin/"$name" 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$candidate" ]; then
    echo "$candidate"
    return
  fi
  if command -v "$name" >/dev/null 2>&1; then
    command -v "$name"
    return
  fi
  echo "pg-test-cluster: $name not found; install PostgreSQL (apt-get install -y postgresql)" >&2
  exit 1
}

run_as() {
  if [ "$(id -u)" = "0" ]; then
    local who=postgres
    id -u postgres >/dev/null 2>&1 || who=nobody
    runuser -u "$who" -- "$@"
  else
    "$@"
  fi
}

owner() {
  if [ "$(id -u)" = "0" ]; then
    if id -u postgres >/dev/null 2>&1; then echo postgres; else echo nobody; fi
  else
    id -un
  fi
}

case "$cmd" in
  start)
    initdb="$(find_bin initdb)"
    pg_ctl="$(find_bin pg_ctl)"
    createdb="$(find_bin createdb)"
    if [ -f "$dir/data/postmaster.pid" ]; then
      echo "pg-test-cluster: already running in $dir" >&2
    else
      rm -rf "$dir"
      mkdir -p "$dir"
      chown "$(owner)" "$dir"
      chmod 700 "$dir"
      run_as "$initdb" -D "$dir/data" -U "$user" --auth=trust -E UTF8 --no-instructions >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
      run_as "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
      run_as "$createdb" -h 127.0.0.1 -p "$port" -U "$user" "$db"
    fi
    echo "postgresql://$user@127.0.0.1:$port/$db"
    ;;
  stop)
    pg_ctl="$(find_bin pg_ctl)"
    if [ -d "$dir/data" ]; then
      run_as "$pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop [DIR] [PORT]" >&2
    exit 2
    ;;
esac
