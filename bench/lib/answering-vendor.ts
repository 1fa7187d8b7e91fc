/**
 * The scripted model the door benchmarks run against, in the bench's own
 * process: an OpenAI-format text answer at once (JSON or SSE), so a turn's
 * time is the platform's, not a model's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openaiSpec } from '../../test/fixtures/vendors/openai.js';

/** Starts the model answering `answer` to every call; resolves to its base URL and a close. */
export async function startAnsweringVendor(answer: string): Promise<{ url: string; close(): void }> {
  const vendor = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; stream?: boolean };
      const reply = { text: answer, usage: { input: 50, output: 9 } };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(openaiSpec.json(reply, body.model)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(openaiSpec.sse(reply, body.model, body).join(''));
    });
  });
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`,
    close: () => vendor.close(),
  };
}
