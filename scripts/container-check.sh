#!/usr/bin/env bash
# Builds Vouch's container image (Dockerfile) on a base made on this machine, runs it and checks it:
#
#   1. the image alone on the embedded database: /ready, a sandbox lookup with the demo's printed
#      test secret, a face match (the model loads from node_modules), the CLI in the image;
#   2. compose.yaml's layout: PostgreSQL, Redis, two API processes and a worker behind nginx with
#      deploy/nginx.conf; `vouch org create --json` in an API container, a lookup with its secret
#      through the proxy, and requests reaching both API processes.
#
# No container registry is reachable here, so nothing is pulled: the base is Debian bookworm made
# with mmdebstrap plus this machine's Node 20 (cached under $CACHE per day and Node version, reused for up to 3 days),
# and nginx and Redis come from Debian's packages in a small image on that base. PostgreSQL is the
# machine's own (a fresh database). Containers use the host's network (ports from $PORT_BASE).
#
# Usage: scripts/container-check.sh [--context DIR]   (DIR: the sources to build; default this checkout)
# Prints the figures (image size, build time, start time) at the end.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONTEXT=$ROOT
if [ "${1:-}" = "--context" ]; then CONTEXT=$(cd "$2" && pwd); fi

CACHE=${VOUCH_CONTAINER_CACHE:-/var/tmp/vouch-container}
PORT_BASE=${VOUCH_CHECK_PORT_BASE:-18080}
IMAGE=localhost/vouch:check
SERVICES_IMAGE=localhost/vouch-check-services:latest
PGURL_BASE=${VOUCH_CHECK_POSTGRES:-postgres://postgres@127.0.0.1:5432}
RUN_ID=vouchcheck$$
mkdir -p "$CACHE"

say() { printf '== %s\n' "$*"; }
fail() { printf 'container check FAILED: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- tools (a fresh machine gets them from Debian) ---------------------------------------------
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || [ -x /usr/sbin/runc ] || missing+=(runc)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Containers here cannot raise their limits above the host's: podman's default ulimits would fail.
export CONTAINERS_CONF=$CACHE/containers.conf
printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"
pm() { podman --runtime runc --cgroup-manager cgroupfs "$@"; }

containers=()
databases=()
cleanup() {
  for c in "${containers[@]}"; do pm rm -f -t 2 "$c" >/dev/null 2>&1 || true; done
  pm volume rm -f "$RUN_ID-data" "$RUN_ID-files" >/dev/null 2>&1 || true
  rm -f "$CACHE/nginx-$RUN_ID.conf"
  for d in "${databases[@]}"; do psql "$PGURL_BASE/postgres" -qc "drop database if exists $d" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

# --- the base: Debian bookworm (minbase) + this machine's Node 20 and npm, as in node:20-bookworm-slim
node_version=$(node -p process.versions.node)
case $node_version in 20.*) ;; *) fail "the base needs Node 20; this machine has $node_version" ;; esac
# A base made in the last BASE_MAX_AGE_DAYS days is reused (a run that crosses midnight, or CI just
# after the day's work, must not pay 8-10 minutes for a new one); an older one is made afresh, so
# Debian's security updates reach the image within that many days.
BASE_MAX_AGE_DAYS=${VOUCH_BASE_MAX_AGE_DAYS:-3}
BASE=localhost/vouch-base:node$node_version-$(date +%Y%m%d)
for days in $(seq 1 "$BASE_MAX_AGE_DAYS"); do
  pm image exists "$BASE" && break
  earlier=localhost/vouch-base:node$node_version-$(date -d "$days days ago" +%Y%m%d)
  if pm image exists "$earlier"; then BASE=$earlier; break; fi
done
if pm image exists "$BASE"; then
  say "base $BASE (cached)"
else
  say "making base $BASE with mmdebstrap"
  started=$(now)
  node_bin=$(readlink -f "$(command -v node)")
  npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
  rootfs=$CACHE/rootfs-$$.tar
  # Certificate authorities this machine added (a TLS-inspecting egress proxy's, say) are trusted
  # in the base too, by the system and by Node, or npm could not reach the registry from a build.
  # (Node carries its own list of public authorities; the system needs none for apt over http.)
  local_cas=()
  ca_env=()
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cat /usr/local/share/ca-certificates/*.crt >"$CACHE/local-ca.pem"
    local_cas=(--customize-hook='mkdir -p "$1/etc/ssl"' --customize-hook="copy-in $CACHE/local-ca.pem /etc/ssl/")
    ca_env=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/local-ca.pem')
  fi
  # The official slim image's layout: node in /usr/local/bin, npm in /usr/local/lib/node_modules.
  # merged-usr as a hook, as Debian's own images do: the usrmerge package would pull in Perl (50 MB).
  mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "${local_cas[@]}" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules"' \
    --customize-hook="copy-in $node_bin /usr/local/bin/" \
    --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules/" \
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    bookworm "$rootfs" >"$CACHE/mmdebstrap.log" 2>&1 || { tail -20 "$CACHE/mmdebstrap.log"; fail "mmdebstrap failed (log: $CACHE/mmdebstrap.log)"; }
  pm import --quiet --change 'CMD ["node"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "${ca_env[@]}" "$rootfs" "$BASE" >/dev/null
  rm -f "$rootfs"
  # Older bases (another day, another Node) are rebuilt rather than kept.
  for old in $(pm images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/vouch-base:' | grep -v "^$BASE$"); do pm rmi "$old" >/dev/null 2>&1 || true; done
  say "base made in $(since "$started") s"
fi
pm run --rm --network host --no-healthcheck "$BASE" node -e 'if (!process.version.startsWith("v20.")) process.exit(1)' || fail "the base's node does not run"

# --- the image ------------------------------------------------------------------------------------
say "building $IMAGE from $CONTEXT"
started=$(now)
pm build --format docker --network host --build-arg BASE="$BASE" -t "$IMAGE" -f "$CONTEXT/Dockerfile" "$CONTEXT" >"$CACHE/build.log" 2>&1 ||
  { grep -v EBADENGINE "$CACHE/build.log" | tail -30; fail "the image did not build (log: $CACHE/build.log)"; }
build_seconds=$(since "$started")
image_bytes=$(pm image inspect --format '{{.Size}}' "$IMAGE")
image_mb=$((image_bytes / 1000 / 1000))
say "image built in $build_seconds s: $image_mb MB"
[ "$image_mb" -le 400 ] || fail "the image is $image_mb MB, over the 400 MB target"
[ "$(pm image inspect --format '{{.Config.User}}' "$IMAGE")" = vouch ] || fail "the image does not run as the vouch user"
[ "$(pm run --rm --network host --no-healthcheck --entrypoint id "$IMAGE" -u):$(pm run --rm --network host --no-healthcheck --entrypoint id "$IMAGE" -g)" = 10001:10001 ] || fail "the vouch user is not uid/gid 10001"

# --- 1. the image alone, embedded database ---------------------------------------------------------
say "1. the image alone on the embedded database"
wait_ready() { # URL SECONDS
  for _ in $(seq 1 $(($2 * 10))); do curl -fsS -o /dev/null "$1/ready" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
port=$PORT_BASE
api=http://127.0.0.1:$port
pm volume create "$RUN_ID-data" >/dev/null
started=$(now)
containers+=("$RUN_ID-solo")
# (podman reports on stderr that it has no systemd to schedule the image's HEALTHCHECK with.)
pm run -d --name "$RUN_ID-solo" --network host -e PORT="$port" -e PUBLIC_URL="$api" -v "$RUN_ID-data:/data" "$IMAGE" >/dev/null 2>&1
wait_ready "$api" 90 || { pm logs "$RUN_ID-solo" | tail -20; fail "/ready did not answer within 90 s"; }
start_seconds=$(since "$started")
# No systemd here to schedule the image's HEALTHCHECK: run it once by hand.
pm healthcheck run "$RUN_ID-solo" || fail "the image's HEALTHCHECK failed on a ready server"
say "ready in $start_seconds s (first start: a new data folder from the image's template)"
solo_log=$(pm logs "$RUN_ID-solo" 2>&1)
secret=$(sed -n '/export VOUCH_TEST_SECRET=/{s/.*export VOUCH_TEST_SECRET=\([^ ]*\).*/\1/p;q}' <<<"$solo_log")
[ -n "$secret" ] || fail "the first start printed no demo test secret"
# The sandbox's NIN identity, with the names the demo organization's risk level asks for.
applicant='{"firstname":"Babatunde","lastname":"Adeyemi","dob":"02-11-1985"}'
nin_lookup() { # BASE_URL SECRET
  curl -sS -X POST -H "Authorization: Bearer $2" -H 'content-type: application/json' -d "$applicant" "$1/v1/verifications/identities/nin/70412358961"
}
lookup=$(nin_lookup "$api" "$secret")
grep -q '"firstname":"Babatunde"' <<<"$lookup" || fail "the sandbox NIN lookup answered: $lookup"
say "sandbox lookup answers"
# The face model (tfjs wasm and face-api's weights from node_modules): the record's own photo matches.
photo=$(pm exec "$RUN_ID-solo" vouch test-identities --json | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0)).nin.photo)')
match=$(node -e 'process.stdout.write(JSON.stringify({ idType: "nin", idNumber: "70412358961", photo: process.argv[1] }))' "$photo" |
  curl -fsS -X POST -H "Authorization: Bearer $secret" -H 'content-type: application/json' --data-binary @- "$api/v1/verifications/identities/biometrics")
grep -q '"match":true' <<<"$match" || fail "the face match answered: ${match:0:300}"
say "face match answers"
# The CLI in the image: a command without the database, and one with it (the server holds the
# embedded database's folder, so it is stopped first: one process per folder).
# (Outputs are captured before they are searched: `grep -q` stops reading early, and under
# pipefail the writer's SIGPIPE would fail the check.)
help=$(pm run --rm --network host --no-healthcheck "$IMAGE" --help 2>&1)
grep -q 'org' <<<"$help" || fail "vouch --help: $help"
pm stop -t 10 "$RUN_ID-solo" >/dev/null 2>&1
created=$(pm run --rm --network host --no-healthcheck -v "$RUN_ID-data:/data" "$IMAGE" org create --name 'Container Check' --json)
grep -q '"testSecret"' <<<"$created" || fail "vouch org create in the image"
say "CLI works in the image"

# --- 2. compose.yaml's layout: postgres, redis, 2 APIs + worker behind nginx -----------------------
say "2. two API processes and a worker behind nginx, on PostgreSQL and Redis"
pm build --quiet --format docker --network host --build-arg BASE="$BASE" -t "$SERVICES_IMAGE" -f "$ROOT/deploy/check-services.Containerfile" "$ROOT/deploy" >/dev/null
database=${RUN_ID}_db
databases+=("$database")
psql "$PGURL_BASE/postgres" -qc "create database $database" >/dev/null
redis_port=$((PORT_BASE + 9))
proxy_port=$((PORT_BASE + 10))
containers+=("$RUN_ID-redis")
pm run -d --name "$RUN_ID-redis" --network host "$SERVICES_IMAGE" redis-server --port "$redis_port" --bind 127.0.0.1 --save '' >/dev/null
key=$(head -c 32 /dev/urandom | base64)
common=(--network host -e DATABASE_URL="$PGURL_BASE/$database" -e REDIS_URL="redis://127.0.0.1:$redis_port"
  -e VOUCH_ENCRYPTION_KEY="$key" -e PUBLIC_URL="http://127.0.0.1:$proxy_port" -e VOUCH_WORKER=off -v "$RUN_ID-files:/data"
  -e VOUCH_TRUST_PROXY=127.0.0.1)
for n in 1 2; do
  containers+=("$RUN_ID-api-$n")
  pm run -d --name "$RUN_ID-api-$n" "${common[@]}" -e PORT=$((PORT_BASE + n)) "$IMAGE" serve >/dev/null 2>&1
done
containers+=("$RUN_ID-worker")
pm run -d --name "$RUN_ID-worker" "${common[@]}" --no-healthcheck "$IMAGE" worker >/dev/null
for n in 1 2; do wait_ready "http://127.0.0.1:$((PORT_BASE + n))" 60 || { pm logs "$RUN_ID-api-$n" | tail -20; fail "API $n not ready"; }; done
# deploy/nginx.conf as compose mounts it, with the compose service names replaced by host ports.
sed -e "s/server api-1:8080/server 127.0.0.1:$((PORT_BASE + 1))/" -e "s/server api-2:8080/server 127.0.0.1:$((PORT_BASE + 2))/" \
  -e "s/listen 8080;/listen 127.0.0.1:$proxy_port;/" "$ROOT/deploy/nginx.conf" >"$CACHE/nginx-$RUN_ID.conf"
containers+=("$RUN_ID-proxy")
pm run -d --name "$RUN_ID-proxy" --network host -v "$CACHE/nginx-$RUN_ID.conf:/etc/nginx/nginx.conf:ro" "$SERVICES_IMAGE" nginx -g 'daemon off;' >/dev/null
proxy=http://127.0.0.1:$proxy_port
wait_ready "$proxy" 30 || { pm logs "$RUN_ID-proxy" | tail -20; fail "the proxy does not answer /ready"; }
created=$(pm exec "$RUN_ID-api-1" vouch org create --name 'Compose Check' --json)
org_secret=$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).testSecret)' "$created")
for _ in $(seq 1 10); do
  lookup=$(nin_lookup "$proxy" "$org_secret")
  grep -q '"firstname":"Babatunde"' <<<"$lookup" || fail "the lookup through the proxy answered: $lookup"
done
# The proxy's log names the upstream of each request; each API's own log has the lookups it served.
upstreams=$(pm logs "$RUN_ID-proxy" 2>/dev/null | grep -o 'upstream=127.0.0.1:[0-9]*' | sort -u | wc -l || true)
[ "$upstreams" -ge 2 ] || fail "the proxy sent every request to one API process"
for n in 1 2; do
  api_log=$(pm logs "$RUN_ID-api-$n" 2>/dev/null)
  grep -q '/v1/verifications/identities/nin/' <<<"$api_log" ||
    { pm logs "$RUN_ID-proxy" 2>&1 | tail -12; pm logs "$RUN_ID-api-$n" 2>&1 | tail -5; fail "API $n served no lookup"; }
done
proxy_log=$(pm logs "$RUN_ID-proxy" 2>/dev/null)
grep -q '70412358961' <<<"$proxy_log" && fail "the proxy logged an identity number"
migrated=$(pm exec "$RUN_ID-worker" vouch migrate --json)
grep -q '"applied":\[\]' <<<"$migrated" || fail "vouch migrate in the worker container: $migrated"
say "org created in a container; lookups through the proxy reached both API processes"

# Build stages of earlier runs are kept for the layer cache a few days, then dropped.
pm image prune -f --filter until=72h >/dev/null 2>&1 || true

printf '\ncontainer check passed\n  image size   %s MB\n  build time   %s s\n  start time   %s s (to /ready, first start on the embedded database)\n' "$image_mb" "$build_seconds" "$start_seconds"
