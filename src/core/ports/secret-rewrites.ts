/** `steward secrets rotate`: re-sealed values written over the stored ones. */
export interface SecretRewrites {
  /**
   * Replaces the configs and output of each resource whose stored configs and output
   * still equal `before` (as JSON), in one transaction; nothing else changes (no
   * version, status, lease, revision or event). Returns which were replaced.
   */
  replaceConfigsAndOutput(changes: readonly ValuesRewrite[]): Promise<boolean[]>;
}

export interface ValuesRewrite {
  urn: string;
  before: { configs: Record<string, unknown>; output: Record<string, unknown> };
  after: { configs: Record<string, unknown>; output: Record<string, unknown> };
}
