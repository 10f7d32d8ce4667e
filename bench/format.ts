/** How the benchmark report writes its figures. */
export interface Row {
  figure: string;
  value: string;
  target: string;
  verdict: 'pass' | 'FAIL' | '—';
}

export const ms = (x: number) => `${Number.isInteger(x) ? x : x.toFixed(x < 10 ? 2 : 1)} ms`;
export const perS = (x: number) => `${Math.round(x).toLocaleString('en-US')}/s`;
/** Long spans (the schedules phase) in seconds. */
export const span = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : ms(x));
export const check = (ok: boolean): Row['verdict'] => (ok ? 'pass' : 'FAIL');
