import { type Answer, create, createModel } from '../reliability/state-machine/design.js';
import { workerStep } from '../reliability/state-machine/worker.js';

/**
 * The state machine's model of a worker round (test/reliability/state-machine/worker.ts) for a
 * dependent whose parent completes in the same round: it waits, or, when the real round called
 * the module for it (PostgreSQL may commit the parent's write-back before the dependent reads it),
 * it syncs in that round too.
 */
describe('the state machine model: a dependent in its parent’s round', () => {
  const a = 'orn:steward:fake:p:a';
  const c = 'orn:steward:fake:p:c';
  function model() {
    const m = createModel(Date.parse('2026-03-28T12:00:00.000Z'), 2_000, 3, 1_000, {
      graceMs: 60_000,
      pollMs: 1_000,
    });
    accept(create(m, a, { value: 1 }), 'op_a');
    accept(create(m, c, { value: 1 }, {}, { parent: a }), 'op_c');
    return m;
  }

  it('waits when the round did not call the module for it', () => {
    const m = model();
    const round = workerStep(m, new Set([a]));
    expect(round.claimed).toBe(2);
    expect(round.calls.map((call) => call.urn)).toEqual([a]);
    expect(m.resources.get(a)!.status).toBe('COMPLETED');
    expect(m.resources.get(c)!.status).toBe('PENDING');
  });

  it('syncs in the same round when the real one did, its parent completed first', () => {
    const m = model();
    const round = workerStep(m, new Set([a, c]));
    expect(round.calls.map((call) => call.urn)).toEqual([a, c]);
    expect(round.sameRoundWakes).toEqual([]);
    expect(m.resources.get(c)!.status).toBe('COMPLETED');
  });
});

/** An answer the API gave 202: the model takes its operation. */
function accept(answer: Answer, operationId: string): void {
  if (!answer.ok) throw new Error(`refused: ${answer.code}`);
  answer.accept(operationId);
}
