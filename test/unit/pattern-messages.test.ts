import type Joi from 'joi';
import { describe, expect, it } from 'vitest';
import { agentCreate } from '../../api/schemas/agents.schemas.js';
import { providerCreate } from '../../api/schemas/providers.schemas.js';

/** The messages the API answers with: as validate.ts runs joi (every problem, labels unwrapped). */
function messages(schema: Joi.Schema, value: unknown): string[] {
  const { error } = schema.validate(value, { abortEarly: false, errors: { wrap: { label: false } } });
  return error?.details.map((d) => d.message) ?? [];
}

const UUID = '00000000-0000-4000-8000-000000000000';

describe('a value refused by a pattern is told what the pattern allows, in plain words', () => {
  it('a provider name', () => {
    const said = messages(providerCreate.body, { name: 'My Provider', provider_type: 'openai' });
    expect(said).toEqual([
      'name must be 1 to 63 characters of lowercase letters, digits, "_" and "-", starting with a letter or digit',
    ]);
  });

  it("an agent's tool names and sandbox image", () => {
    const said = messages(agentCreate.body, {
      name: 'a',
      model_id: UUID,
      prompt_id: UUID,
      mcp_servers: [{ mcp_server_id: UUID, tool_filters: ['has space'] }],
      sandbox: { enabled: true, docker_image: 'Not An Image' },
    });
    expect(said).toEqual([
      'mcp_servers[0].tool_filters[0] must be 1 to 128 characters of letters, digits and . _ - / : (a tool name)',
      'sandbox.docker_image must be an image reference: lowercase [registry[:port]/]name[:tag][@sha256:digest], e.g. ghcr.io/acme/tools:1.2',
    ]);
  });

  it('never says "pattern" nor quotes the value', () => {
    const said = [
      ...messages(providerCreate.body, { name: 'sk-secret value', provider_type: 'openai' }),
      ...messages(agentCreate.body, {
        name: 'a',
        model_id: UUID,
        prompt_id: UUID,
        sandbox: { enabled: true, docker_image: 'sk-secret value' },
      }),
    ].join('\n');
    expect(said).not.toMatch(/pattern|sk-secret/);
  });
});
