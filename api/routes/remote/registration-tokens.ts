// Registration tokens (spec document 1, "Machine management"; system administrators only):
//
//   POST   /api/remote/machines/register                    {tenant_id, machine_id?} -> 201 {registration_token,
//          tenant_id, expires_at, machine_id}. Without machine_id the token registers a NEW machine only;
//          with machine_id it is a re-enrolment token: it may take over that existing machine id (new agent
//          token, new machine generation, the old generation's live sessions end).
//   GET    /api/remote/machines/registration-tokens          -> {tokens: [{id, tenant_id, machine_id,
//          created_by, created_at, expires_at, consumed_at, consumed_by_machine_id, revoked_at, status}]}
//          (never the token or its hash)
//   DELETE /api/remote/machines/registration-tokens/<id>     revokes an unused token (404 unknown, 409 when
//          it was already used or revoked)
//
// Tokens expire `settings.remote.registration_token_ttl_hours` (default 24) after creation; an expired or
// revoked token is refused at registration exactly like a consumed one. Every call is audited.
import { type Request, Router } from 'express';
import { z } from 'zod';
import {
  type RegistrationTokenRow,
  registrationTokensRepository,
} from '../../../db/repositories/registration-tokens.ts';
import { remoteMachinesRepository } from '../../../db/repositories/remote-machines.ts';
import { tenantsRepository } from '../../../db/repositories/tenants.ts';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../../domain/errors.ts';
import { machineStanding, mayPerform } from '../../../domain/remote-authority.ts';
import { hashRemoteSecret, newRemoteSecret } from '../../../domain/remote-tokens.ts';
import { writeAudit } from '../../../services/audit.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { iso } from '../../json-dates.ts';
import { authenticate } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { MACHINE_ID_PATTERN } from './agent.ts';

const createBody = z.object({
  tenant_id: z.number().int().positive().max(2_147_483_647),
  machine_id: z.string().trim().regex(MACHINE_ID_PATTERN, 'must be 1-64 letters, digits or ._:-').optional(),
});
const LIST_LIMIT = 500;

function tokenStatus(row: RegistrationTokenRow, now: Date): string {
  if (row.consumedAt) return 'used';
  if (row.revokedAt) return 'revoked';
  if (row.expiresAt && row.expiresAt <= now) return 'expired';
  return 'unused';
}

function tokenView(row: RegistrationTokenRow, now: Date) {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    machine_id: row.machineId,
    created_by: row.createdBy,
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    consumed_at: iso(row.consumedAt),
    consumed_by_machine_id: row.consumedByMachineId,
    revoked_at: iso(row.revokedAt),
    status: tokenStatus(row, now),
  };
}

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const postRemoteMachinesRegister = endpoint({
  tags: ['remote'],
  summary: 'Create a one-time machine registration token (shown once)',
  body: createBody,
  responses: {
    201: z.looseObject({
      registration_token: z.string(),
      id: z.number().int(),
      tenant_id: z.number().int(),
      machine_id: z.string().nullable(),
      expires_at: z.string(),
    }),
  },
});
const getRemoteMachinesRegistrationTokens = endpoint({
  tags: ['remote'],
  summary: 'Registration tokens (never the token itself)',
  responses: {
    200: z.looseObject({
      tokens: z.array(
        z.looseObject({
          id: z.number().int(),
          tenant_id: z.number().int().nullable(),
          machine_id: z.string().nullable(),
          created_at: z.string().nullable(),
          expires_at: z.string().nullable(),
          status: z.string(),
        }),
      ),
    }),
  },
});
const deleteRemoteMachinesRegistrationTokens = endpoint({
  tags: ['remote'],
  responses: { 200: z.looseObject({ success: z.literal(true), id: z.number().int() }) },
  errors: [409],
});

export function registrationTokensRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const tokens = registrationTokensRepository(deps.database);
  const machines = remoteMachinesRepository(deps.database);

  /** Refused with 403 and an audit record for anyone but a system administrator. */
  async function requireSystemAdmin(req: Request, action: string, resourceId?: string | number) {
    if (mayPerform('generate_registration_token', machineStanding(req.auth.user, null))) return;
    await writeAudit(deps, req, {
      action,
      resourceType: 'registration_token',
      resourceId,
      success: false,
      details: { reason: 'forbidden' },
    });
    throw new ForbiddenError('System administrator access required');
  }

  r.post('/api/remote/machines/register', postRemoteMachinesRegister, auth, async (req, res) => {
    await requireSystemAdmin(req, 'REMOTE_REGISTRATION_TOKEN_CREATE');
    const body = postRemoteMachinesRegister.body(req);
    const tenant = await tenantsRepository(deps.database).findById(body.tenant_id);
    if (!tenant) throw new BadRequestError('Unknown tenant_id');
    if (body.machine_id) {
      const machine = await machines.find(body.machine_id);
      if (!machine) throw new BadRequestError('machine_id: no such machine to re-enrol');
      if (machine.tenantId !== body.tenant_id)
        throw new BadRequestError('machine_id belongs to another tenant than tenant_id');
    }
    const token = newRemoteSecret();
    const now = deps.now();
    const expiresAt = new Date(now.getTime() + deps.settings.remote.registration_token_ttl_hours * 3_600_000);
    const row = await tokens.create({
      tokenHash: hashRemoteSecret(token),
      tenantId: body.tenant_id,
      createdBy: req.auth.user.id,
      createdAt: now,
      expiresAt,
      machineId: body.machine_id ?? null,
    });
    await writeAudit(deps, req, {
      action: 'REMOTE_REGISTRATION_TOKEN_CREATE',
      resourceType: 'registration_token',
      resourceId: row.id,
      targetTenantId: body.tenant_id,
      details: { expires_at: expiresAt.toISOString(), re_enrol_machine_id: body.machine_id ?? null },
    });
    res.status(201).json({
      registration_token: token,
      id: row.id,
      tenant_id: body.tenant_id,
      machine_id: body.machine_id ?? null,
      expires_at: expiresAt.toISOString(),
    });
  });

  r.get(
    '/api/remote/machines/registration-tokens',
    getRemoteMachinesRegistrationTokens,
    auth,
    async (req, res) => {
      await requireSystemAdmin(req, 'REMOTE_REGISTRATION_TOKEN_LIST');
      const now = deps.now();
      const rows = await tokens.list(LIST_LIMIT);
      await writeAudit(deps, req, {
        action: 'REMOTE_REGISTRATION_TOKEN_LIST',
        resourceType: 'registration_token',
        details: { count: rows.length },
      });
      res.json({ tokens: rows.map((row) => tokenView(row, now)) });
    },
  );

  r.delete(
    '/api/remote/machines/registration-tokens/:id',
    deleteRemoteMachinesRegistrationTokens,
    auth,
    async (req, res) => {
      const raw = String(req.params.id);
      await requireSystemAdmin(req, 'REMOTE_REGISTRATION_TOKEN_REVOKE', raw.slice(0, 20));
      const id = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
      const row = Number.isSafeInteger(id) ? await tokens.findById(id) : undefined;
      if (!row) throw new NotFoundError('Registration token not found');
      const revoked = await tokens.revoke(row.id, req.auth.user.id, deps.now());
      await writeAudit(deps, req, {
        action: 'REMOTE_REGISTRATION_TOKEN_REVOKE',
        resourceType: 'registration_token',
        resourceId: row.id,
        targetTenantId: row.tenantId,
        success: revoked,
        details: revoked ? {} : { reason: row.consumedAt ? 'already_used' : 'already_revoked' },
      });
      if (!revoked) throw new ConflictError('Registration token was already used or revoked');
      res.json({ success: true, id: row.id });
    },
  );

  return r;
}
