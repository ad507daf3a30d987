#!/bin/sh
# Installs the svc remote agent for the current user (Linux, macOS).
#
#   curl -fsSL <server>/api/remote/agent/install.sh | sh -s -- --token <registration token>
#
# Options:
#   --server URL         service URL (required; the served script defaults it to the server it came from)
#   --token TOKEN        one-time registration token (required)
#   --name NAME          machine display name (default: hostname)
#   --install-cli TOOL   CLI tool to install and use: cli_alpha (default, Qwen Code), cli_beta (Claude
#                        Code), cli_gamma (Codex), cli_delta (Gemini CLI); fails if it cannot be installed
#   --dir DIR            install directory (default: ~/.svc-agent)
#   --no-service         do not install a systemd/launchd service
#   --skip-cli-install   do not install the CLI with npm (use the one on PATH, or set cli_path)
#   --insecure           allow an http:// server URL (tokens then cross the network in clear text)
#
# Needs Node.js 18+ (it also does the downloads, so neither curl nor wget is required past this
# script itself). The registration token is passed to child processes through the environment,
# never on a command line, so other users cannot read it with `ps`. Every downloaded agent file is
# checked against the SHA-256 in the server's manifest.json, and the CLI is installed at a pinned
# version (table below).
set -eu

# Filled in when the server renders this template.
SERVER_URL='__SVC_SERVER_URL__'
AGENT_FILES='__SVC_AGENT_FILES__'
# An unrendered template (run from a source checkout) still carries the placeholders.
case "$SERVER_URL" in __SVC_*) SERVER_URL='' ;; esac
case "$AGENT_FILES" in __SVC_*) AGENT_FILES='' ;; esac

TOKEN=''
NAME=''
CLI_TOOL='cli_alpha'
INSTALL_DIR="${HOME:?HOME is not set}/.svc-agent"
INSTALL_SERVICE=1
INSTALL_CLI=1
INSECURE=0
SERVICE_NAME='svc-agent'

say() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat <<'USAGE'
Usage: install.sh --server URL --token TOKEN [--name NAME] [--install-cli TOOL] [--dir DIR]
                  [--no-service] [--skip-cli-install] [--insecure]
  --server URL         service URL (required; the served script defaults it to its own server)
  --token TOKEN        one-time registration token (required)
  --name NAME          machine display name (default: hostname)
  --install-cli TOOL   cli_alpha (default), cli_beta, cli_gamma or cli_delta
  --dir DIR            install directory (default: ~/.svc-agent)
  --no-service         do not install a systemd/launchd service
  --skip-cli-install   do not install the CLI with npm
  --insecure           allow an http:// server URL
USAGE
}

need_value() {
  if [ "$#" -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value (see --help)"; fi
}

while [ "$#" -gt 0 ]; do
  case "$1" in
    --server) need_value "$@"; SERVER_URL=$2; shift 2 ;;
    --server=*) SERVER_URL=${1#*=}; shift ;;
    --token) need_value "$@"; TOKEN=$2; shift 2 ;;
    --token=*) TOKEN=${1#*=}; shift ;;
    --name) need_value "$@"; NAME=$2; shift 2 ;;
    --name=*) NAME=${1#*=}; shift ;;
    --install-cli) need_value "$@"; CLI_TOOL=$2; shift 2 ;;
    --install-cli=*) CLI_TOOL=${1#*=}; shift ;;
    --dir) need_value "$@"; INSTALL_DIR=$2; shift 2 ;;
    --dir=*) INSTALL_DIR=${1#*=}; shift ;;
    --no-service) INSTALL_SERVICE=0; shift ;;
    --skip-cli-install) INSTALL_CLI=0; shift ;;
    --insecure) INSECURE=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

[ -n "$SERVER_URL" ] || die '--server URL is required'
[ -n "$TOKEN" ] || die '--token TOKEN is required (a system administrator generates it)'
SERVER_URL=${SERVER_URL%/}
case "$SERVER_URL" in
  https://*) ;;
  http://*)
    [ "$INSECURE" -eq 1 ] || die "refusing the http:// server URL $SERVER_URL: tokens would cross the network unencrypted. Use https, or pass --insecure to accept it"
    warn "using an unencrypted http:// server URL (--insecure)"
    ;;
  *) die "--server must be an https URL, got: $SERVER_URL" ;;
esac
[ -n "$NAME" ] || NAME=$(hostname 2>/dev/null || uname -n)
case "$INSTALL_DIR" in /*) ;; *) INSTALL_DIR="$(pwd)/$INSTALL_DIR" ;; esac

# --- 1. Node.js ---------------------------------------------------------------------------------
say 'Checking Node.js (18 or newer required)'
command -v node >/dev/null 2>&1 || die 'Node.js is not installed or not on PATH; install Node.js 18 or newer first'
NODE_BIN=$(command -v node)
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
[ "$NODE_MAJOR" -ge 18 ] || die "Node.js $(node -v) is too old; version 18 or newer is required"
say "Using $NODE_BIN ($(node -v))"

# --- 2. Agent files -----------------------------------------------------------------------------
# manifest.json lists every agent file with the SHA-256 of its bytes. Runs as CommonJS under `node -e`.
fetch_manifest() {
  node -e '
const [url, dest] = process.argv.slice(1);
fetch(url)
  .then(async (res) => {
    if (!res.ok) throw new Error("HTTP " + res.status + " for " + url);
    const manifest = await res.json();
    if (!Array.isArray(manifest.files) || !manifest.files.every((f) => typeof f.path === "string" && /^[0-9a-f]{64}$/.test(f.sha256)))
      throw new Error("malformed manifest");
    require("fs").writeFileSync(dest, JSON.stringify(manifest));
    console.log(manifest.files.map((f) => f.path).join(" "));
  })
  .catch((err) => {
    console.error("manifest download failed: " + (err.cause ? err.message + ": " + err.cause.message : err.message));
    process.exit(1);
  });
' "$1" "$2"
}

# download_all(server, staging, manifest, names...): one node process fetches every file, checks each
# SHA-256 against the manifest and writes it (a process per file made an install take seconds).
download_all() {
  node -e '
const [server, staging, manifestPath, ...names] = process.argv.slice(1);
const fs = require("fs");
const path = require("path");
const entries = new Map(JSON.parse(fs.readFileSync(manifestPath, "utf8")).files.map((f) => [f.path, f]));
(async () => {
  for (const name of names) {
    const entry = entries.get(name);
    if (!entry) throw new Error(name + " is not in the manifest");
    console.log("==> Downloading " + name);
    const url = server + "/api/remote/agent/files/" + name;
    const res = await fetch(url);
    if (!res.ok) throw new Error("HTTP " + res.status + " for " + url);
    const body = Buffer.from(await res.arrayBuffer());
    const sha256 = require("crypto").createHash("sha256").update(body).digest("hex");
    if (sha256 !== entry.sha256) throw new Error("checksum mismatch for " + name + " (expected " + entry.sha256 + ", got " + sha256 + ")");
    fs.writeFileSync(path.join(staging, name), body);
  }
})().catch((err) => {
  console.error("download failed: " + (err.cause ? err.message + ": " + err.cause.message : err.message));
  process.exit(1);
});
' "$@"
}

say "Installing into $INSTALL_DIR"
umask 077
mkdir -p "$INSTALL_DIR"
chmod 700 "$INSTALL_DIR"
# Download into a staging folder first so a failed download leaves a previous install intact.
STAGING=$(mktemp -d "$INSTALL_DIR/.download.XXXXXX")
trap 'rm -rf "$STAGING"' EXIT INT TERM
say "Fetching the agent manifest (file checksums) from $SERVER_URL"
MANIFEST_FILES=$(fetch_manifest "$SERVER_URL/api/remote/agent/files/manifest.json" "$STAGING/.manifest.json") ||
  die 'could not get the agent manifest'
# An unrendered template (no embedded list) installs what the manifest lists.
[ -n "$AGENT_FILES" ] || AGENT_FILES=$MANIFEST_FILES
for file in $AGENT_FILES; do
  case "$file" in */* | ..* | .*) die "refusing unexpected file name from the server: $file" ;; esac
done
# shellcheck disable=SC2086 # one word per file name, checked above
download_all "$SERVER_URL" "$STAGING" "$STAGING/.manifest.json" $AGENT_FILES ||
  die "could not download the agent files from $SERVER_URL (or a checksum did not match the manifest)"
for file in $AGENT_FILES; do
  chmod 644 "$STAGING/$file"
  mv -f "$STAGING/$file" "$INSTALL_DIR/$file"
done

# --- 3. CLI -------------------------------------------------------------------------------------
# Before registration: a CLI that cannot be installed stops the script while the registration token
# is still unused.
CLI_PATH=''
# Pinned versions: a new CLI release is adopted by changing this table (and install.ps1's, and
# agent/cli-packages.ts: a unit test keeps the three equal) after it was tried with the agent, never
# by whatever npm calls "latest" on the day of the install.
case "$CLI_TOOL" in
  cli_alpha) CLI_PACKAGE='@qwen-code/qwen-code@0.24.4'; CLI_EXE='qwen' ;;
  cli_beta) CLI_PACKAGE='@anthropic-ai/claude-code@2.1.330'; CLI_EXE='claude' ;;
  cli_gamma) CLI_PACKAGE='@openai/codex@0.169.0'; CLI_EXE='codex' ;;
  cli_delta) CLI_PACKAGE='@google/gemini-cli@0.61.0'; CLI_EXE='gemini' ;;
  *) CLI_PACKAGE=''; CLI_EXE='' ;;
esac
if [ "$INSTALL_CLI" -eq 1 ]; then
  if [ -z "$CLI_PACKAGE" ]; then
    die "unknown CLI tool '$CLI_TOOL' for --install-cli (known: cli_alpha, cli_beta, cli_gamma, cli_delta). For another CLI, install it yourself, run this script again with --skip-cli-install, then set \"cli_path\" in $INSTALL_DIR/config.json. The registration token has not been used."
  fi
  command -v npm >/dev/null 2>&1 ||
    die "npm is not installed or not on PATH, so $CLI_PACKAGE cannot be installed. Install npm (it comes with Node.js), or install $CLI_PACKAGE yourself and run this script again with --skip-cli-install. The registration token has not been used."
  # A private prefix needs no root and does not touch the user's global packages.
  say "Installing $CLI_PACKAGE with npm (this can take a minute)"
  if npm install --silent --no-fund --no-audit --prefix "$INSTALL_DIR/cli" "$CLI_PACKAGE"; then
    CLI_PATH="$INSTALL_DIR/cli/node_modules/.bin/$CLI_EXE"
    [ -x "$CLI_PATH" ] ||
      die "npm installed $CLI_PACKAGE but $CLI_PATH is missing; install it yourself (npm install -g $CLI_PACKAGE) and run this script again with --skip-cli-install. The registration token has not been used."
    say "Installed $CLI_EXE at $CLI_PATH"
  else
    die "npm could not install $CLI_PACKAGE (see npm's message above). Check that this machine reaches the npm registry ($(npm config get registry 2>/dev/null || echo 'npm config get registry')), then run this script again; or install it yourself (npm install -g $CLI_PACKAGE) and run again with --skip-cli-install. The registration token has not been used."
  fi
else
  say 'Skipping CLI installation (--skip-cli-install)'
fi

# --- 4. Configuration (0600) and machine_id -----------------------------------------------------
say 'Writing config.json'
SVC_I_CONFIG="$INSTALL_DIR/config.json" SVC_I_SERVER="$SERVER_URL" SVC_I_TOKEN="$TOKEN" SVC_I_NAME="$NAME" \
  SVC_I_CLI_TOOL="$CLI_TOOL" SVC_I_CLI_PATH="$CLI_PATH" node -e '
const fs = require("fs");
const crypto = require("crypto");
const e = process.env;
let config = {};
try { config = JSON.parse(fs.readFileSync(e.SVC_I_CONFIG, "utf8")); } catch {}
// Re-installing keeps the machine identity, and its agent_token: registering an existing machine_id
// again needs the current agent token as proof (or a re-enrolment token from an administrator).
config.machine_id = config.machine_id || crypto.randomUUID();
config.server_url = e.SVC_I_SERVER;
config.registration_token = e.SVC_I_TOKEN;
config.machine_name = e.SVC_I_NAME;
config.cli_tool = e.SVC_I_CLI_TOOL;
if (e.SVC_I_CLI_PATH) config.cli_path = e.SVC_I_CLI_PATH;
fs.writeFileSync(e.SVC_I_CONFIG, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
fs.chmodSync(e.SVC_I_CONFIG, 0o600);
console.log("machine_id " + config.machine_id);
'

# --- 5. Registration ----------------------------------------------------------------------------
say "Registering '$NAME' with $SERVER_URL"
if ! node "$INSTALL_DIR/main.js" --config "$INSTALL_DIR/config.json" register; then
  printf '\n' >&2
  printf 'error: registration failed (see the message above).\n' >&2
  printf 'The registration token has been consumed by the server and cannot be used again:\n' >&2
  printf 'ask a system administrator for a new token and run this script again with --token.\n' >&2
  exit 1
fi

# --- 6. Service ---------------------------------------------------------------------------------
RUN_CMD="\"$NODE_BIN\" \"$INSTALL_DIR/main.js\" --config \"$INSTALL_DIR/config.json\" run"

install_systemd() {
  if [ "$(id -u)" -eq 0 ]; then
    unit_dir=/etc/systemd/system
    ctl='systemctl'
    wanted='multi-user.target'
  else
    unit_dir="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
    ctl='systemctl --user'
    wanted='default.target'
  fi
  mkdir -p "$unit_dir"
  umask 022
  cat >"$unit_dir/$SERVICE_NAME.service" <<UNIT
[Unit]
Description=svc remote agent
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=$RUN_CMD
Restart=always
RestartSec=5
# Exit code 3: the server rejected the agent token; restarting cannot help.
RestartPreventExitStatus=3
# SIGTERM to the agent only: it stops its CLI sessions itself and reports their end.
KillMode=mixed
TimeoutStopSec=20

[Install]
WantedBy=$wanted
UNIT
  $ctl daemon-reload
  $ctl enable --now "$SERVICE_NAME.service"
  say "Installed systemd unit $unit_dir/$SERVICE_NAME.service"
  if [ "$(id -u)" -ne 0 ]; then
    say "To keep the agent running after you log out: loginctl enable-linger $(id -un)"
  fi
}

install_launchd() {
  plist="$HOME/Library/LaunchAgents/com.svc.agent.plist"
  mkdir -p "$HOME/Library/LaunchAgents"
  umask 022
  cat >"$plist" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>com.svc.agent</string>
  <key>ProgramArguments</key>
  <array>
    <string>$NODE_BIN</string>
    <string>$INSTALL_DIR/main.js</string>
    <string>--config</string>
    <string>$INSTALL_DIR/config.json</string>
    <string>run</string>
  </array>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><true/>
  <key>StandardErrorPath</key><string>$INSTALL_DIR/agent.log</string>
</dict>
</plist>
PLIST
  launchctl unload "$plist" >/dev/null 2>&1 || true
  launchctl load -w "$plist"
  say "Installed launchd agent $plist"
}

if [ "$INSTALL_SERVICE" -eq 1 ]; then
  case "$(uname -s)" in
    Linux)
      if command -v systemctl >/dev/null 2>&1; then
        install_systemd
      else
        warn "systemd not found; start the agent yourself: $RUN_CMD"
      fi
      ;;
    Darwin) install_launchd ;;
    *) warn "no service manager support for $(uname -s); start the agent yourself: $RUN_CMD" ;;
  esac
else
  say "Skipping service installation (--no-service). Start the agent with: $RUN_CMD"
fi

say 'Done.'
