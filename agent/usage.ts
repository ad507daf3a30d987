// Usage reports (PROTOCOL.md "Usage reports"): after every CLI turn that printed token usage, the agent
// posts it to `POST {server}/api/remote/usage-report`, authenticated with the agent's own credentials
// (agent token and machine id, as every other agent call). The session's proxy token is not accepted
// there: the CLI holds it, and anything the CLI can run could otherwise report usage.
//
// The model proxy already meters every call that passes through it, so a report only counts towards
// quotas when it says `via_proxy: false`. The agent can tell that a CLI bypassed the proxy when the CLI
// names its credential source (Claude-Code init line `apiKeySource`) and that source is neither the
// proxy-token variable the agent set nor "none": e.g. `apiKeyHelper` or `/login managed key` mean the
// CLI used a credential of its own. Everything else is reported with `via_proxy: true` (stored by the
// server for reconciliation, never counted twice).
import type { TurnUsage } from './adapters.ts';
import { errorMessage, type Logger } from './log.ts';
import { postJson } from './transport.ts';

export interface UsageReport extends TurnUsage {
  session_id: string;
  report_id: string;
  via_proxy: boolean;
}

/** True unless the CLI's own words show its credential is not the proxy token. */
export function passedThroughProxy(keySource: string | undefined, proxyKeyVar: string): boolean {
  if (!keySource || keySource === 'none') return true;
  return keySource === proxyKeyVar;
}

const ATTEMPTS = 4;
const RETRY_BASE_MS = 1000;
const TIMEOUT_MS = 15_000;

export class UsageReporter {
  constructor(
    private readonly serverUrl: string,
    private readonly credentials: { agentToken: string; machineId: string },
    private readonly log: Logger,
    private readonly retryBaseMs = RETRY_BASE_MS,
  ) {}

  /**
   * Sends one report; retries network failures, 5xx and 429 a few times (the report id makes a repeat
   * harmless), gives up on any other refusal. Never throws: usage reporting must not disturb a session.
   */
  async send(report: UsageReport): Promise<boolean> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      let status = 0;
      let detail = '';
      try {
        const res = await postJson(
          `${this.serverUrl}/api/remote/usage-report`,
          report,
          {
            authorization: `Bearer ${this.credentials.agentToken}`,
            'x-machine-id': this.credentials.machineId,
          },
          TIMEOUT_MS,
        );
        status = res.status;
        detail = JSON.stringify(res.body ?? '').slice(0, 200);
      } catch (err) {
        detail = errorMessage(err);
      }
      if (status === 200 || status === 201) return true;
      const retryable = status === 0 || status === 429 || status >= 500;
      if (!retryable || attempt === ATTEMPTS) {
        this.log.warn('usage report not accepted', {
          session_id: report.session_id,
          report_id: report.report_id,
          status,
          detail,
        });
        return false;
      }
      await new Promise((r) => setTimeout(r, this.retryBaseMs * 2 ** (attempt - 1)).unref());
    }
    return false;
  }
}
