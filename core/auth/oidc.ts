/**
 * Single sign-on with OpenID Connect, the relying party's side: discovery
 * from OIDC_ISSUER, the authorization URL (code flow, PKCE S256, state and
 * nonce), and the callback's checks and claims. openid-client does the
 * protocol (state, nonce, issuer, `iss` of RFC 9207, the ID token's
 * signature and audience, PKCE); this module only says what we ask for and
 * what we keep. Where the flow's secrets are stored and who the person
 * becomes is the login service's business (api/services/oidc-login.service.ts).
 */
import * as client from 'openid-client';
import type { AuthConfig } from '../config/config-types.js';

export type OidcSettings = NonNullable<AuthConfig['oidc']>;

/** Requests to the provider give up after this long: a hung provider must not hold a login forever. */
const PROVIDER_TIMEOUT_SECONDS = 10;

/** What a login flow keeps between the redirect to the provider and the callback. */
export interface OidcFlowSecrets {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** What the callback learns about the person: the claims of the ID token, completed by UserInfo. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  /** `name`, else `preferred_username`. */
  displayName: string | undefined;
  /** `preferred_username`, else the email, else the subject: the user name a new account gets. */
  userName: string;
  /** The configured groups claim (OIDC_GROUPS_CLAIM): names that AUTH_GROUP_ROLES maps to roles. */
  groups: string[];
}

/** The provider refused, or answered something we do not accept: `code` says which, for the person and the audit log. */
export class OidcLoginError extends Error {
  constructor(
    readonly code: 'provider_unavailable' | 'provider_error' | 'invalid_response',
    message: string,
  ) {
    super(message);
  }
}

/** At most this many groups are kept from the claim, each at most this long (a group name is a key of AUTH_GROUP_ROLES). */
const MAX_GROUPS = 500;
const MAX_GROUP_LENGTH = 256;

/**
 * One provider's client: its metadata is discovered once per process and
 * kept; a failed discovery is forgotten, so the next login tries again.
 */
export class OidcClient {
  private discovered: Promise<client.Configuration> | undefined;

  constructor(
    private readonly settings: OidcSettings,
    readonly redirectUri: string,
  ) {}

  private configuration(): Promise<client.Configuration> {
    this.discovered ??= this.discover().catch((err: unknown) => {
      this.discovered = undefined;
      throw new OidcLoginError(
        'provider_unavailable',
        `discovery at ${this.settings.issuer} failed: ${messageOf(err)}`,
      );
    });
    return this.discovered;
  }

  private discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    return client.discovery(
      new URL(issuer),
      clientId,
      { redirect_uris: [this.redirectUri], response_types: ['code'] },
      clientSecret === undefined ? client.None() : client.ClientSecretPost(clientSecret),
      {
        // Discovery's timeout is kept for every later request to the provider too.
        timeout: PROVIDER_TIMEOUT_SECONDS,
        // An http:// issuer is the operator's choice (OIDC_ISSUER accepts it, e.g. on a private network).
        ...(issuer.startsWith('http://') ? { execute: [client.allowInsecureRequests] } : {}),
      },
    );
  }

  /** Fresh secrets for one login and the provider's URL that starts it. */
  async start(): Promise<{ url: string; secrets: OidcFlowSecrets }> {
    const configuration = await this.configuration();
    const secrets: OidcFlowSecrets = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
    };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: this.settings.scopes,
      state: secrets.state,
      nonce: secrets.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(secrets.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, secrets };
  }

  /**
   * The callback: `query` is what the provider sent back, `secrets` what the
   * flow named by its state kept. Exchanges the code (PKCE), checks the ID
   * token (issuer, audience, nonce, signature) and completes its claims from
   * UserInfo (many providers put email and groups only there).
   */
  async finish(query: string, secrets: OidcFlowSecrets): Promise<OidcIdentity> {
    const configuration = await this.configuration();
    const currentUrl = new URL(`${this.redirectUri}?${query}`);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: secrets.codeVerifier,
        expectedState: secrets.state,
        expectedNonce: secrets.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      if (err instanceof client.AuthorizationResponseError)
        throw new OidcLoginError('provider_error', `the provider answered ${err.error}`);
      throw new OidcLoginError('invalid_response', messageOf(err));
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new OidcLoginError('invalid_response', 'the provider sent no ID token');
    let userInfo: Record<string, unknown> = {};
    if (configuration.serverMetadata().userinfo_endpoint) {
      try {
        userInfo = await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
      } catch (err) {
        throw new OidcLoginError('invalid_response', `UserInfo failed: ${messageOf(err)}`);
      }
    }
    // The ID token is signed: where both say something, it wins.
    return this.identityOf({ ...userInfo, ...idClaims }, configuration.serverMetadata().issuer);
  }

  private identityOf(claims: Record<string, unknown>, issuer: string): OidcIdentity {
    const text = (key: string) => {
      const value = claims[key];
      return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
    };
    const subject = text('sub');
    if (!subject) throw new OidcLoginError('invalid_response', 'the ID token names no subject');
    const email = text('email');
    const preferred = text('preferred_username');
    return {
      issuer,
      subject,
      email,
      // Some providers send "true" as a string.
      emailVerified: claims.email_verified === true || claims.email_verified === 'true',
      displayName: text('name') ?? preferred,
      userName: preferred ?? email ?? subject,
      groups: groupsOf(claims[this.settings.groupsClaim]),
    };
  }
}

/** The groups claim as names: an array of strings, or one string (some providers send a single group so). */
function groupsOf(claim: unknown): string[] {
  const values = Array.isArray(claim) ? claim : typeof claim === 'string' ? [claim] : [];
  const names = values.filter(
    (v): v is string => typeof v === 'string' && v !== '' && v.length <= MAX_GROUP_LENGTH,
  );
  return [...new Set(names)].slice(0, MAX_GROUPS);
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
