/**
 * One JSON object per line on stdout, so `docker logs` and `kubectl logs` can
 * be parsed. Callers pass only metadata: never file contents, commands or env
 * values, which may hold user secrets.
 */
export type LogFields = Record<string, string | number | boolean | undefined>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export function createLogger(write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const emit = (level: string, msg: string, fields?: LogFields) =>
    write(
      JSON.stringify({ time: new Date().toISOString(), level, component: 'sandbox-daemon', msg, ...fields }) +
        '\n',
    );
  return {
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
