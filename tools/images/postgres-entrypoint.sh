#!/bin/sh
# postgres-entrypoint [SERVER-OPTION...]: the entry point of the jobs-postgres
# image (Dockerfile.postgres). On a data folder without a cluster ($PGDATA
# has no PG_VERSION) it makes one: initdb with the superuser POSTGRES_USER
# and the password POSTGRES_PASSWORD (required then), password
# (scram-sha-256) authentication for every TCP client, and the database
# POSTGRES_DB owned by that user. Then it replaces itself with the server
# listening on every address (port 5432), so signals reach it as PID 1.
# The password is never written on a command line (initdb reads it from a
# file that is removed at once). The server's socket is in /tmp (the root
# file system may be read-only).
set -eu
: "${PGDATA:?}" "${POSTGRES_USER:=archivekit}" "${POSTGRES_DB:=archivekit}"

log() {
  printf '{"time":"%s","level":"%s","msg":"%s"}\n' "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" "$1" "$2"
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    log ERROR "POSTGRES_PASSWORD is not set: the cluster in $PGDATA cannot be made without it"
    exit 2
  fi
  # A volume's root may hold lost+found: initdb then wants a folder below.
  if [ -n "$(ls -A "$PGDATA" 2>/dev/null)" ]; then
    log ERROR "$PGDATA is not empty and holds no cluster (PG_VERSION missing); refusing to touch it"
    exit 2
  fi
  log INFO "making the database cluster in $PGDATA"
  umask 077
  pw=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pw"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pw" --auth-local=scram-sha-256 \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pw"
  {
    echo "# every TCP client, with a password (postgres-entrypoint)"
    echo "host all all 0.0.0.0/0 scram-sha-256"
    echo "host all all ::/0 scram-sha-256"
  } >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" |
      postgres --single -D "$PGDATA" -c unix_socket_directories=/tmp postgres >/dev/null
  fi
  log INFO "database $POSTGRES_DB and role $POSTGRES_USER made"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c port=5432 -c unix_socket_directories=/tmp "$@"
