import type { Accepted } from '../../core/requests/command-types.js';

/**
 * What a dry run answers (200, nothing stored): the planned resource and operation, and the review
 * a user reads before applying, as `terraform plan` shows it: the action, each field that would
 * change (a secret only as changed) and the steps the plan left for sync.
 */
export function dryRunAnswer(accepted: Accepted) {
  return {
    resource: accepted.resource,
    operation: accepted.operation,
    dry_run: true as const,
    action: accepted.operation.action,
    changes: accepted.review?.changes ?? [],
    ...(accepted.review?.steps ? { steps: accepted.review.steps } : {}),
    ...(accepted.schedules && { schedules: accepted.schedules }),
  };
}
