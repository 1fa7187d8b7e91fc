import type { OAuthClientMetadata } from '@modelcontextprotocol/client';

/** Where the authorization server sends a person back: served by the API at its root. */
export function oauthCallbackUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/oauth/callback`;
}

/** Our Client ID Metadata Document: its URL is our client_id at servers that take one. */
export function clientMetadataDocumentUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/oauth/client-metadata.json`;
}

/** A client_id URL must be https (the SDK and the spec refuse anything else). */
export function usableClientMetadataUrl(publicUrl: string): string | undefined {
  return publicUrl.startsWith('https://') ? clientMetadataDocumentUrl(publicUrl) : undefined;
}

/**
 * What we say about ourselves when registering, and in the Client ID Metadata
 * Document. `application_type` (OpenID registration, asked for by MCP's
 * authorization spec): a web application, a server whose redirect URI is
 * its own public URL.
 */
export function clientMetadataFor(
  publicUrl: string,
  scope?: string,
): OAuthClientMetadata & { application_type: 'web' } {
  return {
    application_type: 'web',
    client_name: 'agent-server',
    redirect_uris: [oauthCallbackUrl(publicUrl)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(scope ? { scope } : {}),
  };
}

/** The Client ID Metadata Document served at clientMetadataDocumentUrl. */
export function clientMetadataDocument(
  publicUrl: string,
): OAuthClientMetadata & { client_id: string; application_type: 'web' } {
  return { client_id: clientMetadataDocumentUrl(publicUrl), ...clientMetadataFor(publicUrl) };
}

/** The API's public base URL: PUBLIC_URL, else http://HOST:PORT as configured. */
export function publicBaseUrl(config: {
  publicUrl?: string | undefined;
  host: string;
  port: number;
}): string {
  return (config.publicUrl ?? `http://${config.host}:${config.port}`).replace(/\/+$/, '');
}
