import type { TestApi } from '../../helpers/api.js';
import { anthropicClient, geminiClient, openaiClient, type Format } from './gateway-harness.js';

export interface Call {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** What every surface test does, through that surface's official SDK. */
export interface Driver {
  text(model: string): Promise<string>;
  tools(model: string): Promise<Call[]>;
  /** Sends the calls back with one result each and returns the answer text. */
  followUp(model: string, calls: Call[]): Promise<string>;
  /** Streams; returns the text deltas as received and the tool calls assembled. */
  stream(model: string, withTools?: boolean): Promise<{ deltas: string[]; calls: Call[] }>;
}

const QUESTION = 'What is the weather in Paris and Rome?';
const weatherSchema = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};
const result = (c: Call) => JSON.stringify({ city: c.args.city, celsius: 21 });

function openaiDriver(api: TestApi, secret: string): Driver {
  const client = openaiClient(api, secret);
  const tools = [
    {
      type: 'function' as const,
      function: { name: 'weather', description: 'Weather', parameters: weatherSchema },
    },
  ];
  return {
    async text(model) {
      const res = await client.chat.completions.create({
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello' },
        ],
        max_tokens: 50,
      });
      return res.choices[0]!.message.content ?? '';
    },
    async tools(model) {
      const res = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: QUESTION }],
        tools,
        tool_choice: 'auto',
      });
      return (res.choices[0]!.message.tool_calls ?? []).map((c) => {
        if (c.type !== 'function') throw new Error('not a function call');
        return {
          id: c.id,
          name: c.function.name,
          args: JSON.parse(c.function.arguments) as Record<string, unknown>,
        };
      });
    },
    async followUp(model, calls) {
      const res = await client.chat.completions.create({
        model,
        tools,
        messages: [
          { role: 'user', content: QUESTION },
          {
            role: 'assistant',
            content: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
          },
          ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: result(c) })),
        ],
      });
      return res.choices[0]!.message.content ?? '';
    },
    async stream(model, withTools = false) {
      const stream = await client.chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: QUESTION }],
        ...(withTools ? { tools } : {}),
      });
      const deltas: string[] = [];
      const calls = new Map<number, { id: string; name: string; args: string }>();
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta;
        if (delta?.content) deltas.push(delta.content);
        for (const t of delta?.tool_calls ?? []) {
          const c = calls.get(t.index) ?? { id: '', name: '', args: '' };
          c.id ||= t.id ?? '';
          c.name ||= t.function?.name ?? '';
          c.args += t.function?.arguments ?? '';
          calls.set(t.index, c);
        }
      }
      return {
        deltas,
        calls: [...calls.values()].map((c) => ({
          id: c.id,
          name: c.name,
          args: JSON.parse(c.args || '{}') as Record<string, unknown>,
        })),
      };
    },
  };
}

function anthropicDriver(api: TestApi, secret: string): Driver {
  const client = anthropicClient(api, secret);
  const tools = [{ name: 'weather', description: 'Weather', input_schema: weatherSchema }];
  const textOf = (content: Array<{ type: string; text?: string }>) =>
    content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  return {
    async text(model) {
      const res = await client.messages.create({
        model,
        max_tokens: 50,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      return textOf(res.content);
    },
    async tools(model) {
      const res = await client.messages.create({
        model,
        max_tokens: 200,
        tools,
        messages: [{ role: 'user', content: QUESTION }],
      });
      return res.content.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: b.id, name: b.name, args: b.input as Record<string, unknown> }] : [],
      );
    },
    async followUp(model, calls) {
      const res = await client.messages.create({
        model,
        max_tokens: 200,
        tools,
        messages: [
          { role: 'user', content: QUESTION },
          {
            role: 'assistant',
            content: calls.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.args })),
          },
          {
            role: 'user',
            content: calls.map((c) => ({
              type: 'tool_result' as const,
              tool_use_id: c.id,
              content: result(c),
            })),
          },
        ],
      });
      return textOf(res.content);
    },
    async stream(model, withTools = false) {
      const stream = client.messages.stream({
        model,
        max_tokens: 200,
        messages: [{ role: 'user', content: QUESTION }],
        ...(withTools ? { tools } : {}),
      });
      const deltas: string[] = [];
      stream.on('text', (t) => deltas.push(t));
      const final = await stream.finalMessage();
      const calls = final.content.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: b.id, name: b.name, args: b.input as Record<string, unknown> }] : [],
      );
      return { deltas, calls };
    },
  };
}

function geminiDriver(api: TestApi, secret: string): Driver {
  const ai = geminiClient(api, secret);
  const config = {
    tools: [
      {
        functionDeclarations: [
          { name: 'weather', description: 'Weather', parametersJsonSchema: weatherSchema },
        ],
      },
    ],
  };
  return {
    async text(model) {
      const res = await ai.models.generateContent({
        model,
        contents: 'Say hello',
        config: { systemInstruction: 'Be brief.', maxOutputTokens: 50 },
      });
      return res.text ?? '';
    },
    async tools(model) {
      const res = await ai.models.generateContent({ model, contents: QUESTION, config });
      return (res.functionCalls ?? []).map((c) => ({
        id: c.id ?? '',
        name: c.name ?? '',
        args: c.args ?? {},
      }));
    },
    async followUp(model, calls) {
      const res = await ai.models.generateContent({
        model,
        config,
        contents: [
          { role: 'user', parts: [{ text: QUESTION }] },
          { role: 'model', parts: calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })) },
          {
            role: 'user',
            parts: calls.map((c) => ({
              functionResponse: { name: c.name, response: JSON.parse(result(c)) as Record<string, unknown> },
            })),
          },
        ],
      });
      return res.text ?? '';
    },
    async stream(model, withTools = false) {
      const stream = await ai.models.generateContentStream({
        model,
        contents: QUESTION,
        ...(withTools ? { config } : {}),
      });
      const deltas: string[] = [];
      const calls: Call[] = [];
      for await (const chunk of stream) {
        const text = chunk.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('') ?? '';
        if (text) deltas.push(text);
        for (const c of chunk.functionCalls ?? [])
          calls.push({ id: c.id ?? '', name: c.name ?? '', args: c.args ?? {} });
      }
      return { deltas, calls };
    },
  };
}

/** OpenAI's Responses API (`/v1/responses`) through the official SDK's `responses.create` and `responses.stream`. */
function responsesDriver(api: TestApi, secret: string): Driver {
  const client = openaiClient(api, secret);
  const tools = [
    {
      type: 'function' as const,
      name: 'weather',
      description: 'Weather',
      parameters: weatherSchema,
      strict: false,
    },
  ];
  const callsOf = (output: Array<{ type: string }>): Call[] =>
    output.flatMap((item) => {
      const c = item as { type: string; call_id: string; name: string; arguments: string };
      return c.type === 'function_call'
        ? [{ id: c.call_id, name: c.name, args: JSON.parse(c.arguments) as Record<string, unknown> }]
        : [];
    });
  return {
    async text(model) {
      const res = await client.responses.create({
        model,
        instructions: 'Be brief.',
        input: 'Say hello',
        max_output_tokens: 50,
      });
      return res.output_text;
    },
    async tools(model) {
      const res = await client.responses.create({ model, input: QUESTION, tools, tool_choice: 'auto' });
      return callsOf(res.output);
    },
    async followUp(model, calls) {
      const res = await client.responses.create({
        model,
        tools,
        input: [
          { role: 'user', content: QUESTION },
          ...calls.map((c) => ({
            type: 'function_call' as const,
            call_id: c.id,
            name: c.name,
            arguments: JSON.stringify(c.args),
          })),
          ...calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.id, output: result(c) })),
        ],
      });
      return res.output_text;
    },
    async stream(model, withTools = false) {
      const stream = client.responses.stream({ model, input: QUESTION, ...(withTools ? { tools } : {}) });
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (ev) => deltas.push(ev.delta));
      const final = await stream.finalResponse();
      return { deltas, calls: callsOf(final.output) };
    },
  };
}

/** The surfaces under test: each vendor format, and OpenAI's Responses API beside its Chat Completions. */
export type SurfaceName = Format | 'responses';
export const SURFACE_NAMES: SurfaceName[] = ['openai', 'anthropic', 'gemini', 'responses'];

export function driverFor(surface: SurfaceName, api: TestApi, secret: string): Driver {
  if (surface === 'responses') return responsesDriver(api, secret);
  if (surface === 'openai') return openaiDriver(api, secret);
  if (surface === 'anthropic') return anthropicDriver(api, secret);
  return geminiDriver(api, secret);
}
