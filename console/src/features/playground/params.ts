/**
 * The playground's state in its URL, so reload, back and links work:
 * `?agent=<id>&conversation=<id>` (and, from other pages, `project=<id>`, and
 * "open this version in the playground": `prompt=<name>&version=<n>` or
 * `prompt_version=<version id>`), and the changes being tried in this
 * conversation (`try_prompt_version`, `try_model`, `try_params` as JSON).
 * The last conversation of this tab is remembered, so the navigation link
 * comes back to it.
 */
import { useCallback, useEffect, useEffectEvent, useRef } from 'react';
import { useSearchParams } from 'react-router';
import { useProject } from '../../app/project.js';
import type { Agent } from '../../api/types.js';

const KEY = 'agent-server.playground';

export interface PlaygroundParams {
  agentId: string | undefined;
  conversationId: string | undefined;
  /** The prompt version a link asked for: by id, or by prompt name and version number. */
  promptVersionId: string | undefined;
  promptName: string | undefined;
  promptVersion: number | undefined;
  /** What the next turns run with instead of the agent's configuration (converse `overrides`). */
  tryChanges: TryChanges;
}

/** Converse `overrides`, as the "Try changes" panel keeps them. */
export interface TryChanges {
  promptVersionId?: string;
  modelId?: string;
  parameters?: Record<string, unknown>;
}

const TRY_KEYS = ['try_prompt_version', 'try_model', 'try_params'] as const;

function readTryChanges(params: URLSearchParams): TryChanges {
  const out: TryChanges = {};
  const version = params.get('try_prompt_version');
  const model = params.get('try_model');
  if (version) out.promptVersionId = version;
  if (model) out.modelId = model;
  try {
    const parsed: unknown = JSON.parse(params.get('try_params') ?? 'null');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.keys(parsed).length)
      out.parameters = parsed as Record<string, unknown>;
  } catch {
    // A hand-edited address: no parameters.
  }
  return out;
}

function writeTryChanges(p: URLSearchParams, t: TryChanges): void {
  for (const k of TRY_KEYS) p.delete(k);
  if (t.promptVersionId) p.set('try_prompt_version', t.promptVersionId);
  if (t.modelId) p.set('try_model', t.modelId);
  if (t.parameters && Object.keys(t.parameters).length) p.set('try_params', JSON.stringify(t.parameters));
}

/** What `update` changes; the tried changes may be given as a function of the current ones. */
export type ParamsUpdate = Partial<Omit<PlaygroundParams, 'tryChanges'>> & {
  tryChanges?: TryChanges | ((current: TryChanges) => TryChanges);
};

/** Whether anything is being tried. */
export const isTrying = (t: TryChanges) => Boolean(t.promptVersionId || t.modelId || t.parameters);

export function usePlaygroundParams() {
  const [params, setParams] = useSearchParams();
  const value: PlaygroundParams = {
    agentId: params.get('agent') ?? undefined,
    conversationId: params.get('conversation') ?? undefined,
    promptVersionId: params.get('prompt_version') ?? undefined,
    promptName: params.get('prompt') ?? undefined,
    promptVersion: Number(params.get('version')) || undefined,
    tryChanges: readTryChanges(params),
  };

  // Nothing asked for: back to this tab's last conversation. Only on arrival: an effect event reads
  // the address as it is then, and later changes of it do not run the effect again.
  const restoreLast = useEffectEvent(() => {
    if ([...params.keys()].length) return;
    const last = sessionStorage.getItem(KEY);
    if (last) setParams(new URLSearchParams(last), { replace: true });
  });
  useEffect(() => restoreLast(), []);

  const search = params.toString();
  // The address the last update asked for, until a render shows it: updates made before then build on
  // it (the search params a render holds would lose the earlier ones: quick edits in a row, or two
  // updates in one handler).
  const pending = useRef<string | undefined>(undefined);
  useEffect(() => {
    pending.current = undefined;
  }, [search]);
  useEffect(() => {
    const current = new URLSearchParams(search);
    const keep = new URLSearchParams();
    for (const k of ['agent', 'conversation', ...TRY_KEYS]) {
      const v = current.get(k);
      if (v) keep.set(k, v);
    }
    if (keep.size) sessionStorage.setItem(KEY, keep.toString());
  }, [search]);

  const update = useCallback(
    (next: ParamsUpdate, opts: { push?: boolean } = {}) =>
      setParams(
        (prev) => {
          const p = new URLSearchParams(pending.current ?? prev);
          p.delete('project');
          const set = (k: string, v: string | undefined) => (v ? p.set(k, v) : p.delete(k));
          if ('agentId' in next) set('agent', next.agentId);
          if ('conversationId' in next) set('conversation', next.conversationId);
          if ('promptVersionId' in next) set('prompt_version', next.promptVersionId);
          if ('promptName' in next) set('prompt', next.promptName);
          if ('promptVersion' in next)
            set('version', next.promptVersion ? String(next.promptVersion) : undefined);
          const tried = next.tryChanges;
          if (tried) writeTryChanges(p, typeof tried === 'function' ? tried(readTryChanges(p)) : tried);
          pending.current = p.toString();
          return p;
        },
        { replace: !opts.push },
      ),
    [setParams],
  );

  return { ...value, projectParam: params.get('project') ?? undefined, update };
}

/**
 * Keeps the project and the agent together: a link's `project` (or the
 * linked agent's own project) is adopted once; a project picked afterwards
 * starts over (its agents are others).
 */
export function useProjectSync(
  projectParam: string | undefined,
  agent: Agent | undefined,
  reset: () => void,
): void {
  const { project, setProjectId } = useProject();
  const adopted = useRef<string | undefined>(undefined);
  const seen = useRef<string | undefined>(undefined);
  const arrived = useRef(false);
  const wanted = projectParam ?? agent?.project_id;

  useEffect(() => {
    if (adopted.current !== undefined || !project || !wanted) return;
    adopted.current = wanted;
    if (wanted !== project.id) setProjectId(wanted);
  }, [wanted, project, setProjectId]);

  // Runs when the project changes, with the latest `reset` (which changes on every render).
  const onProjectChange = useEffectEvent((id: string) => {
    const prev = seen.current;
    seen.current = id;
    if (!prev || prev === id) return;
    // The adopted project arriving is not a choice of the user's; any later change is.
    if (id === adopted.current && !arrived.current) arrived.current = true;
    else reset();
  });
  const projectId = project?.id;
  useEffect(() => {
    if (projectId) onProjectChange(projectId);
  }, [projectId]);
}
