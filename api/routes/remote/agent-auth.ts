// The agent's credentials (agent/PROTOCOL.md "Authentication"): `Authorization: Bearer <agent token>`
// and `X-Machine-Id`. The lookup is by machine id and the token is compared in constant time.

import type { Request } from 'express';
import type { RemoteMachineRow, remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { bearerTokenOf } from '../../../domain/bearer.ts';
import { UnauthorizedError } from '../../../domain/errors.ts';
import { remoteSecretMatches } from '../../../domain/remote-tokens.ts';

/** The calling machine, or 401: unknown machine id, or a token that does not match. */
export async function authenticateAgent(
  machines: Pick<ReturnType<typeof remoteMachinesRepository>, 'find'>,
  req: Request,
): Promise<RemoteMachineRow> {
  const token = bearerTokenOf(req.headers.authorization);
  const machineId = req.get('x-machine-id');
  if (!token || !machineId) throw new UnauthorizedError('Agent token and X-Machine-Id are required');
  const machine = await machines.find(machineId);
  // Compare against a dummy hash when the machine is unknown so both paths cost the same.
  if (!remoteSecretMatches(token, machine?.agentTokenHash ?? '0'.repeat(64)) || !machine)
    throw new UnauthorizedError('Agent token rejected (machine unknown or unregistered)');
  return machine;
}
