// Prompt templates (spec document 2, "Workspace (prompts and sessions)"; issue 11 item 6).
//
//   GET    /api/prompts                    own + visible public (+ featured first); ?category, search,
//                                          tag, featured=true|false, limit (50, max 200), offset (0)
//   POST   /api/prompts                    {name, description, category ('general'), content,
//                                          variables: array, tags: array, is_public (false), is_featured?}
//   GET    /api/prompts/categories         categories of the visible templates with counts
//   GET    /api/prompts/featured           visible featured templates
//   GET    /api/prompts/:template_id
//   PUT    /api/prompts/:template_id       any create field (partial)
//   DELETE /api/prompts/:template_id
//   POST   /api/prompts/:template_id/render {variables: {name: value}} -> {rendered, ...}; use_count + 1
//
// Who sees and changes what: domain/workspace/prompt-access.ts (templates belong to the author's
// tenant; public ones are visible inside that tenant only; invisible -> 404, visible but not yours
// -> 403; is_featured by administrators only). Reading and rendering need an authenticated user;
// creating, changing and deleting need `view_messages` (every role but readonly holds it).
// Rendering: domain/workspace/prompt-render.ts (one pass, values never re-expanded).
import { type Request, Router } from 'express';
import { z } from 'zod';
import {
  type PromptTemplateRow,
  promptTemplatesRepository,
} from '../../db/repositories/workspace/prompt-templates.ts';
import { ForbiddenError, NotFoundError } from '../../domain/errors.ts';
import { parseInput } from '../../domain/validation.ts';
import {
  canChangeTemplate,
  canFeature,
  canSeeTemplate,
  type PromptViewer,
  promptViewer,
} from '../../domain/workspace/prompt-access.ts';
import { isVariableName, type PromptVariable, renderPrompt } from '../../domain/workspace/prompt-render.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requirePermission } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

export const DEFAULT_PROMPT_PAGE_SIZE = 50;
const MAX_CONTENT = 100_000;

const variableName = z
  .string()
  .refine(isVariableName, 'must be a letter or _ then letters, digits, _ . - (max 64)');
const variable = z.union([
  variableName,
  z
    .object({
      name: variableName,
      description: z.string().max(500).optional(),
      default: z.string().max(10_000).optional(),
    })
    .strict(),
]);
const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable(),
  category: z.string().trim().min(1).max(50),
  content: z.string().min(1).max(MAX_CONTENT),
  variables: z.array(variable).max(100),
  tags: z.array(z.string().trim().min(1).max(50)).max(50),
  is_public: z.boolean(),
  is_featured: z.boolean(),
};
const createBody = z.object({
  ...fields,
  description: fields.description.optional(),
  category: fields.category.default('general'),
  variables: fields.variables.default([]),
  tags: fields.tags.default([]),
  is_public: fields.is_public.default(false),
  is_featured: fields.is_featured.optional(),
});
const updateBody = z.object(fields).partial();
const listQuery = z.object({
  category: z.string().min(1).max(50).optional(),
  search: z.string().min(1).max(200).optional(),
  tag: z.string().min(1).max(50).optional(),
  featured: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  limit: z.coerce.number().int().min(1).max(200).default(DEFAULT_PROMPT_PAGE_SIZE),
  offset: z.coerce.number().int().min(0).default(0),
});
const idParams = z.object({ template_id: z.coerce.number().int().positive().max(2_147_483_647) });
const renderBody = z.object({
  variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
});

const parseJsonArray = <T>(text: string | null): T[] => {
  if (!text) return [];
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
};

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const templateAnswer = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  category: z.string().nullable(),
  content: z.string(),
  variables: z.array(z.unknown()),
  tags: z.array(z.unknown()),
  author_id: z.number().int().nullable(),
  tenant_id: z.number().int().nullable(),
  is_public: z.boolean(),
  is_featured: z.boolean(),
  use_count: z.number().int(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
});
const templatePage = z.looseObject({
  templates: z.array(templateAnswer),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});
const oneTemplate = z.looseObject({ template: templateAnswer });
const getPrompts = endpoint({ tags: ['prompts'], query: listQuery, responses: { 200: templatePage } });
const getPromptsCategories = endpoint({
  tags: ['prompts'],
  responses: {
    200: z.looseObject({
      categories: z.array(z.looseObject({ category: z.string().nullable(), count: z.number().int() })),
    }),
  },
});
const getPromptsFeatured = endpoint({
  tags: ['prompts'],
  query: listQuery.pick({ limit: true, offset: true }),
  responses: { 200: templatePage },
});
const postPrompts = endpoint({ tags: ['prompts'], body: createBody, responses: { 201: oneTemplate } });
const getPromptsId = endpoint({ tags: ['prompts'], responses: { 200: oneTemplate } });
const putPromptsId = endpoint({ tags: ['prompts'], body: updateBody, responses: { 200: oneTemplate } });
const deletePromptsId = endpoint({
  tags: ['prompts'],
  responses: { 200: z.looseObject({ message: z.string(), id: z.number().int() }) },
});
const postPromptsIdRender = endpoint({
  tags: ['prompts'],
  body: renderBody,
  responses: {
    200: z.looseObject({
      template_id: z.number().int(),
      rendered: z.string(),
      variables_used: z.array(z.unknown()),
      use_count: z.number().int(),
    }),
  },
});

export function templateView(row: PromptTemplateRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    category: row.category,
    content: row.content,
    variables: parseJsonArray<PromptVariable>(row.variables),
    tags: parseJsonArray<string>(row.tags),
    author_id: row.authorId,
    tenant_id: row.tenantId,
    is_public: row.isPublic,
    is_featured: row.isFeatured,
    use_count: row.useCount,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

const ownership = (row: PromptTemplateRow) => ({
  authorId: row.authorId,
  tenantId: row.tenantId,
  isPublic: row.isPublic,
});

export function promptsRouter(deps: AppDeps): Router {
  const r = Router();
  const auth = authenticate(deps);
  const write = requirePermission('view_messages');
  const repo = () => promptTemplatesRepository(deps.database);
  const viewerOf = (req: Request): PromptViewer => promptViewer(req.auth.user, req.auth.permissions);

  /** The template if the caller may see it; 404 otherwise (existence not disclosed). */
  async function visibleTemplate(req: Request): Promise<{ row: PromptTemplateRow; viewer: PromptViewer }> {
    const { template_id } = parseInput(idParams, req.params);
    const viewer = viewerOf(req);
    const row = await repo().find(template_id);
    if (!row || !canSeeTemplate(viewer, ownership(row))) throw new NotFoundError('Prompt template not found');
    return { row, viewer };
  }

  async function changeableTemplate(req: Request) {
    const found = await visibleTemplate(req);
    if (!canChangeTemplate(found.viewer, ownership(found.row)))
      throw new ForbiddenError('Only the author or an administrator can change this template');
    return found;
  }

  const assertMayFeature = (viewer: PromptViewer, isFeatured: boolean | undefined) => {
    if (isFeatured !== undefined && !canFeature(viewer))
      throw new ForbiddenError('Only administrators can set is_featured');
  };

  r.get('/api/prompts', getPrompts, auth, async (req, res) => {
    const q = getPrompts.query(req);
    const { rows, total } = await repo().list(viewerOf(req), q, q);
    res.json({ templates: rows.map(templateView), total, limit: q.limit, offset: q.offset });
  });

  r.get('/api/prompts/categories', getPromptsCategories, auth, async (req, res) => {
    res.json({ categories: await repo().categories(viewerOf(req)) });
  });

  r.get('/api/prompts/featured', getPromptsFeatured, auth, async (req, res) => {
    const q = getPromptsFeatured.query(req);
    const { rows, total } = await repo().list(viewerOf(req), { featured: true }, q);
    res.json({ templates: rows.map(templateView), total, limit: q.limit, offset: q.offset });
  });

  r.post('/api/prompts', postPrompts, auth, write, async (req, res) => {
    const b = postPrompts.body(req);
    const viewer = viewerOf(req);
    assertMayFeature(viewer, b.is_featured);
    const now = deps.now();
    const row = await repo().create({
      name: b.name,
      description: b.description ?? null,
      category: b.category,
      content: b.content,
      variables: JSON.stringify(b.variables),
      tags: JSON.stringify(b.tags),
      authorId: req.auth.user.id,
      tenantId: req.auth.user.tenantId,
      isPublic: b.is_public,
      isFeatured: b.is_featured ?? false,
      createdAt: now,
      updatedAt: now,
    });
    res.status(201).json({ template: templateView(row) });
  });

  r.get('/api/prompts/:template_id', getPromptsId, auth, async (req, res) => {
    const { row } = await visibleTemplate(req);
    res.json({ template: templateView(row) });
  });

  r.put('/api/prompts/:template_id', putPromptsId, auth, write, async (req, res) => {
    const { row, viewer } = await changeableTemplate(req);
    const b = putPromptsId.body(req);
    assertMayFeature(viewer, b.is_featured);
    const updated = await repo().update(row.id, {
      name: b.name,
      description: b.description,
      category: b.category,
      content: b.content,
      variables: b.variables === undefined ? undefined : JSON.stringify(b.variables),
      tags: b.tags === undefined ? undefined : JSON.stringify(b.tags),
      isPublic: b.is_public,
      isFeatured: b.is_featured,
      updatedAt: deps.now(),
    });
    if (!updated) throw new NotFoundError('Prompt template not found');
    res.json({ template: templateView(updated) });
  });

  r.delete('/api/prompts/:template_id', deletePromptsId, auth, write, async (req, res) => {
    const { row } = await changeableTemplate(req);
    await repo().remove(row.id);
    res.json({ message: 'Prompt template deleted', id: row.id });
  });

  r.post('/api/prompts/:template_id/render', postPromptsIdRender, auth, async (req, res) => {
    const { row } = await visibleTemplate(req);
    const b = postPromptsIdRender.body(req);
    const values = Object.fromEntries(Object.entries(b.variables).map(([k, v]) => [k, String(v)]));
    const { rendered, used } = renderPrompt(
      row.content,
      values,
      parseJsonArray<PromptVariable>(row.variables),
    );
    const useCount = await repo().countUse(row.id);
    res.json({ template_id: row.id, rendered, variables_used: used, use_count: useCount });
  });

  return r;
}
