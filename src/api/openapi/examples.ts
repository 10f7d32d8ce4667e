/**
 * Examples and links of the main operations. Redocly's recommended rules check every
 * example against its schema, so these stay true to the document.
 */

const URN = 'orn:steward:file:demo:motd';
const AT = '2026-01-01T00:00:00.000Z';

/** A create of the built-in `file` kind, nested form. */
export const CREATE_EXAMPLE = {
  kind: 'file',
  project: 'demo',
  name: 'motd',
  labels: { team: 'web' },
  spec: { configs: { path: 'motd.txt', content: 'hello\n', mode: '0644' } },
};

/** The resource after its create completed. */
export const RESOURCE_EXAMPLE = {
  urn: URN,
  kind: 'file',
  project: 'demo',
  name: 'motd',
  labels: { team: 'web' },
  version: 1,
  created_at: AT,
  updated_at: AT,
  created_by: 'ci',
  updated_by: 'ci',
  spec: {
    configs: { path: 'motd.txt', content: 'hello\n', mode: '0644' },
    dependencies: {},
    policy: { mode: 'manage', on_delete: 'delete' },
  },
  state: {
    status: 'COMPLETED',
    action: 'create',
    operation_id: 'op_01JGXK3Q6W4Z8Y2M5N7P9R1T3V',
    output: { path: '/var/lib/steward/files/motd.txt', size: 6, mode: '0644' },
    data: null,
    observed_version: 1,
    sync: { attempts: 1, last_error: null, next_sync_at: null, last_synced_at: AT },
    paused: false,
    drift: null,
  },
};

/** An accepted write's answer → the resource it changed and the operation that does it. */
export const ACCEPTED_LINKS = {
  GetResource: {
    operationId: 'getResource',
    parameters: { urn: '$response.body#/resource/urn' },
    description: 'the resource, to follow its state',
  },
  GetOperation: {
    operationId: 'getOperation',
    parameters: { id: '$response.body#/operation/id' },
    description: 'the operation, to wait for it',
  },
  CancelOperation: {
    operationId: 'cancelOperation',
    parameters: { id: '$response.body#/operation/id' },
    description: 'cancel the operation while it is queued or running',
  },
};

/** An operation → its resource. */
export const OPERATION_LINKS = {
  GetResource: {
    operationId: 'getResource',
    parameters: { urn: '$response.body#/urn' },
    description: 'the resource the operation works on',
  },
};
