import { requireRole } from '../../src/api/auth/authorize.js';
import type { Caller, Role } from '../../src/api/auth/caller.js';
import { PermissionDeniedError } from '../../src/api/auth/errors.js';

/**
 * A 403 names the role a request needs once: "needs the admin role", never "admin or admin"
 * (issue 16's small defects). Every role too weak against every role a route asks for.
 */
describe('the 403 of a role too weak', () => {
  const caller = (role: Role): Caller => ({ name: 'tok', role, scope: '*', authenticated: true });
  const refusal = (role: Role, needed: Role): PermissionDeniedError => {
    try {
      requireRole(caller(role), needed, 'do it');
    } catch (err) {
      return err as PermissionDeniedError;
    }
    throw new Error(`${role} was let through where ${needed} is needed`);
  };

  it.each([
    ['metrics', 'viewer', 'the viewer role or a stronger one'],
    ['metrics', 'editor', 'the editor role or a stronger one'],
    ['viewer', 'editor', 'the editor role or a stronger one'],
    ['metrics', 'admin', 'the admin role'],
    ['viewer', 'admin', 'the admin role'],
    ['editor', 'admin', 'the admin role'],
  ] as Array<[Role, Role, string]>)('%s where %s is needed: "needs %s"', (role, needed, least) => {
    const error = refusal(role, needed);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error.message).toBe(`token tok (${role}) may not do it: that needs ${least}`);
    expect(error.details).toEqual({ role, needed });
    // The needed role appears once, and no role is offered "or" itself.
    expect(error.message.split(needed)).toHaveLength(2);
    expect(error.message).not.toMatch(/(\w+) or \1\b/);
  });

  it.each([
    ['viewer', 'viewer'],
    ['editor', 'viewer'],
    ['editor', 'editor'],
    ['admin', 'viewer'],
    ['admin', 'editor'],
    ['admin', 'admin'],
  ] as Array<[Role, Role]>)('%s where %s is needed passes', (role, needed) => {
    expect(() => requireRole(caller(role), needed, 'do it')).not.toThrow();
  });
});
