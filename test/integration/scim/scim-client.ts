/** Requests as an identity provider sends them to a SCIM server: its token, application/scim+json. */
export interface ScimResult<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export function scimClient(baseUrl: string, token: string | undefined) {
  return async function scim<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<ScimResult<T>> {
    const headers: Record<string, string> = { accept: 'application/scim+json' };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/scim+json';
    const res = await fetch(`${baseUrl}/scim/v2${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as T };
  };
}

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
