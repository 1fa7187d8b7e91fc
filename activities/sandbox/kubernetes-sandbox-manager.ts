import { BaseSandboxManager, type SandboxLogger } from './base-sandbox-manager.js';
import type { SandboxConfig } from './sandbox-config.js';
import type { SandboxHandle, SandboxInfo } from './sandbox-manager.js';
export interface KubernetesSandboxOptions { x?: number }
export class KubernetesSandboxManager extends BaseSandboxManager {
  readonly backend = 'kubernetes' as const;
  constructor(config: SandboxConfig, logger: SandboxLogger, tokenSecret: string, _o: KubernetesSandboxOptions = {}) { super(config, logger, tokenSecret); }
  protected ensureSandbox(): Promise<SandboxHandle> { throw new Error('todo'); }
  protected releaseSandbox(): Promise<void> { throw new Error('todo'); }
  protected destroySandbox(): Promise<void> { throw new Error('todo'); }
  list(): Promise<SandboxInfo[]> { throw new Error('todo'); }
}
