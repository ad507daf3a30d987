#!/usr/bin/env node
// Entry point: `node main.js [--config FILE] [run|register|version|help]`.
// In the repo: `node --import tsx agent/main.ts --config FILE`.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from './agent.ts';
import { ConfigError, ensureMachineId, type LoadedConfig, loadConfig } from './config.ts';
import { errorMessage, Logger } from './log.ts';
import { RegistrationError, register } from './register.ts';
import { AGENT_VERSION } from './version.ts';

const USAGE = `svc agent ${AGENT_VERSION}
Usage: node main.js [--config FILE] [command]

Commands:
  run        connect to the server and run sessions (default)
  register   register this machine with the registration_token from the config file
  version    print the agent version
  help       print this text

The config file defaults to config.json next to main.js. Environment variables SVC_* override it.`;

const EXIT_USAGE = 2;

function parseArgs(argv: string[]): { config?: string; command: string } {
  let config: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--config' || arg === '-c') {
      config = argv[++i];
      if (!config) throw new UsageError('--config needs a file name');
    } else if (arg.startsWith('--config=')) {
      config = arg.slice('--config='.length);
    } else if (arg === '--help' || arg === '-h') {
      rest.push('help');
    } else if (arg === '--version') {
      rest.push('version');
    } else if (arg.startsWith('-')) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      rest.push(arg);
    }
  }
  if (rest.length > 1) throw new UsageError(`expected one command, got: ${rest.join(' ')}`);
  return { config, command: rest[0] ?? 'run' };
}

class UsageError extends Error {}

async function runAgent(loaded: LoadedConfig, log: Logger): Promise<number> {
  ensureMachineId(loaded);
  if (!loaded.config.agent_token) {
    if (!loaded.config.registration_token) {
      log.error(
        'this machine is not registered: no agent_token and no registration_token in the config file',
        {
          config: loaded.store.path,
        },
      );
      return 1;
    }
    await register(loaded, log);
  }
  const agent = new Agent(loaded, log);
  const onSignal = (signal: NodeJS.Signals): void => void agent.stop(signal);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return agent.run();
}

async function main(): Promise<number> {
  const log = new Logger();
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${errorMessage(err)}\n\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  if (args.command === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (args.command === 'version') {
    process.stdout.write(AGENT_VERSION + '\n');
    return 0;
  }
  if (args.command !== 'run' && args.command !== 'register') {
    process.stderr.write(`unknown command "${args.command}"\n\n${USAGE}\n`);
    return EXIT_USAGE;
  }
  const installDir = dirname(fileURLToPath(import.meta.url));
  const configPath = args.config ? resolve(args.config) : join(installDir, 'config.json');
  try {
    const loaded = loadConfig(configPath);
    log.setLevel(loaded.config.log_level);
    if (args.command === 'register') {
      const { machineId } = await register(loaded, log);
      process.stdout.write(`registered machine ${machineId} with ${loaded.config.server_url}\n`);
      return 0;
    }
    return await runAgent(loaded, log);
  } catch (err) {
    if (err instanceof RegistrationError) {
      process.stderr.write(`Registration failed: ${err.message}\n`);
    } else if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
    } else {
      log.error('agent failed', { error: errorMessage(err) });
    }
    return 1;
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`fatal: ${errorMessage(err)}\n`);
    process.exit(1);
  },
);
