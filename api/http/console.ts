import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Context, Next } from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Console not built</title>
<p>The console has not been built. Run <code>npm run build</code> (or <code>npm start</code>, which builds it when it is missing or stale).</p>`;

/**
 * Sent with every answer under /console (and the redirects to it). The built
 * app is scripts and stylesheets from /console/assets only: no inline script,
 * no eval. Styles allow 'unsafe-inline' because Mantine writes its CSS
 * variables into a <style> element at run time. It talks to its own origin
 * only, and no other site may frame it (clickjacking of the admin UI).
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; '),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/**
 * The route these answers are, as a router would name it (`ctx._matchedRoute`,
 * read by tracing, metrics and the request log): the span is `GET /console/*`,
 * a bounded name, rather than a route-less `GET`.
 */
function matched(ctx: Context, route: '/' | '/console/*'): void {
  (ctx as { _matchedRoute?: string })._matchedRoute = route;
}

async function fileAt(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined))?.isFile() ?? false;
}

/**
 * The web console's static files at /console (console/dist, built by Vite).
 * Hashed assets are immutable and cached for a year; every other path is the
 * app's index.html (never cached), so deep links work. Open without
 * ADMIN_TOKEN: the app asks for the token and sends it to the API. Every
 * answer carries CONSOLE_SECURITY_HEADERS.
 */
export function serveConsole(distDir: string) {
  const root = path.resolve(distDir);
  const index = path.join(root, 'index.html');
  return async function consoleMiddleware(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === '/' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      matched(ctx, '/');
      ctx.set(CONSOLE_SECURITY_HEADERS);
      ctx.redirect('/console/');
      return;
    }
    const ours = ctx.path === '/console' || ctx.path.startsWith('/console/');
    if (!ours || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    matched(ctx, '/console/*');
    ctx.set(CONSOLE_SECURITY_HEADERS);
    if (ctx.path === '/console') {
      ctx.redirect('/console/');
      return;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path.slice('/console/'.length));
    } catch {
      rel = '';
    }
    const file = path.resolve(root, rel);
    const asset = rel.startsWith('assets/') && file.startsWith(root + path.sep) && (await fileAt(file));
    if (asset) {
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
      ctx.body = createReadStream(file);
      return;
    }
    // Anything else is a route of the app (or a missing asset, which the app's router reports).
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = TYPES['.html']!;
    if (!(await fileAt(index))) {
      ctx.status = 503;
      ctx.body = NOT_BUILT;
      return;
    }
    ctx.body = createReadStream(index);
  };
}
