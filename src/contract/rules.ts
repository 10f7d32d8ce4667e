/** The rules of the module contract, in the order they are reported. */
export const RULES = [
  { id: 'schemas-compile', title: 'schemas compile' },
  { id: 'actions-plan', title: 'every declared action plans' },
  { id: 'plan-pure', title: 'plan is pure' },
  { id: 'create-converges', title: 'create converges' },
  { id: 'sync-idempotent', title: 'sync steps are idempotent' },
  { id: 'actions-converge', title: 'each action converges' },
  { id: 'delete-converges', title: 'delete converges, and again' },
  { id: 'secrets-stay-secret', title: 'secrets stay secret' },
  { id: 'create-never-takes-over', title: 'create never takes over' },
  { id: 'observe-read-only', title: 'observe changes nothing' },
  { id: 'observe-no-drift', title: 'observe after create: no drift' },
  { id: 'import-same-output', title: 'import gives the same output' },
] as const;

export type RuleId = (typeof RULES)[number]['id'];

/** The rules that need the kind's `observe`: a kind without it gets them as SKIP. */
export const OBSERVE_RULES = [
  'observe-read-only',
  'observe-no-drift',
  'import-same-output',
] as const satisfies readonly RuleId[];
export type RuleStatus = 'PASS' | 'FAIL' | 'SKIP';

/** One rule's verdict: `reason` says why in one line, `details` lists every problem found. */
export interface RuleResult {
  id: RuleId;
  title: string;
  status: RuleStatus;
  reason: string;
  details: string[];
}

/**
 * Collects what each rule checked, what failed and what could not run, and turns
 * it into verdicts: any failure → FAIL; something checked → PASS; else SKIP.
 */
export function createRuleBook() {
  const entries = new Map<RuleId, { passed: string[]; failed: string[]; skipped: string[] }>(
    RULES.map((rule) => [rule.id, { passed: [], failed: [], skipped: [] }]),
  );
  const entry = (id: RuleId) => entries.get(id)!;
  return {
    pass(id: RuleId, what: string): void {
      entry(id).passed.push(what);
    },
    fail(id: RuleId, why: string): void {
      entry(id).failed.push(why);
    },
    skip(id: RuleId, why: string): void {
      entry(id).skipped.push(why);
    },
    /** Marks every rule that has nothing recorded yet as skipped, for `why`. */
    skipRest(why: string): void {
      for (const e of entries.values())
        if (!e.passed.length && !e.failed.length && !e.skipped.length) e.skipped.push(why);
    },
    results(): RuleResult[] {
      return RULES.map(({ id, title }) => {
        const { passed, failed, skipped } = entry(id);
        if (failed.length) {
          const more = failed.length > 1 ? ` (and ${failed.length - 1} more)` : '';
          return {
            id,
            title,
            status: 'FAIL',
            reason: `${failed[0]}${more}`,
            details: [...failed, ...skipped.map((s) => `not run: ${s}`)],
          };
        }
        if (passed.length) {
          const notRun = skipped.length ? `; ${skipped.length} not run` : '';
          return {
            id,
            title,
            status: 'PASS',
            reason: `${summarise(passed)}${notRun}`,
            details: [...passed, ...skipped.map((s) => `not run: ${s}`)],
          };
        }
        return {
          id,
          title,
          status: 'SKIP',
          reason: skipped[0] ?? 'nothing to check',
          details: skipped.map((s) => `not run: ${s}`),
        };
      });
    },
  };
}

export type RuleBook = ReturnType<typeof createRuleBook>;

function summarise(passed: string[]): string {
  const unique = [...new Set(passed)];
  return unique.length <= 3
    ? unique.join('; ')
    : `${unique.slice(0, 3).join('; ')}; … (${unique.length} checks)`;
}
