import type { ContractReport } from './run-contract.js';

/**
 * The report as a table: one row per rule with PASS/FAIL/SKIP and the reason,
 * then every problem of each failed rule, then the problems outside the rules.
 */
export function formatReport(report: ContractReport): string {
  const rows = report.rules.map(
    (rule, i) => [`${i + 1}. ${rule.title}`, rule.status, rule.reason] as const,
  );
  const width = Math.max('RULE'.length, ...rows.map(([title]) => title.length));
  const line = (title: string, status: string, reason: string) =>
    `${title.padEnd(width)}  ${status.padEnd(6)}  ${reason}`;
  const out = [
    `module contract of kind ${report.kind ?? '(not loaded)'}`,
    '',
    line('RULE', 'RESULT', 'WHY'),
    ...rows.map((row) => line(...row)),
  ];
  for (const rule of report.rules.filter((r) => r.status === 'FAIL' && r.details.length > 1)) {
    out.push('', `${rule.title}:`, ...rule.details.map((detail) => `  - ${detail}`));
  }
  if (report.problems.length)
    out.push(
      '',
      'problems (fixtures, support modules), not verdicts on the module:',
      ...report.problems.map((problem) => `  - ${problem}`),
    );
  const failed = report.rules.filter((rule) => rule.status === 'FAIL').length;
  const problems = report.problems.length
    ? `; ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'} kept the run from passing`
    : '';
  out.push(
    '',
    report.passed
      ? 'all rules passed'
      : `${failed} rule${failed === 1 ? '' : 's'} failed${problems}`,
  );
  return `${out.join('\n')}\n`;
}
