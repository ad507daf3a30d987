// The caller's robot webhook for alert pushes (spec document 2, "Organization sync and alert
// webhooks" item 5; response bodies not shown by the spec, so chosen here):
//
//   GET    /api/alerts/preferences/webhook   -> {webhook_url, has_secret}
//   PUT    /api/alerts/preferences/webhook   {webhook_url: string}  -> {webhook_url, has_secret}
//   DELETE /api/alerts/preferences/webhook   -> {webhook_url: null, has_secret: false}
//
// Every authenticated user manages their own webhook only. A `svc_robot_secret` query parameter in the
// URL is stored as ciphertext and removed from the saved URL; no answer ever holds the secret. A URL
// the egress policy refuses (not https, or a loopback/private/link-local/metadata/local host not in
// egress.allow_hosts) is a 400 naming `webhook_url`.
import { Router } from 'express';
import { z } from 'zod';
import {
  MAX_WEBHOOK_URL_LENGTH,
  saveWebhookPreference,
  webhookPreferenceView,
} from '../../services/alerts/webhook-preference.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const PATH = '/api/alerts/preferences/webhook';

const putBody = z.object({ webhook_url: z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH) }).strict();

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const tags = ['alerts'];
const webhookAnswer = { 200: z.looseObject({ webhook_url: z.string().nullable(), has_secret: z.boolean() }) };
const readWebhook = endpoint({
  tags,
  summary: "The caller's robot webhook (its secret never shown)",
  responses: webhookAnswer,
});
const saveWebhook = endpoint({
  tags,
  summary: "Set the caller's robot webhook URL",
  body: putBody,
  responses: webhookAnswer,
});
const clearWebhook = endpoint({
  tags,
  summary: "Remove the caller's robot webhook",
  responses: webhookAnswer,
});

export function alertWebhookRouter(deps: AppDeps) {
  const r = Router();
  r.use(PATH, authenticate(deps));

  r.get(PATH, readWebhook, async (req, res) => {
    res.json(await webhookPreferenceView(deps.database, req.auth.user.id));
  });

  r.put(PATH, saveWebhook, async (req, res) => {
    const body = saveWebhook.body(req);
    res.json(await saveWebhookPreference(deps, req.auth.user.id, body.webhook_url));
  });

  r.delete(PATH, clearWebhook, async (req, res) => {
    res.json(await saveWebhookPreference(deps, req.auth.user.id, null));
  });

  return r;
}
