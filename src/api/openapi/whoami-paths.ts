import { API_PREFIX } from '../prefix.js';
import { errorResponses, json } from './responses.js';

/** GET /whoami (routes/whoami.ts): the caller as the token names it. */
export function whoamiPaths(): Record<string, object> {
  return {
    [`${API_PREFIX}/whoami`]: {
      get: {
        operationId: 'whoami',
        tags: ['health'],
        summary: 'Who the caller is: the token name, role and projects (or that Steward is open)',
        description:
          'Without STEWARD_TOKENS_FILE, `{"open": true}`: every caller may do everything. With tokens, the name, role and projects of the token sent (`["*"]` for every project); a `metrics` token is refused as on the rest of the API. The console reads it to show only what the role allows.',
        responses: {
          '200': json('the caller', {
            type: 'object',
            additionalProperties: false,
            required: ['open'],
            properties: {
              open: {
                type: 'boolean',
                description: 'true when Steward runs without tokens (every caller is an admin)',
              },
              name: { type: 'string', description: "the token's name" },
              role: { type: 'string', enum: ['viewer', 'editor', 'admin', 'metrics'] },
              projects: {
                type: 'array',
                items: { type: 'string' },
                description: 'the projects granted; `["*"]` for every project',
              },
            },
          }),
          ...errorResponses([400, 500, 503]),
        },
      },
    },
  };
}
