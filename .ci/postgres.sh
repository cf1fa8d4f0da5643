#!/usr/bin/env bash
# postgres.sh start|install|stop DATA_DIR PORT: start (creating it on first use) a local
# PostgreSQL cluster listening on 127.0.0.1:PORT only, for the PostgreSQL store tests and
# benchmarks, and print its URL on stdout; `stop` stops it.
#
# The server comes from Debian's postgresql package; `install` runs
# apt-get install -y postgresql first when no server is installed.
# As root the cluster runs as the postgres user, since PostgreSQL refuses to run as root.
set -euo pipefail
action=$1 data=$2 port=$3

if [[ $action == install ]]; then
  if ! compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null; then
    sudo=()
    (( $(id -u) == 0 )) || sudo=(sudo)
    echo "postgres.sh: apt-get install -y postgresql" >&2
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q postgresql >&2
  fi
  action=start
fi

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [[ -z "$bin" || ! -x "$bin/pg_ctl" ]]; then
  echo "postgres.sh: no PostgreSQL server installed (apt-get install -y postgresql)" >&2
  exit 1
fi
as=()
if [[ $(id -u) == 0 ]]; then
  as=(runuser -u postgres --)
fi

if [[ $action == stop && $(id -u) == 0 ]] && ! runuser -u postgres -- test -x "$(dirname "$data")" 2>/dev/null; then
  data=/var/lib/postgresql/podflow-ci-$port
fi
if [[ $action == stop ]]; then
  [[ -f "$data/postmaster.pid" ]] && "${as[@]}" "$bin/pg_ctl" -D "$data" -m fast -w stop >&2 || true
  exit 0
fi

mkdir -p "$data"
if [[ $(id -u) == 0 ]] && ! runuser -u postgres -- test -x "$(dirname "$data")" 2>/dev/null; then
  # The cache folder is under a home folder the postgres user cannot enter (mode 0700):
  # keep the cluster in that user's own home instead, which also lasts across runs.
  data=/var/lib/postgresql/podflow-ci-$port
  echo "postgres.sh: the postgres user cannot reach the cache folder; the cluster lives in $data" >&2
  mkdir -p "$data"
fi
if [[ $(id -u) == 0 ]]; then
  chown postgres: "$data"
  chmod 700 "$data"
fi
if [[ ! -f "$data/PG_VERSION" ]]; then
  # Trust on loopback only: the cluster listens on 127.0.0.1 and holds test data.
  "${as[@]}" "$bin/initdb" -D "$data" -U postgres --auth=trust --no-sync -E UTF8 >&2
fi
if ! "${as[@]}" "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  "${as[@]}" "$bin/pg_ctl" -D "$data" -w -t 60 -l "$data/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $port -k /tmp -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >&2
fi
echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
