import { egressFetch } from '../../security/egress-agent.js';

/**
 * Discovery, registration and token requests, through the egress policy. The
 * answer is rebuilt as the global Response: the SDK reads an authorization
 * server's error only from a Response it recognises (`instanceof`), and
 * undici's own class is not the global one, so a refusal would otherwise
 * lose the server's words.
 */
export const oauthFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const res = await egressFetch(input, init);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers: res.headers });
}) as typeof fetch;
