// /readyz answers 200 without Temporal (background services are reported, not part of readiness), so
// a test that waits for a worker to poll waits for the background_services check instead.
export async function workerPolls(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) });
    const body = (await res.json()) as { checks?: { background_services?: { status?: string } } };
    return res.status === 200 && body.checks?.background_services?.status === 'ok';
  } catch {
    return false;
  }
}
