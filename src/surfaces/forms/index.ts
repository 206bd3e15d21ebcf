import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SURFACE_AUTH_DEFAULTS } from '../../actions/auth-contract.js';
import type { FormUser } from '../../actions/define.js';
import { nonSerializablePath, visibilityRuleProblems } from '../../actions/form.js';
import { success } from '../../http/envelope.js';
import { actionError } from '../../http/errors.js';
import { API_PREFIX } from '../../http/transport.js';
import type { Services } from '../../services.js';
import { admit, findAction, queryOf, requireSetting, wrongMethod } from '../actions/shared.js';

const NOT_GET = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Columns a form builder never sees: password hashes, tokens, second-factor secrets. */
const SECRET_COLUMN = /(_password|_secret|_key|_token|_tokens|_hash|_authhash)$|^usr_totp_/i;
export const FORM_SCHEMA_VERSION = 1;

/** GET /form/{name}: the action's form definition, prefilled for the acting user on sessioned forms. */
async function serveForm(services: Services, request: FastifyRequest, name: string) {
  const { db, clock, settings } = services;
  request.logAction = name;
  const action = findAction(services, name);
  if (!action.form) throw actionError(404, `Action '${name}' has no form`, { action: name });
  requireSetting(services, action);
  const decision = await admit(request, action, SURFACE_AUTH_DEFAULTS.form);
  let user: FormUser | null = null;
  if (decision?.principal.user) {
    const row = await db.selectFrom('usr_users').selectAll().where('usr_user_id', '=', decision.principal.user.usr_user_id).executeTakeFirst();
    if (row) user = Object.fromEntries(Object.entries(row).filter(([k]) => !SECRET_COLUMN.test(k))) as FormUser;
  }
  const built = await action.form({ name, user, query: queryOf(request), db, clock, settings, caches: services.modelCaches });
  const bad = nonSerializablePath(built);
  if (bad) {
    request.log.error({ action: name, at: bad }, 'form builder produced a non-serializable value');
    throw actionError(500, `Form for '${name}' could not be serialized (${bad})`);
  }
  const problems = visibilityRuleProblems(built.fields);
  if (problems.length > 0) {
    request.log.error({ action: name, problems }, 'form builder produced invalid visibility rules');
    throw actionError(500, `Form for '${name}' has invalid visibility rules`);
  }
  return success({
    schema_version: FORM_SCHEMA_VERSION,
    form: { name, submit_to: `${API_PREFIX}/action/${name}`, submit_label: built.submit_label },
    fields: built.fields,
  });
}

export async function formsSurface(api: FastifyInstance, services: Services): Promise<void> {
  const config = { feature: 'form', auth: 'surface' } as const;
  api.get<{ Params: { name: string } }>('/form/:name', { config }, (request) => serveForm(services, request, request.params.name));
  api.get<{ Params: { plugin: string; action: string } }>('/form/:plugin/:action', { config }, (request) =>
    serveForm(services, request, `${request.params.plugin}/${request.params.action}`),
  );
  for (const url of ['/form/:name', '/form/:plugin/:action']) {
    api.route({ method: [...NOT_GET], url, config, handler: wrongMethod('GET') });
  }
}
