// Which provider a CLI tool talks to, so the session's proxy token is issued for the right stored key
// (agent/adapters.ts sets the matching variables on the machine: spec table "Supported CLI tools").
import type { KeyProvider } from './key-providers.ts';

export const DEFAULT_CLI_TOOL = 'cli_alpha';

const PROVIDER_BY_TOOL: Readonly<Record<string, KeyProvider>> = {
  cli_alpha: 'openai',
  cli_beta: 'anthropic',
  cli_gamma: 'openai',
  // Gemini CLI: the `<provider_c>` row of the key store.
  cli_delta: 'gemini',
};

/** Unregistered tools use the generic adapter, which routes through the OpenAI-compatible variables. */
export const providerForCliTool = (cliTool: string): KeyProvider => PROVIDER_BY_TOOL[cliTool] ?? 'openai';

/** Same rule as the agent's adapter lookup: a short identifier, never a path or a command line. */
export const isValidCliToolName = (name: string): boolean => /^[A-Za-z0-9][A-Za-z0-9_.-]{0,49}$/.test(name);
