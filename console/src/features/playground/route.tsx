import { Anchor, Stack, Text, Title } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { useProject } from '../../app/project.js';
import { Empty } from '../../components/empty.js';
import { ErrorAlert } from '../../components/error-alert.js';
import { Loading } from '../../components/loading.js';
import { Composer } from './composer.js';
import { PlaygroundHeader } from './header.js';
import { HISTORY_TURNS, useConversationContext, useHistory } from './history.js';
import { isTrying, usePlaygroundParams, useProjectSync, type TryChanges } from './params.js';
import { useAgents } from '../config/agents/queries.js';
import { useModels } from '../config/models/queries.js';
import { usePrompts } from '../prompts/queries.js';
import { newId, useAgent, usePromptVersions, useSchema, useSend } from './queries.js';
import type { LinkedVersion } from './prompt-notice.js';
import { useRunEvents } from './run-events.js';
import { SendingTurn, Turn, type TurnContext } from './turn.js';
import { TryChangesPanel } from './try-changes.js';
import type { ConverseBody } from '../../api/types.js';
import { useCan } from '../../app/auth.js';

/** The panel's changes as converse `overrides` (left out when nothing is tried). */
function overridesOf(t: TryChanges): Pick<ConverseBody, 'overrides'> {
  if (!isTrying(t)) return {};
  return {
    overrides: {
      ...(t.promptVersionId ? { prompt_version_id: t.promptVersionId } : {}),
      ...(t.modelId ? { model_id: t.modelId } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
    },
  };
}

interface LocalTurn {
  key: string;
  conversationId: string;
  text: string;
  runId?: string;
}

/**
 * The playground: choose an agent, talk to it over the converse stream, see
 * its tool calls, approve the ones that wait, and what each turn cost.
 */
export function Component() {
  const { project, loading } = useProject();
  const p = usePlaygroundParams();
  const agentQ = useAgent(p.agentId);
  // A link names an agent (and maybe its project): that project is the one to ask,
  // not whichever the picker showed first (another project's queries would answer 404).
  const awaitingAgent = !p.projectParam && Boolean(p.agentId) && agentQ.isPending;
  const projectId = p.projectParam ?? agentQ.data?.project_id ?? (awaitingAgent ? undefined : project?.id);
  const agents = useAgents(projectId);
  const [local, setLocal] = useState<LocalTurn[]>([]);
  // A conversation id made here exists on the server only once its first run does: not asked for before.
  const [fresh, setFresh] = useState<string | undefined>(undefined);
  const stored = p.conversationId === fresh ? undefined : p.conversationId;
  const history = useHistory(stored, projectId);
  const kept = useConversationContext(stored, projectId);
  useProjectSync(p.projectParam, agentQ.data, () =>
    p.update({ agentId: undefined, conversationId: undefined }),
  );

  // A link to a conversation alone: talk on with the agent of its last turn.
  const lastAgent = history.data?.at(-1)?.agentId;
  const { agentId, update } = p;
  useEffect(() => {
    if (!agentId && lastAgent) update({ agentId: lastAgent });
  }, [agentId, lastAgent, update]);

  const agent = agentQ.data;
  const prompts = usePrompts(projectId);
  const agentPrompt = prompts.data?.find((x) => x.id === agent?.prompt_id);
  const versions = usePromptVersions(projectId, agentPrompt?.name).data ?? [];
  const linkedName = p.promptName ?? (p.promptVersionId ? agentPrompt?.name : undefined);
  const linkedVersions = usePromptVersions(projectId, linkedName).data ?? [];
  const linked: LinkedVersion | undefined = linkedName
    ? {
        promptName: linkedName,
        version: linkedVersions.find((v) =>
          p.promptVersionId ? v.id === p.promptVersionId : v.version === p.promptVersion,
        ),
      }
    : undefined;
  // Versions a turn may name: the agent's prompt's, and the linked prompt's (it can be tried too).
  const knownVersions = [...versions, ...linkedVersions.filter((v) => !versions.some((x) => x.id === v.id))];
  const schema = useSchema(agent?.schema_id);
  const models = useModels(projectId);
  const send = useSend(projectId);
  const operates = useCan()('operate', projectId);

  const known = new Set((history.data ?? []).map((t) => t.runId));
  const turns: Array<{ key: string; runId?: string; text: string }> = [
    ...(history.data ?? []).map((t) => ({ key: t.runId, runId: t.runId, text: t.userText })),
    ...local.filter((t) => t.conversationId === p.conversationId && !(t.runId && known.has(t.runId))),
  ];
  const lastRunId = turns.at(-1)?.runId;
  const last = useRunEvents(lastRunId, projectId);
  const lastLive = turns.length > 0 && (!lastRunId || !last.data?.ended) && !last.error;
  const lastPaused = last.data?.events.at(-1)?.type === 'run.paused';

  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Not returned: Chromium's scrollIntoView now answers with a promise, which is no cleanup.
    void end.current?.scrollIntoView({ block: 'end' });
  }, [turns.length]);

  if (loading || awaitingAgent) return <Loading what="Loading projects" />;
  if (!projectId)
    return (
      <Empty
        title="No project yet"
        action={
          <Anchor component={Link} to="/config">
            Configuration
          </Anchor>
        }
      >
        Create a project, a model, a prompt and an agent first.
      </Empty>
    );

  const onSend = async (text: string, context: Record<string, string>) => {
    if (!agent?.id) return;
    let conversationId = p.conversationId;
    if (!conversationId) {
      conversationId = newId('playground');
      setFresh(conversationId);
      p.update({ conversationId }, { push: true });
    }
    const key = newId('msg');
    setLocal((l) => [...l, { key, conversationId, text }]);
    try {
      const { runId } = await send.mutateAsync({
        agent_id: agent.id,
        conversation_id: conversationId,
        message: text,
        message_id: key,
        ...(Object.keys(context).length ? { context } : {}),
        ...overridesOf(p.tryChanges),
      });
      setLocal((l) => l.map((t) => (t.key === key ? { ...t, runId } : t)));
      setFresh(undefined);
    } catch (err) {
      setLocal((l) => l.filter((t) => t.key !== key));
      throw err;
    }
  };

  const ctx: TurnContext = {
    projectId,
    versions: knownVersions,
    models: models.data ?? [],
    schemaName: schema.data?.name,
  };
  // The version the next turn renders: the one being tried, else the one the agent's label points at.
  const currentVersion =
    knownVersions.find((v) => v.id === p.tryChanges.promptVersionId) ??
    versions.find((v) => v.labels?.includes(agent?.prompt_label ?? 'latest'));
  const noAgents = agents.data?.length === 0 && !p.agentId;

  return (
    <Stack gap="md" maw={1000}>
      <Title order={3}>Playground</Title>
      <PlaygroundHeader
        agents={agents.data ?? []}
        agent={agent}
        conversationId={p.conversationId}
        prompt={agentPrompt}
        versions={versions}
        schemaName={schema.data?.name}
        linked={linked}
        linkedPromptId={prompts.data?.find((x) => x.name === linkedName)?.id}
        triedVersionId={p.tryChanges.promptVersionId}
        onTry={(promptVersionId) => p.update({ tryChanges: (t) => ({ ...t, promptVersionId }) })}
        // Another agent has other prompt versions: what was being tried does not carry over.
        onAgent={(id) => p.update({ agentId: id, conversationId: undefined, tryChanges: {} }, { push: true })}
        onNew={() => p.update({ conversationId: undefined }, { push: true })}
      />
      {agent && (
        <TryChangesPanel
          agent={agent}
          versions={knownVersions}
          models={models.data ?? []}
          value={p.tryChanges}
          onChange={(change) => p.update({ tryChanges: change })}
        />
      )}
      <ErrorAlert error={agents.error ?? history.error} />
      <ErrorAlert
        error={agentQ.error}
        missing={{ what: 'agent', idField: 'id', back: { to: '/playground', label: 'Choose an agent' } }}
      />
      {noAgents && (
        <Empty
          title="No agents in this project yet"
          action={
            <Anchor component={Link} to="/config/agents">
              Create an agent
            </Anchor>
          }
        >
          An agent joins a model and a prompt (and optionally tools); create one, then talk to it here.
        </Empty>
      )}
      {!noAgents && !p.agentId && !p.conversationId && (
        <Empty title="Choose an agent">Pick the agent to talk to above, then send it a message.</Empty>
      )}
      {history.isLoading && <Loading what="Loading the conversation" />}
      {history.data?.length === HISTORY_TURNS && (
        <Text size="xs" c="dimmed">
          Showing the last {HISTORY_TURNS} turns; Sessions has them all.
        </Text>
      )}
      {agent && turns.length === 0 && !history.isLoading && (
        <Empty title={`No messages yet`}>
          Send {agent.name} a message below; its answer streams in here.
        </Empty>
      )}
      <Stack gap="lg" aria-label="Transcript" role="log">
        {turns.map((t, i) =>
          t.runId ? (
            <Turn key={t.runId} index={i + 1} runId={t.runId} userText={t.text} ctx={ctx} />
          ) : (
            <SendingTurn key={t.key} index={i + 1} text={t.text} />
          ),
        )}
      </Stack>
      <Composer
        variables={currentVersion?.variables ?? []}
        kept={kept.data ?? {}}
        busy={send.isPending}
        blockedBy={
          !operates
            ? 'Your role in this project reads only: talking to an agent needs the operator role'
            : !agent
              ? 'Choose an agent first'
              : lastPaused
                ? 'Approve or decline the waiting tool call first'
                : lastLive
                  ? 'Waiting for the current turn to end'
                  : undefined
        }
        error={send.error}
        onSend={onSend}
      />
      <div ref={end} />
    </Stack>
  );
}
