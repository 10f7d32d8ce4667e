import { type Static as TypeBoxStatic, type TSchema, Type as TypeBoxType } from '@sinclair/typebox';

/**
 * TypeBox's schema builder (`@sinclair/typebox`): each call returns a plain JSON Schema that
 * `configSchema`, `outputSchema` and `paramsSchema` take as they are, and that `Static` turns
 * into the TypeScript type of the values it accepts: one definition, no casts. Options are
 * JSON Schema keywords (`writeOnly: true` marks a secret, `default` fills a value in).
 *
 * @example
 * const Configs = Type.Object(
 *   {
 *     file: Type.String({ pattern: '^\\w[\\w.-]*$' }),
 *     token: Type.String({ minLength: 1, writeOnly: true }),
 *     mode: Type.Union([Type.Literal('0600'), Type.Literal('0640')], { default: '0600' }),
 *   },
 *   { additionalProperties: false },
 * );
 * type Configs = Static<typeof Configs>; // { file: string; token: string; mode: '0600' | '0640' }
 */
export const Type = TypeBoxType;

/**
 * The TypeScript type of the values a TypeBox schema accepts.
 *
 * @example
 * const Output = Type.Object({ path: Type.String() });
 * type Output = Static<typeof Output>; // { path: string }
 */
export type Static<T extends TSchema, P extends unknown[] = []> = TypeBoxStatic<T, P>;

/**
 * A TypeBox schema, for functions that take one.
 *
 * @example
 * function describe(schema: TSchema): string { return JSON.stringify(schema); }
 */
export type { TSchema };
