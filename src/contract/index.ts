/**
 * The module contract kit: runs a module through the rules every module must
 * keep (docs/modules.md, "Testing your module: the contract kit").
 */
export { formatReport } from './report.js';
export { OBSERVE_RULES, type RuleId, type RuleResult, RULES, type RuleStatus } from './rules.js';
export {
  type ContractOptions,
  type ContractReport,
  DEFAULT_CALL_TIMEOUT_MS,
  runModuleContract,
} from './run-contract.js';
