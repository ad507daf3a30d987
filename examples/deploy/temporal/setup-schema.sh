#!/bin/sh
# Creates Temporal's two PostgreSQL databases and their schemas. Run once per cluster, and again after
# upgrading the server (every step is skipped or a no-op when already done). The schema files ship in
# the server's Go module: after `npm run temporal:install-server` they are under
# $(go env GOMODCACHE)/go.temporal.io/server@v1.32.1/schema/postgresql/v12/.
# The database user needs CREATEDB for create-database (or create the two databases beforehand).
#   DB_PASSWORD=... ./setup-schema.sh
set -eu
SCHEMA=${SCHEMA:-$(go env GOMODCACHE)/go.temporal.io/server@v1.32.1/schema/postgresql/v12}
SQL_TOOL=${SQL_TOOL:-temporal-sql-tool}
# The same host, user, password and database names as persistence.datastores in temporal-server.yaml.
DB_HOST=${DB_HOST:-db.internal}
DB_PORT=${DB_PORT:-5432}
DB_USER=${DB_USER:-temporal}
: "${DB_PASSWORD:?set DB_PASSWORD}"
TEMPORAL_DB=${TEMPORAL_DB:-temporal}
VISIBILITY_DB=${VISIBILITY_DB:-temporal_visibility}

sql_tool() { # <database> <command...>
  db=$1
  shift
  "$SQL_TOOL" --plugin postgres12 --ep "$DB_HOST" -p "$DB_PORT" -u "$DB_USER" --pw "$DB_PASSWORD" --db "$db" "$@"
}
setup() { # <database> <versioned schema dir>
  sql_tool "$1" create-database 2>/dev/null || echo "database $1: exists"
  # On a database without Temporal's schema_version table, update-schema fails: set that table up
  # (setup-schema -v 0.0), then apply every versioned step the database does not have yet.
  sql_tool "$1" update-schema -d "$2" 2>/dev/null || {
    sql_tool "$1" setup-schema -v 0.0
    sql_tool "$1" update-schema -d "$2"
  }
}
setup "$TEMPORAL_DB" "$SCHEMA/temporal/versioned"
setup "$VISIBILITY_DB" "$SCHEMA/visibility/versioned"

# Then, once the server is up (systemctl start temporal-server), the namespace svc uses
# (TEMPORAL_NAMESPACE in /etc/svc/svc.env; retention: how long closed workflows' histories are kept):
echo "next: temporal operator namespace create --namespace svc --retention 720h --address <frontend host>:7233"
