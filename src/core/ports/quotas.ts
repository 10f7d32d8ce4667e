/** What a resource counts against the quotas (quotas.ts says what each means). */
export interface Footprint {
  specBytes: number;
  processes: number;
}

export type QuotaName = 'resources' | 'bytes' | 'processes';

/** Each quota's max; 0 is no quota. */
export type QuotaMaxes = Readonly<Record<QuotaName, number>>;

export interface QuotaLimits {
  project: QuotaMaxes;
  global: QuotaMaxes;
}

/** The first quota a change would go past: nothing was written. */
export interface QuotaRefusal {
  refused: {
    quota: QuotaName;
    scope: 'project' | 'global';
    max: number;
    /** What was counted before this change. */
    used: number;
    /** What this change adds. */
    requested: number;
  };
}
