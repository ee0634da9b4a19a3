#!/bin/sh
# One-shot setup steps for the Temporal server in docker-compose.yml. Runs in the
# temporalio/admin-tools image, which ships temporal-sql-tool, the `temporal` CLI, nc and
# Temporal's SQL schemas under /etc/temporal/schema.
#
#   temporal-setup.sh schema      Before the server starts: create the `temporal` and
#                                 `temporal_visibility` databases and bring both schemas
#                                 up to the version shipped with this admin-tools image.
#   temporal-setup.sh namespace   After the server is up: create the namespace and register
#                                 the custom search attributes the workflows upsert.
#
# Both steps are idempotent (create tolerates an existing database, setup-schema keeps a
# newer version, update-schema applies only missing versions, re-registering a search
# attribute with the same type is a no-op), so compose can run them on every
# `docker compose up`. Modelled on temporalio/samples-server compose/scripts/
# setup-postgres.sh and create-namespace.sh; the deprecated temporalio/auto-setup image
# used to do both steps inside the server container.
set -eu

# Custom search attributes, NAME=Type separated by spaces. Must match
# runtime/search_attributes.py (tests/docs/test_compose.py checks).
SEARCH_ATTRIBUTES="${SEARCH_ATTRIBUTES:-MemoryRef=Keyword Tenant=Keyword}"

MAX_ATTEMPTS="${SETUP_MAX_ATTEMPTS:-60}"
SLEEP_SECONDS="${SETUP_SLEEP_SECONDS:-2}"

log() {
    echo "[temporal-setup] $*"
}

# retry DESCRIPTION COMMAND [ARG...]: run COMMAND until it succeeds, MAX_ATTEMPTS times at most.
retry() {
    what=$1
    shift
    attempt=1
    until "$@"; do
        if [ "$attempt" -ge "$MAX_ATTEMPTS" ]; then
            log "giving up: $what (after $attempt attempts)"
            return 1
        fi
        log "waiting: $what (attempt $attempt/$MAX_ATTEMPTS)"
        attempt=$((attempt + 1))
        sleep "$SLEEP_SECONDS"
    done
}

# --- schema -------------------------------------------------------------------------------

sql_tool() {
    # temporal-sql-tool reads the password from SQL_PASSWORD.
    temporal-sql-tool --plugin "$SQL_PLUGIN" --ep "$SQL_HOST" -u "$POSTGRES_USER" -p "$SQL_PORT" "$@"
}

# setup_database NAME SCHEMA_DIR
setup_database() {
    log "database $1: create, setup-schema -v 0.0, update-schema -d $2"
    sql_tool --db "$1" create
    sql_tool --db "$1" setup-schema -v 0.0
    sql_tool --db "$1" update-schema -d "$2"
}

setup_schema() {
    : "${POSTGRES_SEEDS:?POSTGRES_SEEDS (the PostgreSQL host) is required}"
    : "${POSTGRES_USER:?POSTGRES_USER is required}"
    : "${SQL_PASSWORD:?SQL_PASSWORD (read by temporal-sql-tool) is required}"
    SQL_PLUGIN="${DB:-postgres12}"
    SQL_HOST="${POSTGRES_SEEDS%%,*}"
    SQL_PORT="${DB_PORT:-5432}"
    schema_root="${SCHEMA_ROOT:-/etc/temporal/schema/postgresql/v12}"

    retry "PostgreSQL at $SQL_HOST:$SQL_PORT" nc -z -w 5 "$SQL_HOST" "$SQL_PORT"
    setup_database "${DBNAME:-temporal}" "$schema_root/temporal/versioned"
    setup_database "${VISIBILITY_DBNAME:-temporal_visibility}" "$schema_root/visibility/versioned"
    log "schema setup complete"
}

# --- namespace ----------------------------------------------------------------------------

ensure_namespace() {
    if temporal operator namespace describe --namespace "$NAMESPACE" --address "$ADDRESS" >/dev/null 2>&1; then
        log "namespace $NAMESPACE exists"
        return 0
    fi
    temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" --address "$ADDRESS"
}

setup_namespace() {
    ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
    NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
    RETENTION="${NAMESPACE_RETENTION:-72h}"
    host="${ADDRESS%:*}"
    port="${ADDRESS##*:}"

    retry "Temporal frontend port at $ADDRESS" nc -z -w 5 "$host" "$port"
    retry "Temporal cluster health at $ADDRESS" temporal operator cluster health --address "$ADDRESS"
    retry "namespace $NAMESPACE" ensure_namespace

    for attribute in $SEARCH_ATTRIBUTES; do
        name="${attribute%%=*}"
        type="${attribute#*=}"
        retry "search attribute $name ($type)" \
            temporal operator search-attribute create --namespace "$NAMESPACE" --address "$ADDRESS" \
            --name "$name" --type "$type"
    done

    # Read them back: a worker that upserts an unregistered attribute fails its workflow task.
    registered="$(temporal operator search-attribute list --namespace "$NAMESPACE" --address "$ADDRESS")"
    for attribute in $SEARCH_ATTRIBUTES; do
        name="${attribute%%=*}"
        if ! printf '%s\n' "$registered" | grep -qw "$name"; then
            log "search attribute $name is not listed in namespace $NAMESPACE"
            exit 1
        fi
    done
    log "namespace $NAMESPACE ready with search attributes: $SEARCH_ATTRIBUTES"
}

case "${1:-}" in
    schema) setup_schema ;;
    namespace) setup_namespace ;;
    *)
        echo "usage: $0 schema|namespace" >&2
        exit 2
        ;;
esac
