/**
 * A person's browser, reduced to what an OAuth authorization needs: follow
 * redirects one by one, keep cookies, and reach our API behind its public
 * origin. The API runs with PUBLIC_URL=https://agent-server.test (as behind a
 * TLS proxy), so a redirect to that origin (our /oauth/callback) is sent to
 * the API's real address instead, as the proxy would.
 */

const MAX_HOPS = 10;

export interface BrowserVisit {
  /** The last URL loaded (after redirects), as the page's address bar would show it. */
  finalUrl: string;
  status: number;
  /** Every URL loaded, in order (public-origin URLs as they were named, before rewriting). */
  hops: string[];
}

export class Browser {
  private readonly cookies = new Map<string, Map<string, string>>();

  constructor(
    private readonly publicOrigin: string,
    private readonly apiOrigin: string,
  ) {}

  /** Opens `url` and follows its redirects; throws when a page answers 4xx/5xx or it loops. */
  async open(url: string): Promise<BrowserVisit> {
    const hops: string[] = [];
    let current = url;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      hops.push(current);
      const res = await this.load(current);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        current = new URL(location, current).toString();
        continue;
      }
      const body = await res.text();
      if (res.status >= 400)
        throw new Error(`the browser got ${res.status} from ${current}: ${visibleText(body).slice(0, 500)}`);
      return { finalUrl: current, status: res.status, hops };
    }
    throw new Error(`more than ${MAX_HOPS} redirects opening ${url}: ${hops.join(' -> ')}`);
  }

  private async load(url: string): Promise<Response> {
    const target = this.throughProxy(url);
    const host = target.host;
    const cookie = [...(this.cookies.get(host) ?? new Map<string, string>())]
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
    let res: Response;
    try {
      res = await fetch(target, {
        redirect: 'manual',
        headers: { accept: 'text/html,application/json;q=0.9', ...(cookie ? { cookie } : {}) },
      });
    } catch (err) {
      const reason = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new Error(
        `the browser could not load ${url}${target.href === url ? '' : ` (as ${target.href})`}: ${reason}`,
        { cause: err },
      );
    }
    this.remember(host, res.headers.getSetCookie());
    return res;
  }

  /** A URL of the public origin, sent to the API's real origin (path and query kept). */
  private throughProxy(url: string): URL {
    const parsed = new URL(url);
    if (parsed.origin !== this.publicOrigin) return parsed;
    return new URL(`${parsed.pathname}${parsed.search}`, this.apiOrigin);
  }

  private remember(host: string, setCookies: string[]): void {
    const jar = this.cookies.get(host) ?? new Map<string, string>();
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    this.cookies.set(host, jar);
  }
}

/** What a person would read on an HTML page (tags, styles and scripts dropped); other bodies as they are. */
function visibleText(body: string): string {
  if (!/^\s*</.test(body)) return body;
  return body
    .replace(/<(style|script|title)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
