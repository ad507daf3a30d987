# Installs the svc remote agent for the current user (Windows PowerShell 5.1+ or PowerShell 7).
#
#   & ([scriptblock]::Create((irm <server>/api/remote/agent/install.ps1))) --token <registration token>
#
# Options (GNU style as in install.sh; -Server / -Token ... also work):
#   --server URL         service URL (required; the served script defaults it to the server it came from)
#   --token TOKEN        one-time registration token (required)
#   --name NAME          machine display name (default: computer name)
#   --install-cli TOOL   cli_alpha (default, Qwen Code), cli_beta (Claude Code), cli_gamma (Codex),
#                        cli_delta (Gemini CLI); fails if it cannot be installed
#   --dir DIR            install directory (default: ~\.svc-agent)
#   --no-service         do not register a logon Scheduled Task
#   --skip-cli-install   do not install the CLI with npm
#   --insecure           allow an http:// server URL (tokens then cross the network in clear text)
#
# Needs Node.js 18+. Pausing sessions is not available on Windows (no SIGSTOP). Mirrors install.sh:
# every agent file is checked against the SHA-256 in the server's manifest.json, and the CLI is
# installed at the pinned version of the table below (keep both scripts' tables equal).
$ErrorActionPreference = 'Stop'

# Filled in when the server renders this template.
$ServerUrl = '__SVC_SERVER_URL__'
$AgentFiles = '__SVC_AGENT_FILES__'
if ($ServerUrl.StartsWith('__SVC_')) { $ServerUrl = '' }
if ($AgentFiles.StartsWith('__SVC_')) { $AgentFiles = '' }

$Token = ''
$Name = $env:COMPUTERNAME
$CliTool = 'cli_alpha'
$InstallDir = Join-Path $HOME '.svc-agent'
$InstallService = $true
$InstallCli = $true
$Insecure = $false
$TaskName = 'svc-agent'

function Say([string]$Message) { Write-Host "==> $Message" }
function Warn([string]$Message) { Write-Warning $Message }
function Die([string]$Message) { Write-Host "error: $Message" -ForegroundColor Red; exit 1 }

$Usage = @'
Usage: install.ps1 --server URL --token TOKEN [--name NAME] [--install-cli TOOL] [--dir DIR]
                   [--no-service] [--skip-cli-install] [--insecure]
'@

# Manual parsing accepts both `--server URL` and `-Server URL`.
$i = 0
while ($i -lt $args.Count) {
  $arg = [string]$args[$i]
  $raw = $arg.TrimStart('-')
  $value = $null
  if ($raw.Contains('=')) { $value = $raw.Substring($raw.IndexOf('=') + 1); $raw = $raw.Substring(0, $raw.IndexOf('=')) }
  $key = $raw.ToLowerInvariant()
  $takesValue = @('server', 'token', 'name', 'install-cli', 'installcli', 'dir') -contains $key
  if ($takesValue -and $null -eq $value) {
    if ($i + 1 -ge $args.Count) { Die "$arg needs a value" }
    $i++
    $value = [string]$args[$i]
  }
  switch ($key) {
    'server' { $ServerUrl = $value }
    'token' { $Token = $value }
    'name' { $Name = $value }
    { $_ -in 'install-cli', 'installcli' } { $CliTool = $value }
    'dir' { $InstallDir = $value }
    { $_ -in 'no-service', 'noservice' } { $InstallService = $false }
    { $_ -in 'skip-cli-install', 'skipcliinstall' } { $InstallCli = $false }
    'insecure' { $Insecure = $true }
    { $_ -in 'h', 'help' } { Write-Host $Usage; exit 0 }
    default { Die "unknown option: $arg" }
  }
  $i++
}

if (-not $ServerUrl) { Die '--server URL is required' }
if (-not $Token) { Die '--token TOKEN is required (a system administrator generates it)' }
$ServerUrl = $ServerUrl.TrimEnd('/')
if ($ServerUrl.StartsWith('http://', [StringComparison]::OrdinalIgnoreCase)) {
  if (-not $Insecure) { Die "refusing the http:// server URL ${ServerUrl}: tokens would cross the network unencrypted. Use https, or pass --insecure to accept it" }
  Warn 'using an unencrypted http:// server URL (--insecure)'
} elseif (-not $ServerUrl.StartsWith('https://', [StringComparison]::OrdinalIgnoreCase)) {
  Die "--server must be an https URL, got: $ServerUrl"
}
$InstallDir = [System.IO.Path]::GetFullPath($InstallDir)

# --- 1. Node.js ---------------------------------------------------------------------------------
Say 'Checking Node.js (18 or newer required)'
$node = Get-Command node -ErrorAction SilentlyContinue
if (-not $node) { Die 'Node.js is not installed or not on PATH; install Node.js 18 or newer first' }
$NodeBin = $node.Source
$major = [int](& $NodeBin -p 'process.versions.node.split(".")[0]')
if ($major -lt 18) { Die "Node.js $(& $NodeBin -v) is too old; version 18 or newer is required" }
Say "Using $NodeBin ($(& $NodeBin -v))"

# --- 2. Agent files -----------------------------------------------------------------------------
[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
# manifest.json: every agent file with the SHA-256 of its bytes.
Say "Fetching the agent manifest (file checksums) from $ServerUrl"
try {
  $manifest = Invoke-RestMethod -UseBasicParsing -Uri "$ServerUrl/api/remote/agent/files/manifest.json"
} catch {
  Die "could not get the agent manifest: $($_.Exception.Message)"
}
$expected = @{}
foreach ($entry in @($manifest.files)) {
  if ($entry.sha256 -notmatch '^[0-9a-f]{64}$') { Die 'malformed agent manifest' }
  $expected[[string]$entry.path] = [string]$entry.sha256
}
# An unrendered template (no embedded list) installs what the manifest lists.
if (-not $AgentFiles) { $AgentFiles = (@($manifest.files | ForEach-Object { $_.path })) -join ' ' }
if (-not $AgentFiles) { Die 'could not get the list of agent files' }

Say "Installing into $InstallDir"
New-Item -ItemType Directory -Force -Path $InstallDir | Out-Null
$staging = Join-Path $InstallDir ('.download.' + [guid]::NewGuid().ToString('N'))
New-Item -ItemType Directory -Force -Path $staging | Out-Null
try {
  foreach ($file in $AgentFiles.Split(' ', [StringSplitOptions]::RemoveEmptyEntries)) {
    if ($file -match '[\\/]' -or $file.StartsWith('.')) { Die "refusing unexpected file name from the server: $file" }
    if (-not $expected.ContainsKey($file)) { Die "$file is not in the agent manifest" }
    Say "Downloading $file"
    $dest = Join-Path $staging $file
    try {
      Invoke-WebRequest -UseBasicParsing -Uri "$ServerUrl/api/remote/agent/files/$file" -OutFile $dest
    } catch {
      Die "could not download $file from ${ServerUrl}: $($_.Exception.Message)"
    }
    $actual = (Get-FileHash -Algorithm SHA256 -Path $dest).Hash.ToLowerInvariant()
    if ($actual -ne $expected[$file]) { Die "checksum mismatch for $file (expected $($expected[$file]), got $actual)" }
  }
  foreach ($file in $AgentFiles.Split(' ', [StringSplitOptions]::RemoveEmptyEntries)) {
    Move-Item -Force -Path (Join-Path $staging $file) -Destination (Join-Path $InstallDir $file)
  }
} finally {
  Remove-Item -Recurse -Force -Path $staging -ErrorAction SilentlyContinue
}

# --- 3. CLI -------------------------------------------------------------------------------------
# Before registration: a CLI that cannot be installed stops the script while the token is unused.
# Pinned versions, the same table as install.sh and agent/cli-packages.ts (a unit test checks).
$packages = @{
  cli_alpha = @('@qwen-code/qwen-code@0.24.4', 'qwen')
  cli_beta = @('@anthropic-ai/claude-code@2.1.330', 'claude')
  cli_gamma = @('@openai/codex@0.169.0', 'codex')
  cli_delta = @('@google/gemini-cli@0.61.0', 'gemini')
}
$TokenUnused = 'The registration token has not been used.'
$CliPath = ''
if ($InstallCli) {
  if (-not $packages.ContainsKey($CliTool)) {
    Die "unknown CLI tool '$CliTool' for --install-cli (known: cli_alpha, cli_beta, cli_gamma, cli_delta). For another CLI, install it yourself, run this script again with --skip-cli-install, then set cli_path in $InstallDir\config.json. $TokenUnused"
  }
  $pkg = $packages[$CliTool][0]
  if (-not (Get-Command npm -ErrorAction SilentlyContinue)) {
    Die "npm is not installed or not on PATH, so $pkg cannot be installed. Install npm (it comes with Node.js), or install $pkg yourself and run this script again with --skip-cli-install. $TokenUnused"
  }
  Say "Installing $pkg with npm (this can take a minute)"
  & npm install --silent --no-fund --no-audit --prefix (Join-Path $InstallDir 'cli') $pkg
  if ($LASTEXITCODE -ne 0) {
    Die "npm could not install $pkg (see npm's message above). Check that this machine reaches the npm registry (npm config get registry), then run this script again; or install it yourself (npm install -g $pkg) and run again with --skip-cli-install. $TokenUnused"
  }
  $CliPath = Join-Path $InstallDir ('cli\node_modules\.bin\' + $packages[$CliTool][1] + '.cmd')
  if (-not (Test-Path $CliPath)) {
    Die "npm installed $pkg but $CliPath is missing; install it yourself (npm install -g $pkg) and run this script again with --skip-cli-install. $TokenUnused"
  }
  Say "Installed at $CliPath"
} else {
  Say 'Skipping CLI installation (--skip-cli-install)'
}

# --- 4. Configuration (readable by this user only) and machine_id -------------------------------
Say 'Writing config.json'
$configPath = Join-Path $InstallDir 'config.json'
$config = @{}
if (Test-Path $configPath) {
  try {
    $existing = Get-Content -Raw $configPath | ConvertFrom-Json
    foreach ($p in $existing.PSObject.Properties) { $config[$p.Name] = $p.Value }
  } catch {
    Warn 'existing config.json is not valid JSON; writing a new one'
  }
}
if (-not $config['machine_id']) { $config['machine_id'] = [guid]::NewGuid().ToString() }
$config['server_url'] = $ServerUrl
$config['registration_token'] = $Token
$config['machine_name'] = $Name
$config['cli_tool'] = $CliTool
if ($CliPath) { $config['cli_path'] = $CliPath }
# agent_token is kept: re-registering an existing machine_id needs it as proof of ownership.
# No BOM: Windows PowerShell's "UTF8" encoding writes one, which JSON parsers reject.
[System.IO.File]::WriteAllText($configPath, ($config | ConvertTo-Json -Depth 5), (New-Object System.Text.UTF8Encoding $false))
# Equivalent of mode 0600: drop inherited rules, grant only the current user.
& icacls $configPath /inheritance:r /grant:r "$($env:USERNAME):(R,W)" | Out-Null
Say "machine_id $($config['machine_id'])"

# --- 5. Registration ----------------------------------------------------------------------------
Say "Registering '$Name' with $ServerUrl"
& $NodeBin (Join-Path $InstallDir 'main.js') --config $configPath register
if ($LASTEXITCODE -ne 0) {
  Write-Host ''
  Write-Host 'error: registration failed (see the message above).' -ForegroundColor Red
  Write-Host 'The registration token has been consumed by the server and cannot be used again:'
  Write-Host 'ask a system administrator for a new token and run this script again with --token.'
  exit 1
}

# --- 6. Service (Scheduled Task at logon) -------------------------------------------------------
$runArgs = "`"$(Join-Path $InstallDir 'main.js')`" --config `"$configPath`" run"
if ($InstallService) {
  $action = New-ScheduledTaskAction -Execute $NodeBin -Argument $runArgs -WorkingDirectory $InstallDir
  $trigger = New-ScheduledTaskTrigger -AtLogOn -User $env:USERNAME
  $settings = New-ScheduledTaskSettingsSet -RestartCount 999 -RestartInterval (New-TimeSpan -Minutes 1) -ExecutionTimeLimit ([TimeSpan]::Zero)
  Register-ScheduledTask -TaskName $TaskName -Action $action -Trigger $trigger -Settings $settings -Force | Out-Null
  Start-ScheduledTask -TaskName $TaskName
  Say "Registered Scheduled Task '$TaskName' (starts at logon)"
} else {
  Say "Skipping service installation (--no-service). Start the agent with: `"$NodeBin`" $runArgs"
}

Say 'Done.'
