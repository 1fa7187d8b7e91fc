import type { Db } from '../../core/db/knex.js';
import { NotFoundError } from '../../core/errors.js';

/**
 * Where the project of a request's resource is found: the row of `table`
 * whose `column` equals the path parameter `param`, and its `projectColumn`.
 * A router declares one for its `:id` (api-router's `access`); path
 * parameters that name the same kind of thing everywhere are known here.
 */
export interface ProjectLocator {
  table: string;
  /** Path parameter holding the key (default `id`). */
  param?: string;
  /** Column matched against it (default `id`). */
  column?: string;
  /** Column holding the project id (default `project_id`). */
  projectColumn?: string;
  /** A table joined to reach the project (a thread's conversation): `[table, column of ours, its column]`. */
  join?: [string, string, string];
}

const BY_PARAM: Record<string, ProjectLocator> = {
  conversation_id: { table: 'conversations', param: 'conversation_id' },
  run_id: { table: 'runs', param: 'run_id' },
  agent_id: { table: 'agents', param: 'agent_id' },
  trace_id: { table: 'spans', param: 'trace_id', column: 'trace_id' },
};

interface Input {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

/**
 * The project a request is about, for the permission check: the path's
 * `project_id`; else the project of the resource its path names (404 when
 * there is none: the handler would say the same); else `project_id` in the
 * query or body; undefined when it names none (a list across projects).
 */
export async function projectOf(
  db: Db,
  locator: ProjectLocator | undefined,
  input: Input,
): Promise<string | undefined> {
  const params = input.params ?? {};
  if (typeof params.project_id === 'string') return params.project_id;
  for (const l of [locator, ...Object.keys(params).map((k) => BY_PARAM[k])]) {
    if (!l) continue;
    const key = params[l.param ?? 'id'];
    if (typeof key !== 'string') continue;
    const located = await locate(db, l, key);
    if (located) return located;
    break;
  }
  const fromQuery = input.query?.project_id;
  if (typeof fromQuery === 'string') return fromQuery;
  const fromBody = (input.body as { project_id?: unknown } | undefined)?.project_id;
  return typeof fromBody === 'string' ? fromBody : undefined;
}

async function locate(db: Db, l: ProjectLocator, key: string): Promise<string | undefined> {
  // Runs after validation: the key has the column's type (a uuid where the column is one).
  const column = l.column ?? 'id';
  const query = db(l.table);
  if (l.join) query.join(l.join[0], l.join[1], l.join[2]);
  const rows = await query
    .where(column, key)
    .whereNotNull(l.projectColumn ?? 'project_id')
    .distinct(l.projectColumn ?? 'project_id')
    .limit(2)
    .pluck<string[]>(l.projectColumn ?? 'project_id');
  if (rows.length === 0) throw new NotFoundError();
  // The same name in two projects (a prompt without ?project_id=): no single project; org roles decide.
  return rows.length === 1 ? rows[0] : undefined;
}
