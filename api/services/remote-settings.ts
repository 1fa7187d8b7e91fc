/**
 * What the remotes a project calls (MCP servers, remote A2A agents) share:
 * headers and OAuth settings stored encrypted, shown redacted, replaced on
 * update (a secret sent back as it was shown keeps the stored one), and the
 * project's own OAuth credentials summarised without a token.
 */
import type { SecretBox } from '../../core/crypto/secrets.js';
import { ValidationError } from '../../core/errors.js';
import { oauthConfigOf, type McpOAuthConfig } from '../../core/mcp/oauth/index.js';
import type { McpOAuthRepository } from '../../core/repositories/mcp-oauth.repository.js';
import { REDACTED } from '../../core/security/redact.js';

/** The project's own OAuth credentials for a remote, as the API shows them (never a token). */
export interface AuthorizationView {
  status: 'not_configured' | 'unauthorized' | 'authorized';
  scopes?: string[];
  expires_at?: string | null;
}

/**
 * Headers as sent on update: a client that read the remote back and sends it
 * again must not overwrite secrets with the redaction marker, so a value sent
 * as "[redacted]" keeps the stored one.
 */
export function keptHeaders(
  stored: Record<string, string>,
  sent: Record<string, string>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(sent).map(([k, v]) => [k, v === REDACTED && stored[k] !== undefined ? stored[k] : v]),
  );
}

/** Settings the joi schema cannot judge alone. */
export function checkedOAuth(config: McpOAuthConfig): McpOAuthConfig {
  if (config.token_endpoint_auth_method === 'private_key_jwt')
    throw ValidationError.field(
      'oauth.token_endpoint_auth_method',
      'private_key_jwt needs a signing key, which cannot be configured here; use client_secret_basic, client_secret_post or none',
    );
  if (config.client_secret && config.token_endpoint_auth_method === 'none')
    throw ValidationError.field(
      'oauth.token_endpoint_auth_method',
      '"none" sends no client_secret: leave the secret out or choose client_secret_basic or client_secret_post',
    );
  return config;
}

export class OAuthSettings {
  constructor(private readonly secrets: SecretBox) {}

  /** The stored settings, decrypted (null: none given). */
  open(oauthEnc: string | null): McpOAuthConfig | null {
    return oauthConfigOf({ secrets: this.secrets }, { oauth_enc: oauthEnc });
  }

  /** The settings as the API shows them: the client secret redacted. */
  shown(oauthEnc: string | null): McpOAuthConfig | null {
    const oauth = this.open(oauthEnc);
    return oauth && { ...oauth, ...(oauth.client_secret !== undefined ? { client_secret: REDACTED } : {}) };
  }

  /** The settings of a new remote, checked and encrypted. */
  sealed(sent: McpOAuthConfig | null | undefined): string | null {
    return sent ? this.secrets.encryptJson(checkedOAuth(sent)) : null;
  }

  /** `oauth` as sent on update: replaces the settings; a client_secret sent back as "[redacted]" keeps the stored one. */
  next(storedEnc: string | null, sent: McpOAuthConfig | null): string | null {
    if (sent === null) return null;
    const stored = this.open(storedEnc);
    const next = { ...sent };
    if (next.client_secret === REDACTED) {
      if (stored?.client_secret === undefined)
        throw ValidationError.field(
          'oauth.client_secret',
          '"[redacted]" keeps a stored secret, and there is none',
        );
      next.client_secret = stored.client_secret;
    }
    return this.sealed(next);
  }
}

/**
 * The project's own credentials for the remote: authorized (with scopes and
 * expiry), unauthorized (OAuth was configured or asked for), or not configured.
 */
export async function authorizationView(
  repo: McpOAuthRepository,
  ownerId: string,
  configured: boolean,
): Promise<AuthorizationView> {
  const creds = await repo.credentials(ownerId, '');
  if (creds?.tokens_enc)
    return {
      status: 'authorized',
      ...(creds.scopes ? { scopes: creds.scopes.split(' ').filter(Boolean) } : {}),
      expires_at: creds.expires_at?.toISOString() ?? null,
    };
  const asked = creds !== undefined || configured || (await repo.anyCredentials(ownerId));
  return { status: asked ? 'unauthorized' : 'not_configured' };
}
