import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';
import type { Context, Middleware, Next } from 'koa';
import { AppError, STATUS_MESSAGES, ValidationError } from '../../core/errors.js';
import { GatewayError, type GatewayErrorKind } from '../gateway/errors.js';
import { isGatewayPath } from '../gateway/error-response.js';

/**
 * Request bodies, read only where a route asks for one: after the router has
 * matched it and the caller has been authenticated (the ADMIN_TOKEN guard, the
 * gateway's virtual key), never before. A request nobody reads (an unknown
 * path, a refused caller) is answered at once and the rest of its body
 * discarded, never buffered (discardRest). See
 * docs/security.md#request-bodies-limits-and-timeouts.
 */
export interface BodyLimits {
  /** MAX_BODY_BYTES: the most a body may be, on the wire and once decompressed (413). */
  maxBytes: number;
  /** BODY_BYTES_IN_FLIGHT_MAX: body bytes all reads of the process may hold at once (503 past it). */
  inFlightMax: number;
  /** BODY_IDLE_TIMEOUT_MS: a body that sends no byte for this long is a 408. */
  idleTimeoutMs: number;
}

/** Seconds a caller refused for lack of room is asked to wait (Retry-After). */
const BUSY_RETRY_AFTER_S = 1;

/** The JSON media types the body parser took before (@koa/bodyparser's list): other types are not read. */
const JSON_TYPES = new Set([
  'application/json',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/csp-report',
  'application/reports+json',
  'application/scim+json',
]);

const DECODERS = new Map<string, () => Transform>([
  ['gzip', createGunzip],
  ['x-gzip', createGunzip],
  ['deflate', createInflate],
  ['br', createBrotliDecompress],
]);

const KIND: Record<number, GatewayErrorKind> = {
  400: 'invalid_request',
  408: 'timeout',
  413: 'request_too_large',
  415: 'invalid_request',
  // Ours, not an upstream's; renders as each vendor's generic server error, which SDKs retry.
  503: 'upstream',
};

/**
 * A refusal of the body in the shape of where it was sent: the vendor's
 * error on the gateway (rendered by api/gateway/error-response.ts), the
 * envelope elsewhere (`reason` and the header at fault in errorDetails).
 */
function refusal(ctx: Context, status: number, reason: string, details: Record<string, unknown> = {}): Error {
  if (isGatewayPath(ctx.path)) {
    const retryAfterMs = status === 503 ? BUSY_RETRY_AFTER_S * 1000 : undefined;
    return new GatewayError(status, KIND[status] ?? 'invalid_request', reason, retryAfterMs);
  }
  return new AppError(status, STATUS_MESSAGES[status]!, { reason, ...details });
}

const tooLarge = (ctx: Context, limit: number) =>
  refusal(ctx, 413, 'request body exceeds the size limit', { limit_bytes: limit });

/** Thrown when the process holds BODY_BYTES_IN_FLIGHT_MAX of bodies already (503, Retry-After). */
export class BodiesBusyError extends AppError {
  constructor() {
    super(503, STATUS_MESSAGES[503]!, {}, true);
  }
}

/** Body bytes held by unfinished reads in this process, against BODY_BYTES_IN_FLIGHT_MAX. */
export class BodyBudget {
  private held = 0;
  constructor(readonly max: number) {}

  get inFlight(): number {
    return this.held;
  }

  take(bytes: number): boolean {
    if (this.held + bytes > this.max) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}

/** `Content-Encoding` as a decoder; undefined for none. An unsupported coding (or several) is a 415. */
function decoderFor(ctx: Context): (() => Transform) | undefined {
  const coding = ctx.get('content-encoding').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return undefined;
  const decoder = DECODERS.get(coding);
  if (decoder) return decoder;
  throw refusal(
    ctx,
    415,
    `Content-Encoding ${JSON.stringify(coding.slice(0, 64))} is not supported: send gzip, deflate, br or none`,
    { field: 'content-encoding' },
  );
}

/** Parses `text` as @koa/bodyparser's strict mode did: an object or array, no `__proto__` keys. */
function parseStrictJson(text: string): unknown {
  const t = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (t === '') return {};
  if (!/^[ \t\n\r]*[[{]/.test(t)) throw new SyntaxError('only an object or an array');
  const value: unknown = JSON.parse(t);
  if (SUSPECT_PROTO.test(t)) refuseProtoKeys(value);
  return value;
}

/** @hapi/bourne's test: a `"__proto__":` key, however escaped, may be in the text. */
const SUSPECT_PROTO =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

function refuseProtoKeys(root: unknown): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Object.prototype.hasOwnProperty.call(node, '__proto__'))
      throw new SyntaxError('a __proto__ key is not accepted');
    for (const v of Object.values(node)) if (typeof v === 'object' && v !== null) stack.push(v);
  }
}

/**
 * The one reader of request bodies, JSON and raw alike: a size cap on the
 * wire and after decompression (413), gzip/deflate/br (a malformed body is a
 * 400, another coding a 415), a process-wide cap on body bytes being read at
 * once (503 with Retry-After; a declared Content-Length is counted up front,
 * other bytes as they arrive), and an idle timeout between bytes (408, the
 * connection closed). After any refusal the rest of the body is discarded,
 * not read (discardRest).
 */
export class BodyReader {
  readonly budget: BodyBudget;

  constructor(readonly limits: BodyLimits) {
    this.budget = new BodyBudget(limits.inFlightMax);
  }

  /** The body as bytes, decompressed, at most `maxBytes` (MAX_BODY_BYTES unless the route says less). */
  raw(ctx: Context, maxBytes = this.limits.maxBytes): Promise<Buffer> {
    const decoder = decoderFor(ctx);
    const declared = Number(ctx.get('content-length') || Number.NaN);
    if (declared > maxBytes) return Promise.reject(tooLarge(ctx, maxBytes));
    let held = 0;
    const budget = this.budget;
    /** Holds `total` bytes in the budget (what is held already counts); false when there is no room. */
    const hold = (total: number): boolean => {
      if (total <= held) return true;
      if (!budget.take(total - held)) return false;
      held = total;
      return true;
    };
    if (declared > 0 && !hold(declared)) return Promise.reject(this.busy(ctx));
    return new Promise<Buffer>((resolve, reject) => {
      const req = ctx.req;
      const chunks: Buffer[] = [];
      let wire = 0;
      let size = 0;
      let settled = false;
      /** Reading is paused for the decompressor: the idle clock does not run. */
      let waiting = false;
      const unzip = decoder?.();
      const onIdle = () => {
        if (waiting) return;
        // Nothing is coming: close once answered.
        ctx.set('Connection', 'close');
        finish(refusal(ctx, 408, `no byte of the request body arrived for ${this.limits.idleTimeoutMs} ms`));
      };
      const timer = setTimeout(onIdle, this.limits.idleTimeoutMs);
      const finish = (err: Error | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onError);
        req.off('close', onClose);
        budget.give(held);
        held = 0;
        if (err) {
          // Not destroyed: the answer still gets out (requestBodies() discards the rest).
          req.pause();
          unzip?.destroy();
          reject(err);
        } else resolve(Buffer.concat(chunks, size));
      };
      const keep = (buf: Buffer) => {
        if (settled) return;
        size += buf.length;
        if (size > maxBytes) return finish(tooLarge(ctx, maxBytes));
        if (!hold(size)) return finish(this.busy(ctx));
        chunks.push(buf);
      };
      const onData = (buf: Buffer) => {
        wire += buf.length;
        if (wire > maxBytes) return finish(tooLarge(ctx, maxBytes));
        timer.refresh();
        if (!unzip) return keep(buf);
        if (!unzip.write(buf)) {
          // The decompressor is behind: stop reading (and the idle clock) until it catches up.
          req.pause();
          waiting = true;
          unzip.once('drain', () => {
            if (settled) return;
            waiting = false;
            timer.refresh();
            req.resume();
          });
        }
      };
      const onEnd = () => {
        if (unzip) unzip.end();
        else finish(undefined);
      };
      const onError = () => finish(refusal(ctx, 400, 'the request body could not be read'));
      const onClose = () => {
        if (!req.complete)
          finish(refusal(ctx, 400, 'the client closed the connection before the whole body'));
      };
      if (unzip) {
        const coding = ctx.get('content-encoding').trim().toLowerCase();
        unzip.on('data', keep);
        unzip.on('end', () => finish(undefined));
        unzip.on('error', () =>
          finish(
            refusal(ctx, 400, `the request body is not valid ${coding} data (Content-Encoding: ${coding})`, {
              field: 'content-encoding',
            }),
          ),
        );
      }
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onError);
      req.on('close', onClose);
    });
  }

  /**
   * Parses a JSON body into `ctx.request.body`, as the body parser did: a
   * POST, PUT or PATCH with a JSON content type (an empty body is `{}`);
   * any other content type gets `{}` and its body is not read; other methods
   * are left alone. Invalid JSON is a 400 naming `body`.
   */
  async json(ctx: Context): Promise<void> {
    if (ctx.request.body !== undefined || !['POST', 'PUT', 'PATCH'].includes(ctx.method)) return;
    if (!JSON_TYPES.has(ctx.request.type.trim().toLowerCase())) {
      ctx.request.body = {};
      return;
    }
    const bytes = await this.raw(ctx);
    try {
      ctx.request.body = parseStrictJson(bytes.toString('utf8'));
    } catch {
      if (isGatewayPath(ctx.path))
        throw new GatewayError(400, 'invalid_request', 'request body is not valid JSON');
      throw ValidationError.field('body', 'body is not valid JSON', 'body.parse');
    }
  }

  private busy(ctx: Context): Error {
    ctx.state.log.warn(
      { in_flight_bytes: this.budget.inFlight, max_bytes: this.budget.max },
      'request body refused: BODY_BYTES_IN_FLIGHT_MAX reached',
    );
    if (isGatewayPath(ctx.path))
      return refusal(ctx, 503, 'the server is reading too many request bodies at once; retry shortly');
    ctx.set('Retry-After', String(BUSY_RETRY_AFTER_S));
    return new BodiesBusyError();
  }
}

function readerOf(ctx: Context): BodyReader {
  const reader = ctx.state.bodies;
  if (!reader) throw new Error('requestBodies() is not mounted: no body reader for this request');
  return reader;
}

/** Reads the request's JSON body into `ctx.request.body` (see BodyReader.json). */
export const readJsonBody = (ctx: Context): Promise<void> => readerOf(ctx).json(ctx);

/** The request body as bytes, at most `maxBytes` (see BodyReader.raw). */
export const readBodyBytes = (ctx: Context, maxBytes?: number): Promise<Buffer> =>
  readerOf(ctx).raw(ctx, maxBytes);

/** Route middleware: reads the JSON body, then goes on (placed after the route's authentication). */
export const jsonBody: Middleware = async (ctx: Context, next: Next) => {
  await readJsonBody(ctx);
  await next();
};

/**
 * What is still coming of a body nobody reads (an unknown path, a refused
 * caller, a refused body), once the request is answered: discarded as it
 * arrives, never buffered, so the caller gets to read the answer (closing at
 * once would reset a connection it is still writing to, and the answer can be
 * lost with it). The connection is closed when the rest stalls for the idle
 * timeout or passes MAX_BODY_BYTES; a body that ends keeps its connection.
 */
function discardRest(ctx: Context, limits: BodyLimits): void {
  const req = ctx.req;
  let discarded = 0;
  const close = () => {
    req.off('data', onData);
    req.socket.destroy();
  };
  const timer = setTimeout(close, limits.idleTimeoutMs);
  const onData = (buf: Buffer) => {
    discarded += buf.length;
    if (discarded > limits.maxBytes) return close();
    timer.refresh();
  };
  req.on('data', onData);
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/**
 * App middleware: gives every request the process's body reader (nothing is
 * read here); a request answered before its body was all received has the
 * rest discarded (discardRest).
 */
export function requestBodies(reader: BodyReader): Middleware {
  return async function requestBodiesMiddleware(ctx: Context, next: Next): Promise<void> {
    ctx.state.bodies = reader;
    try {
      await next();
    } finally {
      if (!ctx.req.complete) discardRest(ctx, reader.limits);
    }
  };
}
