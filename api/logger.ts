import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Secrets are redacted by path as a second line of defence. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'req.headers["x-goog-api-key"]',
          '*.api_key',
          '*.secret_key',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
