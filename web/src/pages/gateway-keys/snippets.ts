// What to paste on a laptop to point each CLI at the model proxy with a gateway key (README "Use it
// from your laptop" says the same). The proxy takes the key wherever a provider key goes; OpenAI-style
// clients get the base URL with /v1 (the proxy uses a repeated version segment once).
export type Provider = 'anthropic' | 'openai' | 'gemini';

export interface Snippet {
  cli: string;
  text: string;
}

export function cliSnippets(origin: string, provider: Provider, key: string): Snippet[] {
  const base = `${origin}/api/remote/llm-proxy`;
  if (provider === 'anthropic')
    return [
      {
        cli: 'Claude Code',
        text: `export ANTHROPIC_BASE_URL=${base}\nexport ANTHROPIC_AUTH_TOKEN=${key}\nclaude`,
      },
    ];
  if (provider === 'gemini')
    return [
      {
        cli: 'Gemini CLI',
        text: `export GOOGLE_GEMINI_BASE_URL=${base}\nexport GEMINI_API_KEY=${key}\ngemini`,
      },
    ];
  return [
    {
      cli: 'Codex',
      text: [
        '# ~/.codex/config.toml',
        'model_provider = "svc"',
        '',
        '[model_providers.svc]',
        'name = "svc model proxy"',
        `base_url = "${base}/v1"`,
        'env_key = "SVC_GATEWAY_KEY"',
        'wire_api = "responses"',
        '# no Responses WebSocket attempt: the proxy answers over HTTP (saves ~7 s a turn)',
        'supports_websockets = false',
        '',
        '# then, in your shell:',
        `export SVC_GATEWAY_KEY=${key}`,
      ].join('\n'),
    },
    { cli: 'Qwen Code', text: `export OPENAI_BASE_URL=${base}/v1\nexport OPENAI_API_KEY=${key}\nqwen` },
  ];
}
