import { A2A_PROTOCOL_VERSION, type AgentCard } from '@a2a-js/sdk';
import type { A2aAgentRow } from '../../../core/repositories/a2a-tasks.repository.js';

/** Where an agent's A2A door is, under the server's address: `/api/a2a/{agent_id}`. */
export const a2aPath = (agentId: string): string => `/api/a2a/${agentId}`;

const SCHEME = 'bearer';

/**
 * The agent's card: who it is, its one JSON-RPC interface, streaming, push
 * notifications (webhook deliveries of the task's push configs), and how to authenticate: a bearer token (an
 * API token in users mode, else ADMIN_TOKEN), or nothing when the server runs open without one.
 */
export function agentCard(agent: A2aAgentRow, baseUrl: string, tokenRequired: boolean): AgentCard {
  const description = agent.description ?? `The agent ${agent.name}`;
  return {
    name: agent.name,
    description,
    supportedInterfaces: [
      {
        url: `${baseUrl}${a2aPath(agent.id)}`,
        protocolBinding: 'JSONRPC',
        tenant: '',
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: undefined,
    version: String(agent.version),
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: tokenRequired
      ? {
          [SCHEME]: {
            scheme: {
              $case: 'httpAuthSecurityScheme',
              value: {
                description: 'An API token of this server (or, open mode, its ADMIN_TOKEN)',
                scheme: 'Bearer',
                bearerFormat: '',
              },
            },
          },
        }
      : {},
    securityRequirements: tokenRequired ? [{ schemes: { [SCHEME]: { list: [] } } }] : [],
    defaultInputModes: ['text/plain', 'application/json', 'image/*'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: agent.name,
        name: agent.name,
        description,
        tags: ['conversation'],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
