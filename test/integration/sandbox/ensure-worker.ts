/**
 * A second (and third) OS process for the concurrency test: waits until the
 * agreed start time, then calls ensure N times at once on one session and
 * prints the container ids it got as JSON.
 * argv: <session json> <start at epoch ms> <calls> <labels json>
 */
import Docker from 'dockerode';
import { DockerSandboxManager } from '../../../activities/sandbox/docker/manager.js';
import { loadSandboxConfig } from '../../../activities/sandbox/sandbox-config.js';
import type { SandboxSession } from '../../../activities/sandbox/sandbox-manager.js';

const [sessionJson, startAt, calls, labelsJson] = process.argv.slice(2);
const session = JSON.parse(sessionJson ?? '{}') as SandboxSession;
const config = loadSandboxConfig(process.env);
// Warnings and errors to stderr: a failed run's error then shows what the managers did.
const say = (level: string) => (obj: unknown, msg?: string) =>
  process.stderr.write(`${level} ${msg ?? ''} ${JSON.stringify(obj)}\n`);
const logger = { info: say('info'), warn: say('warn'), error: say('error') } as never;
// Each call gets its own manager so the in-process de-duplication cannot hide a race.
const managers = Array.from(
  { length: Number(calls) },
  () =>
    new DockerSandboxManager(config, logger, config.tokenSecret ?? '', {
      docker: new Docker(),
      extraLabels: JSON.parse(labelsJson ?? '{}') as Record<string, string>,
    }),
);

await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
const handles = await Promise.all(managers.map((m) => m.ensure(session)));
process.stdout.write(JSON.stringify(handles.map((h) => ({ id: h.id, created: h.created }))));
