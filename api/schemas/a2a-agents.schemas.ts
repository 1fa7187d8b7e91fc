import Joi from 'joi';
import type { McpOAuthConfig } from '../../core/mcp/oauth/index.js';
import { authorizationView, headers, oauthSettings, perUserTokens } from './mcp-servers.schemas.js';
import {
  idParams,
  name,
  optionalProjectQuery,
  pagination,
  projectQuery,
  timestamp,
  uuid,
} from './common.schemas.js';

const cardUrl = Joi.string()
  .uri({ scheme: ['http', 'https'] })
  .max(2_048)
  .description('where the agent card is served, e.g. https://agent.example/.well-known/agent-card.json');

export const a2aAgentCreate = {
  query: Joi.object(projectQuery),
  body: Joi.object({
    name: name.required(),
    card_url: cardUrl.required(),
    headers: headers
      .default({})
      .description('sent with every request to the agent, the card included (e.g. Authorization)'),
    oauth: oauthSettings
      .allow(null)
      .description(
        "OAuth 2 with the authorization server the agent card's oauth2 scheme names (docs/a2a-agents.md); " +
          'an empty object uses the defaults (authorization_code, the scopes the card lists)',
      ),
    per_user_tokens: perUserTokens.default(false),
  }).required(),
};
export const a2aAgentList = { query: Joi.object({ ...projectQuery, ...pagination }) };
export const a2aAgentGet = { params: idParams, query: Joi.object(optionalProjectQuery) };
export const a2aAgentUpdate = {
  params: idParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object({
    name,
    card_url: cardUrl,
    headers,
    oauth: oauthSettings.allow(null),
    per_user_tokens: perUserTokens,
  })
    .min(1)
    .required(),
};
export const a2aAgentDelete = a2aAgentGet;
export const a2aAgentInspect = a2aAgentGet;

export interface A2aAgentCreateBody {
  name: string;
  card_url: string;
  headers: Record<string, string>;
  oauth?: McpOAuthConfig | null;
  per_user_tokens: boolean;
}
export type A2aAgentUpdateBody = Partial<A2aAgentCreateBody>;

export const a2aAgentResponse = Joi.object({
  id: uuid,
  project_id: uuid,
  name: Joi.string(),
  card_url: Joi.string(),
  headers: Joi.object()
    .pattern(Joi.string(), Joi.string())
    .description('sensitive values come back as "[redacted]", as for MCP servers'),
  oauth: oauthSettings
    .allow(null)
    .description('the OAuth settings; client_secret comes back as "[redacted]"'),
  per_user_tokens: Joi.boolean(),
  authorization: authorizationView,
  created_at: timestamp,
  updated_at: timestamp,
});
export const a2aAgentListResponse = Joi.array().items(a2aAgentResponse);

const skill = Joi.object({
  id: Joi.string(),
  name: Joi.string(),
  description: Joi.string(),
  examples: Joi.array().items(Joi.string()),
  tool: Joi.string().description('the tool name an agent listing this remote agent is offered'),
});
export const a2aInspectResponse = Joi.object({
  name: Joi.string().description("the card's name"),
  description: Joi.string(),
  version: Joi.string(),
  streaming: Joi.boolean().description('the remote streams its tasks (SendStreamingMessage)'),
  skills: Joi.array()
    .items(skill)
    .description('a card without skills is offered as one tool, `<name>__delegate`'),
});

export const a2aAgentAuthorize = {
  params: idParams,
  query: Joi.object(optionalProjectQuery),
  body: Joi.object({
    end_user_id: Joi.string().min(1).max(256).description('only for an agent with per_user_tokens'),
  }).default({}),
};
export const a2aAgentDeauthorize = {
  params: idParams,
  query: Joi.object({ ...optionalProjectQuery, end_user_id: Joi.string().min(1).max(256) }),
};
