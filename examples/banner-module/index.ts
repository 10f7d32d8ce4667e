/**
 * banner: the text of a greeting, in capitals. No side effects; the example of a dependency in
 * docs/modules.md. Its contract-kit examples create the greeting they depend on as a fixture.
 */
import { defineModule } from '../../src/sdk/index.js';

/** `state.output`: the greeting's text, in capitals. */
export type BannerOutput = { text: string };

export default defineModule<Record<string, never>, BannerOutput>({
  kind: 'banner',
  description: 'Publishes the text of a greeting resource in capitals.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  outputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  dependencies: { greeting: { kind: 'greeting' } }, // required; { optional: true } otherwise
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({}),
  async sync({ resource, dependencies }) {
    if (resource.state.action === 'delete') return { status: 'COMPLETED' };
    // Steward calls sync only once the greeting is COMPLETED, with its output.
    const text = String(dependencies.greeting?.output.text).toUpperCase();
    return { status: 'COMPLETED', output: { text } };
  },
});
