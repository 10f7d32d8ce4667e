// Reading, counting and checking the ledger are shared with the long version in bench/, and so is the percentile.
export { countSyncs, findOverlaps, openSyncs, readLedger, type LedgerLine } from '../../bench/scale-ledger.js';
export { percentile } from '../../bench/stats.js';
