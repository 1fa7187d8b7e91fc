import { validateTemplate } from '../../core/prompts/prompt-template.js';
import type {
  AgentsRepository,
  LabelledTemplate,
  ModelServing,
  ProjectKey,
} from '../../core/repositories/agents.repository.js';
import { grantsModel, keyExpired } from '../../core/security/virtual-keys.js';
import type { PromptLabel, SandboxSettings, SummarizerType } from '../schemas/agents.schemas.js';

/** A configuration that is valid but will not work as asked: the field it is about, and why. */
export interface AgentWarning {
  field: string;
  message: string;
}

/** What the warnings look at: an agent, saved or a draft (its ids may be missing). */
export interface WarningSubject {
  model_id?: string | null;
  prompt_id?: string | null;
  prompt_label?: PromptLabel | null;
  summarizer_type?: SummarizerType | null;
  llm_summarizer_model_id?: string | null;
  llm_summarizer_prompt_id?: string | null;
  llm_summarizer_prompt_label?: PromptLabel | null;
  sandbox?: Pick<SandboxSettings, 'enabled'> | null;
  /** The agent's own template variables: those it gives are not warned about. */
  context?: Record<string, unknown> | null;
}

/** What the project holds that the warnings check an agent against. */
interface Facts {
  key: ProjectKey | null;
  models: Map<string, ModelServing>;
  templates: LabelledTemplate[];
}

const NO_SANDBOX =
  'sandbox.enabled is true but this server has no sandbox backend (SANDBOX_ENABLED is unset): execute_bash_commands will not be offered and skills will not be readable';

const braces = (names: string[]) => names.map((n) => `{{${n}}}`).join(', ');

/**
 * What an agent asks for that its turns will not get, told while it is being
 * configured rather than by its first turn: the sandbox on a server without
 * one; a model no provider can serve, or that the project's virtual key does
 * not grant (turns are metered on that key and refused); template variables
 * that nothing gives a value (they come from each conversation's context, and
 * render empty without it). Every warning names its field.
 */
export class AgentWarnings {
  constructor(
    private readonly repo: AgentsRepository,
    private readonly sandboxAvailable: boolean,
  ) {}

  /** Each agent's warnings, in order; the agents are of one project. */
  async of(projectId: string, agents: WarningSubject[]): Promise<AgentWarning[][]> {
    if (agents.length === 0) return [];
    const facts = await this.facts(projectId, agents);
    return agents.map((a) => this.warn(a, facts));
  }

  private async facts(projectId: string, agents: WarningSubject[]): Promise<Facts> {
    const modelIds = new Set<string>();
    const labelled: Array<{ promptId: string; label: string }> = [];
    for (const a of agents) {
      if (a.model_id) modelIds.add(a.model_id);
      if (a.prompt_id) labelled.push({ promptId: a.prompt_id, label: a.prompt_label ?? 'latest' });
      if (a.summarizer_type !== 'llm') continue;
      if (a.llm_summarizer_model_id) modelIds.add(a.llm_summarizer_model_id);
      if (a.llm_summarizer_prompt_id)
        labelled.push({
          promptId: a.llm_summarizer_prompt_id,
          label: a.llm_summarizer_prompt_label ?? 'latest',
        });
    }
    const [key, models, templates] = await Promise.all([
      this.repo.projectKey(projectId),
      this.repo.modelsServing(projectId, [...modelIds]),
      this.repo.templatesByLabel(projectId, labelled),
    ]);
    return { key, models: new Map(models.map((m) => [m.id, m])), templates };
  }

  private warn(a: WarningSubject, facts: Facts): AgentWarning[] {
    const warnings: AgentWarning[] = [];
    if (a.sandbox?.enabled && !this.sandboxAvailable)
      warnings.push({ field: 'sandbox.enabled', message: NO_SANDBOX });
    const llm = a.summarizer_type === 'llm';
    warnings.push(...this.modelWarnings('model_id', a.model_id, facts));
    if (llm && a.llm_summarizer_model_id && a.llm_summarizer_model_id !== a.model_id)
      warnings.push(...this.modelWarnings('llm_summarizer_model_id', a.llm_summarizer_model_id, facts));
    const given = new Set(Object.keys(a.context ?? {}));
    warnings.push(...variableWarnings('prompt_id', a.prompt_id, a.prompt_label, facts, given));
    if (llm)
      warnings.push(
        ...variableWarnings(
          'llm_summarizer_prompt_id',
          a.llm_summarizer_prompt_id,
          a.llm_summarizer_prompt_label,
          facts,
          given,
        ),
      );
    return warnings;
  }

  /** A model no provider can serve, or that the project's virtual key does not let its turns call. */
  private modelWarnings(field: string, id: string | null | undefined, facts: Facts): AgentWarning[] {
    const model = id ? facts.models.get(id) : undefined;
    if (!model) return []; // missing or not of the project: saving says so
    const say = (message: string) => [{ field, message: `${field}: ${message}` }];
    if (!model.serving) {
      const count = model.of_type === 0 ? 'no' : String(model.of_type);
      return say(
        `model "${model.name}" names no provider and ${count} ${model.provider_type} providers exist: ` +
          'its turns cannot call it until it names one',
      );
    }
    const key = facts.key;
    if (!key) return [];
    const named = `the project's virtual key "${key.name}"`;
    if (key.deleted_at)
      return say(`${named} is deleted: every turn is refused until the project names another`);
    if (keyExpired(key))
      return say(`${named} has expired: every turn is refused until the project names another`);
    const grant = key.grants.find((g) => g.provider_id === model.serving!.id);
    if (grant && grantsModel(grant.model_names, model.model_id)) return [];
    return say(
      `${named} does not grant ${model.serving.name}/${model.model_id} (model "${model.name}"): ` +
        'its turns are refused (model_not_granted)',
    );
  }
}

/** Template variables that the agent's context does not give a value: each conversation's context must. */
function variableWarnings(
  field: string,
  promptId: string | null | undefined,
  label: PromptLabel | null | undefined,
  facts: Facts,
  given: Set<string>,
): AgentWarning[] {
  const wanted = label ?? 'latest';
  const version = facts.templates.find((t) => t.prompt_id === promptId && t.label === wanted);
  if (!version) return [];
  let names: string[];
  try {
    names = validateTemplate(version.template).filter((n) => !given.has(n));
  } catch {
    return []; // written around the API; the turn reports it
  }
  if (names.length === 0) return [];
  const them = names.length === 1 ? 'it' : 'them';
  return [
    {
      field,
      message:
        `${field}: the prompt's ${wanted} version (v${version.version}) uses ${braces(names)}: only a ` +
        `conversation's context gives ${them} a value, and a turn without ${them} renders ${them} empty`,
    },
  ];
}
