/**
 * A remote agent's skills as the tools an agent's model is offered:
 * `<remote name>__<skill id>` (characters vendors refuse become `_`, at most
 * 64), or one `<remote name>__delegate` when the card lists no skill. The
 * same card gives the same names on every turn and worker.
 */
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';

/** The skill id of the one tool a card without skills is offered as. */
export const DELEGATE = 'delegate';
const MAX = 64;

/** A skill as the API and the tool listing show it. */
export interface A2aSkillInfo {
  id: string;
  name: string;
  description: string;
  examples: string[];
}

const clean = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_');

/** The tool name for a skill of the remote agent registered as `agentName`. */
export function a2aToolName(agentName: string, skillId: string): string {
  const skill = clean(skillId).slice(0, 40) || 'skill';
  const prefix = clean(agentName).slice(0, MAX - skill.length - 2) || 'a2a';
  return `${prefix}__${skill}`;
}

const skillInfo = (s: AgentSkill): A2aSkillInfo => ({
  id: s.id,
  name: s.name,
  description: s.description,
  examples: s.examples ?? [],
});

/** The card's skills, or the one delegate skill made from the card itself. */
export function cardSkills(card: AgentCard): A2aSkillInfo[] {
  if (card.skills?.length) return card.skills.map(skillInfo);
  return [{ id: DELEGATE, name: card.name, description: card.description, examples: [] }];
}
