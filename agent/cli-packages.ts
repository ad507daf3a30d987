// The npm package and pinned version of each bundled CLI: the one place the installers (install.sh,
// install.ps1: a unit test keeps their tables equal to this one), the adapters and the real-CLI tests
// read. Bump a version here, in both install scripts, and run the real-CLI suite.

export interface CliPackage {
  /** npm package name. */
  name: string;
  /** Exact version installed by `--install-cli` and by `npm run clis:install`. */
  version: string;
  /** The executable the package puts on PATH. */
  bin: string;
}

export const CLI_PACKAGES: Readonly<Record<string, CliPackage>> = {
  cli_alpha: { name: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' },
  cli_beta: { name: '@anthropic-ai/claude-code', version: '2.1.330', bin: 'claude' },
  cli_gamma: { name: '@openai/codex', version: '0.169.0', bin: 'codex' },
  cli_delta: { name: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
};

export const cliPackageSpec = (p: CliPackage) => `${p.name}@${p.version}`;
