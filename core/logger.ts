import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import {
  isSensitiveParam,
  REDACTED,
  redactDeep,
  redactQuery,
  redactText,
  redactUrl,
} from './security/redact.js';

export type { Logger };

/** Errors (ours, Temporal's activity failures) as pino serialises them, credential-shaped text redacted. */
function errorSerializer(value: unknown): unknown {
  return redactDeep(value instanceof Error ? stdSerializers.err(value) : value);
}

/**
 * Structured logs. Secrets are kept out in three ways, as a second line of
 * defence behind not logging them at all (docs/security.md): credential
 * fields and headers are censored by path; `err`/`error` objects, `url` and `query`
 * fields go through the redaction of core/security/redact.ts; and so does every
 * message string.
 */
export function createLogger(level: string, destination?: DestinationStream, format?: LogFormat): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["proxy-authorization"]',
          'req.headers.cookie',
          'req.headers["x-api-key"]',
          'req.headers["x-goog-api-key"]',
          'headers.authorization',
          'headers["x-api-key"]',
          'headers["x-goog-api-key"]',
          '*.headers.authorization',
          '*.headers["x-api-key"]',
          '*.headers["x-goog-api-key"]',
          'api_key',
          'secret_key',
          'password',
          'token',
          '*.api_key',
          '*.secret_key',
          '*.password',
          '*.token',
        ],
        censor: '[redacted]',
      },
      serializers: {
        err: errorSerializer,
        error: errorSerializer,
        url: (v: unknown) => (typeof v === 'string' ? redactUrl(v) : v),
        query: (v: unknown) =>
          typeof v === 'string'
            ? redactQuery(v)
            : v && typeof v === 'object'
              ? Object.fromEntries(
                  Object.entries(v).map(([k, x]) => [k, isSensitiveParam(k) ? REDACTED : redactDeep(x)]),
                )
              : v,
      },
      hooks: {
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) {
            const a: unknown = args[i];
            if (typeof a === 'string') args[i] = redactText(a);
          }
          method.apply(this, args);
        },
      },
    },
    destination ?? (resolveLogFormat(format) === 'pretty' ? prettyStream() : undefined),
  );
}

export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT when set; otherwise readable lines on a terminal and JSON lines anywhere else. */
export function resolveLogFormat(
  format: LogFormat | undefined,
  isTTY = Boolean(process.stdout.isTTY),
): LogFormat {
  return format ?? (isTTY ? 'pretty' : 'json');
}

/** Readable lines on stdout (pino-pretty, in this thread so nothing is lost at exit). */
function prettyStream(): DestinationStream {
  return pinoPretty({
    sync: true,
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
}
