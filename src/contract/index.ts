/**
 * The module contract kit: runs a module through the rules every module must
 * keep (docs/modules.md, "Testing your module: the contract kit").
 */
export { runModuleContract, type ContractOptions, type ContractReport } from './run-contract.js';
export { formatReport } from './report.js';
export { RULES, type RuleId, type RuleResult, type RuleStatus } from './rules.js';
