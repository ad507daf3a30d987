#!/bin/sh
# Creates Temporal's two PostgreSQL databases and their schemas, then the namespace svc uses. Run once
# per cluster, and the update-schema lines again after upgrading the server (each is a no-op when the
# schema is current). The schema files ship in the server's Go module: after
# `npm run temporal:install-server` they are under
# $(go env GOMODCACHE)/go.temporal.io/server@v1.32.1/schema/postgresql/v12/.
# The database user needs CREATEDB for create-database (or create the two databases beforehand).
set -eu
SCHEMA=${SCHEMA:-$(go env GOMODCACHE)/go.temporal.io/server@v1.32.1/schema/postgresql/v12}
SQL_TOOL=${SQL_TOOL:-temporal-sql-tool}
# Same host, user and password as persistence.datastores in temporal-server.yaml.
DB_HOST=${DB_HOST:-db.internal} DB_PORT=${DB_PORT:-5432} DB_USER=${DB_USER:-temporal}
: "${DB_PASSWORD:?set DB_PASSWORD}"

for db in temporal temporal_visibility; do
  dir=temporal; [ "$db" = temporal_visibility ] && dir=visibility
  tool() { "$SQL_TOOL" --plugin postgres12 --ep "$DB_HOST" -p "$DB_PORT" -u "$DB_USER" --pw "$DB_PASSWORD" --db "$db" "$@"; }
  tool create-database || true # already there on a second run
  tool setup-schema -v 0.0     # the schema_version table only; a no-op error when it exists
  tool update-schema -d "$SCHEMA/$dir/versioned"
done

# After the server is up (systemctl start temporal-server): the namespace of TEMPORAL_NAMESPACE in
# /etc/svc/svc.env. Retention: how long closed workflows' histories are kept.
echo "now: temporal operator namespace create --namespace svc --retention 720h --address 127.0.0.1:7233"
