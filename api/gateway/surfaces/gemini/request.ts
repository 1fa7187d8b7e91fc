import { UnsupportedFeatureError } from '../../../../core/llm/errors.js';
import type {
  ContentPart,
  LlmMessage,
  LlmRequest,
  ProviderFormat,
  ResponseFormat,
  ToolCall,
  ToolChoice,
} from '../../../../core/llm/types.js';
import { invalidRequest } from '../../errors.js';
import { isObj, type Obj } from '../json.js';

const TRANSLATED = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig']);
const GENERATION = new Set([
  'stopSequences',
  'maxOutputTokens',
  'temperature',
  'topP',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'candidateCount',
]);

function textOf(content: unknown): string {
  if (!isObj(content) || !Array.isArray(content.parts)) return '';
  return (content.parts as Obj[]).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

/**
 * Gemini pairs results with calls by name (and order); the other formats need
 * ids, so each call gets one (its own when Gemini sent it) and each result
 * takes the first open call of its name.
 */
function contents(raw: unknown, target: ProviderFormat): LlmMessage[] {
  if (!Array.isArray(raw) || raw.length === 0)
    throw invalidRequest('* GenerateContentRequest.contents: contents is not specified');
  const out: LlmMessage[] = [];
  let open: ToolCall[] = [];
  let counter = 0;
  (raw as Obj[]).forEach((c, i) => {
    const parts = Array.isArray(c.parts) ? (c.parts as Obj[]) : [];
    const content: ContentPart[] = [];
    const calls: ToolCall[] = [];
    parts.forEach((p, j) => {
      const where = `contents[${i}].parts[${j}]`;
      if (typeof p.text === 'string') {
        if (p.thought !== true) content.push({ type: 'text', text: p.text });
      } else if (isObj(p.inlineData)) {
        content.push({
          type: 'image',
          source: {
            kind: 'base64',
            media_type: String(p.inlineData.mimeType),
            data: String(p.inlineData.data),
          },
        });
      } else if (isObj(p.fileData)) {
        content.push({ type: 'image', source: { kind: 'url', url: String(p.fileData.fileUri) } });
      } else if (isObj(p.functionCall)) {
        const fc = p.functionCall;
        calls.push({
          id: typeof fc.id === 'string' ? fc.id : `call_${counter++}`,
          name: String(fc.name),
          arguments: JSON.stringify(fc.args ?? {}),
        });
      } else if (isObj(p.functionResponse)) {
        const fr = p.functionResponse;
        const idx = open.findIndex((call) =>
          typeof fr.id === 'string' ? call.id === fr.id : call.name === fr.name,
        );
        const call = idx >= 0 ? open.splice(idx, 1)[0]! : undefined;
        out.push({
          role: 'tool',
          tool_call_id: call?.id ?? `call_${counter++}`,
          name: String(fr.name),
          content: JSON.stringify(fr.response ?? {}),
        });
      } else throw new UnsupportedFeatureError(`${where} (${Object.keys(p).join(', ')})`, target);
    });
    if (c.role === 'model') {
      out.push({ role: 'assistant', content, tool_calls: calls });
      open = calls.slice();
    } else if (content.length) out.push({ role: 'user', content });
  });
  return out;
}

function tools(raw: unknown, target: ProviderFormat): LlmRequest['tools'] {
  if (!Array.isArray(raw)) return undefined;
  return (raw as Obj[]).flatMap((t, i) => {
    const other = Object.keys(t).find((k) => k !== 'functionDeclarations');
    if (other) throw new UnsupportedFeatureError(`tools[${i}].${other}`, target);
    return ((t.functionDeclarations ?? []) as Obj[]).map((f) => ({
      name: String(f.name),
      description: typeof f.description === 'string' ? f.description : undefined,
      parameters: (f.parametersJsonSchema ?? f.parameters ?? { type: 'object' }) as Obj,
    }));
  });
}

function toolChoice(raw: unknown): ToolChoice | undefined {
  const cfg = isObj(raw) && isObj(raw.functionCallingConfig) ? raw.functionCallingConfig : undefined;
  if (!cfg) return undefined;
  const names = Array.isArray(cfg.allowedFunctionNames) ? cfg.allowedFunctionNames : [];
  if (cfg.mode === 'NONE') return 'none';
  if (cfg.mode === 'ANY') return names.length === 1 ? { name: String(names[0]) } : 'required';
  return 'auto';
}

/** generateContent request → internal, for a provider of another format. */
export function parseGeminiRequest(body: Obj, model: string, target: ProviderFormat): LlmRequest {
  for (const key of Object.keys(body))
    if (!TRANSLATED.has(key)) throw new UnsupportedFeatureError(key, target);
  const gen = isObj(body.generationConfig) ? body.generationConfig : {};
  for (const key of Object.keys(gen))
    if (!GENERATION.has(key)) throw new UnsupportedFeatureError(`generationConfig.${key}`, target);
  if (gen.candidateCount !== undefined && gen.candidateCount !== 1)
    throw new UnsupportedFeatureError('candidateCount greater than 1', target);
  const schema = (gen.responseJsonSchema ?? gen.responseSchema) as Obj | undefined;
  let responseFormat: ResponseFormat | undefined;
  if (schema) responseFormat = { type: 'json_schema', name: 'response', schema };
  else if (gen.responseMimeType === 'application/json') responseFormat = { type: 'json_object' };
  return {
    model,
    system: body.systemInstruction === undefined ? undefined : textOf(body.systemInstruction),
    messages: contents(body.contents, target),
    tools: tools(body.tools, target),
    tool_choice: toolChoice(body.toolConfig),
    response_format: responseFormat,
    stop: Array.isArray(gen.stopSequences) ? gen.stopSequences.map(String) : undefined,
    max_tokens: gen.maxOutputTokens as number | undefined,
    temperature: gen.temperature as number | undefined,
    top_p: gen.topP as number | undefined,
  };
}
